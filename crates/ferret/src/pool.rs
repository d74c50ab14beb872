//! Where the outputs of an iteration go: first the reserve of the next
//! iteration, then the caller.
//!
//! Outputs are made one tree (`2^log_bin` COTs) at a time, so the memory of
//! a party is two reserves (the one being consumed and the one being
//! filled), one tree, and the per-tree state: independent of how many COTs
//! the caller draws in total.

use webproof_core::Block;

/// The output side shared by sender and receiver.
pub(crate) struct Pool {
    /// Outputs of the last tree not yet handed out.
    chunk: Vec<Block>,
    pos: usize,
    /// The next iteration's COTs, filled from this iteration's first outputs.
    next_reserve: Vec<Block>,
    target: usize,
}

impl Pool {
    pub(crate) fn new() -> Self {
        Pool {
            chunk: Vec::new(),
            pos: 0,
            next_reserve: Vec::new(),
            target: 0,
        }
    }

    /// Start filling a reserve of `target` COTs in `buf` (recycled storage).
    pub(crate) fn begin(&mut self, mut buf: Vec<Block>, target: usize) {
        debug_assert_eq!(self.pos, self.chunk.len());
        buf.clear();
        self.next_reserve = buf;
        self.target = target;
    }

    /// The filled reserve.
    pub(crate) fn take_reserve(&mut self) -> Vec<Block> {
        debug_assert_eq!(self.next_reserve.len(), self.target);
        core::mem::take(&mut self.next_reserve)
    }

    /// Hand out buffered outputs; returns how many were appended.
    pub(crate) fn drain(&mut self, want: usize, out: &mut Vec<Block>) -> usize {
        let m = want.min(self.chunk.len() - self.pos);
        out.extend_from_slice(&self.chunk[self.pos..self.pos + m]);
        self.pos += m;
        m
    }

    /// Whether the next tree can go straight to the caller.
    pub(crate) fn reserve_full(&self) -> bool {
        self.next_reserve.len() == self.target
    }

    /// The chunk storage, resized to `len` (old contents left in place), to
    /// fill with the next tree's outputs and give back with [`Pool::put_chunk`].
    pub(crate) fn take_chunk(&mut self, len: usize) -> Vec<Block> {
        debug_assert_eq!(self.pos, self.chunk.len());
        let mut c = core::mem::take(&mut self.chunk);
        // No clearing: the tree expansion overwrites every entry.
        c.resize(len, Block::ZERO);
        self.pos = 0;
        c
    }

    /// Take back a filled chunk; its head tops up the reserve if not full.
    pub(crate) fn put_chunk(&mut self, chunk: Vec<Block>) {
        self.chunk = chunk;
        let m = (self.target - self.next_reserve.len()).min(self.chunk.len());
        self.next_reserve.extend_from_slice(&self.chunk[..m]);
        self.pos = m;
    }

    /// Bytes held by the pool's buffers.
    pub(crate) fn footprint(&self) -> usize {
        (self.chunk.capacity() + self.next_reserve.capacity()) * Block::LEN
    }
}

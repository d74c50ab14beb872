//! Where the outputs of an iteration go: the caller, and the reserve of the
//! next iteration; the reserve takes a main iteration's last outputs and
//! a setup iteration's first.
//!
//! A main iteration's reserve comes last because a session sized to its
//! needs (a cut first main iteration, `FerretConfig::first_main_trees`)
//! usually never starts another iteration: its last trees, which would
//! only refill a reserve no one uses, are then never expanded or encoded.
//! A setup iteration's outputs are all drawn at once anyway; its reserve
//! comes first so that a cut first main iteration gets the very secret
//! and tree COTs a full one would (`tests::cut_first_iteration_is_a_prefix_of_the_full_one`).
//! Which outputs go where does not matter otherwise: each is used once,
//! and both parties route them alike.
//!
//! Outputs are made one tree (`2^log_bin` COTs) at a time, so the memory of
//! a party is two reserves (the one being consumed and the one being
//! filled), one tree, and the per-tree state: independent of how many COTs
//! the caller draws in total.

use webproof_core::Block;

/// The output side shared by sender and receiver.
pub(crate) struct Pool {
    /// Outputs of the last tree; the caller's not yet handed out are
    /// `chunk[pos..end]`.
    chunk: Vec<Block>,
    pos: usize,
    end: usize,
    /// The next iteration's COTs, filled from this iteration's last outputs
    /// or its first (`reserve_last`).
    next_reserve: Vec<Block>,
    target: usize,
    /// Outputs of this iteration still to be made for the caller.
    caller_left: usize,
    /// Whether the reserve takes the iteration's last outputs, not its first.
    reserve_last: bool,
}

impl Pool {
    pub(crate) fn new() -> Self {
        Pool {
            chunk: Vec::new(),
            pos: 0,
            end: 0,
            next_reserve: Vec::new(),
            target: 0,
            caller_left: 0,
            reserve_last: false,
        }
    }

    /// Start an iteration of `outputs` COTs, `target` of which (its last if
    /// `reserve_last`, else its first) fill the next reserve, in `buf`
    /// (recycled storage). `outputs >= target` (`FerretConfig::validate`).
    pub(crate) fn begin(
        &mut self,
        mut buf: Vec<Block>,
        target: usize,
        outputs: usize,
        reserve_last: bool,
    ) {
        debug_assert_eq!(self.pos, self.end);
        debug_assert!(outputs >= target);
        buf.clear();
        self.next_reserve = buf;
        self.target = target;
        self.caller_left = outputs - target;
        self.reserve_last = reserve_last;
    }

    /// The filled reserve.
    pub(crate) fn take_reserve(&mut self) -> Vec<Block> {
        debug_assert_eq!(self.next_reserve.len(), self.target);
        core::mem::take(&mut self.next_reserve)
    }

    /// Hand out buffered outputs; returns how many were appended.
    pub(crate) fn drain(&mut self, want: usize, out: &mut Vec<Block>) -> usize {
        let m = want.min(self.end - self.pos);
        out.extend_from_slice(&self.chunk[self.pos..self.pos + m]);
        self.pos += m;
        m
    }

    /// Whether the next tree (`len` outputs) goes straight to the caller;
    /// if so it is counted as made.
    pub(crate) fn take_direct(&mut self, len: usize) -> bool {
        debug_assert_eq!(self.pos, self.end);
        let direct = if self.reserve_last {
            self.caller_left >= len
        } else {
            self.next_reserve.len() == self.target
        };
        if direct {
            self.caller_left -= len;
        }
        direct
    }

    /// The chunk storage, resized to `len` (old contents left in place), to
    /// fill with the next tree's outputs and give back with [`Pool::put_chunk`].
    pub(crate) fn take_chunk(&mut self, len: usize) -> Vec<Block> {
        debug_assert_eq!(self.pos, self.end);
        let mut c = core::mem::take(&mut self.chunk);
        // No clearing: the tree expansion overwrites every entry.
        c.resize(len, Block::ZERO);
        self.pos = 0;
        c
    }

    /// Take back a filled chunk: the part of it the reserve takes tops the
    /// reserve up, the rest is the caller's.
    pub(crate) fn put_chunk(&mut self, chunk: Vec<Block>) {
        self.chunk = chunk;
        let len = self.chunk.len();
        let room = self.target - self.next_reserve.len();
        let (reserve, caller) = if self.reserve_last {
            let m = self.caller_left.min(len);
            (m..len, 0..m)
        } else {
            let r = room.min(len);
            (0..r, r..len)
        };
        debug_assert!(reserve.len() <= room && caller.len() <= self.caller_left);
        let take = reserve.len().min(room);
        self.next_reserve
            .extend_from_slice(&self.chunk[reserve.start..reserve.start + take]);
        self.caller_left -= caller.len();
        self.pos = caller.start;
        self.end = caller.end;
    }

    /// Bytes held by the pool's buffers.
    pub(crate) fn footprint(&self) -> usize {
        (self.chunk.capacity() + self.next_reserve.capacity()) * Block::LEN
    }
}

//! A framed, byte-counting message channel over any async byte stream.
//!
//! Frames are a little-endian `u32` length and the payload. Writes are
//! buffered and flushed when the buffer grows large, when the caller flushes,
//! or before every receive (so two parties that alternate never deadlock).
//! Every receive states the largest frame it accepts, so a peer can never make
//! us allocate more than the protocol expects.
//!
//! A party that need not wait for the peer's answer to a message (an
//! acceptance it can act on later) can set a check on the peer's next
//! message ([`Channel::check_next`]): the next receive reads and checks it
//! first, so the answer costs no round trip of its own.

use crate::block::Block;
use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes buffered before a write is pushed to the transport on its own.
const FLUSH_THRESHOLD: usize = 1 << 16;

/// Transport failures and framing violations.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The underlying transport failed.
    #[error("transport error: {0}")]
    Io(#[from] std::io::Error),
    /// The peer closed the connection.
    #[error("peer closed the connection")]
    Closed,
    /// The peer announced a frame larger than this step of the protocol allows.
    #[error("peer sent a {len}-byte message where at most {max} bytes are allowed")]
    FrameTooLarge { len: usize, max: usize },
    /// The peer sent a frame of another size than the protocol requires.
    #[error("peer sent a {got}-byte message where exactly {expected} bytes are required")]
    UnexpectedLength { expected: usize, got: usize },
    /// A check set with [`Channel::check_next`] refused the peer's answer.
    #[error("{0}")]
    Refused(String),
}

/// The check of the peer's next message ([`Channel::check_next`]).
type NextCheck = Box<dyn FnOnce(&[u8]) -> Result<(), ChannelError> + Send + Sync>;

/// Shared byte counters of a channel; clone it to read them from elsewhere
/// (a benchmark, a progress bar) while the protocol runs.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    sent: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
}

impl ChannelStats {
    /// Bytes written to the transport so far, frame headers included.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
    /// Bytes read from the transport so far, frame headers included.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

/// A framed message channel over `T`.
pub struct Channel<T> {
    io: T,
    wbuf: Vec<u8>,
    stats: ChannelStats,
    /// Largest size and check of the peer's next message, if one is set.
    next_check: Option<(usize, NextCheck)>,
}

impl<T: AsyncRead + AsyncWrite + Unpin> Channel<T> {
    /// Wrap a transport.
    pub fn new(io: T) -> Self {
        Channel {
            io,
            wbuf: Vec::with_capacity(FLUSH_THRESHOLD),
            stats: ChannelStats::default(),
            next_check: None,
        }
    }

    /// Take the peer's next message, of at most `max_len` bytes, as its
    /// answer to what was sent so far, without waiting for it now: the
    /// next receive reads it first and hands it to `check`, and returns
    /// `check`'s error, if any, instead of a message. Replaces a check set
    /// before and not yet run.
    pub fn check_next(
        &mut self,
        max_len: usize,
        check: impl FnOnce(&[u8]) -> Result<(), ChannelError> + Send + Sync + 'static,
    ) {
        self.next_check = Some((max_len, Box::new(check)));
    }

    /// A handle on this channel's byte counters.
    pub fn stats(&self) -> ChannelStats {
        self.stats.clone()
    }

    /// Give back the transport (pending writes are flushed first).
    pub async fn into_inner(mut self) -> Result<T, ChannelError> {
        self.flush().await?;
        Ok(self.io)
    }

    /// Queue one message. It is sent at the latest at the next `flush` or `recv`.
    pub async fn send(&mut self, payload: &[u8]) -> Result<(), ChannelError> {
        let len = u32::try_from(payload.len()).map_err(|_| ChannelError::FrameTooLarge {
            len: payload.len(),
            max: u32::MAX as usize,
        })?;
        self.wbuf.extend_from_slice(&len.to_le_bytes());
        self.wbuf.extend_from_slice(payload);
        if self.wbuf.len() >= FLUSH_THRESHOLD {
            self.flush().await?;
        }
        Ok(())
    }

    /// Queue a message made of blocks (16 bytes each, little-endian).
    pub async fn send_blocks(&mut self, blocks: &[Block]) -> Result<(), ChannelError> {
        let mut buf = Vec::with_capacity(blocks.len() * 16);
        for b in blocks {
            buf.extend_from_slice(&b.to_bytes());
        }
        self.send(&buf).await
    }

    /// Push every queued message to the transport.
    pub async fn flush(&mut self) -> Result<(), ChannelError> {
        if !self.wbuf.is_empty() {
            self.io.write_all(&self.wbuf).await?;
            self.stats
                .sent
                .fetch_add(self.wbuf.len() as u64, Ordering::Relaxed);
            self.wbuf.clear();
        }
        self.io.flush().await?;
        Ok(())
    }

    /// Receive one message of at most `max_len` bytes (after the message a
    /// [`Self::check_next`] waits for, if one is set).
    pub async fn recv(&mut self, max_len: usize) -> Result<Vec<u8>, ChannelError> {
        self.flush().await?;
        if let Some((max, check)) = self.next_check.take() {
            let answer = self.recv_frame(max).await?;
            check(&answer)?;
        }
        self.recv_frame(max_len).await
    }

    async fn recv_frame(&mut self, max_len: usize) -> Result<Vec<u8>, ChannelError> {
        let mut hdr = [0u8; 4];
        self.read_exact(&mut hdr).await?;
        let len = u32::from_le_bytes(hdr) as usize;
        if len > max_len {
            return Err(ChannelError::FrameTooLarge { len, max: max_len });
        }
        let mut buf = vec![0u8; len];
        self.read_exact(&mut buf).await?;
        Ok(buf)
    }

    /// Receive one message of exactly `len` bytes.
    pub async fn recv_exact(&mut self, len: usize) -> Result<Vec<u8>, ChannelError> {
        let buf = self.recv(len).await?;
        if buf.len() != len {
            return Err(ChannelError::UnexpectedLength {
                expected: len,
                got: buf.len(),
            });
        }
        Ok(buf)
    }

    /// Receive a message of exactly `n` blocks.
    pub async fn recv_blocks(&mut self, n: usize) -> Result<Vec<Block>, ChannelError> {
        let buf = self.recv_exact(n * 16).await?;
        Ok(buf
            .chunks_exact(16)
            .map(|c| Block::from_bytes(c.try_into().expect("16-byte chunk")))
            .collect())
    }

    async fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        match self.io.read_exact(buf).await {
            Ok(()) => {
                self.stats
                    .received
                    .fetch_add(buf.len() as u64, Ordering::Relaxed);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(ChannelError::Closed),
            Err(e) => Err(ChannelError::Io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_duplex;
    use futures::executor::block_on;

    #[test]
    fn roundtrip_counts_and_limits() {
        block_on(async {
            let (a, b) = memory_duplex();
            let (mut a, mut b) = (Channel::new(a), Channel::new(b));
            a.send(b"hello").await.unwrap();
            a.send_blocks(&[Block(7), Block(9)]).await.unwrap();
            a.send(&[0u8; 100]).await.unwrap();
            a.send(b"xyz").await.unwrap();
            a.flush().await.unwrap();
            assert_eq!(b.recv(10).await.unwrap(), b"hello");
            assert_eq!(b.recv_blocks(2).await.unwrap(), vec![Block(7), Block(9)]);
            assert!(matches!(
                b.recv(50).await,
                Err(ChannelError::FrameTooLarge { len: 100, max: 50 })
            ));
            // After an oversized frame the session is over; a fresh pair is used below.
            assert_eq!(a.stats().sent(), 4 + 5 + 4 + 32 + 4 + 100 + 4 + 3);
        });
        block_on(async {
            let (a, b) = memory_duplex();
            let (mut a, mut b) = (Channel::new(a), Channel::new(b));
            a.send(b"ab").await.unwrap();
            a.flush().await.unwrap();
            assert!(matches!(
                b.recv_exact(3).await,
                Err(ChannelError::UnexpectedLength {
                    expected: 3,
                    got: 2
                })
            ));
            drop(a);
            assert!(matches!(b.recv(10).await, Err(ChannelError::Closed)));
        });
    }

    /// A check set on the next message runs at the next receive, before
    /// it returns the message after; a refusal is that receive's error.
    #[test]
    fn next_message_checked_at_the_next_receive() {
        block_on(async {
            let (a, b) = memory_duplex();
            let (mut a, mut b) = (Channel::new(a), Channel::new(b));
            b.check_next(4, |m| match m {
                b"ok" => Ok(()),
                _ => Err(ChannelError::Refused("not ok".into())),
            });
            b.send(b"request").await.unwrap();
            b.flush().await.unwrap();
            assert_eq!(a.recv(10).await.unwrap(), b"request");
            a.send(b"ok").await.unwrap();
            a.send(b"data").await.unwrap();
            a.send(b"no").await.unwrap();
            a.send(b"more").await.unwrap();
            a.send(b"toolong").await.unwrap();
            a.send(b"end").await.unwrap();
            a.flush().await.unwrap();
            assert_eq!(b.recv(10).await.unwrap(), b"data");
            b.check_next(4, |m| match m {
                b"ok" => Ok(()),
                _ => Err(ChannelError::Refused("not ok".into())),
            });
            match b.recv(10).await {
                Err(ChannelError::Refused(why)) => assert_eq!(why, "not ok"),
                other => panic!("expected the refusal, got {other:?}"),
            }
            // The check ran once: the message after the answer is next.
            assert_eq!(b.recv(10).await.unwrap(), b"more");
            b.check_next(4, |_| Ok(()));
            assert!(matches!(
                b.recv(10).await,
                Err(ChannelError::FrameTooLarge { len: 7, max: 4 })
            ));
        });
    }

    #[test]
    fn truncated_frame_is_closed_error() {
        block_on(async {
            let (mut a, b) = memory_duplex();
            let mut b = Channel::new(b);
            // Announce 10 bytes, deliver 3, then hang up.
            a.write_all(&10u32.to_le_bytes()).await.unwrap();
            a.write_all(b"abc").await.unwrap();
            drop(a);
            assert!(matches!(b.recv(100).await, Err(ChannelError::Closed)));
        });
    }
}

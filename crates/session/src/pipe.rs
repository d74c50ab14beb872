//! In-memory byte pipes (`futures::io`), bounded: the local ends of a
//! multiplexed section's streams ([`crate::mux`]) and the simulated
//! runtime's links ([`crate::sim`]).
//!
//! [`duplex`] gives two ends; each reads what the other writes. Closing an
//! end ends the other's reads once the bytes before are read (end of
//! stream); dropping an end also makes the other's writes fail (broken
//! pipe), as a socket whose peer is gone.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// One direction of a pipe.
#[derive(Debug, Default)]
struct Buffer {
    data: VecDeque<u8>,
    capacity: usize,
    /// The writer closed (or dropped) its end: reads end after `data`.
    write_closed: bool,
    /// The reader dropped its end: writes fail.
    read_closed: bool,
    reader: Option<Waker>,
    writer: Option<Waker>,
}

impl Buffer {
    fn wake_reader(&mut self) {
        if let Some(w) = self.reader.take() {
            w.wake();
        }
    }

    fn wake_writer(&mut self) {
        if let Some(w) = self.writer.take() {
            w.wake();
        }
    }
}

/// One end of an in-memory pipe.
#[derive(Debug)]
pub struct PipeEnd {
    read: Arc<Mutex<Buffer>>,
    write: Arc<Mutex<Buffer>>,
}

/// Two connected ends, each direction buffering at most `capacity` bytes.
pub fn duplex(capacity: usize) -> (PipeEnd, PipeEnd) {
    let new = || {
        Arc::new(Mutex::new(Buffer {
            capacity: capacity.max(1),
            ..Buffer::default()
        }))
    };
    let (ab, ba) = (new(), new());
    (
        PipeEnd {
            read: ba.clone(),
            write: ab.clone(),
        },
        PipeEnd {
            read: ab,
            write: ba,
        },
    )
}

fn lock(b: &Mutex<Buffer>) -> std::sync::MutexGuard<'_, Buffer> {
    // A panic while holding the lock leaves plain bytes behind: go on.
    b.lock().unwrap_or_else(|e| e.into_inner())
}

impl futures::io::AsyncRead for PipeEnd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut b = lock(&self.read);
        if b.data.is_empty() {
            if b.write_closed || buf.is_empty() {
                return Poll::Ready(Ok(0));
            }
            b.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = buf.len().min(b.data.len());
        let (front, back) = b.data.as_slices();
        let first = n.min(front.len());
        buf[..first].copy_from_slice(&front[..first]);
        buf[first..n].copy_from_slice(&back[..n - first]);
        b.data.drain(..n);
        b.wake_writer();
        Poll::Ready(Ok(n))
    }
}

impl futures::io::AsyncWrite for PipeEnd {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut b = lock(&self.write);
        if b.read_closed {
            return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
        }
        if b.write_closed {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "write after close",
            )));
        }
        let room = b.capacity.saturating_sub(b.data.len());
        if room == 0 {
            b.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = room.min(buf.len());
        b.data.extend(&buf[..n]);
        b.wake_reader();
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let mut b = lock(&self.write);
        b.write_closed = true;
        b.wake_reader();
        Poll::Ready(Ok(()))
    }
}

impl Drop for PipeEnd {
    fn drop(&mut self) {
        let mut w = lock(&self.write);
        w.write_closed = true;
        w.wake_reader();
        drop(w);
        let mut r = lock(&self.read);
        r.read_closed = true;
        r.data.clear();
        r.wake_writer();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::io::{AsyncReadExt, AsyncWriteExt};

    /// Bytes cross in order through a buffer smaller than the message;
    /// a close ends the reads after them.
    #[test]
    fn bytes_cross_in_order_and_close_ends_reads() {
        let (mut a, mut b) = duplex(7);
        let msg: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let expected = msg.clone();
        let write = async move {
            a.write_all(&msg).await.unwrap();
            a.close().await.unwrap();
            a
        };
        let read = async move {
            let mut got = Vec::new();
            b.read_to_end(&mut got).await.unwrap();
            got
        };
        let (_a, got) = block_on(futures::future::join(write, read));
        assert_eq!(got, expected);
    }

    /// A dropped end makes the other's writes fail and its reads end.
    #[test]
    fn a_dropped_end_breaks_the_pipe() {
        let (mut a, b) = duplex(16);
        drop(b);
        assert!(block_on(a.write_all(b"x")).is_err());
        let mut buf = [0u8; 4];
        assert_eq!(block_on(a.read(&mut buf)).unwrap(), 0);
    }
}

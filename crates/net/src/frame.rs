//! Frames on tokio streams (`webproof_session::frame` through tokio's
//! compat adapters) and byte counting.
//!
//! Frames are a little-endian `u32` length and the payload: the format of
//! `webproof_core::Channel`, so control messages can go through a `Channel`
//! and the relay phase through these helpers on the same stream.

use crate::Result;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use webproof_session::frame;

/// Read one frame of at most `max` bytes; `Ok(None)` on a clean EOF before the header.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R, max: usize) -> Result<Option<Vec<u8>>> {
    frame::read_frame(&mut r.compat(), max).await
}

/// Reads frames like [`read_frame`], but is cancel-safe: a `select!`
/// branch may drop [`FrameReader::next`] mid-frame, and the bytes read so
/// far stay in the reader's buffer for the next call.
#[derive(Debug)]
pub struct FrameReader(frame::FrameReader);

impl FrameReader {
    /// A reader of frames of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        FrameReader(frame::FrameReader::new(max))
    }

    /// Bytes read past the last frame returned.
    pub fn buffered(&self) -> usize {
        self.0.buffered()
    }

    /// The next frame; `Ok(None)` on a clean EOF between frames.
    pub async fn next<R: AsyncRead + Unpin>(&mut self, r: &mut R) -> Result<Option<Vec<u8>>> {
        self.0.next(&mut r.compat()).await
    }
}

/// Write one frame and flush.
pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, payload: &[u8]) -> Result<()> {
    frame::write_frame(&mut w.compat_write(), payload).await
}

/// Bytes moved through a [`Counted`] stream.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    sent: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
}

impl Counters {
    /// Bytes written.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
    /// Bytes read.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

/// A stream that counts the bytes read and written through it.
pub struct Counted<S> {
    inner: S,
    counters: Counters,
}

impl<S> Counted<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Counted {
            inner,
            counters: Counters::default(),
        }
    }
    /// The shared counters.
    pub fn counters(&self) -> Counters {
        self.counters.clone()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        self.counters
            .received
            .fetch_add(n as u64, Ordering::Relaxed);
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            self.counters.sent.fetch_add(*n as u64, Ordering::Relaxed);
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Send a control message (JSON in one frame).
pub async fn send_msg<S: AsyncRead + AsyncWrite + Unpin, T: serde::Serialize>(
    s: &mut S,
    m: &T,
) -> Result<()> {
    frame::send_msg(&mut s.compat_write(), m).await
}

/// Receive a control message.
pub async fn recv_msg<S: AsyncRead + AsyncWrite + Unpin, T: serde::de::DeserializeOwned>(
    s: &mut S,
    what: &str,
) -> Result<T> {
    frame::recv_msg(&mut s.compat(), what).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(raw: &[u8], max: usize) -> Result<Option<Vec<u8>>> {
        let mut r = raw;
        read_frame(&mut r, max).await
    }

    /// Length prefixes at and past the limit, at u32 max, and cut short.
    #[tokio::test]
    async fn frame_lengths_at_their_limits() {
        let mut ok = 5u32.to_le_bytes().to_vec();
        ok.extend_from_slice(b"hello");
        assert_eq!(read(&ok, 5).await.unwrap().unwrap(), b"hello");
        assert!(read(&ok, 4).await.is_err());
        assert!(read(&[], 5).await.unwrap().is_none());
        for n in [1, 2, 3] {
            assert!(read(&ok[..n], 5).await.is_err(), "header cut to {n}");
        }
        assert!(read(&ok[..8], 5).await.is_err());
        for len in [u32::MAX, u32::MAX - 1, 1 << 31, u16::MAX as u32 + 1] {
            let mut raw = len.to_le_bytes().to_vec();
            raw.extend_from_slice(&[0; 16]);
            assert!(read(&raw, 1 << 16).await.is_err(), "{len}");
            // A limit above the length: the frame is read up to the end of
            // the input, which is short.
            assert!(read(&raw, usize::MAX).await.is_err(), "{len}");
        }
        assert_eq!(read(&[0, 0, 0, 0], 0).await.unwrap().unwrap(), b"");
        let mut w = Vec::new();
        write_frame(&mut w, b"abc").await.unwrap();
        assert_eq!(read(&w, 3).await.unwrap().unwrap(), b"abc");
    }
}

//! Length-prefixed frames on any byte stream (`futures::io`), the format
//! of `webproof_core::Channel`: a little-endian `u32` length and the
//! payload. Control messages are JSON in one frame; the runtimes' own
//! stream types reach these through an adapter (tokio's `compat`).

use crate::{Error, Result};
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Read one frame of at most `max` bytes; `Ok(None)` on a clean EOF before
/// the header.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R, max: usize) -> Result<Option<Vec<u8>>> {
    read_frame_keeping(r, max, false).await
}

/// Read one frame of at most `max` bytes of payload, like [`read_frame`],
/// but return it as it was on the wire, length prefix included: for a
/// frame taken off a stream ahead of a reader that expects to find it
/// there.
pub async fn read_raw_frame<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
) -> Result<Option<Vec<u8>>> {
    read_frame_keeping(r, max, true).await
}

/// The one frame reader: the payload alone, or `header` too.
async fn read_frame_keeping<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
    header: bool,
) -> Result<Option<Vec<u8>>> {
    let mut hdr = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        let n = r
            .read(&mut hdr[got..])
            .await
            .map_err(Error::io("reading a frame"))?;
        if n == 0 {
            return if got == 0 {
                Ok(None)
            } else {
                Err(Error::Disconnected("in a frame header".into()))
            };
        }
        got += n;
    }
    let len = u32::from_le_bytes(hdr) as usize;
    if len > max {
        return Err(oversized(&hdr, max));
    }
    let start = if header { hdr.len() } else { 0 };
    let mut buf = vec![0u8; start + len];
    buf[..start].copy_from_slice(&hdr[..start]);
    r.read_exact(&mut buf[start..]).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::Disconnected("in the middle of a frame".into())
        } else {
            Error::Io {
                context: "reading a frame".into(),
                source: e,
            }
        }
    })?;
    Ok(Some(buf))
}

/// A frame header announcing more than `max` bytes. An HTTP server's
/// answer (`HTTP/1.1 400 ...`) read as a header is a length of about 1.3
/// GB: that is someone giving the service's HTTP port as its TCP
/// address, and the error says so instead of quoting the length.
fn oversized(hdr: &[u8; 4], max: usize) -> Error {
    if hdr == b"HTTP" {
        return Error::Setup(
            "the peer answered in HTTP: this is an HTTP port; use ws://HOST:PORT/v1/session \
             for it, or the verifier's TCP port (`webproof serve --listen`)"
                .into(),
        );
    }
    let len = u32::from_le_bytes(*hdr);
    Error::Proxy(webproof_proxy::ProxyError::Protocol(format!(
        "peer sent a {len}-byte frame, at most {max} allowed here"
    )))
}

/// Reads frames like [`read_frame`], but is cancel-safe: a `select`
/// may drop [`FrameReader::next`] mid-frame, and the bytes read so far
/// stay in the reader's buffer for the next call.
#[derive(Debug)]
pub struct FrameReader {
    /// Bytes read; only `..filled` are the stream's, the rest is room.
    buf: Vec<u8>,
    filled: usize,
    max: usize,
}

impl FrameReader {
    /// A reader of frames of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        FrameReader {
            buf: Vec::new(),
            filled: 0,
            max,
        }
    }

    /// Bytes read past the last frame returned.
    pub fn buffered(&self) -> usize {
        self.filled
    }

    /// The next frame; `Ok(None)` on a clean EOF between frames.
    pub async fn next<R: AsyncRead + Unpin>(&mut self, r: &mut R) -> Result<Option<Vec<u8>>> {
        loop {
            let want = if self.filled >= 4 {
                let hdr: [u8; 4] = self.buf[..4].try_into().expect("4 bytes");
                let len = u32::from_le_bytes(hdr) as usize;
                if len > self.max {
                    return Err(oversized(&hdr, self.max));
                }
                if self.filled >= 4 + len {
                    // The frame keeps the buffer's allocation and the
                    // buffer starts afresh with what follows: a large
                    // frame is neither copied nor left behind as capacity.
                    self.buf.truncate(self.filled);
                    let rest = self.buf.split_off(4 + len);
                    let mut frame = core::mem::replace(&mut self.buf, rest);
                    frame.drain(..4);
                    self.filled = self.buf.len();
                    return Ok(Some(frame));
                }
                // One allocation for a large frame instead of doublings.
                4 + len
            } else {
                self.filled + 4096
            };
            if self.buf.len() < want.max(self.filled + 4096) {
                self.buf.resize(want.max(self.filled + 4096), 0);
            }
            // Cancelled, `read` has read nothing, and `filled` is unchanged.
            let n = r
                .read(&mut self.buf[self.filled..])
                .await
                .map_err(Error::io("reading a frame"))?;
            if n == 0 {
                return if self.filled == 0 {
                    Ok(None)
                } else {
                    Err(Error::Disconnected("in the middle of a frame".into()))
                };
            }
            self.filled += n;
        }
    }
}

/// Write one frame and flush.
pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, payload: &[u8]) -> Result<()> {
    let len = u32::try_from(payload.len()).map_err(|_| {
        Error::Proxy(webproof_proxy::ProxyError::Limit(format!(
            "a {}-byte frame does not fit the u32 length prefix",
            payload.len()
        )))
    })?;
    let mut buf = Vec::with_capacity(payload.len().saturating_add(4));
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(payload);
    w.write_all(&buf)
        .await
        .map_err(Error::io("writing a frame"))?;
    w.flush().await.map_err(Error::io("writing a frame"))
}

/// Send a control message (JSON in one frame).
pub async fn send_msg<W: AsyncWrite + Unpin, T: serde::Serialize>(w: &mut W, m: &T) -> Result<()> {
    write_frame(w, &webproof_proxy::protocol::encode(m)).await
}

/// Receive a control message.
pub async fn recv_msg<R: AsyncRead + Unpin, T: serde::de::DeserializeOwned>(
    r: &mut R,
    what: &str,
) -> Result<T> {
    recv_msg_limited(r, what, webproof_proxy::protocol::MAX_CONTROL_MSG).await
}

/// Receive a control message of at most `max` bytes.
pub async fn recv_msg_limited<R: AsyncRead + Unpin, T: serde::de::DeserializeOwned>(
    r: &mut R,
    what: &str,
    max: usize,
) -> Result<T> {
    let b = read_frame(r, max)
        .await?
        .ok_or_else(|| Error::Disconnected(format!("waiting for {what}")))?;
    Ok(webproof_proxy::protocol::decode(&b)?)
}

/// A stream whose reads start with bytes already taken off another stream
/// (writes go straight through): the verifier reads the prover's first
/// preprocessing frame off the link before the multiplexed section, where
/// it arrived with the hello, and hands it back to the engine in front of
/// the preprocessing stream.
pub struct Prefixed<S> {
    prefix: Vec<u8>,
    read: usize,
    inner: S,
}

impl<S> Prefixed<S> {
    /// `prefix`, then whatever `inner` yields.
    pub fn new(prefix: Vec<u8>, inner: S) -> Self {
        Prefixed {
            prefix,
            read: 0,
            inner,
        }
    }

    /// The inner stream (any unread prefix is dropped).
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        if this.read < this.prefix.len() {
            let n = buf.len().min(this.prefix.len() - this.read);
            buf[..n].copy_from_slice(&this.prefix[this.read..this.read + n]);
            this.read += n;
            return Poll::Ready(Ok(n));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    fn read(raw: &[u8], max: usize) -> Result<Option<Vec<u8>>> {
        let mut r = raw;
        block_on(read_frame(&mut r, max))
    }

    /// Length prefixes at and past the limit, at u32 max, and cut short.
    #[test]
    fn frame_lengths_at_their_limits() {
        let mut ok = 5u32.to_le_bytes().to_vec();
        ok.extend_from_slice(b"hello");
        assert_eq!(read(&ok, 5).unwrap().unwrap(), b"hello");
        assert!(read(&ok, 4).is_err());
        assert!(read(&[], 5).unwrap().is_none());
        for n in [1, 2, 3] {
            assert!(read(&ok[..n], 5).is_err(), "header cut to {n}");
        }
        assert!(read(&ok[..8], 5).is_err());
        for len in [u32::MAX, u32::MAX - 1, 1 << 31, u16::MAX as u32 + 1] {
            let mut raw = len.to_le_bytes().to_vec();
            raw.extend_from_slice(&[0; 16]);
            assert!(read(&raw, 1 << 16).is_err(), "{len}");
            assert!(read(&raw, usize::MAX).is_err(), "{len}");
        }
        assert_eq!(read(&[0, 0, 0, 0], 0).unwrap().unwrap(), b"");
        let mut w = Vec::new();
        block_on(write_frame(&mut futures::io::Cursor::new(&mut w), b"abc")).unwrap();
        assert_eq!(read(&w, 3).unwrap().unwrap(), b"abc");
        let e = read(b"HTTP/1.1 400", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("HTTP port"), "{e}");
    }

    /// Frames of every size come out whole and in order whatever the
    /// reads' sizes, and the reader keeps no more than a frame's bytes.
    #[test]
    fn frame_reader_reassembles_across_short_reads() {
        let mut wire = Vec::new();
        let sizes = [0usize, 1, 3, 4095, 4096, 4097, 70_000, 5];
        for (i, &n) in sizes.iter().enumerate() {
            wire.extend_from_slice(&(n as u32).to_le_bytes());
            wire.extend(std::iter::repeat_n(i as u8, n));
        }
        /// A reader that returns at most 7 bytes per read.
        struct Trickle<'a>(&'a [u8]);
        impl AsyncRead for Trickle<'_> {
            fn poll_read(
                mut self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let n = buf.len().min(7).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                std::task::Poll::Ready(Ok(n))
            }
        }
        for mut r in [Trickle(&wire[..])] {
            let mut fr = FrameReader::new(1 << 20);
            for (i, &n) in sizes.iter().enumerate() {
                let f = block_on(fr.next(&mut r)).unwrap().unwrap();
                assert_eq!(f.len(), n);
                assert!(f.iter().all(|&b| b == i as u8));
            }
            assert!(block_on(fr.next(&mut r)).unwrap().is_none());
            assert_eq!(fr.buffered(), 0);
        }
        // Whole wire in one read, and a frame cut short.
        let mut fr = FrameReader::new(1 << 20);
        let mut r = &wire[..wire.len() - 2];
        for _ in 0..sizes.len() - 1 {
            block_on(fr.next(&mut r)).unwrap().unwrap();
        }
        assert!(block_on(fr.next(&mut r)).is_err());
        let mut fr = FrameReader::new(4096);
        let over = 4097u32.to_le_bytes();
        assert!(block_on(fr.next(&mut &over[..])).is_err(), "over the limit");
    }

    /// A prefix is read first, across reads of any size, then the stream.
    #[test]
    fn prefixed_reads_the_prefix_first() {
        let mut p = Prefixed::new(b"hello".to_vec(), &b" world"[..]);
        let mut one = [0u8; 3];
        block_on(p.read_exact(&mut one)).unwrap();
        assert_eq!(&one, b"hel");
        let mut rest = Vec::new();
        block_on(p.read_to_end(&mut rest)).unwrap();
        assert_eq!(rest, b"lo world");
    }

    /// A raw frame is the wire bytes: written by `write_frame`, read back
    /// whole, and read again as a frame through `Prefixed`.
    #[test]
    fn raw_frame_is_the_wire_bytes() {
        let mut wire = Vec::new();
        block_on(write_frame(&mut wire, b"opening")).unwrap();
        block_on(write_frame(&mut wire, b"next")).unwrap();
        let mut r = &wire[..];
        let raw = block_on(read_raw_frame(&mut r, 7)).unwrap().unwrap();
        assert_eq!(raw, wire[..11]);
        let mut p = Prefixed::new(raw, r);
        assert_eq!(
            block_on(read_frame(&mut p, 7)).unwrap().unwrap(),
            b"opening"
        );
        assert_eq!(block_on(read_frame(&mut p, 7)).unwrap().unwrap(), b"next");
        assert!(block_on(read_frame(&mut p, 7)).unwrap().is_none());
        assert!(block_on(read_raw_frame(&mut &wire[..], 6)).is_err());
        assert!(block_on(read_raw_frame(&mut &wire[..9], 7)).is_err());
    }
}

//! Two byte streams over one link, for a while: the TLS relay and the
//! proof's preprocessing run at the same time on the prover/verifier link.
//!
//! The TLS session mostly waits on round trips to the server while the
//! preprocessing mostly computes and sends bulk data; interleaving them
//! takes the TLS session off the critical path. On the wire, each side sends
//! chunks `stream id (u8) ‖ length (u16 LE, 1..=16384) ‖ bytes`, relay chunks
//! before preprocessing chunks when both are waiting, so TLS bytes queue
//! behind at most one chunk per side. When both local streams are shut
//! down a side sends the end marker `0xff 0 0`; the mux ends once it has
//! sent its own marker and read the peer's, and hands the link back at the
//! exact byte after the peer's marker (the protocol continues on it).

use crate::{NetError, Result};
use std::future::Future;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};

use webproof_proxy::mux::{
    chunk_header, parse_header, Header, END_MARKER, MAX_CHUNK, PREPROCESSING, RELAY,
};

/// Buffer of each local virtual stream.
const PIPE: usize = 256 << 10;
/// After a failed section: how long to wait for the peer's end marker
/// before the link is dropped.
const LINGER: std::time::Duration = std::time::Duration::from_millis(500);

/// The two local ends: shut each down when done with it.
pub struct Streams {
    /// The TLS relay's stream.
    pub relay: DuplexStream,
    /// The preprocessing's stream.
    pub preprocessing: DuplexStream,
}

/// Run the mux over `link` until both streams are done on both sides.
/// `f` gets the two streams and runs the two protocols; the mux returns
/// `f`'s result and the link.
pub async fn run<S, F, Fut, T>(link: S, f: F) -> Result<(T, S)>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(Streams) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let (value, link) = run_early(link, f).await?;
    Ok((value, link.finish().await?))
}

/// Like [`run`], but returns as soon as this side is done: `f` has returned
/// and this side's end marker is sent. The peer's remaining chunks are still
/// delivered to the local streams (to whatever still reads them) in the
/// background; the returned link writes at once and reads from the byte
/// after the peer's end marker. This lets a side that has nothing left to
/// receive in the section start the next step without waiting a round trip.
pub async fn run_early<S, F, Fut, T>(link: S, f: F) -> Result<(T, EarlyLink<S>)>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(Streams) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let (streams, section) = start(link);
    // The protocols' own errors explain a failure better than the mux's.
    match f(streams).await {
        Ok(v) => Ok((v, section.early().await?)),
        Err(e) => {
            section.abandon().await;
            Err(e)
        }
    }
}

/// Start a multiplexed section on `link`: the two local streams, and the
/// section to end once both are shut down ([`Section::finish`],
/// [`Section::early`]) or abandoned ([`Section::abandon`]).
pub fn start<S>(link: S) -> (Streams, Section<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (relay, relay_far) = tokio::io::duplex(PIPE);
    let (pre, pre_far) = tokio::io::duplex(PIPE);
    let (mut relay_r, relay_w) = tokio::io::split(relay_far);
    let (mut pre_r, pre_w) = tokio::io::split(pre_far);
    let (lr, mut lw) = tokio::io::split(link);

    let recv = tokio::spawn(async move {
        let (mut lr, mut relay_w, mut pre_w) = (lr, relay_w, pre_w);
        let r = receive(&mut lr, &mut relay_w, &mut pre_w).await;
        // Whatever ended the section (the peer's marker, an error, a lost
        // link), the local consumers see the end of their streams now
        // instead of waiting for bytes that will not come.
        let _ = relay_w.shutdown().await;
        let _ = pre_w.shutdown().await;
        r.map(|()| lr)
    });
    // The sender owns the local streams' reading ends, and a sender that
    // fails (the link cut) stops the receiver too: the local streams then
    // close, so a protocol blocked writing to a full stream sees an error
    // at once instead of waiting for its timeout.
    let stop_receiving = recv.abort_handle();
    let send = tokio::spawn(async move {
        let sent = send_chunks(&mut lw, &mut relay_r, &mut pre_r).await;
        if sent.is_err() {
            stop_receiving.abort();
        }
        (sent, lw)
    });
    (
        Streams {
            relay,
            preprocessing: pre,
        },
        Section {
            send: Some(send),
            recv: Some(recv),
        },
    )
}

/// A multiplexed section under way: its sender and receiver tasks.
/// Dropped, it stops both.
pub struct Section<S> {
    send: Option<tokio::task::JoinHandle<(Result<()>, tokio::io::WriteHalf<S>)>>,
    recv: Option<tokio::task::JoinHandle<Result<tokio::io::ReadHalf<S>>>>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Section<S> {
    /// This side's part is over (both local streams shut down): wait for
    /// its end marker to be sent; the link writes at once and reads after
    /// the peer's marker.
    pub async fn early(mut self) -> Result<EarlyLink<S>> {
        let send = self.send.take().expect("present until consumed");
        let recv = self.recv.take().expect("present until consumed");
        let (sent, lw) = match send.await {
            Ok(done) => done,
            Err(e) => {
                recv.abort();
                return Err(NetError::Disconnected(format!("multiplexing: {e}")));
            }
        };
        if let Err(e) = sent {
            recv.abort();
            return Err(e);
        }
        Ok(EarlyLink {
            write: Some(lw),
            read: ReadState::Pending(recv),
        })
    }

    /// Both sides' parts are over: the whole link back.
    pub async fn finish(self) -> Result<S> {
        self.early().await?.finish().await
    }

    /// The section failed on this side. Whatever it sent last (a refusal
    /// on the relay stream) must reach the peer: closing with its chunks
    /// unread would reset the link under them. Its side ends soon after
    /// ours (its streams see our end), so wait for that, briefly.
    pub async fn abandon(mut self) {
        if let Some(send) = self.send.take() {
            let _ = tokio::time::timeout(LINGER, send).await;
        }
        if let Some(recv) = self.recv.as_mut() {
            let _ = tokio::time::timeout(LINGER, recv).await;
        }
    }
}

impl<S> Drop for Section<S> {
    fn drop(&mut self) {
        if let Some(h) = &self.send {
            h.abort();
        }
        if let Some(h) = &self.recv {
            h.abort();
        }
    }
}

/// Send the local streams' bytes as chunks, relay first, until both are
/// shut down; then the end marker.
async fn send_chunks<W: AsyncWrite + Unpin, R: AsyncRead + Unpin>(
    lw: &mut W,
    relay_r: &mut R,
    pre_r: &mut R,
) -> Result<()> {
    let mut relay_buf = vec![0u8; 3 + MAX_CHUNK];
    let mut pre_buf = vec![0u8; 3 + MAX_CHUNK];
    let (mut relay_open, mut pre_open) = (true, true);
    while relay_open || pre_open {
        // Biased: waiting relay bytes go first.
        let (id, n) = tokio::select! {
            biased;
            n = relay_r.read(&mut relay_buf[3..]), if relay_open => (RELAY, n),
            n = pre_r.read(&mut pre_buf[3..]), if pre_open => (PREPROCESSING, n),
        };
        let n = n.map_err(NetError::io("multiplexing"))?;
        let buf = if id == RELAY {
            &mut relay_buf
        } else {
            &mut pre_buf
        };
        if n == 0 {
            match id {
                RELAY => relay_open = false,
                _ => pre_open = false,
            }
            continue;
        }
        buf[..3].copy_from_slice(&chunk_header(id, n));
        lw.write_all(&buf[..3 + n])
            .await
            .map_err(NetError::io("multiplexing"))?;
        lw.flush().await.map_err(NetError::io("multiplexing"))?;
    }
    lw.write_all(&END_MARKER)
        .await
        .map_err(NetError::io("multiplexing"))?;
    lw.flush().await.map_err(NetError::io("multiplexing"))?;
    Ok(())
}

/// The link after this side's part of a multiplexed section: writes go out
/// at once; reads wait until the peer's end marker has been read.
pub struct EarlyLink<S> {
    /// Taken only by `finish`, which consumes the link.
    write: Option<tokio::io::WriteHalf<S>>,
    read: ReadState<S>,
}

enum ReadState<S> {
    /// The mux is still receiving the peer's chunks.
    Pending(tokio::task::JoinHandle<Result<tokio::io::ReadHalf<S>>>),
    Ready(tokio::io::ReadHalf<S>),
    /// The section ended in an error (already reported once).
    Failed,
}

impl<S: AsyncRead + AsyncWrite + Unpin> EarlyLink<S> {
    /// Wait for the end of the peer's section and give the whole link back.
    pub async fn finish(mut self) -> Result<S> {
        let read = match std::mem::replace(&mut self.read, ReadState::Failed) {
            ReadState::Pending(h) => h
                .await
                .map_err(|e| NetError::Disconnected(format!("multiplexing: {e}")))??,
            ReadState::Ready(r) => r,
            ReadState::Failed => {
                return Err(NetError::Disconnected(
                    "the multiplexed section failed".into(),
                ))
            }
        };
        let write = self.write.take().expect("present until finish");
        Ok(read.unsplit(write))
    }
}

impl<S> Drop for EarlyLink<S> {
    fn drop(&mut self) {
        if let ReadState::Pending(h) = &self.read {
            h.abort();
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for EarlyLink<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        loop {
            match &mut self.read {
                ReadState::Ready(r) => return std::pin::Pin::new(r).poll_read(cx, buf),
                ReadState::Failed => {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "the multiplexed section failed",
                    )))
                }
                ReadState::Pending(h) => {
                    let done = match std::pin::Pin::new(h).poll(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(done) => done,
                    };
                    match done {
                        Ok(Ok(r)) => self.read = ReadState::Ready(r),
                        Ok(Err(e)) => {
                            self.read = ReadState::Failed;
                            return Poll::Ready(Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionAborted,
                                e.to_string(),
                            )));
                        }
                        Err(e) => {
                            self.read = ReadState::Failed;
                            return Poll::Ready(Err(std::io::Error::other(e.to_string())));
                        }
                    }
                }
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for EarlyLink<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(self.write.as_mut().expect("present until finish")).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(self.write.as_mut().expect("present until finish")).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(self.write.as_mut().expect("present until finish")).poll_shutdown(cx)
    }
}

/// Read chunks from the link into the local streams until the peer's end marker.
async fn receive<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    lr: &mut R,
    relay_w: &mut W,
    pre_w: &mut W,
) -> Result<()> {
    let mut buf = vec![0u8; MAX_CHUNK];
    loop {
        let mut head = [0u8; 3];
        match lr.read_exact(&mut head).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(NetError::Disconnected(
                    "peer closed during the relay and preprocessing".into(),
                ))
            }
            Err(e) => return Err(NetError::io("multiplexing")(e)),
        }
        let (out, len) = match parse_header(head)? {
            Header::End => break,
            Header::Chunk { stream: RELAY, len } => (&mut *relay_w, len),
            Header::Chunk { len, .. } => (&mut *pre_w, len),
        };
        lr.read_exact(&mut buf[..len])
            .await
            .map_err(NetError::io("multiplexing"))?;
        // A local consumer that is done (or gone) no longer reads: its
        // bytes are dropped rather than stalling the other stream.
        let _ = out.write_all(&buf[..len]).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both sides exchange data on both streams at once, then the link
    /// carries on unframed.
    #[tokio::test]
    async fn streams_cross_and_the_link_continues() {
        let (a, b) = tokio::io::duplex(1 << 10);
        let side = |link: DuplexStream, tag: u8| async move {
            let (v, mut link) = run(link, |s| async move {
                let Streams {
                    mut relay,
                    mut preprocessing,
                } = s;
                let big = vec![tag; 300_000];
                let r = async {
                    relay.write_all(&[tag; 10]).await.unwrap();
                    let mut got = [0u8; 10];
                    relay.read_exact(&mut got).await.unwrap();
                    relay.shutdown().await.unwrap();
                    got
                };
                let p = async {
                    preprocessing.write_all(&big).await.unwrap();
                    let mut got = vec![0u8; 300_000];
                    preprocessing.read_exact(&mut got).await.unwrap();
                    preprocessing.shutdown().await.unwrap();
                    got
                };
                let (r, p) = tokio::join!(r, p);
                Ok((r, p))
            })
            .await
            .unwrap();
            link.write_all(b"after").await.unwrap();
            let mut tail = [0u8; 5];
            link.read_exact(&mut tail).await.unwrap();
            (v, tail)
        };
        let ((va, ta), (vb, tb)) = tokio::join!(side(a, 1), side(b, 2));
        assert_eq!(va.0, [2u8; 10]);
        assert_eq!(vb.0, [1u8; 10]);
        assert!(va.1.iter().all(|&x| x == 2) && vb.1.iter().all(|&x| x == 1));
        assert_eq!(&ta, b"after");
        assert_eq!(&tb, b"after");
    }

    /// A side that ends early writes its next bytes before the peer has
    /// ended the section; the peer's late chunks still reach the local
    /// stream that reads them, and reads of the link start after the
    /// peer's marker.
    #[tokio::test]
    async fn an_early_side_writes_at_once_and_reads_after_the_peer_ends() {
        let (a, b) = tokio::io::duplex(1 << 10);
        let (late_tx, late_rx) = tokio::sync::oneshot::channel::<()>();
        let early = async move {
            let (drain, mut link) = run_early(a, |s| async move {
                let Streams {
                    mut relay,
                    mut preprocessing,
                } = s;
                relay.write_all(b"close").await.unwrap();
                relay.shutdown().await.unwrap();
                preprocessing.shutdown().await.unwrap();
                // Keep reading the relay in the background, as the prover does.
                Ok(tokio::spawn(async move {
                    let mut got = Vec::new();
                    relay.read_to_end(&mut got).await.unwrap();
                    got
                }))
            })
            .await
            .unwrap();
            // The peer has not ended its section yet: writing must not wait.
            link.write_all(b"proof").await.unwrap();
            late_tx.send(()).unwrap();
            let mut tail = [0u8; 7];
            link.read_exact(&mut tail).await.unwrap();
            (drain.await.unwrap(), tail)
        };
        let late = async move {
            let (got, mut link) = run(b, |s| async move {
                let Streams {
                    mut relay,
                    preprocessing,
                } = s;
                drop(preprocessing);
                let mut got = [0u8; 5];
                relay.read_exact(&mut got).await.unwrap();
                late_rx.await.unwrap();
                relay.write_all(b"late ack").await.unwrap();
                relay.shutdown().await.unwrap();
                Ok(got)
            })
            .await
            .unwrap();
            let mut proof = [0u8; 5];
            link.read_exact(&mut proof).await.unwrap();
            link.write_all(b"verdict").await.unwrap();
            (got, proof)
        };
        let ((drained, tail), (got, proof)) = tokio::join!(early, late);
        assert_eq!(&got, b"close");
        assert_eq!(&proof, b"proof");
        assert_eq!(drained, b"late ack");
        assert_eq!(&tail, b"verdict");
    }

    #[tokio::test]
    async fn bad_chunks_are_errors() {
        for raw in [
            vec![7u8, 1, 0, 0],     // unknown stream
            vec![0u8, 0, 0],        // empty chunk
            vec![0u8, 0xff, 0xff],  // oversized chunk (u16 max)
            vec![1u8, 0xff, 0xff],  // the same on the other stream
            vec![0u8, 0x01, 0x40],  // MAX_CHUNK + 1
            vec![0xff, 1, 0, 0],    // end marker with a length
            vec![0xff, 0xff, 0xff], // end marker with the largest length
            vec![0u8, 0x00, 0x40],  // a full-size chunk cut short
            vec![1u8, 5, 0, 1, 2],  // truncated chunk
            vec![],                 // peer gone
        ] {
            let (a, mut b) = tokio::io::duplex(1 << 10);
            b.write_all(&raw).await.unwrap();
            drop(b);
            let r = run(a, |s| async move {
                drop(s);
                Ok(())
            })
            .await;
            assert!(r.is_err(), "{raw:?}");
        }
    }

    /// A peer that vanishes mid-section ends the local consumers' reads at
    /// once (they see end of stream), so nothing waits for a timeout.
    #[tokio::test]
    async fn a_vanished_peer_ends_local_reads() {
        let (a, mut b) = tokio::io::duplex(1 << 10);
        b.write_all(&[1u8, 4, 0, 9, 9]).await.unwrap(); // half a chunk
        drop(b);
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            run(a, |s| async move {
                let Streams {
                    mut relay,
                    mut preprocessing,
                } = s;
                let mut x = Vec::new();
                let _ = preprocessing.read_to_end(&mut x).await;
                let _ = relay.read_to_end(&mut x).await;
                Ok(())
            }),
        )
        .await
        .expect("no hang");
        assert!(r.is_err());
    }
}

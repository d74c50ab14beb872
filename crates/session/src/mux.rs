//! Two byte streams over one link, for a while, on any runtime: the TLS
//! relay (or MPC mode's session) and the proof's preprocessing run at the
//! same time on the prover/verifier link.
//!
//! The TLS session mostly waits on round trips while the preprocessing
//! mostly computes and sends bulk data; interleaving them takes the TLS
//! session off the critical path. The wire format is
//! `webproof_proxy::mux`'s: chunks `stream id ‖ length ‖ bytes`, relay
//! chunks before preprocessing chunks when both are waiting (so TLS bytes
//! queue behind at most one chunk per side), and an end marker once both
//! local streams are closed; the section ends once a side has sent its own
//! marker and read the peer's, and hands the link back at the exact byte
//! after the peer's marker.
//!
//! Two tasks pump a section (one sends, one receives), started on the
//! session's [`Runtime`]; the local streams are in-memory pipes
//! ([`crate::pipe`]). A page pumps the same format in its WebSocket's
//! message handler instead (`webproof-browser`).

use crate::pipe::{duplex, PipeEnd};
use crate::runtime::{spawn, Runtime, Task};
use crate::{Error, Result};
use futures::future::{select, AbortHandle, Abortable, Either};
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::time::Duration;
use webproof_proxy::mux::{
    chunk_header, parse_header, Header, END_MARKER, MAX_CHUNK, PREPROCESSING, RELAY,
};

/// Buffer of each local stream.
const PIPE: usize = 256 << 10;
/// After a failed section: how long to wait for the peer's end marker
/// before the link is dropped.
const LINGER: Duration = Duration::from_millis(500);

/// Start a multiplexed section on `link`: the relay stream, the
/// preprocessing stream, and the section to end once both are closed
/// ([`Section::finish`], [`Section::early`]) or abandoned
/// ([`Section::abandon`]).
pub fn start<R, S>(rt: &R, link: S) -> (PipeEnd, PipeEnd, Section<R, S>)
where
    R: Runtime,
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (relay, relay_far) = duplex(PIPE);
    let (pre, pre_far) = duplex(PIPE);
    let (relay_r, relay_w) = relay_far.split();
    let (pre_r, pre_w) = pre_far.split();
    let (lr, lw) = link.split();

    // A sender that fails (the link cut) stops the receiver too: the
    // local streams then close, so a protocol blocked writing to a full
    // stream sees an error at once instead of waiting for its timeout.
    let (stop_receiving, registration) = AbortHandle::new_pair();
    let recv = spawn(
        rt,
        Abortable::new(
            async move {
                let (mut lr, mut relay_w, mut pre_w) = (lr, relay_w, pre_w);
                let r = receive(&mut lr, &mut relay_w, &mut pre_w).await;
                // Whatever ended the section (the peer's marker, an error,
                // a lost link), the local consumers see the end of their
                // streams now instead of waiting for bytes that will not
                // come.
                let _ = relay_w.close().await;
                let _ = pre_w.close().await;
                r.map(|()| lr)
            },
            registration,
        ),
    );
    let send = spawn(rt, async move {
        let (mut lw, mut relay_r, mut pre_r) = (lw, relay_r, pre_r);
        let sent = send_chunks(&mut lw, &mut relay_r, &mut pre_r).await;
        if sent.is_err() {
            stop_receiving.abort();
        }
        (sent, lw)
    });
    (
        relay,
        pre,
        Section {
            rt: rt.clone(),
            send,
            recv,
        },
    )
}

type Receiving<S> = Task<core::result::Result<Result<ReadHalf<S>>, futures::future::Aborted>>;

/// A multiplexed section under way: its sender and receiver tasks.
/// Dropped, it stops both.
pub struct Section<R, S> {
    rt: R,
    send: Task<(Result<()>, WriteHalf<S>)>,
    recv: Receiving<S>,
}

impl<R: Runtime, S: AsyncRead + AsyncWrite + Unpin + 'static> Section<R, S> {
    /// This side's part is over (both local streams closed): wait for its
    /// end marker to be sent; the link writes at once and reads after the
    /// peer's marker.
    pub async fn early(self) -> Result<EarlyLink<S>> {
        let (sent, lw) = self.send.await;
        sent?;
        Ok(EarlyLink {
            write: Some(lw),
            read: ReadState::Pending(self.recv),
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
    pub async fn abandon(self) {
        let Section { rt, send, recv } = self;
        let _ = select(send, pin!(rt.sleep(LINGER))).await;
        let _ = select(recv, pin!(rt.sleep(LINGER))).await;
    }
}

fn mux_io(e: std::io::Error) -> Error {
    Error::io("multiplexing")(e)
}

/// Send the local streams' bytes as chunks, relay first, until both are
/// closed; then the end marker.
async fn send_chunks<W: AsyncWrite + Unpin, Rd: AsyncRead + Unpin>(
    lw: &mut W,
    relay_r: &mut Rd,
    pre_r: &mut Rd,
) -> Result<()> {
    let mut relay_buf = vec![0u8; 3 + MAX_CHUNK];
    let mut pre_buf = vec![0u8; 3 + MAX_CHUNK];
    let (mut relay_open, mut pre_open) = (true, true);
    while relay_open || pre_open {
        // Biased: waiting relay bytes go first.
        let (id, n) = {
            let relay = pin!(async {
                if relay_open {
                    relay_r.read(&mut relay_buf[3..]).await
                } else {
                    futures::future::pending().await
                }
            });
            let pre = pin!(async {
                if pre_open {
                    pre_r.read(&mut pre_buf[3..]).await
                } else {
                    futures::future::pending().await
                }
            });
            match select(relay, pre).await {
                Either::Left((n, _)) => (RELAY, n),
                Either::Right((n, _)) => (PREPROCESSING, n),
            }
        };
        let n = n.map_err(mux_io)?;
        if n == 0 {
            match id {
                RELAY => relay_open = false,
                _ => pre_open = false,
            }
            continue;
        }
        let buf = if id == RELAY {
            &mut relay_buf
        } else {
            &mut pre_buf
        };
        buf[..3].copy_from_slice(&chunk_header(id, n));
        lw.write_all(&buf[..3 + n]).await.map_err(mux_io)?;
        lw.flush().await.map_err(mux_io)?;
    }
    lw.write_all(&END_MARKER).await.map_err(mux_io)?;
    lw.flush().await.map_err(mux_io)?;
    Ok(())
}

/// Read chunks from the link into the local streams until the peer's end
/// marker.
async fn receive<Rd: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    lr: &mut Rd,
    relay_w: &mut W,
    pre_w: &mut W,
) -> Result<()> {
    let mut buf = vec![0u8; MAX_CHUNK];
    loop {
        let mut head = [0u8; 3];
        match lr.read_exact(&mut head).await {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(Error::Disconnected(
                    "peer closed during the relay and preprocessing".into(),
                ))
            }
            Err(e) => return Err(mux_io(e)),
        }
        let (out, len) = match parse_header(head)? {
            Header::End => break,
            Header::Chunk { stream: RELAY, len } => (&mut *relay_w, len),
            Header::Chunk { len, .. } => (&mut *pre_w, len),
        };
        lr.read_exact(&mut buf[..len]).await.map_err(mux_io)?;
        // A local consumer that is done (or gone) no longer reads: its
        // bytes are dropped rather than stalling the other stream.
        let _ = out.write_all(&buf[..len]).await;
    }
    Ok(())
}

/// The link after this side's part of a multiplexed section: writes go out
/// at once; reads wait until the peer's end marker has been read.
pub struct EarlyLink<S> {
    /// Taken only by `finish`, which consumes the link.
    write: Option<WriteHalf<S>>,
    read: ReadState<S>,
}

enum ReadState<S> {
    /// The mux is still receiving the peer's chunks.
    Pending(Receiving<S>),
    Ready(ReadHalf<S>),
    /// The section ended in an error (already reported once).
    Failed,
}

impl<S: AsyncRead + AsyncWrite + Unpin + 'static> EarlyLink<S> {
    /// Wait for the end of the peer's section and give the whole link back.
    pub async fn finish(mut self) -> Result<S> {
        let read = match std::mem::replace(&mut self.read, ReadState::Failed) {
            ReadState::Pending(h) => h
                .await
                .map_err(|_| Error::Disconnected("the multiplexed section failed".into()))??,
            ReadState::Ready(r) => r,
            ReadState::Failed => {
                return Err(Error::Disconnected("the multiplexed section failed".into()))
            }
        };
        let write = self.write.take().expect("present until finish");
        read.reunite(write)
            .map_err(|_| Error::Disconnected("the link came apart".into()))
    }

    fn writer(&mut self) -> Pin<&mut WriteHalf<S>> {
        Pin::new(self.write.as_mut().expect("present until finish"))
    }
}

impl<S: AsyncRead + Unpin + 'static> AsyncRead for EarlyLink<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        loop {
            match &mut self.read {
                ReadState::Ready(r) => return Pin::new(r).poll_read(cx, buf),
                ReadState::Failed => {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "the multiplexed section failed",
                    )))
                }
                ReadState::Pending(h) => {
                    let done = match Pin::new(h).poll(cx) {
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
                        Err(_) => {
                            self.read = ReadState::Failed;
                            return Poll::Ready(Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionAborted,
                                "the multiplexed section was stopped",
                            )));
                        }
                    }
                }
            }
        }
    }
}

impl<S: AsyncWrite + AsyncRead + Unpin + 'static> AsyncWrite for EarlyLink<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.writer().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.writer().poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.writer().poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{LinkFaults, Sim};

    fn sim_link() -> (Sim, crate::sim::SimLink, crate::sim::SimLink) {
        let sim = Sim::new(1, 0);
        let (a, b) = sim.link(Duration::from_millis(20), LinkFaults::default());
        (sim, a, b)
    }

    /// Both sides exchange data on both streams at once, then the link
    /// carries on unframed.
    #[test]
    fn streams_cross_and_the_link_continues() {
        let (sim, a, b) = sim_link();
        let side = |link: crate::sim::SimLink, tag: u8| {
            let sim = sim.clone();
            async move {
                let (mut relay, mut pre, section) = start(&sim, link);
                let r = async {
                    relay.write_all(&[tag; 10]).await.unwrap();
                    let mut got = [0u8; 10];
                    relay.read_exact(&mut got).await.unwrap();
                    relay.close().await.unwrap();
                    got
                };
                let p = async {
                    pre.write_all(&vec![tag; 300_000]).await.unwrap();
                    let mut got = vec![0u8; 300_000];
                    pre.read_exact(&mut got).await.unwrap();
                    pre.close().await.unwrap();
                    got
                };
                let (r, p) = futures::join!(r, p);
                let mut link = section.finish().await.unwrap();
                link.write_all(b"after").await.unwrap();
                let mut tail = [0u8; 5];
                link.read_exact(&mut tail).await.unwrap();
                (r, p, tail)
            }
        };
        let ((ra, pa, ta), (rb, pb, tb)) =
            sim.block_on(futures::future::join(side(a, 1), side(b, 2)));
        assert_eq!(ra, [2u8; 10]);
        assert_eq!(rb, [1u8; 10]);
        assert!(pa.iter().all(|&x| x == 2) && pb.iter().all(|&x| x == 1));
        assert_eq!((&ta, &tb), (b"after", b"after"));
    }

    /// A side that ends early writes its next bytes before the peer has
    /// ended the section; the peer's late chunks still reach the local
    /// stream that reads them, and reads of the link start after the
    /// peer's marker.
    #[test]
    fn an_early_side_writes_at_once_and_reads_after_the_peer_ends() {
        let (sim, a, b) = sim_link();
        let (late_tx, late_rx) = futures::channel::oneshot::channel::<()>();
        let early = {
            let sim = sim.clone();
            async move {
                let (mut relay, mut pre, section) = start(&sim, a);
                relay.write_all(b"close").await.unwrap();
                relay.close().await.unwrap();
                pre.close().await.unwrap();
                // Keep reading the relay in the background, as the prover does.
                let drain = crate::runtime::spawn(&sim, async move {
                    let mut got = Vec::new();
                    relay.read_to_end(&mut got).await.unwrap();
                    got
                });
                let mut link = section.early().await.unwrap();
                // The peer has not ended its section yet: writing must not wait.
                link.write_all(b"proof").await.unwrap();
                late_tx.send(()).unwrap();
                let mut tail = [0u8; 7];
                link.read_exact(&mut tail).await.unwrap();
                (drain.await, tail)
            }
        };
        let late = {
            let sim = sim.clone();
            async move {
                let (mut relay, pre, section) = start(&sim, b);
                drop(pre);
                let mut got = [0u8; 5];
                relay.read_exact(&mut got).await.unwrap();
                late_rx.await.unwrap();
                relay.write_all(b"late ack").await.unwrap();
                relay.close().await.unwrap();
                let mut link = section.finish().await.unwrap();
                let mut proof = [0u8; 5];
                link.read_exact(&mut proof).await.unwrap();
                link.write_all(b"verdict").await.unwrap();
                (got, proof)
            }
        };
        let ((drained, tail), (got, proof)) = sim.block_on(futures::future::join(early, late));
        assert_eq!(&got, b"close");
        assert_eq!(&proof, b"proof");
        assert_eq!(drained, b"late ack");
        assert_eq!(&tail, b"verdict");
    }

    /// Malformed chunks, a cut chunk and a vanished peer are errors, and
    /// the local streams end at once (nothing waits for a timeout).
    #[test]
    fn bad_chunks_are_errors() {
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
            let (sim, a, mut b) = sim_link();
            let what = format!("{raw:?}");
            let r = sim.block_on({
                let sim = sim.clone();
                async move {
                    b.write_all(&raw).await.unwrap();
                    drop(b);
                    let (mut relay, mut pre, section) = start(&sim, a);
                    let mut x = Vec::new();
                    let _ = pre.read_to_end(&mut x).await;
                    let _ = relay.read_to_end(&mut x).await;
                    drop((relay, pre));
                    section.finish().await
                }
            });
            assert!(r.is_err(), "{what}");
        }
    }

    /// A section abandoned on one side ends the peer's, with an error,
    /// within the linger time (virtual).
    #[test]
    fn an_abandoned_section_ends_the_peers() {
        let (sim, a, b) = sim_link();
        let (sim2, sim3) = (sim.clone(), sim.clone());
        let (r, ()) = sim.block_on(futures::future::join(
            async move {
                let (mut relay, mut pre, section) = start(&sim2, b);
                let mut x = Vec::new();
                let _ = relay.read_to_end(&mut x).await;
                let _ = pre.read_to_end(&mut x).await;
                drop((relay, pre));
                section.finish().await.map(|_| ())
            },
            async move {
                let (relay, pre, section) = start(&sim3, a);
                section.abandon().await;
                drop((relay, pre));
            },
        ));
        assert!(r.is_err());
        assert!(sim.now() <= Duration::from_secs(2), "{:?}", sim.now());
    }
}

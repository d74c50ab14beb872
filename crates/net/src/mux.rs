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
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};

/// Stream id of the TLS relay.
const RELAY: u8 = 0;
/// Stream id of the proof preprocessing.
const PREPROCESSING: u8 = 1;
/// End of the multiplexed section.
const END: u8 = 0xff;
/// Largest chunk payload.
const MAX_CHUNK: usize = 16 << 10;
/// Buffer of each local virtual stream.
const PIPE: usize = 256 << 10;

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
    S: AsyncRead + AsyncWrite + Unpin + Send,
    F: FnOnce(Streams) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let (relay, relay_far) = tokio::io::duplex(PIPE);
    let (pre, pre_far) = tokio::io::duplex(PIPE);
    let (mut relay_r, mut relay_w) = tokio::io::split(relay_far);
    let (mut pre_r, mut pre_w) = tokio::io::split(pre_far);
    let (mut lr, mut lw) = tokio::io::split(link);

    let send = async {
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
            buf[0] = id;
            buf[1..3].copy_from_slice(&(n as u16).to_le_bytes());
            lw.write_all(&buf[..3 + n])
                .await
                .map_err(NetError::io("multiplexing"))?;
            lw.flush().await.map_err(NetError::io("multiplexing"))?;
        }
        lw.write_all(&[END, 0, 0])
            .await
            .map_err(NetError::io("multiplexing"))?;
        lw.flush().await.map_err(NetError::io("multiplexing"))?;
        Ok::<_, NetError>(())
    };
    let recv = async {
        let r = receive(&mut lr, &mut relay_w, &mut pre_w).await;
        // Whatever ended the section (the peer's marker, an error, a lost
        // link), the local consumers see the end of their streams now
        // instead of waiting for bytes that will not come.
        let _ = relay_w.shutdown().await;
        let _ = pre_w.shutdown().await;
        r
    };
    let work = f(Streams {
        relay,
        preprocessing: pre,
    });
    let (sent, received, result) = tokio::join!(send, recv, work);
    // The protocols' own errors explain a failure better than the mux's.
    let value = result?;
    sent?;
    received?;
    Ok((value, lr.unsplit(lw)))
}

/// End a proof channel run over one of the local streams: flush it and shut
/// the stream down, so the mux can close the section.
pub async fn close_channel(
    ch: webproof_core::Channel<tokio_util::compat::Compat<DuplexStream>>,
) -> Result<()> {
    let mut io = ch
        .into_inner()
        .await
        .map_err(|e| NetError::Disconnected(format!("after proof setup: {e}")))?
        .into_inner();
    let _ = io.shutdown().await;
    Ok(())
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
        let len = u16::from_le_bytes([head[1], head[2]]) as usize;
        let out = match head[0] {
            END if len == 0 => break,
            RELAY => &mut *relay_w,
            PREPROCESSING => &mut *pre_w,
            other => {
                return Err(NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                    format!("multiplexed chunk for unknown stream {other}"),
                )))
            }
        };
        if len == 0 || len > MAX_CHUNK {
            return Err(NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                format!("multiplexed chunk of {len} bytes"),
            )));
        }
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

    #[tokio::test]
    async fn bad_chunks_are_errors() {
        for raw in [
            vec![7u8, 1, 0, 0],    // unknown stream
            vec![0u8, 0, 0],       // empty chunk
            vec![0u8, 0xff, 0xff], // oversized chunk
            vec![1u8, 5, 0, 1, 2], // truncated chunk
            vec![],                // peer gone
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

//! Byte accounting and link emulation for the nested-TLS bench.
//!
//! - [`Counting`]: a stream wrapper counting the bytes the client's TCP
//!   socket sends and receives (TLS records and all, no TCP/IP headers).
//! - [`Relay`]: a userspace TCP relay that delays every byte by half the
//!   configured round-trip time in each direction and, with a bandwidth,
//!   serialises each direction through one shared link (so concurrent
//!   connections share the bandwidth, as on a real link). The TCP
//!   handshake's round trip, which happens locally with the relay, is
//!   emulated by holding the client's first bytes back one RTT. `netem` is not
//!   available on every kernel; this needs nothing but sockets. Its queue is
//!   bounded, so a fast sender is slowed by TCP back-pressure like a full
//!   router buffer.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// Bytes sent and received through a [`Counting`] stream.
#[derive(Debug, Default)]
pub struct ByteCounters {
    pub tx: AtomicU64,
    pub rx: AtomicU64,
}

/// A stream that adds what passes through it to shared counters.
pub struct Counting<S> {
    inner: S,
    counters: Arc<ByteCounters>,
}

impl<S> Counting<S> {
    pub fn new(inner: S, counters: Arc<ByteCounters>) -> Self {
        Self { inner, counters }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counting<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        self.counters.rx.fetch_add(n, Ordering::Relaxed);
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counting<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            self.counters.tx.fetch_add(*n as u64, Ordering::Relaxed);
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

/// Emulated link parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpec {
    /// Round-trip time added; each direction gets half.
    pub rtt: Duration,
    /// Bandwidth of each direction in bits per second (`None`: unlimited).
    pub bits_per_s: Option<f64>,
}

/// One direction of the link: when it is next free.
#[derive(Debug)]
struct Direction {
    free_at: Mutex<Instant>,
}

impl Direction {
    /// When a `len`-byte segment read now leaves the far end.
    fn schedule(&self, spec: &LinkSpec, len: usize) -> Instant {
        let now = Instant::now();
        let one_way = spec.rtt / 2;
        match spec.bits_per_s {
            None => now + one_way,
            Some(bps) => {
                let mut free = self.free_at.lock().expect("link lock");
                let start = (*free).max(now);
                *free = start + Duration::from_secs_f64(len as f64 * 8.0 / bps);
                *free + one_way
            }
        }
    }
}

/// Segments are read in at most this size (a few TCP segments), so the
/// shaping is smooth.
const SEGMENT: usize = 16 * 1024;
/// Queued segments per direction and connection (1 MiB).
const QUEUE: usize = 64;

/// A relay from a local listener to `target` through an emulated link.
pub struct Relay {
    pub addr: std::net::SocketAddr,
}

impl Relay {
    /// Start relaying on the current runtime; runs until the runtime stops.
    pub async fn start(target: std::net::SocketAddr, spec: LinkSpec) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let up = Arc::new(Direction {
            free_at: Mutex::new(Instant::now()),
        });
        let down = Arc::new(Direction {
            free_at: Mutex::new(Instant::now()),
        });
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let accepted = Instant::now();
                let (up, down) = (up.clone(), down.clone());
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(target).await else {
                        return;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    // The client's connect completed locally at once; on the
                    // emulated link it would take one RTT, and its first
                    // bytes half an RTT more to arrive.
                    let hold = accepted + spec.rtt + spec.rtt / 2;
                    tokio::join!(
                        pipe(cr, sw, spec, up, hold),
                        pipe(sr, cw, spec, down, accepted)
                    );
                });
            }
        });
        Ok(Self { addr })
    }
}

/// Forward `rd` to `wr` through `dir`, delivering nothing before `hold`.
async fn pipe<R, W>(mut rd: R, mut wr: W, spec: LinkSpec, dir: Arc<Direction>, hold: Instant)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(Instant, Vec<u8>)>(QUEUE);
    let reader = tokio::spawn(async move {
        let mut buf = vec![0u8; SEGMENT];
        loop {
            let n = match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let at = dir.schedule(&spec, n);
            if tx.send((at, buf[..n].to_vec())).await.is_err() {
                break;
            }
        }
        // End of stream travels like data: after the bytes before it.
        let _ = tx.send((dir.schedule(&spec, 0), Vec::new())).await;
    });
    while let Some((at, data)) = rx.recv().await {
        tokio::time::sleep_until(at.max(hold)).await;
        if data.is_empty() {
            break;
        }
        if wr.write_all(&data).await.is_err() {
            break;
        }
    }
    let _ = wr.shutdown().await;
    reader.abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn echo_server() -> std::net::SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        addr
    }

    #[tokio::test]
    async fn relay_adds_round_trip_time_and_keeps_bytes() {
        let target = echo_server().await;
        let spec = LinkSpec {
            rtt: Duration::from_millis(40),
            bits_per_s: None,
        };
        let relay = Relay::start(target, spec).await.unwrap();
        let counters = Arc::new(ByteCounters::default());
        let mut s = Counting::new(
            TcpStream::connect(relay.addr).await.unwrap(),
            counters.clone(),
        );
        let t = std::time::Instant::now();
        s.write_all(b"ping").await.unwrap();
        let mut b = [0u8; 4];
        s.read_exact(&mut b).await.unwrap();
        let rtt = t.elapsed();
        assert_eq!(&b, b"ping");
        assert!(rtt >= Duration::from_millis(40), "{rtt:?}");
        assert_eq!(counters.tx.load(Ordering::Relaxed), 4);
        assert_eq!(counters.rx.load(Ordering::Relaxed), 4);
    }

    #[tokio::test]
    async fn relay_limits_bandwidth() {
        let target = echo_server().await;
        // 8 Mbit/s = 1 MB/s each way: 200 KB takes at least 0.2 s.
        let spec = LinkSpec {
            rtt: Duration::ZERO,
            bits_per_s: Some(8e6),
        };
        let relay = Relay::start(target, spec).await.unwrap();
        let s = TcpStream::connect(relay.addr).await.unwrap();
        let (mut r, mut w) = s.into_split();
        let data = vec![5u8; 200_000];
        let t = std::time::Instant::now();
        let writer = tokio::spawn(async move { w.write_all(&data).await });
        let mut back = vec![0u8; 200_000];
        r.read_exact(&mut back).await.unwrap();
        writer.await.unwrap().unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(190),
            "{:?}",
            t.elapsed()
        );
        assert!(back.iter().all(|&b| b == 5));
    }
}

//! What a session needs from the runtime it runs on, and nothing more:
//! clocks, timers, tasks beside the session, heavy computation off the
//! session's task ([`Runtime`]); the link to the peer with its byte counts
//! and multiplexed sections ([`Link`]); a connection to the server
//! ([`Connector`]). tokio (`webproof-net`), the browser (`webproof-browser`)
//! and the tests implement them; the sessions make every decision.

use crate::{Error, Result};
use futures::future::{BoxFuture, Either, FutureExt, RemoteHandle};
use futures::io::{AsyncRead, AsyncWrite};
use std::future::Future;
use std::time::Duration;

/// Time and tasks.
pub trait Runtime: Clone + Send + Sync + 'static {
    /// A timer's future (its own type: the browser's is not `Send`).
    type Sleep: Future<Output = ()>;
    /// The session's randomness (the OS's natively and in a page; seeded
    /// in tests).
    type Rng: rand_core::RngCore + rand_core::CryptoRng + Send;

    /// A source of randomness for one session.
    fn rng(&self) -> Self::Rng;

    /// Milliseconds on a monotonic clock from an arbitrary origin.
    fn now_ms(&self) -> f64;
    /// Seconds since the Unix epoch (the time certificates are checked at).
    fn unix_time(&self) -> u64;
    /// A future that resolves after `d`.
    fn sleep(&self, d: Duration) -> Self::Sleep;
    /// Run `f` beside the caller (another thread where there is one); it
    /// is dropped at its next poll once its [`Task`] is.
    fn spawn_boxed(&self, f: BoxFuture<'static, ()>);
    /// Run a long computation off the session's task where the runtime
    /// can (a worker thread natively; at once in a single-threaded page).
    fn compute_boxed(&self, f: Box<dyn FnOnce() + Send>);
}

/// A task started by [`spawn`]: awaits its output; dropped, it stops the
/// task.
pub struct Task<T>(RemoteHandle<T>);

impl<T: 'static> Future for Task<T> {
    type Output = T;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<T> {
        self.0.poll_unpin(cx)
    }
}

/// Run `f` beside the caller on `rt`.
pub fn spawn<R: Runtime, T: Send + 'static>(
    rt: &R,
    f: impl Future<Output = T> + Send + 'static,
) -> Task<T> {
    let (remote, handle) = f.remote_handle();
    rt.spawn_boxed(Box::pin(remote));
    Task(handle)
}

/// Run `f` off the session's task on `rt`, starting now, and await its
/// result; a computation that panicked is an error naming `what`.
pub fn compute<R: Runtime, T: Send + 'static>(
    rt: &R,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> impl Future<Output = Result<T>> {
    let (tx, rx) = futures::channel::oneshot::channel();
    rt.compute_boxed(Box::new(move || {
        let _ = tx.send(f());
    }));
    let what = what.to_string();
    async move {
        rx.await.map_err(|_| Error::Io {
            context: what,
            source: std::io::Error::other("the computation panicked"),
        })
    }
}

/// Run `f` for at most `d`, naming the step in the error.
pub async fn timeout<R: Runtime, T>(
    rt: &R,
    d: Duration,
    what: &str,
    f: impl Future<Output = Result<T>>,
) -> Result<T> {
    let f = std::pin::pin!(f);
    let sleep = std::pin::pin!(rt.sleep(d));
    match futures::future::select(f, sleep).await {
        Either::Left((r, _)) => r,
        Either::Right(_) => Err(Error::Timeout(format!(
            "{what} (after {} ms)",
            d.as_millis()
        ))),
    }
}

/// The prover-verifier link: a byte stream that counts its bytes and can
/// carry two streams at once for a while (the mux of
/// `webproof_proxy::mux`: the TLS session's and the preprocessing's).
pub trait Link: AsyncRead + AsyncWrite + Unpin + Send + Sized + 'static {
    /// One of a section's two streams; closing it ends this side's part.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// A section under way.
    type Section: Section<Self>;
    /// The link after this side's part of a section: writes go out at
    /// once, reads start after the peer's end marker.
    type Early: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// The link's byte counts, readable while the link is in use.
    fn counters(&self) -> Counters;

    /// Start a multiplexed section: the relay stream, the preprocessing
    /// stream, and the section to end once both are closed.
    fn start_mux(self) -> (Self::Stream, Self::Stream, Self::Section);
}

/// A multiplexed section of a link `L` under way.
pub trait Section<L: Link> {
    /// Both local streams are closed: wait for the peer's end of the
    /// section and give the link back, positioned after its end marker.
    fn finish(self) -> impl Future<Output = Result<L>>;
    /// Both local streams are closed: the link at once, for a side with
    /// nothing left to receive in the section (its reads wait for the
    /// peer's end marker; the peer's late chunks still reach the streams'
    /// readers).
    fn early(self) -> impl Future<Output = Result<L::Early>>;
    /// The section failed on this side: let what this side sent last reach
    /// the peer, briefly, and drop the link.
    fn abandon(self) -> impl Future<Output = ()>;
}

/// A link's byte counts (sent, received), readable from anywhere while
/// the link is in use.
#[derive(Clone)]
pub struct Counters(std::sync::Arc<dyn Fn() -> (u64, u64) + Send + Sync>);

impl Counters {
    /// Counts read by `f`.
    pub fn new(f: impl Fn() -> (u64, u64) + Send + Sync + 'static) -> Self {
        Counters(std::sync::Arc::new(f))
    }

    /// Bytes sent and received so far.
    pub fn get(&self) -> (u64, u64) {
        (self.0)()
    }
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (sent, received) = self.get();
        write!(f, "Counters {{ sent: {sent}, received: {received} }}")
    }
}

/// Opens the connection to the server (MPC mode: the prover's own TLS
/// connection; a TCP socket natively, `webproof relay` in a page).
pub trait Connector {
    /// The connection.
    type Conn: AsyncRead + AsyncWrite + Unpin;
    /// Connect to `host:port`.
    fn connect(&self, host: &str, port: u16) -> impl Future<Output = Result<Self::Conn>>;
}

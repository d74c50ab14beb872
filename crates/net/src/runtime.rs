//! tokio as a `webproof_session` runtime: its clock and timers, tasks on
//! its thread pool and computation on its blocking threads
//! ([`TokioRuntime`]); a counted link to the verifier whose sections
//! `webproof_session::mux` pumps on tokio tasks ([`TokioLink`]); TCP to the server, the prover's
//! ([`TcpConnector`]) and the verifier's under its address policy
//! ([`PolicyConnector`]).

use crate::frame::Counted;
use crate::{NetError, Result};
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::compat::{Compat, TokioAsyncReadCompatExt};
use webproof_session::mux;
use webproof_session::pipe::PipeEnd;
use webproof_session::Counters;

/// The tokio runtime the caller runs on.
#[derive(Clone, Copy, Debug)]
pub struct TokioRuntime {
    origin: Instant,
}

impl TokioRuntime {
    /// Its clock starts now.
    pub fn new() -> Self {
        TokioRuntime {
            origin: Instant::now(),
        }
    }
}

impl Default for TokioRuntime {
    fn default() -> Self {
        Self::new()
    }
}

impl webproof_session::Runtime for TokioRuntime {
    type Sleep = tokio::time::Sleep;
    type Rng = rand::rngs::OsRng;

    fn rng(&self) -> Self::Rng {
        rand::rngs::OsRng
    }

    fn now_ms(&self) -> f64 {
        self.origin.elapsed().as_secs_f64() * 1000.0
    }

    fn unix_time(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }

    fn sleep(&self, d: Duration) -> Self::Sleep {
        tokio::time::sleep(d)
    }

    fn spawn_boxed(&self, f: futures::future::BoxFuture<'static, ()>) {
        tokio::spawn(f);
    }

    fn compute_boxed(&self, f: Box<dyn FnOnce() + Send>) {
        tokio::task::spawn_blocking(f);
    }
}

/// A tokio stream to the verifier, counted, as a session's link.
pub struct TokioLink<S> {
    inner: Compat<Counted<S>>,
}

impl<S: AsyncRead + Unpin> TokioLink<S> {
    /// Count `stream`'s bytes from now on.
    pub fn new(stream: S) -> Self {
        TokioLink {
            inner: Counted::new(stream).compat(),
        }
    }
}

impl<S: AsyncRead + Unpin> futures::io::AsyncRead for TokioLink<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> futures::io::AsyncWrite for TokioLink<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_close(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> webproof_session::Link for TokioLink<S> {
    type Stream = PipeEnd;
    type Section = TokioSection<S>;
    type Early = mux::EarlyLink<Compat<Counted<S>>>;

    fn counters(&self) -> Counters {
        let c = self.inner.get_ref().counters();
        Counters::new(move || (c.sent(), c.received()))
    }

    fn start_mux(self) -> (PipeEnd, PipeEnd, Self::Section) {
        let (relay, pre, section) = mux::start(&TokioRuntime::new(), self.inner);
        (relay, pre, TokioSection(section))
    }
}

/// A multiplexed section of a [`TokioLink`], pumped by two tokio tasks.
pub struct TokioSection<S>(mux::Section<TokioRuntime, Compat<Counted<S>>>);

impl<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> webproof_session::Section<TokioLink<S>>
    for TokioSection<S>
{
    async fn finish(self) -> Result<TokioLink<S>> {
        Ok(TokioLink {
            inner: self.0.finish().await?,
        })
    }

    async fn early(self) -> Result<mux::EarlyLink<Compat<Counted<S>>>> {
        self.0.early().await
    }

    async fn abandon(self) {
        self.0.abandon().await
    }
}

/// TCP to the server: to `at` if given (the name is still the one sent
/// and checked), else to the name resolved.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpConnector {
    /// Connect here instead of resolving the name.
    pub at: Option<SocketAddr>,
}

impl webproof_session::Connector for TcpConnector {
    type Conn = Compat<tokio::net::TcpStream>;

    async fn connect(&self, host: &str, port: u16) -> Result<Self::Conn> {
        let s = match self.at {
            Some(a) => tokio::net::TcpStream::connect(a).await,
            None => tokio::net::TcpStream::connect((host, port)).await,
        }
        .map_err(NetError::io(format!(
            "connecting to the server {host}:{port}"
        )))?;
        let _ = s.set_nodelay(true);
        Ok(s.compat())
    }
}

/// The verifier's TCP to the server a prover names: resolved (or pinned
/// by [`webproof_session::VerifierConfig::resolve`]) and checked against
/// [`webproof_session::VerifierConfig::server_policy`] before and after
/// connecting ([`crate::policy::connect_checked`]).
#[derive(Clone, Debug)]
pub struct PolicyConnector {
    policy: crate::policy::ServerPolicy,
    resolve: std::collections::HashMap<String, std::net::IpAddr>,
}

impl PolicyConnector {
    /// The connector of a verifier's settings.
    pub fn of(cfg: &webproof_session::VerifierConfig) -> Self {
        PolicyConnector {
            policy: cfg.server_policy.clone(),
            resolve: cfg.resolve.clone(),
        }
    }
}

impl webproof_session::Connector for PolicyConnector {
    type Conn = Compat<tokio::net::TcpStream>;

    async fn connect(&self, host: &str, port: u16) -> Result<Self::Conn> {
        let s = crate::policy::connect_checked(&self.policy, &self.resolve, host, port).await?;
        Ok(s.compat())
    }
}

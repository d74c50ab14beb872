//! The running service: listeners, sessions, limits and shutdown.
//!
//! Every connection that reaches a listener becomes a session task that
//! runs `webproof_net::verifier::handle_prover_io` under the service's
//! limits:
//!
//! - a semaphore caps concurrent sessions; over the cap the prover is told
//!   `verifier at capacity` and the running sessions carry on;
//! - a per-session deadline bounds the whole session (the verifier's own
//!   connect/relay/idle/proof timeouts bound each phase);
//! - when a session ends, however it ends, its prover link is cut (reads
//!   and writes on it fail), so no task the session spawned outlives it,
//!   and the active-sessions gauge comes back down.
//!
//! Shutdown ([`Service::run`]'s future resolving): the listeners close, the
//! running sessions get the grace period to finish, then are dropped.

use crate::config::ServiceConfig;
use crate::error::{Result, ServiceError};
use crate::metrics::{Metrics, Outcome, Transport};
use crate::results::Store;
use crate::webhook::Outbox;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tokio_util::task::TaskTracker;
use tracing::instrument::WithSubscriber;
use tracing::Instrument;
use webproof_net::transport::Stream;
use webproof_net::verifier::{BeforeVerdict, SessionId, Verified};
use webproof_net::VerifierConfig;

/// Where the service listens (the ports actually bound).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Addrs {
    /// Plain TCP.
    pub tcp: Option<SocketAddr>,
    /// TLS.
    pub tls: Option<SocketAddr>,
    /// HTTP: `/health`, `/metrics`, WebSocket `/v1/session`.
    pub http: Option<SocketAddr>,
    /// The same over TLS.
    pub https: Option<SocketAddr>,
}

/// What a shutdown did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Sessions running when the shutdown began.
    pub running_at_signal: u64,
    /// Sessions still running at the end of the grace period, then dropped.
    pub dropped: u64,
}

/// State shared by the accept loops and the sessions.
pub(crate) struct Shared {
    pub(crate) verifier: VerifierConfig,
    pub(crate) metrics: Arc<Metrics>,
    slots: Arc<Semaphore>,
    /// Bounds the short-lived tasks that tell provers they are refused.
    refusals: Arc<Semaphore>,
    pub(crate) max_sessions: usize,
    session_timeout: Duration,
    pub(crate) tracker: TaskTracker,
    /// Set at a shutdown signal: `/ready` fails (the listeners still
    /// accept for the drain delay).
    pub(crate) draining: CancellationToken,
    /// Set at shutdown: no new connections or sessions.
    pub(crate) stopping: CancellationToken,
    /// Set at the end of the grace period: running sessions are dropped.
    abort: CancellationToken,
    next_id: AtomicU64,
    /// Stored results and webhooks, if configured.
    pub(crate) results: Option<Results>,
    /// `/v1/info`'s document, from the configuration.
    pub(crate) info: serde_json::Value,
}

/// The results database and who reads and hears of it.
pub(crate) struct Results {
    pub(crate) store: Arc<Store>,
    /// Why the database is unusable now, if it is (`/ready` fails and new
    /// sessions are refused until it answers again).
    pub(crate) down: std::sync::Mutex<Option<String>>,
    pub(crate) api_key_digests: Vec<[u8; 32]>,
    retention: Duration,
    outbox: Option<Arc<Outbox>>,
}

/// A bound, not yet running service.
pub struct Service {
    shared: Arc<Shared>,
    tcp: Option<TcpListener>,
    tls: Option<(TcpListener, tokio_rustls::TlsAcceptor)>,
    http: Option<TcpListener>,
    https: Option<(TcpListener, tokio_rustls::TlsAcceptor)>,
    addrs: Addrs,
    shutdown_grace: Duration,
    drain_delay: Duration,
}

async fn bind(what: &'static str, addr: &str) -> Result<(TcpListener, SocketAddr)> {
    let err = |source| ServiceError::Bind {
        what,
        addr: addr.to_string(),
        source,
    };
    let l = TcpListener::bind(addr).await.map_err(err)?;
    let a = l.local_addr().map_err(err)?;
    Ok((l, a))
}

impl Service {
    /// Bind every configured listener, and build what every MPC session
    /// shares (the key derivation's plans, about 0.1 s): a bound service is
    /// ready, so no session waits for them.
    pub async fn bind(cfg: ServiceConfig) -> Result<Service> {
        let mut addrs = Addrs::default();
        let tcp = match &cfg.listen {
            Some(a) => {
                let (l, a) = bind("the TCP listener", a).await?;
                addrs.tcp = Some(a);
                Some(l)
            }
            None => None,
        };
        let acceptor = || {
            cfg.tls
                .clone()
                .map(tokio_rustls::TlsAcceptor::from)
                .ok_or_else(|| ServiceError::invalid("listen_tls", "no certificate"))
        };
        let tls = match &cfg.listen_tls {
            Some(a) => {
                let (l, a) = bind("the TLS listener", a).await?;
                addrs.tls = Some(a);
                Some((l, acceptor()?))
            }
            None => None,
        };
        let https = match &cfg.listen_https {
            Some(a) => {
                let (l, a) = bind("the HTTPS listener", a).await?;
                addrs.https = Some(a);
                Some((l, acceptor()?))
            }
            None => None,
        };
        let http = match &cfg.listen_http {
            Some(a) => {
                let (l, a) = bind("the HTTP listener", a).await?;
                addrs.http = Some(a);
                Some(l)
            }
            None => None,
        };
        if addrs == Addrs::default() {
            return Err(ServiceError::NoListener);
        }
        if let Some(k) = &cfg.attestation_key {
            tracing::info!(key_id = %k.key_id(), "attestation signing key loaded");
        }
        let results = match &cfg.results {
            Some(r) => {
                let store = Store::open(&r.backend)
                    .await
                    .map_err(|e| ServiceError::invalid("results", format!("{}: {e}", r.backend)))?;
                tracing::info!(database = %r.backend, webhooks = r.webhooks.len(), "results database open");
                Some((Arc::new(store), r))
            }
            None => None,
        };
        if let Err(e) = tokio::task::spawn_blocking(webproof_net::mpc::warm_plans).await {
            // Sessions then build the plans on first use.
            tracing::warn!(error = %e, "building the MPC plans ahead failed");
        }
        let metrics = Metrics::new();
        let info = crate::http::info(&cfg);
        let results = results.map(|(store, r)| Results {
            outbox: (!r.webhooks.is_empty())
                .then(|| Arc::new(Outbox::new(store.clone(), metrics.clone(), &r.webhooks))),
            store,
            down: std::sync::Mutex::new(None),
            api_key_digests: r.api_key_digests.clone(),
            retention: r.retention,
        });
        let shared = Arc::new(Shared {
            verifier: cfg.verifier,
            metrics,
            slots: Arc::new(Semaphore::new(cfg.max_sessions)),
            refusals: Arc::new(Semaphore::new(cfg.max_sessions.saturating_mul(2).max(64))),
            max_sessions: cfg.max_sessions,
            session_timeout: cfg.session_timeout,
            tracker: TaskTracker::new(),
            draining: CancellationToken::new(),
            stopping: CancellationToken::new(),
            abort: CancellationToken::new(),
            next_id: AtomicU64::new(1),
            results,
            info,
        });
        Ok(Service {
            shared,
            tcp,
            tls,
            http,
            https,
            addrs,
            shutdown_grace: cfg.shutdown_grace,
            drain_delay: cfg.drain_delay,
        })
    }

    /// The bound addresses.
    pub fn addrs(&self) -> Addrs {
        self.addrs
    }

    /// The service's metrics (live).
    pub fn metrics(&self) -> Arc<Metrics> {
        self.shared.metrics.clone()
    }

    /// Serve until `shutdown` resolves, then stop accepting, give running
    /// sessions the grace period, drop what is left, and return.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> ShutdownReport {
        let sh = self.shared;
        let mut loops = Vec::new();
        if let Some(l) = self.tcp {
            loops.push(spawn(accept_loop(sh.clone(), l, Listener::Tcp)));
        }
        if let Some((l, acceptor)) = self.tls {
            loops.push(spawn(accept_loop(sh.clone(), l, Listener::Tls(acceptor))));
        }
        if let Some(l) = self.http {
            loops.push(spawn(accept_loop(sh.clone(), l, Listener::Http)));
        }
        if let Some((l, acceptor)) = self.https {
            loops.push(spawn(accept_loop(sh.clone(), l, Listener::Https(acceptor))));
        }
        // Deliveries and pruning run until the sessions are over, so the
        // last sessions' results are stored; pending rows outlive a stop.
        let background = CancellationToken::new();
        let mut chores = Vec::new();
        if let Some(r) = &sh.results {
            if let Some(o) = &r.outbox {
                chores.push(spawn(o.clone().run(background.clone())));
            }
            chores.push(spawn(prune_loop(
                r.store.clone(),
                r.retention,
                background.clone(),
            )));
            chores.push(spawn(health_loop(sh.clone(), background.clone())));
        }
        let show = |a: Option<SocketAddr>| a.map_or_else(|| "-".to_string(), |a| a.to_string());
        tracing::info!(
            tcp = %show(self.addrs.tcp),
            tls = %show(self.addrs.tls),
            http = %show(self.addrs.http),
            https = %show(self.addrs.https),
            max_sessions = sh.max_sessions,
            "verifier service listening"
        );
        shutdown.await;
        // Readiness fails first; sessions are still accepted until the
        // load balancer has seen it, then the listeners close.
        sh.draining.cancel();
        if !self.drain_delay.is_zero() {
            tracing::info!(
                drain_ms = self.drain_delay.as_millis() as u64,
                "draining: /ready fails, still accepting until the listeners close"
            );
            tokio::time::sleep(self.drain_delay).await;
        }
        sh.stopping.cancel();
        for l in loops {
            let _ = l.await;
        }
        let running = sh.metrics.active();
        tracing::info!(
            running,
            grace_ms = self.shutdown_grace.as_millis() as u64,
            "shutting down: listeners closed, waiting for running sessions"
        );
        sh.tracker.close();
        let mut dropped = 0;
        if tokio::time::timeout(self.shutdown_grace, sh.tracker.wait())
            .await
            .is_err()
        {
            dropped = sh.metrics.active();
            tracing::warn!(dropped, "grace period over: dropping running sessions");
            sh.abort.cancel();
            sh.tracker.wait().await;
        }
        background.cancel();
        for c in chores {
            let _ = c.await;
        }
        tracing::info!("verifier service stopped");
        ShutdownReport {
            running_at_signal: running,
            dropped,
        }
    }
}

/// Spawn with the caller's log dispatcher and span.
fn spawn<F>(f: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(f.in_current_span().with_current_subscriber())
}

pub(crate) fn spawn_session<F>(sh: &Shared, f: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    sh.tracker
        .spawn(f.in_current_span().with_current_subscriber());
}

enum Listener {
    Tcp,
    Tls(tokio_rustls::TlsAcceptor),
    Http,
    Https(tokio_rustls::TlsAcceptor),
}

async fn accept_loop(sh: Arc<Shared>, listener: TcpListener, kind: Listener) {
    loop {
        let (tcp, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // Typically out of file descriptors: wait rather than spin.
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = sh.stopping.cancelled() => return,
        };
        webproof_net::transport::tune_link(&tcp);
        match &kind {
            Listener::Tcp => spawn_session(&sh, session(sh.clone(), tcp, peer, Transport::Tcp)),
            Listener::Tls(acceptor) => {
                let (sh2, acceptor) = (sh.clone(), acceptor.clone());
                spawn_session(&sh, async move {
                    let hs =
                        tokio::time::timeout(sh2.verifier.connect_timeout, acceptor.accept(tcp));
                    match hs.await {
                        Ok(Ok(tls)) => session(sh2, tls, peer, Transport::Tls).await,
                        Ok(Err(e)) => {
                            sh2.metrics.transport_error(Transport::Tls);
                            tracing::debug!(%peer, "TLS handshake failed: {e}");
                        }
                        Err(_) => {
                            sh2.metrics.transport_error(Transport::Tls);
                            tracing::debug!(%peer, "TLS handshake timed out");
                        }
                    }
                })
            }
            Listener::Http => {
                spawn(crate::http::connection(
                    sh.clone(),
                    tcp,
                    peer,
                    Transport::Ws,
                ));
            }
            Listener::Https(acceptor) => {
                let (sh2, acceptor) = (sh.clone(), acceptor.clone());
                spawn(async move {
                    let hs =
                        tokio::time::timeout(sh2.verifier.connect_timeout, acceptor.accept(tcp));
                    match hs.await {
                        Ok(Ok(tls)) => {
                            crate::http::connection(sh2, tls, peer, Transport::Wss).await
                        }
                        _ => {
                            sh2.metrics.transport_error(Transport::Wss);
                            tracing::debug!(%peer, "TLS handshake on the HTTPS listener failed");
                        }
                    }
                });
            }
        }
    }
}

/// Run one session on an accepted prover link.
pub(crate) async fn session<S: Stream>(
    sh: Arc<Shared>,
    stream: S,
    peer: SocketAddr,
    transport: Transport,
) {
    let id = sh.next_id.fetch_add(1, Ordering::Relaxed);
    let span = tracing::info_span!("session", id, %peer, transport = transport.label());
    async move {
        if sh.stopping.is_cancelled() {
            return refuse(&sh, stream, transport, "shutdown", "verifier shutting down; try another verifier or later".into()).await;
        }
        if let Some(why) = sh.results.as_ref().and_then(|r| r.down()) {
            let msg = format!(
                "verifier's results database is unavailable ({why}); try another verifier or later"
            );
            return refuse(&sh, stream, transport, "results_database", msg).await;
        }
        let Ok(_slot) = sh.slots.clone().try_acquire_owned() else {
            let msg = format!(
                "verifier at capacity ({} sessions at once); try again later",
                sh.max_sessions
            );
            return refuse(&sh, stream, transport, "capacity", msg).await;
        };
        let _active = sh.metrics.session_started();
        // Cut the link when this session ends, however it ends.
        let end = sh.abort.child_token();
        let _cut = end.clone().drop_guard();
        let io = SessionIo::new(stream, sh.metrics.clone(), end.clone());
        let counts = io.counts.clone();
        let start = Instant::now();
        // Drawn at admission: the verdict names the session by it, and the
        // stored result and webhooks carry it.
        let session_id = SessionId::random(&mut rand::rngs::OsRng);
        tracing::debug!(%session_id, "session started");
        // Stored before the verdict goes out: the id the prover hands its
        // application already names a stored result.
        // If it cannot be stored, the prover link is cut instead: no
        // verdict names a result that is not there.
        let store: Option<BeforeVerdict<'_>> = sh.results.as_ref().map(|r| {
            let metrics = sh.metrics.clone();
            let cut = end.clone();
            Box::new(move |v: Verified| {
                Box::pin(async move {
                    if !store_result(&metrics, r, v).await {
                        cut.cancel();
                    }
                })
                    as std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>>
            }) as BeforeVerdict<'_>
        });
        let result = tokio::select! {
            // Dropped at shutdown: that, not the I/O error it causes, is the reason.
            biased;
            _ = sh.abort.cancelled() => {
                let d = start.elapsed();
                sh.metrics.session_ended(transport, Outcome::Failed, Some("shutdown"), Some(d));
                tracing::warn!(duration_ms = d.as_millis() as u64, "session dropped at shutdown");
                return;
            }
            r = tokio::time::timeout(sh.session_timeout, webproof_net::verifier::verify_session(io, &sh.verifier, session_id, store)) => r.ok(),
        };
        let d = start.elapsed();
        let (rx, tx) = (counts.0.load(Ordering::Relaxed), counts.1.load(Ordering::Relaxed));
        let ms = d.as_millis() as u64;
        match result {
            Some(Ok(verified)) => {
                sh.metrics.session_ended(transport, Outcome::Verified, None, Some(d));
                let out = &verified.output;
                tracing::info!(
                    %session_id,
                    mode = verified.mode.name(),
                    server = %out.server_name,
                    suite = %out.cipher_suite,
                    sent = out.sent.len,
                    received = out.received.len,
                    duration_ms = ms,
                    prover_bytes_in = rx,
                    prover_bytes_out = tx,
                    "session verified"
                );
            }
            Some(Err(e)) => {
                sh.metrics.session_ended(transport, Outcome::Failed, Some(e.kind()), Some(d));
                tracing::warn!(%session_id, reason = e.kind(), duration_ms = ms, prover_bytes_in = rx, prover_bytes_out = tx, "session failed: {e}");
            }
            None => {
                sh.metrics.session_ended(transport, Outcome::Failed, Some("session_timeout"), Some(d));
                tracing::warn!(
                    reason = "session_timeout",
                    duration_ms = ms,
                    "session longer than {} ms: dropped",
                    sh.session_timeout.as_millis()
                );
            }
        }
    }
    .instrument(span)
    .await
}

/// How long a verified session keeps trying to store its result before
/// its prover link is cut (the database may be restarting).
const STORE_PATIENCE: Duration = Duration::from_secs(30);

impl Results {
    /// Why the database is unusable, if it is.
    pub(crate) fn down(&self) -> Option<String> {
        self.down.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_down(&self, why: Option<String>) {
        let mut d = self.down.lock().unwrap_or_else(|e| e.into_inner());
        match (&*d, &why) {
            (None, Some(w)) => tracing::error!("results database unavailable: {w}"),
            (Some(_), None) => tracing::info!("results database available again"),
            _ => {}
        }
        *d = why;
    }
}

/// Store a verified session and queue its webhooks (one transaction), then
/// wake the deliveries; whether it is stored. Runs before the verdict is
/// sent; a failure is retried for [`STORE_PATIENCE`] (a database restart),
/// then logged and counted, and the caller cuts the prover link so no
/// verdict goes out for a result that is not stored.
async fn store_result(metrics: &Metrics, r: &Results, verified: Verified) -> bool {
    let endpoints = r
        .outbox
        .as_ref()
        .map(|o| o.endpoint_urls())
        .unwrap_or_default();
    let id = verified.session_id;
    let at = crate::results::now_ms();
    let give_up = Instant::now() + STORE_PATIENCE;
    let mut wait = Duration::from_millis(100);
    loop {
        match r.store.insert(&verified, at, &endpoints).await {
            Ok(deliveries) => {
                tracing::debug!(session_id = %id, deliveries = deliveries.len(), "result stored");
                if let Some(o) = &r.outbox {
                    o.wake();
                }
                return true;
            }
            // A unique-key clash means an earlier try did commit (its
            // answer was lost): the result is stored.
            Err(e)
                if e.to_string().contains("duplicate key")
                    || e.to_string().contains("UNIQUE constraint") =>
            {
                tracing::debug!(session_id = %id, "result stored (by an earlier try)");
                if let Some(o) = &r.outbox {
                    o.wake();
                }
                return true;
            }
            Err(e) if Instant::now() + wait < give_up => {
                tracing::warn!(session_id = %id, "storing the verified session, retrying: {e}");
                r.set_down(Some(e.to_string()));
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            Err(e) => {
                metrics.store_error();
                r.set_down(Some(e.to_string()));
                tracing::error!(
                    session_id = %id,
                    "the verified session could not be stored, no verdict sent: {e}"
                );
                return false;
            }
        }
    }
}

/// Check the database every second; `/ready` and admissions follow.
async fn health_loop(sh: Arc<Shared>, stop: CancellationToken) {
    let Some(r) = &sh.results else { return };
    loop {
        let why = tokio::time::timeout(Duration::from_secs(3), r.store.ping())
            .await
            .map_err(|_| "no answer within 3 s".to_string())
            .and_then(|x| x.map_err(|e| e.to_string()))
            .err();
        r.set_down(why);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

/// Delete results older than the retention, every tenth of it (at most
/// hourly), until `stop`.
async fn prune_loop(store: Arc<Store>, retention: Duration, stop: CancellationToken) {
    let every = (retention / 10).clamp(Duration::from_secs(1), Duration::from_secs(3600));
    loop {
        let cutoff = crate::results::now_ms() - retention.as_millis() as i64;
        match store.prune(cutoff).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "results past their retention deleted"),
            Err(e) => tracing::warn!("pruning results: {e}"),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// Tell a prover its session is refused, without letting refusals pile up.
async fn refuse<S: Stream>(
    sh: &Shared,
    mut s: S,
    transport: Transport,
    reason: &'static str,
    message: String,
) {
    sh.metrics
        .session_ended(transport, Outcome::Refused, Some(reason), None);
    tracing::info!(reason, "session refused");
    let Ok(_permit) = sh.refusals.clone().try_acquire_owned() else {
        // Flooded: just close.
        return;
    };
    let wait = Duration::from_secs(2).min(sh.verifier.connect_timeout);
    // Read the hello first: closing a socket with unread input resets the
    // connection, and the prover could lose the refusal.
    let _ = tokio::time::timeout(
        wait,
        webproof_net::frame::read_frame(&mut s, sh.verifier.max_message),
    )
    .await;
    let _ = tokio::time::timeout(
        wait,
        webproof_net::verifier::refuse_session(
            &mut s,
            webproof_net::Rejection::new(webproof_net::RejectKind::Unavailable, message),
        ),
    )
    .await;
    let _ = tokio::time::timeout(wait, s.shutdown()).await;
    let _ = tokio::time::timeout(wait, async {
        let mut b = [0u8; 4096];
        while matches!(s.read(&mut b).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// The prover link as a session sees it: counts bytes into the metrics and
/// fails every read and write once the session is over, so that tasks the
/// session spawned on it (the relay's reader) end with it.
struct SessionIo<S> {
    inner: S,
    metrics: Arc<Metrics>,
    /// Bytes (received, sent) in this session.
    counts: Arc<(AtomicU64, AtomicU64)>,
    ended: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<S> SessionIo<S> {
    fn new(inner: S, metrics: Arc<Metrics>, end: CancellationToken) -> Self {
        SessionIo {
            inner,
            metrics,
            counts: Arc::default(),
            ended: Box::pin(end.cancelled_owned()),
        }
    }

    fn check_ended(&mut self, cx: &mut Context<'_>) -> std::io::Result<()> {
        match self.ended.as_mut().poll(cx) {
            Poll::Ready(()) => Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "the session is over",
            )),
            Poll::Pending => Ok(()),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for SessionIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.check_ended(cx)?;
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        if n > 0 {
            self.counts.0.fetch_add(n, Ordering::Relaxed);
            self.metrics.add_received(n);
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for SessionIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.check_ended(cx)?;
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            self.counts.1.fetch_add(*n as u64, Ordering::Relaxed);
            self.metrics.add_sent(*n as u64);
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.check_ended(cx)?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_link_fails_once_the_session_is_over() {
        let (a, mut b) = tokio::io::duplex(1024);
        let token = CancellationToken::new();
        let m = Metrics::new();
        let mut io = SessionIo::new(a, m.clone(), token.clone());
        b.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        io.read_exact(&mut buf).await.unwrap();
        io.write_all(b"abc").await.unwrap();
        assert_eq!(m.bytes(), (5, 3));
        // A read blocked on a silent peer ends when the session does.
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 1];
            io.read(&mut buf).await
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
        let e = reader.await.unwrap().unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionAborted);
    }
}

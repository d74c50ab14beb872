//! Service metrics and their Prometheus text exposition (format 0.0.4).
//!
//! A handful of counters, one gauge and one histogram: small enough that a
//! hand-written exporter is clearer than a metrics framework. Names:
//!
//! - `webproof_sessions_active` (gauge): sessions running now;
//! - `webproof_sessions_total{transport,outcome}`: finished sessions, with
//!   `outcome` one of `verified`, `failed`, `refused`;
//! - `webproof_session_failures_total{reason}`: why sessions failed or were
//!   refused: `webproof_net::NetError::kind` labels (`timeout`,
//!   `disconnected`, `unauthorized`, `forbidden`, `rejected`...) and the
//!   service's own `capacity`, `shutdown`, `results_database`, `session_timeout`;
//! - `webproof_transport_errors_total{transport}`: connections that never
//!   became a session (TLS or WebSocket handshake failed);
//! - `webproof_prover_bytes_received_total`, `webproof_prover_bytes_sent_total`:
//!   bytes on the prover links;
//! - `webproof_session_duration_seconds` (histogram): sessions that ran;
//! - `webproof_results_store_errors_total`: verified sessions the results
//!   database failed to store;
//! - `webproof_webhook_deliveries_total{result}`: webhook attempts, with
//!   `result` one of `delivered` (2xx), `retry` (failed, tried again
//!   later), `failed` (failed, retries exhausted);
//! - `webproof_webhook_pending`, `webproof_webhook_failed` (gauges): outbox
//!   rows waiting for delivery, and given up on (they stay in the outbox);
//! - `webproof_webhook_delivery_latency_seconds` (histogram): from the
//!   verdict to the 2xx answer, retries included.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Upper bounds (seconds) of the duration histogram's buckets.
pub const DURATION_BUCKETS: [f64; 12] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// How a prover reached the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    /// Plain TCP.
    Tcp,
    /// TLS over TCP.
    Tls,
    /// WebSocket on the HTTP listener.
    Ws,
    /// WebSocket on the HTTPS listener.
    Wss,
}

impl Transport {
    /// Metric label.
    pub fn label(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Tls => "tls",
            Transport::Ws => "ws",
            Transport::Wss => "wss",
        }
    }
}

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// The proof was verified.
    Verified,
    /// The session ran and failed.
    Failed,
    /// The session was refused before it started (capacity, shutdown, results
    /// database unavailable).
    Refused,
}

impl Outcome {
    /// Metric label.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Verified => "verified",
            Outcome::Failed => "failed",
            Outcome::Refused => "refused",
        }
    }
}

#[derive(Default)]
struct Histogram {
    counts: [u64; DURATION_BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, d: Duration) {
        let s = d.as_secs_f64();
        for (i, b) in DURATION_BUCKETS.iter().enumerate() {
            if s <= *b {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += s;
    }

    fn render(&self, out: &mut String, name: &str) {
        for (b, n) in DURATION_BUCKETS.iter().zip(self.counts.iter()) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {n}");
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

/// The service's metrics; shared by every session.
#[derive(Default)]
pub struct Metrics {
    active: AtomicU64,
    bytes_received: AtomicU64,
    bytes_sent: AtomicU64,
    sessions: Mutex<BTreeMap<(Transport, Outcome), u64>>,
    failures: Mutex<BTreeMap<&'static str, u64>>,
    transport_errors: Mutex<BTreeMap<Transport, u64>>,
    duration: Mutex<Histogram>,
    store_errors: AtomicU64,
    webhook_deliveries: Mutex<BTreeMap<&'static str, u64>>,
    webhook_pending: AtomicU64,
    webhook_failed: AtomicU64,
    webhook_latency: Mutex<Histogram>,
}

/// Holds one unit of the active-sessions gauge; gives it back when dropped,
/// however the session ends (finished, timed out, cancelled, panicked).
pub struct ActiveGuard(Arc<Metrics>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere must not take the metrics down with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Metrics {
    /// New, all zero.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A session starts: the gauge goes up until the guard is dropped.
    pub fn session_started(self: &Arc<Self>) -> ActiveGuard {
        self.active.fetch_add(1, Ordering::Relaxed);
        ActiveGuard(self.clone())
    }

    /// Sessions running now.
    pub fn active(&self) -> u64 {
        self.active.load(Ordering::Relaxed)
    }

    /// Bytes read from provers.
    pub fn add_received(&self, n: u64) {
        self.bytes_received.fetch_add(n, Ordering::Relaxed);
    }

    /// Bytes written to provers.
    pub fn add_sent(&self, n: u64) {
        self.bytes_sent.fetch_add(n, Ordering::Relaxed);
    }

    /// A session ended; `reason` for failures and refusals; `duration` for
    /// sessions that ran.
    pub fn session_ended(
        &self,
        transport: Transport,
        outcome: Outcome,
        reason: Option<&'static str>,
        duration: Option<Duration>,
    ) {
        *lock(&self.sessions)
            .entry((transport, outcome))
            .or_default() += 1;
        if let Some(r) = reason {
            *lock(&self.failures).entry(r).or_default() += 1;
        }
        if let Some(d) = duration {
            lock(&self.duration).observe(d);
        }
    }

    /// A verified session could not be stored.
    pub fn store_error(&self) {
        self.store_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// A webhook attempt ended: `delivered`, `retry` or `failed`; the
    /// latency from the verdict for deliveries.
    pub fn webhook_attempt(&self, result: &'static str, latency: Option<Duration>) {
        *lock(&self.webhook_deliveries).entry(result).or_default() += 1;
        if let Some(d) = latency {
            lock(&self.webhook_latency).observe(d);
        }
    }

    /// The outbox's pending and failed rows, as the database counts them.
    pub fn set_webhook_outbox(&self, pending: u64, failed: u64) {
        self.webhook_pending.store(pending, Ordering::Relaxed);
        self.webhook_failed.store(failed, Ordering::Relaxed);
    }

    /// Webhook attempts with this result.
    pub fn webhook_deliveries(&self, result: &str) -> u64 {
        lock(&self.webhook_deliveries)
            .get(result)
            .copied()
            .unwrap_or(0)
    }

    /// (pending, failed) outbox rows at the last count.
    pub fn webhook_outbox(&self) -> (u64, u64) {
        (
            self.webhook_pending.load(Ordering::Relaxed),
            self.webhook_failed.load(Ordering::Relaxed),
        )
    }

    /// A connection failed before it became a session.
    pub fn transport_error(&self, transport: Transport) {
        *lock(&self.transport_errors).entry(transport).or_default() += 1;
    }

    /// Finished sessions with this outcome, over all transports.
    pub fn sessions(&self, outcome: Outcome) -> u64 {
        lock(&self.sessions)
            .iter()
            .filter(|((_, o), _)| *o == outcome)
            .map(|(_, n)| n)
            .sum()
    }

    /// Failures and refusals with this reason.
    pub fn failures(&self, reason: &str) -> u64 {
        lock(&self.failures).get(reason).copied().unwrap_or(0)
    }

    /// Bytes (received from, sent to) provers.
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.bytes_received.load(Ordering::Relaxed),
            self.bytes_sent.load(Ordering::Relaxed),
        )
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let head = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        head(
            &mut out,
            "webproof_sessions_active",
            "gauge",
            "Sessions running now.",
        );
        let _ = writeln!(out, "webproof_sessions_active {}", self.active());
        head(
            &mut out,
            "webproof_sessions_total",
            "counter",
            "Finished sessions by transport and outcome.",
        );
        for ((t, oc), n) in lock(&self.sessions).iter() {
            let _ = writeln!(
                out,
                "webproof_sessions_total{{transport=\"{}\",outcome=\"{}\"}} {n}",
                t.label(),
                oc.label()
            );
        }
        head(
            &mut out,
            "webproof_session_failures_total",
            "counter",
            "Failed or refused sessions by reason.",
        );
        for (r, n) in lock(&self.failures).iter() {
            let _ = writeln!(out, "webproof_session_failures_total{{reason=\"{r}\"}} {n}");
        }
        head(
            &mut out,
            "webproof_transport_errors_total",
            "counter",
            "Connections that failed before becoming a session.",
        );
        for (t, n) in lock(&self.transport_errors).iter() {
            let _ = writeln!(
                out,
                "webproof_transport_errors_total{{transport=\"{}\"}} {n}",
                t.label()
            );
        }
        let (rx, tx) = self.bytes();
        head(
            &mut out,
            "webproof_prover_bytes_received_total",
            "counter",
            "Bytes received from provers.",
        );
        let _ = writeln!(out, "webproof_prover_bytes_received_total {rx}");
        head(
            &mut out,
            "webproof_prover_bytes_sent_total",
            "counter",
            "Bytes sent to provers.",
        );
        let _ = writeln!(out, "webproof_prover_bytes_sent_total {tx}");
        head(
            &mut out,
            "webproof_session_duration_seconds",
            "histogram",
            "Duration of sessions that ran.",
        );
        lock(&self.duration).render(&mut out, "webproof_session_duration_seconds");
        head(
            &mut out,
            "webproof_results_store_errors_total",
            "counter",
            "Verified sessions the results database failed to store.",
        );
        let _ = writeln!(
            out,
            "webproof_results_store_errors_total {}",
            self.store_errors.load(Ordering::Relaxed)
        );
        head(
            &mut out,
            "webproof_webhook_deliveries_total",
            "counter",
            "Webhook delivery attempts by result.",
        );
        for (r, n) in lock(&self.webhook_deliveries).iter() {
            let _ = writeln!(
                out,
                "webproof_webhook_deliveries_total{{result=\"{r}\"}} {n}"
            );
        }
        let (pending, failed) = self.webhook_outbox();
        head(
            &mut out,
            "webproof_webhook_pending",
            "gauge",
            "Webhook deliveries waiting in the outbox.",
        );
        let _ = writeln!(out, "webproof_webhook_pending {pending}");
        head(
            &mut out,
            "webproof_webhook_failed",
            "gauge",
            "Webhook deliveries that exhausted their retries (kept in the outbox).",
        );
        let _ = writeln!(out, "webproof_webhook_failed {failed}");
        head(
            &mut out,
            "webproof_webhook_delivery_latency_seconds",
            "histogram",
            "From the verdict to the webhook's 2xx answer, retries included.",
        );
        lock(&self.webhook_latency).render(&mut out, "webproof_webhook_delivery_latency_seconds");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse the exposition back: every sample line is `name{labels} value`
    /// with a finite value, every family has HELP and TYPE.
    fn samples(text: &str) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        let mut typed = std::collections::BTreeSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                typed.insert(rest.split(' ').next().unwrap().to_string());
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let (k, v) = line.rsplit_once(' ').expect("sample line");
            let v: f64 = v.parse().expect("numeric value");
            assert!(v.is_finite());
            let name = k.split('{').next().unwrap();
            let family = name
                .trim_end_matches("_bucket")
                .trim_end_matches("_sum")
                .trim_end_matches("_count");
            assert!(typed.contains(family), "{name} has no TYPE line");
            out.insert(k.to_string(), v);
        }
        out
    }

    #[test]
    fn exposition_reflects_what_happened() {
        let m = Metrics::new();
        let g1 = m.session_started();
        let g2 = m.session_started();
        assert_eq!(m.active(), 2);
        m.add_received(100);
        m.add_sent(40);
        m.session_ended(
            Transport::Tcp,
            Outcome::Verified,
            None,
            Some(Duration::from_millis(300)),
        );
        drop(g1);
        m.session_ended(
            Transport::Ws,
            Outcome::Failed,
            Some("timeout"),
            Some(Duration::from_secs(7)),
        );
        m.session_ended(Transport::Tcp, Outcome::Refused, Some("capacity"), None);
        m.transport_error(Transport::Tls);
        let s = samples(&m.render());
        assert_eq!(s["webproof_sessions_active"], 1.0);
        drop(g2);
        assert_eq!(m.active(), 0);
        assert_eq!(
            s["webproof_sessions_total{transport=\"tcp\",outcome=\"verified\"}"],
            1.0
        );
        assert_eq!(
            s["webproof_sessions_total{transport=\"ws\",outcome=\"failed\"}"],
            1.0
        );
        assert_eq!(
            s["webproof_session_failures_total{reason=\"capacity\"}"],
            1.0
        );
        assert_eq!(s["webproof_transport_errors_total{transport=\"tls\"}"], 1.0);
        assert_eq!(s["webproof_prover_bytes_received_total"], 100.0);
        assert_eq!(s["webproof_prover_bytes_sent_total"], 40.0);
        // Cumulative buckets: 0.3 s falls in le=0.5 and above; 7 s in le=10 and above.
        assert_eq!(
            s["webproof_session_duration_seconds_bucket{le=\"0.25\"}"],
            0.0
        );
        assert_eq!(
            s["webproof_session_duration_seconds_bucket{le=\"0.5\"}"],
            1.0
        );
        assert_eq!(s["webproof_session_duration_seconds_bucket{le=\"5\"}"], 1.0);
        assert_eq!(
            s["webproof_session_duration_seconds_bucket{le=\"10\"}"],
            2.0
        );
        assert_eq!(
            s["webproof_session_duration_seconds_bucket{le=\"+Inf\"}"],
            2.0
        );
        assert_eq!(s["webproof_session_duration_seconds_count"], 2.0);
        assert!((s["webproof_session_duration_seconds_sum"] - 7.3).abs() < 1e-9);
        assert_eq!(m.sessions(Outcome::Failed), 1);
        assert_eq!(m.failures("timeout"), 1);

        m.webhook_attempt("retry", None);
        m.webhook_attempt("delivered", Some(Duration::from_millis(700)));
        m.set_webhook_outbox(3, 1);
        let s = samples(&m.render());
        assert_eq!(
            s["webproof_webhook_deliveries_total{result=\"retry\"}"],
            1.0
        );
        assert_eq!(
            s["webproof_webhook_deliveries_total{result=\"delivered\"}"],
            1.0
        );
        assert_eq!(s["webproof_webhook_pending"], 3.0);
        assert_eq!(s["webproof_webhook_failed"], 1.0);
        assert_eq!(
            s["webproof_webhook_delivery_latency_seconds_bucket{le=\"0.5\"}"],
            0.0
        );
        assert_eq!(
            s["webproof_webhook_delivery_latency_seconds_bucket{le=\"1\"}"],
            1.0
        );
        assert_eq!(s["webproof_webhook_delivery_latency_seconds_count"], 1.0);
    }
}

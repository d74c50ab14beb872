//! webproof's verifier service: `webproof serve` as a library.
//!
//! The verifier's run (`webproof_session::verifier`, both modes, on tokio
//! through `webproof_net::verifier`) runs one session over
//! any byte stream; this crate puts it on the network for many provers at
//! once and keeps it running:
//!
//! - [`config`]: `verifier.toml` (listeners, roots, resolve pins, server
//!   policy, limits, API keys, attestation key, results, webhooks, logs),
//!   checked field by field;
//! - [`server`]: the listeners (TCP, TLS with the service's own certificate,
//!   WebSocket on the HTTP listener), the concurrent-session cap, the
//!   per-session deadline and graceful shutdown; it draws each session's id
//!   and stores what was verified;
//! - [`http`]: `/health` (liveness), `/ready` (readiness: fails when draining or full), `/metrics`, the WebSocket endpoint `/v1/session`,
//!   stored results at `/v1/sessions/{id}` and `/v1/info`;
//! - [`results`]: verified sessions and the webhook outbox, in an SQLite
//!   file (one replica) or PostgreSQL (a fleet, the outbox leased between
//!   replicas), with their migrations and retention;
//! - [`webhook`]: signed, retried delivery of the outbox;
//! - [`metrics`]: counters, gauges and histograms, Prometheus text format;
//! - [`logging`]: text or JSON logs with a span per session.
//!
//! Nothing here judges a proof: that is `webproof-proxy`'s job. The service
//! only admits, bounds, observes, stops sessions, and keeps and announces
//! their verified outputs.

pub mod config;
pub mod error;
pub mod http;
pub mod logging;
pub mod metrics;
pub mod results;
pub mod server;
pub mod tls;
pub mod webhook;

pub use config::{FileConfig, LogFormat, ServiceConfig};
pub use error::{Result, ServiceError};
pub use metrics::{Metrics, Outcome, Transport};
pub use server::{Addrs, Service, ShutdownReport};

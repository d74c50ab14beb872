//! webproof over tokio: the sessions' runtime, the verifier's drivers,
//! `webproof relay`, and the test fixture.
//!
//! - [`fixture`]: an HTTPS server (rustls) with its own test CA written to
//!   disk, serving `/bytes?size=N`, `/json` and `/html`;
//! - [`provider`]: the prover's instrumented rustls `CryptoProvider`, which
//!   captures the (EC)DHE shared secret so the prover can compute the
//!   session secret the proof is about;
//! - [`prover`]: the prover's options and [`prove`], which runs
//!   `webproof_session`'s run for the mode on tokio ([`runtime`]);
//! - [`verifier`]: accepts provers, resolves and connects to the server
//!   they name (the address policy of [`policy`] on the address actually
//!   reached), relays and records within limits and timeouts, and drives
//!   the proof engine;
//! - [`mpc`]: MPC mode's verifier driver (`webproof_mpc_tls`) on the same
//!   link and service, and the prover's entry point;
//! - [`runtime`]: tokio as a `webproof_session` runtime (clock, tasks,
//!   the counted link with its sections pumped on tokio tasks, TCP to the
//!   server);
//! - [`relay`]: `webproof relay`, a WebSocket-to-TCP relay for provers in
//!   a web page;
//! - [`transport`]: TCP, TLS and WebSocket links to a verifier;
//! - [`frame`]: framing and byte counting on tokio streams.
//!
//! Every protocol decision (what to send, whether to admit, where to cut,
//! what to prove, whether to accept) is the sessions' (`webproof_session`,
//! `webproof_proxy::session`, `webproof_mpc_tls`); this crate owns the
//! sockets, the tasks, the clocks, the OS randomness and the timeouts, and
//! feeds the sessions what arrived.

pub mod fixture;
pub mod flagged;
pub mod frame;
pub mod mpc;
pub mod policy;
pub mod prover;
pub mod relay;
pub mod runtime;
/// The instrumented crypto provider (its own crate, shared with the browser prover).
pub use webproof_tls_provider as provider;
pub mod transport;
pub mod verifier;

pub use fixture::{Fixture, FixtureCerts};
pub use policy::{IpNet, ServerPolicy};
pub use prover::{prove, Mode, Progress, ProveOptions, ProveOutcome, ProveStats, Stage};
pub use verifier::{Verifier, VerifierConfig};
pub use webproof_proxy::protocol::{RejectKind, Rejection};

/// Errors of the drivers: the sessions' outward error
/// ([`webproof_session::Error`]), the same in every runtime.
pub use webproof_session::Error as NetError;
pub use webproof_session::{Outward, Result};

/// Run `f` with a timeout, naming the step in the error.
pub async fn timeout<T>(
    d: std::time::Duration,
    what: &str,
    f: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(d, f).await {
        Ok(r) => r,
        Err(_) => Err(NetError::Timeout(format!(
            "{what} (after {} ms)",
            d.as_millis()
        ))),
    }
}

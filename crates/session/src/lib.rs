//! webproof's sessions, written once for every runtime.
//!
//! A runtime (tokio in `webproof-net`, the browser's event loop in
//! `webproof-browser`, the tests' in-memory pair) gives a session clocks,
//! tasks and links through [`runtime`]; the session decides everything
//! else: which flight goes when, what is checked before it is used, how
//! long to wait, and who is to blame for a failure. Its errors are one
//! [`Error`] per cause, with the same `kind` and `decided_by` whichever
//! runtime ran it ([`Error::outward`]).
//!
//! - [`mpc`]: MPC mode's runs (the prover's today; the verifier's moves
//!   here next);
//! - [`frame`]: length-prefixed frames and control messages on any stream;
//! - [`prover`]: what a prover's run reports (phases, figures, outcome);
//! - [`error`]: the outward error.
//!
//! Proxy mode's prover run is still written in `webproof-net` and
//! `webproof-browser` over `webproof_proxy::session`; it moves here next
//! (`ARCHITECTURE.md`, known debts). No I/O of its own: builds for wasm32.

pub mod error;
pub mod frame;
pub mod mpc;
pub mod prover;
pub mod proxy;
pub mod runtime;

pub use error::{Error, Outward, Result};
pub use runtime::{Connector, Counters, Link, Runtime, Section};

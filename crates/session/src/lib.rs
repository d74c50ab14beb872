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
//! - [`verifier`]: the verifier's run up to admission, its settings and
//!   what a verified session established; [`proxy`] and [`mpc`]: each
//!   mode's prover and verifier runs after it;
//! - [`policy`]: which servers a verifier may contact;
//! - [`frame`]: length-prefixed frames and control messages on any stream;
//! - [`mux`]: two streams over the link for a while, pumped by two tasks
//!   on any runtime; [`pipe`]: the in-memory pipes under it;
//! - [`sim`]: a simulated runtime for tests (one thread, virtual time,
//!   seeded randomness, links with a delay and fault hooks);
//! - [`prover`]: what a prover's run reports (phases, figures, outcome);
//! - [`error`]: the outward error.
//!
//! No I/O of its own: builds for wasm32.

pub mod error;
pub mod frame;
mod mode;
pub mod mpc;
pub mod mux;
pub mod pipe;
pub mod policy;
pub mod prover;
pub mod proxy;
pub mod runtime;
pub mod sim;
pub mod verifier;

pub use error::{Error, Outward, Result};
pub use mode::Mode;
pub use runtime::{Connector, Counters, Link, Runtime, Section};
pub use verifier::{Verified, VerifierConfig};

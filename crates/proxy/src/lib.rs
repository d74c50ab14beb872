//! Proxy mode of webproof, without I/O.
//!
//! In proxy mode the verifier relays the prover's TLS connection to the
//! server and records every TLS record; afterwards the prover shows what the
//! records contain. This crate owns everything of that which is pure
//! computation, so it runs the same natively and in a browser
//! (`wasm32-unknown-unknown`):
//!
//! - the TLS both modes share lives in `webproof_tls` (records and
//!   recordings, handshake parsing, suites, the key schedule, record
//!   protection, server identity, the checks of a recorded session and
//!   the statement they leave to prove); its modules are re-exported here
//!   under their old paths ([`record`], [`handshake`], [`suite`],
//!   [`keys`], [`aead`], [`sigalg`], [`codec`], [`verify`],
//!   [`statement`]);
//! - the disclosure layer both modes share lives in `webproof_disclosure`
//!   (byte ranges and openings, reveal items, HTTP, proven JSON paths, the
//!   verifier's output and verdict, attestations); its modules are
//!   re-exported here under their old paths ([`disclosure`], [`http`],
//!   [`json`]);
//! - [`output`]: proxy mode's verifier output built from a checked session
//!   (the output types are `webproof_disclosure`'s);
//! - [`protocol`]: the versioned prover/verifier messages;
//! - [`zk`]: the bridge to the zero-knowledge proof of `webproof_tlsproof`,
//!   with the table of where each public value of the statement comes from;
//! - [`tags`]: the verifier's check of the client records' AEAD tags from
//!   the one-time MAC material the ZK proof opens;
//! - [`verifier`]: the verifier's decisions after the relay (before and
//!   after the proof), which the networking crate drives;
//! - [`attest`]: the verifier's signature over a checked session (the
//!   commitment, bundle and presentations are `webproof_disclosure`'s);
//! - [`session`]: the prover's and the verifier's sessions, flight by
//!   flight: every protocol decision of a session, which drivers
//!   (`webproof-net`, a browser, the tests) run.
//!
//! It never opens sockets, reads clocks or draws randomness: the caller
//! passes time and data in.
#![forbid(unsafe_code)]

pub mod attest;
// The TLS both modes share, under the paths it had here.
pub use webproof_tls::{aead, codec, handshake, keys, record, sigalg, statement, suite, verify};
// The disclosure layer both modes share, under the paths it had here.
pub use webproof_disclosure::{disclosure, http, json};
pub mod error;
#[cfg(test)]
mod json_zk_tests;
pub mod mux;
pub mod output;
pub mod protocol;
pub mod session;
pub mod tags;
pub mod verifier;
pub mod zk;

pub use disclosure::{Disclosure, Range};
pub use error::ProxyError;
pub use output::{verify_full_reveal, DigestedOutput, ProofKind, VerifierOutput};
pub use record::{Direction, Recorder, RecorderLimits, Recording};
pub use statement::{SessionSecret, SessionStatement};
pub use suite::{CipherSuite, KxGroup, TlsVersion};
pub use verify::{RootStore, VerifyConfig};

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
//!   protection, server identity); its modules are re-exported here under
//!   their old paths ([`record`], [`handshake`], [`suite`], [`keys`],
//!   [`aead`], [`sigalg`], [`codec`]);
//! - [`verify`]: the verifier's checks of a recorded session: the
//!   handshake walked record by record (server identity by
//!   `webproof_tls::identity`), Finished messages, and decryption of every
//!   record under one key per direction;
//! - [`statement`]: the public inputs and witness of the ZK statement, and
//!   the relation evaluated in the clear (the full-reveal fast path);
//! - [`disclosure`] and [`http`]: which byte ranges to open, and HTTP-aware
//!   helpers that choose them;
//! - [`json`]: proven JSON paths (`json:PATH`): the body's skeleton is
//!   revealed, its hidden bytes are constrained in the proof, and the
//!   verifier checks that the value sits at the path;
//! - [`output`]: what the verifier attests to (serde JSON);
//! - [`protocol`]: the versioned prover/verifier messages;
//! - [`zk`]: the bridge to the zero-knowledge proof of `webproof_tlsproof`,
//!   with the table of where each public value of the statement comes from;
//! - [`tags`]: the verifier's check of the client records' AEAD tags from
//!   the one-time MAC material the ZK proof opens;
//! - [`verifier`]: the verifier's decisions after the relay (before and
//!   after the proof), which the networking crate drives;
//! - [`attest`]: attestations: the prover's commitment and bundle, the
//!   verifier's signature;
//! - [`session`]: the prover's and the verifier's sessions, flight by
//!   flight: every protocol decision of a session, which drivers
//!   (`webproof-net`, a browser, the tests) run.
//!
//! It never opens sockets, reads clocks or draws randomness: the caller
//! passes time and data in.
#![forbid(unsafe_code)]

pub mod attest;
// The TLS both modes share, under the paths it had here.
pub use webproof_tls::{aead, codec, handshake, keys, record, sigalg, suite};
pub mod disclosure;
pub mod error;
pub mod http;
pub mod json;
pub mod mux;
pub mod output;
pub mod protocol;
pub mod session;
pub mod statement;
pub mod tags;
pub mod verifier;
pub mod verify;
pub mod zk;

pub use disclosure::{Disclosure, Range};
pub use error::ProxyError;
pub use output::{verify_full_reveal, DigestedOutput, ProofKind, VerifierOutput};
pub use record::{Direction, Recorder, RecorderLimits, Recording};
pub use statement::{SessionSecret, SessionStatement};
pub use suite::{CipherSuite, KxGroup, TlsVersion};
pub use verify::{RootStore, VerifyConfig};

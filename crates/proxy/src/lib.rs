//! Proxy mode of webproof, without I/O.
//!
//! In proxy mode the verifier relays the prover's TLS connection to the
//! server and records every TLS record; afterwards the prover shows what the
//! records contain. This crate owns everything of that which is pure
//! computation, so it runs the same natively and in a browser
//! (`wasm32-unknown-unknown`):
//!
//! - [`record`]: TLS records, the [`record::Recording`] the verifier keeps
//!   and the bounded incremental [`record::Recorder`] that builds it;
//! - [`handshake`]: parsing of the handshake messages proxy mode needs;
//! - [`suite`]: supported protocol versions, cipher suites and groups;
//! - [`keys`]: the TLS 1.3 key schedule and the TLS 1.2 PRF, written so that
//!   the ZK statement circuits can mirror them step by step;
//! - [`aead`]: record protection (nonce, additional data, inner plaintext);
//! - [`verify`]: the verifier's checks: server identity (chain, name,
//!   validity, CertificateVerify / ServerKeyExchange signature), Finished
//!   messages, and decryption of every record under one key per direction;
//! - [`sigalg`]: signature verification for webpki on RustCrypto (pure Rust);
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

pub mod aead;
pub mod attest;
pub mod codec;
pub mod disclosure;
pub mod error;
pub mod handshake;
pub mod http;
pub mod json;
pub mod keys;
pub mod mux;
pub mod output;
pub mod protocol;
pub mod record;
pub mod session;
pub mod sigalg;
pub mod statement;
pub mod suite;
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

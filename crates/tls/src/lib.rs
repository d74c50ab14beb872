//! The TLS that both modes of webproof share, without I/O.
//!
//! Proxy mode checks a recorded session with it; MPC mode checks the
//! server's flight, keeps its recording and decrypts the response with it.
//! Nothing here knows a mode:
//!
//! - [`record`]: TLS records, the [`Recording`] a verifier keeps and the
//!   bounded incremental [`Recorder`] that builds it;
//! - [`handshake`] and [`codec`]: parsing of the handshake messages a
//!   verifier inspects, bounds-checked;
//! - [`suite`]: the protocol versions, cipher suites and groups webproof
//!   supports;
//! - [`keys`]: the TLS 1.3 key schedule and the TLS 1.2 PRF in the clear,
//!   written step by step so that circuits can mirror them;
//! - [`aead`]: record protection (nonce, additional data, inner plaintext);
//! - [`identity`]: the server's identity (chain, name, validity, the
//!   handshake signature);
//! - [`sigalg`]: signature verification for webpki on RustCrypto;
//! - [`verify`]: the checks of a recorded session (the handshake walked
//!   record by record, Finished messages, one key per direction) and
//!   [`statement`]: what they leave for a proof to establish, and that
//!   relation evaluated in the clear.
//!
//! Without the `verify` feature (default on) it is the vocabulary and the
//! parsers only, which the attestation format takes its types from.
//!
//! It builds for `wasm32-unknown-unknown`: no sockets, clocks or
//! randomness; the caller passes time and data in.
#![forbid(unsafe_code)]

#[cfg(feature = "verify")]
pub mod aead;
pub mod codec;
pub mod error;
pub mod handshake;
#[cfg(feature = "verify")]
pub mod identity;
#[cfg(feature = "verify")]
pub mod keys;
pub mod record;
#[cfg(feature = "verify")]
pub mod sigalg;
#[cfg(feature = "verify")]
pub mod statement;
pub mod suite;
#[cfg(feature = "verify")]
pub mod verify;

pub use error::TlsError;
#[cfg(feature = "verify")]
pub use identity::{RootStore, VerifyConfig};
pub use record::{Direction, Recorder, RecorderLimits, Recording};
pub use suite::{CipherSuite, KxGroup, TlsVersion};

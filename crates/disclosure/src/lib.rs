//! Selective disclosure of webproof: what a prover shows of a TLS session
//! and what a verifier attests to, for every mode.
//!
//! Proxy mode (`webproof-proxy`) and MPC mode (`webproof-mpc-tls`) prove
//! differently that bytes came from the server; once they have, what is
//! revealed, checked and signed is the same, and it lives here:
//!
//! - [`disclosure`]: byte ranges of each direction's application data, the
//!   prover's openings and their check, the canonical form of disclosed
//!   ranges, the digest of a verdict;
//! - [`http`]: HTTP/1.x parsing, reveal items ([`RevealItem`]) and the
//!   [`Disclosure`] they select, which request bytes are credentials, and
//!   whether a response is complete;
//! - [`exchange`]: several requests on one connection: the prover's split
//!   of its transcript into exchanges and the verifier's of its own view;
//! - [`json`]: proven JSON paths (`json:PATH`): the body's skeleton, the
//!   claims the proof constrains and the verifier's walk;
//! - [`output`]: the verifier's output ([`VerifierOutput`]), the facts an
//!   attestation carries, and the verdict ([`DigestedOutput`]) the prover
//!   expands against its own data;
//! - [`attest`]: the prover's commitment, the verifier's signature over an
//!   output, the bundle the prover keeps and the presentations it builds.
//!
//! It knows no mode: how a session was recorded or proven, and so how an
//! output is assembled, is the mode crates'. It does no I/O (no sockets,
//! clocks or OS randomness: the caller passes time, data and a random
//! generator in), so it builds for `wasm32-unknown-unknown`.
#![forbid(unsafe_code)]

pub mod attest;
pub mod disclosure;
pub mod error;
pub mod exchange;
pub mod http;
pub mod json;
pub mod output;

pub use disclosure::{Disclosure, Range};
pub use error::DisclosureError;
pub use http::RevealItem;
pub use output::{DigestedOutput, ProofKind, VerifierOutput};

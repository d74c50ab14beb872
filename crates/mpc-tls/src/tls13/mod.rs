//! MPC mode over TLS 1.3 (issue 54): the prover's and the verifier's
//! sessions of a TLS 1.3 client whose ECDHE secret, key schedule and
//! request records run in 2PC, with AES-128-GCM-SHA256,
//! AES-256-GCM-SHA384 or ChaCha20-Poly1305-SHA256 ([`SUITES`], one per
//! session; ChaCha20-Poly1305's records are `crate::rec::chacha`'s, as
//! TLS 1.2's, with the same nonce form and the 5-byte header as AAD); the
//! response is proven after the session ([`response`], sealed, with the
//! prover's audit of the garbling before it discloses, [`audit`]; no
//! consistency proof in ZK yet) and the verifier's output states TLS 1.3
//! ([`verifier_output13`]).
//!
//! The key schedule is `crate::kdf::tls13`'s: its step 1 reveals both
//! handshake traffic secrets to both parties, so each decrypts the
//! server's encrypted flight by itself (the verifier from the records it
//! recorded, never from the prover's plaintext), and its step 3 leaves
//! the application keys and IVs XOR-shared. Why revealing the handshake
//! secrets is safe, who learns what and where every public value the
//! verifier uses comes from: `docs/protocol/mpc-tls13.md`.
//!
//! - [`hello`][]: the ClientHello the prover writes and the verifier's check
//!   of it, the ServerHello's checks, the reading of the server's
//!   encrypted flight and the client Finished record;
//! - `rec`: the records in 2PC by id (AES-GCM's GHASH record, the
//!   request's) and their circuits per suite;
//! - [`response`][]: the proof of the response after the session;
//! - [`audit`][]: the prover's audit of the garbling inside it;
//! - `output`: [`verifier_output13`];
//! - [`prover`][]: [`Tls13ProverSession`];
//! - [`verifier`][]: [`Tls13VerifierSession`].
//!
//! The messages are [`crate::msg`]'s: a TLS 1.3 session is announced by
//! the suite of the prover's `Hello` terms (a TLS 1.3 suite, which the
//! TLS 1.2 sessions refuse), and every message it uses so far has the
//! same fields and meaning as in TLS 1.2 (`Setup`, `Tables`, `Decoding`,
//! `ToServer`, `FromServer`, `KeyOpen`, `EctfAnswer`, `EctfCorrection`,
//! `KdfFlips`, `KdfInputs`, `KdfLabels`, `DualLabels`, `DualTables`,
//! `DualEnd`, `RecPowers`, `RecCiphertext`, `RecTagShare`, `RecSent`),
//! so no encoding changes.

pub mod audit;
pub mod hello;
mod output;
pub mod prover;
mod rec;
pub mod response;
pub mod verifier;

pub use output::{attestation13, verifier_output13};
pub use prover::{Response13, Tls13ProverSession};
pub use verifier::Tls13VerifierSession;

use webproof_circuits::tls::Tls13Suite;
use webproof_tls::CipherSuite;

/// The default TLS 1.3 suite of MPC mode.
pub const SUITE: CipherSuite = CipherSuite::TLS13_AES_128_GCM_SHA256;

/// The TLS 1.3 suites MPC mode runs, in preference order: the AES-GCM
/// ones, then ChaCha20-Poly1305 (its records cost more in 2PC: every
/// record pays its own Poly1305 key, `docs/protocol/mpc-chacha.md`).
pub const SUITES: [CipherSuite; 3] = [
    CipherSuite::TLS13_AES_128_GCM_SHA256,
    CipherSuite::TLS13_AES_256_GCM_SHA384,
    CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
];

/// The key schedule's parameters of a suite of [`SUITES`], or a clear
/// refusal of any other suite.
pub(crate) fn schedule_of(suite: CipherSuite) -> crate::Result<Tls13Suite> {
    match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => Ok(Tls13Suite::AES_128_GCM_SHA256),
        CipherSuite::TLS13_AES_256_GCM_SHA384 => Ok(Tls13Suite::AES_256_GCM_SHA384),
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => Ok(Tls13Suite::CHACHA20_POLY1305_SHA256),
        _ => Err(crate::Error::Unsupported(format!(
            "{suite} in MPC mode over TLS 1.3 (it runs {}, {} and {})",
            SUITES[0], SUITES[1], SUITES[2]
        ))),
    }
}

/// Whether a suite's records are ChaCha20-Poly1305's
/// (`crate::rec::chacha`: two circuits a record, no GHASH key); every
/// other suite of [`SUITES`] is AES-GCM's.
pub(crate) fn is_chacha(suite: CipherSuite) -> bool {
    suite == CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
}

/// The group MPC mode offers beside `g` (it runs two).
pub(crate) fn other_group(g: webproof_tls::KxGroup) -> webproof_tls::KxGroup {
    use webproof_tls::KxGroup;
    match g {
        KxGroup::Secp256r1 => KxGroup::X25519,
        KxGroup::X25519 => KxGroup::Secp256r1,
    }
}

/// Garbling instances: the key schedule's four steps come first.
pub(crate) const KDF_INSTANCE: u64 = 0;

//! MPC mode's runs (`webproof_mpc_tls` on a link): the settings both
//! parties must share, the prover's run ([`prover`]) and the verifier's
//! ([`verifier`]), over TLS 1.2 or TLS 1.3 (one trait per party over the
//! two versions' sessions, `side`, so the flights are written once).
//!
//! The version: an explicit one is honoured; without one the prover asks
//! the server with plain ClientHellos through the same connector (`probe`:
//! one round trip to the server per question and no 2PC, against a whole
//! second 2PC session if a guess were wrong): TLS 1.2 if the server runs
//! it, else TLS 1.3 with the suite the server picks (a pinned TLS 1.2
//! asks for the suite and the EMS choice). The probe runs while the
//! verifier admits the session and the COTs are extended. The verifier learns
//! the version from the suite of the prover's `Hello` terms, the
//! session's first message, and its session checks the real ServerHello
//! against those terms. Both versions' proofs show the hidden
//! request-head bytes free of line ends (the output's `sent_crlf_free`).
//!
//! The link, phase by phase: the hello (proxy mode's `ProverMsg::Hello`
//! with `MpcHello`, and SoftSpokenOT's first message in the same flight);
//! the session's COTs; a multiplexed section with the 2PC session on its
//! relay stream and the proof's Ferret setup on its preprocessing stream;
//! the proof of the response; the verdict. `docs/protocol/mpc.md` argues
//! each step.

mod probe;
pub mod prover;
mod side;
pub mod verifier;

use crate::Error;
use webproof_mpc_tls::Error as MpcError;
use webproof_proxy::protocol::{RejectKind, Rejection};
use webproof_proxy::ProxyError;

/// Default of [`crate::verifier::VerifierConfig::max_mpc_request`]: a
/// request of 4 KiB (headers with a few cookies or tokens) and no more
/// tables than that.
pub const DEFAULT_MAX_REQUEST: usize = 4 << 10;
/// The most [`crate::verifier::VerifierConfig::max_mpc_request`] may be:
/// the largest request the session's COT budget covers.
pub const MAX_REQUEST_LIMIT: usize = webproof_mpc_tls::cots::MAX_REQUEST;

/// COTs the proof of the response is sized for; more run further Ferret
/// iterations, each a whole one (about 0.5 s on Cable). A 1 KB request and
/// a 2 KB response revealed but for a byte need between 2^18 and 2^19 with
/// Ferret's reserve since no circuit is proven again; 2^19 measured 20 ms
/// faster on Cable, but a fixed budget that small would cost a further
/// iteration for responses a few KB larger.
pub const PROOF_COTS: u64 = 1 << 20;

/// The proof engine's settings, the same on both sides (the COT batch
/// size decides when both extend).
pub fn proof_config() -> webproof_zk::Config {
    webproof_zk::Config {
        cot_batch: 1 << 18,
        ..webproof_zk::Config::default()
    }
}

/// The silent COT extension of the proof, the same on both sides: Ferret
/// on the session's SoftSpokenOT, so `Δ` stays the garbler's and the
/// prover uploads a fraction of a bit per COT instead of SoftSpokenOT's
/// tens.
pub fn proof_cots() -> webproof_ferret::FerretConfig {
    webproof_tlsproof::SessionConfig::sized(PROOF_COTS).ferret
}

/// COTs both sides draw, and drop, beside the session: one past the setup
/// iteration's surplus, so Ferret runs its setup iteration (with its
/// check) and its first main iteration there, not in the proof.
pub fn warm_up_draw() -> usize {
    let config = proof_cots();
    if config.setup.is_some() {
        config.setup_surplus() + 1
    } else {
        0
    }
}

/// An engine error in `phase`: a lost link is the peer disconnecting.
pub fn engine_error(phase: &str, e: webproof_core::Error) -> Error {
    crate::error::proof_step_error("the peer", phase, e, |e| Error::Engine {
        phase: phase.to_string(),
        source: e,
    })
}

/// A channel's stream back, or the link lost `after` a step.
pub fn channel_back<T>(
    r: core::result::Result<T, webproof_core::ChannelError>,
    after: &str,
) -> crate::Result<T> {
    r.map_err(|e| Error::Disconnected(format!("after {after}: {e}")))
}

/// The link closed under a writer.
pub(crate) fn link_closed() -> Error {
    Error::Disconnected("the link closed while writing".into())
}

/// Write every frame of `rx` in order, until every sender is gone; the
/// stream comes back for the caller to go on with or close. Both runs'
/// sessions are full duplex: one side's garbling of the request's
/// keystream goes up while the other's tables come down.
pub(crate) async fn duplex_writer<W: futures::io::AsyncWrite + Unpin>(
    mut wr: W,
    mut rx: futures::channel::mpsc::Receiver<Vec<u8>>,
) -> crate::Result<W> {
    use futures::StreamExt;
    while let Some(f) = rx.next().await {
        crate::frame::write_frame(&mut wr, &f).await?;
    }
    Ok(wr)
}

/// The reason code and text a party sends when `e` ends its MPC session:
/// proxy mode's codes, so a prover reads both modes' refusals alike (the
/// shared TLS checks' and the disclosure layer's errors by way of
/// `ProxyError`'s variants of the same names).
pub(crate) fn rejection(e: &MpcError) -> Rejection {
    use RejectKind as K;
    let kind = match e {
        MpcError::Tls(t) => return Rejection::from(&ProxyError::from(t.clone())),
        MpcError::Disclosure(d) => return Rejection::from(&ProxyError::from(d.clone())),
        MpcError::Malformed(_) | MpcError::Oversized { .. } => K::Malformed,
        MpcError::Unsupported(_) => K::Unsupported,
        MpcError::ServerAlert { .. } => K::HandshakeAlert,
        MpcError::ServerFinished => K::Finished,
        MpcError::ServerClosed => K::Incomplete,
        MpcError::Decrypt { .. } => K::Decrypt,
        MpcError::Proof(_) => K::Opening,
        MpcError::CotsExhausted { .. } => K::SessionSize,
        _ => K::Protocol,
    };
    Rejection::new(kind, e.to_string())
}

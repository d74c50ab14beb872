//! The verifier's decisions after the relay, without I/O: what it checks
//! before it runs the zero-knowledge proof, and what it concludes from the
//! proof's result. [`crate::session::verifier::VerifierSession`] sequences
//! them; every driver (the networking crate, the soundness harness, the
//! session tests) goes through that session.
//!
//! Every public value comes from the verifier's own recording or its
//! configuration (see [`crate::zk`] for the table): the transcript is the
//! one it recorded and cut at the prover's `Close`, the server name and
//! port are the ones it connected to, the time is its own clock.

use crate::error::{ProxyError, Result};
use crate::output::VerifierOutput;
use crate::protocol::AttestationReply;
use crate::record::Recording;
use crate::statement::SessionStatement;
use crate::verify::{check_handshake, HandshakeSecrets, SecretsSource, SessionInfo, VerifyConfig};
use crate::zk::{self, ZkPlan};
use webproof_attestation::SigningKey;
use webproof_tlsproof as tp;

/// What the verifier established before the proof: the session's identity,
/// the statement over its recording, and the ZK statement for the plan.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// Server identity, suite, time.
    pub info: SessionInfo,
    /// The statement over the recorded records.
    pub statement: SessionStatement,
    /// The statement the proof is run on.
    pub zk: tp::Statement,
}

/// Before the proof: check the handshake (with the revealed TLS 1.3
/// handshake secrets) and build the ZK statement for `plan`. `can_attest`:
/// whether this verifier holds an attestation key (a plan with commitments
/// is refused otherwise, before the prover spends a proof on it).
pub fn prepare_zk(
    transcript: &Recording,
    cfg: &VerifyConfig,
    plan: &ZkPlan,
    handshake_secrets: Option<&HandshakeSecrets>,
    can_attest: bool,
) -> Result<Prepared> {
    let none = HandshakeSecrets {
        client: Vec::new(),
        server: Vec::new(),
    };
    let secrets = handshake_secrets.unwrap_or(&none);
    let (info, statement) = check_handshake(transcript, cfg, SecretsSource::Revealed(secrets))?;
    let zk = zk::zk_statement(&statement, plan)?;
    if !plan.commitments.is_empty() && !can_attest {
        return Err(ProxyError::Attestation(
            "this verifier does not sign attestations (it has no attestation key)".into(),
        ));
    }
    Ok(Prepared {
        info,
        statement,
        zk,
    })
}

/// After a successful proof: assemble the verified view, build the output
/// and, when the plan committed to the transcript, sign the attestation.
pub fn conclude_zk(
    prepared: &Prepared,
    transcript: &Recording,
    plan: &ZkPlan,
    proven: &tp::Proven,
    attestation_key: Option<&SigningKey>,
) -> Result<(VerifierOutput, Option<AttestationReply>)> {
    let view = zk::assemble_proven(&prepared.statement, plan, proven)?;
    // Client records are the prover's own: their tags show the server
    // would have accepted them. (The material opened for this lets its
    // holder forge tags, so the verifier's server connection is closed
    // before the proof starts.)
    crate::tags::check_client_tags(&prepared.statement, proven)?;
    let mut out = zk::zk_output(&prepared.info, transcript, &prepared.statement, &view)?;
    // JSON paths: the skeleton on the verified view, with the hidden bytes
    // the proof constrained.
    out.json = crate::json::verify_claims(&view.sent, &view.received, &plan.json)?;
    // Proven by the statement's byte class ([`zk::zk_statement`]).
    out.sent_crlf_free = plan.sent_crlf_free.clone();
    let signed = match (attestation_key, plan.commitments.is_empty()) {
        (Some(key), false) => Some(crate::attest::issue(
            key,
            &prepared.info,
            &plan.commitments,
            &zk::leaf_hashes(proven),
            &out,
        )?),
        (None, false) => {
            return Err(ProxyError::Attestation(
                "this verifier does not sign attestations (it has no attestation key)".into(),
            ))
        }
        _ => None,
    };
    Ok((out, signed))
}

//! The verifier's side of attestations: signing what a proof established.
//!
//! The proof outputs each committed leaf's blinded hash, computed in zero
//! knowledge over the decrypted records; the verifier signs the Merkle root
//! over them with the session's identity and the facts it observed itself
//! (lengths, port, close_notify, truncation, order), taken from the
//! verified output, never from the prover.

use crate::error::{ProxyError, Result};
use crate::output::VerifierOutput;
use crate::protocol::AttestationReply;
use crate::verify::SessionInfo;
use webproof_attestation::{
    commit::attested_root, AttestationFields, CipherSuite, LeafRange, ServerIdentity, SigningKey,
};

/// Sign the attestation for a session whose proof established
/// `leaf_hashes` over the leaves `leaves` of the application data that
/// `output` describes.
pub fn issue(
    key: &SigningKey,
    info: &SessionInfo,
    leaves: &[LeafRange],
    leaf_hashes: &[[u8; 32]],
    output: &VerifierOutput,
) -> Result<AttestationReply> {
    let len = |n: usize| {
        u32::try_from(n)
            .map_err(|_| ProxyError::Attestation("transcript too long to attest".into()))
    };
    let (sent_len, received_len) = (len(output.sent.len)?, len(output.received.len)?);
    let root =
        attested_root(leaves, leaf_hashes, sent_len, received_len).map_err(attestation_error)?;
    let cipher_suite = CipherSuite::from_code(info.suite.code())
        .ok_or_else(|| ProxyError::Attestation(format!("{} cannot be attested", info.suite)))?;
    let identity = ServerIdentity::new(info.certificates.clone()).map_err(attestation_error)?;
    let fields = AttestationFields {
        server_name: info.server_name.clone(),
        time: info.time,
        cipher_suite,
        sent_len,
        received_len,
        leaf_count: u32::try_from(leaves.len())
            .map_err(|_| ProxyError::Attestation("too many leaves".into()))?,
        transcript_root: root,
        handshake_hash: identity.hash(),
        facts: output.facts(),
    };
    let signed = webproof_attestation::Attestation::sign(fields, key).map_err(attestation_error)?;
    Ok(AttestationReply {
        scheme: key.scheme(),
        verifying_key: key.verifying_key().to_bytes(),
        signed: signed.to_bytes(),
    })
}

fn attestation_error(e: webproof_attestation::Error) -> ProxyError {
    ProxyError::Attestation(e.to_string())
}

//! Attestations in proxy mode. The commitment, the bundle, presentations
//! and the signing are the disclosure layer's (`webproof_disclosure::attest`),
//! re-exported here under their old paths; proxy mode adds only [`issue`]
//! from the session it checked.

pub use webproof_disclosure::attest::*;

use crate::error::Result;
use crate::output::VerifierOutput;
use crate::verify::SessionInfo;
use webproof_attestation::{LeafRange, SigningKey};

/// Sign the attestation for a session whose proof established
/// `leaf_hashes` over the leaves `leaves` of the application data that
/// `output` describes; `output` is the one built from `info` (its server
/// name, time and suite are `info`'s), the server identity is
/// `info.certificates`.
pub fn issue(
    key: &SigningKey,
    info: &SessionInfo,
    leaves: &[LeafRange],
    leaf_hashes: &[[u8; 32]],
    output: &VerifierOutput,
) -> Result<AttestationReply> {
    Ok(webproof_disclosure::attest::issue(
        key,
        &info.certificates,
        leaves,
        leaf_hashes,
        output,
    )?)
}

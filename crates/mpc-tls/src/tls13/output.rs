//! The verifier's output of a TLS 1.3 session whose response proof it
//! checked, in proxy mode's shape ([`webproof_disclosure::VerifierOutput`]),
//! as `crate::output` builds TLS 1.2's.
//!
//! Every field is the verifier's own: the server name it checked the
//! certificate against, its clock, TLS 1.3 and the suite it ran, the group
//! of the prover's terms the ServerHello it recorded agreed to, the
//! certificate from the flight it decrypted itself, the lengths of the
//! request from the records it ran in 2PC (the proof's, checked equal),
//! those of the response and the revealed bytes of both from the proof
//! ([`Verified13`]: the records' contents with their inner types and
//! padding stripped in the statement), the hidden ranges of the request
//! proven free of CR and LF (`sent_crlf_free`, a byte class the
//! statement asserts over the request's records), the
//! order from its recording. As in TLS 1.2's output, what MPC mode does
//! not establish is left unstated: the port (0), close_notify unless
//! proven, the records after a cut, any other alert.

use super::response::Verified13;
use super::Tls13VerifierSession;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use webproof_disclosure::disclosure::DisclosedData;
use webproof_disclosure::output::ProofKind;
use webproof_disclosure::VerifierOutput;
use webproof_tls::TlsVersion;

/// The output; `server_name` and `time` as for `crate::verifier_output`.
pub fn verifier_output13(
    v: &Tls13VerifierSession,
    verified: &Verified13,
    server_name: &str,
    time: u64,
) -> Result<VerifierOutput> {
    let id = v
        .identity()
        .ok_or(Error::OutOfOrder("an output before the handshake"))?;
    let leaf = id
        .certificates
        .first()
        .ok_or(Error::Recording("no server certificate".into()))?;
    let group = v
        .group()
        .ok_or(Error::OutOfOrder("an output before the Hello"))?;
    let start = v
        .server_app_start()
        .ok_or(Error::OutOfOrder("an output before the handshake"))?;
    let request = v.request_lens();
    let sent_len: usize = request.iter().sum();
    if sent_len != verified.request_len {
        return Err(Error::Recording(format!(
            "the proof covers {} request bytes, the 2PC ran {sent_len}",
            verified.request_len
        )));
    }
    let view = placed(verified.response_len, &verified.ranges)?;
    let sent_view = placed(sent_len, &verified.request_ranges)?;
    // Application bytes per record of each direction, in the recording's
    // order: the ClientHello and the client Finished carry none, the
    // request's records their content; the server's records before its
    // Finished none, the later ones what the proof established.
    // The client's handshake records: its ClientHello (two after a
    // HelloRetryRequest) and its Finished.
    let handshake = v.recording().sent.len().saturating_sub(request.len());
    let lens = [
        [vec![0; handshake], request.clone()].concat(),
        [vec![0; start], verified.app_lens.clone()].concat(),
    ];
    let order = crate::output::order_of(&v.recording().order, &lens);
    Ok(VerifierOutput {
        server_name: server_name.to_string(),
        server_port: 0,
        time,
        tls_version: TlsVersion::Tls13,
        cipher_suite: v.suite(),
        key_exchange_group: group,
        server_certificate_sha256: hex::encode(Sha256::digest(leaf)),
        proof: ProofKind::Mpc,
        sent: DisclosedData::from_view(&sent_view),
        received: DisclosedData::from_view(&view),
        server_close_notify: verified.close_notify.then_some(true),
        server_alert: None,
        server_records_after_cut: verified.close_notify.then_some(0),
        response_complete: webproof_disclosure::http::response_completeness(&view, false),
        order,
        json: Vec::new(),
        // Proven in the statement (the byte class over the request's
        // records, `super::response`), the spans within the request the
        // 2PC ran, whose lengths were checked equal above.
        sent_crlf_free: verified
            .request_crlf_free
            .iter()
            .map(|r| webproof_disclosure::disclosure::Range::new(r.start, r.end))
            .collect(),
    })
}

/// A direction of `len` bytes with the revealed `ranges` in place.
fn placed(len: usize, ranges: &[(usize, Vec<u8>)]) -> Result<Vec<Option<u8>>> {
    let mut view = vec![None; len];
    for (at, bytes) in ranges {
        let slot = at
            .checked_add(bytes.len())
            .and_then(|end| view.get_mut(*at..end))
            .ok_or(Error::Malformed("a revealed range outside its direction"))?;
        for (s, b) in slot.iter_mut().zip(bytes) {
            *s = Some(*b);
        }
    }
    Ok(view)
}

/// Sign the attestation of a TLS 1.3 session whose proof established the
/// leaf hashes of `verified` (the prover's commitment to the request and
/// the response), as `crate::attestation` does for TLS 1.2: every field
/// from `output` ([`verifier_output13`]'s), the certificate chain from
/// the flight the verifier decrypted and checked itself, the root over
/// the proven leaf hashes (their layout checked against the lengths the
/// proof established).
pub fn attestation13(
    key: &webproof_attestation::SigningKey,
    v: &Tls13VerifierSession,
    verified: &Verified13,
    output: &VerifierOutput,
) -> Result<webproof_disclosure::attest::AttestationReply> {
    if verified.leaves.is_empty() {
        return Err(webproof_disclosure::DisclosureError::Attestation(
            "the prover committed to nothing: there is nothing to attest".into(),
        )
        .into());
    }
    let id = v
        .identity()
        .ok_or(Error::OutOfOrder("an attestation before the handshake"))?;
    Ok(webproof_disclosure::attest::issue(
        key,
        &id.certificates,
        &verified.leaves,
        &verified.leaf_hashes,
        output,
    )?)
}

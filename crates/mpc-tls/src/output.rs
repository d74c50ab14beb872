//! The verifier's output of an MPC-mode session, in proxy mode's shape
//! ([`webproof_disclosure::VerifierOutput`]), so the service, the CLI, the
//! verdict and the harness read both modes alike.
//!
//! # Where each field comes from
//! Everything is the verifier's own: the server name from the hello it
//! admitted (the one the certificate was checked against), the time from
//! its clock, the version, suite, group and certificate from the server
//! flight it parsed ([`VerifierOutcome`]), the lengths of both directions
//! from its recording (each application-data record's payload minus the
//! 8-byte explicit nonce and the 16-byte tag), the revealed bytes from the
//! proof it checked ([`VerifiedResponse`]).
//!
//! [`attestation`] signs the attestation over the same output, with the
//! transcript root of the leaves the proof of the response established
//! and the proof mode [`ProofKind::Mpc`].
//!
//! # What MPC mode does not establish (and so does not state)
//! The verifier never sees the wire: the prover connects to the server
//! and forwards what it chooses. So, never proxy mode's meaning:
//! - `server_port` is `0` ("not recorded"): the port in the prover's
//!   hello is only the prover's word.
//! - `server_close_notify` and `server_records_after_cut` are `None` ("not
//!   established") unless the proof shows the last recorded server record
//!   decrypts to a close_notify ([`VerifiedResponse::close_notify`]; then
//!   `true` and `0`: TLS sends nothing after it). Otherwise a prover may
//!   have stopped forwarding at any record boundary, so the response may
//!   be truncated; `server_alert` is `None` (no other alert is proven). A response framed by Content-Length or chunking is still
//!   judged complete on its revealed head.
//! - `order` is the order of the prover's reports (`RecSent`, forwarded
//!   server flights), not the wire's, and `sent` counts the request
//!   records the prover reports sent, not their delivery.

use crate::error::{Error, Result};
use crate::response::{RevealedRange, VerifiedResponse};
use crate::verifier::VerifierOutcome;
use sha2::{Digest, Sha256};
use webproof_attestation::SigningKey;
use webproof_attestation::{Direction as ADirection, OrderSpan};
use webproof_disclosure::attest::AttestationReply;
use webproof_disclosure::disclosure::DisclosedData;
use webproof_disclosure::output::ProofKind;
use webproof_disclosure::{DisclosureError, VerifierOutput};
use webproof_tls::record::{content_type, Record};
use webproof_tls::{Direction, Recording, TlsVersion};

/// Application-data bytes of each record of one direction (0 for the
/// handshake, the Finished, alerts).
fn app_lengths(records: &[Record], overhead: usize) -> Vec<usize> {
    let mut encrypted = false;
    records
        .iter()
        .map(|r| {
            if r.content_type == content_type::CHANGE_CIPHER_SPEC {
                encrypted = true;
                return 0;
            }
            if encrypted && r.content_type == content_type::APPLICATION_DATA {
                r.payload.len().saturating_sub(overhead)
            } else {
                0
            }
        })
        .collect()
}

/// The order of application data across directions, as runs, from the
/// recording's record order.
fn order(recording: &Recording, overhead: usize) -> Vec<OrderSpan> {
    let lens = [
        app_lengths(&recording.sent, overhead),
        app_lengths(&recording.received, overhead),
    ];
    order_of(&recording.order, &lens)
}

/// The runs of application data of `record_order` (each record's
/// direction, in the order recorded), with `lens[d][k]` the application
/// bytes of direction `d`'s `k`-th record (0 for the others).
pub(crate) fn order_of(record_order: &[Direction], lens: &[Vec<usize>; 2]) -> Vec<OrderSpan> {
    let mut next = [0usize; 2];
    let mut offset = [0u32; 2];
    let mut out: Vec<OrderSpan> = Vec::new();
    for &d in record_order {
        let i = d as usize;
        let n = lens[i].get(next[i]).copied().unwrap_or(0);
        next[i] += 1;
        if n == 0 {
            continue;
        }
        // Bounded by the recorder's limits, far below 4 GiB.
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let direction = match d {
            Direction::Sent => ADirection::Sent,
            Direction::Received => ADirection::Received,
        };
        match out.last_mut() {
            Some(last) if last.direction == direction => last.end += n,
            _ => out.push(OrderSpan {
                direction,
                start: offset[i],
                end: offset[i] + n,
            }),
        }
        offset[i] += n;
    }
    out
}

/// One direction's view: the revealed bytes at their offsets, `None`
/// elsewhere.
fn revealed_view(len: usize, ranges: &[RevealedRange]) -> Result<Vec<Option<u8>>> {
    let mut view = vec![None; len];
    for r in ranges {
        let slot = r
            .offset
            .checked_add(r.bytes.len())
            .and_then(|end| view.get_mut(r.offset..end))
            .ok_or(Error::Malformed(
                "a revealed range lies outside its direction",
            ))?;
        for (v, b) in slot.iter_mut().zip(&r.bytes) {
            *v = Some(*b);
        }
    }
    Ok(view)
}

/// The verifier's output of a session whose response proof it checked.
/// `server_name` is the one it admitted, `time` the session's (Unix
/// seconds, the certificate was checked at it). Facts it cannot establish
/// are left unstated (see the module docs).
pub fn verifier_output(
    outcome: &VerifierOutcome,
    verified: &VerifiedResponse,
    server_name: &str,
    time: u64,
) -> Result<VerifierOutput> {
    let cipher_suite = outcome.suite;
    let key_exchange_group = outcome.group;
    let leaf = outcome
        .certificates
        .first()
        .ok_or(Error::Recording("no server certificate".into()))?;
    // The suite's record overhead: AES-GCM's explicit nonce and tag,
    // ChaCha20-Poly1305's tag alone.
    let overhead = crate::hello::suite_params(outcome.suite)
        .map(crate::rec::overhead)
        .ok_or_else(|| Error::Unsupported(format!("cipher suite {}", outcome.suite)))?;
    let sent_len: usize = app_lengths(&outcome.recording.sent, overhead).iter().sum();
    let received_len: usize = app_lengths(&outcome.recording.received, overhead)
        .iter()
        .sum();
    if received_len != verified.response_len {
        return Err(Error::Recording(format!(
            "the proof covers {} response bytes, the recording holds {received_len}",
            verified.response_len
        )));
    }
    if sent_len != verified.request_len {
        return Err(Error::Recording(format!(
            "the proof covers {} request bytes, the recording holds {sent_len}",
            verified.request_len
        )));
    }
    let view = revealed_view(received_len, &verified.ranges)?;
    let sent_view = revealed_view(sent_len, &verified.request_ranges)?;
    let response_complete = webproof_disclosure::http::response_completeness(&view, false);
    Ok(VerifierOutput {
        server_name: server_name.to_string(),
        // Not recorded: the port in the hello is the prover's claim.
        server_port: 0,
        time,
        tls_version: TlsVersion::Tls12,
        cipher_suite,
        key_exchange_group,
        server_certificate_sha256: hex::encode(Sha256::digest(leaf)),
        proof: ProofKind::Mpc,
        sent: DisclosedData::from_view(&sent_view),
        received: DisclosedData::from_view(&view),
        // Proven when the prover claimed the last record as close_notify:
        // nothing can follow it, so nothing was cut.
        server_close_notify: verified.close_notify.then_some(true),
        server_alert: None,
        server_records_after_cut: verified.close_notify.then_some(0),
        response_complete,
        order: order(&outcome.recording, overhead),
        json: Vec::new(),
        // Proven in the statement (`response::crlf_free_spans`).
        sent_crlf_free: verified
            .request_crlf_free
            .iter()
            .map(|r| webproof_disclosure::disclosure::Range::new(r.start, r.end))
            .collect(),
    })
}

/// Sign the attestation of a session whose proof established the leaf
/// hashes of `verified` (the prover's commitment to the request and the
/// response). Every field but the transcript root comes from the
/// verifier: the server name, time, suite, group, lengths and the facts
/// (mode MPC, the rest not established) from
/// `output` ([`verifier_output`]'s, from its recording and its clock),
/// the certificate chain from the server flight it checked. The root is
/// over the proven leaf hashes, its layout checked against the recorded
/// lengths (`webproof_attestation::commit::attested_root`).
pub fn attestation(
    key: &SigningKey,
    outcome: &VerifierOutcome,
    verified: &VerifiedResponse,
    output: &VerifierOutput,
) -> Result<AttestationReply> {
    if verified.leaves.is_empty() {
        return Err(DisclosureError::Attestation(
            "the prover committed to nothing: there is nothing to attest".into(),
        )
        .into());
    }
    Ok(webproof_disclosure::attest::issue(
        key,
        &outcome.certificates,
        &verified.leaves,
        &verified.leaf_hashes,
        output,
    )?)
}

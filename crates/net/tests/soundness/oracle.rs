//! The oracle: in an accepted session every revealed byte is the true byte
//! at the same offset in the same direction, and every length is the true
//! length, in the verifier's output, in its attestation (lengths and the
//! plaintext each signed leaf commits to) and in any presentation.
//!
//! The truth is what the peers would accept of the transcript the verifier
//! kept (see [`super::session::truth`]): the honest session's data, cut
//! where the prover's `Close` cut the server's records or where a client
//! record stops authenticating at its position.

use super::pipeline::Accepted;
use super::plan::Attempt;
use super::session::{truth, Session};
use webproof_attestation::{
    commit::leaf_hash, verify_presentation, Direction as ADir, SignedAttestation, SigningKey,
};
use webproof_proxy::attest::AttestationBundle;

/// What the oracle checked beyond the output.
#[derive(Default, Debug)]
pub struct Checked {
    pub attestation: bool,
    pub presentation: bool,
    /// The verifier kept less than the whole session (a `Close` cut or
    /// client records that stop authenticating): allowed, reported.
    pub truncated: bool,
}

/// Compare `(offset, byte)` pairs and a length with the truth.
fn compare(
    what: &str,
    truth: &[u8],
    len: usize,
    revealed: impl Iterator<Item = (usize, u8)>,
    out: &mut Vec<String>,
) {
    if len != truth.len() {
        out.push(format!("{what}: length {len}, true length {}", truth.len()));
    }
    let mut wrong = Vec::new();
    for (at, b) in revealed {
        if truth.get(at) != Some(&b) {
            wrong.push((at, b));
        }
    }
    if let Some(&(at, b)) = wrong.first() {
        out.push(format!(
            "{what}: {} revealed bytes differ from the truth, first at offset {at}: {:?} where the truth is {:?}",
            wrong.len(),
            b as char,
            truth.get(at).map(|&t| t as char),
        ));
    }
}

/// Check an accepted session; returns the violations found.
pub fn check(
    s: &Session,
    a: &Attempt,
    acc: &Accepted,
    key: &SigningKey,
    checked: &mut Checked,
) -> Vec<String> {
    let mut v = Vec::new();
    let t = match truth(s, &acc.transcript) {
        Ok(t) => t,
        Err(e) => {
            return vec![format!(
                "accepted a transcript whose truth cannot be read: {e}"
            )]
        }
    };
    checked.truncated = t[0].len() < s.request.len() || t[1].len() < s.response.len();
    // The verifier's output and its view.
    for (name, data, truth) in [
        ("output.sent", &acc.output.sent, &t[0]),
        ("output.received", &acc.output.received, &t[1]),
    ] {
        let revealed = data
            .revealed
            .iter()
            .flat_map(|r| (r.start..r.end).map(|i| (i, data.bytes[i])));
        compare(name, truth, data.len, revealed, &mut v);
    }
    for (name, view, truth) in [
        ("view.sent", &acc.view.sent, &t[0]),
        ("view.received", &acc.view.received, &t[1]),
    ] {
        let revealed = view
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.map(|b| (i, b)));
        compare(name, truth, view.len(), revealed, &mut v);
    }
    let Some(reply) = &acc.attestation else {
        return v;
    };
    // The attestation: signed by the key, the true lengths, and every leaf
    // a commitment to the true bytes of its range (the prover knows each
    // leaf's blinder and preimage, so it can open any leaf as it hashed it).
    checked.attestation = true;
    let signed = match SignedAttestation::from_bytes(&reply.signed) {
        Ok(x) => x,
        Err(e) => {
            v.push(format!("the attestation does not decode: {e}"));
            return v;
        }
    };
    if let Err(e) = signed.verify(&[key.verifying_key()]) {
        v.push(format!("the attestation is not signed by the key: {e}"));
    }
    let fields = signed.attestation();
    if fields.sent_len() as usize != t[0].len() || fields.received_len() as usize != t[1].len() {
        v.push(format!(
            "attestation lengths {}/{}, true lengths {}/{}",
            fields.sent_len(),
            fields.received_len(),
            t[0].len(),
            t[1].len()
        ));
    }
    let blinders = a.blinders();
    let mut hashes = [
        acc.proven.sent.commitments.iter(),
        acc.proven.recv.commitments.iter(),
    ];
    for (i, leaf) in acc.plan.commitments.iter().enumerate() {
        let truth = &t[leaf.direction as usize];
        let Some(h) = hashes[leaf.direction as usize].next() else {
            v.push(format!("leaf {i} has no proven hash"));
            continue;
        };
        let (start, end) = (leaf.start as usize, leaf.end as usize);
        let ok = end <= truth.len()
            && start <= end
            && *h == leaf_hash(leaf.direction, leaf.start, &truth[start..end], &blinders[i]);
        if !ok {
            v.push(format!(
                "signed leaf {i} ({:?} {start}..{end}) commits to bytes other than the true ones",
                leaf.direction
            ));
        }
    }
    // A presentation revealing everything, built by the prover from its
    // bundle (when its commitment is a valid layout of what it claims).
    let Some((transcript, commitment)) = a.commitment() else {
        return v;
    };
    let Ok(bundle) =
        AttestationBundle::accept(reply, transcript, commitment, acc.info.certificates.clone())
    else {
        return v;
    };
    let Ok((p, _)) = bundle.present(&[webproof_proxy::http::RevealItem::All], true) else {
        return v;
    };
    let shown = match verify_presentation(&p.to_bytes(), &[key.verifying_key()]) {
        Ok(x) => x,
        Err(e) => {
            v.push(format!("a presentation of the bundle does not verify: {e}"));
            return v;
        }
    };
    checked.presentation = true;
    for (name, red, truth) in [
        ("presentation.sent", &shown.sent, &t[ADir::Sent as usize]),
        (
            "presentation.received",
            &shown.received,
            &t[ADir::Received as usize],
        ),
    ] {
        let revealed = red
            .revealed()
            .flat_map(|(r, bytes)| (r.start as usize..r.end as usize).zip(bytes.iter().copied()));
        compare(name, truth, red.len() as usize, revealed, &mut v);
    }
    v
}

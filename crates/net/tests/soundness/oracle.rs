//! The oracle: in an accepted session every revealed byte is the true byte
//! at the same offset in the same direction, and every length is the true
//! length, in the verifier's output, in its attestation (lengths and the
//! plaintext each signed leaf commits to) and in any presentation; and every
//! verified JSON path is true of the true body ([`check_json`]).
//!
//! The truth is what the peers would accept of the transcript the verifier
//! kept (see [`super::session::truth`]): the honest session's data, cut
//! where the prover's `Close` cut the server's records or where a client
//! record stops authenticating at its position.

use super::pipeline::Accepted;
use super::plan::Attempt;
use super::session::{truth, Session, TrueBody};
use webproof_attestation::{
    commit::leaf_hash, verify_presentation, Direction as ADir, SignedAttestation, SigningKey,
};
use webproof_proxy::attest::AttestationBundle;
use webproof_proxy::json::VerifiedJson;
use webproof_proxy::Direction;

/// What the oracle checked beyond the output.
#[derive(Default, Debug)]
pub struct Checked {
    pub attestation: bool,
    pub presentation: bool,
    /// The verifier kept less than the whole session (a `Close` cut or
    /// client records that stop authenticating): allowed, reported.
    pub truncated: bool,
    /// Verified JSON paths checked.
    pub json: usize,
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
    // Sent bytes the output says were proven free of CR and LF: truly
    // free of both; and the request ends the verifier fixes with them: a
    // prefix of those its rule fixes on the whole true request.
    for r in &acc.output.sent_crlf_free {
        if t[0]
            .get(r.start..r.end)
            .is_none_or(|b| b.iter().any(|&b| b == b'\r' || b == b'\n'))
        {
            v.push(format!(
                "sent {}..{} is said free of line ends: {:?}",
                r.start,
                r.end,
                t[0].get(r.start..r.end).map(String::from_utf8_lossy)
            ));
        }
    }
    let whole: Vec<Option<u8>> = t[0].iter().map(|&b| Some(b)).collect();
    let true_ends = webproof_disclosure::exchange::framed_request_ends(&whole, &[]);
    let ends = webproof_disclosure::exchange::framed_request_ends(
        &acc.output.sent.view(),
        &acc.output.sent_crlf_free,
    );
    if ends.len() > true_ends.len() || ends[..] != true_ends[..ends.len()] {
        v.push(format!(
            "request ends {ends:?}, the true requests end at {true_ends:?}"
        ));
    }
    // JSON paths: each verified path true of the true body.
    checked.json += acc.output.json.len();
    for (i, j) in acc.output.json.iter().enumerate() {
        let body = acc.plan.json.get(i).map(|c| c.body);
        if let Err(e) = check_json(s, &t, j, body) {
            v.push(format!(
                "verified JSON {i} ({:?} {:?}): {e}",
                j.direction, j.path
            ));
        }
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
    let Ok(webproof_proxy::attest::Presented {
        presentation: p, ..
    }) = bundle.present(&[webproof_proxy::http::RevealItem::All], true)
    else {
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

/// A JSON value of the true body: its span in the body's text (chunk
/// framing removed) and its members. Parsed here, independently of the
/// verifier's walk; strings are decoded by serde_json.
struct Node {
    span: (usize, usize),
    kind: NodeKind,
}

enum NodeKind {
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    Scalar,
}

/// Parse the (valid) JSON text `t` at `*p`.
fn node(t: &[u8], p: &mut usize) -> Result<Node, String> {
    let ws = |p: &mut usize| {
        while t.get(*p).is_some_and(|b| b" \t\r\n".contains(b)) {
            *p += 1;
        }
    };
    // A string at `*p`: its span, quotes included.
    let string = |p: &mut usize| -> Result<(usize, usize), String> {
        let start = *p;
        *p += 1;
        loop {
            match t.get(*p) {
                Some(b'"') => {
                    *p += 1;
                    return Ok((start, *p));
                }
                Some(b'\\') => *p += 2,
                Some(_) => *p += 1,
                None => return Err("unterminated string".into()),
            }
        }
    };
    ws(p);
    let start = *p;
    let kind = match t.get(*p) {
        Some(b'{') => {
            *p += 1;
            let mut members = Vec::new();
            loop {
                ws(p);
                if t.get(*p) == Some(&b'}') {
                    *p += 1;
                    break;
                }
                let (a, b) = string(p)?;
                let key: String =
                    serde_json::from_slice(&t[a..b]).map_err(|e| format!("a key: {e}"))?;
                ws(p);
                *p += 1; // ':'
                let v = node(t, p)?;
                members.push((key, v));
                ws(p);
                if t.get(*p) == Some(&b',') {
                    *p += 1;
                }
            }
            NodeKind::Object(members)
        }
        Some(b'[') => {
            *p += 1;
            let mut items = Vec::new();
            loop {
                ws(p);
                if t.get(*p) == Some(&b']') {
                    *p += 1;
                    break;
                }
                items.push(node(t, p)?);
                ws(p);
                if t.get(*p) == Some(&b',') {
                    *p += 1;
                }
            }
            NodeKind::Array(items)
        }
        Some(b'"') => {
            string(p)?;
            NodeKind::Scalar
        }
        Some(_) => {
            while t.get(*p).is_some_and(|b| !b" \t\r\n,:[]{}\"".contains(b)) {
                *p += 1;
            }
            NodeKind::Scalar
        }
        None => return Err("unexpected end".into()),
    };
    Ok(Node {
        span: (start, *p),
        kind,
    })
}

/// Check one verified JSON path against the true body of its direction:
/// the claim's body is the true body and the verifier kept it whole, the
/// path resolves in it (object keys, each present exactly once; canonical
/// decimal indices) to a value at exactly the verified offsets, whose text
/// is the verified text and means (serde_json) what the value at that path
/// of the whole body means.
fn check_json(
    s: &Session,
    t: &[Vec<u8>; 2],
    j: &VerifiedJson,
    claimed_body: Option<webproof_proxy::disclosure::Range>,
) -> Result<(), String> {
    let TrueBody { raw, data } = match (&s.body, j.direction) {
        (Some(b), Direction::Received) => b.clone(),
        _ => return Err("there is no JSON body in this direction".into()),
    };
    if claimed_body != Some(raw) {
        return Err(format!(
            "the claim's body {claimed_body:?} is not the true body {raw:?}"
        ));
    }
    let truth = &t[j.direction as usize];
    if raw.end > truth.len() {
        return Err(format!(
            "the true body ends at {}, the verifier kept {} bytes",
            raw.end,
            truth.len()
        ));
    }
    // The body's text and each text byte's offset in the direction.
    let offsets: Vec<usize> = data.iter().flat_map(|r| r.start..r.end).collect();
    let text: Vec<u8> = offsets.iter().map(|&o| truth[o]).collect();
    let whole: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| format!("the true body is not JSON: {e}"))?;
    let mut p = 0;
    let mut at = node(&text, &mut p)?;
    let mut meaning = &whole;
    let parts: Vec<&str> = if j.path.is_empty() {
        Vec::new()
    } else {
        j.path.split('.').collect()
    };
    for part in parts {
        at = match at.kind {
            NodeKind::Object(members) => {
                let mut hits: Vec<Node> = members
                    .into_iter()
                    .filter(|(k, _)| k == part)
                    .map(|(_, v)| v)
                    .collect();
                if hits.len() != 1 {
                    return Err(format!("key {part:?} occurs {} times", hits.len()));
                }
                meaning = &meaning[part];
                hits.remove(0)
            }
            NodeKind::Array(mut items) => {
                let canonical = !part.is_empty()
                    && part.bytes().all(|b| b.is_ascii_digit())
                    && (part == "0" || !part.starts_with('0'));
                let i = part
                    .parse::<usize>()
                    .ok()
                    .filter(|&i| canonical && i < items.len())
                    .ok_or_else(|| {
                        format!("{part:?} is not an index of an array of {}", items.len())
                    })?;
                meaning = &meaning[i];
                items.swap_remove(i)
            }
            NodeKind::Scalar => return Err(format!("the path goes below a scalar at {part:?}")),
        };
    }
    let (a, b) = at.span;
    let want = webproof_proxy::disclosure::Range::new(offsets[a], offsets[b - 1] + 1);
    if j.value != want {
        return Err(format!(
            "the value is at {}..{} of the true data, not {}..{}",
            want.start, want.end, j.value.start, j.value.end
        ));
    }
    if j.value_text.as_bytes() != &text[a..b] {
        return Err(format!(
            "the value text {:?} is not the true {:?}",
            j.value_text,
            String::from_utf8_lossy(&text[a..b])
        ));
    }
    let value: serde_json::Value =
        serde_json::from_slice(&text[a..b]).map_err(|e| format!("the value is not JSON: {e}"))?;
    if &value != meaning {
        return Err(format!(
            "the value means {value}, the path's true value is {meaning}"
        ));
    }
    Ok(())
}

/// The JSON oracle catches lies about a path (for the harness's own test).
pub fn json_lies_are_caught(
    s: &Session,
    truth: &[Vec<u8>; 2],
    honest: &VerifiedJson,
    body: webproof_proxy::disclosure::Range,
) {
    assert_eq!(check_json(s, truth, honest, Some(body)), Ok(()));
    let mut lies = Vec::new();
    let mut l = honest.clone();
    l.value.start += 1;
    lies.push((l, Some(body)));
    let mut l = honest.clone();
    l.value_text.push(' ');
    lies.push((l, Some(body)));
    let mut l = honest.clone();
    l.path.push_str(".0");
    lies.push((l, Some(body)));
    let mut l = honest.clone();
    l.direction = Direction::Sent;
    lies.push((l, Some(body)));
    lies.push((
        honest.clone(),
        Some(webproof_proxy::disclosure::Range::new(
            body.start + 1,
            body.end,
        )),
    ));
    let mut short = truth.clone();
    short[1].truncate(body.end - 1);
    assert!(check_json(s, &short, honest, Some(body)).is_err());
    for (l, b) in lies {
        assert!(check_json(s, truth, &l, b).is_err(), "{l:?} passed");
    }
}

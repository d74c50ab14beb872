//! The zero-knowledge path of proxy mode: from this crate's [`Statement`] and
//! [`Disclosure`] to the proof of `webproof_tlsproof`, and back to the
//! verifier's view of the application data.
//!
//! Before the proof the prover sends a [`ZkPlan`]: per record how many bytes
//! of it are application data and its real content type (TLS 1.3 hides it
//! inside the encryption), the application-data ranges it discloses, and for
//! TLS 1.2 the client Finished verify_data. None of this is trusted: the
//! proof opens every TLS 1.3 record's content-type byte and padding, and
//! every byte of records that are not application data (tickets, alerts), so
//! the verifier checks the layout and the record-layer rules itself. A
//! direction disclosed whole takes the fast path: its traffic key is opened
//! (proven derived from the handshake) and the verifier decrypts and
//! authenticates its records itself.

use crate::aead::{RecordCipher, EXPLICIT_NONCE_LEN, TAG_LEN};
use crate::disclosure::{normalize, Disclosure, Range};
use crate::error::{ProxyError, Result};
use crate::keys::TrafficKeys;
use crate::record::{content_type, hex_bytes};
use crate::statement::{OpenedRecord, PublicInputs, Statement, Witness};
use crate::suite::{AeadAlg, CipherSuite, HashAlg, TlsVersion};
use crate::verify::{assemble, AppData};
use serde::{Deserialize, Serialize};
use webproof_attestation::commit::{leaf_header, BLINDER_LEN, LEAF_BLINDER_OFFSET};
use webproof_attestation::LeafRange;
use webproof_tlsproof as tp;

/// What the prover declares about one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordLayout {
    /// Bytes of content before the TLS 1.3 content type and padding (all of
    /// the plaintext in TLS 1.2).
    pub data_len: usize,
    /// The real content type.
    pub content_type: u8,
}

/// The prover's announcement before the proof.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZkPlan {
    /// One per statement record, in [`Statement::records`] order.
    pub layouts: Vec<RecordLayout>,
    /// The application-data ranges disclosed.
    pub disclosure: Disclosure,
    /// TLS 1.2: the client Finished verify_data.
    #[serde(with = "hex_bytes")]
    pub client_verify_data: Vec<u8>,
    /// Transcript commitments for an attestation: the leaves (ranges of
    /// application data, sent then received, each partitioning its
    /// direction) whose blinded hashes the proof outputs. Empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commitments: Vec<LeafRange>,
}

/// The verifier's view after a successful proof: application data with
/// undisclosed bytes as `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialAppData {
    /// Sent data, in order.
    pub sent: Vec<Option<u8>>,
    /// Received data, in order.
    pub received: Vec<Option<u8>>,
    /// Whether the server sent close_notify.
    pub server_close_notify: bool,
    /// A fatal alert from the server, if any.
    pub server_alert: Option<u8>,
}

fn aead(suite: CipherSuite) -> tp::Aead {
    match suite.aead() {
        AeadAlg::Aes128Gcm => tp::Aead::Aes128Gcm,
        AeadAlg::Aes256Gcm => tp::Aead::Aes256Gcm,
        AeadAlg::ChaCha20Poly1305 => tp::Aead::ChaCha20Poly1305,
    }
}

fn hash(suite: CipherSuite) -> tp::HashAlg {
    match suite.hash() {
        HashAlg::Sha256 => tp::HashAlg::Sha256,
        HashAlg::Sha384 => tp::HashAlg::Sha384,
    }
}

fn bad(detail: impl Into<String>) -> ProxyError {
    ProxyError::Malformed {
        what: "proof plan",
        detail: detail.into(),
    }
}

/// The encrypted part of a record's payload: no explicit nonce, no tag.
fn ciphertext(suite: CipherSuite, payload: &[u8]) -> Result<(Option<[u8; 8]>, Vec<u8>)> {
    let explicit =
        suite.version() == TlsVersion::Tls12 && suite.aead() != AeadAlg::ChaCha20Poly1305;
    let head = if explicit { EXPLICIT_NONCE_LEN } else { 0 };
    if payload.len() < head + TAG_LEN {
        return Err(bad("a record is shorter than its nonce and tag"));
    }
    let nonce = explicit.then(|| payload[..8].try_into().expect("8 bytes"));
    Ok((nonce, payload[head..payload.len() - TAG_LEN].to_vec()))
}

fn tp_record(suite: CipherSuite, seq: u64, payload: &[u8]) -> Result<tp::Record> {
    let (explicit_nonce, ciphertext) = ciphertext(suite, payload)?;
    Ok(tp::Record {
        seq,
        explicit_nonce,
        ciphertext,
    })
}

/// Prover side: the plan for `disclosure`, from the records it opened itself.
pub fn plan(
    statement: &Statement,
    opened: &[OpenedRecord],
    disclosure: &Disclosure,
    witness: &Witness,
) -> Result<ZkPlan> {
    if opened.len() != statement.records.len() {
        return Err(bad("one opened record per statement record is needed"));
    }
    let layouts = opened
        .iter()
        .map(|o| RecordLayout {
            data_len: o.data.len(),
            content_type: o.content_type,
        })
        .collect();
    let client_verify_data = match (&statement.public, witness) {
        (
            PublicInputs::Tls12 {
                handshake_messages, ..
            },
            Witness::Tls12 { master_secret },
        ) => {
            let h = statement.suite.hash();
            crate::keys::tls12_finished(
                h,
                master_secret,
                "client finished",
                &h.hash(handshake_messages),
            )
        }
        _ => Vec::new(),
    };
    Ok(ZkPlan {
        layouts,
        disclosure: Disclosure {
            sent: normalize(disclosure.sent.clone()),
            received: normalize(disclosure.received.clone()),
        },
        client_verify_data,
        commitments: Vec::new(),
    })
}

/// The witness of the ZK statement.
pub fn witness(w: &Witness) -> tp::Witness {
    match w {
        Witness::Tls13 { handshake_secret } => tp::Witness::new(handshake_secret.clone()),
        Witness::Tls12 { master_secret } => tp::Witness::new(master_secret.clone()),
    }
}

/// The witness with the blinders of `plan.commitments` (one per leaf, in
/// the plan's order).
pub fn witness_with_blinders(
    w: &Witness,
    plan: &ZkPlan,
    blinders: &[[u8; BLINDER_LEN]],
) -> Result<tp::Witness> {
    if blinders.len() != plan.commitments.len() {
        return Err(bad("one blinder per committed leaf is needed"));
    }
    let mut out = witness(w);
    for (leaf, b) in plan.commitments.iter().zip(blinders) {
        match leaf.direction {
            webproof_attestation::Direction::Sent => out.sent_blinders.push(b.to_vec()),
            webproof_attestation::Direction::Received => out.recv_blinders.push(b.to_vec()),
        }
    }
    Ok(out)
}

/// The leaf hashes the proof established, in the plan's leaf order (sent
/// leaves first): what the verifier's attestation root is built from.
pub fn leaf_hashes(proven: &tp::Proven) -> Vec<[u8; 32]> {
    proven
        .sent
        .commitments
        .iter()
        .chain(&proven.recv.commitments)
        .copied()
        .collect()
}

/// One direction's leaves as ZK commitments: the public part of each leaf
/// header, the blinder, then the leaf's application data mapped onto the
/// records (`record_data[k]` = application-data bytes of the direction's
/// k-th record, 0 for other records).
fn leaf_commitments(
    leaves: &[LeafRange],
    direction: webproof_attestation::Direction,
    record_data: &[usize],
) -> Result<Vec<tp::Commitment>> {
    let total: usize = record_data.iter().sum();
    let mut out = Vec::new();
    let mut expect = 0usize;
    for leaf in leaves.iter().filter(|l| l.direction == direction) {
        let (start, end) = (leaf.start as usize, leaf.end as usize);
        if start != expect || end <= start || end > total {
            return Err(bad(
                "committed leaves must partition each direction's application data in order",
            ));
        }
        expect = end;
        let header = leaf_header(direction, leaf.start, leaf.end, &[0; BLINDER_LEN]);
        let mut spans = Vec::new();
        let mut offset = 0usize;
        for (k, &len) in record_data.iter().enumerate() {
            let lo = start.max(offset);
            let hi = end.min(offset + len);
            if lo < hi {
                spans.push((k, lo - offset..hi - offset));
            }
            offset += len;
        }
        out.push(tp::Commitment {
            prefix: header[..LEAF_BLINDER_OFFSET].to_vec(),
            blinder_len: BLINDER_LEN,
            spans,
        });
    }
    if expect != total && !out.is_empty() {
        return Err(bad("committed leaves must cover all application data"));
    }
    Ok(out)
}

/// Per direction: the statement records' indices, in order.
fn by_direction(statement: &Statement) -> [Vec<usize>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for (i, r) in statement.records.iter().enumerate() {
        out[r.record.direction as usize].push(i);
    }
    out
}

/// Both sides: the ZK statement for `plan`. Checks the plan's shape against
/// the recorded transcript (the proof then checks its content).
pub fn zk_statement(statement: &Statement, plan: &ZkPlan) -> Result<tp::Statement> {
    let suite = statement.suite;
    if plan.layouts.len() != statement.records.len() {
        return Err(bad("the plan has a layout for another number of records"));
    }
    let tls13 = suite.version() == TlsVersion::Tls13;
    let handshake = match &statement.public {
        PublicInputs::Tls13 {
            th_hello,
            th_server_finished,
            client_hs_traffic,
            server_hs_traffic,
        } => tp::Handshake::Tls13(tp::Tls13Handshake {
            hash: hash(suite),
            hello_hash: th_hello.clone(),
            finished_hash: th_server_finished.clone(),
            client_handshake_secret: client_hs_traffic.clone(),
            server_handshake_secret: server_hs_traffic.clone(),
        }),
        PublicInputs::Tls12 {
            client_random,
            server_random,
            handshake_messages,
            tickets,
            client_finished,
            server_finished,
        } => {
            let h = suite.hash();
            let vd: [u8; 12] = plan
                .client_verify_data
                .as_slice()
                .try_into()
                .map_err(|_| bad("TLS 1.2 needs the 12-byte client verify_data"))?;
            let mut covers = handshake_messages.clone();
            covers.extend_from_slice(&[crate::handshake::msg_type::FINISHED, 0, 0, 12]);
            covers.extend_from_slice(&vd);
            covers.extend_from_slice(tickets);
            let random = |v: &[u8]| -> Result<[u8; 32]> {
                v.try_into().map_err(|_| bad("randoms are 32 bytes"))
            };
            tp::Handshake::Tls12(tp::Tls12Handshake {
                hash: hash(suite),
                client_random: random(client_random)?,
                server_random: random(server_random)?,
                client_finished_hash: h.hash(handshake_messages),
                server_finished_hash: h.hash(&covers),
                client_verify_data: vd,
                client_finished: tp_record(suite, 0, &client_finished.payload)?,
                server_finished: tp_record(suite, 0, &server_finished.payload)?,
            })
        }
    };
    let dirs = by_direction(statement);
    let mut directions = Vec::with_capacity(2);
    for (d, indices) in dirs.iter().enumerate() {
        let ranges = if d == 0 {
            &plan.disclosure.sent
        } else {
            &plan.disclosure.received
        };
        let mut records = Vec::with_capacity(indices.len());
        let mut record_data = Vec::with_capacity(indices.len());
        let mut spans: Vec<(usize, core::ops::Range<usize>)> = Vec::new();
        let mut app_offset = 0usize;
        let mut app_total = 0usize;
        for (k, &i) in indices.iter().enumerate() {
            let sr = &statement.records[i];
            let rec = tp_record(suite, sr.seq, &sr.record.payload)?;
            let layout = plan.layouts[i];
            let ct_len = rec.ciphertext.len();
            let tail = if tls13 { 1 } else { 0 };
            if layout.data_len + tail > ct_len {
                return Err(bad("a record's declared data is longer than the record"));
            }
            if !tls13 && layout.content_type != sr.record.content_type {
                return Err(bad("TLS 1.2 content types are not hidden"));
            }
            if tls13 {
                // Content type and padding are always opened.
                spans.push((k, layout.data_len..ct_len));
            }
            if layout.content_type == content_type::APPLICATION_DATA {
                for r in ranges {
                    let lo = r.start.max(app_offset);
                    let hi = r.end.min(app_offset + layout.data_len);
                    if lo < hi {
                        spans.push((k, lo - app_offset..hi - app_offset));
                    }
                }
                app_offset += layout.data_len;
                app_total += layout.data_len;
                record_data.push(layout.data_len);
            } else {
                record_data.push(0);
                // Tickets and alerts are opened whole, so the verifier can apply the record-layer rules.
                spans.push((k, 0..layout.data_len));
            }
            records.push(rec);
        }
        if ranges.iter().any(|r| r.end > app_total) {
            return Err(bad("a disclosed range goes past the application data"));
        }
        let whole = ranges.len() == 1 && ranges[0] == Range::new(0, app_total)
            || app_total == 0 && ranges.is_empty();
        let disclosure = if whole && !records.is_empty() {
            tp::Disclosure::Key
        } else {
            tp::Disclosure::Ranges(spans)
        };
        let which = if d == 0 {
            webproof_attestation::Direction::Sent
        } else {
            webproof_attestation::Direction::Received
        };
        let commitments = leaf_commitments(&plan.commitments, which, &record_data)?;
        directions.push(tp::Direction {
            disclosure,
            commitments,
            ..tp::Direction::new(records)
        });
    }
    let sent_first = plan.commitments.windows(2).all(|w| {
        !(w[0].direction == webproof_attestation::Direction::Received
            && w[1].direction == webproof_attestation::Direction::Sent)
    });
    if !sent_first {
        return Err(bad("committed leaves must be sent first, then received"));
    }
    let recv = directions.pop().expect("two directions");
    let sent = directions.pop().expect("two directions");
    Ok(tp::Statement {
        aead: aead(suite),
        handshake,
        sent,
        recv,
    })
}

/// Verifier side, after the proof succeeded: check the declared layout
/// against what the proof opened, apply the record-layer rules, and build
/// the application data with hidden bytes as `None`.
pub fn assemble_proven(
    statement: &Statement,
    plan: &ZkPlan,
    proven: &tp::Proven,
) -> Result<PartialAppData> {
    let suite = statement.suite;
    let tls13 = suite.version() == TlsVersion::Tls13;
    let dirs = by_direction(statement);
    // For the record-layer rules: every record with its real type; the
    // content of application data is not needed for them.
    let mut for_rules: Vec<OpenedRecord> = Vec::with_capacity(statement.records.len());
    let mut views: [Vec<Option<u8>>; 2] = [Vec::new(), Vec::new()];
    let mut by_key = [false, false];
    for (d, indices) in dirs.iter().enumerate() {
        let proof = if d == 0 { &proven.sent } else { &proven.recv };
        match &proof.disclosed {
            tp::DirectionOutput::Key { key, iv } => {
                by_key[d] = true;
                let cipher = RecordCipher::new(
                    suite,
                    TrafficKeys {
                        key: key.clone(),
                        iv: iv.clone(),
                    },
                )?;
                for &i in indices {
                    let sr = &statement.records[i];
                    let o = cipher
                        .open(sr.seq, &sr.record)
                        .map_err(|_| ProxyError::Decrypt {
                            direction: sr.record.direction,
                            index: sr.index,
                            seq: sr.seq,
                        })?;
                    if o.content_type != plan.layouts[i].content_type
                        || o.data.len() != plan.layouts[i].data_len
                    {
                        return Err(bad("a record's declared layout does not match its content"));
                    }
                    if o.content_type == content_type::APPLICATION_DATA {
                        views[d].extend(o.data.iter().map(|&b| Some(b)));
                    }
                    for_rules.push(OpenedRecord {
                        direction: sr.record.direction,
                        index: sr.index,
                        seq: sr.seq,
                        content_type: o.content_type,
                        data: if o.content_type == content_type::APPLICATION_DATA {
                            Vec::new()
                        } else {
                            o.data
                        },
                    });
                }
            }
            tp::DirectionOutput::Bytes(bytes) => {
                for (k, &i) in indices.iter().enumerate() {
                    let sr = &statement.records[i];
                    let layout = plan.layouts[i];
                    let rec = &bytes[k];
                    if tls13 {
                        // The opened tail must be the declared type followed by zero padding.
                        let tail: Option<Vec<u8>> =
                            rec[layout.data_len..].iter().copied().collect();
                        let tail =
                            tail.ok_or_else(|| bad("a record's content type was not opened"))?;
                        if tail.first() != Some(&layout.content_type)
                            || layout.content_type == 0
                            || tail[1..].iter().any(|&b| b != 0)
                        {
                            return Err(bad(
                                "a record's content type or padding differs from the plan",
                            ));
                        }
                    }
                    let data = &rec[..layout.data_len];
                    let content = if layout.content_type == content_type::APPLICATION_DATA {
                        views[d].extend_from_slice(data);
                        Vec::new()
                    } else {
                        data.iter()
                            .copied()
                            .collect::<Option<Vec<u8>>>()
                            .ok_or_else(|| bad("a non-application record was not opened whole"))?
                    };
                    for_rules.push(OpenedRecord {
                        direction: sr.record.direction,
                        index: sr.index,
                        seq: sr.seq,
                        content_type: layout.content_type,
                        data: content,
                    });
                }
            }
        }
    }
    // Rules in transcript order per direction (assemble checks per direction).
    for_rules.sort_by_key(|r| (r.direction as usize, r.index));
    let AppData {
        server_close_notify,
        server_alert,
        ..
    } = assemble(suite.version(), &for_rules)?;
    // Outside the fast path, the opened bytes must be exactly the disclosed ranges.
    for (d, ranges) in [&plan.disclosure.sent, &plan.disclosure.received]
        .into_iter()
        .enumerate()
    {
        if by_key[d] {
            continue;
        }
        for (pos, b) in views[d].iter().enumerate() {
            let want = ranges.iter().any(|r| r.start <= pos && pos < r.end);
            if want != b.is_some() {
                return Err(bad("the opened bytes are not the disclosed ranges"));
            }
        }
    }
    let [sent, received] = views;
    Ok(PartialAppData {
        sent,
        received,
        server_close_notify,
        server_alert,
    })
}

/// The verifier's output for a session proven in zero knowledge.
pub fn zk_output(
    info: &crate::verify::SessionInfo,
    view: &PartialAppData,
) -> Result<crate::output::VerifierOutput> {
    let data = crate::disclosure::DisclosedData::from_view;
    Ok(crate::output::output(
        info,
        crate::output::ProofKind::Zk,
        data(&view.sent),
        data(&view.received),
        view.server_close_notify,
        view.server_alert,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_attestation::Direction as D;

    fn leaf(direction: D, start: u32, end: u32) -> LeafRange {
        LeafRange {
            direction,
            start,
            end,
        }
    }

    /// Leaves map onto the records' application data (a non-data record in
    /// between is skipped), with the public header of their range.
    #[test]
    fn leaves_map_onto_records() {
        let data = [5, 0, 7];
        let c = leaf_commitments(
            &[leaf(D::Received, 0, 4), leaf(D::Received, 4, 12)],
            D::Received,
            &data,
        )
        .unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].spans, vec![(0, 0..4)]);
        assert_eq!(c[1].spans, vec![(0, 4..5), (2, 0..7)]);
        assert_eq!(c[1].blinder_len, BLINDER_LEN);
        let header = leaf_header(D::Received, 4, 12, &[0; BLINDER_LEN]);
        assert_eq!(c[1].prefix, header[..LEAF_BLINDER_OFFSET].to_vec());
        // Leaves of the other direction are not this direction's.
        assert!(
            leaf_commitments(&[leaf(D::Sent, 0, 12)], D::Received, &data)
                .unwrap()
                .is_empty()
        );
    }

    /// A prover may not commit to a layout that skips, repeats or invents
    /// bytes: every leaf set must partition the direction in order.
    #[test]
    fn layouts_that_do_not_partition_are_refused() {
        let data = [5, 7];
        for bad in [
            vec![leaf(D::Sent, 1, 12)],                      // skips the first byte
            vec![leaf(D::Sent, 0, 6), leaf(D::Sent, 5, 12)], // overlap
            vec![leaf(D::Sent, 6, 12), leaf(D::Sent, 0, 6)], // out of order
            vec![leaf(D::Sent, 0, 13)],                      // past the end
            vec![leaf(D::Sent, 0, 6)],                       // leaves bytes out
            vec![leaf(D::Sent, 0, 0), leaf(D::Sent, 0, 12)], // empty leaf
        ] {
            assert!(leaf_commitments(&bad, D::Sent, &data).is_err(), "{bad:?}");
        }
    }
}

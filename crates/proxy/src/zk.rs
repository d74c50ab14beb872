//! The zero-knowledge path of proxy mode: from this crate's [`SessionStatement`] and
//! [`Disclosure`] to the proof of `webproof_tlsproof`, and back to the
//! verifier's view of the application data.
//!
//! Before the proof the prover sends a [`ZkPlan`]. The verifier takes from
//! it only what it cannot compute from its own recording, and every public
//! value of the ZK statement has one source:
//!
//! | value | source |
//! |---|---|
//! | records, their order, lengths, sequence numbers, explicit nonces | the verifier's recording (the `Close` cut included) |
//! | TLS 1.2 content type and plaintext length of every record | the recording: the outer type is the real type, the plaintext is the whole ciphertext ([`record_layouts`]) |
//! | TLS 1.3 content type and plaintext length of every record | the prover's [`ZkPlan::layouts`], *pinned by the proof*: the content-type byte and the padding after it are always opened and must be one non-zero byte followed by zeros, which singles out one position ([`assemble_proven`]) |
//! | transcript hashes, randoms, handshake messages | the recording ([`crate::verify::check_handshake`]) |
//! | TLS 1.2 client Finished verify_data | the prover; the proof derives it from the master secret and asserts it equals both the plan's value and the recorded, encrypted client Finished |
//! | TLS 1.3 handshake traffic secrets | the prover; the verifier decrypts and checks the server's handshake flight with them, and the proof derives them from HS |
//! | disclosed ranges | the prover's choice, refused unless canonical: sorted, non-empty, disjoint, not adjacent, within the application data, at most [`MAX_RANGES`] per direction ([`check_ranges`]) |
//! | commitment leaves | the prover's choice, refused unless they partition each direction in order, at most [`MAX_LEAVES`] |
//! | offsets of ranges and leaves in records | computed by the verifier from the layouts above |
//! | client record tags | the recording; on the ranges path the proof opens each client record's one-time MAC material from the bound key and [`crate::tags`] checks the recorded tags |
//!
//! Every length from the plan enters arithmetic only checked, and the
//! verifier's work is linear in the transcript plus the plan. A direction
//! disclosed whole takes the fast path: its traffic key is opened (proven
//! derived from the handshake) and the verifier decrypts and authenticates
//! its records itself.

use crate::aead::{RecordCipher, EXPLICIT_NONCE_LEN, TAG_LEN};
use crate::disclosure::{normalize, Disclosure, Range};
use crate::error::{ProxyError, Result};
use crate::json::{JsonClaim, STRING_FORBIDDEN, TOKEN_FORBIDDEN};
use crate::keys::TrafficKeys;
use crate::record::{content_type, hex_bytes, Direction};
use crate::statement::{OpenedRecord, PublicInputs, SessionSecret, SessionStatement};
use crate::suite::{AeadAlg, CipherSuite, HashAlg, TlsVersion};
use crate::verify::{assemble, AppData};
use serde::{Deserialize, Serialize};
use webproof_attestation::commit::BLINDER_LEN;
use webproof_attestation::LeafRange;
use webproof_tlsproof as tp;

// The canonical form of disclosed ranges is the disclosure layer's.
pub use crate::disclosure::{check_ranges, MAX_RANGES};
// The leaves' layout as commitments of the proof is the attestation glue's.
pub use webproof_disclosure::attest::{leaf_commitments, MAX_LEAVES};

/// One record's layout: how much of its plaintext is content, and its real
/// content type. In TLS 1.2 the verifier computes it from its recording; in
/// TLS 1.3 the prover declares it and the proof pins it.
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
    /// TLS 1.3 only: one per statement record, in [`SessionStatement::records`]
    /// order (the content type and length hidden by the encryption). Empty
    /// for TLS 1.2, whose layouts the verifier takes from its recording.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layouts: Vec<RecordLayout>,
    /// The application-data ranges disclosed (canonical, see [`check_ranges`]).
    pub disclosure: Disclosure,
    /// TLS 1.2: the client Finished verify_data.
    #[serde(with = "hex_bytes")]
    pub client_verify_data: Vec<u8>,
    /// Transcript commitments for an attestation: the leaves (ranges of
    /// application data, sent then received, each partitioning its
    /// direction) whose blinded hashes the proof outputs. Empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commitments: Vec<LeafRange>,
    /// JSON path claims ([`crate::json`]): their hidden bytes become
    /// byte-class constraints of the statement, and the verifier checks
    /// each claim on its view after the proof.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json: Vec<JsonClaim>,
    /// Hidden ranges of the sent application data to prove free of CR and
    /// LF (sorted, disjoint, at most [`MAX_CRLF_FREE`]): the hidden bytes
    /// of the request heads
    /// ([`webproof_disclosure::exchange::hidden_head_bytes`]), so the
    /// verifier can fix where each request ends without seeing them and
    /// pair each response with its request. A byte-class constraint of the
    /// statement; a range the prover leaves out only leaves the pairing
    /// past it unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sent_crlf_free: Vec<Range>,
}

/// Most ranges [`ZkPlan::sent_crlf_free`] may hold: two per header line of
/// every request is far more than any session needs.
pub const MAX_CRLF_FREE: usize = 4096;

/// What a hidden request-head byte may not be.
const CRLF: [u8; 2] = [b'\n', b'\r'];

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
    /// Application-data bytes of every statement record, in statement order
    /// (0 for other records): where each record's plaintext sits in its
    /// direction's stream.
    pub record_data: Vec<usize>,
}

/// The suite's AEAD as the statement circuits name it.
pub(crate) fn aead(suite: CipherSuite) -> tp::Aead {
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

/// Bytes of a record's payload before its ciphertext (the TLS 1.2 explicit
/// nonce of AES-GCM).
fn explicit_nonce_len(suite: CipherSuite) -> usize {
    if suite.version() == TlsVersion::Tls12 && suite.aead() != AeadAlg::ChaCha20Poly1305 {
        EXPLICIT_NONCE_LEN
    } else {
        0
    }
}

/// Length of the encrypted part of a record's payload: no explicit nonce, no tag.
fn ciphertext_len(suite: CipherSuite, payload_len: usize) -> Result<usize> {
    payload_len
        .checked_sub(explicit_nonce_len(suite) + TAG_LEN)
        .ok_or_else(|| bad("a record is shorter than its nonce and tag"))
}

/// The encrypted part of a record's payload: no explicit nonce, no tag.
fn ciphertext(suite: CipherSuite, payload: &[u8]) -> Result<(Option<[u8; 8]>, Vec<u8>)> {
    let head = explicit_nonce_len(suite);
    let len = ciphertext_len(suite, payload.len())?;
    let nonce = (head > 0).then(|| payload[..8].try_into().expect("8 bytes"));
    Ok((nonce, payload[head..head + len].to_vec()))
}

fn tp_record(suite: CipherSuite, seq: u64, payload: &[u8]) -> Result<tp::SealedRecord> {
    let (explicit_nonce, ciphertext) = ciphertext(suite, payload)?;
    Ok(tp::SealedRecord {
        seq,
        explicit_nonce,
        ciphertext,
    })
}

/// The layout of every statement record, in statement order, as the
/// verifier establishes it. TLS 1.2: from the recording alone (a plan that
/// declares layouts is refused: nothing public is taken from the prover).
/// TLS 1.3: the prover's declaration, shaped so that it fits each record;
/// [`assemble_proven`] then checks it against the opened content type and
/// padding, which leaves exactly one possible value.
pub fn record_layouts(statement: &SessionStatement, plan: &ZkPlan) -> Result<Vec<RecordLayout>> {
    let suite = statement.suite;
    match suite.version() {
        TlsVersion::Tls12 => {
            if !plan.layouts.is_empty() {
                return Err(bad(
                    "a TLS 1.2 plan declares no record layouts: lengths and content types are public",
                ));
            }
            statement
                .records
                .iter()
                .map(|sr| {
                    Ok(RecordLayout {
                        data_len: ciphertext_len(suite, sr.record.payload.len())?,
                        content_type: sr.record.content_type,
                    })
                })
                .collect()
        }
        TlsVersion::Tls13 => {
            if plan.layouts.len() != statement.records.len() {
                return Err(bad(format!(
                    "the plan has {} record layouts for {} records",
                    plan.layouts.len(),
                    statement.records.len()
                )));
            }
            for (layout, sr) in plan.layouts.iter().zip(&statement.records) {
                let ct_len = ciphertext_len(suite, sr.record.payload.len())?;
                // The content type byte follows the data inside the record.
                if layout.data_len >= ct_len {
                    return Err(bad(format!(
                        "record {} of the {}: declared data ({} bytes) leaves no room for its content type ({} bytes encrypted)",
                        sr.index, sr.record.direction, layout.data_len, ct_len
                    )));
                }
                if layout.content_type == 0 {
                    return Err(bad("content type 0 does not exist"));
                }
            }
            Ok(plan.layouts.clone())
        }
    }
}

/// Prover side: the plan for `disclosure`, from the records it opened itself.
pub fn plan(
    statement: &SessionStatement,
    opened: &[OpenedRecord],
    disclosure: &Disclosure,
    witness: &SessionSecret,
) -> Result<ZkPlan> {
    if opened.len() != statement.records.len() {
        return Err(bad("one opened record per statement record is needed"));
    }
    let layouts = match statement.suite.version() {
        TlsVersion::Tls13 => opened
            .iter()
            .map(|o| RecordLayout {
                data_len: o.data.len(),
                content_type: o.content_type,
            })
            .collect(),
        TlsVersion::Tls12 => Vec::new(),
    };
    let client_verify_data = match (&statement.public, witness) {
        (
            PublicInputs::Tls12 {
                handshake_messages, ..
            },
            SessionSecret::Tls12 { master_secret },
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
        json: Vec::new(),
        sent_crlf_free: Vec::new(),
    })
}

/// The witness of the ZK statement.
pub fn witness(w: &SessionSecret) -> tp::Witness {
    match w {
        SessionSecret::Tls13 { handshake_secret } => tp::Witness::new(handshake_secret.clone()),
        SessionSecret::Tls12 { master_secret } => tp::Witness::new(master_secret.clone()),
    }
}

/// The witness with the blinders of `plan.commitments` (one per leaf, in
/// the plan's order).
pub fn witness_with_blinders(
    w: &SessionSecret,
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

/// Ranges of a direction's application data as record spans
/// `(k, range in record k)`, with `record_data[k]` the application-data
/// bytes of the direction's k-th record (0 for other records). `ranges` are
/// sorted and disjoint; one merge over records and ranges.
fn map_onto_records(
    ranges: &[Range],
    record_data: &[usize],
) -> Vec<(usize, core::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut next = 0usize;
    let mut offset = 0usize;
    for (k, &len) in record_data.iter().enumerate() {
        let end = offset + len;
        while next < ranges.len() && ranges[next].end <= offset {
            next += 1;
        }
        for r in ranges[next..].iter().take_while(|r| r.start < end) {
            let lo = r.start.max(offset);
            let hi = r.end.min(end);
            if lo < hi {
                out.push((k, lo - offset..hi - offset));
            }
        }
        offset = end;
    }
    out
}

/// [`ZkPlan::sent_crlf_free`] is sorted, disjoint, non-empty ranges within
/// the sent data's `total` bytes, at most [`MAX_CRLF_FREE`] of them.
fn check_crlf_free(ranges: &[Range], total: usize) -> Result<()> {
    if ranges.len() > MAX_CRLF_FREE {
        return Err(bad(format!(
            "the plan proves {} ranges free of line ends (at most {MAX_CRLF_FREE})",
            ranges.len()
        )));
    }
    let mut after = 0;
    for r in ranges {
        if r.start < after || r.end <= r.start || r.end > total {
            return Err(bad(
                "ranges proven free of line ends must be non-empty, sorted, disjoint and within the sent data",
            ));
        }
        after = r.end;
    }
    Ok(())
}

/// Per direction: the statement records' indices, in order.
fn by_direction(statement: &SessionStatement) -> [Vec<usize>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for (i, r) in statement.records.iter().enumerate() {
        out[r.record.direction as usize].push(i);
    }
    out
}

fn direction_of(d: usize) -> Direction {
    if d == 0 {
        Direction::Sent
    } else {
        Direction::Received
    }
}

/// Per direction: application-data bytes of each of its records (0 for
/// other records), and their sum.
fn direction_data(layouts: &[RecordLayout], indices: &[usize]) -> Result<(Vec<usize>, usize)> {
    let mut data = Vec::with_capacity(indices.len());
    let mut total = 0usize;
    for &i in indices {
        let n = if layouts[i].content_type == content_type::APPLICATION_DATA {
            layouts[i].data_len
        } else {
            0
        };
        total = total
            .checked_add(n)
            .ok_or_else(|| bad("application data length overflows"))?;
        data.push(n);
    }
    Ok((data, total))
}

/// Both sides: the ZK statement for `plan`. Checks the plan's shape against
/// the recorded transcript (the proof then checks its content).
pub fn zk_statement(statement: &SessionStatement, plan: &ZkPlan) -> Result<tp::Statement> {
    let suite = statement.suite;
    let layouts = record_layouts(statement, plan)?;
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
    if tls13 && !plan.client_verify_data.is_empty() {
        return Err(bad("a TLS 1.3 plan carries no client verify_data"));
    }
    if plan.commitments.len() > MAX_LEAVES {
        return Err(bad(format!(
            "{} commitment leaves (at most {MAX_LEAVES})",
            plan.commitments.len()
        )));
    }
    let sent_first = plan.commitments.windows(2).all(|w| {
        !(w[0].direction == webproof_attestation::Direction::Received
            && w[1].direction == webproof_attestation::Direction::Sent)
    });
    if !sent_first {
        return Err(bad("committed leaves must be sent first, then received"));
    }
    let dirs = by_direction(statement);
    let totals = [
        direction_data(&layouts, &dirs[0])?.1,
        direction_data(&layouts, &dirs[1])?.1,
    ];
    // Hidden bytes of JSON claims: [direction][strings, tokens].
    let json_hidden = crate::json::claim_constraints(&plan.json, totals)?;
    let mut directions = Vec::with_capacity(2);
    for (d, indices) in dirs.iter().enumerate() {
        let ranges = plan.disclosure.ranges(direction_of(d));
        let (record_data, app_total) = direction_data(&layouts, indices)?;
        check_ranges(ranges, app_total)?;
        let mut records = Vec::with_capacity(indices.len());
        let mut spans: Vec<(usize, core::ops::Range<usize>)> = Vec::new();
        // Ranges are sorted and disjoint: one merge over records and ranges.
        let mut next_range = 0usize;
        let mut app_offset = 0usize;
        for (k, &i) in indices.iter().enumerate() {
            let sr = &statement.records[i];
            let rec = tp_record(suite, sr.seq, &sr.record.payload)?;
            let layout = layouts[i];
            let ct_len = rec.ciphertext.len();
            if tls13 {
                // Content type and padding are always opened.
                spans.push((k, layout.data_len..ct_len));
            }
            if layout.content_type == content_type::APPLICATION_DATA {
                let end = app_offset + layout.data_len;
                while next_range < ranges.len() && ranges[next_range].end <= app_offset {
                    next_range += 1;
                }
                for r in ranges[next_range..].iter().take_while(|r| r.start < end) {
                    let lo = r.start.max(app_offset);
                    let hi = r.end.min(end);
                    if lo < hi {
                        spans.push((k, lo - app_offset..hi - app_offset));
                    }
                }
                app_offset = end;
            } else {
                // Tickets and alerts are opened whole, so the verifier can apply the record-layer rules.
                spans.push((k, 0..layout.data_len));
            }
            records.push(rec);
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
        // The client's records are the prover's: open their tag material so
        // the verifier checks their tags (`tags::check_client_tags`).
        let open_tag_material = d == 0 && matches!(disclosure, tp::Disclosure::Ranges(_));
        let mut byte_classes = Vec::new();
        for (list, forbidden) in json_hidden[d]
            .iter()
            .zip([&STRING_FORBIDDEN[..], &TOKEN_FORBIDDEN[..]])
        {
            if list.is_empty() {
                continue;
            }
            if matches!(disclosure, tp::Disclosure::Key) {
                return Err(bad(
                    "a JSON claim hides bytes of a direction disclosed whole",
                ));
            }
            byte_classes.push(tp::ByteClass {
                forbidden: forbidden.to_vec(),
                spans: map_onto_records(list, &record_data),
            });
        }
        if d == 0 && !plan.sent_crlf_free.is_empty() {
            check_crlf_free(&plan.sent_crlf_free, app_total)?;
            if matches!(disclosure, tp::Disclosure::Key) {
                return Err(bad(
                    "the plan proves hidden request bytes of a request revealed whole",
                ));
            }
            byte_classes.push(tp::ByteClass {
                forbidden: CRLF.to_vec(),
                spans: map_onto_records(&plan.sent_crlf_free, &record_data),
            });
        }
        directions.push(tp::DirectionStatement {
            disclosure,
            open_tag_material,
            byte_classes,
            commitments,
            ..tp::DirectionStatement::new(records)
        });
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

/// Verifier side, after the proof succeeded: check the layout against what
/// the proof opened, apply the record-layer rules, and build the
/// application data with hidden bytes as `None`. Every record contributes
/// exactly its plaintext: all of it in TLS 1.2, everything before the
/// opened content type in TLS 1.3.
pub fn assemble_proven(
    statement: &SessionStatement,
    plan: &ZkPlan,
    proven: &tp::Proven,
) -> Result<PartialAppData> {
    let suite = statement.suite;
    let tls13 = suite.version() == TlsVersion::Tls13;
    let layouts = record_layouts(statement, plan)?;
    let dirs = by_direction(statement);
    // For the record-layer rules: every record with its real type; the
    // content of application data is not needed for them.
    let mut for_rules: Vec<OpenedRecord> = Vec::with_capacity(statement.records.len());
    let mut views: [Vec<Option<u8>>; 2] = [Vec::new(), Vec::new()];
    let mut by_key = [false, false];
    let mut record_data = vec![0usize; statement.records.len()];
    for (d, indices) in dirs.iter().enumerate() {
        let proof = if d == 0 { &proven.sent } else { &proven.recv };
        let mut rule = |i: usize, content_type: u8, data: Vec<u8>| {
            let sr = &statement.records[i];
            if content_type == content_type::APPLICATION_DATA {
                record_data[i] = layouts[i].data_len;
            }
            for_rules.push(OpenedRecord {
                direction: sr.record.direction,
                index: sr.index,
                seq: sr.seq,
                content_type,
                data,
            });
        };
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
                    if o.content_type != layouts[i].content_type
                        || o.data.len() != layouts[i].data_len
                    {
                        return Err(bad("a record's declared layout does not match its content"));
                    }
                    let app = o.content_type == content_type::APPLICATION_DATA;
                    if app {
                        views[d].extend(o.data.iter().map(|&b| Some(b)));
                    }
                    rule(i, o.content_type, if app { Vec::new() } else { o.data });
                }
            }
            tp::DirectionOutput::Bytes(bytes) => {
                if bytes.len() != indices.len() {
                    return Err(bad("the proof opened another number of records"));
                }
                for (&i, rec) in indices.iter().zip(bytes) {
                    let sr = &statement.records[i];
                    let layout = layouts[i];
                    if rec.len() != ciphertext_len(suite, sr.record.payload.len())? {
                        return Err(bad("the proof opened a record of another length"));
                    }
                    if tls13 {
                        // The opened tail must be the declared type followed
                        // by zero padding: this pins `data_len` to the one
                        // position of the last non-zero byte.
                        let tail = rec
                            .get(layout.data_len..)
                            .filter(|t| !t.is_empty())
                            .ok_or_else(|| bad("a record's content type was not opened"))?;
                        if tail.iter().any(Option::is_none) {
                            return Err(bad("a record's content type was not opened"));
                        }
                        if tail[0] != Some(layout.content_type)
                            || layout.content_type == 0
                            || tail[1..].iter().any(|&b| b != Some(0))
                        {
                            return Err(bad(
                                "a record's content type or padding differs from the plan",
                            ));
                        }
                    } else if layout.data_len != rec.len() {
                        // record_layouts makes this so; the check keeps it so.
                        return Err(bad("a TLS 1.2 record's data is its whole plaintext"));
                    }
                    let data = &rec[..layout.data_len];
                    if layout.content_type == content_type::APPLICATION_DATA {
                        views[d].extend_from_slice(data);
                        rule(i, layout.content_type, Vec::new());
                    } else {
                        let content = data
                            .iter()
                            .copied()
                            .collect::<Option<Vec<u8>>>()
                            .ok_or_else(|| bad("a non-application record was not opened whole"))?;
                        rule(i, layout.content_type, content);
                    }
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
    // Outside the fast path, the opened bytes must be exactly the disclosed
    // ranges: one pass over the view and the (canonical) ranges.
    for (d, view) in views.iter().enumerate() {
        if by_key[d] {
            continue;
        }
        let ranges = plan.disclosure.ranges(direction_of(d));
        check_ranges(ranges, view.len())?;
        let mut pos = 0usize;
        for r in ranges {
            let hidden = view[pos..r.start].iter().all(Option::is_none);
            let shown = view[r.start..r.end].iter().all(Option::is_some);
            if !hidden || !shown {
                return Err(bad("the opened bytes are not the disclosed ranges"));
            }
            pos = r.end;
        }
        if view[pos..].iter().any(Option::is_some) {
            return Err(bad("the opened bytes are not the disclosed ranges"));
        }
    }
    let [sent, received] = views;
    Ok(PartialAppData {
        sent,
        received,
        server_close_notify,
        server_alert,
        record_data,
    })
}

/// The verifier's output for a session proven in zero knowledge, from its
/// recording (`transcript`, the one `statement` was built from) and the
/// view [`assemble_proven`] established.
pub fn zk_output(
    info: &crate::verify::SessionInfo,
    transcript: &crate::Recording,
    statement: &SessionStatement,
    view: &PartialAppData,
) -> Result<crate::output::VerifierOutput> {
    let data = crate::disclosure::DisclosedData::from_view;
    if view.record_data.len() != statement.records.len() {
        return Err(bad("the view does not belong to this statement"));
    }
    let mut record_data = crate::output::RecordData::new(transcript);
    for (sr, &n) in statement.records.iter().zip(&view.record_data) {
        record_data.set(sr.record.direction, sr.index, n)?;
    }
    crate::output::output(
        info,
        crate::output::ProofKind::Zk,
        data(&view.sent),
        data(&view.received),
        view.server_close_notify,
        view.server_alert,
        &record_data,
        &view.received,
    )
}

/// The 32-byte context the proof's Fiat–Shamir challenges are bound to
/// (`webproof_tlsproof`'s `prove`/`verify`):
/// `SHA-256("webproof proof context v1" || transcript_digest ||
/// SHA-256(plan as JSON))`, with `transcript_digest` the
/// [`crate::Recording::digest`] both parties confirmed at `CloseAck` and
/// `plan` the [`ZkPlan`] as the prover sent it and the verifier decoded it
/// (before any normalisation). Each party computes it from its own view; a
/// proof made for another session or another plan fails the verifier's
/// check.
pub fn proof_context(transcript_digest: &[u8; 32], plan: &ZkPlan) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let plan_hash = Sha256::digest(serde_json::to_vec(plan).expect("a plan serializes"));
    Sha256::new()
        .chain_update(b"webproof proof context v1")
        .chain_update(transcript_digest)
        .chain_update(plan_hash)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;
    use crate::statement::StatementRecord;

    fn record(direction: Direction, content_type: u8, payload_len: usize) -> Record {
        Record {
            direction,
            content_type,
            version: 0x0303,
            payload: vec![0xAB; payload_len],
        }
    }

    /// A statement with the given (direction, outer type, payload length)
    /// records; the handshake inputs are placeholders (the shape checks do
    /// not look at them).
    fn statement(suite: CipherSuite, records: &[(Direction, u8, usize)]) -> SessionStatement {
        let public = match suite.version() {
            TlsVersion::Tls13 => PublicInputs::Tls13 {
                th_hello: vec![0; 32],
                th_server_finished: vec![0; 32],
                client_hs_traffic: vec![0; 32],
                server_hs_traffic: vec![0; 32],
            },
            TlsVersion::Tls12 => PublicInputs::Tls12 {
                client_random: vec![0; 32],
                server_random: vec![0; 32],
                handshake_messages: vec![1, 2, 3],
                tickets: Vec::new(),
                client_finished: record(Direction::Sent, 22, 40),
                server_finished: record(Direction::Received, 22, 40),
            },
        };
        let mut counts = [0usize; 2];
        let records = records
            .iter()
            .map(|&(d, t, n)| {
                let index = counts[d as usize];
                counts[d as usize] += 1;
                StatementRecord {
                    record: record(d, t, n),
                    seq: index as u64 + 1,
                    index,
                }
            })
            .collect();
        SessionStatement {
            suite,
            public,
            records,
        }
    }

    fn plan12(disclosure: Disclosure) -> ZkPlan {
        ZkPlan {
            layouts: Vec::new(),
            disclosure,
            client_verify_data: vec![7; 12],
            commitments: Vec::new(),
            json: Vec::new(),
            sent_crlf_free: Vec::new(),
        }
    }

    const GCM12: CipherSuite = CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
    const GCM13: CipherSuite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    /// TLS 1.2 AES-GCM: explicit nonce and tag around the ciphertext.
    const OVERHEAD12: usize = EXPLICIT_NONCE_LEN + TAG_LEN;

    /// The review's critical finding: a TLS 1.2 prover declared a record's
    /// data shorter than the record, and the rest of the record vanished
    /// from the verified output. Layouts of TLS 1.2 now come from the
    /// recording: a plan that declares any is refused, and the verifier's
    /// own layouts cover every byte of every record.
    #[test]
    fn tls12_layouts_come_from_the_recording() {
        let part1 = br#"{"admin":false,"beta":"#.len();
        let part2 = br#"true}"#.len();
        let s = statement(
            GCM12,
            &[
                (Direction::Sent, 23, 30 + OVERHEAD12),
                (Direction::Received, 23, part1 + OVERHEAD12),
                (Direction::Received, 23, part2 + OVERHEAD12),
                (Direction::Received, 21, 2 + OVERHEAD12),
            ],
        );
        let honest = plan12(Disclosure {
            sent: vec![Range::new(0, 30)],
            received: vec![Range::new(0, 9)],
        });
        assert_eq!(
            record_layouts(&s, &honest).unwrap(),
            vec![
                RecordLayout {
                    data_len: 30,
                    content_type: 23
                },
                RecordLayout {
                    data_len: part1,
                    content_type: 23
                },
                RecordLayout {
                    data_len: part2,
                    content_type: 23
                },
                RecordLayout {
                    data_len: 2,
                    content_type: 21
                },
            ]
        );
        zk_statement(&s, &honest).unwrap();
        // The attack: shorten the first response record by `false,"beta":`.
        let mut forged = honest.clone();
        forged.layouts = record_layouts(&s, &honest).unwrap();
        forged.layouts[1].data_len = part1 - br#"false,"beta":"#.len();
        let err = zk_statement(&s, &forged).unwrap_err().to_string();
        assert!(err.contains("declares no record layouts"), "{err}");
        // Even the honest values are not taken from the prover.
        forged.layouts = record_layouts(&s, &honest).unwrap();
        assert!(zk_statement(&s, &forged).is_err());
        // The disclosure is checked against the true total (part1 + part2).
        let mut past = honest.clone();
        past.disclosure.received = vec![Range::new(0, part1 + part2 + 1)];
        assert!(zk_statement(&s, &past).is_err());
        past.disclosure.received = vec![Range::new(0, part1 + part2)];
        zk_statement(&s, &past).unwrap();
    }

    /// An opened TLS 1.2 record shorter or longer than its ciphertext
    /// cannot contribute part of itself to the view.
    #[test]
    fn every_record_contributes_exactly_its_plaintext() {
        let s = statement(
            GCM12,
            &[
                (Direction::Sent, 23, 4 + OVERHEAD12),
                (Direction::Received, 23, 6 + OVERHEAD12),
            ],
        );
        let plan = plan12(Disclosure {
            sent: vec![Range::new(0, 1)],
            received: vec![Range::new(0, 1)],
        });
        let out = |sent: Vec<Option<u8>>, recv: Vec<Option<u8>>| tp::Proven {
            sent: tp::DirectionProof {
                disclosed: tp::DirectionOutput::Bytes(vec![sent]),
                commitments: Vec::new(),
                tag_material: None,
            },
            recv: tp::DirectionProof {
                disclosed: tp::DirectionOutput::Bytes(vec![recv]),
                commitments: Vec::new(),
                tag_material: None,
            },
        };
        let honest = out(
            vec![Some(b'G'), None, None, None],
            vec![Some(b'H'), None, None, None, None, None],
        );
        let view = assemble_proven(&s, &plan, &honest).unwrap();
        assert_eq!(view.received.len(), 6);
        assert_eq!(view.record_data, vec![4, 6]);
        for bad in [
            out(vec![Some(b'G'), None, None], vec![Some(b'H'); 1]),
            out(vec![Some(b'G'), None, None, None], vec![Some(b'H'), None]),
            out(
                vec![Some(b'G'), None, None, None],
                vec![Some(b'H'), None, None, None, None, None, None],
            ),
            // Opened bytes that are not the disclosed ranges.
            out(
                vec![Some(b'G'), Some(b'E'), None, None],
                vec![Some(b'H'), None, None, None, None, None],
            ),
        ] {
            assert!(assemble_proven(&s, &plan, &bad).is_err());
        }
    }

    /// TLS 1.3 layouts are the prover's, but must leave room for the
    /// content type, and the opened tail pins them.
    #[test]
    fn tls13_layouts_are_pinned_by_the_opened_tail() {
        let s = statement(
            GCM13,
            &[
                (Direction::Sent, 23, 5 + TAG_LEN),
                (Direction::Received, 23, 8 + TAG_LEN),
            ],
        );
        let plan = |sent_len: usize, recv_len: usize| ZkPlan {
            layouts: vec![
                RecordLayout {
                    data_len: sent_len,
                    content_type: 23,
                },
                RecordLayout {
                    data_len: recv_len,
                    content_type: 23,
                },
            ],
            disclosure: Disclosure {
                sent: vec![Range::new(0, 1)],
                received: vec![Range::new(0, 1)],
            },
            client_verify_data: Vec::new(),
            commitments: Vec::new(),
            json: Vec::new(),
            sent_crlf_free: Vec::new(),
        };
        zk_statement(&s, &plan(4, 6)).unwrap();
        for (a, b) in [(5, 6), (4, 8), (usize::MAX, 6), (4, usize::MAX)] {
            assert!(zk_statement(&s, &plan(a, b)).is_err(), "{a} {b}");
        }
        let mut no_type = plan(4, 6);
        no_type.layouts[0].content_type = 0;
        assert!(zk_statement(&s, &no_type).is_err());
        let mut fewer = plan(4, 6);
        fewer.layouts.pop();
        assert!(zk_statement(&s, &fewer).is_err());
        // Inner plaintexts: "GET!" + type 23; 6 bytes + type 23 + one zero pad.
        let proven = |recv: Vec<Option<u8>>| tp::Proven {
            sent: tp::DirectionProof {
                disclosed: tp::DirectionOutput::Bytes(vec![vec![
                    Some(b'G'),
                    None,
                    None,
                    None,
                    Some(23),
                ]]),
                commitments: Vec::new(),
                tag_material: None,
            },
            recv: tp::DirectionProof {
                disclosed: tp::DirectionOutput::Bytes(vec![recv]),
                commitments: Vec::new(),
                tag_material: None,
            },
        };
        let mut truth = vec![Some(b'H'), None, None, None, None, None, Some(23), Some(0)];
        let view = assemble_proven(&s, &plan(4, 6), &proven(truth.clone())).unwrap();
        assert_eq!(view.received.len(), 6);
        // A prover claiming 5 data bytes would need byte 5 opened as the type
        // and the rest zero: the true bytes there are data, type, padding.
        truth[5] = Some(0x41);
        let p = proven(truth);
        assert!(assemble_proven(&s, &plan(4, 5), &p).is_err());
        assert!(assemble_proven(&s, &plan(4, 6), &p).is_err());
    }

    /// Spans are the intersection of records and ranges, in one merge.
    #[test]
    fn ranges_map_onto_records() {
        let s = statement(
            GCM12,
            &[
                (Direction::Received, 23, 5 + OVERHEAD12),
                (Direction::Received, 21, 2 + OVERHEAD12),
                (Direction::Received, 23, 7 + OVERHEAD12),
            ],
        );
        let plan = plan12(Disclosure {
            sent: Vec::new(),
            received: vec![Range::new(1, 2), Range::new(4, 7), Range::new(11, 12)],
        });
        let z = zk_statement(&s, &plan).unwrap();
        match z.recv.disclosure {
            tp::Disclosure::Ranges(spans) => assert_eq!(
                spans,
                vec![(0, 1..2), (0, 4..5), (1, 0..2), (2, 0..2), (2, 6..7)]
            ),
            other => panic!("{other:?}"),
        }
    }
}

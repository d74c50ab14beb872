//! The verifier's check of the client records' AEAD tags on the ZK path.
//!
//! The verifier recorded the server's records on its own connection to the
//! server, so their integrity is not in question. The client's records are
//! the prover's: without a tag check, a record the server would have
//! rejected (a forged or altered ciphertext, a wrong tag) would still count
//! as "sent" data. When the client direction is disclosed by its key, the
//! verifier decrypts it and so checks the tags; otherwise the ZK statement
//! asks the proof to open each client record's one-time MAC material
//! ([`tp::TagMaterial`]: AES-GCM `H` and `E_K(J0)`, ChaCha20-Poly1305 the
//! Poly1305 key), computed from the one key the handshake binds, and
//! [`check_client_tags`] recomputes every tag from the recorded ciphertext,
//! the record's additional data and that material (see `webproof_tlsproof`'s
//! docs for why the material reveals no plaintext).

use crate::aead::{additional_data, ciphertext_and_tag, OpenError, RecordCipher, TAG_LEN};
use crate::error::{malformed, ProxyError, Result};
use crate::keys::TrafficKeys;
use crate::record::Direction;
use crate::statement::{SessionStatement, StatementRecord};
use crate::suite::{AeadAlg, CipherSuite};
use ghash::universal_hash::{KeyInit, UniversalHash};
use webproof_tlsproof as tp;

/// Verifier side, after the proof succeeded: check the AEAD tag of every
/// client (sent) record of `statement` (the statement the verifier built
/// from its own recording, the one the proof's ZK statement came from).
///
/// With the client direction disclosed by its key, the records are
/// decrypted under it; otherwise `proven.sent` must carry the tag material
/// the statement asked for (one entry per client record, in order), and
/// each tag is recomputed from it and compared in constant time.
///
/// A tag that does not verify is [`ProxyError::Tag`] naming the record;
/// material of the wrong kind or count, or missing, is
/// [`ProxyError::Malformed`].
pub fn check_client_tags(statement: &SessionStatement, proven: &tp::Proven) -> Result<()> {
    let suite = statement.suite;
    let sent: Vec<&StatementRecord> = statement
        .records
        .iter()
        .filter(|r| r.record.direction == Direction::Sent)
        .collect();
    match (&proven.sent.tag_material, &proven.sent.disclosed) {
        (Some(material), _) => check_with_material(suite, &sent, material),
        (None, tp::DirectionOutput::Key { key, iv }) => {
            let cipher = RecordCipher::new(
                suite,
                TrafficKeys {
                    key: key.clone(),
                    iv: iv.clone(),
                },
            )?;
            for r in sent {
                // A malformed inner plaintext is authentic: the layout checks
                // of `zk::assemble_proven` deal with it.
                if let Err(OpenError::Auth) = cipher.open(r.seq, &r.record) {
                    return Err(tag_error(r));
                }
            }
            Ok(())
        }
        (None, tp::DirectionOutput::Bytes(_)) => Err(bad(
            "the proof opened no tag material for the client's records",
        )),
    }
}

fn bad(detail: impl Into<String>) -> ProxyError {
    malformed("client tag material", detail)
}

fn tag_error(r: &StatementRecord) -> ProxyError {
    ProxyError::Tag {
        direction: r.record.direction,
        index: r.index,
        seq: r.seq,
    }
}

fn check_with_material(
    suite: CipherSuite,
    sent: &[&StatementRecord],
    material: &tp::TagMaterial,
) -> Result<()> {
    let count = match material {
        tp::TagMaterial::Gcm { masks, .. } => masks.len(),
        tp::TagMaterial::Poly1305 { keys } => keys.len(),
    };
    if count != sent.len() {
        return Err(bad(format!(
            "{count} entries for {} client records",
            sent.len()
        )));
    }
    let kind_ok = matches!(
        (suite.aead(), material),
        (
            AeadAlg::Aes128Gcm | AeadAlg::Aes256Gcm,
            tp::TagMaterial::Gcm { .. }
        ) | (AeadAlg::ChaCha20Poly1305, tp::TagMaterial::Poly1305 { .. })
    );
    if !kind_ok {
        return Err(bad(format!("material of another AEAD than {suite}'s")));
    }
    match material {
        tp::TagMaterial::Gcm { hash_key, masks } => {
            for (r, mask) in sent.iter().zip(masks) {
                check_one(suite, r, |aad, ct, tag| {
                    gcm_tag_ok(hash_key, mask, aad, ct, tag)
                })?;
            }
        }
        tp::TagMaterial::Poly1305 { keys } => {
            for (r, otk) in sent.iter().zip(keys) {
                check_one(suite, r, |aad, ct, tag| poly1305_tag_ok(otk, aad, ct, tag))?;
            }
        }
    }
    Ok(())
}

/// Split `r`'s payload, build its additional data, and check its tag with `tag_ok`.
fn check_one(
    suite: CipherSuite,
    r: &StatementRecord,
    tag_ok: impl FnOnce(&[u8], &[u8], &[u8; TAG_LEN]) -> bool,
) -> Result<()> {
    let (ct, tag) = ciphertext_and_tag(suite, &r.record.payload).ok_or_else(|| tag_error(r))?;
    let aad = additional_data(suite.version(), r.seq, &r.record, ct.len());
    if tag_ok(&aad, ct, tag) {
        Ok(())
    } else {
        Err(tag_error(r))
    }
}

/// Bit lengths of the additional data and the ciphertext, as one block.
fn lengths(aad: &[u8], ct: &[u8], encode: fn(u64) -> [u8; 8]) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&encode(aad.len() as u64));
    block[8..].copy_from_slice(&encode(ct.len() as u64));
    block
}

/// AES-GCM (SP 800-38D): `tag = GHASH_H(A || pad || C || pad || [len(A)]_64
/// || [len(C)]_64) XOR E_K(J0)`, lengths in bits, big-endian. Compared as
/// `GHASH == tag XOR E_K(J0)`, in constant time.
fn gcm_tag_ok(h: &[u8; 16], mask: &[u8; 16], aad: &[u8], ct: &[u8], tag: &[u8; TAG_LEN]) -> bool {
    let mut ghash = ghash::GHash::new(h.into());
    ghash.update_padded(aad);
    ghash.update_padded(ct);
    let bits = |n: u64| n.wrapping_mul(8).to_be_bytes();
    ghash.update(&[lengths(aad, ct, bits).into()]);
    let mut expected = *tag;
    for (e, m) in expected.iter_mut().zip(mask) {
        *e ^= m;
    }
    ghash.verify(&expected.into()).is_ok()
}

/// ChaCha20-Poly1305 (RFC 8439 section 2.8): `tag = Poly1305_otk(A || pad ||
/// C || pad || le64(len(A)) || le64(len(C)))`, lengths in bytes. Compared
/// in constant time.
fn poly1305_tag_ok(otk: &[u8; 32], aad: &[u8], ct: &[u8], tag: &[u8; TAG_LEN]) -> bool {
    let mut mac = poly1305::Poly1305::new(otk.into());
    mac.update_padded(aad);
    mac.update_padded(ct);
    mac.update(&[lengths(aad, ct, u64::to_le_bytes).into()]);
    mac.verify(tag.into()).is_ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::disclosure::{Disclosure, Range};
    use crate::handshake::msg_type;
    use crate::keys;
    use crate::record::{content_type, Record};
    use crate::statement::{PublicInputs, SessionSecret};
    use crate::suite::{HashAlg, TlsVersion};
    use crate::zk;
    use futures::executor::block_on;
    use rand::SeedableRng;
    use webproof_core::cot::ideal;
    use webproof_core::{memory_duplex, Channel};

    const SUITES: [CipherSuite; 6] = [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_AES_256_GCM_SHA384,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ];
    const REQUEST: &[u8] = b"GET /me HTTP/1.1\r\nHost: a.example\r\nCookie: s=hunter2\r\n\r\n";
    const BODY: &[u8] = b"name=alice&amount=100";
    const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

    /// A session's statement (the verifier's recording), its witness and the
    /// client's keys, with records sealed by [`RecordCipher`] (real AAD).
    pub(crate) struct Session {
        pub(crate) statement: SessionStatement,
        pub(crate) witness: SessionSecret,
        client: TrafficKeys,
    }

    fn seal(
        suite: CipherSuite,
        k: &TrafficKeys,
        dir: Direction,
        seq: u64,
        typ: u8,
        data: &[u8],
    ) -> Record {
        let mut r = RecordCipher::new(suite, k.clone())
            .unwrap()
            .seal(seq, typ, data, 0);
        r.direction = dir;
        r
    }

    pub(crate) fn session(suite: CipherSuite, sent: &[&[u8]], recv: &[&[u8]]) -> Session {
        let h = suite.hash();
        let n = h.output_len();
        let (public, witness, client, server, first_seq) = match suite.version() {
            TlsVersion::Tls13 => {
                let hs = vec![7u8; n];
                let (th_hello, th_fin) = (vec![1u8; n], vec![2u8; n]);
                let (c_hs, s_hs) = keys::tls13_handshake_traffic(h, &hs, &th_hello);
                let (ca, sa) = keys::tls13_application_traffic(h, &hs, &th_fin);
                let public = PublicInputs::Tls13 {
                    th_hello,
                    th_server_finished: th_fin,
                    client_hs_traffic: c_hs,
                    server_hs_traffic: s_hs,
                };
                let w = SessionSecret::Tls13 {
                    handshake_secret: hs,
                };
                let (c, s) = (
                    keys::tls13_traffic_keys(suite, &ca),
                    keys::tls13_traffic_keys(suite, &sa),
                );
                (public, w, c, s, 0)
            }
            TlsVersion::Tls12 => {
                let ms = vec![5u8; 48];
                let (cr, sr) = ([1u8; 32], [2u8; 32]);
                let (c, s) = keys::tls12_key_block(suite, &ms, &cr, &sr);
                let msgs = b"ClientHello..ClientKeyExchange".to_vec();
                let finished = |label: &str, covered: &[u8]| {
                    let mut m = vec![msg_type::FINISHED, 0, 0, 12];
                    m.extend(keys::tls12_finished(h, &ms, label, &h.hash(covered)));
                    m
                };
                let client_msg = finished("client finished", &msgs);
                let server_msg = finished(
                    "server finished",
                    &[msgs.clone(), client_msg.clone()].concat(),
                );
                let public = PublicInputs::Tls12 {
                    client_random: cr.to_vec(),
                    server_random: sr.to_vec(),
                    handshake_messages: msgs,
                    tickets: Vec::new(),
                    client_finished: seal(
                        suite,
                        &c,
                        Direction::Sent,
                        0,
                        content_type::HANDSHAKE,
                        &client_msg,
                    ),
                    server_finished: seal(
                        suite,
                        &s,
                        Direction::Received,
                        0,
                        content_type::HANDSHAKE,
                        &server_msg,
                    ),
                };
                (public, SessionSecret::Tls12 { master_secret: ms }, c, s, 1)
            }
        };
        let mut records = Vec::new();
        for (dir, keys, msgs) in [
            (Direction::Sent, &client, sent),
            (Direction::Received, &server, recv),
        ] {
            for (i, m) in msgs.iter().enumerate() {
                let seq = first_seq + i as u64;
                records.push(StatementRecord {
                    record: seal(suite, keys, dir, seq, content_type::APPLICATION_DATA, m),
                    seq,
                    index: i + 2,
                });
            }
        }
        let statement = SessionStatement {
            suite,
            public,
            records,
        };
        assert!(statement.evaluate(&witness).is_ok());
        Session {
            statement,
            witness,
            client,
        }
    }

    /// The verifier's sequence on its own `recorded` statement, for a
    /// prover that proves `prover_view` (its plan made from `honest`, the
    /// statement whose records it can open): the proof, the layout checks,
    /// then the client tags.
    fn prove_and_check(
        honest: &SessionStatement,
        prover_view: &SessionStatement,
        recorded: &SessionStatement,
        witness: &SessionSecret,
        disclosure: &Disclosure,
    ) -> (tp::Proven, Result<()>) {
        let opened = honest.evaluate(witness).unwrap();
        let plan = zk::plan(honest, &opened, disclosure, witness).unwrap();
        let p_stmt = zk::zk_statement(prover_view, &plan).unwrap();
        let v_stmt = zk::zk_statement(recorded, &plan).unwrap();
        let tp_witness = zk::witness(witness);
        let (a, b) = memory_duplex();
        let (cot_s, cot_r) = ideal::pair(42);
        let cfg = webproof_zk::Config::default();
        let (p, v) = block_on(async {
            let prover = async {
                let mut p = webproof_zk::Prover::new(cot_r, Channel::new(a), cfg).await?;
                let out = tp::run(&mut p, &p_stmt, Some(&tp_witness)).await;
                drop(p);
                out
            };
            let verifier = async {
                let mut rng = rand::rngs::StdRng::seed_from_u64(7);
                let mut v =
                    webproof_zk::Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
                let out = tp::run(&mut v, &v_stmt, None).await;
                drop(v);
                out
            };
            futures::join!(prover, verifier)
        });
        let proven = v.expect("the proof itself holds: only the tags are wrong");
        assert_eq!(p.unwrap(), proven);
        zk::assemble_proven(recorded, &plan, &proven).expect("the layout checks pass");
        let checked = check_client_tags(recorded, &proven);
        (proven, checked)
    }

    /// Hide the cookie: the sent direction is proven by ranges.
    fn partial() -> Disclosure {
        Disclosure {
            sent: vec![Range::new(0, 16)],
            received: vec![Range::new(0, RESPONSE.len())],
        }
    }

    fn sent_index(s: &SessionStatement, k: usize) -> usize {
        s.records
            .iter()
            .enumerate()
            .filter(|(_, r)| r.record.direction == Direction::Sent)
            .nth(k)
            .unwrap()
            .0
    }

    /// Honest client records pass for every AEAD and both TLS versions;
    /// altering a recorded ciphertext or tag afterwards, or the material
    /// (count, kind, value), is refused with a typed error and no panic.
    #[test]
    fn client_tags_checked_from_the_opened_material() {
        for suite in SUITES {
            let s = session(suite, &[REQUEST, BODY, b""], &[RESPONSE]);
            let st = &s.statement;
            let (proven, ok) = prove_and_check(st, st, st, &s.witness, &partial());
            assert_eq!(ok, Ok(()), "{suite}");
            assert!(matches!(
                proven.sent.disclosed,
                tp::DirectionOutput::Bytes(_)
            ));
            assert!(proven.sent.tag_material.is_some());
            assert_eq!(
                proven.recv.tag_material, None,
                "server material stays closed"
            );

            // A recorded ciphertext byte or tag byte altered.
            let i = sent_index(st, 1);
            let explicit = if crate::aead::has_explicit_nonce(suite) {
                8
            } else {
                0
            };
            for pos in [explicit, st.records[i].record.payload.len() - 1] {
                let mut bad = st.clone();
                bad.records[i].record.payload[pos] ^= 0x01;
                assert!(
                    matches!(
                        check_client_tags(&bad, &proven),
                        Err(ProxyError::Tag { direction: Direction::Sent, index: 3, seq })
                            if seq == st.records[i].seq
                    ),
                    "{suite} byte {pos}"
                );
            }
            // A record too short to hold its tag.
            let mut bad = st.clone();
            bad.records[i].record.payload.truncate(5);
            assert!(matches!(
                check_client_tags(&bad, &proven),
                Err(ProxyError::Tag { .. })
            ));
            // TLS 1.2: the sequence number is in the additional data, so a
            // record checked at another position fails. (TLS 1.3 binds the
            // position through the nonce, inside the proof.)
            if suite.version() == TlsVersion::Tls12 {
                let mut bad = st.clone();
                bad.records[i].seq += 1;
                assert!(check_client_tags(&bad, &proven).is_err(), "{suite} seq");
            }

            // Material of the wrong count, kind or value.
            let material = proven.sent.tag_material.clone().unwrap();
            let mut variants: Vec<tp::TagMaterial> = Vec::new();
            match &material {
                tp::TagMaterial::Gcm { hash_key, masks } => {
                    let mut fewer = masks.clone();
                    fewer.pop();
                    let mut more = masks.clone();
                    more.push([0; 16]);
                    variants.push(tp::TagMaterial::Gcm {
                        hash_key: *hash_key,
                        masks: fewer,
                    });
                    variants.push(tp::TagMaterial::Gcm {
                        hash_key: *hash_key,
                        masks: more,
                    });
                    variants.push(tp::TagMaterial::Gcm {
                        hash_key: *hash_key,
                        masks: vec![],
                    });
                    variants.push(tp::TagMaterial::Poly1305 {
                        keys: vec![[0; 32]; masks.len()],
                    });
                }
                tp::TagMaterial::Poly1305 { keys } => {
                    let mut fewer = keys.clone();
                    fewer.pop();
                    let mut more = keys.clone();
                    more.push([0; 32]);
                    variants.push(tp::TagMaterial::Poly1305 { keys: fewer });
                    variants.push(tp::TagMaterial::Poly1305 { keys: more });
                    variants.push(tp::TagMaterial::Gcm {
                        hash_key: [0; 16],
                        masks: vec![[0; 16]; keys.len()],
                    });
                }
            }
            for m in variants {
                let mut p = proven.clone();
                p.sent.tag_material = Some(m.clone());
                assert!(
                    matches!(check_client_tags(st, &p), Err(ProxyError::Malformed { .. })),
                    "{suite}: {m:?}"
                );
            }
            let mut wrong = material.clone();
            match &mut wrong {
                tp::TagMaterial::Gcm { hash_key, .. } => hash_key[0] ^= 1,
                tp::TagMaterial::Poly1305 { keys } => keys[0][31] ^= 1,
            }
            let mut p = proven.clone();
            p.sent.tag_material = Some(wrong);
            assert!(matches!(
                check_client_tags(st, &p),
                Err(ProxyError::Tag { .. })
            ));
            // No material although the direction was proven by ranges.
            let mut p = proven.clone();
            p.sent.tag_material = None;
            assert!(matches!(
                check_client_tags(st, &p),
                Err(ProxyError::Malformed { .. })
            ));
        }
    }

    /// A cheating prover: a client record encrypted under the right key
    /// with a wrong tag (or a ciphertext flipped after encryption, the tag
    /// kept), which the server would have rejected. The proof and the
    /// layout checks pass, as the ZK statement does not carry tags; the tag
    /// check refuses. With the key path the verifier refuses it too.
    #[test]
    fn cheating_prover_with_a_bad_client_tag_is_refused() {
        for suite in [
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ] {
            let s = session(suite, &[REQUEST, BODY], &[RESPONSE]);
            let honest = &s.statement;
            let i = sent_index(honest, 1);
            let seq = honest.records[i].seq;
            // Wrong tag: the recorded record is the honest one but for its tag.
            let mut wrong_tag = honest.clone();
            let last = wrong_tag.records[i].record.payload.len() - 1;
            wrong_tag.records[i].record.payload[last] ^= 0x80;
            // Flipped ciphertext: "amount=100" becomes "amount=900", tag kept.
            let mut flipped = honest.clone();
            let explicit = if crate::aead::has_explicit_nonce(suite) {
                8
            } else {
                0
            };
            let at = explicit + BODY.iter().position(|&b| b == b'1').unwrap();
            flipped.records[i].record.payload[at] ^= b'1' ^ b'9';
            for (name, recorded) in [("wrong tag", &wrong_tag), ("flipped", &flipped)] {
                let (proven, checked) =
                    prove_and_check(honest, recorded, recorded, &s.witness, &partial());
                assert!(
                    matches!(
                        checked,
                        Err(ProxyError::Tag { direction: Direction::Sent, index: 3, seq: q }) if q == seq
                    ),
                    "{suite} {name}: {checked:?}"
                );
                assert!(proven.sent.tag_material.is_some());
            }
            // The key path: the verifier decrypts and refuses the tag as well.
            let whole = Disclosure {
                sent: vec![Range::new(0, REQUEST.len() + BODY.len())],
                received: vec![],
            };
            let opened = honest.evaluate(&s.witness).unwrap();
            let plan = zk::plan(honest, &opened, &whole, &s.witness).unwrap();
            assert_eq!(
                zk::zk_statement(&wrong_tag, &plan).unwrap().sent.disclosure,
                tp::Disclosure::Key
            );
            let proven = tp::Proven {
                sent: tp::DirectionProof {
                    disclosed: tp::DirectionOutput::Key {
                        key: s.client.key.clone(),
                        iv: s.client.iv.clone(),
                    },
                    commitments: vec![],
                    tag_material: None,
                },
                recv: tp::DirectionProof {
                    disclosed: tp::DirectionOutput::Bytes(vec![]),
                    commitments: vec![],
                    tag_material: None,
                },
            };
            assert_eq!(check_client_tags(honest, &proven), Ok(()));
            assert!(matches!(
                check_client_tags(&wrong_tag, &proven),
                Err(ProxyError::Tag { index: 3, .. })
            ));
        }
    }

    /// The suites of these tests cover both versions and every AEAD.
    #[test]
    fn suites_cover_both_versions_and_all_aeads() {
        for v in [TlsVersion::Tls12, TlsVersion::Tls13] {
            for a in [
                AeadAlg::Aes128Gcm,
                AeadAlg::Aes256Gcm,
                AeadAlg::ChaCha20Poly1305,
            ] {
                assert!(SUITES.iter().any(|s| s.version() == v && s.aead() == a));
            }
        }
        assert!(SUITES.iter().any(|s| s.hash() == HashAlg::Sha384));
    }
}

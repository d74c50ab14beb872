//! A ChaCha20-Poly1305 record encrypted in 2PC (keystream and the
//! prover's multiplicative share of `r` in a garbled circuit, the powers of
//! `r` by M2A over OLE in `2^130 - 5`, the tag finished in a small garbled
//! circuit) equals what the `chacha20poly1305` crate produces under the
//! recombined key and IV; and what goes wrong when a message does.

mod common;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::ChaCha20Poly1305;
use common::cots;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;
use webproof_circuits::bytes_to_bits;
use webproof_core::Block;
use webproof_mpc::ole::{OleReceiver, OleSender};
use webproof_mpc::{Error, Plan};
use webproof_mpc_tls::rec::chacha::{self, ChachaProver, ChachaVerifier, KEY_IV_LEN, TAG_COTS};

/// What a test spoils on the way, and where.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    None,
    /// The record circuit's first chunk of tables.
    RecordTable,
    /// The tag circuit's first chunk of tables.
    TagTable,
    /// Every element of the verifier's answer to the powers' M2A.
    PowersAnswer,
    /// The powers' answer cut short.
    PowersAnswerShort,
    /// An offset of the prover's request made non-canonical.
    OffsetNotCanonical,
    /// The prover's request cut short.
    RequestShort,
    /// The verifier's tag-circuit answer cut short.
    AnswerShort,
    /// The verifier encodes another sequence number than the prover uses.
    VerifierSeq,
    /// The verifier computes its share over another AAD.
    VerifierAad,
    /// The verifier computes its share over another ciphertext.
    VerifierCt,
    /// A bit of the masked ciphertext `D¹` (hidden records).
    MaskedCt,
    /// The prover makes its request twice.
    RequestTwice,
    /// The verifier answers twice.
    AnswerTwice,
    /// The prover asks for the other variant's request.
    OtherVariant,
}

/// Bytes of each message of one record, counted as they are sent.
#[derive(Default, Debug, Clone, Copy)]
struct Traffic {
    /// Preprocessing, verifier → prover: both circuits' tables,
    /// decodings, early labels; the powers' OLE answer.
    pre_v: usize,
    /// Preprocessing, prover → verifier: the powers' OLE flips.
    pre_p: usize,
    /// Online, prover → verifier: offsets and tag-circuit flips.
    online_p: usize,
    /// Online, verifier → prover: the tag circuit's input labels.
    online_v: usize,
    /// Of `pre_v`: both circuits' tables.
    tables: usize,
    /// OLEs and COTs of the record.
    oles: usize,
    cots: usize,
}

/// Chain `v`'s key ‖ IV input to stand-in 0-labels (as if output by the
/// key derivation under `delta`) with the verifier's share `vshare`;
/// returns the prover's labels of its share `pshare`.
fn chain(
    v: &mut ChachaVerifier,
    delta: Block,
    vshare: &[u8],
    pshare: &[u8],
    rng: &mut ChaCha20Rng,
) -> Result<Vec<Block>, Error> {
    let zero: Vec<Block> = (0..8 * pshare.len())
        .map(|_| Block(rng.gen::<u128>()))
        .collect();
    v.chain(&zero, vshare)?;
    Ok(zero
        .iter()
        .zip(bytes_to_bits(pshare))
        .map(|(&z, b)| if b { z ^ delta } else { z })
        .collect())
}

fn flip_byte(msg: &mut [u8], at: usize) {
    let i = at % msg.len();
    msg[i] ^= 0x10;
}

/// One record in 2PC: key ‖ IV shares, plaintext, sequence number, AAD;
/// returns the ciphertext ‖ tag and what was sent.
fn encrypt_2pc(
    vshare: &[u8],
    pshare: &[u8],
    pt: &[u8],
    seq: u64,
    aad: &[u8],
    fault: Fault,
    hidden: bool,
) -> Result<(Vec<u8>, Traffic), Error> {
    let len = pt.len();
    let mut t = Traffic::default();
    let n_pow = chacha::cots_needed(aad.len(), len);
    let n_hide = if hidden { chacha::hide_cots(len) } else { 0 };
    let (delta, mut keys, mut macs) = cots(seq ^ 0x5eed, n_pow + n_hide + TAG_COTS);
    let (keys_tag, macs_tag) = (
        keys.split_off(n_pow + n_hide),
        macs.split_off(n_pow + n_hide),
    );
    let (keys_hide, macs_hide) = (keys.split_off(n_pow), macs.split_off(n_pow));
    t.cots = n_pow + n_hide + TAG_COTS;
    t.oles = chacha::blocks_needed(aad.len(), len);
    let mut rng = ChaCha20Rng::seed_from_u64(seq.wrapping_mul(31) + len as u64);
    let rp = Arc::new(Plan::new(&chacha::chacha_circuit(len))?);
    let tp = Arc::new(Plan::new(&chacha::tag_circuit())?);
    let instances = [2 * seq + 1, 2 * seq + 2];
    let v_seq = if fault == Fault::VerifierSeq {
        seq + 1
    } else {
        seq
    };
    // Preprocessing.
    let mut v = ChachaVerifier::new(
        Arc::clone(&rp),
        Arc::clone(&tp),
        len,
        aad.len(),
        v_seq,
        delta,
        instances,
        &mut rng,
    )?;
    let labels = chain(&mut v, delta, vshare, pshare, &mut rng)?;
    let ((rc, rd, re), (tc, td, te)) = v.preprocess()?;
    let (mut rc, mut tc) = (rc.into_chunks(), tc.into_chunks());
    t.tables = rc.iter().chain(&tc).map(Vec::len).sum::<usize>();
    t.pre_v += t.tables;
    t.pre_v += rd.len() + re.len() + td.len() + te.len();
    // Every table of a chunk (past its 8-byte header): a single bit of
    // a half-gates table changes nothing when the evaluator's colour bits
    // pick the other row.
    let spoil = |chunk: &mut Vec<u8>| chunk[8..].iter_mut().for_each(|b| *b ^= 1);
    if fault == Fault::RecordTable {
        spoil(&mut rc[0]);
    }
    if fault == Fault::TagTable {
        spoil(&mut tc[0]);
    }
    let (mut os, mut or) = (OleSender::new(delta, 11), OleReceiver::new(11));
    let pending = ChachaProver::powers_choose(len, aad.len(), &mut or, &macs)?;
    let mut answer = v.powers_respond(&mut os, &keys)?;
    t.pre_v += answer.len();
    match fault {
        // The low byte of every element: one element alone counts only if
        // the prover's bit of its COT is 1 (a selective failure the audit
        // after the session catches).
        Fault::PowersAnswer => answer.iter_mut().step_by(17).for_each(|b| *b ^= 0x10),
        Fault::PowersAnswerShort => {
            answer.pop();
        }
        _ => {}
    }
    let ahead = pending.finish(&answer)?;
    let hidden_ahead = if hidden {
        let pending = ChachaProver::hide_choose(len, &mut or, &macs_hide)?;
        let mut answer = v.hide_respond(&mut os, &keys_hide)?;
        t.pre_v += answer.len();
        if fault == Fault::PowersAnswer && !answer.is_empty() {
            answer.iter_mut().step_by(17).for_each(|b| *b ^= 0x10);
        }
        Some(ChachaProver::hide_finish(pending, &answer)?)
    } else {
        None
    };
    let mut p = ChachaProver::new(
        (rp, tp),
        len,
        aad.len(),
        instances,
        ((rc.into(), rd, re), (tc.into(), td, te)),
        ahead,
        hidden_ahead,
    )?;
    // Online: the prover evaluates on its chained share and encrypts.
    let ks = p.keystream(&labels, pshare)?;
    assert_eq!(ks.len(), len);
    let ct: Vec<u8> = pt.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
    if fault == Fault::OtherVariant {
        if hidden {
            // A plain request is the prover's choice (it shows `C`); the
            // verifier of a hidden record still takes it.
            assert!(p.tag_request(aad, &ct, &macs_tag).is_ok());
            return Err(Error::Malformed("the test's own stop"));
        }
        p.hidden_tag_request(aad, &ct, &macs_tag)?;
    }
    let mut request = if hidden {
        let r = p.hidden_tag_request(aad, &ct, &macs_tag)?;
        let n = chacha::ct_blocks(len);
        assert_eq!(r.len(), chacha::hidden_request_len(t.oles, n));
        // The verifier sees the ciphertext only masked by the prover's
        // choice bits.
        let d1 = &r[17 * t.oles..17 * t.oles + 16 * n];
        if len >= 16 {
            assert_ne!(&d1[..16], &ct[..16]);
        }
        // What the proof of the request asserts on the authenticated
        // choice bits, here in the clear: D¹ ⊕ χ¹ = D² ⊕ χ² = C, padded.
        let (d1, d2) = chacha::masked_ciphertexts(&r, t.oles, len).unwrap();
        let mut c = ct.clone();
        c.resize(16 * n, 0);
        let (c, d1, d2) = (bytes_to_bits(&c), bytes_to_bits(d1), bytes_to_bits(d2));
        for i in 0..128 * n {
            let [a, b] = chacha::masked_cots(len, i);
            assert_eq!(d1[i] ^ macs_hide[a].lsb(), c[i], "{i}");
            assert_eq!(d2[i] ^ macs_hide[b].lsb(), c[i], "{i}");
        }
        r
    } else {
        let r = p.tag_request(aad, &ct, &macs_tag)?;
        assert_eq!(r.len(), chacha::request_len(t.oles));
        r
    };
    t.online_p += request.len();
    match fault {
        Fault::OffsetNotCanonical => request[16] = 0xff,
        Fault::RequestShort => {
            request.pop();
        }
        Fault::MaskedCt => request[17 * t.oles] ^= 4,
        Fault::RequestTwice => {
            p.tag_request(aad, &ct, &macs_tag)?;
        }
        _ => {}
    }
    let (mut v_aad, mut v_ct) = (aad.to_vec(), ct.clone());
    if fault == Fault::VerifierAad {
        flip_byte(&mut v_aad, 0);
    }
    if fault == Fault::VerifierCt {
        flip_byte(&mut v_ct, 5);
    }
    let mut answer = if hidden {
        v.hidden_tag_inputs(&v_aad, &request, &keys_tag)?
    } else {
        v.tag_inputs(&v_aad, &v_ct, &request, &keys_tag)?
    };
    t.online_v += answer.len();
    if fault == Fault::AnswerTwice {
        v.tag_inputs(&v_aad, &v_ct, &request, &keys_tag)?;
    }
    if fault == Fault::AnswerShort {
        answer.pop();
    }
    let tag = p.tag(&answer)?;
    Ok(([ct, tag.to_vec()].concat(), t))
}

fn nonce(iv: &[u8], seq: u64) -> [u8; 12] {
    let mut n: [u8; 12] = iv.try_into().unwrap();
    for (a, b) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *a ^= b;
    }
    n
}

fn reference(key_iv: &[u8], pt: &[u8], seq: u64, aad: &[u8]) -> Vec<u8> {
    let (key, iv) = key_iv.split_at(32);
    ChaCha20Poly1305::new_from_slice(key)
        .unwrap()
        .encrypt(&nonce(iv, seq).into(), Payload { msg: pt, aad })
        .unwrap()
}

fn opens(key_iv: &[u8], rec: &[u8], seq: u64, aad: &[u8]) -> bool {
    let (key, iv) = key_iv.split_at(32);
    ChaCha20Poly1305::new_from_slice(key)
        .unwrap()
        .decrypt(&nonce(iv, seq).into(), Payload { msg: rec, aad })
        .is_ok()
}

fn shares(rng: &mut ChaCha20Rng) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let kv: Vec<u8> = (0..KEY_IV_LEN).map(|_| rng.gen()).collect();
    let kp: Vec<u8> = (0..KEY_IV_LEN).map(|_| rng.gen()).collect();
    let k = kv.iter().zip(&kp).map(|(a, b)| a ^ b).collect();
    (kv, kp, k)
}

/// TLS 1.3's AAD: the record header of a `len`-byte ciphertext (with its
/// 16-byte tag).
fn tls13_aad(len: usize) -> [u8; 5] {
    let n = (len + 16) as u16;
    [23, 3, 3, (n >> 8) as u8, n as u8]
}

/// TLS 1.2's AAD (RFC 7905 with RFC 5246 §6.2.3.3).
fn tls12_aad(seq: u64, len: usize) -> [u8; 13] {
    let mut a = [0u8; 13];
    a[..8].copy_from_slice(&seq.to_be_bytes());
    a[8] = 23;
    a[9..11].copy_from_slice(&[3, 3]);
    a[11..].copy_from_slice(&(len as u16).to_be_bytes());
    a
}

/// Random keys, IVs and sequence numbers, every length the issue names,
/// several records per key, TLS 1.3- and TLS 1.2-shaped AAD.
#[test]
fn records_match_chacha20poly1305() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for (i, lens) in [&[0usize, 1, 15][..], &[16, 17, 64], &[65, 1000]]
        .into_iter()
        .enumerate()
    {
        let (kv, kp, k) = shares(&mut rng);
        let first = rng.gen_range(0..1u64 << 40);
        for (seq, &len) in (first..).zip(lens) {
            let pt: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let aad = if i % 2 == 0 {
                tls13_aad(len).to_vec()
            } else {
                tls12_aad(seq, len).to_vec()
            };
            let want = reference(&k, &pt, seq, &aad);
            for hidden in [false, true] {
                let (got, _) = encrypt_2pc(&kv, &kp, &pt, seq, &aad, Fault::None, hidden).unwrap();
                assert_eq!(got, want, "len {len} seq {seq} hidden {hidden}");
            }
        }
    }
}

/// RFC 8439 §2.8.2: the AEAD vector, its key and IV split into random
/// shares (its nonce is `07000000 ‖ 4041424344454647`: the IV
/// `070000004041424344454647` under sequence number 0).
#[test]
fn rfc8439_aead_vector() {
    let hex = |s: &str| -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let pt = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
    let aad = hex("50515253c0c1c2c3c4c5c6c7");
    let key = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
    let iv = hex("070000004041424344454647");
    let want = hex(
        "d31a8d34648e60db7b86afbc53ef7ec2 a4aded51296e08fea9e2b5a736ee62d6
         3dbea45e8ca9671282fafb69da92728b 1a71de0a9e060b2905d6a5b67ecd3b36
         92ddbd7f2d778b8c9803aee328091b58 fab324e4fad675945585808b4831d7bc
         3ff4def08e4b7a9de576d26586cec64b 6116
         1ae10b594f09e26a7e902ecbd0600691",
    );
    let k = [key, iv].concat();
    let mut rng = ChaCha20Rng::seed_from_u64(8439);
    let kv: Vec<u8> = (0..KEY_IV_LEN).map(|_| rng.gen()).collect();
    let kp: Vec<u8> = kv.iter().zip(&k).map(|(a, b)| a ^ b).collect();
    for hidden in [false, true] {
        let (got, _) = encrypt_2pc(&kv, &kp, pt, 0, &aad, Fault::None, hidden).unwrap();
        assert_eq!(got, want);
    }
    assert_eq!(reference(&k, pt, 0, &aad), want);
}

/// Corrupted tables: a refused chunk, or a record the server refuses
/// (the evaluator decodes whatever its labels say; the audit after the
/// session names the cheat).
#[test]
fn corrupted_tables_give_no_valid_record() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let (kv, kp, k) = shares(&mut rng);
    let pt = b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n";
    let aad = tls13_aad(pt.len());
    for (fault, hidden) in [
        (Fault::RecordTable, false),
        (Fault::TagTable, false),
        (Fault::TagTable, true),
    ] {
        match encrypt_2pc(&kv, &kp, pt, 3, &aad, fault, hidden) {
            Err(e) => assert!(matches!(e, Error::Malformed(_)), "{fault:?}: {e:?}"),
            Ok((rec, _)) => {
                assert_eq!(rec.len(), pt.len() + 16);
                assert!(!opens(&k, &rec, 3, &aad), "{fault:?}");
            }
        }
    }
}

/// Public inputs the two parties disagree on, and a wrong OLE answer: the
/// record is one the server refuses (never one it takes with another
/// content).
#[test]
fn wrong_public_inputs_give_no_valid_record() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let (kv, kp, k) = shares(&mut rng);
    let pt: Vec<u8> = (0..40).map(|_| rng.gen()).collect();
    let aad = tls13_aad(pt.len());
    let good = encrypt_2pc(&kv, &kp, &pt, 9, &aad, Fault::None, false)
        .unwrap()
        .0;
    assert!(opens(&k, &good, 9, &aad));
    for (fault, hidden) in [
        (Fault::VerifierSeq, false),
        (Fault::VerifierAad, false),
        (Fault::VerifierCt, false),
        (Fault::PowersAnswer, false),
        (Fault::VerifierAad, true),
        (Fault::PowersAnswer, true),
        (Fault::MaskedCt, true),
    ] {
        let (rec, _) = encrypt_2pc(&kv, &kp, &pt, 9, &aad, fault, hidden).unwrap();
        assert_ne!(rec, good, "{fault:?} {hidden}");
        assert!(!opens(&k, &rec, 9, &aad), "{fault:?} {hidden}");
    }
}

/// Malformed messages are refused, not decoded.
#[test]
fn malformed_messages_are_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let (kv, kp, _) = shares(&mut rng);
    let pt = [7u8; 20];
    let aad = tls13_aad(pt.len());
    for fault in [
        Fault::PowersAnswerShort,
        Fault::OffsetNotCanonical,
        Fault::RequestShort,
        Fault::AnswerShort,
        Fault::RequestTwice,
        Fault::AnswerTwice,
        Fault::OtherVariant,
    ] {
        for hidden in [false, true] {
            let r = encrypt_2pc(&kv, &kp, &pt, 5, &aad, fault, hidden);
            assert!(
                matches!(r, Err(Error::Malformed(_))),
                "{fault:?} {hidden}: {r:?}"
            );
        }
    }
}

/// Out-of-order and repeated steps are refused.
#[test]
fn steps_out_of_order_are_refused() {
    let len = 10;
    let rp = Arc::new(Plan::new(&chacha::chacha_circuit(len)).unwrap());
    let tp = Arc::new(Plan::new(&chacha::tag_circuit()).unwrap());
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let delta = Block(rng.gen::<u128>() | 1);
    let mut v = ChachaVerifier::new(
        Arc::clone(&rp),
        Arc::clone(&tp),
        len,
        5,
        1,
        delta,
        [1, 2],
        &mut rng,
    )
    .unwrap();
    // Tables before the chain; tag inputs before the powers.
    assert!(v.preprocess().is_err());
    assert!(v
        .tag_inputs(&[0; 5], &[0; 10], &[0; 10], &[Block(0); TAG_COTS])
        .is_err());
    let zero: Vec<Block> = (0..8 * KEY_IV_LEN).map(|i| Block(i as u128)).collect();
    v.chain(&zero, &[0; KEY_IV_LEN]).unwrap();
    assert!(v.chain(&zero, &[0; KEY_IV_LEN]).is_err());
    // A verifier for another record's length.
    assert!(ChachaVerifier::new(rp, tp, len + 1, 5, 1, delta, [1, 2], &mut rng).is_err());
}

/// The prover's check of the verifier's revealed record inputs.
#[test]
fn verifier_inputs_are_checked() {
    let share = [9u8; KEY_IV_LEN];
    let honest = |t: &[u8], seq: u64| {
        let mut masks = t.to_vec();
        masks.extend([0x33u8; 16]);
        vec![
            bytes_to_bits(&share),
            bytes_to_bits(&seq.to_be_bytes()),
            bytes_to_bits(&masks),
        ]
    };
    let mut t = [0u8; 17];
    t[0] = 5;
    chacha::check_verifier_inputs(&share, 4, &honest(&t, 4)).unwrap();
    let cheat = |inputs: &[Vec<bool>]| {
        matches!(
            chacha::check_verifier_inputs(&share, 4, inputs),
            Err(Error::VerifierCheated(_))
        )
    };
    // Another sequence number (a reused nonce), another key share.
    assert!(cheat(&honest(&t, 3)));
    let mut other = honest(&t, 4);
    other[0][7] ^= true;
    assert!(cheat(&other));
    // A zero multiplier, one not below p.
    assert!(cheat(&honest(&[0; 17], 4)));
    let mut big = [0xffu8; 17];
    big[16] = 3;
    assert!(cheat(&honest(&big, 4)));
    // Not a record circuit's groups.
    assert!(matches!(
        chacha::check_verifier_inputs(&share, 4, &honest(&t, 4)[..2]),
        Err(Error::Malformed(_))
    ));
    // The tag circuit's pad of s must be the record circuit's.
    let record = honest(&t, 4);
    let acc = vec![false; 136];
    let mut pad = bytes_to_bits(&[0x33u8; 16]);
    chacha::check_tag_inputs(&record, &[acc.clone(), pad.clone()]).unwrap();
    pad[9] ^= true;
    assert!(matches!(
        chacha::check_tag_inputs(&record, &[acc.clone(), pad.clone()]),
        Err(Error::VerifierCheated(_))
    ));
    assert!(matches!(
        chacha::check_tag_inputs(&record, &[pad]),
        Err(Error::Malformed(_))
    ));
}

/// The costs `docs/protocol/mpc-chacha.md` quotes, counted on the
/// messages of real records.
#[test]
fn costs_on_the_wire() {
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let (kv, kp, _) = shares(&mut rng);
    let and = |len| Plan::new(&chacha::chacha_circuit(len)).unwrap().and_count();
    let per_block = and(128) - and(64);
    let fixed = and(0);
    let tag = Plan::new(&chacha::tag_circuit()).unwrap().and_count();
    eprintln!("AND: {per_block} per 64-byte block, {fixed} fixed (block 0 and r·t), {tag} tag");
    // The figures of the cost table in docs/protocol/mpc-chacha.md.
    assert_eq!((per_block, fixed, tag), (10_398, 38_343, 515));
    for len in [0usize, 64, 1000] {
        let pt = vec![1u8; len];
        let aad = tls13_aad(len);
        let n = chacha::ct_blocks(len);
        let (_, h) = encrypt_2pc(&kv, &kp, &pt, 1, &aad, Fault::None, true).unwrap();
        eprintln!("len {len} hidden: {h:?}");
        let (_, t) = encrypt_2pc(&kv, &kp, &pt, 1, &aad, Fault::None, false).unwrap();
        eprintln!("len {len}: {t:?}");
        let tables = match len {
            0 => 956_967,
            64 => 1_213_058,
            _ => 5_049_666,
        };
        assert_eq!((t.tables, h.tables), (tables, tables));
        // Hidden: two bitwise OLEs a ciphertext bit (one element a COT)
        // more in preprocessing, the ciphertext twice masked online in
        // place of the ciphertext.
        assert_eq!(h.cots, t.cots + 256 * n);
        assert_eq!(h.pre_v, t.pre_v + 256 * n * 17);
        assert_eq!(h.online_p, t.online_p + 32 * n);
        assert_eq!(h.online_v, t.online_v);
        let q = chacha::blocks_needed(5, len);
        assert_eq!(t.oles, q);
        assert_eq!(t.cots, 130 * q + TAG_COTS);
        // Online: 17 bytes an offset and 33 bytes of flips one way; the
        // tag circuit's input labels (33 + 17 bytes of wires) the other.
        assert_eq!(t.online_p, 17 * q + 33);
        assert_eq!(t.online_v, 16 * 8 * (33 + 17));
        // Preprocessing: the OLE answer is 130 elements an OLE.
        assert!(t.pre_v >= 130 * 17 * q);
        // The prover sends nothing in preprocessing.
        assert_eq!(t.pre_p, 0);
    }
}

/// What the dual execution of a ChaCha20 keystream meets on the way.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum DualFault {
    None,
    /// The verifier's record circuit decodes this keystream bit flipped
    /// (the "`KS ⊕ M`" attack).
    Decoding(usize),
    /// The verifier's record-circuit tables spoiled (every chunk: the
    /// first alone may hold only gates of block 0 and `r·t`, which leave
    /// the keystream right).
    RecordTables,
    /// The prover's keystream tables spoiled on the way (its last chunk).
    DualTables,
    /// One byte more, or less, than the prover's tables have.
    DualTablesLong,
    DualTablesShort,
    /// A chunk beyond the bound of the record's cipher and length.
    DualTablesOversize,
}

/// One record's keystream through the dual execution of
/// `webproof_mpc_tls::rec::dual`: the prover garbles `keystream_circuit`, the
/// verifier evaluates it with `RecordEvaluation::for_cipher` of
/// ChaCha20-Poly1305 (its schedule after the tables, as the session may
/// give it), and the prover's check on both executions' labels decides
/// whether it may use the keystream it decoded from the verifier's record
/// circuit.
fn dual_run(len: usize, fault: DualFault) -> Result<Vec<u8>, Error> {
    use webproof_mpc_tls::rec::dual::{DualProver, DualVerifier, RecordCipher, RecordEvaluation};
    let mut rng = ChaCha20Rng::seed_from_u64(40 + len as u64);
    let (kv, kp, k) = shares(&mut rng);
    let seq = 7 + len as u64;
    let n_pow = chacha::cots_needed(5, len);
    let (delta, mut keys, mut macs) = cots(77 + len as u64, n_pow + 8 * len);
    let (pad_keys, pad_macs) = (keys.split_off(n_pow), macs.split_off(n_pow));
    // The verifier's garbling of the record, as in `encrypt_2pc`.
    let rp = Arc::new(Plan::new(&chacha::chacha_circuit(len))?);
    let tp = Arc::new(Plan::new(&chacha::tag_circuit())?);
    let mut v = ChachaVerifier::new(
        Arc::clone(&rp),
        Arc::clone(&tp),
        len,
        5,
        seq,
        delta,
        [1, 2],
        &mut rng,
    )?;
    let labels = chain(&mut v, delta, &kv, &kp, &mut rng)?;
    let ((rc, mut rd, re), tag_tables) = v.preprocess()?;
    let mut rc = rc.into_chunks();
    match fault {
        // Decoding: group count, the keystream group's length, its bits.
        DualFault::Decoding(j) => rd[8 + j / 8] ^= 1 << (j % 8),
        DualFault::RecordTables => rc
            .iter_mut()
            .for_each(|c| c[8..].iter_mut().for_each(|b| *b ^= 1)),
        _ => {}
    }
    let (mut os, mut or) = (OleSender::new(delta, 11), OleReceiver::new(11));
    let pending = ChachaProver::powers_choose(len, 5, &mut or, &macs)?;
    let answer = v.powers_respond(&mut os, &keys)?;
    let mut p = ChachaProver::new(
        (rp, tp),
        len,
        5,
        [1, 2],
        ((rc.into(), rd, re), tag_tables),
        pending.finish(&answer)?,
        None,
    )?;
    // The prover's garbling of the keystream, evaluated by the verifier.
    let cipher = RecordCipher::Chacha20Poly1305;
    let (dp, ot) = DualProver::new(cipher.key_iv_len(), &mut rng);
    let (mut dv, ot_answer) = DualVerifier::new(&ot, &kv, &mut rng)?;
    dv.take_labels(&dp.verifier_labels(&ot_answer)?)?;
    let kplan = Arc::new(Plan::new(&cipher.keystream_circuit(len))?);
    let mut g = dp.record(Arc::clone(&kplan), 100, seq.to_be_bytes(), &mut rng)?;
    let mut ev = RecordEvaluation::for_cipher(cipher, len, 100)?;
    let mut chunks = Vec::new();
    let mut chunk = Vec::new();
    while g.next_chunk(&mut chunk) {
        chunks.push(std::mem::take(&mut chunk));
    }
    let last = chunks.last_mut().expect("a chunk");
    match fault {
        DualFault::DualTables => last[8..].iter_mut().for_each(|b| *b ^= 1),
        DualFault::DualTablesLong => last.push(0),
        DualFault::DualTablesShort => {
            last.pop();
        }
        DualFault::DualTablesOversize => {
            chunks.push(vec![
                0;
                webproof_mpc::max_stream_bytes(cipher.max_ands(len))
            ]);
        }
        _ => {}
    }
    for c in chunks {
        ev.push_chunk(c)?;
    }
    ev.set_plan(kplan)?;
    let (end, check) = g.finish(&pad_macs)?;
    ev.end(&end)?;
    // Online: the prover evaluates, the verifier answers `Y`, the prover
    // checks before it uses the keystream.
    let ks = p.keystream(&labels, &kp)?;
    let gv_zero = v.circuits().0.garbler().output_zero_labels(0)?.to_vec();
    let y = ev.check_value(&dv, &dp.prover_labels(&kp)?, &gv_zero, &pad_keys, delta)?;
    let active = p.circuits().0.evaluator().output_labels(0)?.to_vec();
    check.check(&bytes_to_bits(&ks), &active, &pad_macs, &y)?;
    // Whatever passed the check is the true keystream.
    let zeros = vec![0u8; len];
    let want = reference(&k, &zeros, seq, &[]);
    assert_eq!(ks, want[..len], "{len}");
    Ok(ks)
}

/// Honest records of every length the issue names pass the dual
/// execution with ChaCha20's own bound (1 to 16 bytes did not fit the
/// AES-256 one), and each keystream is ChaCha20's.
#[test]
fn keystream_is_checked_by_dual_execution() {
    for len in [1, 15, 16, 17, 64, 65, 1000] {
        assert_eq!(dual_run(len, DualFault::None).unwrap().len(), len);
    }
}

/// A verifier whose record circuit makes the prover decode another
/// keystream (a flipped decoding bit, first or last; spoiled tables) is
/// refused before the keystream is used.
#[test]
fn dual_execution_refuses_another_keystream() {
    for (len, fault) in [
        (1, DualFault::Decoding(0)),
        (16, DualFault::Decoding(127)),
        (65, DualFault::Decoding(8 * 65 - 1)),
        (100, DualFault::Decoding(300)),
        (17, DualFault::RecordTables),
    ] {
        let r = dual_run(len, fault);
        assert!(
            matches!(r, Err(Error::VerifierCheated(_))),
            "{len} {fault:?}: {r:?}"
        );
    }
}

/// The prover's tables spoiled or of the wrong size: refused on arrival
/// (beyond the bound), by the evaluation (a table cut or lengthened), or
/// by the check (spoiled): never a keystream the prover uses.
#[test]
fn dual_execution_refuses_wrong_tables() {
    for (len, fault) in [
        (15, DualFault::DualTables),
        (64, DualFault::DualTables),
        (15, DualFault::DualTablesLong),
        (15, DualFault::DualTablesShort),
        (1, DualFault::DualTablesOversize),
        (1000, DualFault::DualTablesOversize),
    ] {
        let r = dual_run(len, fault);
        match fault {
            DualFault::DualTables => assert!(
                matches!(r, Err(Error::VerifierCheated(_))),
                "{len} {fault:?}: {r:?}"
            ),
            _ => assert!(
                matches!(r, Err(Error::Malformed(_) | Error::ChunkLength { .. })),
                "{len} {fault:?}: {r:?}"
            ),
        }
    }
}

/// How the verifier deviates in a record's bitwise OLEs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum OleCheat {
    None,
    /// One element of the powers' answer off by one bit (it counts only
    /// if the prover's choice bit of that COT is 1).
    PowersElement(usize),
    /// The same in the hidden ciphertext's answer.
    HiddenElement(usize),
    /// The hidden ciphertext's OLEs answered honestly, but on another
    /// element than `A_i·2^k` for one COT, and that element revealed: an
    /// answer consistent with its reveal.
    HiddenOtherInput(usize),
    /// The record circuit's multiplier revealed is not the one the
    /// powers' OLEs used.
    OtherMultiplier,
}

/// One record's bitwise OLEs (the powers and, `hidden`, the ciphertext's)
/// answered by a verifier that may cheat, then audited by the prover once
/// `Δ` is revealed: by replaying the stream on the verifier's revealed
/// OLE inputs (`consistency::audit_ole_stream`), and by
/// `chacha::audit_oles`, which computes the honest inputs itself from the
/// verifier's revealed record inputs.
fn audit_run(len: usize, hidden: bool, cheat: OleCheat) -> (Result<(), Error>, Result<(), Error>) {
    use webproof_mpc::consistency::{self, OleBitsTranscript, OleReplay, OleStreamBatch};
    use webproof_mpc::ole::OleField;
    type F = webproof_mpc::field::Poly1305Field;
    const STREAM: u64 = 11;
    let aad_len = 5;
    let mut rng = ChaCha20Rng::seed_from_u64(90 + len as u64);
    let (kv, kp, _) = shares(&mut rng);
    let n_pow = chacha::cots_needed(aad_len, len);
    let n_hide = if hidden { chacha::hide_cots(len) } else { 0 };
    let (delta, mut keys, mut macs) = cots(91 + len as u64, n_pow + n_hide);
    let (keys_hide, macs_hide) = (keys.split_off(n_pow), macs.split_off(n_pow));
    let rp = Arc::new(Plan::new(&chacha::chacha_circuit(len)).unwrap());
    let tp = Arc::new(Plan::new(&chacha::tag_circuit()).unwrap());
    let mut v = ChachaVerifier::new(rp, tp, len, aad_len, 3, delta, [1, 2], &mut rng).unwrap();
    chain(&mut v, delta, &kv, &kp, &mut rng).unwrap();
    v.preprocess().unwrap();
    let (mut os, mut or) = (OleSender::new(delta, STREAM), OleReceiver::new(STREAM));
    // A bit flip in one element keeps it canonical but for a negligible
    // fraction of values.
    let spoil = |msg: &mut [u8], j: usize| msg[F::BYTES * j] ^= 1;

    let pending = ChachaProver::powers_choose(len, aad_len, &mut or, &macs).unwrap();
    let mut answer = v.powers_respond(&mut os, &keys).unwrap();
    if let OleCheat::PowersElement(j) = cheat {
        spoil(&mut answer, j);
    }
    // The prover takes the answer (a deviation shows only in the audit).
    pending.finish(&answer).unwrap();
    let mut batches = vec![OleStreamBatch::Bits(OleBitsTranscript {
        macs: macs.clone(),
        response: answer,
    })];
    let mut revealed = os.inputs().to_vec();
    if hidden {
        let pending = ChachaProver::hide_choose(len, &mut or, &macs_hide).unwrap();
        let mut answer = v.hide_respond(&mut os, &keys_hide).unwrap();
        let mut reveal = os.inputs()[1].clone();
        match cheat {
            OleCheat::HiddenElement(j) => spoil(&mut answer, j),
            OleCheat::HiddenOtherInput(j) => {
                // The same batch from a sender at the same place in the
                // stream, on the honest elements but one.
                let mut elems: Vec<F> = os.inputs()[1]
                    .chunks(F::BYTES)
                    .map(|c| <F as OleField>::decode(c).unwrap())
                    .collect();
                elems[j] = elems[j] + F::ONE;
                let mut other = OleSender::new(delta, STREAM);
                other
                    .respond_bits_ahead::<F>(&keys, &vec![F::ZERO; n_pow])
                    .unwrap();
                answer = other.respond_bits_ahead(&keys_hide, &elems).unwrap().1;
                reveal = other.inputs()[1].clone();
            }
            _ => {}
        }
        revealed.push(reveal);
        ChachaProver::hide_finish(pending, &answer).unwrap();
        batches.push(OleStreamBatch::Bits(OleBitsTranscript {
            macs: macs_hide.clone(),
            response: answer,
        }));
    }

    // After the session: the verifier's reveal, the prover's audits.
    let mut record_inputs = v.circuits().0.retain().unwrap().own;
    if cheat == OleCheat::OtherMultiplier {
        // t + 1 in place of t (t is drawn below p - 1 but for 2^-130).
        let t = &mut record_inputs[2];
        let mut bytes = webproof_circuits::bits_to_bytes(&t[..136]);
        let x = F::from_le17(&bytes[..17]).unwrap() + F::ONE;
        bytes[..17].copy_from_slice(&x.to_le17());
        t[..136].copy_from_slice(&bytes_to_bits(&bytes[..17]));
    }
    let inputs: Vec<Vec<F>> = revealed
        .iter()
        .map(|b| {
            b.chunks(F::BYTES)
                .map(|c| <F as OleField>::decode(c).unwrap())
                .collect()
        })
        .collect();
    let by_reveal = consistency::audit_ole_stream(delta, STREAM, &batches, &inputs).map(|_| ());
    let bits = |b: &OleStreamBatch| match b {
        OleStreamBatch::Bits(t) => t.clone(),
        OleStreamBatch::Elements(_) => unreachable!(),
    };
    let mut replay = OleReplay::new(delta, STREAM);
    let hidden_batch = batches.get(1).map(bits);
    let own = chacha::audit_oles(
        &mut replay,
        &record_inputs,
        aad_len,
        len,
        &bits(&batches[0]),
        hidden_batch.as_ref(),
    );
    (by_reveal, own)
}

fn cheated(r: &Result<(), Error>) -> bool {
    matches!(r, Err(Error::VerifierCheated(_)))
}

/// An honest verifier's bitwise OLEs pass both audits, plain and hidden.
#[test]
fn honest_bitwise_oles_pass_the_audit() {
    for len in [0, 1, 40, 100] {
        for hidden in [false, true] {
            let (a, b) = audit_run(len, hidden, OleCheat::None);
            assert!(a.is_ok() && b.is_ok(), "{len} {hidden}: {a:?} {b:?}");
        }
    }
}

/// A verifier whose bitwise OLE answer deviates in one element, of the
/// powers' batch or of the hidden ciphertext's, is caught by both audits
/// whatever the prover's choice bit there; one that answered on another
/// element and revealed it is caught by the audit that computes the
/// elements itself; so is one whose powers used another multiplier than
/// its record circuit.
#[test]
fn deviating_bitwise_oles_are_caught() {
    let len = 40;
    let q = chacha::blocks_needed(5, len);
    for cheat in [
        OleCheat::PowersElement(0),
        OleCheat::PowersElement(131),
        OleCheat::PowersElement(130 * q - 1),
        OleCheat::HiddenElement(0),
        OleCheat::HiddenElement(chacha::hide_cots(len) - 1),
    ] {
        for hidden in [false, true] {
            if matches!(cheat, OleCheat::HiddenElement(_)) && !hidden {
                continue;
            }
            let (a, b) = audit_run(len, hidden, cheat);
            assert!(
                cheated(&a) && cheated(&b),
                "{cheat:?} {hidden}: {a:?} {b:?}"
            );
        }
    }
    for j in [0, 300] {
        let (a, b) = audit_run(len, true, OleCheat::HiddenOtherInput(j));
        assert!(a.is_ok(), "its reveal matches its answer: {a:?}");
        assert!(cheated(&b), "{j}: {b:?}");
    }
    let (a, b) = audit_run(len, true, OleCheat::OtherMultiplier);
    assert!(a.is_ok(), "{a:?}");
    assert!(cheated(&b), "{b:?}");
}

/// What the proof of a hidden request is given wrong.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CtFault {
    None,
    /// A bit of `D¹` (or of `D²`) other than the prover masked.
    D1,
    D2,
    /// A padding bit set in both copies: the tag would count it.
    Padding,
    /// The proof's ciphertext is not the one masked.
    OtherCt,
}

/// The statement `D¹ ⊕ χ¹ = D² ⊕ χ² = C` in a sealed QuickSilver proof on
/// the choice bits of a hidden record's COTs, drawn from the proof's own
/// COT source (as the session draws its OLE COTs); returns the prover's
/// and the verifier's results.
fn hidden_ct_proof(len: usize, fault: CtFault) -> (Result<(), Error>, Result<(), Error>) {
    use futures::executor::block_on;
    use webproof_core::cot::ideal::pair;
    use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
    use webproof_core::{memory_duplex, Channel};
    use webproof_zk::{Config, Prover, Verifier};
    const CFG: Config = Config {
        cot_batch: 4096,
        segment_bits: 4096,
    };
    let mut rng = ChaCha20Rng::seed_from_u64(60 + len as u64);
    let (mut cs, mut cr) = pair(61 + len as u64);
    let (a, b) = memory_duplex();
    let (mut ch_p, mut ch_v) = (Channel::new(a), Channel::new(b));
    let (mut keys, mut macs) = (Vec::new(), Vec::new());
    block_on(async {
        let (x, y) = futures::join!(
            cs.extend(&mut ch_v, chacha::hide_cots(len), &mut keys),
            cr.extend(&mut ch_p, chacha::hide_cots(len), &mut macs)
        );
        x.unwrap();
        y.unwrap();
    });
    let n = chacha::ct_blocks(len);
    let ct: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    let chi = webproof_circuits::bits_to_bytes(&macs.iter().map(|m| m.lsb()).collect::<Vec<_>>());
    let mut c = ct.clone();
    c.resize(16 * n, 0);
    let mut d1: Vec<u8> = c.iter().zip(&chi[..16 * n]).map(|(a, b)| a ^ b).collect();
    let mut d2: Vec<u8> = c.iter().zip(&chi[16 * n..]).map(|(a, b)| a ^ b).collect();
    let mut proven = ct.clone();
    match fault {
        CtFault::D1 => d1[0] ^= 1,
        CtFault::D2 => d2[len - 1] ^= 0x80,
        CtFault::Padding => {
            d1[16 * n - 1] ^= 0x80;
            d2[16 * n - 1] ^= 0x80;
        }
        CtFault::OtherCt => proven[len / 2] ^= 4,
        CtFault::None => {}
    }
    let mut vrng = ChaCha20Rng::seed_from_u64(62);
    block_on(async {
        let prover = async {
            let mut p = Prover::new(cr, ch_p, CFG).await.map_err(Error::from_zk)?;
            p.defer();
            let c = p.commit_bytes(&proven).await.map_err(Error::from_zk)?;
            chacha::prove_hidden_ciphertext(&mut p, len, &macs, (&d1, &d2), &c).await?;
            let sealed = p.seal(rand::random()).await.map_err(Error::from_zk)?;
            sealed.open().await.map_err(Error::from_zk)?;
            Ok::<_, Error>(())
        };
        let verifier = async {
            let mut v = Verifier::new(cs, ch_v, CFG, &mut vrng)
                .await
                .map_err(Error::from_zk)?;
            v.defer();
            let c = v.commit_bytes(len).await.map_err(Error::from_zk)?;
            chacha::verify_hidden_ciphertext(&mut v, len, &keys, (&d1, &d2), &c).await?;
            let sealed = v.seal().await.map_err(Error::from_zk)?;
            sealed.verify().await.map_err(Error::from_zk)?;
            Ok::<_, Error>(())
        };
        futures::join!(prover, verifier)
    })
}

/// The proof of a hidden request holds for the ciphertext the choice bits
/// fixed, and only for it: a copy masked otherwise, a padding bit set, or
/// another ciphertext in the proof fails the verifier's check.
#[test]
fn hidden_ciphertext_statement() {
    for len in [1, 16, 40] {
        let (p, v) = hidden_ct_proof(len, CtFault::None);
        assert!(p.is_ok() && v.is_ok(), "{len}: {p:?} {v:?}");
    }
    for (len, fault) in [
        (40, CtFault::D1),
        (40, CtFault::D2),
        (40, CtFault::Padding),
        (1, CtFault::Padding),
        (16, CtFault::OtherCt),
    ] {
        let (_, v) = hidden_ct_proof(len, fault);
        assert!(
            matches!(v, Err(Error::ConsistencyFailed(_))),
            "{len} {fault:?}: {v:?}"
        );
    }
    // The masked copies as the request carries them.
    let req = vec![0u8; chacha::hidden_request_len(3, 2)];
    let (a, b) = chacha::masked_ciphertexts(&req, 3, 20).unwrap();
    assert_eq!((a.len(), b.len()), (32, 32));
    assert!(chacha::masked_ciphertexts(&req[1..], 3, 20).is_none());
}

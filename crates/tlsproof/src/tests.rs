//! End-to-end proofs on sessions built with RustCrypto's AEADs and HKDF, and
//! cheating provers that must be caught.

use super::*;
use crate::testing::{tls12_session, tls13_session};
use futures::executor::block_on;
use rand::SeedableRng;
use webproof_core::cot::ideal;
use webproof_core::{memory_duplex, Channel};
use webproof_zk::{Config, Prover, Verifier};

/// Run a proof: the prover with its statement and witness, the verifier with its own statement.
fn run_pair(
    prover_stmt: &Statement,
    witness: &Witness,
    verifier_stmt: &Statement,
) -> (Result<Proven>, Result<Proven>) {
    let (_, p, v) = run_pair_lying(prover_stmt, witness, verifier_stmt, usize::MAX);
    (p, v)
}

/// [`run_pair`] with a prover that lies at its `lie_at`-th opening
/// ([`LyingOpens`]; `usize::MAX`: never): also the number of openings it made.
fn run_pair_lying(
    prover_stmt: &Statement,
    witness: &Witness,
    verifier_stmt: &Statement,
    lie_at: usize,
) -> (usize, Result<Proven>, Result<Proven>) {
    let (a, b) = memory_duplex();
    let (cot_s, cot_r) = ideal::pair(42);
    let cfg = Config::default();
    block_on(async {
        let prover = async {
            let inner = match Prover::new(cot_r, Channel::new(a), cfg).await {
                Ok(p) => p,
                Err(e) => return (0, Err(e)),
            };
            let mut liar = LyingOpens {
                inner,
                opens: 0,
                lie_at,
            };
            let out = run(&mut liar, prover_stmt, Some(witness)).await;
            // The prover is dropped here, so on failure the verifier sees a
            // closed channel, not a hang.
            (liar.opens, out)
        };
        let verifier = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let mut v = Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
            let out = run(&mut v, verifier_stmt, None).await;
            drop(v);
            out
        };
        let ((made, p), v) = futures::join!(prover, verifier);
        (made, p, v)
    })
}

fn expect_bytes(
    out: &DirectionOutput,
    plain: &[Vec<u8>],
    ranges: &[(usize, core::ops::Range<usize>)],
) {
    let DirectionOutput::Bytes(recs) = out else {
        panic!("expected bytes")
    };
    for (i, rec) in recs.iter().enumerate() {
        for (pos, b) in rec.iter().enumerate() {
            let disclosed = ranges
                .iter()
                .any(|(r, range)| *r == i && range.contains(&pos));
            if disclosed {
                assert_eq!(*b, Some(plain[i][pos]), "record {i} byte {pos}");
            } else {
                assert_eq!(*b, None, "record {i} byte {pos} must stay hidden");
            }
        }
    }
}

const REQUEST: &[u8] =
    b"GET /account HTTP/1.1\r\nHost: bank.example\r\nCookie: secret=hunter2\r\n\r\n";
const RESPONSE1: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
const RESPONSE2: &[u8] =
    b"{\"name\":\"alice\",\"balance\":1234567,\"iban\":\"XX00 1234 5678 9999\"}";

#[test]
fn tls13_all_suites_selective_disclosure() {
    for (aead, seed) in [
        (Aead::Aes128Gcm, 1),
        (Aead::ChaCha20Poly1305, 2),
        (Aead::Aes256Gcm, 3),
    ] {
        let mut s = tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let sent_ranges = vec![(0, 0..43)]; // request line and Host, not the cookie
        let recv_ranges = vec![
            (0, 0..RESPONSE1.len()),
            (1, 0..33),
            (1, 34..RESPONSE2.len()),
        ];
        s.statement.sent.disclosure = Disclosure::Ranges(sent_ranges.clone());
        s.statement.recv.disclosure = Disclosure::Ranges(recv_ranges.clone());
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        expect_bytes(&v.sent.disclosed, &s.sent, &sent_ranges);
        expect_bytes(&v.recv.disclosed, &s.recv, &recv_ranges);
    }
}

/// Disclosed ranges may overlap, repeat, touch, be empty or come in any
/// order (the per-record ranges are merged): exactly their union is opened.
#[test]
fn overlapping_and_unordered_ranges_open_their_union() {
    for (aead, seed) in [(Aead::Aes128Gcm, 11), (Aead::ChaCha20Poly1305, 12)] {
        let mut s = tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let recv_ranges = vec![
            (1, 40..50),
            (1, 0..5),
            (0, 3..3),
            (1, 15..25),
            (1, 10..20),
            (1, 5..7),
            (1, 0..5),
            (0, 30..RESPONSE1.len()),
            (1, 49..RESPONSE2.len()),
        ];
        s.statement.recv.disclosure = Disclosure::Ranges(recv_ranges.clone());
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        expect_bytes(&v.recv.disclosed, &s.recv, &recv_ranges);
    }
}

#[test]
fn tls13_full_reveal_opens_the_derived_keys() {
    let s = tls13_session(Aead::Aes128Gcm, 4, &[REQUEST], &[RESPONSE1]);
    let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
    p.unwrap();
    let v = v.unwrap();
    assert!(
        matches!(&v.sent.disclosed, DirectionOutput::Key { key, iv } if *key == s.keys.0 && iv.len() == 12)
    );
    assert!(matches!(&v.recv.disclosed, DirectionOutput::Key { key, .. } if *key == s.keys.1));
}

#[test]
fn tls12_all_suites_bind_finished_and_disclose() {
    for (aead, seed) in [
        (Aead::Aes128Gcm, 11),
        (Aead::ChaCha20Poly1305, 12),
        (Aead::Aes256Gcm, 13),
    ] {
        let mut s = tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let recv_ranges = vec![(1, 2..20)];
        s.statement.recv.disclosure = Disclosure::Ranges(recv_ranges.clone());
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        p.unwrap();
        let v = v.unwrap();
        assert!(matches!(&v.sent.disclosed, DirectionOutput::Key { key, .. } if *key == s.keys.0));
        expect_bytes(&v.recv.disclosed, &s.recv, &recv_ranges);
    }
}

fn assert_caught(p: Result<Proven>, v: Result<Proven>) {
    assert!(v.is_err(), "verifier accepted a false statement: {v:?}");
    let _ = p;
}

#[test]
fn wrong_handshake_secret_is_caught() {
    let s = tls13_session(Aead::Aes128Gcm, 5, &[REQUEST], &[RESPONSE1]);
    let mut wrong = s.witness.clone();
    wrong.secret[0] ^= 1;
    let (p, v) = run_pair(&s.statement, &wrong, &s.statement);
    assert_caught(p, v);
}

#[test]
fn keys_of_another_handshake_are_caught() {
    // The prover holds a real session but claims it belongs to a handshake
    // with other transcript hashes (e.g. another server): the revealed
    // handshake secrets no longer follow from its HS.
    let s = tls13_session(Aead::Aes128Gcm, 6, &[REQUEST], &[RESPONSE1]);
    let mut other = s.statement.clone();
    if let Handshake::Tls13(h) = &mut other.handshake {
        h.finished_hash[3] ^= 0x40;
    }
    // Prover proves for `other` (consistent with its HS), verifier checks the real one.
    let mut ranges = other.clone();
    ranges.recv.disclosure = Disclosure::Ranges(vec![(0, 0..8)]);
    let mut real = s.statement.clone();
    real.recv.disclosure = Disclosure::Ranges(vec![(0, 0..8)]);
    let (p, v) = run_pair(&ranges, &s.witness, &real);
    assert_caught(p, v);
}

#[test]
fn dropped_reordered_replayed_records_are_caught() {
    let s = tls13_session(
        Aead::Aes128Gcm,
        7,
        &[REQUEST],
        &[RESPONSE1, RESPONSE2, RESPONSE1],
    );
    let all = |recs: &[SealedRecord]| {
        Disclosure::Ranges(
            recs.iter()
                .enumerate()
                .map(|(i, r)| (i, 0..r.ciphertext.len()))
                .collect(),
        )
    };
    let mut verifier_view = s.statement.clone();
    verifier_view.recv.disclosure = all(&verifier_view.recv.records);
    // Reordered: the prover swaps records 1 and 2 with their sequence numbers
    // kept, so each is decrypted with the other's nonce.
    let mut reordered = verifier_view.clone();
    let seqs: Vec<u64> = reordered.recv.records.iter().map(|r| r.seq).collect();
    reordered.recv.records.swap(1, 2);
    for (r, s) in reordered.recv.records.iter_mut().zip(seqs) {
        r.seq = s;
    }
    // Replayed: record 0 claimed again in place of record 2.
    let mut replayed = verifier_view.clone();
    replayed.recv.records[2] = SealedRecord {
        seq: 2,
        ..replayed.recv.records[0].clone()
    };
    // The verifier decrypts only what it recorded, in its order: a cheat
    // either breaks the proof or changes nothing the verifier outputs.
    let truth: Vec<Vec<u8>> = s.recv.clone();
    for (name, cheat) in [("reordered", reordered), ("replayed", replayed)] {
        let (_, v) = run_pair(&cheat, &s.witness, &verifier_view);
        if let Ok(v) = v {
            let DirectionOutput::Bytes(recs) = &v.recv.disclosed else {
                panic!("bytes")
            };
            for (i, rec) in recs.iter().enumerate() {
                let got: Vec<u8> = rec.iter().map(|b| b.expect("all disclosed")).collect();
                assert_eq!(
                    got, truth[i],
                    "{name}: verifier output differs from what it recorded"
                );
            }
        }
    }
    // Dropped: the prover's statement has fewer records than the verifier
    // recorded; the proofs desynchronise and the verifier rejects.
    let mut dropped = verifier_view.clone();
    dropped.recv.records.pop();
    dropped.recv.disclosure = all(&dropped.recv.records);
    let (p, v) = run_pair(&dropped, &s.witness, &verifier_view);
    assert_caught(p, v);
}

#[test]
fn tls12_wrong_master_secret_or_finished_is_caught() {
    let s = tls12_session(Aead::Aes128Gcm, 14, &[REQUEST], &[RESPONSE1]);
    let mut wrong = s.witness.clone();
    wrong.secret[47] ^= 0x80;
    let (p, v) = run_pair(&s.statement, &wrong, &s.statement);
    assert_caught(p, v);
    // A server Finished from another session does not decrypt to this master
    // secret's verify_data.
    let other = tls12_session(Aead::Aes128Gcm, 15, &[REQUEST], &[RESPONSE1]);
    let mut spliced = s.statement.clone();
    if let (Handshake::Tls12(h), Handshake::Tls12(o)) =
        (&mut spliced.handshake, &other.statement.handshake)
    {
        h.server_finished = o.server_finished.clone();
    }
    let (p, v) = run_pair(&spliced, &s.witness, &spliced);
    assert_caught(p, v);
}

/// A prover that opens, at its `lie_at`-th opening, a value other than
/// the committed one (one bit flipped with the MAC it can compute): the key
/// derivation opens each HMAC key's inner state and the TLS 1.2 PRF's chain
/// values, and the verifier hashes on from what was opened.
struct LyingOpens<P> {
    inner: P,
    opens: usize,
    lie_at: usize,
}

impl<P: ZkParty> ZkParty for LyingOpens<P> {
    type Bit = P::Bit;
    fn constant(&self, value: bool) -> P::Bit {
        self.inner.constant(value)
    }
    fn xor(&self, a: P::Bit, b: P::Bit) -> P::Bit {
        self.inner.xor(a, b)
    }
    async fn commit_secret(&mut self, witness: Option<&[u8]>, len: usize) -> Result<Vec<P::Bit>> {
        self.inner.commit_secret(witness, len).await
    }
    async fn eval(
        &mut self,
        circuit: &webproof_circuits::Circuit,
        inputs: &[&[P::Bit]],
    ) -> Result<Vec<Vec<P::Bit>>> {
        self.inner.eval(circuit, inputs).await
    }
    async fn eval_batch(
        &mut self,
        circuit: &webproof_circuits::Circuit,
        n: usize,
        inputs: &[&[P::Bit]],
    ) -> Result<Vec<Vec<P::Bit>>> {
        self.inner.eval_batch(circuit, n, inputs).await
    }
    async fn open(&mut self, bits: &[P::Bit]) -> Result<Vec<bool>> {
        let mut bits = bits.to_vec();
        if self.opens == self.lie_at {
            let one = self.inner.constant(true);
            for i in [0, bits.len() / 2] {
                bits[i] = self.inner.xor(bits[i], one);
            }
        }
        self.opens += 1;
        self.inner.open(&bits).await
    }
    async fn assert_public(&mut self, bits: &[P::Bit], values: &[bool]) -> Result<()> {
        self.inner.assert_public(bits, values).await
    }
    async fn assert_claimed(&mut self, bits: &[P::Bit], values: &[bool]) -> Result<()> {
        self.inner.assert_claimed(bits, values).await
    }
    async fn check(&mut self) -> Result<()> {
        self.inner.check().await
    }
    type Elem = P::Elem;
    fn pack(&self, bits: &[P::Bit]) -> Result<P::Elem> {
        self.inner.pack(bits)
    }
    fn elem_constant(&self, c: webproof_core::Block) -> P::Elem {
        self.inner.elem_constant(c)
    }
    fn elem_add(&self, a: P::Elem, b: P::Elem) -> P::Elem {
        self.inner.elem_add(a, b)
    }
    async fn mul(&mut self, a: P::Elem, b: P::Elem) -> Result<P::Elem> {
        self.inner.mul(a, b).await
    }
    async fn assert_elems_public(
        &mut self,
        elems: &[P::Elem],
        values: &[webproof_core::Block],
    ) -> Result<()> {
        self.inner.assert_elems_public(elems, values).await
    }
}

/// Every opening of the key derivation is checked against the committed
/// value: a prover that opens another inner state (TLS 1.3: `HS`, the
/// derived secret, the master secret, both traffic secrets) or another
/// chain value (TLS 1.2: the master secret's inner state, `A(1)` and `A(2)`
/// of the key block, `A(1)` of each Finished) is refused, and so is one
/// that lies in any later opening (IVs, a key, bytes). The honest run's count of
/// openings is pinned, so a change in the derivation cannot silently skip
/// openings here.
#[test]
fn lying_about_an_opened_kdf_value_is_caught() {
    for (tls13, kdf_opens) in [(true, 5), (false, 5)] {
        let s = if tls13 {
            tls13_session(Aead::Aes128Gcm, 61, &[REQUEST], &[RESPONSE1])
        } else {
            tls12_session(Aead::Aes128Gcm, 62, &[REQUEST], &[RESPONSE1])
        };
        let mut st = s.statement.clone();
        st.recv.disclosure = Disclosure::Ranges(vec![(0, 0..8)]);
        let (opens, p, v) = run_pair_lying(&st, &s.witness, &st, usize::MAX);
        assert!(p.is_ok() && v.is_ok(), "tls13={tls13}: honest run {v:?}");
        // The KDF's openings, then the IVs', the sent direction's key (the
        // fast path) and the received bytes.
        assert_eq!(opens, kdf_opens + 3, "tls13={tls13}: openings");
        for lie_at in 0..opens {
            let (_, _, v) = run_pair_lying(&st, &s.witness, &st, lie_at);
            assert!(
                v.is_err(),
                "tls13={tls13}, lie at opening {lie_at}: accepted"
            );
        }
    }
}

#[test]
fn malformed_statements_are_rejected_before_proving() {
    let s = tls13_session(Aead::Aes128Gcm, 8, &[REQUEST], &[RESPONSE1]);
    let mut bad = s.statement.clone();
    bad.recv.disclosure = Disclosure::Ranges(vec![(0, 0..RESPONSE1.len() + 1)]);
    assert!(matches!(bad.validate(), Err(Error::Malformed(_))));
    let mut bad = s.statement.clone();
    bad.recv.disclosure = Disclosure::Ranges(vec![(5, 0..1)]);
    assert!(bad.validate().is_err());
    let mut bad = s.statement.clone();
    bad.recv.records[0].explicit_nonce = Some([0; 8]);
    assert!(bad.validate().is_err());
    let mut bad = s.statement.clone();
    bad.aead = Aead::Aes256Gcm;
    assert!(
        bad.validate().is_err(),
        "SHA-256 handshake with a SHA-384 suite"
    );
}

/// SHA-256(prefix || blinder || spans) in the clear.
fn commitment_digest(c: &Commitment, blinder: &[u8], plain: &[Vec<u8>]) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(&c.prefix);
    h.update(blinder);
    for (r, range) in &c.spans {
        h.update(&plain[*r][range.clone()]);
    }
    h.finalize().into()
}

fn leaf_commitments(records: &[SealedRecord], chunk: usize, prefix_tag: u8) -> Vec<Commitment> {
    // Fixed-size chunks over the direction's plaintext, crossing record boundaries.
    let mut out = Vec::new();
    let mut spans = Vec::new();
    let mut filled = 0;
    for (i, r) in records.iter().enumerate() {
        let mut at = 0;
        while at < r.ciphertext.len() {
            let take = (chunk - filled).min(r.ciphertext.len() - at);
            spans.push((i, at..at + take));
            at += take;
            filled += take;
            if filled == chunk {
                out.push(Commitment {
                    prefix: vec![prefix_tag; 16],
                    blinder_len: 16,
                    spans: std::mem::take(&mut spans),
                });
                filled = 0;
            }
        }
    }
    if !spans.is_empty() {
        out.push(Commitment {
            prefix: vec![prefix_tag; 16],
            blinder_len: 16,
            spans,
        });
    }
    out
}

#[test]
fn commitments_hash_the_plaintext_the_verifier_never_sees() {
    for (aead, seed, tls13) in [
        (Aead::Aes128Gcm, 21, true),
        (Aead::ChaCha20Poly1305, 22, false),
    ] {
        let mut s = if tls13 {
            tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
        } else {
            tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
        };
        s.statement.sent.disclosure = Disclosure::Ranges(vec![]);
        s.statement.recv.disclosure = Disclosure::Ranges(vec![(1, 0..5)]);
        s.statement.sent.commitments = leaf_commitments(&s.statement.sent.records, 40, 1);
        s.statement.recv.commitments = leaf_commitments(&s.statement.recv.records, 50, 2);
        let blinders = |n: usize, t: u8| (0..n).map(|i| vec![t ^ i as u8; 16]).collect::<Vec<_>>();
        s.witness.sent_blinders = blinders(s.statement.sent.commitments.len(), 0x11);
        s.witness.recv_blinders = blinders(s.statement.recv.commitments.len(), 0x22);
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        for (d, plain, bl) in [
            (&v.sent, &s.sent, &s.witness.sent_blinders),
            (&v.recv, &s.recv, &s.witness.recv_blinders),
        ] {
            let coms = if std::ptr::eq(d, &v.sent) {
                &s.statement.sent.commitments
            } else {
                &s.statement.recv.commitments
            };
            assert_eq!(d.commitments.len(), coms.len());
            for ((digest, c), b) in d.commitments.iter().zip(coms).zip(bl) {
                assert_eq!(*digest, commitment_digest(c, b, plain));
            }
        }
        // Nothing of the sent direction was disclosed.
        let DirectionOutput::Bytes(recs) = &v.sent.disclosed else {
            panic!()
        };
        assert!(recs.iter().flatten().all(|b| b.is_none()));
    }
}

#[test]
fn commitment_to_other_plaintext_is_caught() {
    // The prover computes its commitments over a plaintext it made up (as if
    // the ciphertext were different); the verifier uses what it recorded.
    let mut s = tls13_session(Aead::Aes128Gcm, 23, &[REQUEST], &[RESPONSE1]);
    s.statement.sent.disclosure = Disclosure::Ranges(vec![]);
    s.statement.recv.disclosure = Disclosure::Ranges(vec![]);
    s.statement.recv.commitments = leaf_commitments(&s.statement.recv.records, 32, 3);
    s.witness.recv_blinders = vec![vec![9; 16]; s.statement.recv.commitments.len()];
    let mut forged = s.statement.clone();
    forged.recv.records[0].ciphertext[7] ^= 0x20;
    let (_, v) = run_pair(&forged, &s.witness, &s.statement);
    assert!(
        v.is_err(),
        "verifier accepted a commitment to another plaintext"
    );
}

#[test]
fn overlapping_or_unordered_commitments_are_rejected() {
    let s = tls13_session(Aead::Aes128Gcm, 24, &[REQUEST], &[RESPONSE1]);
    let mut bad = s.statement.clone();
    bad.recv.commitments = vec![
        Commitment {
            prefix: vec![],
            blinder_len: 16,
            spans: vec![(0, 10..20)],
        },
        Commitment {
            prefix: vec![],
            blinder_len: 16,
            spans: vec![(0, 15..25)],
        },
    ];
    assert!(bad.validate().is_err());
    bad.recv.commitments = vec![Commitment {
        prefix: vec![],
        blinder_len: 16,
        spans: vec![],
    }];
    assert!(bad.validate().is_err());
    bad.recv.commitments = vec![Commitment {
        prefix: vec![],
        blinder_len: 1000,
        spans: vec![(0, 0..1)],
    }];
    assert!(bad.validate().is_err());
}

/// Base OT + SoftSpokenOT + Ferret + QuickSilver, as in production, with
/// other traffic on the same connection between setup and proof; the
/// prover binds its proof to `prover_ctx`, the verifier checks it under
/// `verifier_ctx`.
fn full_stack(
    s: &crate::testing::Session,
    prover_ctx: [u8; 32],
    verifier_ctx: [u8; 32],
) -> (Result<Proven>, Result<Proven>) {
    let (a, b) = memory_duplex();
    let cfg = SessionConfig::default();
    block_on(async {
        let prover = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(1);
            let mut ch = Channel::new(a);
            let pre = ProverPreprocessed::setup(&mut ch, cfg, &mut rng).await?;
            ch.send(b"relay traffic").await?;
            pre.prove(ch, &s.statement, &s.witness, &prover_ctx)
                .await
                .map(|(p, _)| p)
        };
        let verifier = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(2);
            let mut ch = Channel::new(b);
            let pre = VerifierPreprocessed::setup(&mut ch, cfg, &mut rng).await?;
            assert_eq!(ch.recv(100).await?, b"relay traffic");
            pre.verify(ch, &s.statement, &verifier_ctx, &mut rng)
                .await
                .map(|(p, _)| p)
        };
        futures::join!(prover, verifier)
    })
}

#[test]
fn full_stack_session_with_silent_ot() {
    let mut s = tls13_session(Aead::Aes128Gcm, 31, &[REQUEST], &[RESPONSE1, RESPONSE2]);
    s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..15), (1, 0..RESPONSE2.len())]);
    let (p, v) = full_stack(&s, [7; 32], [7; 32]);
    let (p, v) = (p.unwrap(), v.unwrap());
    assert_eq!(p, v);
    expect_bytes(
        &v.recv.disclosed,
        &s.recv,
        &[(0, 0..15), (1, 0..RESPONSE2.len())],
    );
}

/// The client direction's one-time MAC material, opened by the real
/// QuickSilver proof, equals RustCrypto's for every AEAD and both TLS
/// versions; more records than one batch, an empty record, and the server
/// direction (which does not ask) gets none.
#[test]
fn tag_material_matches_the_reference() {
    use crate::testing::{record_nonce, tag_material};
    let many: Vec<&[u8]> = (0..11)
        .map(|i| match i {
            3 => b"".as_slice(),
            i if i % 2 == 0 => REQUEST,
            _ => RESPONSE2,
        })
        .collect();
    for tls13 in [true, false] {
        for (aead, seed) in [
            (Aead::Aes128Gcm, 41),
            (Aead::ChaCha20Poly1305, 42),
            (Aead::Aes256Gcm, 43),
        ] {
            let mut s = if tls13 {
                tls13_session(aead, seed, &many, &[RESPONSE1])
            } else {
                tls12_session(aead, seed, &many, &[RESPONSE1])
            };
            let sent_ranges = vec![(0, 0..14), (4, 3..9)];
            s.statement.sent.disclosure = Disclosure::Ranges(sent_ranges.clone());
            s.statement.sent.open_tag_material = true;
            s.statement.recv.disclosure = Disclosure::Ranges(vec![]);
            let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
            let (p, v) = (p.unwrap(), v.unwrap());
            assert_eq!(p, v);
            let nonces: Vec<[u8; 12]> = s
                .statement
                .sent
                .records
                .iter()
                .map(|r| record_nonce(&s.ivs.0, r))
                .collect();
            let want = tag_material(aead, &s.keys.0, &nonces);
            assert_eq!(
                v.sent.tag_material.as_ref(),
                Some(&want),
                "{aead:?} TLS 1.{}",
                if tls13 { 3 } else { 2 }
            );
            assert_eq!(v.recv.tag_material, None);
            expect_bytes(&v.sent.disclosed, &s.sent, &sent_ranges);
        }
    }
}

/// Edge cases: no client records (AES-GCM still opens H), and the option
/// with the key fast path (both are opened).
#[test]
fn tag_material_without_records_and_with_the_key_path() {
    use crate::testing::{record_nonce, tag_material};
    let mut s = tls13_session(Aead::Aes128Gcm, 44, &[], &[RESPONSE1]);
    s.statement.sent.open_tag_material = true;
    s.statement.sent.disclosure = Disclosure::Ranges(vec![]);
    let (_, v) = run_pair(&s.statement, &s.witness, &s.statement);
    let v = v.unwrap();
    assert_eq!(
        v.sent.tag_material,
        Some(tag_material(Aead::Aes128Gcm, &s.keys.0, &[]))
    );
    let mut s = tls12_session(Aead::ChaCha20Poly1305, 45, &[REQUEST], &[RESPONSE1]);
    s.statement.sent.open_tag_material = true;
    let (_, v) = run_pair(&s.statement, &s.witness, &s.statement);
    let v = v.unwrap();
    assert!(matches!(v.sent.disclosed, DirectionOutput::Key { .. }));
    let nonce = record_nonce(&s.ivs.0, &s.statement.sent.records[0]);
    assert_eq!(
        v.sent.tag_material,
        Some(tag_material(Aead::ChaCha20Poly1305, &s.keys.0, &[nonce]))
    );
}

/// Both parties must agree on the option: a prover that skips opening the
/// material desynchronises the proof and the verifier refuses.
#[test]
fn tag_material_option_mismatch_is_refused() {
    let mut s = tls13_session(Aead::Aes128Gcm, 46, &[REQUEST], &[RESPONSE1]);
    s.statement.sent.disclosure = Disclosure::Ranges(vec![(0, 0..4)]);
    let mut verifier_view = s.statement.clone();
    verifier_view.sent.open_tag_material = true;
    let (p, v) = run_pair(&s.statement, &s.witness, &verifier_view);
    assert_caught(p, v);
}

/// Byte classes: honest hidden bytes that avoid their classes pass (all
/// AEADs, both versions, spans across records and blocks, two classes on
/// one direction) and nothing of them is opened.
#[test]
fn byte_classes_hold_for_honest_bytes() {
    // RESPONSE2 = {"name":"alice","balance":1234567,"iban":"XX00 1234 5678 9999"}
    let strings = vec![(1, 9..14), (1, 42..61)]; // alice, the IBAN
    let tokens = vec![(1, 26..33)]; // 1234567
    for tls13 in [true, false] {
        for (aead, seed) in [
            (Aead::Aes128Gcm, 51),
            (Aead::ChaCha20Poly1305, 52),
            (Aead::Aes256Gcm, 53),
        ] {
            let mut s = if tls13 {
                tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
            } else {
                tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
            };
            let recv_ranges = vec![(0, 0..RESPONSE1.len()), (1, 0..9), (1, 14..26)];
            s.statement.recv.disclosure = Disclosure::Ranges(recv_ranges.clone());
            s.statement.recv.byte_classes = vec![
                ByteClass {
                    forbidden: b"\"\\".to_vec(),
                    spans: strings.clone(),
                },
                ByteClass {
                    forbidden: b"\t\n\r \",:[\\]{}"
                        .iter()
                        .copied()
                        .collect::<std::collections::BTreeSet<u8>>()
                        .into_iter()
                        .collect(),
                    spans: tokens.clone(),
                },
            ];
            let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
            let (p, v) = (p.unwrap(), v.unwrap());
            assert_eq!(p, v);
            expect_bytes(&v.recv.disclosed, &s.recv, &recv_ranges);
        }
    }
}

/// A cheating prover: a constrained byte equals a forbidden value (a quote
/// inside a "hidden string", a comma inside a "hidden number", a span that
/// covers `","k":"`). It runs the proof honestly on its true data, and the
/// verifier refuses.
#[test]
fn byte_class_violation_is_caught() {
    let quote_set = b"\"\\".to_vec();
    let token_set: Vec<u8> = b"\t\n\r \",:[\\]{}"
        .iter()
        .copied()
        .collect::<std::collections::BTreeSet<u8>>()
        .into_iter()
        .collect();
    for (aead, seed, forbidden, spans) in [
        // `alice","balance":` as one hidden string.
        (Aead::Aes128Gcm, 61, quote_set.clone(), vec![(1, 9..26)]),
        // One byte: the closing quote of "alice".
        (
            Aead::ChaCha20Poly1305,
            62,
            quote_set.clone(),
            vec![(1, 14..15)],
        ),
        // `1234567,` as one hidden number.
        (Aead::Aes256Gcm, 63, token_set.clone(), vec![(1, 26..34)]),
        // Whitespace inside the IBAN as a token; fine spans before it.
        (
            Aead::Aes128Gcm,
            64,
            token_set,
            vec![(1, 26..33), (1, 42..61)],
        ),
    ] {
        let mut s = tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..4)]);
        s.statement.recv.byte_classes = vec![ByteClass { forbidden, spans }];
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        assert_caught(p, v);
    }
    // Same in TLS 1.2, the sent direction.
    let mut s = tls12_session(Aead::Aes128Gcm, 65, &[REQUEST], &[RESPONSE1]);
    s.statement.sent.disclosure = Disclosure::Ranges(vec![(0, 0..3)]);
    s.statement.sent.byte_classes = vec![ByteClass {
        forbidden: vec![b' '],
        spans: vec![(0, 0..10)], // "GET /account": a space at 3
    }];
    let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
    assert_caught(p, v);
}

/// Long spans: more bytes than one engine batch and than one class batch
/// (`CLASS_BATCH`), across records; a single forbidden byte at the very end
/// is still caught.
#[test]
fn long_byte_class_spans() {
    let long = vec![b'a'; 9000];
    let mut bad = long.clone();
    bad[8999] = b'"';
    for (data, ok) in [(&long, true), (&bad, false)] {
        let chunks: Vec<&[u8]> = data.chunks(4500).collect();
        let mut s = tls13_session(Aead::Aes128Gcm, 67, &[REQUEST], &chunks);
        s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..1)]);
        s.statement.recv.byte_classes = vec![ByteClass {
            forbidden: b"\"\\".to_vec(),
            spans: vec![(0, 1..4500), (1, 0..4500)],
        }];
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        if ok {
            assert_eq!(p.unwrap(), v.unwrap());
        } else {
            assert_caught(p, v);
        }
    }
}

/// A 16 KB record has counters up to 1,025: five prefixes (nonce and the
/// counter's high bytes), each proven once as a head and kept across the
/// record's keystream batches. Bytes disclosed in every segment are the
/// true ones, under both TLS versions and both AES suites, and a prover
/// that lies in its opening of them is caught.
#[test]
fn long_records_disclose_across_counter_prefixes() {
    let body: Vec<u8> = (0..16384u32).map(|i| (i * 7 + i / 256) as u8).collect();
    let ranges = vec![
        (0, 10..30),
        (0, 4000..4100),
        (0, 8190..8210),
        (0, 12000..12001),
        (0, 16300..16384),
    ];
    for (tls13, aead, seed) in [
        (true, Aead::Aes128Gcm, 91),
        (false, Aead::Aes256Gcm, 92),
        (false, Aead::Aes128Gcm, 93),
    ] {
        let mut s = if tls13 {
            tls13_session(aead, seed, &[REQUEST], &[&body])
        } else {
            tls12_session(aead, seed, &[REQUEST], &[&body])
        };
        s.statement.recv.disclosure = Disclosure::Ranges(ranges.clone());
        let (opens, p, v) = run_pair_lying(&s.statement, &s.witness, &s.statement, usize::MAX);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        expect_bytes(&v.recv.disclosed, &s.recv, &ranges);
        let (_, _, v) = run_pair_lying(&s.statement, &s.witness, &s.statement, opens - 1);
        assert!(
            v.is_err(),
            "{aead:?}: a lie about the disclosed bytes was accepted"
        );
    }
}

/// Both parties must agree on the classes, and malformed classes are refused.
#[test]
#[allow(clippy::reversed_empty_ranges)]
fn byte_classes_are_part_of_the_statement() {
    let mut s = tls13_session(Aead::Aes128Gcm, 66, &[REQUEST], &[RESPONSE1, RESPONSE2]);
    s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..4)]);
    let mut verifier_view = s.statement.clone();
    verifier_view.recv.byte_classes = vec![ByteClass {
        forbidden: vec![b'"'],
        spans: vec![(1, 9..14)],
    }];
    let (p, v) = run_pair(&s.statement, &s.witness, &verifier_view);
    assert_caught(p, v);
    for (forbidden, spans) in [
        (vec![], vec![(1, 0..1)]),
        (vec![b'b', b'a'], vec![(1, 0..1)]),
        (vec![b'a', b'a'], vec![(1, 0..1)]),
        (vec![b'a'], vec![(1, 3..2)]),
        (vec![b'a'], vec![(1, 2..2)]),
        (vec![b'a'], vec![(1, 0..500)]),
        (vec![b'a'], vec![(7, 0..1)]),
        (vec![b'a'], vec![(1, 4..6), (1, 5..7)]),
        (vec![b'a'], vec![(1, 4..6), (0, 5..7)]),
    ] {
        let mut bad = s.statement.clone();
        bad.recv.byte_classes = vec![ByteClass { forbidden, spans }];
        assert!(bad.validate().is_err(), "{:?}", bad.recv.byte_classes);
    }
    let mut many = s.statement.clone();
    many.recv.byte_classes = vec![
        ByteClass {
            forbidden: vec![0],
            spans: vec![]
        };
        MAX_BYTE_CLASSES + 1
    ];
    assert!(many.validate().is_err());
}

/// The ideal party of `testing` gives the verifier exactly what the real
/// QuickSilver proof gives it on honest statements: TLS 1.3 and 1.2, every
/// AEAD, range disclosure, the key fast path and hash commitments; and it
/// refuses what the real verifier refuses (a wrong secret).
#[test]
fn ideal_party_matches_the_real_proof() {
    use crate::testing::IdealZk;
    for (aead, seed, tls13) in [
        (Aead::Aes128Gcm, 41, true),
        (Aead::Aes256Gcm, 42, true),
        (Aead::ChaCha20Poly1305, 43, true),
        (Aead::Aes128Gcm, 44, false),
        (Aead::Aes256Gcm, 45, false),
        (Aead::ChaCha20Poly1305, 46, false),
    ] {
        let mut s = if tls13 {
            tls13_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
        } else {
            tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2])
        };
        // Sent: the key fast path; received: ranges and commitments.
        s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 3..9), (1, 0..20)]);
        s.statement.recv.commitments = leaf_commitments(&s.statement.recv.records, 37, 5);
        s.witness.recv_blinders = (0..s.statement.recv.commitments.len())
            .map(|i| vec![i as u8; 16])
            .collect();
        let (p, v) = run_pair(&s.statement, &s.witness, &s.statement);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p, v);
        let ideal = block_on(run(&mut IdealZk::new(), &s.statement, Some(&s.witness))).unwrap();
        assert_eq!(ideal, v, "{aead:?} tls13={tls13}");

        let mut wrong = s.witness.clone();
        wrong.secret[1] ^= 4;
        let (_, v) = run_pair(&s.statement, &wrong, &s.statement);
        assert!(v.is_err());
        let ideal = block_on(run(&mut IdealZk::new(), &s.statement, Some(&wrong)));
        assert!(
            matches!(ideal, Err(Error::CheckFailed(_))),
            "{aead:?} tls13={tls13}: {ideal:?}"
        );
    }
}

/// A proof made for one session context (transcript and plan digest) is
/// rejected by a verifier that computed another.
#[test]
fn full_stack_proof_is_bound_to_its_context() {
    let mut s = tls13_session(Aead::Aes128Gcm, 32, &[REQUEST], &[RESPONSE1]);
    s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..15)]);
    let mut other = [7u8; 32];
    other[0] ^= 0x80;
    let (p, v) = full_stack(&s, [7; 32], other);
    assert!(matches!(v, Err(Error::CheckFailed(_))), "{v:?}");
    assert!(p.is_err());
}

/// `assert_plaintext` with a key committed by the caller (as MPC mode's
/// key imported from garbled labels): true claims across records pass, a
/// claim with one flipped bit or at another offset is caught.
#[test]
fn assert_plaintext_with_an_authenticated_key() {
    for (aead, seed, flip, shift) in [
        (Aead::Aes128Gcm, 31, false, false),
        (Aead::Aes256Gcm, 32, false, false),
        (Aead::Aes128Gcm, 33, true, false),
        (Aead::Aes128Gcm, 34, false, true),
    ] {
        let s = tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let records = s.statement.recv.records.clone();
        let key = s.keys.1.clone();
        let iv = s.ivs.1.clone();
        let mut claims = vec![
            PlaintextClaim {
                record: 0,
                offset: 3,
                bytes: s.recv[0][3..40].to_vec(),
            },
            PlaintextClaim {
                record: 1,
                offset: 0,
                bytes: s.recv[1][..17].to_vec(),
            },
        ];
        if flip {
            claims[1].bytes[16] ^= 0x04;
        }
        if shift {
            claims[0].offset += 1;
        }
        let (a, b) = memory_duplex();
        let (cot_s, cot_r) = ideal::pair(seed);
        let cfg = Config::default();
        let (p, v) = block_on(async {
            let prover = async {
                let mut p = Prover::new(cot_r, Channel::new(a), cfg).await?;
                let k = p.commit_bytes(&key).await?;
                assert_plaintext(&mut p, aead, &k, &iv, &records, &claims).await?;
                p.finish().await.map(|_| ())
            };
            let verifier = async {
                let mut rng = rand::rngs::StdRng::seed_from_u64(7);
                let mut v = Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
                let k = v.commit_bytes(key.len()).await?;
                assert_plaintext(&mut v, aead, &k, &iv, &records, &claims).await?;
                v.finish().await.map(|_| ())
            };
            futures::join!(prover, verifier)
        });
        if flip || shift {
            assert!(v.is_err(), "seed {seed}: a false claim passed");
        } else {
            p.unwrap();
            v.unwrap();
        }
    }
}

/// `assert_masked_plaintext`: each record's public ciphertext is the true
/// one XOR a mask the prover committed (as MPC mode's request, masked by
/// COT choice bits the verifier never sees). True claims pass; a claim
/// with one flipped bit, or a mask the prover changed by one bit, is
/// caught; masks of the wrong length are refused.
#[test]
fn assert_plaintext_under_masked_ciphertexts() {
    for (seed, how) in [(41, ""), (42, "claim"), (43, "mask"), (44, "length")] {
        let aead = Aead::Aes128Gcm;
        let s = tls12_session(aead, seed, &[REQUEST], &[RESPONSE1, RESPONSE2]);
        let key = s.keys.1.clone();
        let iv = s.ivs.1.clone();
        let masks: Vec<Vec<u8>> = s
            .statement
            .recv
            .records
            .iter()
            .map(|r| {
                (0..r.ciphertext.len())
                    .map(|i| (i * 37 + 11) as u8)
                    .collect()
            })
            .collect();
        let mut records = s.statement.recv.records.clone();
        for (r, m) in records.iter_mut().zip(&masks) {
            r.ciphertext.iter_mut().zip(m).for_each(|(c, m)| *c ^= m);
        }
        let mut claims = vec![PlaintextClaim {
            record: 1,
            offset: 2,
            bytes: s.recv[1][2..30].to_vec(),
        }];
        let mut witness = masks.clone();
        match how {
            "claim" => claims[0].bytes[5] ^= 0x10,
            "mask" => witness[1][7] ^= 0x01,
            _ => {}
        }
        let short = how == "length";
        let (a, b) = memory_duplex();
        let (cot_s, cot_r) = ideal::pair(seed);
        let cfg = Config::default();
        let (p, v) = block_on(async {
            let prover = async {
                let mut p = Prover::new(cot_r, Channel::new(a), cfg).await?;
                let k = p.commit_bytes(&key).await?;
                let mut m = Vec::new();
                for w in &witness {
                    m.push(p.commit_bytes(w).await?);
                }
                if short {
                    m[0].pop();
                }
                assert_masked_plaintext(&mut p, aead, &k, &iv, &records, &m, &claims).await?;
                p.finish().await.map(|_| ())
            };
            let verifier = async {
                let mut rng = rand::rngs::StdRng::seed_from_u64(7);
                let mut v = Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
                let k = v.commit_bytes(key.len()).await?;
                let mut m = Vec::new();
                for w in &masks {
                    m.push(v.commit_bytes(w.len()).await?);
                }
                if short {
                    m[0].pop();
                }
                assert_masked_plaintext(&mut v, aead, &k, &iv, &records, &m, &claims).await?;
                v.finish().await.map(|_| ())
            };
            futures::join!(prover, verifier)
        });
        if how.is_empty() {
            p.unwrap();
            v.unwrap();
        } else {
            assert!(v.is_err(), "seed {seed} ({how}): a false claim passed");
        }
    }
}

/// [`assert_tags`] asserts the AES-GCM tags themselves: records sealed by
/// the `aes-gcm` crate pass, for both key sizes, under the ideal party
/// and the real engine; a flipped ciphertext bit, another tag or other
/// additional data is refused.
#[test]
fn asserted_tags_are_the_aead_tags() {
    use crate::testing::IdealZk;
    use aes_gcm::aead::{Aead as _, KeyInit, Payload};
    let salt = [9u8, 8, 7, 6];
    let seal = |key: &[u8], seq: u64, msg: &[u8]| -> (SealedRecord, RecordTag) {
        let explicit = (seq * 1000 + 17).to_be_bytes();
        let nonce = [&salt[..], &explicit].concat();
        let mut aad = seq.to_be_bytes().to_vec();
        aad.extend([23, 3, 3]);
        aad.extend((msg.len() as u16).to_be_bytes());
        let payload = Payload { msg, aad: &aad };
        let out = if key.len() == 16 {
            aes_gcm::Aes128Gcm::new_from_slice(key)
                .unwrap()
                .encrypt(nonce.as_slice().into(), payload)
        } else {
            aes_gcm::Aes256Gcm::new_from_slice(key)
                .unwrap()
                .encrypt(nonce.as_slice().into(), payload)
        }
        .unwrap();
        let (ct, tag) = out.split_at(msg.len());
        (
            SealedRecord {
                seq,
                explicit_nonce: Some(explicit),
                ciphertext: ct.to_vec(),
            },
            RecordTag {
                aad,
                tag: tag.try_into().unwrap(),
            },
        )
    };
    for (aead, key) in [
        (Aead::Aes128Gcm, vec![3u8; 16]),
        (Aead::Aes256Gcm, vec![5u8; 32]),
    ] {
        let msgs: [&[u8]; 3] = [b"HTTP/1.1 200 OK\r\n\r\nhello", &[0x42; 100], b""];
        let (records, tags): (Vec<_>, Vec<_>) = msgs
            .iter()
            .enumerate()
            .map(|(i, m)| seal(&key, i as u64 + 1, m))
            .unzip();
        let bits = webproof_circuits::bits::bytes_to_bits(&key);
        let ideal = |records: &[SealedRecord], tags: &[RecordTag]| {
            block_on(assert_tags(
                &mut IdealZk::new(),
                aead,
                &bits,
                &salt,
                records,
                tags,
            ))
        };
        ideal(&records, &tags).unwrap();
        let mut flipped = records.clone();
        flipped[0].ciphertext[9] ^= b'2' ^ b'5';
        assert!(ideal(&flipped, &tags).is_err());
        let mut other = tags.clone();
        other[1].tag[15] ^= 1;
        assert!(ideal(&records, &other).is_err());
        let mut other = tags.clone();
        other[2].aad[8] = 21;
        assert!(ideal(&records, &other).is_err());
        // The real engine, honest and flipped.
        for (recs, ok) in [(&records, true), (&flipped, false)] {
            let (a, b) = memory_duplex();
            let (cot_s, cot_r) = ideal::pair(77);
            let cfg = Config::default();
            let (p, v) = block_on(async {
                let prover = async {
                    let mut p = Prover::new(cot_r, Channel::new(a), cfg).await?;
                    let k = p.commit_bytes(&key).await?;
                    assert_tags(&mut p, aead, &k, &salt, recs, &tags).await?;
                    p.finish().await.map(|_| ())
                };
                let verifier = async {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
                    let mut v = Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
                    let k = v.commit_bytes(key.len()).await?;
                    assert_tags(&mut v, aead, &k, &salt, recs, &tags).await?;
                    v.finish().await.map(|_| ())
                };
                futures::join!(prover, verifier)
            });
            assert_eq!(v.is_ok(), ok, "{aead:?}: {v:?} (prover {p:?})");
        }
    }
}

/// TLS 1.3's nonce with a key authenticated elsewhere (MPC mode over TLS
/// 1.3): AES-GCM records under the 12-byte IV XOR the sequence number and
/// the record header as additional data pass `assert_tags` and
/// `assert_plaintext`; explicit nonces with a 12-byte IV, or a 4-byte
/// salt without them, are refused as before.
#[test]
fn tls13_nonces_with_an_authenticated_key() {
    use crate::testing::IdealZk;
    use aes_gcm::aead::{Aead as _, KeyInit, Payload};
    let key = [7u8; 16];
    let iv = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    let msgs: [&[u8]; 2] = [b"HTTP/1.1 200 OK\r\n\r\nhi\x17", b"\x00\x00\x15\x00\x17"];
    let mut records = Vec::new();
    let mut tags = Vec::new();
    for (seq, m) in msgs.iter().enumerate() {
        let mut nonce = iv;
        for (n, s) in nonce[4..].iter_mut().zip((seq as u64).to_be_bytes()) {
            *n ^= s;
        }
        let aad = [23, 3, 3, 0, (m.len() + 16) as u8];
        let out = aes_gcm::Aes128Gcm::new_from_slice(&key)
            .unwrap()
            .encrypt(nonce.as_slice().into(), Payload { msg: m, aad: &aad })
            .unwrap();
        let (ct, tag) = out.split_at(m.len());
        records.push(SealedRecord {
            seq: seq as u64,
            explicit_nonce: None,
            ciphertext: ct.to_vec(),
        });
        tags.push(RecordTag {
            aad: aad.to_vec(),
            tag: tag.try_into().unwrap(),
        });
    }
    let bits = webproof_circuits::bits::bytes_to_bits(&key);
    let aead = Aead::Aes128Gcm;
    block_on(assert_tags(
        &mut IdealZk::new(),
        aead,
        &bits,
        &iv,
        &records,
        &tags,
    ))
    .unwrap();
    let claims = [PlaintextClaim {
        record: 0,
        offset: 0,
        bytes: b"HTTP/1.1".to_vec(),
    }];
    block_on(assert_plaintext(
        &mut IdealZk::new(),
        aead,
        &bits,
        &iv,
        &records,
        &claims,
    ))
    .unwrap();
    let wrong = [PlaintextClaim {
        record: 0,
        offset: 0,
        bytes: b"HTTP/2.0".to_vec(),
    }];
    assert!(block_on(assert_plaintext(
        &mut IdealZk::new(),
        aead,
        &bits,
        &iv,
        &records,
        &wrong
    ))
    .is_err());
    let mut with_explicit = records.clone();
    with_explicit[0].explicit_nonce = Some([0; 8]);
    assert!(block_on(assert_tags(
        &mut IdealZk::new(),
        aead,
        &bits,
        &iv,
        &with_explicit,
        &tags
    ))
    .is_err());
    assert!(block_on(assert_tags(
        &mut IdealZk::new(),
        aead,
        &bits,
        &iv[..4],
        &records,
        &tags
    ))
    .is_err());
}

//! Real TLS sessions built with RustCrypto's AEADs, HKDF and HMAC, outside
//! any circuit: the reference the statements are tested and benchmarked
//! against. Enabled for tests and with the `testing` feature.

use crate::*;
use aes_gcm::aead::{Aead as _, KeyInit, Payload};
use hmac::{Hmac, Mac};
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256, Sha384};

pub fn expand_label<H>(secret: &[u8], label: &str, ctx: &[u8], len: usize) -> Vec<u8>
where
    H: Digest + hmac::digest::core_api::BlockSizeUser + Clone,
    hmac::SimpleHmac<H>: hmac::digest::KeyInit,
{
    let hk = hkdf::SimpleHkdf::<H>::from_prk(secret).expect("prk");
    let mut info = (len as u16).to_be_bytes().to_vec();
    let full = format!("tls13 {label}");
    info.push(full.len() as u8);
    info.extend_from_slice(full.as_bytes());
    info.push(ctx.len() as u8);
    info.extend_from_slice(ctx);
    let mut out = vec![0u8; len];
    hk.expand(&info, &mut out).expect("expand");
    out
}

/// What the TLS 1.3 key schedule gives for `hs` (reference, outside the circuit).
pub struct Keys13 {
    pub c_hs: Vec<u8>,
    pub s_hs: Vec<u8>,
    pub c_key: Vec<u8>,
    pub c_iv: Vec<u8>,
    pub s_key: Vec<u8>,
    pub s_iv: Vec<u8>,
}

pub fn schedule13(aead: Aead, hs: &[u8], hello: &[u8], fin: &[u8]) -> Keys13 {
    fn go<H>(aead: Aead, hs: &[u8], hello: &[u8], fin: &[u8]) -> Keys13
    where
        H: Digest + hmac::digest::core_api::BlockSizeUser + Clone,
        hmac::SimpleHmac<H>: hmac::digest::KeyInit,
    {
        let n = <H as Digest>::output_size();
        let c_hs = expand_label::<H>(hs, "c hs traffic", hello, n);
        let s_hs = expand_label::<H>(hs, "s hs traffic", hello, n);
        let derived = expand_label::<H>(hs, "derived", &H::digest(b""), n);
        let (ms, _) = hkdf::SimpleHkdf::<H>::extract(Some(&derived), &vec![0u8; n]);
        let c_ap = expand_label::<H>(&ms, "c ap traffic", fin, n);
        let s_ap = expand_label::<H>(&ms, "s ap traffic", fin, n);
        Keys13 {
            c_key: expand_label::<H>(&c_ap, "key", &[], aead.key_len()),
            c_iv: expand_label::<H>(&c_ap, "iv", &[], 12),
            s_key: expand_label::<H>(&s_ap, "key", &[], aead.key_len()),
            s_iv: expand_label::<H>(&s_ap, "iv", &[], 12),
            c_hs,
            s_hs,
        }
    }
    match aead {
        Aead::Aes256Gcm => go::<Sha384>(aead, hs, hello, fin),
        _ => go::<Sha256>(aead, hs, hello, fin),
    }
}

/// Encrypt `pt` as record `seq` (payload only; the tag is dropped, as in a statement).
pub fn seal(aead: Aead, key: &[u8], nonce: &[u8; 12], pt: &[u8]) -> Vec<u8> {
    let payload = Payload { msg: pt, aad: b"" };
    let mut ct = match aead {
        Aead::Aes128Gcm => aes_gcm::Aes128Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.into(), payload),
        Aead::Aes256Gcm => aes_gcm::Aes256Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.into(), payload),
        Aead::ChaCha20Poly1305 => chacha20poly1305::ChaCha20Poly1305::new_from_slice(key)
            .unwrap()
            .encrypt(nonce.into(), payload),
    }
    .unwrap();
    ct.truncate(pt.len());
    ct
}

pub fn nonce13(iv: &[u8], seq: u64) -> [u8; 12] {
    let mut n: [u8; 12] = iv.try_into().unwrap();
    for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    n
}

pub struct Session {
    /// The statement, with both directions fully disclosed (set `disclosure` to change).
    pub statement: Statement,
    /// HS (TLS 1.3) or the master secret (TLS 1.2), no blinders.
    pub witness: Witness,
    /// Plaintexts sent, per record.
    pub sent: Vec<Vec<u8>>,
    /// Plaintexts received, per record.
    pub recv: Vec<Vec<u8>>,
    /// Client and server write keys.
    pub keys: (Vec<u8>, Vec<u8>),
    /// Client and server write IVs (TLS 1.3 and ChaCha20: 12 bytes; TLS 1.2
    /// AES-GCM: the 4-byte salt).
    pub ivs: (Vec<u8>, Vec<u8>),
}

pub fn tls13_session(aead: Aead, seed: u64, sent: &[&[u8]], recv: &[&[u8]]) -> Session {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let hash = if aead == Aead::Aes256Gcm {
        HashAlg::Sha384
    } else {
        HashAlg::Sha256
    };
    let n = hash.output_len();
    let rand_vec =
        |rng: &mut rand::rngs::StdRng, n: usize| (0..n).map(|_| rng.gen()).collect::<Vec<u8>>();
    let hs = rand_vec(&mut rng, n);
    let hello = rand_vec(&mut rng, n);
    let fin = rand_vec(&mut rng, n);
    let k = schedule13(aead, &hs, &hello, &fin);
    let records = |msgs: &[&[u8]], key: &[u8], iv: &[u8]| -> Vec<SealedRecord> {
        msgs.iter()
            .enumerate()
            .map(|(i, m)| SealedRecord {
                seq: i as u64,
                explicit_nonce: None,
                ciphertext: seal(aead, key, &nonce13(iv, i as u64), m),
            })
            .collect()
    };
    let statement = Statement {
        aead,
        handshake: Handshake::Tls13(Tls13Handshake {
            hash,
            hello_hash: hello,
            finished_hash: fin,
            client_handshake_secret: k.c_hs.clone(),
            server_handshake_secret: k.s_hs.clone(),
        }),
        sent: DirectionStatement {
            disclosure: Disclosure::Key,
            ..DirectionStatement::new(records(sent, &k.c_key, &k.c_iv))
        },
        recv: DirectionStatement {
            disclosure: Disclosure::Key,
            ..DirectionStatement::new(records(recv, &k.s_key, &k.s_iv))
        },
    };
    Session {
        statement,
        witness: Witness::new(hs),
        sent: sent.iter().map(|m| m.to_vec()).collect(),
        recv: recv.iter().map(|m| m.to_vec()).collect(),
        keys: (k.c_key, k.s_key),
        ivs: (k.c_iv, k.s_iv),
    }
}

/// P_hash of RFC 5246 with HMAC-SHA256 or -SHA384.
pub fn prf12(hash: HashAlg, secret: &[u8], label: &str, seed: &[u8], len: usize) -> Vec<u8> {
    fn p<M: Mac + hmac::digest::KeyInit + Clone>(
        secret: &[u8],
        seed: &[u8],
        len: usize,
    ) -> Vec<u8> {
        let mac = |data: &[&[u8]]| {
            let mut m = <M as hmac::digest::KeyInit>::new_from_slice(secret).unwrap();
            for d in data {
                m.update(d);
            }
            m.finalize().into_bytes().to_vec()
        };
        let mut a = mac(&[seed]);
        let mut out = Vec::new();
        while out.len() < len {
            out.extend(mac(&[&a, seed]));
            a = mac(&[&a]);
        }
        out.truncate(len);
        out
    }
    let full = [label.as_bytes(), seed].concat();
    match hash {
        HashAlg::Sha256 => p::<Hmac<Sha256>>(secret, &full, len),
        _ => p::<Hmac<Sha384>>(secret, &full, len),
    }
}

pub fn tls12_session(aead: Aead, seed: u64, sent: &[&[u8]], recv: &[&[u8]]) -> Session {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let hash = if aead == Aead::Aes256Gcm {
        HashAlg::Sha384
    } else {
        HashAlg::Sha256
    };
    let n = hash.output_len();
    let ms: Vec<u8> = (0..48).map(|_| rng.gen()).collect();
    let cr: [u8; 32] = rng.gen();
    let sr: [u8; 32] = rng.gen();
    let ch: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
    let sh: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
    let (kl, il) = (aead.key_len(), aead.tls12_iv_len());
    let kb = prf12(
        hash,
        &ms,
        "key expansion",
        &[sr.as_slice(), cr.as_slice()].concat(),
        2 * kl + 2 * il,
    );
    let (c_key, s_key) = (kb[..kl].to_vec(), kb[kl..2 * kl].to_vec());
    let (c_iv, s_iv) = (kb[2 * kl..2 * kl + il].to_vec(), kb[2 * kl + il..].to_vec());
    let c_vd = prf12(hash, &ms, "client finished", &ch, 12);
    let s_vd = prf12(hash, &ms, "server finished", &sh, 12);
    let mut rng2 = rand::rngs::StdRng::seed_from_u64(seed ^ 1);
    let mut record = |key: &[u8], iv: &[u8], seq: u64, pt: &[u8]| -> SealedRecord {
        if il == 4 {
            let explicit: [u8; 8] = rng2.gen();
            let mut nonce = [0u8; 12];
            nonce[..4].copy_from_slice(iv);
            nonce[4..].copy_from_slice(&explicit);
            SealedRecord {
                seq,
                explicit_nonce: Some(explicit),
                ciphertext: seal(aead, key, &nonce, pt),
            }
        } else {
            SealedRecord {
                seq,
                explicit_nonce: None,
                ciphertext: seal(aead, key, &nonce13(iv, seq), pt),
            }
        }
    };
    let fin = |vd: &[u8]| [FINISHED_HEADER.as_slice(), vd].concat();
    let client_finished = record(&c_key, &c_iv, 0, &fin(&c_vd));
    let server_finished = record(&s_key, &s_iv, 0, &fin(&s_vd));
    let sent_records = sent
        .iter()
        .enumerate()
        .map(|(i, m)| record(&c_key, &c_iv, i as u64 + 1, m))
        .collect();
    let recv_records = recv
        .iter()
        .enumerate()
        .map(|(i, m)| record(&s_key, &s_iv, i as u64 + 1, m))
        .collect();
    let statement = Statement {
        aead,
        handshake: Handshake::Tls12(Tls12Handshake {
            hash,
            client_random: cr,
            server_random: sr,
            client_finished_hash: ch,
            server_finished_hash: sh,
            client_verify_data: c_vd.try_into().unwrap(),
            client_finished,
            server_finished,
        }),
        sent: DirectionStatement {
            disclosure: Disclosure::Key,
            ..DirectionStatement::new(sent_records)
        },
        recv: DirectionStatement {
            disclosure: Disclosure::Key,
            ..DirectionStatement::new(recv_records)
        },
    };
    Session {
        statement,
        witness: Witness::new(ms),
        sent: sent.iter().map(|m| m.to_vec()).collect(),
        recv: recv.iter().map(|m| m.to_vec()).collect(),
        keys: (c_key, s_key),
        ivs: (c_iv, s_iv),
    }
}

/// The AEAD nonce of `record` under `iv` (TLS 1.3 or ChaCha20: IV XOR
/// sequence number; TLS 1.2 AES-GCM: salt || explicit nonce).
pub fn record_nonce(iv: &[u8], record: &SealedRecord) -> [u8; 12] {
    match record.explicit_nonce {
        Some(explicit) => {
            let mut n = [0u8; 12];
            n[..4].copy_from_slice(iv);
            n[4..].copy_from_slice(&explicit);
            n
        }
        None => nonce13(iv, record.seq),
    }
}

/// The one-time MAC material of records with these `nonces` under `key`,
/// computed with RustCrypto's AES and ChaCha20 (the reference for
/// [`DirectionStatement::open_tag_material`]).
pub fn tag_material(aead: Aead, key: &[u8], nonces: &[[u8; 12]]) -> TagMaterial {
    use aes_gcm::aes::cipher::{consts::U16, BlockEncrypt, KeyInit};
    use chacha20::cipher::{KeyIvInit, StreamCipher};
    fn aes_blocks<C: BlockEncrypt<BlockSize = U16> + KeyInit>(
        key: &[u8],
        nonces: &[[u8; 12]],
    ) -> ([u8; 16], Vec<[u8; 16]>) {
        let c = C::new_from_slice(key).unwrap();
        let enc = |input: [u8; 16]| {
            let mut b = input.into();
            c.encrypt_block(&mut b);
            <[u8; 16]>::from(b)
        };
        let masks = nonces
            .iter()
            .map(|n| {
                let mut j0 = [0u8; 16];
                j0[..12].copy_from_slice(n);
                j0[15] = 1;
                enc(j0)
            })
            .collect();
        (enc([0u8; 16]), masks)
    }
    let gcm = |(hash_key, masks)| TagMaterial::Gcm { hash_key, masks };
    match aead {
        Aead::Aes128Gcm => gcm(aes_blocks::<aes_gcm::aes::Aes128>(key, nonces)),
        Aead::Aes256Gcm => gcm(aes_blocks::<aes_gcm::aes::Aes256>(key, nonces)),
        Aead::ChaCha20Poly1305 => TagMaterial::Poly1305 {
            keys: nonces
                .iter()
                .map(|n| {
                    let mut block0 = [0u8; 32];
                    chacha20::ChaCha20::new(key.into(), n.into()).apply_keystream(&mut block0);
                    block0
                })
                .collect(),
        },
    }
}

/// The ideal functionality of the proof, for tests: a [`ZkParty`] that
/// evaluates every circuit in the clear on the values the prover committed
/// to.
///
/// Running [`crate::run`]`(&mut IdealZk::new(), &statement, Some(&witness))`
/// gives exactly the [`Proven`] that a *sound* proof of `statement` gives the
/// verifier when the prover commits to `witness`: the order of commitments,
/// evaluations, openings and assertions depends only on the public
/// statement, so the only freedom a cheating prover has is the values it
/// commits to (the session secret and the blinders), and it succeeds only if
/// every assertion holds for the witness it chose. A cheating prover's best
/// strategy is therefore captured by choosing the witness adaptively, which
/// is what soundness harnesses do with this party.
///
/// That the real engine (QuickSilver over VOLE, `webproof_zk`) realises this
/// functionality is tested in `crates/zk` (forged MACs, wrong AND gates,
/// wrong byte inversions, tampered openings are caught); here it is only
/// checked that both give the same result on honest statements (see this
/// crate's tests). With it, thousands of mutated sessions run in minutes.
#[derive(Debug, Default)]
pub struct IdealZk {
    /// Circuit instances evaluated.
    pub evaluations: usize,
    /// Bits opened to the verifier.
    pub opened_bits: usize,
    /// Bits asserted equal to public values.
    pub asserted_bits: usize,
}

impl IdealZk {
    /// A fresh party.
    pub fn new() -> Self {
        IdealZk::default()
    }
}

impl ZkParty for IdealZk {
    type Bit = bool;

    fn constant(&self, value: bool) -> bool {
        value
    }

    fn xor(&self, a: bool, b: bool) -> bool {
        a ^ b
    }

    async fn commit_secret(&mut self, witness: Option<&[u8]>, len: usize) -> Result<Vec<bool>> {
        // The same rules as the real prover's `commit_secret`.
        let w = witness.ok_or_else(|| Error::Usage("the prover needs the witness".into()))?;
        if w.len() != len {
            return Err(Error::Usage(format!(
                "the witness is {} bytes, the statement needs {len}",
                w.len()
            )));
        }
        Ok(webproof_circuits::bits::bytes_to_bits(w))
    }

    async fn eval(
        &mut self,
        circuit: &webproof_circuits::Circuit,
        inputs: &[&[bool]],
    ) -> Result<Vec<Vec<bool>>> {
        self.eval_batch(circuit, 1, inputs).await
    }

    async fn eval_batch(
        &mut self,
        circuit: &webproof_circuits::Circuit,
        n: usize,
        inputs: &[&[bool]],
    ) -> Result<Vec<Vec<bool>>> {
        // The real engine's batch rules (`Prover::eval_batch`): each input
        // group shared by every instance or given once per instance.
        if n == 0 || n > webproof_zk::MAX_BATCH {
            return Err(Error::Usage(format!("a batch of {n} instances")));
        }
        if inputs.len() != circuit.inputs.len() {
            return Err(Error::Usage(format!(
                "circuit has {} input groups, {} given",
                circuit.inputs.len(),
                inputs.len()
            )));
        }
        for (g, bits) in circuit.inputs.iter().zip(inputs) {
            if bits.len() != g.len() && bits.len() != g.len() * n {
                return Err(Error::Usage("input group of the wrong size".into()));
            }
        }
        let mut out: Vec<Vec<bool>> = circuit
            .outputs
            .iter()
            .map(|g| Vec::with_capacity(g.len() * n))
            .collect();
        for i in 0..n {
            let instance: Vec<Vec<bool>> = circuit
                .inputs
                .iter()
                .zip(inputs)
                .map(|(g, bits)| {
                    if bits.len() == g.len() {
                        bits.to_vec()
                    } else {
                        bits[i * g.len()..(i + 1) * g.len()].to_vec()
                    }
                })
                .collect();
            for (o, v) in out.iter_mut().zip(circuit.eval(&instance)) {
                o.extend(v);
            }
        }
        self.evaluations += n;
        Ok(out)
    }

    async fn open(&mut self, bits: &[bool]) -> Result<Vec<bool>> {
        self.opened_bits += bits.len();
        Ok(bits.to_vec())
    }

    type Elem = webproof_core::Block;

    fn pack(&self, bits: &[bool]) -> Result<webproof_core::Block> {
        if bits.len() > 128 {
            return Err(Error::Usage("at most 128 bits pack into an element".into()));
        }
        Ok(webproof_core::Block(
            bits.iter()
                .enumerate()
                .fold(0u128, |acc, (i, &b)| acc | (u128::from(b) << i)),
        ))
    }

    fn elem_constant(&self, c: webproof_core::Block) -> webproof_core::Block {
        c
    }

    fn elem_add(&self, a: webproof_core::Block, b: webproof_core::Block) -> webproof_core::Block {
        a ^ b
    }

    async fn mul(
        &mut self,
        a: webproof_core::Block,
        b: webproof_core::Block,
    ) -> Result<webproof_core::Block> {
        Ok(a.gf_mul(b))
    }

    async fn assert_elems_public(
        &mut self,
        elems: &[webproof_core::Block],
        values: &[webproof_core::Block],
    ) -> Result<()> {
        if elems != values {
            return Err(Error::CheckFailed(
                "asserted elements do not equal the public values".into(),
            ));
        }
        Ok(())
    }

    async fn assert_public(&mut self, bits: &[bool], values: &[bool]) -> Result<()> {
        if bits.len() != values.len() {
            return Err(Error::Usage("assert_public: lengths differ".into()));
        }
        self.asserted_bits += bits.len();
        if bits != values {
            return Err(Error::CheckFailed(
                "asserted bits do not equal the public values".into(),
            ));
        }
        Ok(())
    }

    /// The ideal engine knows every value: a claim is checked at once.
    async fn assert_claimed(&mut self, bits: &[bool], values: &[bool]) -> Result<()> {
        self.assert_public(bits, values).await
    }

    async fn check(&mut self) -> Result<()> {
        Ok(())
    }
}

/// What the verifier gets from the ideal proof of `statement` by a prover
/// committing to `witness` (see [`IdealZk`]). Not generic, so it is built
/// (optimised) in this crate whoever calls it.
pub fn prove_ideal(statement: &Statement, witness: &Witness) -> Result<Proven> {
    futures::executor::block_on(run(&mut IdealZk::new(), statement, Some(witness)))
}

/// A QuickSilver proof of `statement` in memory, with ideal COTs seeded by
/// `seed`: the prover's and the verifier's results. The prover proves with
/// `witness`; a prover that fails drops its end, so the verifier fails too.
pub fn prove_quicksilver(
    statement: &Statement,
    witness: &Witness,
    seed: u64,
) -> (Result<Proven>, Result<Proven>) {
    use webproof_core::{cot::ideal, memory_duplex, Channel};
    use webproof_zk::{Config, Prover, Verifier};
    let (a, b) = memory_duplex();
    let (cot_s, cot_r) = ideal::pair(seed);
    let cfg = Config::default();
    futures::executor::block_on(async {
        let prover = async {
            let mut p = Prover::new(cot_r, Channel::new(a), cfg).await?;
            let out = run(&mut p, statement, Some(witness)).await;
            drop(p);
            out
        };
        let verifier = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed);
            let mut v = Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
            let out = run(&mut v, statement, None).await;
            drop(v);
            out
        };
        futures::join!(prover, verifier)
    })
}

/// The production stack in memory (base OT, SoftSpokenOT, Ferret sized for
/// `expected_cots`, QuickSilver), as a session runs it: bootstrap, warm-up,
/// proof. The prover's and the verifier's results. Both bind the proof to
/// the same session context (all zeros: the context's own binding is
/// tested in `tests.rs`).
pub fn prove_production(
    statement: &Statement,
    witness: &Witness,
    expected_cots: u64,
    seed: u64,
) -> (Result<Proven>, Result<Proven>) {
    use crate::session::SessionConfig;
    prove_with_config(
        statement,
        witness,
        SessionConfig::sized(expected_cots),
        seed,
    )
}

/// [`prove_production`] with the session's settings given (e.g. other
/// Ferret sets).
pub fn prove_with_config(
    statement: &Statement,
    witness: &Witness,
    cfg: crate::session::SessionConfig,
    seed: u64,
) -> (Result<Proven>, Result<Proven>) {
    let (a, b) = webproof_core::memory_duplex();
    prove_over(a, b, statement, witness, cfg, seed)
}

/// [`prove_with_config`] over the prover's transport `a` and the
/// verifier's `b` (a tapped pipe, say: the golden transcript test).
pub fn prove_over(
    a: impl webproof_core::Io,
    b: impl webproof_core::Io,
    statement: &Statement,
    witness: &Witness,
    cfg: crate::session::SessionConfig,
    seed: u64,
) -> (Result<Proven>, Result<Proven>) {
    use crate::session::{ProverPreprocessed, VerifierPreprocessed};
    use webproof_core::Channel;
    futures::executor::block_on(async {
        let prover = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut ch = Channel::new(a);
            let mut pre = ProverPreprocessed::bootstrap(&mut ch, cfg, &mut rng).await?;
            pre.warm_up(&mut ch).await?;
            pre.prove(ch, statement, witness, &[0; 32])
                .await
                .map(|(p, _)| p)
        };
        let verifier = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed);
            let mut ch = Channel::new(b);
            let mut pre = VerifierPreprocessed::bootstrap(&mut ch, cfg, &mut rng).await?;
            pre.warm_up(&mut ch).await?;
            pre.verify(ch, statement, &[0; 32], &mut rng)
                .await
                .map(|(p, _)| p)
        };
        futures::join!(prover, verifier)
    })
}

#[cfg(test)]
mod ideal_tests {
    use super::*;

    /// The ideal party needs no special case for byte classes: `run` proves
    /// them with `eval_batch` and `assert_public`, which it evaluates in the
    /// clear like every other constraint. Checked here against QuickSilver:
    /// honest classes give the same result; a forbidden byte in a span
    /// (a closing quote, an escape, a comma, the last byte of a span longer
    /// than an engine batch) makes both refuse, the ideal party with
    /// `CheckFailed`. (A harness whose ideal party skipped them would accept
    /// a hidden quote in a JSON string.)
    #[test]
    fn ideal_party_checks_byte_classes() {
        const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\r\n";
        // Positions in BODY: "xy" 6..8, 123 14..17, q\"r 23..27.
        const BODY: &[u8] = br#"{"a":"xy","b":123,"c":"q\"r"}"#;
        let string = b"\"\\".to_vec();
        let token = b"\t\n\r \",:[\\]{}".to_vec();
        let mut long = vec![b'a'; 9000];
        let class = |forbidden: &Vec<u8>, spans: Vec<(usize, core::ops::Range<usize>)>| ByteClass {
            forbidden: forbidden.clone(),
            spans,
        };
        let honest = vec![
            class(&string, vec![(1, 6..8), (1, 26..27), (2, 0..9000)]),
            class(&token, vec![(1, 14..17)]),
        ];
        let cheats = [
            vec![class(&string, vec![(1, 6..9)])],
            vec![class(&string, vec![(1, 23..26)])],
            vec![class(&token, vec![(1, 14..18)])],
            vec![class(&string, vec![(2, 0..9000)])],
        ];
        for (i, (aead, tls13)) in [
            (Aead::Aes128Gcm, true),
            (Aead::ChaCha20Poly1305, true),
            (Aead::Aes256Gcm, false),
        ]
        .into_iter()
        .enumerate()
        {
            for (k, classes) in std::iter::once(&honest).chain(&cheats).enumerate() {
                // The last cheat: the long span ends with a quote.
                long[8999] = if k == cheats.len() { b'"' } else { b'a' };
                let recv: [&[u8]; 3] = [HEAD, BODY, &long];
                let seed = 70 + i as u64;
                let mut s = if tls13 {
                    tls13_session(aead, seed, &[b"GET / HTTP/1.1\r\n\r\n"], &recv)
                } else {
                    tls12_session(aead, seed, &[b"GET / HTTP/1.1\r\n\r\n"], &recv)
                };
                s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..4)]);
                s.statement.recv.byte_classes = classes.clone();
                let ideal = prove_ideal(&s.statement, &s.witness);
                let (_, real) = prove_quicksilver(&s.statement, &s.witness, seed);
                if k == 0 {
                    assert_eq!(ideal.unwrap(), real.unwrap(), "{aead:?} tls13={tls13}");
                } else {
                    assert!(
                        matches!(ideal, Err(Error::CheckFailed(_))),
                        "{aead:?} tls13={tls13} cheat {k}: {ideal:?}"
                    );
                    assert!(real.is_err(), "{aead:?} tls13={tls13} cheat {k}");
                }
            }
        }
    }
}

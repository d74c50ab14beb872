//! TLS 1.2 key derivation and Finished in 2PC with the "reduced" PRF:
//! only outer HMAC compressions are garbled (SHA-256 suites).
//!
//! Every circuit that computes the pads of a secret HMAC key (the premaster,
//! then the master secret) reveals the inner pad state `IS` to both parties
//! and keeps the outer state `OS` XOR-shared (the verifier's share is its
//! output mask). Both can then hash any public inner message from `IS`; the
//! **verifier** computes the inner digests `u` in the clear and encodes them
//! as public inputs, so the prover never holds an oracle `u ↦ F_OS(u)` it
//! could ask for a key-block output (see [`crate::tls12`]'s docs for the
//! argument: `A(i)` chain values and `IS` are revealed, secret outputs are
//! outer compressions on other inputs).
//!
//! # Steps (one garbled circuit and one round trip each; numbered from 0 in the API)
//! 1. premaster shares → pads: `IS_pms` revealed, `OS_pms` shared;
//! 2. `A(1) = F(OS_pms, u)` revealed;
//! 3. `A(2)` revealed, master-secret block 1 shared;
//! 4. master-secret block 2, `MS` = 48 bytes, pads of `MS`: `IS_ms` revealed,
//!    `OS_ms` shared;
//! 5. `A(1)` of the key expansion and of the client Finished, revealed;
//! 6. key-block block 1 shared, `A(2)` of the key expansion and the client
//!    `verify_data` revealed;
//! 7. key-block block 2 shared (8 bytes used: the IVs);
//! 8. and 9. the server Finished: `A(1)`, then `verify_data`, revealed.
//!
//! 16 compressions in all instead of 36: 342,259 AND for P-256 (the sum mod
//! `p` adds ~770), 8.4 MB of three-halves tables (10.95 MB with half-gates),
//! against 775,691 AND and 19.1 MB for [`crate::tls12`]. Revealed values go to both: the prover
//! decodes and returns their labels (16 bytes per bit), which the verifier
//! checks. The extended master secret changes only the inner messages. The
//! client Finished rides with the key expansion (its hash is known when the
//! key derivation runs: in TLS 1.2 both follow the ClientKeyExchange).
//!
//! Messages per step: prover → verifier the flips of its share (its
//! premaster share, or its share of `OS`), verifier → prover the input
//! labels (corrections, its share, the inner digests, its masks), then
//! prover → verifier the labels of the revealed output. The prover must
//! send its share at step `k` only after step `k - 1` is done; out-of-order
//! calls are refused.
//!
//! # Security (semi-honest garbling; what the consistency proof adds)
//! Besides [`crate::tls12`]'s list: the verifier's inner digests must be
//! `SHA-256(IS ‖ message)` for the revealed `IS` and the public messages
//! (the prover can recompute them and should, since it also learns `IS`);
//! the `OS` shares input at each step must be the ones output before. A
//! revealed `IS` of a secret key is the price: HMAC's security then rests
//! on the compression function keyed by `OS` being a PRF, with `IS` and
//! `OS` pseudo-independent (the dual-PRF assumption of the HMAC proof).
//! Suites with SHA-384 use [`crate::tls12`] (not done here).
use crate::error::{Error, Result};
use crate::exec::{ProverCircuit, VerifierCircuit};
use crate::plan::Plan;
use crate::tls12::{Curve, KeyShares, Randoms};
use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::hmac::HmacKey;
use webproof_circuits::sha2::{hash_from_state, HashAlg};
use webproof_circuits::tls::Tls12Suite;
use webproof_circuits::{bits_to_bytes, bytes_to_bits, Bit, Builder, Circuit};
use webproof_core::Block;

const H: HashAlg = HashAlg::Sha256;
/// One step's preprocessing: its chunks of tables and its decoding.
pub type StepTables = (Vec<Vec<u8>>, Vec<u8>);

/// Steps of a session (circuits, garbling instances).
pub const STEPS: usize = 9;

/// `F(OS, u)`: the outer hash of HMAC from its state and inner digest.
fn outer(b: &mut Builder, os: &[Bit], u: &[Bit]) -> Vec<Bit> {
    hash_from_state(b, H, os, 64, u)
}

/// What a step's circuit takes and gives, in bytes.
struct Shape {
    /// Prover (and verifier) share.
    share: usize,
    /// Public inner digests (32 bytes each).
    us: usize,
    /// Verifier masks.
    masks: usize,
}

fn shape(step: usize) -> Shape {
    let (share, us, masks) = match step {
        0 => (32, 0, 32),
        1 => (32, 1, 0),
        2 => (32, 2, 32),
        3 => (64, 1, 32),
        4 => (32, 2, 0),
        5 => (32, 3, 32),
        6 => (32, 1, 8),
        _ => (32, 1, 0),
    };
    Shape { share, us, masks }
}

/// The circuit of step `step` (0-based) for `curve`.
pub fn step_circuit(curve: Curve, step: usize) -> Circuit {
    let s = shape(step);
    let mut b = Builder::new();
    let p = b.input_bytes(s.share);
    let v = b.input_bytes(s.share);
    let us: Vec<Vec<Bit>> = if s.us > 0 {
        b.input_bytes(32 * s.us)
            .chunks(256)
            .map(<[Bit]>::to_vec)
            .collect()
    } else {
        Vec::new()
    };
    let masks = if s.masks > 0 {
        b.input_bytes(s.masks)
    } else {
        Vec::new()
    };
    let pads = |b: &mut Builder, key: &[Bit], masks: &[Bit]| {
        let k = HmacKey::new(b, H, key);
        b.output(k.inner_state());
        let os = b.xor_words(k.outer_state(), masks);
        b.output(&os);
    };
    match step {
        0 => {
            let x = crate::tls12::add_mod_p(&mut b, &p, &v, curve);
            pads(&mut b, &x, &masks);
        }
        3 => {
            let sh = b.xor_words(&p, &v);
            let (os, o1) = sh.split_at(256);
            let o2 = outer(&mut b, os, &us[0]);
            let ms = [o1, &o2[..128]].concat();
            pads(&mut b, &ms, &masks);
        }
        _ => {
            let os = b.xor_words(&p, &v);
            let f: Vec<Vec<Bit>> = us.iter().map(|u| outer(&mut b, &os, u)).collect();
            match step {
                1 | 7 => b.output(&f[0]),
                8 => b.output(&f[0][..96]),
                2 => {
                    b.output(&f[0]);
                    let o = b.xor_words(&f[1], &masks);
                    b.output(&o);
                }
                4 => b.output(&[&f[0][..], &f[1]].concat()),
                5 => {
                    b.output(&[&f[1][..], &f[2][..96]].concat());
                    let o = b.xor_words(&f[0], &masks);
                    b.output(&o);
                }
                6 => {
                    let o = b.xor_words(&f[0][..64], &masks);
                    b.output(&o);
                }
                _ => unreachable!("nine steps"),
            }
        }
    }
    b.finish()
}

/// Which output group a step reveals to both (`None`: nothing revealed).
fn revealed(step: usize) -> Option<usize> {
    (step != 6).then_some(0)
}

/// The plans of the nine steps for one curve.
pub struct ReducedPlans {
    curve: Curve,
    plans: Vec<Arc<Plan>>,
}

impl ReducedPlans {
    /// Build and plan the nine circuits (AES-128-GCM-SHA256 key block).
    pub fn new(curve: Curve) -> Result<Self> {
        let plans = (0..STEPS)
            .map(|s| Plan::from_circuit(step_circuit(curve, s)).map(Arc::new))
            .collect::<Result<_>>()?;
        Ok(ReducedPlans { curve, plans })
    }

    /// AND gates per step.
    pub fn and_counts(&self) -> Vec<u64> {
        self.plans.iter().map(|p| p.and_count()).collect()
    }

    /// COTs the prover's share consumes at `step`.
    pub fn cots(&self, step: usize) -> usize {
        8 * shape(step).share
    }
}

/// SHA-256 from the chaining state `state` after one block, over `msg`.
fn inner_digest(state: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut st: [u32; 8] = core::array::from_fn(|i| {
        u32::from_be_bytes(state[4 * i..4 * i + 4].try_into().expect("4"))
    });
    let mut data = msg.to_vec();
    data.extend(webproof_circuits::sha2::padding(H, 64 + msg.len()));
    for blk in data.chunks(64) {
        sha2::compress256(
            &mut st,
            &[*sha2::digest::generic_array::GenericArray::from_slice(blk)],
        );
    }
    let mut out = [0u8; 32];
    for (i, w) in st.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// The verifier of a reduced-PRF session.
pub struct ReducedVerifier {
    circuits: Vec<VerifierCircuit>,
    /// The premaster share, once bound.
    share: Option<[u8; 32]>,
    seed_ms: Vec<u8>,
    label_ms: &'static str,
    seed_ke: Vec<u8>,
    cf_hash: Vec<u8>,
    sf_hash: Vec<u8>,
    masks: [Vec<u8>; 4],
    is: Vec<u8>,
    a: Vec<u8>,
    a_cf: Vec<u8>,
    client_vd: Option<[u8; 12]>,
    server_vd: Option<[u8; 12]>,
    /// The step whose inputs (or revealed labels) are due.
    next: usize,
}

impl ReducedVerifier {
    /// A session with the verifier's premaster share (little-endian), the
    /// public randoms, and the client Finished hash (known when the key
    /// derivation runs in TLS 1.2: both follow the ClientKeyExchange):
    /// [`Self::garble`] then [`Self::bind`].
    pub fn new(
        plans: &ReducedPlans,
        delta: Block,
        first_instance: u64,
        share_le: &[u8; 32],
        randoms: &Randoms<'_>,
        client_finished_hash: &[u8],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut v = Self::garble(plans, delta, first_instance, rng)?;
        v.bind(share_le, randoms, client_finished_hash)?;
        Ok(v)
    }

    /// The session's circuits under `delta`, before any input is known:
    /// [`Self::preprocess`] can garble them ahead of the handshake, and
    /// [`Self::bind`] supplies the inputs once the key exchange is done.
    pub fn garble(
        plans: &ReducedPlans,
        delta: Block,
        first_instance: u64,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let circuits = plans
            .plans
            .iter()
            .enumerate()
            .map(|(i, p)| {
                VerifierCircuit::new(Arc::clone(p), delta, first_instance + i as u64, 0, rng)
            })
            .collect::<Result<_>>()?;
        let mut mask = |n: usize| {
            let mut m = vec![0u8; n];
            rng.fill_bytes(&mut m);
            m
        };
        let masks = [mask(32), mask(32), mask(32), mask(32 + 8)];
        Ok(ReducedVerifier {
            circuits,
            share: None,
            seed_ms: Vec::new(),
            label_ms: "",
            seed_ke: Vec::new(),
            cf_hash: Vec::new(),
            sf_hash: Vec::new(),
            masks,
            is: Vec::new(),
            a: Vec::new(),
            a_cf: Vec::new(),
            client_vd: None,
            server_vd: None,
            next: 0,
        })
    }

    /// The verifier's premaster share (little-endian), the public randoms
    /// and the client Finished hash; once, before step 0's inputs.
    pub fn bind(
        &mut self,
        share_le: &[u8; 32],
        randoms: &Randoms<'_>,
        client_finished_hash: &[u8],
    ) -> Result<()> {
        if self.share.is_some() {
            return Err(Error::Malformed("inputs bound twice"));
        }
        if client_finished_hash.len() != 32 || randoms.session_hash.is_some_and(|h| h.len() != 32) {
            return Err(Error::Malformed("hash of the wrong length"));
        }
        let (label_ms, seed_ms) = match randoms.session_hash {
            Some(h) => ("extended master secret", h.to_vec()),
            None => (
                "master secret",
                [&randoms.client[..], &randoms.server[..]].concat(),
            ),
        };
        self.share = Some(*share_le);
        self.seed_ms = seed_ms;
        self.label_ms = label_ms;
        self.seed_ke = [&randoms.server[..], &randoms.client[..]].concat();
        self.cf_hash = client_finished_hash.to_vec();
        Ok(())
    }

    /// Preprocessing: chunks and decoding of every step.
    pub fn preprocess(&mut self) -> Result<Vec<StepTables>> {
        self.circuits
            .iter_mut()
            .map(|c| Ok((c.garble_all(), c.decoding()?)))
            .collect()
    }

    /// Set the server Finished hash (before steps 8 and 9).
    pub fn set_server_finished_hash(&mut self, h: &[u8]) -> Result<()> {
        if h.len() != 32 {
            return Err(Error::Malformed("hash of the wrong length"));
        }
        self.sf_hash = h.to_vec();
        Ok(())
    }

    fn ls(label: &str, seed: &[u8]) -> Vec<u8> {
        [label.as_bytes(), seed].concat()
    }

    /// The answer to the prover's flips at `step`.
    pub fn inputs(&mut self, step: usize, keys: &[Block], flips: &[u8]) -> Result<Vec<u8>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let share = self
            .share
            .ok_or(Error::Malformed("inputs before the key exchange"))?;
        let ms_ls = Self::ls(self.label_ms, &self.seed_ms);
        let ke_ls = Self::ls("key expansion", &self.seed_ke);
        let cf_ls = Self::ls("client finished", &self.cf_hash);
        let sf_ls = Self::ls("server finished", &self.sf_hash);
        let is = &self.is;
        let need = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(Error::Malformed("step out of order"))
            }
        };
        let (own, us): (Vec<u8>, Vec<[u8; 32]>) = match step {
            0 => (share.to_vec(), vec![]),
            1 => {
                need(is.len() == 32)?;
                (self.masks[0].clone(), vec![inner_digest(is, &ms_ls)])
            }
            2 => {
                need(self.a.len() == 32)?;
                let a1 = &self.a;
                (
                    self.masks[0].clone(),
                    vec![
                        inner_digest(is, a1),
                        inner_digest(is, &[&a1[..], &ms_ls].concat()),
                    ],
                )
            }
            3 => {
                need(self.a.len() == 32)?;
                (
                    [&self.masks[0][..], &self.masks[1]].concat(),
                    vec![inner_digest(is, &[&self.a[..], &ms_ls].concat())],
                )
            }
            4 => (
                self.masks[2].clone(),
                vec![inner_digest(is, &ke_ls), inner_digest(is, &cf_ls)],
            ),
            5 => {
                need(self.a.len() == 32 && self.a_cf.len() == 32)?;
                (
                    self.masks[2].clone(),
                    vec![
                        inner_digest(is, &[&self.a[..], &ke_ls].concat()),
                        inner_digest(is, &self.a),
                        inner_digest(is, &[&self.a_cf[..], &cf_ls].concat()),
                    ],
                )
            }
            6 => (
                self.masks[2].clone(),
                vec![inner_digest(is, &[&self.a[..], &ke_ls].concat())],
            ),
            7 => {
                need(self.sf_hash.len() == 32)?;
                (self.masks[2].clone(), vec![inner_digest(is, &sf_ls)])
            }
            8 => {
                need(self.a.len() == 32)?;
                (
                    self.masks[2].clone(),
                    vec![inner_digest(is, &[&self.a[..], &sf_ls].concat())],
                )
            }
            _ => return Err(Error::Malformed("no such step")),
        };
        let s = shape(step);
        let mut groups = vec![bytes_to_bits(&own)];
        if s.us > 0 {
            groups.push(bytes_to_bits(&us.concat()));
        }
        match step {
            0 => groups.push(bytes_to_bits(&self.masks[0])),
            2 => groups.push(bytes_to_bits(&self.masks[1])),
            3 => groups.push(bytes_to_bits(&self.masks[2])),
            5 => groups.push(bytes_to_bits(&self.masks[3][..32])),
            6 => groups.push(bytes_to_bits(&self.masks[3][32..])),
            _ => {}
        }
        let msg = self.circuits[step].inputs(keys, flips, &groups)?;
        if revealed(step).is_none() {
            self.next += 1;
        }
        Ok(msg)
    }

    /// The prover's labels of step `step`'s revealed output: checked, then
    /// taken into the verifier's state.
    pub fn receive(&mut self, step: usize, labels: &[u8]) -> Result<()> {
        if step != self.next {
            return Err(Error::Malformed("step out of order"));
        }
        let g = revealed(step).ok_or(Error::Malformed("nothing revealed at this step"))?;
        let c = self
            .circuits
            .get(step)
            .ok_or(Error::Malformed("no such step"))?;
        let v = bits_to_bytes(&c.check_output(g, labels)?);
        match step {
            0 | 3 => self.is = v,
            1 | 2 | 7 => self.a = v,
            4 => {
                self.a = v[..32].to_vec();
                self.a_cf = v[32..].to_vec();
            }
            5 => {
                self.a = v[..32].to_vec();
                self.client_vd = Some(v[32..].try_into().expect("12 bytes"));
            }
            _ => self.server_vd = Some(v[..].try_into().expect("12 bytes")),
        }
        self.next += 1;
        Ok(())
    }

    /// The verifier's key shares (its masks).
    pub fn key_shares(&self) -> KeyShares {
        KeyShares::split(Tls12Suite::AES_128_GCM_SHA256, &self.masks[3])
    }

    /// The client `verify_data`, after step 6.
    pub fn client_verify_data(&self) -> Option<[u8; 12]> {
        self.client_vd
    }

    /// The server `verify_data` computed in 2PC, after step 9.
    pub fn server_verify_data(&self) -> Option<[u8; 12]> {
        self.server_vd
    }

    /// The step circuits (for the consistency proof: 0-labels, `Δ`).
    pub fn circuits(&self) -> &[VerifierCircuit] {
        &self.circuits
    }

    /// The step circuits, to garble chunk by chunk
    /// ([`VerifierCircuit::next_chunk`]) instead of [`Self::preprocess`].
    pub fn circuits_mut(&mut self) -> &mut [VerifierCircuit] {
        &mut self.circuits
    }
}

/// The prover of a reduced-PRF session.
pub struct ReducedProver {
    circuits: Vec<ProverCircuit>,
    tables: Vec<StepTables>,
    share: [u8; 32],
    os: Vec<u8>,
    o1: Vec<u8>,
    kb: Vec<u8>,
    client_vd: Option<[u8; 12]>,
    server_vd: Option<[u8; 12]>,
    /// The step whose flips (or evaluation) are due.
    next: usize,
}

impl ReducedProver {
    /// A session with the prover's premaster share and the preprocessing.
    pub fn new(
        plans: &ReducedPlans,
        first_instance: u64,
        share_le: &[u8; 32],
        tables: Vec<StepTables>,
    ) -> Result<Self> {
        if tables.len() != STEPS {
            return Err(Error::Malformed("preprocessing for another session"));
        }
        let circuits = plans
            .plans
            .iter()
            .enumerate()
            .map(|(i, p)| ProverCircuit::new(Arc::clone(p), first_instance + i as u64, 0))
            .collect::<Result<_>>()?;
        let _ = plans.curve;
        Ok(ReducedProver {
            circuits,
            tables,
            share: *share_le,
            os: Vec::new(),
            o1: Vec::new(),
            kb: Vec::new(),
            client_vd: None,
            server_vd: None,
            next: 0,
        })
    }

    /// The flips of the prover's share for `step`.
    pub fn flips(&mut self, step: usize, macs: &[Block]) -> Result<Vec<u8>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let own = match step {
            0 => self.share.to_vec(),
            3 => [&self.os[..], &self.o1].concat(),
            _ => self.os.clone(),
        };
        let c = self
            .circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?;
        if 8 * own.len() != c.input_len() {
            return Err(Error::Malformed("step out of order"));
        }
        c.flips(macs, &bytes_to_bits(&own))
    }

    /// Evaluate `step` with the verifier's input message; the labels of the
    /// revealed output to send back, if any.
    pub fn evaluate(&mut self, step: usize, msg: &[u8]) -> Result<Option<Vec<u8>>> {
        if step != self.next || step >= STEPS {
            return Err(Error::Malformed("step out of order"));
        }
        let c = self
            .circuits
            .get_mut(step)
            .ok_or(Error::Malformed("no such step"))?;
        c.receive_inputs(msg)?;
        let (chunks, decoding) = &self.tables[step];
        for ch in chunks {
            c.feed(ch)?;
        }
        c.finish()?;
        let out = c.decode(decoding)?;
        let bytes: Vec<Vec<u8>> = out.iter().map(|g| bits_to_bytes(g)).collect();
        match step {
            0 | 3 => self.os = bytes[1].clone(),
            2 => self.o1 = bytes[1].clone(),
            5 => {
                self.client_vd = Some(bytes[0][32..].try_into().expect("12 bytes"));
                self.kb = bytes[1].clone();
            }
            6 => self.kb.extend_from_slice(&bytes[0]),
            8 => self.server_vd = Some(bytes[0][..].try_into().expect("12 bytes")),
            _ => {}
        }
        self.next += 1;
        revealed(step)
            .map(|g| self.circuits[step].output_message(g))
            .transpose()
    }

    /// The prover's key shares, after step 7.
    pub fn key_shares(&self) -> Result<KeyShares> {
        if self.kb.len() != 40 {
            return Err(Error::NotFinished);
        }
        Ok(KeyShares::split(Tls12Suite::AES_128_GCM_SHA256, &self.kb))
    }

    /// The client `verify_data`, after step 6.
    pub fn client_verify_data(&self) -> Option<[u8; 12]> {
        self.client_vd
    }

    /// The server `verify_data` computed in 2PC, after step 9.
    pub fn server_verify_data(&self) -> Option<[u8; 12]> {
        self.server_vd
    }

    /// The step circuits (for the consistency proof: active labels).
    pub fn circuits(&self) -> &[ProverCircuit] {
        &self.circuits
    }
}

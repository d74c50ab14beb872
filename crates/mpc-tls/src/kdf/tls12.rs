//! TLS 1.2 key derivation and Finished messages in 2PC: from the two
//! parties' additive shares of the premaster secret (from [`crate::keyx::ectf`])
//! to XOR shares of the write keys and IVs, and both Finished
//! `verify_data`, with neither party learning a key.
//!
//! Owns three garbled circuits and their inputs and outputs; the messages
//! of each are those of [`webproof_mpc::exec`] (verifier = garbler, prover =
//! evaluator, prover inputs by COT label transfer). It never sees a
//! socket, a record or a certificate: the caller sends the bytes.
//!
//! Outputs used online: the client Finished's `verify_data`, public to
//! both (a wrong one only makes the server end the handshake); the key
//! shares stay shares until the records' circuits. Public inputs (randoms,
//! handshake hashes) are input groups the verifier encodes from the
//! handshake messages the prover forwarded; the prover checks them against
//! its own transcript once they are revealed, before it proves anything
//! (`webproof_mpc_tls`, `ProverRetained::check_inputs`).
//! The circuits, their cost, what would cut the traffic, why revealing
//! `verify_data` is safe and what the consistency proof must cover:
//! `docs/protocol/mpc-tls12-kdf.md`.

use crypto_bigint::Encoding;
use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::builder::const_bytes;
use webproof_circuits::hmac::{tls12_prf_bits, HmacKey};
use webproof_circuits::sha2::HashAlg;
use webproof_circuits::tls::Tls12Suite;
use webproof_circuits::{bits_to_bytes, bytes_to_bits, Bit, Builder, Circuit};
use webproof_core::Block;
use webproof_mpc::error::{Error, Result};
use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
use webproof_mpc::plan::Plan;

/// The ECDHE group of the key exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    /// secp256r1: premaster = x-coordinate, 32 bytes big-endian.
    P256,
    /// X25519: premaster = u-coordinate, 32 bytes little-endian.
    X25519,
}

impl Curve {
    /// The base field's modulus, little-endian.
    fn modulus_le(self) -> [u8; 32] {
        let be = match self {
            Curve::P256 => webproof_mpc::field::P256Base::modulus().to_be_bytes(),
            Curve::X25519 => webproof_mpc::field::Curve25519Base::modulus().to_be_bytes(),
        };
        let mut le = be;
        le.reverse();
        le
    }
}

/// A session's parameters: group, cipher suite, master-secret variant. The
/// circuits depend on the suite and the variant; the group is a one-bit
/// public input of the key derivation, so the same tables serve either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tls12Config {
    /// ECDHE group.
    pub curve: Curve,
    /// AEAD cipher suite (key and IV lengths, PRF hash).
    pub suite: Tls12Suite,
    /// Extended master secret (RFC 7627).
    pub ems: bool,
}

impl Tls12Config {
    fn hash(&self) -> HashAlg {
        self.suite.hash
    }

    /// Bytes of the key block: both write keys, then both IVs.
    pub fn key_block_len(&self) -> usize {
        2 * self.suite.key_len + 2 * self.suite.iv_len
    }

    /// Bytes of the master secret's pad states (inner ‖ outer).
    pub fn states_len(&self) -> usize {
        2 * self.hash().state_len()
    }
}

/// The curve-selection input bit: 1 for P-256, 0 for X25519 (a public
/// group the verifier encodes, one bit).
pub(crate) fn curve_bit(curve: Curve) -> Vec<bool> {
    vec![curve == Curve::P256]
}

/// The premaster secret from two shares of the ECDH x-coordinate, for
/// the curve `p256` selects (1: P-256, the x-coordinate as 32 bytes
/// big-endian, RFC 8422 §5.10; 0: X25519, the u-coordinate as 32 bytes
/// little-endian, RFC 7748 §6.1): `x + y mod p` of 256-bit little-endian
/// shares below `p`. The modulus is a function of the selection bit made
/// of wiring and inversions, so the reduction costs what a fixed curve's
/// does, and the choice of byte order 256 AND more: the tables are
/// garbled before the server picks its group, and serve either.
pub(crate) fn premaster(b: &mut Builder, x: &[Bit], y: &[Bit], p256: Bit) -> Vec<Bit> {
    let mp = const_bytes(&Curve::P256.modulus_le());
    let mx = const_bytes(&Curve::X25519.modulus_le());
    let modulus: Vec<Bit> = mp
        .iter()
        .zip(&mx)
        .map(|(&p, &q)| match (p, q) {
            _ if p == q => p,
            (Bit::ONE, _) => p256,
            _ => p256.not(),
        })
        .collect();
    let s = add_mod(b, x, y, &modulus);
    let be: Vec<Bit> = s.chunks(8).rev().flatten().copied().collect();
    s.iter()
        .zip(&be)
        .map(|(&le, &be)| b.mux(p256, le, be))
        .collect()
}

/// `x + y mod p` for 256-bit little-endian words below `p` (its 256
/// little-endian bits, constants or wires).
fn add_mod(b: &mut Builder, x: &[Bit], y: &[Bit], p: &[Bit]) -> Vec<Bit> {
    let mut s = Vec::with_capacity(257);
    let mut c = Bit::ZERO;
    for k in 0..256 {
        let (sum, carry) = b.full_adder(x[k], y[k], c);
        s.push(sum);
        c = carry;
    }
    s.push(c);
    // s - p = s + !p + 1 over 257 bits; the carry out is 1 iff s >= p.
    let notp: Vec<Bit> = p.iter().chain([&Bit::ZERO]).map(|b| b.not()).collect();
    let mut d = Vec::with_capacity(257);
    let mut c = Bit::ONE;
    for k in 0..257 {
        let (sum, carry) = b.full_adder(s[k], notp[k], c);
        d.push(sum);
        c = carry;
    }
    (0..256).map(|k| b.mux(c, s[k], d[k])).collect()
}

/// The key-derivation circuit of `cfg` (see the module docs for its
/// groups).
pub fn key_derivation_circuit(cfg: Tls12Config) -> Circuit {
    let hash = cfg.hash();
    let mut b = Builder::new();
    let xp = b.input(256);
    let xv = b.input(256);
    let randoms = b.input_bytes(64);
    let session_hash = cfg.ems.then(|| b.input_bytes(hash.output_len()));
    let masks = b.input_bytes(cfg.key_block_len() + cfg.states_len());
    let p256 = b.input(1)[0];
    let pms = premaster(&mut b, &xp, &xv, p256);
    let pms_key = HmacKey::new(&mut b, hash, &pms);
    let ms = match &session_hash {
        Some(h) => tls12_prf_bits(&mut b, &pms_key, "extended master secret", h, 48),
        None => tls12_prf_bits(&mut b, &pms_key, "master secret", &randoms, 48),
    };
    let ms_key = HmacKey::new(&mut b, hash, &ms);
    let seed = [&randoms[256..], &randoms[..256]].concat();
    let kb = tls12_prf_bits(&mut b, &ms_key, "key expansion", &seed, cfg.key_block_len());
    let (mk, ms_mask) = masks.split_at(kb.len());
    let out = b.xor_words(&kb, mk);
    b.output(&out);
    let states = [ms_key.inner_state(), ms_key.outer_state()].concat();
    let out = b.xor_words(&states, ms_mask);
    b.output(&out);
    b.finish()
}

/// The Finished circuit for `label` ("client finished" or "server
/// finished") under `hash`.
pub fn finished_circuit(hash: HashAlg, label: &str) -> Circuit {
    let sl = hash.state_len();
    let mut b = Builder::new();
    let sp = b.input_bytes(2 * sl);
    let sv = b.input_bytes(2 * sl);
    let h = b.input_bytes(hash.output_len());
    let s = b.xor_words(&sp, &sv);
    let key = HmacKey::from_states(hash, s[..8 * sl].to_vec(), s[8 * sl..].to_vec());
    let vd = tls12_prf_bits(&mut b, &key, label, &h, 12);
    b.output(&vd);
    b.finish()
}

/// The three plans of one configuration (build once, use for many
/// sessions: cloning shares them).
#[derive(Clone)]
pub struct Tls12Plans {
    cfg: Tls12Config,
    kd: Arc<Plan>,
    cf: Arc<Plan>,
    sf: Arc<Plan>,
}

impl Tls12Plans {
    /// Build and plan the circuits of `cfg`.
    pub fn new(cfg: Tls12Config) -> Result<Self> {
        let plan = |c: Circuit| Plan::from_circuit(c).map(Arc::new);
        Ok(Tls12Plans {
            cfg,
            kd: plan(key_derivation_circuit(cfg))?,
            cf: plan(finished_circuit(cfg.hash(), "client finished"))?,
            sf: plan(finished_circuit(cfg.hash(), "server finished"))?,
        })
    }

    /// The plans of `cfg`, built on the first call for it in this process
    /// and shared by every later one (they depend on nothing of a
    /// session).
    pub fn shared(cfg: Tls12Config) -> Result<Self> {
        static SHARED: std::sync::Mutex<Vec<Tls12Plans>> = std::sync::Mutex::new(Vec::new());
        let cached = |v: &[Tls12Plans]| v.iter().find(|p| p.cfg == cfg).cloned();
        if let Some(p) = cached(&SHARED.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(p);
        }
        // Built outside the lock: another configuration's session need
        // not wait for this one.
        let p = Self::new(cfg)?;
        let mut v = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        Ok(match cached(&v) {
            Some(q) => q,
            None => {
                v.push(p.clone());
                p
            }
        })
    }

    /// The configuration.
    pub fn config(&self) -> Tls12Config {
        self.cfg
    }

    /// AND gates of (key derivation, client Finished, server Finished).
    pub fn and_counts(&self) -> [u64; 3] {
        [
            self.kd.and_count(),
            self.cf.and_count(),
            self.sf.and_count(),
        ]
    }

    /// COTs the prover's inputs consume: key derivation (its premaster
    /// share) and each Finished (its pad-state share).
    pub fn cots(&self) -> (usize, usize) {
        (256, 8 * self.cfg.states_len())
    }

    /// Bytes of each circuit's input message (verifier → prover).
    pub fn input_message_lens(&self) -> [usize; 3] {
        [&self.kd, &self.cf, &self.sf].map(|p| 16 * p.inputs().iter().map(Vec::len).sum::<usize>())
    }
}

/// The verifier's preprocessing for one session: chunks of tables and the
/// decoding information of each circuit, in the order
/// (key derivation, client Finished, server Finished).
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// Chunks per circuit.
    pub chunks: [Vec<Vec<u8>>; 3],
    /// Decoding information per circuit.
    pub decodings: [Vec<u8>; 3],
}

impl Tables {
    /// Total bytes.
    pub fn len(&self) -> usize {
        self.chunks.iter().flatten().map(Vec::len).sum::<usize>()
            + self.decodings.iter().map(Vec::len).sum::<usize>()
    }

    /// No bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Public values of the handshake needed for the key derivation.
#[derive(Clone, Copy, Debug)]
pub struct Randoms<'a> {
    /// ClientHello.random.
    pub client: &'a [u8; 32],
    /// ServerHello.random.
    pub server: &'a [u8; 32],
    /// RFC 7627 session hash, for the extended master secret.
    pub session_hash: Option<&'a [u8]>,
}

/// One party's XOR shares of the key block.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyShares {
    /// Share of client_write_key.
    pub client_key: Vec<u8>,
    /// Share of server_write_key.
    pub server_key: Vec<u8>,
    /// Share of client_write_IV.
    pub client_iv: Vec<u8>,
    /// Share of server_write_IV.
    pub server_iv: Vec<u8>,
}

impl core::fmt::Debug for KeyShares {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeyShares(..)")
    }
}

impl KeyShares {
    pub(crate) fn split(suite: Tls12Suite, kb: &[u8]) -> Self {
        let (kl, il) = (suite.key_len, suite.iv_len);
        KeyShares {
            client_key: kb[..kl].to_vec(),
            server_key: kb[kl..2 * kl].to_vec(),
            client_iv: kb[2 * kl..2 * kl + il].to_vec(),
            server_iv: kb[2 * kl + il..2 * kl + 2 * il].to_vec(),
        }
    }

    /// XOR of two parties' shares: the keys themselves (tests; never in a
    /// session).
    pub fn combine(&self, other: &KeyShares) -> KeyShares {
        let x = |a: &[u8], b: &[u8]| a.iter().zip(b).map(|(x, y)| x ^ y).collect();
        KeyShares {
            client_key: x(&self.client_key, &other.client_key),
            server_key: x(&self.server_key, &other.server_key),
            client_iv: x(&self.client_iv, &other.client_iv),
            server_iv: x(&self.server_iv, &other.server_iv),
        }
    }
}

fn bytes_of(x: &[bool]) -> Vec<u8> {
    bits_to_bytes(x)
}

fn check_hash(cfg: &Tls12Config, h: &[u8]) -> Result<()> {
    if h.len() != cfg.hash().output_len() {
        return Err(Error::Malformed("handshake hash of the wrong length"));
    }
    Ok(())
}

/// The verifier's input groups of the key derivation (after the
/// prover's share): its premaster share, the randoms, the session hash
/// (EMS), its masks (`key block ‖ MS pad states`), the curve bit.
fn kd_groups(
    cfg: &Tls12Config,
    share_le: &[u8; 32],
    curve: Curve,
    randoms: &Randoms<'_>,
    masks: &[u8],
) -> Result<Vec<Vec<bool>>> {
    let mut own = vec![
        bytes_to_bits(share_le),
        bytes_to_bits(&[&randoms.client[..], &randoms.server[..]].concat()),
    ];
    match (cfg.ems, randoms.session_hash) {
        (true, Some(h)) => {
            check_hash(cfg, h)?;
            own.push(bytes_to_bits(h));
        }
        (false, None) => {}
        _ => return Err(Error::Malformed("session hash given iff EMS")),
    }
    own.push(bytes_to_bits(masks));
    own.push(curve_bit(curve));
    Ok(own)
}

/// The verifier's input groups of a Finished circuit: its pad-state share
/// (the key derivation's mask of them), the handshake hash.
fn finished_groups(cfg: &Tls12Config, masks: &[u8], hash: &[u8]) -> Result<Vec<Vec<bool>>> {
    check_hash(cfg, hash)?;
    let states = &masks[cfg.key_block_len()..];
    Ok(vec![bytes_to_bits(states), bytes_to_bits(hash)])
}

/// The prover's check, after the session, of the verifier's revealed
/// inputs of the three circuits (`inputs[c]`: its groups of circuit `c`,
/// in group order without the prover's) against what they must be: the
/// randoms, the session hash, the negotiated curve (`cfg.curve`), both
/// handshake hashes, and the Finished
/// circuits' pad-state shares equal to the key derivation's masks of
/// them. The premaster share and the masks are the verifier's own
/// choice. The audit checks separately that these values are the ones
/// garbled with. Returns the verifier's key shares its masks fix.
pub fn check_verifier_inputs(
    cfg: &Tls12Config,
    randoms: &Randoms<'_>,
    client_finished_hash: &[u8],
    server_finished_hash: &[u8],
    inputs: &[Vec<Vec<bool>>],
) -> Result<KeyShares> {
    const OTHER: Error = Error::Malformed("inputs of another key derivation");
    let [kd, cf, sf] = inputs else {
        return Err(OTHER);
    };
    let share: [u8; 32] = match kd.first() {
        Some(b) if b.len() == 256 => bits_to_bytes(b).try_into().expect("32 bytes"),
        _ => return Err(OTHER),
    };
    let masks = match kd.len().checked_sub(2).map(|i| &kd[i]) {
        Some(b) if b.len() == 8 * (cfg.key_block_len() + cfg.states_len()) => bits_to_bytes(b),
        _ => return Err(OTHER),
    };
    if kd_groups(cfg, &share, cfg.curve, randoms, &masks)? != *kd {
        return Err(Error::VerifierCheated(
            "key-derivation inputs other than the session's randoms, hash and curve",
        ));
    }
    if finished_groups(cfg, &masks, client_finished_hash)? != *cf
        || finished_groups(cfg, &masks, server_finished_hash)? != *sf
    {
        return Err(Error::VerifierCheated(
            "Finished inputs other than the handshake hash and the key derivation's masks",
        ));
    }
    Ok(KeyShares::split(cfg.suite, &masks[..cfg.key_block_len()]))
}

/// The verifier (garbler) of one TLS 1.2 session.
pub struct Tls12Verifier {
    cfg: Tls12Config,
    circuits: [VerifierCircuit; 3],
    /// Masks of the key block and of the MS pad states: the verifier's
    /// shares.
    masks: Vec<u8>,
}

/// Instances used by one session: `first..first + 3`.
pub const INSTANCES: u64 = 3;

impl Tls12Verifier {
    /// A session under the verifier's COT `delta`, with garbling instances
    /// `first_instance..first_instance + 3` (distinct from every other use
    /// of `delta`).
    pub fn new(
        plans: &Tls12Plans,
        delta: Block,
        first_instance: u64,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut masks = vec![0u8; plans.cfg.key_block_len() + plans.cfg.states_len()];
        rng.fill_bytes(&mut masks);
        let mut c = |plan: &Arc<Plan>, i: u64| {
            VerifierCircuit::new(Arc::clone(plan), delta, first_instance + i, 0, rng)
        };
        Ok(Tls12Verifier {
            cfg: plans.cfg,
            circuits: [c(&plans.kd, 0)?, c(&plans.cf, 1)?, c(&plans.sf, 2)?],
            masks,
        })
    }

    /// The verifier's key shares: its masks of the key block, drawn at
    /// creation.
    pub fn key_shares(&self) -> KeyShares {
        KeyShares::split(self.cfg.suite, &self.masks[..self.cfg.key_block_len()])
    }

    /// Garble all three circuits: the preprocessing message.
    pub fn preprocess(&mut self) -> Result<Tables> {
        let mut t = Tables::default();
        for (i, c) in self.circuits.iter_mut().enumerate() {
            t.chunks[i] = c.garble_all();
            t.decodings[i] = c.decoding()?;
        }
        Ok(t)
    }

    /// Key derivation, the verifier's answer to the prover's flips: its
    /// share of the premaster (the ECtF output on the negotiated `curve`,
    /// 32 bytes little-endian), the public randoms, and `256` COT keys.
    /// Returns the message and the verifier's key shares.
    pub fn key_derivation(
        &self,
        share_le: &[u8; 32],
        curve: Curve,
        randoms: &Randoms<'_>,
        keys: &[Block],
        flips: &[u8],
    ) -> Result<(Vec<u8>, KeyShares)> {
        let own = kd_groups(&self.cfg, share_le, curve, randoms, &self.masks)?;
        let msg = self.circuits[0].inputs(keys, flips, &own)?;
        let kb = &self.masks[..self.cfg.key_block_len()];
        Ok((msg, KeyShares::split(self.cfg.suite, kb)))
    }

    fn finished_inputs(
        &self,
        i: usize,
        hash: &[u8],
        keys: &[Block],
        flips: &[u8],
    ) -> Result<Vec<u8>> {
        let own = finished_groups(&self.cfg, &self.masks, hash)?;
        self.circuits[i].inputs(keys, flips, &own)
    }

    /// Client Finished: the answer to the prover's flips, for handshake
    /// hash `hash` and `8 * states_len` COT keys.
    pub fn client_finished(&self, hash: &[u8], keys: &[Block], flips: &[u8]) -> Result<Vec<u8>> {
        self.finished_inputs(1, hash, keys, flips)
    }

    /// The client `verify_data` from the prover's output labels (checked).
    pub fn client_verify_data(&self, labels: &[u8]) -> Result<[u8; 12]> {
        let vd = bytes_of(&self.circuits[1].check_output(0, labels)?);
        Ok(vd.try_into().expect("12 bytes"))
    }

    /// Server Finished: as [`Self::client_finished`].
    pub fn server_finished(&self, hash: &[u8], keys: &[Block], flips: &[u8]) -> Result<Vec<u8>> {
        self.finished_inputs(2, hash, keys, flips)
    }

    /// Check the server's `verify_data` (as decrypted from its Finished)
    /// against the 2PC value from the prover's output labels.
    pub fn check_server_verify_data(&self, labels: &[u8], server_sent: &[u8]) -> Result<()> {
        let vd = bytes_of(&self.circuits[2].check_output(0, labels)?);
        if vd != server_sent {
            return Err(Error::ServerFinished);
        }
        Ok(())
    }

    /// The circuits (for the consistency proof: 0-labels, `Δ`).
    pub fn circuits(&self) -> &[VerifierCircuit; 3] {
        &self.circuits
    }

    /// The circuits, to garble chunk by chunk
    /// ([`VerifierCircuit::next_chunk`]) instead of [`Self::preprocess`].
    pub fn circuits_mut(&mut self) -> &mut [VerifierCircuit; 3] {
        &mut self.circuits
    }
}

/// The prover (evaluator) of one TLS 1.2 session.
pub struct Tls12Prover {
    cfg: Tls12Config,
    circuits: [ProverCircuit; 3],
    tables: Tables,
    /// The prover's share of the MS pad states, after key derivation.
    states: Option<Vec<u8>>,
}

impl Tls12Prover {
    /// A session with the verifier's instances and its preprocessing.
    pub fn new(plans: &Tls12Plans, first_instance: u64, tables: Tables) -> Result<Self> {
        let c =
            |plan: &Arc<Plan>, i: u64| ProverCircuit::new(Arc::clone(plan), first_instance + i, 0);
        Ok(Tls12Prover {
            cfg: plans.cfg,
            circuits: [c(&plans.kd, 0)?, c(&plans.cf, 1)?, c(&plans.sf, 2)?],
            tables,
            states: None,
        })
    }

    /// Key derivation, first message: flips of the prover's premaster
    /// share (32 bytes little-endian) against `256` COT MACs.
    pub fn key_derivation_flips(&mut self, share_le: &[u8; 32], macs: &[Block]) -> Result<Vec<u8>> {
        self.circuits[0].flips(macs, &bytes_to_bits(share_le))
    }

    fn run(&mut self, i: usize, msg: &[u8]) -> Result<Vec<Vec<bool>>> {
        let c = &mut self.circuits[i];
        c.receive_inputs(msg)?;
        for ch in &self.tables.chunks[i] {
            c.feed(ch)?;
        }
        c.finish()?;
        c.decode(&self.tables.decodings[i])
    }

    /// Key derivation, the verifier's answer: evaluate and decode; the
    /// prover's key shares.
    pub fn key_derivation_finish(&mut self, msg: &[u8]) -> Result<KeyShares> {
        let out = self.run(0, msg)?;
        let kb = bytes_of(&out[0]);
        self.states = Some(bytes_of(&out[1]));
        Ok(KeyShares::split(self.cfg.suite, &kb))
    }

    fn finished_flips(&mut self, i: usize, macs: &[Block]) -> Result<Vec<u8>> {
        let s = self
            .states
            .as_ref()
            .ok_or(Error::Malformed("Finished before key derivation"))?;
        let bits = bytes_to_bits(s);
        self.circuits[i].flips(macs, &bits)
    }

    /// Client Finished, first message: flips of the prover's pad-state
    /// share against `8 * states_len` COT MACs.
    pub fn client_finished_flips(&mut self, macs: &[Block]) -> Result<Vec<u8>> {
        self.finished_flips(1, macs)
    }

    /// Client Finished, the verifier's answer: `verify_data` and the output
    /// labels to send back.
    pub fn client_finished_finish(&mut self, msg: &[u8]) -> Result<([u8; 12], Vec<u8>)> {
        let out = self.run(1, msg)?;
        let vd = bytes_of(&out[0]).try_into().expect("12 bytes");
        Ok((vd, self.circuits[1].output_message(0)?))
    }

    /// Server Finished, first message (as the client's).
    pub fn server_finished_flips(&mut self, macs: &[Block]) -> Result<Vec<u8>> {
        self.finished_flips(2, macs)
    }

    /// Server Finished, the verifier's answer: the expected `verify_data`
    /// (to compare with the decrypted server Finished) and the output
    /// labels to send back.
    pub fn server_verify_data(&mut self, msg: &[u8]) -> Result<([u8; 12], Vec<u8>)> {
        let out = self.run(2, msg)?;
        let vd = bytes_of(&out[0]).try_into().expect("12 bytes");
        Ok((vd, self.circuits[2].output_message(0)?))
    }

    /// [`Self::server_verify_data`] compared with what the server sent: an
    /// [`Error::ServerFinished`] if they differ, else the labels.
    pub fn server_finished_finish(&mut self, msg: &[u8], server_sent: &[u8]) -> Result<Vec<u8>> {
        let (vd, labels) = self.server_verify_data(msg)?;
        if vd[..] != *server_sent {
            return Err(Error::ServerFinished);
        }
        Ok(labels)
    }

    /// The circuits (for the consistency proof: active labels).
    pub fn circuits(&self) -> &[ProverCircuit; 3] {
        &self.circuits
    }
}

//! The records the session runs in 2PC, numbered by id: `0` the client
//! Finished, `1..` the request's records in order; they start in the
//! order of `run_order`. Owns what both parties derive from an id
//! (length, sequence number, content type, the circuit plan), so they
//! cannot disagree on it; the protocol steps are [`gcm`]'s and
//! [`chacha`]'s, and the request's keystream is checked by dual
//! execution ([`dual`]).
//!
//! AES-GCM records run [`gcm`]'s one circuit each;
//! ChaCha20-Poly1305 records [`chacha`]'s two (record and tag
//! circuit, `circuits_per_record`) and have no explicit nonce
//! (`explicit_nonce_len`): every place that lays out a record asks this
//! module.
//!
//! Only client records run in 2PC. The server's Finished is recorded like
//! the response and checked after the session, in the proof
//! ([`crate::consist::FinishedCheck`]: its plaintext and tag under the
//! server key the key derivation output): nothing in the session needs it
//! earlier (the request goes out before it anyway, TLS False Start), and
//! its circuit was 0.4 MB of tables.

pub(crate) mod answer;
pub mod chacha;
pub mod dual;
pub mod gcm;
pub(crate) mod upload;

use crate::error::{Error, Result};
use std::sync::{Arc, Mutex};
use webproof_circuits::tls::Tls12Suite;
use webproof_mpc::Plan;
use webproof_tls::record::{content_type, Record};
use webproof_tlsproof::{Aead, RecordTag, SealedRecord};

/// Whether a suite's records are ChaCha20-Poly1305's (RFC 7905): a
/// 32-byte key and a 12-byte IV, the whole nonce implicit. Every other
/// suite MPC mode runs is AES-GCM's (RFC 5288: a 4-byte salt and an
/// 8-byte explicit nonce on the wire).
pub(crate) fn is_chacha(suite: Tls12Suite) -> bool {
    suite == Tls12Suite::CHACHA20_POLY1305_SHA256
}

/// Bytes of a record's explicit nonce: 8 for AES-GCM (the client's is its
/// sequence number, the server's whatever it chose, so it is read from the
/// record), none for ChaCha20-Poly1305, whose nonce is the IV XOR the
/// sequence number both parties count.
pub(crate) fn explicit_nonce_len(suite: Tls12Suite) -> usize {
    if is_chacha(suite) {
        0
    } else {
        8
    }
}

/// Bytes a record's payload has beyond its plaintext: the explicit nonce
/// and the 16-byte tag.
pub(crate) fn overhead(suite: Tls12Suite) -> usize {
    explicit_nonce_len(suite) + 16
}

/// The proof's AEAD of a suite.
pub(crate) fn aead(suite: Tls12Suite) -> Aead {
    match (is_chacha(suite), suite.key_len) {
        (true, _) => Aead::ChaCha20Poly1305,
        (false, 16) => Aead::Aes128Gcm,
        (false, _) => Aead::Aes256Gcm,
    }
}

/// A protected record's payload split for the proof: the sealed record
/// (sequence number, explicit nonce if the suite has one, ciphertext) and
/// its tag with the AAD; `None` if the payload is shorter than the
/// suite's overhead.
pub(crate) fn sealed(
    suite: Tls12Suite,
    seq: u64,
    content_type: u8,
    payload: &[u8],
) -> Option<(SealedRecord, RecordTag)> {
    let n = explicit_nonce_len(suite);
    let len = payload.len().checked_sub(overhead(suite))?;
    let ct = payload[n..n + len].to_vec();
    Some((
        SealedRecord {
            seq,
            explicit_nonce: (n == 8).then(|| payload[..8].try_into().expect("8 bytes")),
            ciphertext: ct,
        },
        RecordTag {
            aad: gcm::tls12_aad(seq, content_type, len).to_vec(),
            tag: payload[n + len..].try_into().expect("16 bytes"),
        },
    ))
}

/// A TLS 1.2 record's plaintext (`payload`: explicit nonce if the suite
/// has one, ciphertext, tag) under the whole key and IV, `None` if its
/// tag is not right. The prover's check in the clear once the verifier
/// revealed its share of the server key; the proof asserts the same.
pub(crate) fn open_record(
    suite: Tls12Suite,
    key: &[u8],
    iv: &[u8],
    seq: u64,
    ct: u8,
    payload: &[u8],
) -> Option<Vec<u8>> {
    use aes_gcm::aead::{Aead as _, KeyInit, Payload};
    let len = payload.len().checked_sub(overhead(suite))?;
    let aad = gcm::tls12_aad(seq, ct, len);
    let n = explicit_nonce_len(suite);
    let body = Payload {
        msg: &payload[n..],
        aad: &aad,
    };
    if is_chacha(suite) {
        // RFC 7905: the IV XOR the sequence number, left-padded.
        let mut nonce: [u8; 12] = iv.try_into().ok()?;
        for (b, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *b ^= s;
        }
        return chacha20poly1305::ChaCha20Poly1305::new_from_slice(key)
            .ok()?
            .decrypt(&nonce.into(), body)
            .ok();
    }
    let nonce = [iv, &payload[..8]].concat();
    match key.len() {
        16 => aes_gcm::Aes128Gcm::new_from_slice(key)
            .ok()?
            .decrypt(nonce.as_slice().into(), body)
            .ok(),
        32 => aes_gcm::Aes256Gcm::new_from_slice(key)
            .ok()?
            .decrypt(nonce.as_slice().into(), body)
            .ok(),
        _ => None,
    }
}

/// Bytes of the server Finished record's payload: the explicit nonce, the
/// encrypted Finished message (16), the tag (16).
pub(crate) fn server_finished_len(suite: Tls12Suite) -> usize {
    overhead(suite) + 16
}

/// The server's encrypted Finished record, as both parties check its shape
/// on arrival (its contents are checked in the proof).
pub(crate) fn check_server_finished(suite: Tls12Suite, rec: &Record) -> Result<()> {
    if rec.content_type != content_type::HANDSHAKE {
        return Err(Error::ServerEncrypted(rec.content_type));
    }
    if rec.payload.len() != server_finished_len(suite) {
        return Err(Error::ServerFinished);
    }
    Ok(())
}

/// A server alert during the handshake, as the error that ends the session.
pub(crate) fn server_alert(payload: &[u8]) -> Error {
    match *payload {
        [level, description] => Error::ServerAlert { level, description },
        _ => Error::Malformed("a server alert that is not two bytes"),
    }
}

/// Request record `spec` as both parties' recordings hold it: its header
/// and explicit nonce (AES-GCM's; ChaCha20-Poly1305 has none), then zeros
/// in place of its ciphertext and tag. The verifier never sees either (the
/// prover sends the server the real record and the verifier only
/// `ProverMsg::RecSent`); the recording keeps the record's place, type and
/// length, and the proof takes its masked ciphertext from the 2PC
/// ([`crate::HiddenRecord`]).
pub(crate) fn hidden_record(suite: Tls12Suite, spec: &RecSpec) -> Vec<u8> {
    let mut payload = spec.seq().to_be_bytes()[..explicit_nonce_len(suite)].to_vec();
    payload.resize(overhead(suite) + spec.len, 0);
    crate::hello::record(spec.content_type(), &payload)
}

/// What the proof of the request takes of one request record whose
/// ciphertext the verifier never saw: its masked ciphertext `C ⊕ ρ` (the
/// record's length; the prover sent it in `RecCiphertext`) and the COTs
/// of its hidden M2A, whose choice bits are `ρ` (bit `m` of block `i`:
/// COT `128·i + m`): the prover's MACs, the verifier's keys. Both import
/// them as authenticated bits, so the request's ciphertext is
/// `masked ⊕ ρ` in the proof (`webproof_tlsproof::assert_masked_plaintext`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HiddenRecord {
    /// `C ⊕ ρ`, the record's length.
    pub masked: Vec<u8>,
    /// MACs (prover) or keys (verifier) of the M2A's COTs. Under
    /// ChaCha20-Poly1305 those of its bitwise OLEs, `χ¹` then `χ²`
    /// (`crate::rec::chacha::masked_cots`), `masked` being `C ⊕ χ¹`.
    pub cots: Vec<webproof_core::Block>,
    /// ChaCha20-Poly1305 only: the second masked copy `D² = C ⊕ χ²`
    /// (whole blocks, the padding masked too), which the proof ties to the
    /// first (`crate::rec::chacha::prove_hidden_ciphertext`); empty for
    /// AES-GCM.
    pub masked2: Vec<u8>,
}

impl HiddenRecord {
    /// Record `spec`'s, from its masked ciphertext as the 2PC sent it
    /// (whole blocks) and its COTs.
    pub(crate) fn new(spec: &RecSpec, masked_blocks: &[u8], cots: &[webproof_core::Block]) -> Self {
        HiddenRecord {
            masked: masked_blocks[..spec.len.min(masked_blocks.len())].to_vec(),
            cots: cots.to_vec(),
            masked2: Vec::new(),
        }
    }

    /// A ChaCha20-Poly1305 request record's, from the tag request that
    /// carried its two masked copies (`crate::rec::chacha::
    /// masked_ciphertexts`) and its bitwise OLEs' COTs: `masked` is `D¹`
    /// cut to the record's length, `masked2` all of `D²`.
    pub(crate) fn chacha(
        spec: &RecSpec,
        request: &[u8],
        cots: &[webproof_core::Block],
    ) -> Result<Self> {
        Self::chacha_of(spec.len, AAD_LEN, request, cots)
    }

    /// [`Self::chacha`] of a `len`-byte record with `aad_len` bytes of AAD
    /// (TLS 1.2's 13, TLS 1.3's 5-byte record header).
    pub(crate) fn chacha_of(
        len: usize,
        aad_len: usize,
        request: &[u8],
        cots: &[webproof_core::Block],
    ) -> Result<Self> {
        use crate::rec::chacha;
        let q = chacha::blocks_needed(aad_len, len);
        let (d1, d2) = chacha::masked_ciphertexts(request, q, len)
            .ok_or(Error::Malformed("a tag request of the wrong length"))?;
        Ok(HiddenRecord {
            masked: d1[..len].to_vec(),
            cots: cots.to_vec(),
            masked2: [&d1[len..], d2].concat(),
        })
    }

    /// `D¹`'s padding and `D²`, as [`Self::chacha`] keeps them.
    pub(crate) fn chacha_copies(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let pad = (16 - self.masked.len() % 16) % 16;
        let d1 = [&self.masked[..], self.masked2.get(..pad)?].concat();
        let d2 = self.masked2.get(pad..)?.to_vec();
        (d1.len() == d2.len()).then_some((d1, d2))
    }
}

/// Id of the client Finished record.
pub(crate) const CLIENT_FINISHED: u32 = 0;

/// The ids of a session's records in the order both parties run them in
/// 2PC (and draw their COTs): the client Finished, then the request's
/// records. The request goes out right after the client Finished, without
/// waiting for the server's (TLS False Start, RFC 7918: ECDHE with an
/// AEAD suite, the server's key share already authenticated by its
/// signature over the verifier's random), so its 2PC and the server's
/// round trip overlap.
pub(crate) fn run_order(request_records: usize) -> Vec<u32> {
    (0..=request_records as u32).collect()
}

/// What an id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecSpec {
    pub id: u32,
    /// Plaintext length.
    pub len: usize,
}

impl RecSpec {
    /// Records of a session whose request records have `request_lens`.
    pub(crate) fn all(request_lens: &[usize]) -> Vec<RecSpec> {
        let mut v = vec![RecSpec {
            id: CLIENT_FINISHED,
            len: 16,
        }];
        v.extend(request_lens.iter().enumerate().map(|(i, &len)| RecSpec {
            id: 1 + i as u32,
            len,
        }));
        v
    }

    /// The record's TLS sequence number (the client's: the Finished is
    /// 0, the request's records follow).
    pub(crate) fn seq(&self) -> u64 {
        u64::from(self.id)
    }

    /// The record's content type.
    pub(crate) fn content_type(&self) -> u8 {
        match self.id {
            CLIENT_FINISHED => 22,
            _ => 23,
        }
    }

    /// The AEAD additional data.
    pub(crate) fn aad(&self) -> [u8; 13] {
        gcm::tls12_aad(self.seq(), self.content_type(), self.len)
    }

    /// Whether this record computes the client direction's GHASH key: the
    /// client Finished, the one record every session runs in 2PC. Its
    /// circuit outputs the prover's multiplicative share of `H` and it
    /// answers the M2A of the powers every client record's tag needs
    /// ([`ghash_powers`]); the request's records take those powers
    /// instead of computing `H` again (one AES block and one GF(2^128)
    /// product, 7,307 AND and about 180 KB of tables, fewer per record).
    pub(crate) fn computes_h(&self) -> bool {
        self.id == CLIENT_FINISHED
    }

    /// Garbling instance.
    pub(crate) fn instance(&self) -> u64 {
        crate::kdf::RECORD_INSTANCE + u64::from(self.id)
    }

    /// OLE stream (the ECtF has stream 0).
    pub(crate) fn stream(&self) -> u64 {
        1 + u64::from(self.id)
    }

    /// The planned circuit for a `key_len`-byte key: the process's
    /// [`PlanCache`] copy if a session planned this shape lately.
    pub(crate) fn plan(&self, key_len: usize) -> Result<Arc<Plan>> {
        static SHARED: Mutex<PlanCache> = Mutex::new(PlanCache::new(PLAN_CACHE_BYTES));
        cached_plan(&SHARED, (key_len, self.len, self.computes_h()), || {
            gcm::gcm_circuit(key_len, self.len, self.computes_h())
        })
    }

    /// The planned keystream circuit the prover garbles for this request
    /// record ([`crate::rec::dual::keystream_circuit`]), cached as
    /// [`Self::plan`] is.
    pub(crate) fn keystream_plan(&self, key_len: usize) -> Result<Arc<Plan>> {
        static SHARED: Mutex<PlanCache> = Mutex::new(PlanCache::new(PLAN_CACHE_BYTES));
        cached_plan(&SHARED, (key_len, self.len, false), || {
            crate::rec::dual::keystream_circuit(key_len, self.len)
        })
    }
}

/// Garbling instances of the ChaCha20-Poly1305 records' tag circuits
/// start here (`RECORD_INSTANCE + TAG_INSTANCES + id`): apart from every
/// record circuit's (`RECORD_INSTANCE + id`, ids below 2^20).
pub(crate) const TAG_INSTANCES: u64 = 1 << 20;

/// Bytes of a TLS 1.2 record's AAD (sequence number, type, version,
/// length).
pub(crate) const AAD_LEN: usize = 13;

impl RecSpec {
    /// The garbling instances of a ChaCha20-Poly1305 record's two
    /// circuits: its record circuit's (the one AES-GCM's record takes),
    /// its tag circuit's.
    pub(crate) fn chacha_instances(&self) -> [u64; 2] {
        [
            self.instance(),
            crate::kdf::RECORD_INSTANCE + TAG_INSTANCES + u64::from(self.id),
        ]
    }

    /// The planned circuits of a ChaCha20-Poly1305 record
    /// ([`chacha_plans`] of its length).
    pub(crate) fn chacha_plans(&self) -> Result<(Arc<Plan>, Arc<Plan>)> {
        chacha_plans(self.len)
    }

    /// The planned keystream circuit the prover garbles for this request
    /// record under `suite` (the dual execution's), cached.
    pub(crate) fn keystream_plan_for(&self, suite: Tls12Suite) -> Result<Arc<Plan>> {
        if !is_chacha(suite) {
            return self.keystream_plan(suite.key_len);
        }
        chacha_keystream_plan(self.len)
    }
}

/// The planned circuits of a `len`-byte ChaCha20-Poly1305 record
/// ([`crate::rec::chacha::chacha_circuit`] of its length and the one
/// [`crate::rec::chacha::tag_circuit`]), cached as [`RecSpec::plan`] is.
/// Neither depends on the TLS version: the sequence number is an input
/// and the AAD enters only the shares of the polynomial, so TLS 1.3's
/// records (`crate::tls13`) share these.
pub(crate) fn chacha_plans(len: usize) -> Result<(Arc<Plan>, Arc<Plan>)> {
    static SHARED: Mutex<PlanCache> = Mutex::new(PlanCache::new(PLAN_CACHE_BYTES));
    static TAG: std::sync::OnceLock<Arc<Plan>> = std::sync::OnceLock::new();
    let record = cached_plan(&SHARED, (crate::rec::chacha::KEY_IV_LEN, len, true), || {
        crate::rec::chacha::chacha_circuit(len)
    })?;
    let tag = match TAG.get() {
        Some(plan) => plan.clone(),
        None => {
            let plan = Arc::new(Plan::from_circuit(crate::rec::chacha::tag_circuit())?);
            TAG.get_or_init(|| plan).clone()
        }
    };
    Ok((record, tag))
}

/// The planned keystream circuit of a `len`-byte ChaCha20-Poly1305
/// request record, the one the prover garbles for the dual execution
/// ([`crate::rec::chacha::keystream_circuit`]: the nonce is the IV XOR
/// the sequence number in TLS 1.2 and 1.3 alike), cached.
pub(crate) fn chacha_keystream_plan(len: usize) -> Result<Arc<Plan>> {
    static SHARED: Mutex<PlanCache> = Mutex::new(PlanCache::new(PLAN_CACHE_BYTES));
    cached_plan(
        &SHARED,
        (crate::rec::chacha::KEY_IV_LEN, len, false),
        || crate::rec::chacha::keystream_circuit(len),
    )
}

/// A circuit's tables garbled whole and not all sent: its chunks left
/// (last first), its decoding, the labels of the verifier's early inputs.
type PendingTables = (Vec<Vec<u8>>, Vec<u8>, Vec<u8>);

/// A ChaCha20-Poly1305 record's two circuits' tables (record circuit,
/// then tag circuit), garbled whole when the record's turn comes
/// (`ChachaVerifier::preprocess`) and handed out chunk by chunk, in both
/// TLS versions' verifiers.
#[derive(Default)]
pub(crate) struct ChachaTables {
    /// Per circuit, `None` once all are out.
    parts: [Option<PendingTables>; 2],
    garbled: bool,
}

impl ChachaTables {
    /// Whether both circuits are garbled (and [`Self::set`]).
    pub(crate) fn garbled(&self) -> bool {
        self.garbled
    }

    /// Both circuits' tables, as `ChachaVerifier::preprocess` gives them.
    pub(crate) fn set(
        &mut self,
        (record, tag): (
            webproof_mpc::exec::StepTables,
            webproof_mpc::exec::StepTables,
        ),
    ) {
        self.parts = [record, tag].map(|(t, d, e)| {
            let mut chunks = t.into_chunks();
            chunks.reverse();
            Some((chunks, d, e))
        });
        self.garbled = true;
    }

    /// The next message of circuit `c` (0: the record's, 1: its tag's),
    /// numbered `circuit` on the wire: a chunk of its tables, then its
    /// `Decoding`, which ends it (`true`).
    pub(crate) fn next(&mut self, c: usize, circuit: u8) -> Result<(crate::VerifierMsg, bool)> {
        let part = self.parts[c]
            .as_mut()
            .ok_or(Error::OutOfOrder("tables of a circuit not garbled"))?;
        if let Some(chunk) = part.0.pop() {
            return Ok((crate::VerifierMsg::Tables { circuit, chunk }, false));
        }
        let (_, decoding, early) = self.parts[c].take().expect("some");
        Ok((
            crate::VerifierMsg::Decoding {
                circuit,
                decoding,
                early,
            },
            true,
        ))
    }
}

/// Circuits a record runs in 2PC under `suite`: AES-GCM's one (keystream
/// and tag share), ChaCha20-Poly1305's two (record circuit, then tag
/// circuit: the tag needs the polynomial, known only online).
pub(crate) fn circuits_per_record(suite: Tls12Suite) -> usize {
    if is_chacha(suite) {
        2
    } else {
        1
    }
}

/// Powers of the client's GHASH key the session's records need: the most
/// any one record's tag takes ([`gcm::powers_needed`]), answered by the
/// record that computes `H` ([`RecSpec::computes_h`]).
pub(crate) fn ghash_powers(specs: impl IntoIterator<Item = RecSpec>) -> usize {
    specs
        .into_iter()
        .map(|s| gcm::powers_needed(s.len))
        .max()
        .unwrap_or(0)
}

/// Bytes of record schedules a process keeps between sessions: two 1 KB
/// request records' (about 13 MB each) besides the Finished's.
pub(crate) const PLAN_CACHE_BYTES: usize = 32 << 20;

/// The record circuits' schedules of recent sessions, by (key length,
/// plaintext length, whether it computes `H`), the only terms a record
/// circuit depends on
/// ([`gcm::gcm_circuit`]). Building one (the circuit, then its
/// schedule) was the largest piece of a verifier's CPU in an MPC session
/// with a 1 KB request: about 30% of its samples under `perf`, and its CPU
/// per session fell by 44% once kept. A service meets the same request
/// shapes again and again; sessions
/// running at once share one copy instead of a copy each. A schedule is
/// a deterministic function of its shape, so a cached one is the one the
/// session would have built. Bounded by [`Plan::state_bytes`], the least
/// recently used shape evicted first; a schedule larger than the bound is
/// not kept.
/// What a record circuit is built from: key length, plaintext length,
/// whether it computes `H`.
pub(crate) type Shape = (usize, usize, bool);

#[derive(Debug)]
pub(crate) struct PlanCache {
    /// Most recently used last.
    entries: Vec<(Shape, Arc<Plan>)>,
    bytes: usize,
    budget: usize,
}

impl PlanCache {
    pub(crate) const fn new(budget: usize) -> Self {
        PlanCache {
            entries: Vec::new(),
            bytes: 0,
            budget,
        }
    }

    fn get(&mut self, shape: Shape) -> Option<Arc<Plan>> {
        let i = self.entries.iter().position(|(s, _)| *s == shape)?;
        let entry = self.entries.remove(i);
        let plan = entry.1.clone();
        self.entries.push(entry);
        Some(plan)
    }

    fn insert(&mut self, shape: Shape, plan: Arc<Plan>) {
        let size = plan.state_bytes();
        if size > self.budget || self.entries.iter().any(|(s, _)| *s == shape) {
            return;
        }
        while self.bytes + size > self.budget && !self.entries.is_empty() {
            let (_, old) = self.entries.remove(0);
            self.bytes -= old.state_bytes();
        }
        self.bytes += size;
        self.entries.push((shape, plan));
    }
}

/// The schedule of `shape` from `cache` (one per kind of circuit, a
/// process's own), or built from `circuit` and kept. A poisoned lock only
/// means a panic elsewhere mid-update; the entries are whole plans either
/// way. Built outside the lock: other sessions' lookups do not wait the
/// couple of hundred ms this takes for a 1 KB record.
pub(crate) fn cached_plan(
    cache: &Mutex<PlanCache>,
    shape: Shape,
    circuit: impl FnOnce() -> webproof_circuits::Circuit,
) -> Result<Arc<Plan>> {
    let lock = || cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(plan) = lock().get(shape) {
        return Ok(plan);
    }
    let plan = Arc::new(Plan::from_circuit(circuit())?);
    lock().insert(shape, plan.clone());
    Ok(plan)
}

/// The client's key ‖ IV share, the input of every record circuit.
pub(crate) fn key_iv(keys: &crate::kdf::tls12::KeyShares) -> Vec<u8> {
    [&keys.client_key[..], &keys.client_iv].concat()
}

/// The client key ‖ IV of a key block's wires (`client_key ‖ server_key ‖
/// client_iv ‖ server_iv`, one item per bit), as [`key_iv`] of its bytes.
pub(crate) fn key_iv_wires<T: Clone>(kb: &[T], key_len: usize, iv_len: usize) -> Result<Vec<T>> {
    let (k, i) = (8 * key_len, 8 * iv_len);
    if kb.len() != 2 * k + 2 * i {
        return Err(Error::Malformed("key block of the wrong length"));
    }
    Ok([&kb[..k], &kb[2 * k..2 * k + i]].concat())
}

/// The client key ‖ IV's labels among the key derivation's key-block
/// outputs (`KdfProver::key_labels`: the prover's active labels;
/// `KdfVerifier::key_labels`: the verifier's 0-labels), what every record
/// circuit is chained to.
pub(crate) fn key_iv_labels(
    key_block: Vec<crate::kdf::KeyLabels>,
    key_len: usize,
    iv_len: usize,
) -> Result<Vec<webproof_core::Block>> {
    let kb: Vec<_> = key_block.into_iter().flat_map(|k| k.labels).collect();
    key_iv_wires(&kb, key_len, iv_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(len: usize) -> Arc<Plan> {
        Arc::new(Plan::from_circuit(gcm::gcm_circuit(16, len, false)).unwrap())
    }

    /// The record layouts against `webproof_tls`'s own record cipher (the
    /// one proxy mode runs): a record it seals opens here, with or without
    /// an explicit nonce, and one flipped bit anywhere does not; the
    /// proof's split names the same parts.
    #[test]
    fn layouts_match_the_tls_record_cipher() {
        use webproof_tls::aead::RecordCipher;
        use webproof_tls::keys::TrafficKeys;
        use webproof_tls::CipherSuite;
        let cases = [
            (
                CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
                Tls12Suite::CHACHA20_POLY1305_SHA256,
                Aead::ChaCha20Poly1305,
            ),
            (
                CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
                Tls12Suite::AES_128_GCM_SHA256,
                Aead::Aes128Gcm,
            ),
            (
                CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
                Tls12Suite::AES_256_GCM_SHA384,
                Aead::Aes256Gcm,
            ),
        ];
        for (wire, suite, want_aead) in cases {
            assert_eq!(aead(suite), want_aead);
            let keys = TrafficKeys {
                key: (0..suite.key_len as u8).collect(),
                iv: (100..100 + suite.iv_len as u8).collect(),
            };
            let cipher = RecordCipher::new(wire, keys.clone()).unwrap();
            let seq = 0x0102_0304_0506_0708;
            let msg = b"GET / HTTP/1.1\r\n\r\n".to_vec();
            let rec = cipher.seal(seq, 23, &msg, 0);
            assert_eq!(rec.payload.len(), overhead(suite) + msg.len());
            let open = |p: &[u8]| open_record(suite, &keys.key, &keys.iv, seq, 23, p);
            assert_eq!(open(&rec.payload), Some(msg.clone()));
            for i in [0, rec.payload.len() / 2, rec.payload.len() - 1] {
                let mut bad = rec.payload.clone();
                bad[i] ^= 1;
                assert_eq!(open(&bad), None, "{wire} byte {i}");
            }
            // Another sequence number is another nonce (ChaCha) or AAD.
            assert_eq!(
                open_record(suite, &keys.key, &keys.iv, seq + 1, 23, &rec.payload),
                None
            );
            let (sealed_rec, tag) = sealed(suite, seq, 23, &rec.payload).unwrap();
            let n = explicit_nonce_len(suite);
            assert_eq!(sealed_rec.seq, seq);
            assert_eq!(sealed_rec.explicit_nonce.is_some(), n == 8);
            assert_eq!(sealed_rec.ciphertext, rec.payload[n..n + msg.len()]);
            assert_eq!(tag.tag[..], rec.payload[n + msg.len()..]);
            assert_eq!(tag.aad, gcm::tls12_aad(seq, 23, msg.len()));
            assert!(sealed(suite, seq, 23, &rec.payload[..overhead(suite) - 1]).is_none());
        }
    }

    /// The server Finished's and a hidden request record's sizes per
    /// suite: ChaCha20-Poly1305 carries no explicit nonce.
    #[test]
    fn record_sizes_per_suite() {
        let chacha = Tls12Suite::CHACHA20_POLY1305_SHA256;
        let gcm = Tls12Suite::AES_128_GCM_SHA256;
        assert_eq!(server_finished_len(chacha), 32);
        assert_eq!(server_finished_len(gcm), 40);
        assert_eq!(server_finished_len(Tls12Suite::AES_256_GCM_SHA384), 40);
        let spec = RecSpec { id: 2, len: 100 };
        let h = hidden_record(chacha, &spec);
        assert_eq!(h.len(), 5 + 100 + 16);
        assert_eq!(&h[..5], &[23, 3, 3, 0, 116]);
        assert!(h[5..].iter().all(|&b| b == 0));
        let h = hidden_record(gcm, &spec);
        assert_eq!(h.len(), 5 + 8 + 100 + 16);
        assert_eq!(h[5..13], 2u64.to_be_bytes());
        let fin = |len| Record {
            direction: webproof_tls::record::Direction::Received,
            content_type: content_type::HANDSHAKE,
            version: 0x0303,
            payload: vec![0; len],
        };
        check_server_finished(chacha, &fin(32)).unwrap();
        assert!(check_server_finished(chacha, &fin(40)).is_err());
        check_server_finished(gcm, &fin(40)).unwrap();
        assert!(check_server_finished(gcm, &fin(32)).is_err());
    }

    #[test]
    fn a_shape_planned_once_is_shared() {
        // A shape no other test of this crate plans.
        let spec = RecSpec { id: 3, len: 47 };
        let a = spec.plan(32).unwrap();
        let b = RecSpec { id: 9, len: 47 }.plan(32).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        // Another key length is another circuit.
        let c = spec.plan(16).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(c.and_count() < a.and_count());
        // So is the client Finished's, which computes H, beside a request
        // record of its length.
        let fin = RecSpec { id: 0, len: 47 }.plan(16).unwrap();
        assert!(!Arc::ptr_eq(&fin, &c));
        assert!(fin.and_count() > c.and_count());
    }

    #[test]
    fn the_least_recently_used_shape_goes_first() {
        // Three copies of one schedule under three shapes: the same size.
        let p1 = plan_of(16);
        let (p2, p3) = (Arc::new((*p1).clone()), Arc::new((*p1).clone()));
        let size = p1.state_bytes();
        let mut cache = PlanCache::new(2 * size + size / 2);
        cache.insert((16, 16, false), p1.clone());
        cache.insert((16, 17, false), p2);
        // Used: 16 is now the most recent, 17 the one to evict.
        assert!(Arc::ptr_eq(&cache.get((16, 16, false)).unwrap(), &p1));
        cache.insert((16, 18, false), p3.clone());
        assert!(cache.get((16, 17, false)).is_none());
        assert!(Arc::ptr_eq(&cache.get((16, 18, false)).unwrap(), &p3));
        assert!(Arc::ptr_eq(&cache.get((16, 16, false)).unwrap(), &p1));
        assert_eq!(cache.bytes, 2 * size);
        // A second insert of a shape keeps the first copy.
        cache.insert((16, 16, false), Arc::new((*p1).clone()));
        assert!(Arc::ptr_eq(&cache.get((16, 16, false)).unwrap(), &p1));
        assert_eq!(cache.bytes, 2 * size);
    }

    #[test]
    fn a_schedule_over_the_budget_is_not_kept() {
        let small = plan_of(16);
        let big = plan_of(160);
        let mut cache = PlanCache::new(big.state_bytes() - 1);
        cache.insert((16, 16, false), small.clone());
        cache.insert((16, 160, false), big);
        assert!(cache.get((16, 160, false)).is_none());
        // Nothing was evicted for it.
        assert!(Arc::ptr_eq(&cache.get((16, 16, false)).unwrap(), &small));
    }
}

//! Oblivious linear evaluation (OLE) from random correlated OT: Gilboa's
//! multiplication, one COT per bit of the receiver's input.
//!
//! This module owns the OLE messages and the hash from COT blocks to field
//! elements. It does no I/O: the caller moves the two messages and supplies
//! fresh COTs (sender keys, receiver MACs, [`webproof_core::cot`]
//! conventions) for each batch.
//!
//! # Protocol
//! The **sender** (the verifier, COT sender with global `Δ`) holds `a_j`,
//! the **receiver** (the prover, COT receiver) holds `b_j`; afterwards they
//! hold `u_j`, `v_j` with `u_j + v_j = a_j·b_j`. Write
//! `b = Σ_i b_i·e_i` over a fixed basis (`e_i = 2^i` in a prime field, bit
//! `i` of the block in GF(2^128)), one COT per bit:
//! 1. receiver → sender: flips `d_i = lsb(M_i) ⊕ b_i` (one bit each); the
//!    sender shifts its keys to `K_i ⊕ d_i·Δ` so that `M_i = K_i ⊕ b_i·Δ`
//!    (see [`crate::transfer`]);
//! 2. sender → receiver: `c_i = H(K_i) + a·e_i − H(K_i ⊕ Δ)` (one element
//!    each); the sender's share is `u = −Σ H(K_i)`;
//! 3. the receiver's share is `v = Σ (H(M_i) + b_i·c_i)`: each term is
//!    `H(K_i) + b_i·a·e_i`, so `u + v = a·b`.
//!
//! One round trip for a whole batch; per OLE the receiver sends `BITS`
//! bits and the sender `BITS` elements (P-256: 32 B + 8 KiB; GF(2^128):
//! 16 B + 2 KiB; Poly1305's `2^130 - 5`: 17 B + 2,210 B). The bulk goes
//! verifier → prover.
//!
//! Bitwise OLEs ([`OleSender::respond_bits_ahead`]) stop before step 3's
//! sum: one element per COT, the receiver's input its choice bit, answered
//! ahead; the caller combines the per-bit shares (a product with an
//! input that is XOR-masked in public, `webproof_mpc_tls::rec::chacha`).
//!
//! `H` is the TCCR hash of [`crate::hash`] over fixed-key AES under its own
//! key (so its tweaks never meet the garbling's), with tweak `(stream,
//! COT index, j)`; a 256-bit prime-field element takes four hash blocks
//! (512 bits, reduced: within `2^-256` of uniform), a Poly1305 element
//! three (within `2^-254`), a GF(2^128) element one. Both
//! parties count COTs in the same order, so tweaks agree without being
//! sent; each `(Δ, stream)` pair must be used by one sender/receiver pair
//! only.
//!
//! # Security (semi-honest layer)
//! - The sender learns nothing about `b`: the flips are one-time padded by
//!   the random COT bits.
//! - The receiver learns nothing about `a`: for each `i` it can compute
//!   only one of `H(K_i)`, `H(K_i ⊕ Δ)` (it does not know `Δ`), and the
//!   other one pads `c_i` (correlation robustness of `H` with a global
//!   `Δ`).
//! - Not caught here: a malicious sender may use different `a`'s across
//!   bits (the receiver gets `Σ b_i·a_i·e_i`, and whether the result is
//!   later "right" depends on `b_i`: a selective failure that can leak
//!   bits of `b` through an abort), or simply inputs the wrong `a`; a
//!   malicious receiver may input any `b`. Those are input-consistency
//!   faults the later consistency check must catch (see `webproof_mpc_tls::keyx::ectf`):
//!   [`crate::consistency::audit_ole`] recomputes every answer once `Δ`
//!   is revealed ([`crate::consistency::OleReplay`] for streams with
//!   bitwise batches), and [`crate::consistency::import_ole_inputs`] makes the
//!   receiver's inputs authenticated bits the proof can tie to their
//!   sources.
//!   Each COT must serve one OLE bit once.

use crate::error::{Error, Result};
use crate::field::{Fp, Gf128, Poly1305Field};
use crate::hash::sigma;
use core::fmt::Debug;
use core::ops::{Add, Mul, Neg, Sub};
use crypto_bigint::modular::constant_mod::ResidueParams;
use crypto_bigint::U256;
use rand_core::RngCore;
use webproof_core::prg::AesBatch;
use webproof_core::Block;

/// A field the OLE works in.
pub trait OleField:
    Copy
    + Eq
    + Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Neg<Output = Self>
    + Mul<Output = Self>
    + Send
    + Sync
    + 'static
{
    /// Bits of a receiver input, so COTs per OLE.
    const BITS: usize;
    /// Bytes of an element on the wire.
    const BYTES: usize;
    /// Hash blocks per element.
    const HASH_BLOCKS: usize;
    /// Zero.
    fn zero() -> Self;
    /// One.
    fn one() -> Self;
    /// The coefficients `b_i` of `self = Σ b_i·e_i`, `BITS` of them.
    fn decompose(&self) -> Vec<bool>;
    /// `self·e_i` for `i < BITS`.
    fn basis_multiples(&self) -> Vec<Self>;
    /// An element from `HASH_BLOCKS` hash blocks.
    fn from_hash(blocks: &[Block]) -> Self;
    /// Append the canonical encoding (`BYTES` bytes).
    fn encode(&self, out: &mut Vec<u8>);
    /// Parse `BYTES` bytes; `None` if not canonical.
    fn decode(bytes: &[u8]) -> Option<Self>;
    /// Uniform element.
    fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self;
    /// Inverse; `None` for zero.
    fn inverse(&self) -> Option<Self>;
}

impl<M: ResidueParams<{ U256::LIMBS }>> OleField for Fp<M>
where
    Fp<M>: Send + Sync + 'static,
{
    // Every modulus here is below 2^256. Curve25519's canonical values have
    // 255 bits: the top COT of each OLE then carries a 0 (one COT in 256
    // spent for one code path).
    const BITS: usize = 256;
    const BYTES: usize = 32;
    const HASH_BLOCKS: usize = 4;

    fn zero() -> Self {
        Fp::ZERO
    }
    fn one() -> Self {
        Fp::ONE
    }
    fn decompose(&self) -> Vec<bool> {
        let b = self.to_be_bytes();
        (0..Self::BITS)
            .map(|i| (b[31 - i / 8] >> (i % 8)) & 1 == 1)
            .collect()
    }
    fn basis_multiples(&self) -> Vec<Self> {
        let mut out = Vec::with_capacity(Self::BITS);
        let mut x = *self;
        for _ in 0..Self::BITS {
            out.push(x);
            x = x + x;
        }
        out
    }
    fn from_hash(blocks: &[Block]) -> Self {
        let mut lo = [0u8; 32];
        let mut hi = [0u8; 32];
        lo[..16].copy_from_slice(&blocks[0].to_bytes());
        lo[16..].copy_from_slice(&blocks[1].to_bytes());
        hi[..16].copy_from_slice(&blocks[2].to_bytes());
        hi[16..].copy_from_slice(&blocks[3].to_bytes());
        Fp::from_wide(&U256::from_le_slice(&lo), &U256::from_le_slice(&hi))
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn decode(bytes: &[u8]) -> Option<Self> {
        Fp::from_be_bytes(bytes.try_into().ok()?)
    }
    fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        Fp::random(rng)
    }
    fn inverse(&self) -> Option<Self> {
        self.invert()
    }
}

impl OleField for Gf128 {
    const BITS: usize = 128;
    const BYTES: usize = 16;
    const HASH_BLOCKS: usize = 1;

    fn zero() -> Self {
        Gf128::ZERO
    }
    fn one() -> Self {
        Gf128::ONE
    }
    fn decompose(&self) -> Vec<bool> {
        (0..128).map(|i| (self.0 .0 >> i) & 1 == 1).collect()
    }
    fn basis_multiples(&self) -> Vec<Self> {
        (0..128)
            .map(|i| Gf128(self.0.gf_mul(Block(1u128 << i))))
            .collect()
    }
    fn from_hash(blocks: &[Block]) -> Self {
        Gf128(blocks[0])
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_bytes());
    }
    fn decode(bytes: &[u8]) -> Option<Self> {
        Some(Gf128(Block::from_bytes(bytes.try_into().ok()?)))
    }
    fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        Gf128::random(rng)
    }
    fn inverse(&self) -> Option<Self> {
        self.invert()
    }
}

impl OleField for Poly1305Field {
    // 130 bits: one COT per bit of a canonical value, none spent on bits
    // that are always zero.
    const BITS: usize = 130;
    const BYTES: usize = Poly1305Field::BYTES;
    // 384 hash bits reduced: within 2^-254 of uniform.
    const HASH_BLOCKS: usize = 3;

    fn zero() -> Self {
        Poly1305Field::ZERO
    }
    fn one() -> Self {
        Poly1305Field::ONE
    }
    fn decompose(&self) -> Vec<bool> {
        (0..Self::BITS).map(|i| self.bit(i)).collect()
    }
    fn basis_multiples(&self) -> Vec<Self> {
        let mut out = Vec::with_capacity(Self::BITS);
        let mut x = *self;
        for _ in 0..Self::BITS {
            out.push(x);
            x = x + x;
        }
        out
    }
    fn from_hash(blocks: &[Block]) -> Self {
        let mut b = [0u8; 48];
        for (o, h) in b.chunks_mut(16).zip(blocks) {
            o.copy_from_slice(&h.to_bytes());
        }
        Poly1305Field::from_hash_bytes(&b)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le17());
    }
    fn decode(bytes: &[u8]) -> Option<Self> {
        Poly1305Field::from_le17(bytes)
    }
    fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        Poly1305Field::random(rng)
    }
    fn inverse(&self) -> Option<Self> {
        self.invert()
    }
}

/// The public key of the OLE hash's permutation (not the garbling's).
const OLE_KEY: [u8; 16] = *b"webproof-mpc-ole";

/// Most COTs one stream may consume (the index takes 56 bits of the tweak).
const MAX_INDEX: u64 = 1 << 56;

#[derive(Clone)]
struct OleHash {
    aes: AesBatch,
    stream: u64,
}

impl OleHash {
    fn new(stream: u64) -> Self {
        OleHash {
            aes: AesBatch::new(Block::from_bytes(OLE_KEY)),
            stream,
        }
    }

    /// `H(x_i, (stream, first + i, j))` for `j < k`, into elements.
    fn elements<F: OleField>(&self, xs: &[Block], first: u64) -> Vec<F> {
        let k = F::HASH_BLOCKS;
        let mut ys = Vec::with_capacity(xs.len() * k);
        let mut ts = Vec::with_capacity(xs.len() * k);
        for (i, &x) in xs.iter().enumerate() {
            let s = sigma(x);
            for j in 0..k {
                let t = Block(
                    ((self.stream as u128) << 64) | (((first + i as u64) as u128) << 8) | j as u128,
                );
                ys.push(s ^ t);
                ts.push(t);
            }
        }
        self.aes.hash_in_place(&mut ys);
        for (y, t) in ys.iter_mut().zip(&ts) {
            *y ^= *t;
        }
        ys.chunks(k).map(F::from_hash).collect()
    }
}

fn take_range(next: &mut u64, n: usize) -> Result<u64> {
    let first = *next;
    match first.checked_add(n as u64) {
        Some(end) if end <= MAX_INDEX => {
            *next = end;
            Ok(first)
        }
        _ => Err(Error::Malformed("OLE stream exhausted (2^56 COTs)")),
    }
}

/// Bytes of the sender's message for `n` OLEs in `F`.
pub fn response_len<F: OleField>(n: usize) -> usize {
    n * F::BITS * F::BYTES
}

/// Bytes of the receiver's flips for `n` OLEs in `F`.
pub fn flips_len<F: OleField>(n: usize) -> usize {
    (n * F::BITS).div_ceil(8)
}

/// COTs consumed by `n` OLEs in `F`.
pub fn cots_needed<F: OleField>(n: usize) -> usize {
    n * F::BITS
}

/// The OLE sender (holder of the COT `Δ`; the verifier).
#[derive(Clone)]
pub struct OleSender {
    delta: Block,
    hash: OleHash,
    next: u64,
    /// The inputs of every batch answered, encoded: revealed after the
    /// session for the receiver's audit ([`crate::consistency::audit_ole`]).
    inputs: Vec<Vec<u8>>,
}

impl OleSender {
    /// A sender with the COT sender's `Δ`, on tweak stream `stream`.
    pub fn new(delta: Block, stream: u64) -> Self {
        OleSender {
            delta,
            hash: OleHash::new(stream),
            next: 0,
            inputs: Vec::new(),
        }
    }

    /// The inputs of every batch answered so far, in order, each the
    /// concatenation of its elements' encodings.
    pub fn inputs(&self) -> &[Vec<u8>] {
        &self.inputs
    }

    /// Answer the receiver's flips for one batch: `keys` are
    /// [`cots_needed`]`(inputs.len())` fresh random-COT keys. Returns the
    /// sender's shares and the message for the receiver.
    pub fn respond<F: OleField>(
        &mut self,
        keys: &[Block],
        inputs: &[F],
        flips: &[u8],
    ) -> Result<(Vec<F>, Vec<u8>)> {
        let n = inputs.len();
        if keys.len() != cots_needed::<F>(n) {
            return Err(Error::Length {
                group: 0,
                expected: cots_needed::<F>(n),
                got: keys.len(),
            });
        }
        if flips.len() != flips_len::<F>(n) {
            return Err(Error::Malformed("OLE flips of the wrong length"));
        }
        let shifted = crate::transfer::zero_labels_from_cot(keys, self.delta, flips)
            .map_err(|_| Error::Malformed("OLE flips with padding bits set"))?;
        let first = take_range(&mut self.next, keys.len())?;
        let ones: Vec<Block> = shifted.iter().map(|&k| k ^ self.delta).collect();
        let h0 = self.hash.elements::<F>(&shifted, first);
        let h1 = self.hash.elements::<F>(&ones, first);
        let mut msg = Vec::with_capacity(response_len::<F>(n));
        let mut shares = Vec::with_capacity(n);
        for (j, a) in inputs.iter().enumerate() {
            let mut u = F::zero();
            for (i, ae) in a.basis_multiples().into_iter().enumerate() {
                let t = j * F::BITS + i;
                u = u - h0[t];
                (h0[t] + ae - h1[t]).encode(&mut msg);
            }
            shares.push(u);
        }
        let mut enc = Vec::with_capacity(n * F::BYTES);
        inputs.iter().for_each(|a| a.encode(&mut enc));
        self.inputs.push(enc);
        Ok((shares, msg))
    }
}

impl OleSender {
    /// Answer a batch of random OLEs ahead of time (see
    /// [`OleReceiver::choose_random`]): the receiver's inputs are its COT
    /// choice bits, so its flips are all zero and need not be sent; the
    /// answer is [`Self::respond`]'s for those flips.
    pub fn respond_ahead<F: OleField>(
        &mut self,
        keys: &[Block],
        inputs: &[F],
    ) -> Result<(Vec<F>, Vec<u8>)> {
        self.respond(keys, inputs, &vec![0u8; flips_len::<F>(inputs.len())])
    }
}

impl OleSender {
    /// One random OLE *per COT*, answered ahead: for COT `t` (key
    /// `keys[t]`) the element `multiples[t]`; the receiver's input is the
    /// COT's choice bit `χ_t`, and the shares `u_t + v_t = χ_t·multiples[t]`
    /// are kept apart instead of summed over an element's bits
    /// ([`OleReceiver::choose_bits_ahead`]). A caller that makes
    /// `multiples` the `a·2^k` of one element has Gilboa's OLE bit by bit:
    /// with public bits `D_k` later, `Σ_k (1 − 2D_k)·share_k` is a share
    /// of `a·Σ_k 2^k·(χ_k ⊕ D_k)`, a product with an XOR-masked input.
    /// Returns the sender's shares and the message (one element a COT).
    pub fn respond_bits_ahead<F: OleField>(
        &mut self,
        keys: &[Block],
        multiples: &[F],
    ) -> Result<(Vec<F>, Vec<u8>)> {
        if keys.len() != multiples.len() {
            return Err(Error::Malformed("one COT per bitwise OLE"));
        }
        let first = take_range(&mut self.next, keys.len())?;
        let ones: Vec<Block> = keys.iter().map(|&k| k ^ self.delta).collect();
        let h0 = self.hash.elements::<F>(keys, first);
        let h1 = self.hash.elements::<F>(&ones, first);
        let mut msg = Vec::with_capacity(keys.len() * F::BYTES);
        let mut shares = Vec::with_capacity(keys.len());
        let mut enc = Vec::with_capacity(keys.len() * F::BYTES);
        for ((&m, h0), h1) in multiples.iter().zip(h0).zip(h1) {
            (h0 + m - h1).encode(&mut msg);
            shares.push(-h0);
            m.encode(&mut enc);
        }
        self.inputs.push(enc);
        Ok((shares, msg))
    }
}

/// A receiver's batch of bitwise random OLEs
/// ([`OleReceiver::choose_bits_ahead`]) waiting for the sender's message.
#[derive(Debug)]
pub struct PendingBits<F: OleField> {
    bits: Vec<bool>,
    pads: Vec<F>,
}

impl<F: OleField> PendingBits<F> {
    /// The receiver's inputs: its COT choice bits.
    pub fn choices(&self) -> &[bool] {
        &self.bits
    }

    /// The receiver's shares `v_t`, one a COT, from the sender's message
    /// ([`OleSender::respond_bits_ahead`]); any other length or a
    /// non-canonical element is refused.
    pub fn finish(self, msg: &[u8]) -> Result<Vec<F>> {
        if msg.len() != self.bits.len() * F::BYTES {
            return Err(Error::Malformed("bitwise OLE response of the wrong length"));
        }
        msg.chunks(F::BYTES)
            .zip(self.bits.iter().zip(self.pads))
            .map(|(c, (&b, pad))| {
                let c =
                    F::decode(c).ok_or(Error::Malformed("OLE response element not canonical"))?;
                let b = if b { F::one() } else { F::zero() };
                Ok(pad + b * c)
            })
            .collect()
    }
}

impl OleReceiver {
    /// Start a batch of bitwise random OLEs on `macs` (one a COT, the
    /// receiver's inputs its choice bits, so nothing is sent;
    /// [`OleSender::respond_bits_ahead`]).
    pub fn choose_bits_ahead<F: OleField>(&mut self, macs: &[Block]) -> Result<PendingBits<F>> {
        let first = take_range(&mut self.next, macs.len())?;
        Ok(PendingBits {
            bits: macs.iter().map(|m| m.lsb()).collect(),
            pads: self.hash.elements::<F>(macs, first),
        })
    }
}

/// The OLE receiver (the COT receiver; the prover).
#[derive(Clone)]
pub struct OleReceiver {
    hash: OleHash,
    next: u64,
}

/// A receiver's batch waiting for the sender's message.
#[derive(Debug)]
pub struct PendingOle<F: OleField> {
    bits: Vec<bool>,
    pads: Vec<F>,
}

impl OleReceiver {
    /// A receiver on tweak stream `stream` (the sender's).
    pub fn new(stream: u64) -> Self {
        OleReceiver {
            hash: OleHash::new(stream),
            next: 0,
        }
    }

    /// Start one batch: `macs` are [`cots_needed`]`(inputs.len())` fresh
    /// random-COT MACs. Returns the pending batch and the flips to send.
    pub fn choose<F: OleField>(
        &mut self,
        macs: &[Block],
        inputs: &[F],
    ) -> Result<(PendingOle<F>, Vec<u8>)> {
        let n = inputs.len();
        if macs.len() != cots_needed::<F>(n) {
            return Err(Error::Length {
                group: 0,
                expected: cots_needed::<F>(n),
                got: macs.len(),
            });
        }
        let bits: Vec<bool> = inputs.iter().flat_map(|b| b.decompose()).collect();
        let flips = crate::transfer::flips(macs, &bits)?;
        let first = take_range(&mut self.next, macs.len())?;
        let pads = self.hash.elements::<F>(macs, first);
        Ok((PendingOle { bits, pads }, flips))
    }
}

impl OleReceiver {
    /// Start a batch of `macs.len() / 128` random OLEs in GF(2^128) whose
    /// inputs `ρ_j` are the COT choice bits (bit `i` of `ρ_j` is the
    /// choice bit of COT `128·j + i`): the flips are all zero, so the
    /// sender answers without them ([`OleSender::respond_ahead`]), before
    /// either party knows what the batch will multiply. A receiver that
    /// later needs `b_j·a_j` sends `d_j = b_j + ρ_j` (one-time padded by
    /// `ρ_j`), and the sender adds `d_j·a_j` to its share. Returns the
    /// pending batch, the flips it stands for (all zero, for the log the
    /// audit replays) and the `ρ_j`.
    pub fn choose_random(
        &mut self,
        macs: &[Block],
    ) -> Result<(PendingOle<Gf128>, Vec<u8>, Vec<Gf128>)> {
        if !macs.len().is_multiple_of(Gf128::BITS) {
            return Err(Error::Malformed("random OLEs need whole elements of COTs"));
        }
        let rho: Vec<Gf128> = macs
            .chunks(Gf128::BITS)
            .map(|c| {
                let bits = c
                    .iter()
                    .enumerate()
                    .fold(0u128, |acc, (i, m)| acc | (u128::from(m.lsb()) << i));
                Gf128(Block(bits))
            })
            .collect();
        let (pending, flips) = self.choose(macs, &rho)?;
        debug_assert!(flips.iter().all(|&b| b == 0), "choice bits as inputs");
        Ok((pending, flips, rho))
    }
}

impl<F: OleField> PendingOle<F> {
    /// OLEs in this batch.
    pub fn len(&self) -> usize {
        self.bits.len() / F::BITS
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// Bytes the sender's message must have.
    pub fn expected_len(&self) -> usize {
        response_len::<F>(self.len())
    }

    /// The receiver's shares from the sender's message; any length but
    /// [`PendingOle::expected_len`] or a non-canonical element is refused.
    pub fn finish(self, msg: &[u8]) -> Result<Vec<F>> {
        if msg.len() != self.expected_len() {
            return Err(Error::Malformed("OLE response of the wrong length"));
        }
        let mut out = Vec::with_capacity(self.len());
        let mut acc = F::zero();
        for (t, c) in msg.chunks(F::BYTES).enumerate() {
            let c = F::decode(c).ok_or(Error::Malformed("OLE response element not canonical"))?;
            // Both terms are computed and one is kept by an arithmetic
            // select, so the time does not depend on the bit.
            let b = if self.bits[t] { F::one() } else { F::zero() };
            acc = acc + self.pads[t] + b * c;
            if (t + 1) % F::BITS == 0 {
                out.push(acc);
                acc = F::zero();
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{Curve25519Base, P256Base};
    use rand::SeedableRng;
    use webproof_core::cot::ideal::cots;

    fn roundtrip<F: OleField>(seed: u64, a: &[F], b: &[F]) -> (Vec<F>, Vec<F>) {
        let (delta, keys, macs) = cots(seed, cots_needed::<F>(a.len()));
        let mut s = OleSender::new(delta, 7);
        let mut r = OleReceiver::new(7);
        let (pending, flips) = r.choose(&macs, b).unwrap();
        assert_eq!(flips.len(), flips_len::<F>(a.len()));
        let (u, msg) = s.respond(&keys, a, &flips).unwrap();
        assert_eq!(msg.len(), response_len::<F>(a.len()));
        let v = pending.finish(&msg).unwrap();
        (u, v)
    }

    #[test]
    fn gf128_products() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let a: Vec<Gf128> = (0..9).map(|_| Gf128::random(&mut rng)).collect();
        let mut b: Vec<Gf128> = (0..9).map(|_| Gf128::random(&mut rng)).collect();
        b[0] = Gf128::ZERO;
        b[1] = Gf128::ONE;
        b[2] = Gf128(Block(u128::MAX));
        let (u, v) = roundtrip(4, &a, &b);
        for i in 0..9 {
            assert_eq!(u[i] + v[i], a[i] * b[i]);
        }
    }

    /// Random OLEs answered ahead: the receiver's inputs are its choice
    /// bits (no flips), the products come out right, and an offset
    /// `d = b + ρ` sent afterwards turns them into products with `b`.
    #[test]
    fn gf128_random_oles_answered_ahead() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(12);
        let a: Vec<Gf128> = (0..5).map(|_| Gf128::random(&mut rng)).collect();
        let (delta, keys, macs) = cots(13, cots_needed::<Gf128>(a.len()));
        let mut s = OleSender::new(delta, 3);
        let mut r = OleReceiver::new(3);
        let (pending, flips, rho) = r.choose_random(&macs).unwrap();
        assert!(flips.iter().all(|&f| f == 0));
        assert_eq!(flips.len(), flips_len::<Gf128>(a.len()));
        let (w, msg) = s.respond_ahead(&keys, &a).unwrap();
        let u = pending.finish(&msg).unwrap();
        for i in 0..a.len() {
            assert_eq!(u[i] + w[i], a[i] * rho[i]);
            let b = Gf128::random(&mut rng);
            let d = b + rho[i];
            assert_eq!(u[i] + (w[i] + d * a[i]), a[i] * b);
        }
        assert!(r.choose_random(&macs[1..]).is_err());
    }

    #[test]
    fn curve25519_field_products() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        let pm1 = -Curve25519Base::ONE;
        let mut a: Vec<Curve25519Base> = (0..6).map(|_| Curve25519Base::random(&mut rng)).collect();
        let mut b: Vec<Curve25519Base> = (0..6).map(|_| Curve25519Base::random(&mut rng)).collect();
        a[0] = pm1;
        b[0] = pm1;
        b[1] = Curve25519Base::ZERO;
        a[2] = Curve25519Base::ZERO;
        b[3] = Curve25519Base::ONE;
        let (u, v) = roundtrip(6, &a, &b);
        for i in 0..6 {
            assert_eq!(u[i] + v[i], a[i] * b[i]);
        }
    }

    /// Poly1305's field: products with the edge values, 130 COTs an OLE
    /// and 17 bytes an element.
    #[test]
    fn poly1305_field_products() {
        type F = Poly1305Field;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(6);
        let mut a: Vec<F> = (0..5).map(|_| F::random(&mut rng)).collect();
        let mut b: Vec<F> = (0..5).map(|_| F::random(&mut rng)).collect();
        a[0] = -F::ONE;
        b[0] = -F::ONE;
        b[1] = F::ZERO;
        a[2] = F::ZERO;
        assert_eq!(cots_needed::<F>(5), 650);
        assert_eq!(response_len::<F>(1), 130 * 17);
        let (u, v) = roundtrip(7, &a, &b);
        for i in 0..5 {
            assert_eq!(u[i] + v[i], a[i] * b[i]);
        }
    }

    /// Bitwise random OLEs: each COT's shares add up to its choice bit
    /// times its element; a response of another length or with a
    /// non-canonical element is refused; the batch advances the tweaks.
    #[test]
    fn bitwise_products() {
        type F = Poly1305Field;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let (delta, keys, macs) = cots(11, 300);
        let mut s = OleSender::new(delta, 3);
        let mut r = OleReceiver::new(3);
        let m: Vec<F> = (0..200).map(|_| F::random(&mut rng)).collect();
        let pending = r.choose_bits_ahead::<F>(&macs[..200]).unwrap();
        let chi = pending.choices().to_vec();
        assert!(chi.iter().any(|&b| b) && chi.iter().any(|&b| !b));
        let (u, msg) = s.respond_bits_ahead(&keys[..200], &m).unwrap();
        assert_eq!(msg.len(), 200 * 17);
        let v = pending.finish(&msg).unwrap();
        for t in 0..200 {
            let want = if chi[t] { m[t] } else { F::ZERO };
            assert_eq!(u[t] + v[t], want, "{t}");
        }
        // Refusals.
        let p = r.choose_bits_ahead::<F>(&macs[200..250]).unwrap();
        let (_, mut msg) = s.respond_bits_ahead(&keys[200..250], &m[..50]).unwrap();
        msg[16] = 0xff;
        assert!(p.finish(&msg).is_err());
        let p = r.choose_bits_ahead::<F>(&macs[250..300]).unwrap();
        let (_, msg) = s.respond_bits_ahead(&keys[250..300], &m[..50]).unwrap();
        assert!(p.finish(&msg[1..]).is_err());
        assert!(s.respond_bits_ahead(&keys[..3], &m[..2]).is_err());
    }

    #[test]
    fn p256_field_products_and_tweaks_advance() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
        let (delta, keys, macs) = cots(9, 3 * 256);
        let mut s = OleSender::new(delta, 1);
        let mut r = OleReceiver::new(1);
        // Two batches from one pair of objects: the second uses new tweaks.
        for (lo, hi) in [(0usize, 256usize), (256, 768)] {
            let n = (hi - lo) / 256;
            let a: Vec<P256Base> = (0..n).map(|_| P256Base::random(&mut rng)).collect();
            let mut b: Vec<P256Base> = (0..n).map(|_| P256Base::random(&mut rng)).collect();
            b[0] = -P256Base::ONE;
            let (p, f) = r.choose(&macs[lo..hi], &b).unwrap();
            let (u, m) = s.respond(&keys[lo..hi], &a, &f).unwrap();
            let v = p.finish(&m).unwrap();
            for i in 0..n {
                assert_eq!(u[i] + v[i], a[i] * b[i]);
            }
        }
        assert_eq!(s.next, 768);
        assert_eq!(r.next, 768);
    }
}

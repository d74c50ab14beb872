//! The garbling hash: a tweakable circular correlation-robust function from
//! fixed-key AES.
//!
//! `H(x, t) = π(σ(x) ⊕ t) ⊕ σ(x)`, where `π` is AES-128 under a fixed public
//! key and `σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi` is a linear orthomorphism
//! (both `σ` and `x ↦ σ(x) ⊕ x` are bijections). This is the `MMO^σ`
//! construction of Guo, Katz, Wang and Yu, "Efficient and Secure Multiparty
//! Computation from Fixed-Key Block Ciphers" (IEEE S&P 2020, §7), proven
//! tweakable circular correlation robust (TCCR) when `π` is an ideal
//! permutation: for a secret `Δ`, the values `H(x ⊕ Δ, t) ⊕ b·Δ` for distinct
//! tweaks `t` look random. Free-XOR garbling needs that property (the
//! three-halves scheme a variant of it, see `docs/protocol/garbling.md`), and
//! only as long as no tweak is used twice under one `Δ`: callers number their
//! garbled circuits (`instance`) so that tweaks never repeat.
//!
//! One AES call per hash. [`AesBatch::hash_in_place`] computes `π(y) ⊕ y`, so
//! with `y = σ(x) ⊕ t` the hash is that value `⊕ t`: callers mask, hash a
//! whole batch in one call (the AES-NI/VAES kernels pipeline 8-16 blocks) and
//! unmask.

use webproof_core::prg::AesBatch;
use webproof_core::Block;

/// The public key of `π` (ASCII "webproof-mpc-gc!").
const FIXED_KEY: [u8; 16] = *b"webproof-mpc-gc!";

/// `σ`: linear, so `σ(x ⊕ Δ) = σ(x) ⊕ σ(Δ)`.
#[inline(always)]
pub(crate) fn sigma(x: Block) -> Block {
    let hi = x.0 >> 64;
    let lo = x.0 & (u64::MAX as u128);
    Block(((hi ^ lo) << 64) | hi)
}

/// Tweak of hash `k` (0: the `a` label, 1: the `b` label, 2: their XOR) of
/// AND gate `index` in circuit `instance` (three-halves garbling; the low
/// two bits hold `k`, so indices stay below 2^60).
#[inline(always)]
pub(crate) fn gate_tweak(instance: u64, index: u64, k: u64) -> Block {
    Block(((instance as u128) << 64) | ((index << 2) | k) as u128)
}

/// Tweak of the block of garbler randomness for AND gates
/// `64·block .. 64·block + 63` of circuit `instance`: bit 62 of the low half
/// set, disjoint from gate tweaks (below 2^62).
#[inline(always)]
pub(crate) fn random_tweak(instance: u64, block: u64) -> Block {
    Block(((instance as u128) << 64) | (1u128 << 62) | block as u128)
}

/// `H` over fixed-key AES.
#[derive(Clone)]
pub struct Tccr {
    aes: AesBatch,
}

impl Default for Tccr {
    fn default() -> Self {
        Self::new()
    }
}

impl Tccr {
    /// The hash (expands the fixed key once).
    pub fn new() -> Self {
        Tccr {
            aes: AesBatch::new(Block::from_bytes(FIXED_KEY)),
        }
    }

    /// `y ← π(y) ⊕ y` for a batch of masked inputs `y = σ(x) ⊕ t`; the
    /// caller XORs `t` back to obtain `H(x, t)`.
    #[inline]
    pub(crate) fn permute_masked(&self, y: &mut [Block]) {
        self.aes.hash_in_place(y)
    }

    /// `H(x, t)` for one value (slow path, for tests and digests).
    pub fn hash(&self, x: Block, tweak: Block) -> Block {
        let mut y = [sigma(x) ^ tweak];
        self.aes.hash_in_place(&mut y);
        y[0] ^ tweak
    }

    /// `xs[i] ← H(xs[i], tweaks[i])`, one batched AES call.
    pub fn hash_many(&self, xs: &mut [Block], tweaks: &[Block]) {
        assert_eq!(xs.len(), tweaks.len(), "one tweak per value");
        for (x, t) in xs.iter_mut().zip(tweaks) {
            *x = sigma(*x) ^ *t;
        }
        self.aes.hash_in_place(xs);
        for (x, t) in xs.iter_mut().zip(tweaks) {
            *x ^= *t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::{BlockEncrypt, KeyInit};

    /// `H` is the stated formula, checked with the `aes` crate.
    #[test]
    fn hash_is_mmo_sigma() {
        let aes = aes::Aes128::new(&FIXED_KEY.into());
        let h = Tccr::new();
        let mut xs = Vec::new();
        let mut ts = Vec::new();
        for i in 0..37u128 {
            xs.push(Block(
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835),
            ));
            ts.push(Block(i * 3 + 1));
        }
        let mut batch = xs.clone();
        h.hash_many(&mut batch, &ts);
        for i in 0..xs.len() {
            let s = sigma(xs[i]);
            let mut b: aes::Block = (s ^ ts[i]).to_bytes().into();
            aes.encrypt_block(&mut b);
            let want = Block::from_bytes(b.into()) ^ s;
            assert_eq!(h.hash(xs[i], ts[i]), want);
            assert_eq!(batch[i], want);
        }
    }

    #[test]
    fn sigma_is_linear_orthomorphism_on_samples() {
        let a = Block(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
        let b = Block(0x1111_2222_3333_4444_5555_6666_7777_8888);
        assert_eq!(sigma(a ^ b), sigma(a) ^ sigma(b));
        // σ(x) ⊕ x = (lo ‖ hi ⊕ lo)... nonzero for nonzero x.
        assert_ne!(sigma(a) ^ a, Block::ZERO);
        assert_ne!(sigma(a), Block::ZERO);
    }

    #[test]
    fn tweak_domains_are_disjoint() {
        assert_ne!(gate_tweak(3, 0, 0), gate_tweak(3, 0, 1));
        assert_ne!(gate_tweak(3, 0, 2), gate_tweak(3, 1, 0));
        assert_ne!(gate_tweak(3, 5, 1), gate_tweak(4, 5, 1));
        let last_gate = gate_tweak(0, (1 << 60) - 1, 3).0 as u64;
        assert!(last_gate < random_tweak(0, 0).0 as u64);
        assert_eq!(random_tweak(0, u32::MAX as u64).0 as u64 >> 62, 1);
    }
}

//! Every implementation of the hot kernels that this build can run, by
//! name, and a self-test that checks them against the portable reference.
//!
//! This module owns the cross-target check: the unit tests call
//! [`self_test`] natively, and the WebAssembly test crate
//! (`crates/wasm-kernels-bench`) calls it in Node and in headless chromium,
//! where the SIMD128 kernels actually run. It also feeds the benchmarks the
//! same list. It never changes which kernel the library uses.

use crate::block::clmul;
use crate::chacha::{ChaCha8Stream, ChaChaStream};
use crate::prg::AesBatch;
use crate::Block;

/// A 128x128 carry-less multiply returning the unreduced `(low, high)`.
pub type ClmulFn = fn(u128, u128) -> (u128, u128);

/// The carry-less multiplies this build has: the reference bit loop, the
/// integer-multiply one, the SIMD128 one (wasm32 with `simd128`) and
/// `library`, whatever [`Block::clmul`] dispatches to here.
pub fn clmul_variants() -> Vec<(&'static str, ClmulFn)> {
    let mut v: Vec<(&'static str, ClmulFn)> = vec![
        ("reference", clmul::clmul_soft),
        ("imul", clmul::clmul_imul),
    ];
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    v.push(("simd128", crate::simd128::clmul));
    v.push(("library", |a, b| Block(a).clmul(Block(b))));
    v
}

/// The AES-128 batch implementations this build has, keyed by `key`: the
/// `aes` crate (`aes-crate`: its own CPU detection, fixsliced software on wasm), the SIMD128 one (wasm32 with `simd128`) and
/// [`AesBatch::new`]'s choice (`library`).
pub fn aes_variants(key: Block) -> Vec<(&'static str, AesBatch)> {
    let mut v = vec![("aes-crate", AesBatch::new_soft(key))];
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    v.push(("simd128", AesBatch::new_simd128(key)));
    v.push(("library", AesBatch::new(key)));
    v
}

/// SplitMix64: the self-test's input generator (no dependency on the PRG
/// under test).
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn block(&mut self) -> u128 {
        (self.next() as u128) << 64 | self.next() as u128
    }
}

/// Bit-by-bit GF(2^128) product with reduction (the textbook definition).
fn mul_textbook(a: u128, b: u128) -> u128 {
    let (mut r, mut a) = (0u128, a);
    for i in 0..128 {
        r ^= a & ((b >> i) & 1).wrapping_neg();
        a = (a << 1) ^ (0x87 & (a >> 127).wrapping_neg());
    }
    r
}

/// Check every kernel against the references on known answers, edge values
/// and `trials` random inputs drawn from `seed`. Returns a description of
/// the first mismatch.
pub fn self_test(seed: u64, trials: usize) -> Result<(), String> {
    // Known answers: x^127 * x = x^7 + x^2 + x + 1; a fixed product
    // (computed with the textbook definition and PCLMULQDQ, which agree).
    let known = [
        (1u128 << 127, 2u128, 0x87u128),
        ((1 << 64) | 1, (1 << 64) | 1, 0x86),
        (
            0x0123_4567_89ab_cdef_fedc_ba98_7654_3210,
            0x0f1e_2d3c_4b5a_6978_8796_a5b4_c3d2_e1f0,
            KNOWN_PRODUCT,
        ),
    ];
    for (a, b, want) in known {
        let got = mul_textbook(a, b);
        if got != want {
            return Err(format!(
                "textbook {a:032x}*{b:032x} = {got:032x}, want {want:032x}"
            ));
        }
        for (name, f) in clmul_variants() {
            let (lo, hi) = f(a, b);
            let got = Block::reduce(lo, hi).0;
            if got != want {
                return Err(format!(
                    "{name} {a:032x}*{b:032x} = {got:032x}, want {want:032x}"
                ));
            }
        }
    }
    let mut rng = Mix(seed);
    let edges = [
        0u128,
        1,
        u64::MAX as u128,
        u128::MAX,
        1 << 127,
        1 << 64,
        0xffff_ffff,
    ];
    let mut pairs: Vec<(u128, u128)> = edges
        .iter()
        .flat_map(|&a| edges.iter().map(move |&b| (a, b)))
        .collect();
    pairs.extend((0..trials).map(|_| (rng.block(), rng.block())));
    for (a, b) in pairs {
        let want = clmul::clmul_soft(a, b);
        for (name, f) in clmul_variants() {
            if f(a, b) != want {
                return Err(format!("clmul {name} differs on {a:032x} * {b:032x}"));
            }
        }
        let want = Block::reduce(want.0, want.1);
        if Block(a).gf_mul(Block(b)) != want {
            return Err(format!("gf_mul differs on {a:032x} * {b:032x}"));
        }
    }
    // Inner products (the SIMD128 one sums partial products before
    // combining them) against the sum of single products, at lengths
    // around its four-term steps.
    for len in [0usize, 1, 3, 4, 5, 8, 63, 64, 129] {
        let a: Vec<Block> = (0..len).map(|_| Block(rng.block())).collect();
        let b: Vec<Block> = (0..len).map(|_| Block(rng.block())).collect();
        let want = a.iter().zip(&b).fold(Block::ZERO, |s, (x, y)| {
            let (lo, hi) = clmul::clmul_soft(x.0, y.0);
            s ^ Block::reduce(lo, hi)
        });
        if crate::block::inner_product(&a, &b) != want {
            return Err(format!("inner_product differs at length {len}"));
        }
    }
    // Lanes against the scalar product.
    for _ in 0..trials.div_ceil(4) {
        let x: [crate::lanes::X4; 4] =
            core::array::from_fn(|_| core::array::from_fn(|_| Block(rng.block())));
        let want: crate::lanes::X4 =
            core::array::from_fn(|l| x[0][l].gf_mul(x[1][l]) ^ x[2][l].gf_mul(x[3][l]));
        if crate::lanes::mul_add(&x[0], &x[1], &x[2], &x[3]) != want {
            return Err("lanes::mul_add differs".into());
        }
        let want: crate::lanes::X4 = core::array::from_fn(|l| x[0][l].gf_mul(x[1][l]));
        if crate::lanes::mul(&x[0], &x[1]) != want {
            return Err("lanes::mul differs".into());
        }
        let c: [Block; 8] = core::array::from_fn(|_| Block(rng.block()));
        let d: [Block; 8] = core::array::from_fn(|_| Block(rng.block()));
        let rows: [crate::lanes::X4; 8] =
            core::array::from_fn(|_| core::array::from_fn(|_| Block(rng.block())));
        let lincomb = |k: &[Block; 8]| -> crate::lanes::X4 {
            core::array::from_fn(|l| (0..8).fold(Block::ZERO, |s, j| s ^ k[j].gf_mul(rows[j][l])))
        };
        if crate::lanes::lincomb8_pair(&c, &d, &rows) != (lincomb(&c), lincomb(&d)) {
            return Err("lanes::lincomb8_pair differs".into());
        }
        // Embedded-byte constants (coordinates in SIMD128), including the
        // byte inversions' own (x^j and x^2j).
        let s = crate::subfield::subfield();
        let cb: [u8; 8] = core::array::from_fn(|j| rng.block() as u8 | (j == 0) as u8);
        let db: [u8; 8] = core::array::from_fn(|j| crate::subfield::gf256_mul(1 << j, 1 << j));
        let (ce, de) = (cb.map(|b| s.embed(b)), db.map(|b| s.embed(b)));
        if crate::lanes::embed_lincomb8_pair(&cb, &db, &rows) != (lincomb(&ce), lincomb(&de)) {
            return Err("lanes::embed_lincomb8_pair differs".into());
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            let n: [crate::lanes::X4; 8] =
                core::array::from_fn(|_| core::array::from_fn(|_| Block(rng.block())));
            let (y, t): ([u8; 4], [u8; 4]) = (
                core::array::from_fn(|_| rng.block() as u8),
                core::array::from_fn(|_| rng.block() as u8),
            );
            let words = |r: &[crate::lanes::X4; 8]| r.map(|x| x.map(|b| b.0));
            let got = crate::simd128::byteinv_prover_x4(&cb, &db, &words(&rows), &words(&n), y, t);
            let (my, my2) = (lincomb(&ce), lincomb(&de));
            let lincomb_n = |k: &[Block; 8]| -> crate::lanes::X4 {
                core::array::from_fn(|l| (0..8).fold(Block::ZERO, |a, j| a ^ k[j].gf_mul(n[j][l])))
            };
            let (mt, mt2) = (lincomb_n(&ce), lincomb_n(&de));
            let e = |b: u8| s.embed(b);
            let sq = |b: u8| crate::subfield::gf256_mul(b, b);
            let want: [crate::lanes::X4; 6] = [
                my,
                my2,
                mt,
                mt2,
                core::array::from_fn(|l| {
                    e(sq(y[l])).gf_mul(mt[l]) ^ e(t[l]).gf_mul(my2[l]) ^ my[l]
                }),
                core::array::from_fn(|l| {
                    e(y[l]).gf_mul(mt2[l]) ^ e(sq(t[l])).gf_mul(my[l]) ^ mt[l]
                }),
            ];
            if got != want.map(|x| x.map(|b| b.0)) {
                return Err("simd128::byteinv_prover_x4 differs".into());
            }
        }
    }
    // Polynomial evaluation (Horner with a table-driven constant product in
    // SIMD128) against the inner product with the powers.
    for len in [64, 68, 256, 1024] {
        let beta = Block(rng.block());
        let ps = crate::powers::PowerSum::new(beta, len);
        let x: Vec<Block> = (0..len).map(|_| Block(rng.block())).collect();
        let mut p = Block::ONE;
        let want = x.iter().fold(Block::ZERO, |s, v| {
            let term = v.gf_mul(p);
            p = p.gf_mul(beta);
            s ^ term
        });
        if ps.eval(&x) != want {
            return Err(format!("powers::PowerSum::eval differs at length {len}"));
        }
    }
    aes_self_test(&mut rng, trials)?;
    chacha_self_test(&mut rng, trials)
}

/// The ChaCha stream implementations this build has (ChaCha8 for
/// `DOUBLE_ROUNDS = 4`, ChaCha12 for 6): the `chacha20` crate
/// (`chacha20-crate`, the reference) and the SIMD128 one (wasm32 with
/// `simd128`). `out` ← bytes `offset ..` of the stream of `key`.
pub fn chacha_variants<const DOUBLE_ROUNDS: usize>(
) -> Vec<(&'static str, ChaChaFill<DOUBLE_ROUNDS>)> {
    let mut v: Vec<(&'static str, ChaChaFill<DOUBLE_ROUNDS>)> =
        vec![("chacha20-crate", |s, o, out| s.fill_crate(o, out))];
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    v.push(("simd128", |s, o, out| s.fill_simd128(o, out)));
    v.push(("library", |s, o, out| s.fill(o, out)));
    v
}

/// One way to read a [`ChaChaStream`]: `(stream, offset, out)`.
pub type ChaChaFill<const DOUBLE_ROUNDS: usize> = fn(&ChaChaStream<DOUBLE_ROUNDS>, u64, &mut [u8]);

fn chacha_self_test(rng: &mut Mix, trials: usize) -> Result<(), String> {
    // RFC 8439's ChaCha20 layout with 8 rounds: the first block under the
    // all-zero key (the widely published ChaCha8 test vector's first bytes).
    let zero = ChaCha8Stream::new([0; 32]);
    let head = [0x3e, 0x00, 0xef, 0x2f, 0x89, 0x5f, 0x40, 0xd6];
    for (name, fill) in chacha_variants::<4>() {
        let mut b = [0u8; 8];
        fill(&zero, 0, &mut b);
        if b != head {
            return Err(format!("chacha8 {name} fails the zero-key vector"));
        }
    }
    chacha_matches_crate::<4>(rng, trials)?;
    chacha_matches_crate::<6>(rng, trials)
}

/// Every implementation of the `2 * DOUBLE_ROUNDS`-round stream against the
/// crate, at random keys, offsets and lengths around the four-block steps.
fn chacha_matches_crate<const DOUBLE_ROUNDS: usize>(
    rng: &mut Mix,
    trials: usize,
) -> Result<(), String> {
    let rounds = 2 * DOUBLE_ROUNDS;
    for round in 0..trials.div_ceil(64).max(8) {
        let key: [u8; 32] = core::array::from_fn(|_| rng.next() as u8);
        let stream = ChaChaStream::<DOUBLE_ROUNDS>::new(key);
        let len = [0usize, 1, 20, 63, 64, 65, 255, 256, 257, 600][round % 10];
        let offset = match round % 4 {
            0 => 0,
            1 => 64 * (rng.next() % 1000),
            2 => rng.next() % 100_000,
            // The last blocks before the 32-bit counter runs out.
            _ => (64u64 << 32) - 700,
        };
        let variants = chacha_variants::<DOUBLE_ROUNDS>();
        let mut want = vec![0u8; len];
        (variants[0].1)(&stream, offset, &mut want);
        for (name, fill) in &variants[1..] {
            let mut got = vec![0xa5u8; len];
            fill(&stream, offset, &mut got);
            if got != want {
                return Err(format!(
                    "chacha{rounds} {name} differs from the crate (offset {offset}, len {len})"
                ));
            }
        }
    }
    Ok(())
}

/// `KNOWN_PRODUCT` = 0x0123..3210 * 0x0f1e..e1f0 in GF(2^128).
const KNOWN_PRODUCT: u128 = 0x7f29_84f7_8496_7f5a_7b88_1bf2_b700_d768;

fn aes_self_test(rng: &mut Mix, trials: usize) -> Result<(), String> {
    // FIPS-197 appendix C.1.
    let key = Block::from_bytes(core::array::from_fn(|i| i as u8));
    let pt = Block::from_bytes(core::array::from_fn(|i| (i as u8) * 0x11));
    let ct = Block::from_bytes([
        0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5,
        0x5a,
    ]);
    for (name, aes) in aes_variants(key) {
        let mut b = [pt; 19];
        aes.encrypt(&mut b);
        if b.iter().any(|x| *x != ct) {
            return Err(format!("aes {name} fails FIPS-197 C.1"));
        }
    }
    for round in 0..trials.div_ceil(64).max(4) {
        let key = Block(rng.block());
        let len = [1usize, 7, 8, 15, 16, 17, 33, 100][round % 8];
        let input: Vec<Block> = (0..len).map(|_| Block(rng.block())).collect();
        let counter = match round % 3 {
            0 => u128::MAX - 5,
            1 => u64::MAX as u128 - 5 + ((rng.next() as u128) << 64),
            _ => rng.block(),
        };
        let variants = aes_variants(key);
        let reference = &variants[0].1;
        let (mut e0, mut h0, mut c0) = (input.clone(), input.clone(), vec![Block::ZERO; len]);
        reference.encrypt(&mut e0);
        reference.hash_in_place(&mut h0);
        reference.encrypt_counter(counter, &mut c0);
        for (name, aes) in &variants[1..] {
            let (mut e, mut h, mut c) = (input.clone(), input.clone(), vec![Block::ZERO; len]);
            aes.encrypt(&mut e);
            aes.hash_in_place(&mut h);
            aes.encrypt_counter(counter, &mut c);
            if e != e0 || h != h0 || c != c0 {
                return Err(format!("aes {name} differs from the aes crate (len {len})"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn self_test_passes() {
        super::self_test(1, 20_000).unwrap();
    }
}

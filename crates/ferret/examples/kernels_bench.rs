//! Speed of the building blocks under the silent COT and the proof engine,
//! one thread: batch AES ([`AesBatch`] against the `aes` crate's generic
//! interface), GF(2^128) products in the pattern of the proof engine's
//! AND-gate loop, and the batch inner product. (The LPN encoder and the
//! trees are measured as a whole by the `ferret_bench` example.)
//!
//! ```text
//! cargo run --release -p webproof-ferret --example kernels_bench
//! ```
//!
//! Figures are per block / per gate / per term, best of five rounds.

use aes::cipher::{BlockEncrypt, KeyInit};
use std::hint::black_box;
use std::time::Instant;
use webproof_core::block::inner_product;
use webproof_core::prg::AesBatch;
use webproof_core::{Block, Prg};

/// Best of five rounds of `f`, in ns per unit (`units` per round).
fn best_ns(units: usize, mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64 / units as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let n = 1 << 22;
    let aes = AesBatch::new(Block(0x1234));
    let mut buf = vec![Block(7); 64];
    let hash = best_ns(n, || {
        for _ in 0..n / 64 {
            aes.hash_in_place(black_box(&mut buf));
        }
    });
    let ctr = best_ns(n, || {
        for i in 0..n / 64 {
            aes.encrypt_counter(i as u128 * 64, black_box(&mut buf));
        }
    });
    let generic = aes::Aes128::new(&[7u8; 16].into());
    let mut gbuf = [aes::Block::default(); 64];
    let crate_ns = best_ns(n, || {
        for _ in 0..n / 64 {
            generic.encrypt_blocks(black_box(&mut gbuf));
        }
    });
    println!("AES-128, 64-block batches (ns/block):");
    println!("  AesBatch E(x)^x      {hash:6.2}");
    println!("  AesBatch counter     {ctr:6.2}");
    println!("  aes crate in place   {crate_ns:6.2}");

    // The engine's AND gate: one reduced product, then an unreduced one
    // accumulated with a challenge.
    let w: Vec<Block> = Prg::new(Block(3)).blocks(4096);
    let gate = best_ns(n, || {
        let (mut lo, mut hi) = (0u128, 0u128);
        for r in 0..n / 4096 {
            for i in 0..4095 {
                let z = w[i].gf_mul(w[(i + r) & 4095]);
                let (l, h) = z.clmul(w[i + 1]);
                lo ^= l;
                hi ^= h;
            }
        }
        black_box((lo, hi));
    });
    let ip = best_ns(n, || {
        for _ in 0..n / 4096 {
            black_box(inner_product(&w, &w));
        }
    });
    println!("GF(2^128):");
    println!("  gf_mul + clmul (gate) {gate:6.2} ns");
    println!("  inner product         {ip:6.2} ns/term");
    #[cfg(target_arch = "x86_64")]
    println!(
        "  (pclmulqdq {}, aes {}, vaes+avx512f {})",
        std::is_x86_feature_detected!("pclmulqdq"),
        std::is_x86_feature_detected!("aes"),
        std::is_x86_feature_detected!("vaes") && std::is_x86_feature_detected!("avx512f"),
    );
}

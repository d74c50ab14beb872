//! Self-tests and benchmarks of the hot kernels (GF(2^128) products, AES
//! batches) and of the QuickSilver engine, one suite for every target.
//!
//! This crate owns no protocol code. Built for `wasm32-unknown-unknown` it
//! exports `run_tests` and `run_bench` through wasm-bindgen for
//! `web/kernels` (Node and headless chromium); natively `src/main.rs` runs
//! the same suite. Results are JSON strings so that drivers only parse.

use std::fmt::Write;
use webproof_circuits::aes::{aes_blocks_circuit_with, SboxKind};
use webproof_circuits::{bytes_to_bits, Circuit};
use webproof_core::cot::ideal;
use webproof_core::lanes::X4;
use webproof_core::{kernels, memory_duplex, Block, Channel, Prg};
use webproof_zk::{Config, Prover, Verifier};

#[cfg(target_arch = "wasm32")]
mod web {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        // Node and browsers both have a global `performance`.
        #[wasm_bindgen(js_namespace = performance)]
        fn now() -> f64;
    }

    /// Kernel self-test and a small proof: `{"ok":true,...}` or the failure.
    #[wasm_bindgen]
    pub fn run_tests() -> String {
        super::tests_json()
    }

    /// Benchmarks, `reps` timed runs each: JSON with the median figures.
    #[wasm_bindgen]
    pub fn run_bench(reps: u32, zk_blocks: u32) -> String {
        super::bench_json(&now, reps as usize, zk_blocks as usize)
    }

    /// One proof of `blocks` AES blocks (S-boxes as byte inversions, as
    /// proxy mode proves them, or Boolean): milliseconds, for profilers.
    #[wasm_bindgen]
    pub fn zk_aes_ms(blocks: u32, inversion: bool) -> f64 {
        use webproof_circuits::aes::{aes_blocks_circuit_with, SboxKind};
        let kind = if inversion {
            SboxKind::Inversion
        } else {
            SboxKind::Boolean
        };
        let circuit = aes_blocks_circuit_with(16, blocks as usize, kind);
        let t = now();
        super::prove_aes(&circuit, blocks as usize, false).unwrap();
        now() - t
    }

    /// Whether this module was built with SIMD128.
    #[wasm_bindgen]
    pub fn simd128() -> bool {
        cfg!(target_feature = "simd128")
    }
}

fn target_name() -> &'static str {
    if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
        "wasm-simd128"
    } else if cfg!(target_arch = "wasm32") {
        "wasm-portable"
    } else {
        "native"
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Run the kernel self-test and a proof that must pass and one that must fail.
pub fn tests_json() -> String {
    let mut checks = Vec::new();
    checks.push((
        "kernels::self_test",
        kernels::self_test(0x5eed, 20_000).err(),
    ));
    let circuit = aes_blocks_circuit_with(16, 2, SboxKind::Inversion);
    let honest = prove_aes(&circuit, 2, false);
    checks.push(("zk honest AES proof verifies", honest.err()));
    let forged = prove_aes(&circuit, 2, true);
    checks.push((
        "zk proof of a wrong ciphertext is rejected",
        forged.is_ok().then(|| "verifier accepted".to_string()),
    ));
    let ok = checks.iter().all(|(_, e)| e.is_none());
    let mut s = format!(
        "{{\"target\":\"{}\",\"ok\":{ok},\"checks\":[",
        target_name()
    );
    for (i, (name, err)) in checks.iter().enumerate() {
        let sep = if i > 0 { "," } else { "" };
        let err = match err {
            Some(e) => format!("\"{}\"", escape(e)),
            None => "null".into(),
        };
        let _ = write!(s, "{sep}{{\"name\":\"{name}\",\"error\":{err}}}");
    }
    s.push_str("]}");
    s
}

/// Prove in zero knowledge, with the ideal COT dealer in memory, "I know a
/// key under which these `blocks` public plaintexts encrypt to these public
/// ciphertexts" (`forge`: claim a wrong ciphertext). `Ok` iff the verifier
/// accepted.
pub fn prove_aes(circuit: &Circuit, blocks: usize, forge: bool) -> Result<(), String> {
    let key = [0x2bu8; 16];
    let pt: Vec<u8> = (0..16 * blocks).map(|i| i as u8).collect();
    let mut ct = circuit.eval_bytes(&[&key, &pt]).remove(0);
    if forge {
        ct[0] ^= 1;
    }
    let ct_bits = bytes_to_bits(&ct);
    let pt_bits = bytes_to_bits(&pt);
    let (a, b) = memory_duplex();
    let (cot_s, cot_r) = ideal::pair(7);
    let cfg = Config::default();
    let prover = async {
        let mut p = Prover::new(cot_r, Channel::new(a), cfg).await?;
        let k = p.commit_bytes(&key).await?;
        let m: Vec<_> = pt_bits.iter().map(|&x| p.constant(x)).collect();
        let out = p.eval(circuit, &[&k, &m]).await?;
        p.assert_public(&out[0], &ct_bits).await?;
        p.finish().await
    };
    let verifier = async {
        let mut rng = Prg::new(Block(42));
        let mut v = Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
        let k = v.commit_bytes(16).await?;
        let m: Vec<_> = pt_bits.iter().map(|&x| v.constant(x)).collect();
        let out = v.eval(circuit, &[&k, &m]).await?;
        v.assert_public(&out[0], &ct_bits).await?;
        v.finish().await
    };
    let (_, v) = futures::executor::block_on(async { futures::join!(prover, verifier) });
    v.map(|_| ()).map_err(|e| e.to_string())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median seconds of `reps` runs of `f` (after one warm-up run).
fn time(now: &dyn Fn() -> f64, reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let runs = (0..reps)
        .map(|_| {
            let t = now();
            f();
            (now() - t) / 1e3
        })
        .collect();
    median(runs)
}

/// Seconds for 256 reads of 5 KiB of a keystream.
fn time_chacha(
    now: &dyn Fn() -> f64,
    reps: usize,
    sink: &mut u128,
    fill: impl Fn(u64, &mut [u8]),
) -> f64 {
    let mut buf = vec![0u8; 5120];
    time(now, reps, || {
        for r in 0..256u64 {
            fill(r * 5120, &mut buf);
        }
        *sink ^= buf[0] as u128;
    })
}

/// Benchmarks: GF(2^128) products per second per carry-less multiply,
/// AES blocks per second per implementation, and the proof engine on
/// `zk_blocks` AES blocks. `now` is a millisecond clock.
pub fn bench_json(now: &dyn Fn() -> f64, reps: usize, zk_blocks: usize) -> String {
    let mut s = format!("{{\"target\":\"{}\",\"results\":[", target_name());
    let mut first = true;
    let mut push = |s: &mut String, name: String, value: f64, unit: &str| {
        let sep = if first { "" } else { "," };
        first = false;
        let _ = write!(
            s,
            "{sep}{{\"name\":\"{name}\",\"value\":{value:.4e},\"unit\":\"{unit}\"}}"
        );
    };
    let mut rng = Prg::new(Block(3));
    let a = rng.blocks(256);
    let b = rng.blocks(256);
    let mut sink = 0u128;
    for (name, f) in kernels::clmul_variants() {
        // The bit loop is ~50x slower: fewer products keep the run short.
        let n = if name == "reference" {
            50_000
        } else {
            1_000_000
        };
        let secs = time(now, reps, || {
            let mut acc = 0u128;
            for i in 0..n {
                let (lo, hi) = f(a[i & 255].0, b[i & 255].0 ^ i as u128);
                acc ^= Block::reduce(lo, hi).0;
            }
            sink ^= acc;
        });
        push(&mut s, format!("gf_mul {name}"), n as f64 / secs, "mul/s");
    }
    let x4: Vec<_> = a.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let n = 250_000;
    let secs = time(now, reps, || {
        // Independent products (throughput, as in the engine's batches).
        let mut acc = Block::ZERO;
        for i in 0..n {
            let x = |k: usize| &x4[(i + k) & 63];
            let r = webproof_core::lanes::mul_add(x(0), x(1), x(2), x(3));
            acc ^= r[0] ^ r[1] ^ r[2] ^ r[3];
        }
        sink ^= acc.0;
    });
    push(
        &mut s,
        "lanes mul_add x4".into(),
        8.0 * n as f64 / secs,
        "mul/s",
    );
    // The same with one scalar product at a time (what lanes computes
    // without its SIMD128 path).
    let secs = time(now, reps, || {
        let mut acc = Block::ZERO;
        for i in 0..n {
            let x = |k: usize| &x4[(i + k) & 63];
            for l in 0..4 {
                acc ^= x(0)[l].gf_mul(x(1)[l]) ^ x(2)[l].gf_mul(x(3)[l]);
            }
        }
        sink ^= acc.0;
    });
    push(
        &mut s,
        "scalar mul_add x4".into(),
        8.0 * n as f64 / secs,
        "mul/s",
    );
    // The byte inversions' linear combinations: 64 products per call.
    let consts: Vec<Block> = rng.blocks(16);
    let (c8, d8): ([Block; 8], [Block; 8]) = (
        core::array::from_fn(|j| consts[j]),
        core::array::from_fn(|j| consts[8 + j]),
    );
    // The same with the byte inversions' constants, embedded bytes.
    let (cb, db): ([u8; 8], [u8; 8]) = (
        core::array::from_fn(|j| 1 << j),
        core::array::from_fn(|j| webproof_core::subfield::gf256_mul(1 << j, 1 << j)),
    );
    type Lincomb<'a> = Box<dyn Fn(&[X4; 8]) -> (X4, X4) + 'a>;
    let kernels: [(&str, Lincomb); 2] = [
        (
            "lanes lincomb8_pair",
            Box::new(|rows| webproof_core::lanes::lincomb8_pair(&c8, &d8, rows)),
        ),
        (
            "lanes embed_lincomb8_pair",
            Box::new(|rows| webproof_core::lanes::embed_lincomb8_pair(&cb, &db, rows)),
        ),
    ];
    let n = 40_000;
    for (name, lincomb) in kernels {
        let secs = time(now, reps, || {
            let mut acc = Block::ZERO;
            for i in 0..n {
                let rows: [X4; 8] = core::array::from_fn(|j| x4[(i + j) & 63]);
                let (p, q) = lincomb(&rows);
                acc ^= p[0] ^ q[3];
            }
            sink ^= acc.0;
        });
        push(&mut s, name.into(), 64.0 * n as f64 / secs, "mul/s");
    }
    // Ferret's check fold: a polynomial at a fixed point, 8192 terms.
    let terms: Vec<Block> = rng.blocks(8192);
    let ps = webproof_core::powers::PowerSum::new(Block(0x1234_5678_9abc_def1), 8192);
    let rounds = 16;
    let secs = time(now, reps, || {
        for _ in 0..rounds {
            sink ^= ps.eval(&terms).0;
        }
    });
    push(
        &mut s,
        "powers eval".into(),
        (rounds * 8192) as f64 / secs,
        "terms/s",
    );
    let secs = time(now, reps, || {
        for _ in 0..rounds {
            sink ^= webproof_core::block::inner_product(ps.powers(), &terms).0;
        }
    });
    push(
        &mut s,
        "inner_product".into(),
        (rounds * 8192) as f64 / secs,
        "terms/s",
    );
    for (name, aes) in kernels::aes_variants(Block(5)) {
        let mut buf = vec![Block::ZERO; 1024];
        let rounds = 64;
        let secs = time(now, reps, || {
            for r in 0..rounds {
                aes.encrypt_counter(r << 10, &mut buf);
            }
            sink ^= buf[0].0;
        });
        push(
            &mut s,
            format!("aes ctr {name}"),
            (rounds * 1024) as f64 / secs,
            "blocks/s",
        );
        let secs = time(now, reps, || {
            for _ in 0..rounds {
                aes.hash_in_place(&mut buf);
            }
            sink ^= buf[1].0;
        });
        push(
            &mut s,
            format!("aes hash {name}"),
            (rounds * 1024) as f64 / secs,
            "blocks/s",
        );
    }
    // Keystream bytes per second, as the LPN code reads it (5 KiB per
    // batch of 128 columns): comparable with 16 x the AES counter rate.
    // ChaCha12 is the keyed generator (`Prg`, the OT extension's streams).
    let chacha8 = webproof_core::chacha::ChaCha8Stream::new([7; 32]);
    for (name, fill) in kernels::chacha_variants::<4>() {
        let secs = time_chacha(now, reps, &mut sink, |o, b| fill(&chacha8, o, b));
        push(
            &mut s,
            format!("chacha8 {name}"),
            (256 * 5120) as f64 / secs,
            "bytes/s",
        );
    }
    let chacha12 = webproof_core::chacha::ChaCha12Stream::new([7; 32]);
    for (name, fill) in kernels::chacha_variants::<6>() {
        let secs = time_chacha(now, reps, &mut sink, |o, b| fill(&chacha12, o, b));
        push(
            &mut s,
            format!("chacha12 {name}"),
            (256 * 5120) as f64 / secs,
            "bytes/s",
        );
    }
    for (kind, label) in [
        (SboxKind::Inversion, "inversion"),
        (SboxKind::Boolean, "boolean"),
    ] {
        let circuit = aes_blocks_circuit_with(16, zk_blocks, kind);
        let secs = time(now, reps, || prove_aes(&circuit, zk_blocks, false).unwrap());
        push(
            &mut s,
            format!("zk prove+verify aes128 x{zk_blocks} sbox={label}"),
            secs,
            "s",
        );
    }
    let _ = write!(s, "],\"sink\":{}}}", sink as u8);
    s
}

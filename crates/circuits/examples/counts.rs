//! Prints, for every circuit of the crate: AND gates, other (free) gates,
//! the fastest of three builds, and one bit-sliced evaluation of 64
//! instances. Run with `cargo run --release -p webproof-circuits --example counts`.
use std::time::Instant;
use webproof_circuits::tls::*;
use webproof_circuits::{aes, chacha, sha2, Circuit};

/// Build `f` three times (the fastest build is printed: the machine is
/// shared), then time bit-sliced evaluation of 64 instances.
fn report(name: &str, f: impl Fn() -> Circuit) {
    let mut best = f64::MAX;
    let mut c = None;
    for _ in 0..3 {
        let t = Instant::now();
        let built = f();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        c = Some(built);
    }
    let c = c.unwrap();
    let inputs: Vec<Vec<u64>> = c
        .inputs
        .iter()
        .map(|g| vec![0x5555_aaaa_5555_aaaa; g.len()])
        .collect();
    let t = Instant::now();
    std::hint::black_box(c.eval_packed(&inputs));
    let eval_ms = t.elapsed().as_secs_f64() * 1e3;
    let other = c.gates.len() - c.and_count();
    println!(
        "{name:<34} AND {:>9}  other {:>9}  build {best:>8.2} ms  eval x64 {eval_ms:>7.2} ms",
        c.and_count(),
        other
    );
}

fn main() {
    report("aes128 (with schedule)", aes::aes128_circuit);
    report("aes128 x2 blocks", || aes::aes128_blocks_circuit(2));
    report("aes256 (with schedule)", aes::aes256_circuit);
    report("sha256 compress", sha2::sha256_compress_circuit);
    report("sha512 compress", sha2::sha512_compress_circuit);
    report("chacha20 block", chacha::chacha20_block_circuit);
    let (h32, h48) = ([7u8; 32], [9u8; 48]);
    report("tls13 AES_128_GCM_SHA256", || {
        tls13_key_schedule_circuit(Tls13Suite::AES_128_GCM_SHA256, &h32, &h32)
    });
    report("tls13 CHACHA20_POLY1305_SHA256", || {
        tls13_key_schedule_circuit(Tls13Suite::CHACHA20_POLY1305_SHA256, &h32, &h32)
    });
    report("tls13 AES_256_GCM_SHA384", || {
        tls13_key_schedule_circuit(Tls13Suite::AES_256_GCM_SHA384, &h48, &h48)
    });
    let r = [1u8; 32];
    let p32 = Tls12Public {
        client_random: &r,
        server_random: &r,
        client_finished_hash: &h32,
        server_finished_hash: &h32,
    };
    let p48 = Tls12Public {
        client_random: &r,
        server_random: &r,
        client_finished_hash: &h48,
        server_finished_hash: &h48,
    };
    report("tls12 AES_128_GCM_SHA256", || {
        tls12_key_schedule_circuit(Tls12Suite::AES_128_GCM_SHA256, &p32)
    });
    report("tls12 AES_256_GCM_SHA384", || {
        tls12_key_schedule_circuit(Tls12Suite::AES_256_GCM_SHA384, &p48)
    });
    for suite in [
        Tls13Suite::AES_128_GCM_SHA256,
        Tls13Suite::AES_256_GCM_SHA384,
    ] {
        report(
            &format!("tls13 {:?}/{} public inputs", suite.hash, suite.key_len),
            || tls13_key_schedule_circuit_public_inputs(suite),
        );
    }
    for suite in [
        Tls12Suite::AES_128_GCM_SHA256,
        Tls12Suite::AES_256_GCM_SHA384,
    ] {
        report(
            &format!("tls12 {:?}/{} public inputs", suite.hash, suite.key_len),
            || tls12_key_schedule_circuit_public_inputs(suite),
        );
    }
}

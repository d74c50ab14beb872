//! Prints the AND/XOR counts and build times of the circuits.
use std::time::Instant;
use webproof_circuits::{aes, chacha, sha2, Circuit};

fn report(name: &str, f: impl Fn() -> Circuit) {
    let t = Instant::now();
    let c = f();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let xor = c.gates.len() - c.and_count();
    println!(
        "{name:<32} AND {:>9}  other {:>9}  wires {:>9}  build {ms:>7.2} ms",
        c.and_count(),
        xor,
        c.num_wires
    );
}

fn main() {
    report("aes128 (with schedule)", aes::aes128_circuit);
    report("aes128 x2 blocks", || aes::aes128_blocks_circuit(2));
    report("aes256 (with schedule)", aes::aes256_circuit);
    report("sha256 compress", sha2::sha256_compress_circuit);
    report("sha512 compress", sha2::sha512_compress_circuit);
    report("chacha20 block", chacha::chacha20_block_circuit);
}

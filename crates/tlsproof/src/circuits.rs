//! The fixed circuits of record decryption, built once per process.
//!
//! AES S-boxes are byte inversions ([`SboxKind::Inversion`]): the proof
//! engine proves each with 8 committed bits instead of 32 AND gates, so an
//! AES-128 block costs 1,280 COTs instead of 5,120.

use std::sync::OnceLock;
use webproof_circuits::aes::{encrypt_block_with, key_schedule_with, SboxKind};
use webproof_circuits::{Builder, Circuit};

/// AES key expansion. Input: `[key]`; output: `[all round keys, concatenated]`.
pub fn aes_key_schedule(key_len: usize) -> &'static Circuit {
    static AES128: OnceLock<Circuit> = OnceLock::new();
    static AES256: OnceLock<Circuit> = OnceLock::new();
    let cell = if key_len == 16 { &AES128 } else { &AES256 };
    cell.get_or_init(|| {
        let mut b = Builder::new();
        let key = b.input_bytes(key_len);
        let rks = key_schedule_with(&mut b, &key, SboxKind::Inversion);
        b.output(&rks.concat());
        b.finish()
    })
}

/// One AES block under expanded round keys. Inputs: `[round keys, block]`;
/// output: `[AES_k(block)]`.
pub fn aes_block(key_len: usize) -> &'static Circuit {
    static AES128: OnceLock<Circuit> = OnceLock::new();
    static AES256: OnceLock<Circuit> = OnceLock::new();
    let (cell, rounds) = if key_len == 16 {
        (&AES128, 10)
    } else {
        (&AES256, 14)
    };
    cell.get_or_init(|| {
        let mut b = Builder::new();
        let rk = b.input(128 * (rounds + 1));
        let block = b.input(128);
        let rks: Vec<Vec<_>> = rk.chunks(128).map(|c| c.to_vec()).collect();
        let out = encrypt_block_with(&mut b, &rks, &block, SboxKind::Inversion);
        b.output(&out);
        b.finish()
    })
}

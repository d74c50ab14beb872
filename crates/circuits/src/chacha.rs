//! The ChaCha20 block function (RFC 8439 §2.3): 32-byte key, 32-bit block
//! counter and 12-byte nonce to 64 bytes of keystream.
//!
//! Words are little-endian, so with the crate bit order (byte `i` bit `j` at
//! `8i + j`) a word is four consecutive bytes as they are. 20 rounds of 4
//! quarter rounds with 4 additions each (320 additions of 31 AND) plus the
//! final addition of the input state (16 more): 10,416 AND naively; 10,400
//! here because additions with the constant words fold their low carries.

use crate::bits::{from_le_words, le_words};
use crate::builder::{const_word, rotl, Bit, Builder};
use crate::Circuit;

const SIGMA: [u64; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

fn quarter_round(b: &mut Builder, x: &mut [Vec<Bit>], i: [usize; 4]) {
    let [a, bb, c, d] = i;
    x[a] = b.add(&x[a], &x[bb]);
    x[d] = rotl(&b.xor_words(&x[d], &x[a]), 16);
    x[c] = b.add(&x[c], &x[d]);
    x[bb] = rotl(&b.xor_words(&x[bb], &x[c]), 12);
    x[a] = b.add(&x[a], &x[bb]);
    x[d] = rotl(&b.xor_words(&x[d], &x[a]), 8);
    x[c] = b.add(&x[c], &x[d]);
    x[bb] = rotl(&b.xor_words(&x[bb], &x[c]), 7);
}

/// The ChaCha20 block function. `key` is 32 bytes, `counter` 4 bytes
/// (little-endian), `nonce` 12 bytes; returns the 64-byte keystream block.
pub fn chacha20_block(b: &mut Builder, key: &[Bit], counter: &[Bit], nonce: &[Bit]) -> Vec<Bit> {
    assert_eq!(key.len(), 256, "ChaCha20 key is 32 bytes");
    assert_eq!(counter.len(), 32, "ChaCha20 counter is 4 bytes");
    assert_eq!(nonce.len(), 96, "ChaCha20 nonce is 12 bytes");
    let mut init: Vec<Vec<Bit>> = SIGMA.iter().map(|&c| const_word(c, 32)).collect();
    init.extend(le_words(key, 32));
    init.push(counter.to_vec());
    init.extend(le_words(nonce, 32));
    let mut x = init.clone();
    for _ in 0..10 {
        quarter_round(b, &mut x, [0, 4, 8, 12]);
        quarter_round(b, &mut x, [1, 5, 9, 13]);
        quarter_round(b, &mut x, [2, 6, 10, 14]);
        quarter_round(b, &mut x, [3, 7, 11, 15]);
        quarter_round(b, &mut x, [0, 5, 10, 15]);
        quarter_round(b, &mut x, [1, 6, 11, 12]);
        quarter_round(b, &mut x, [2, 7, 8, 13]);
        quarter_round(b, &mut x, [3, 4, 9, 14]);
    }
    let out: Vec<Vec<Bit>> = x.iter().zip(&init).map(|(w, i)| b.add(w, i)).collect();
    from_le_words(&out)
}

/// ChaCha20 block circuit. Inputs: `[key (32 B), counter (4 B, LE), nonce (12 B)]`;
/// output: `[keystream (64 B)]`.
pub fn chacha20_block_circuit() -> Circuit {
    let mut b = Builder::new();
    let key = b.input_bytes(32);
    let ctr = b.input_bytes(4);
    let nonce = b.input_bytes(12);
    let out = chacha20_block(&mut b, &key, &ctr, &nonce);
    b.output(&out);
    b.finish()
}

//! The fixed circuits of record decryption, built once per process.
//!
//! AES S-boxes are byte inversions ([`SboxKind::Inversion`]): the proof
//! engine proves each with 8 committed bits instead of 32 AND gates, so an
//! AES-128 block costs 1,280 COTs instead of 5,120.

use std::sync::OnceLock;
use webproof_circuits::aes::{ctr_head, ctr_tail, encrypt_block_with, key_schedule_with, SboxKind};
use webproof_circuits::{Bit, Builder, Circuit};

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

/// Builds a circuit's outputs from the round keys and its other inputs.
type OnRoundKeys = fn(&mut Builder, &[Vec<Bit>], &[Vec<Bit>]) -> Vec<Bit>;

/// A circuit on the round keys of a 16- or 32-byte key and further inputs
/// of `extra` bits each, built once per process and key size in `cells`
/// (AES-128's, AES-256's). Inputs: `[round keys, extra...]`.
fn on_round_keys(
    key_len: usize,
    cells: &'static [OnceLock<Circuit>; 2],
    extra: &[usize],
    build: OnRoundKeys,
) -> &'static Circuit {
    let (cell, rounds) = if key_len == 16 {
        (&cells[0], 10)
    } else {
        (&cells[1], 14)
    };
    cell.get_or_init(|| {
        let mut b = Builder::new();
        let rk = b.input(128 * (rounds + 1));
        let inputs: Vec<Vec<Bit>> = extra.iter().map(|&n| b.input(n)).collect();
        let rks: Vec<Vec<Bit>> = rk.chunks(128).map(<[Bit]>::to_vec).collect();
        let out = build(&mut b, &rks, &inputs);
        b.output(&out);
        b.finish()
    })
}

/// One AES block under expanded round keys. Inputs: `[round keys, block]`;
/// output: `[AES_k(block)]`.
pub fn aes_block(key_len: usize) -> &'static Circuit {
    static CELLS: [OnceLock<Circuit>; 2] = [OnceLock::new(), OnceLock::new()];
    on_round_keys(key_len, &CELLS, &[128], |b, rks, i| {
        encrypt_block_with(b, rks, &i[0], SboxKind::Inversion)
    })
}

/// The rounds' work of counter-mode blocks that their 15-byte prefix
/// fixes ([`webproof_circuits::aes::ctr_head`]). Inputs: `[round keys,
/// prefix (nonce ‖ the counter's high 3 bytes)]`; output: `[head (15
/// bytes)]`. 27 byte inversions.
pub fn aes_ctr_head(key_len: usize) -> &'static Circuit {
    static CELLS: [OnceLock<Circuit>; 2] = [OnceLock::new(), OnceLock::new()];
    on_round_keys(key_len, &CELLS, &[120], |b, rks, i| {
        ctr_head(b, rks, &i[0], SboxKind::Inversion)
    })
}

/// The rest of a counter-mode block ([`webproof_circuits::aes::ctr_tail`]).
/// Inputs: `[round keys, head of its prefix, the counter's low byte]`;
/// output: `[AES_k(prefix ‖ low byte)]`. 133 (AES-128) or 197 (AES-256)
/// byte inversions instead of 160 or 224.
pub fn aes_ctr_tail(key_len: usize) -> &'static Circuit {
    static CELLS: [OnceLock<Circuit>; 2] = [OnceLock::new(), OnceLock::new()];
    on_round_keys(key_len, &CELLS, &[120, 8], |b, rks, i| {
        ctr_tail(b, rks, &i[0], &i[1], SboxKind::Inversion)
    })
}

/// The equality indicators of one byte against a set of values. Input:
/// `[byte]` (8 bits, LSB first); output: `[e_0 .. e_{n-1}]`, `e_i = 1` iff
/// the byte equals `forbidden[i]`. A byte avoids the set iff every output
/// is 0.
///
/// `byte == c` iff every bit equals c's: the AND of the literals `b_j` (if
/// c's bit j is 1) or `!b_j` (if 0). The ANDs are shared across the set:
/// first the literal pairs of bits (1, 0), (3, 2), (5, 4), (7, 6) that some
/// value needs (at most 4 per pair), then each distinct low and high
/// nibble, then one AND per value.
pub fn byte_class(forbidden: &[u8]) -> Circuit {
    use std::collections::HashMap;
    let mut b = Builder::new();
    let byte = b.input(8);
    // Bit `j` of the byte, or its negation, so that it is 1 iff bit `j` is `one`.
    let lit = |j: usize, one: bool| -> Bit {
        if one {
            byte[j]
        } else {
            byte[j].not()
        }
    };
    // Pair `p` (bits 2p+1, 2p) with pattern `v` (2 bits).
    let mut pairs: HashMap<(usize, u8), Bit> = HashMap::new();
    let mut pair = |b: &mut Builder, p: usize, v: u8| -> Bit {
        *pairs
            .entry((p, v))
            .or_insert_with(|| b.and(lit(2 * p + 1, v & 2 != 0), lit(2 * p, v & 1 != 0)))
    };
    let mut nibbles: HashMap<(usize, u8), Bit> = HashMap::new();
    let mut out = Vec::with_capacity(forbidden.len());
    for &c in forbidden {
        let mut halves = [Bit::ZERO; 2];
        for (h, half) in halves.iter_mut().enumerate() {
            let v = (c >> (4 * h)) & 0xF;
            *half = match nibbles.get(&(h, v)) {
                Some(&n) => n,
                None => {
                    let hi = pair(&mut b, 2 * h + 1, v >> 2);
                    let lo = pair(&mut b, 2 * h, v & 3);
                    let n = b.and(hi, lo);
                    nibbles.insert((h, v), n);
                    n
                }
            };
        }
        out.push(b.and(halves[1], halves[0]));
    }
    b.output(&out);
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_circuits::bits::bytes_to_bits;

    /// Every byte value against a few sets: the indicators are exact, and
    /// the AND count stays within the bound the docs give.
    #[test]
    fn byte_class_indicators_are_exact() {
        let sets: [&[u8]; 4] = [b"\"\\", b"\t\n\r \",:[\\]{}", &[0x00], &[0x00, 0xFF]];
        for set in sets {
            let mut sorted = set.to_vec();
            sorted.sort_unstable();
            let c = byte_class(&sorted);
            for v in 0..=255u8 {
                let out = c.eval(&[bytes_to_bits(&[v])]);
                let want: Vec<bool> = sorted.iter().map(|&f| f == v).collect();
                assert_eq!(out[0], want, "{v:#x} against {sorted:?}");
            }
        }
        assert_eq!(byte_class(b"\"\\").and_count(), 14);
        assert!(byte_class(b"\t\n\r \",:[\\]{}").and_count() <= 40);
    }
}

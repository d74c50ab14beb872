//! AES-128 and AES-256 encryption: key schedules, block encryption, and the
//! S-box as the 32-AND circuit of Boyar and Peralta.
//!
//! Bytes follow the crate convention (byte `i`, bit `j` LSB first at
//! `8i + j`); a block is the 16 bytes of FIPS-197 in order (column-major
//! state). Round keys are computed once by the key schedule and can be shared
//! by any number of blocks: 1,280 AND (AES-128) or 1,664 AND (AES-256) for the
//! schedule, then 5,120 or 7,168 AND per block, 864 fewer for blocks that
//! share their first rounds' work with an earlier one (counter mode,
//! [`encrypt_blocks_with`]). Everything but the S-box is linear, hence
//! free.

use crate::builder::{Bit, Builder};
use crate::Circuit;

/// The AES S-box on one byte (8 bits, LSB first): 32 AND gates.
///
/// This is the circuit of Boyar and Peralta ("A new combinational logic
/// minimization technique with applications to cryptology", 2010): a linear
/// layer to 22 signals, a non-linear middle (GF(2^4) inversion in a tower
/// field) and a linear layer back. In their notation `x0` is the most
/// significant input bit and `s0` the most significant output bit.
pub fn sbox(b: &mut Builder, byte: &[Bit]) -> Vec<Bit> {
    assert_eq!(byte.len(), 8, "sbox takes one byte");
    let x = |i: usize| byte[7 - i];
    // `+` is XOR, `*` is AND; the closures keep the equations readable.
    macro_rules! xor {
        ($a:expr, $c:expr) => {{
            let (p, q) = ($a, $c);
            b.xor(p, q)
        }};
    }
    macro_rules! and {
        ($a:expr, $c:expr) => {{
            let (p, q) = ($a, $c);
            b.and(p, q)
        }};
    }
    // Top linear transformation.
    let y14 = xor!(x(3), x(5));
    let y13 = xor!(x(0), x(6));
    let y9 = xor!(x(0), x(3));
    let y8 = xor!(x(0), x(5));
    let t0 = xor!(x(1), x(2));
    let y1 = xor!(t0, x(7));
    let y4 = xor!(y1, x(3));
    let y12 = xor!(y13, y14);
    let y2 = xor!(y1, x(0));
    let y5 = xor!(y1, x(6));
    let y3 = xor!(y5, y8);
    let t1 = xor!(x(4), y12);
    let y15 = xor!(t1, x(5));
    let y20 = xor!(t1, x(1));
    let y6 = xor!(y15, x(7));
    let y10 = xor!(y15, t0);
    let y11 = xor!(y20, y9);
    let y7 = xor!(x(7), y11);
    let y17 = xor!(y10, y11);
    let y19 = xor!(y10, y8);
    let y16 = xor!(t0, y11);
    let y21 = xor!(y13, y16);
    let y18 = xor!(x(0), y16);
    // Middle non-linear part: 9 + 5 + 18 = 32 AND gates.
    let t2 = and!(y12, y15);
    let t3 = and!(y3, y6);
    let t4 = xor!(t3, t2);
    let t5 = and!(y4, x(7));
    let t6 = xor!(t5, t2);
    let t7 = and!(y13, y16);
    let t8 = and!(y5, y1);
    let t9 = xor!(t8, t7);
    let t10 = and!(y2, y7);
    let t11 = xor!(t10, t7);
    let t12 = and!(y9, y11);
    let t13 = and!(y14, y17);
    let t14 = xor!(t13, t12);
    let t15 = and!(y8, y10);
    let t16 = xor!(t15, t12);
    let t17 = xor!(t4, t14);
    let t18 = xor!(t6, t16);
    let t19 = xor!(t9, t14);
    let t20 = xor!(t11, t16);
    let t21 = xor!(t17, y20);
    let t22 = xor!(t18, y19);
    let t23 = xor!(t19, y21);
    let t24 = xor!(t20, y18);
    let t25 = xor!(t21, t22);
    let t26 = and!(t21, t23);
    let t27 = xor!(t24, t26);
    let t28 = and!(t25, t27);
    let t29 = xor!(t28, t22);
    let t30 = xor!(t23, t24);
    let t31 = xor!(t22, t26);
    let t32 = and!(t31, t30);
    let t33 = xor!(t32, t24);
    let t34 = xor!(t23, t33);
    let t35 = xor!(t27, t33);
    let t36 = and!(t24, t35);
    let t37 = xor!(t36, t34);
    let t38 = xor!(t27, t36);
    let t39 = and!(t29, t38);
    let t40 = xor!(t25, t39);
    let t41 = xor!(t40, t37);
    let t42 = xor!(t29, t33);
    let t43 = xor!(t29, t40);
    let t44 = xor!(t33, t37);
    let t45 = xor!(t42, t41);
    let z0 = and!(t44, y15);
    let z1 = and!(t37, y6);
    let z2 = and!(t33, x(7));
    let z3 = and!(t43, y16);
    let z4 = and!(t40, y1);
    let z5 = and!(t29, y7);
    let z6 = and!(t42, y11);
    let z7 = and!(t45, y17);
    let z8 = and!(t41, y10);
    let z9 = and!(t44, y12);
    let z10 = and!(t37, y3);
    let z11 = and!(t33, y4);
    let z12 = and!(t43, y13);
    let z13 = and!(t40, y5);
    let z14 = and!(t29, y2);
    let z15 = and!(t42, y9);
    let z16 = and!(t45, y14);
    let z17 = and!(t41, y8);
    // Bottom linear transformation (XNOR = XOR then a free NOT).
    let t46 = xor!(z15, z16);
    let t47 = xor!(z10, z11);
    let t48 = xor!(z5, z13);
    let t49 = xor!(z9, z10);
    let t50 = xor!(z2, z12);
    let t51 = xor!(z2, z5);
    let t52 = xor!(z7, z8);
    let t53 = xor!(z0, z3);
    let t54 = xor!(z6, z7);
    let t55 = xor!(z16, z17);
    let t56 = xor!(z12, t48);
    let t57 = xor!(t50, t53);
    let t58 = xor!(z4, t46);
    let t59 = xor!(z3, t54);
    let t60 = xor!(t46, t57);
    let t61 = xor!(z14, t57);
    let t62 = xor!(t52, t58);
    let t63 = xor!(t49, t58);
    let t64 = xor!(z4, t59);
    let t65 = xor!(t61, t62);
    let t66 = xor!(z1, t63);
    let s0 = xor!(t59, t63);
    let s6 = xor!(t56, t62).not();
    let s7 = xor!(t48, t60).not();
    let t67 = xor!(t64, t65);
    let s3 = xor!(t53, t66);
    let s4 = xor!(t51, t66);
    let s5 = xor!(t47, t65);
    let s1 = xor!(t64, s3).not();
    let s2 = xor!(t55, t67).not();
    vec![s7, s6, s5, s4, s3, s2, s1, s0]
}

/// How an S-box is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SboxKind {
    /// Boolean gates only: [`sbox`], 32 AND (garbling, Bristol export).
    Boolean,
    /// One [`Gate::ByteInv`](crate::Gate::ByteInv) followed by the affine
    /// map ([`sbox_inversion`]): 8 committed bits in the ZK engine.
    Inversion,
}

impl SboxKind {
    fn apply(self, b: &mut Builder, byte: &[Bit]) -> Vec<Bit> {
        match self {
            SboxKind::Boolean => sbox(b, byte),
            SboxKind::Inversion => sbox_inversion(b, byte),
        }
    }
}

/// The AES S-box as a byte inversion and the affine map
/// `b_i ^ b_{i+4} ^ b_{i+5} ^ b_{i+6} ^ b_{i+7} ^ c_i` (`c = 0x63`), whose
/// XORs and constant are free.
pub fn sbox_inversion(b: &mut Builder, byte: &[Bit]) -> Vec<Bit> {
    let t = b.byte_inv(byte);
    (0..8)
        .map(|i| {
            let mut acc = t[i];
            for r in 4..8 {
                acc = b.xor(acc, t[(i + r) % 8]);
            }
            b.xor(acc, Bit::Const((crate::gf256::SBOX_CONST >> i) & 1 == 1))
        })
        .collect()
}

/// `y^-1` in GF(2^8) with Boolean gates only: the S-box circuit, then the
/// inverse affine map of `s ^ 0x63` ([`crate::gf256::affine_inv`]), 32 AND.
/// This is how [`Circuit::lower`](crate::Circuit::lower) expands a byte inversion.
pub fn byte_inverse_boolean(b: &mut Builder, byte: &[Bit]) -> Vec<Bit> {
    let s = sbox(b, byte);
    let s: Vec<Bit> = (0..8)
        .map(|i| b.xor(s[i], Bit::Const((crate::gf256::SBOX_CONST >> i) & 1 == 1)))
        .collect();
    (0..8)
        .map(|i| {
            let x = b.xor(s[(i + 2) % 8], s[(i + 5) % 8]);
            b.xor(x, s[(i + 7) % 8])
        })
        .collect()
}

fn sub_word(b: &mut Builder, word: &[Bit], kind: SboxKind) -> Vec<Bit> {
    word.chunks(8)
        .flat_map(|byte| kind.apply(b, byte))
        .collect()
}

fn rot_word(word: &[Bit]) -> Vec<Bit> {
    let mut w = word[8..].to_vec();
    w.extend_from_slice(&word[..8]);
    w
}

fn xor_const_byte(b: &mut Builder, byte: &mut [Bit], c: u8) {
    for (j, bit) in byte.iter_mut().enumerate() {
        if (c >> j) & 1 == 1 {
            *bit = b.xor(*bit, Bit::ONE);
        }
    }
}

/// FIPS-197 key expansion for a key of `nk` 32-bit words; returns the
/// `nr + 1` round keys of 128 bits each.
fn key_expansion(
    b: &mut Builder,
    key: &[Bit],
    nk: usize,
    nr: usize,
    kind: SboxKind,
) -> Vec<Vec<Bit>> {
    assert_eq!(key.len(), 32 * nk, "wrong AES key length");
    let total = 4 * (nr + 1);
    let mut w: Vec<Vec<Bit>> = key.chunks(32).map(|c| c.to_vec()).collect();
    let mut rcon: u8 = 1;
    for i in nk..total {
        let mut temp = w[i - 1].clone();
        if i % nk == 0 {
            temp = sub_word(b, &rot_word(&temp), kind);
            xor_const_byte(b, &mut temp[..8], rcon);
            rcon = xtime_u8(rcon);
        } else if nk > 6 && i % nk == 4 {
            temp = sub_word(b, &temp, kind);
        }
        let prev = w[i - nk].clone();
        w.push(b.xor_words(&prev, &temp));
    }
    w.chunks(4).map(|c| c.concat()).collect()
}

fn xtime_u8(x: u8) -> u8 {
    (x << 1) ^ if x & 0x80 != 0 { 0x1b } else { 0 }
}

/// AES-128 key schedule (1,280 AND): the 11 round keys of a 16-byte key.
pub fn aes128_key_schedule(b: &mut Builder, key: &[Bit]) -> Vec<Vec<Bit>> {
    key_expansion(b, key, 4, 10, SboxKind::Boolean)
}

/// AES-256 key schedule (1,664 AND): the 15 round keys of a 32-byte key.
pub fn aes256_key_schedule(b: &mut Builder, key: &[Bit]) -> Vec<Vec<Bit>> {
    key_expansion(b, key, 8, 14, SboxKind::Boolean)
}

/// The key schedule of a 16- or 32-byte key with S-boxes of `kind`.
pub fn key_schedule_with(b: &mut Builder, key: &[Bit], kind: SboxKind) -> Vec<Vec<Bit>> {
    match key.len() {
        128 => key_expansion(b, key, 4, 10, kind),
        256 => key_expansion(b, key, 8, 14, kind),
        n => panic!("AES keys are 128 or 256 bits, not {n}"),
    }
}

/// Multiply a byte by x in GF(2^8) (free).
fn xtime(b: &mut Builder, a: &[Bit]) -> Vec<Bit> {
    let hi = a[7];
    vec![
        hi,
        b.xor(a[0], hi),
        a[1],
        b.xor(a[2], hi),
        b.xor(a[3], hi),
        a[4],
        a[5],
        a[6],
    ]
}

fn mix_column(b: &mut Builder, col: &[Vec<Bit>]) -> Vec<Vec<Bit>> {
    // out_r = 2 a_r + 3 a_{r+1} + a_{r+2} + a_{r+3} = x(a_r + a_{r+1}) + (a_{r+1} + a_{r+2} + a_{r+3})
    let all = {
        let t = b.xor_words(&col[0], &col[1]);
        let u = b.xor_words(&col[2], &col[3]);
        b.xor_words(&t, &u)
    };
    (0..4)
        .map(|r| {
            let s = b.xor_words(&col[r], &col[(r + 1) % 4]);
            let x2 = xtime(b, &s);
            let t = b.xor_words(&x2, &all);
            b.xor_words(&t, &col[r])
        })
        .collect()
}

/// Encrypt one 16-byte block under expanded round keys (11 for AES-128,
/// 15 for AES-256): 160 (or 224) S-boxes, 32 AND each.
pub fn encrypt_block(b: &mut Builder, round_keys: &[Vec<Bit>], block: &[Bit]) -> Vec<Bit> {
    encrypt_block_with(b, round_keys, block, SboxKind::Boolean)
}

/// [`encrypt_block`] with S-boxes of `kind`.
pub fn encrypt_block_with(
    b: &mut Builder,
    round_keys: &[Vec<Bit>],
    block: &[Bit],
    kind: SboxKind,
) -> Vec<Bit> {
    encrypt(b, round_keys, block, kind, &mut Shared::default())
}

/// Rounds whose work [`encrypt_blocks_with`] shares between blocks. In
/// counter mode the blocks differ in their last bytes only; after the
/// first round's MixColumns one column depends on them, after the
/// second's every byte does, so a third round would find nothing to share.
const SHARED_ROUNDS: usize = 2;

/// Encrypt several blocks under one key schedule, computing once what
/// their first two rounds have in common: an S-box whose
/// input is the same bits XOR the same round-key bits in two blocks is
/// built once, and so is a MixColumns of the same four bytes.
///
/// This is what counter mode gains: blocks `nonce ‖ ctr` with up to 256
/// counters sharing their high bytes differ in byte 15 alone, so after
/// the first block each pays 160 − 27 S-boxes (AES-128) or 224 − 27
/// (AES-256): the first round's 15 other bytes and the second round's
/// three columns that byte 15 does not reach. Blocks with nothing in
/// common cost what [`encrypt_block_with`] costs.
pub fn encrypt_blocks_with(
    b: &mut Builder,
    round_keys: &[Vec<Bit>],
    blocks: &[Vec<Bit>],
    kind: SboxKind,
) -> Vec<Vec<Bit>> {
    let mut shared = Shared::default();
    blocks
        .iter()
        .map(|block| encrypt(b, round_keys, block, kind, &mut shared))
        .collect()
}

/// What the first rounds of blocks under one key schedule have computed,
/// by their input bits: the S-box of a byte (keyed by the byte before
/// AddRoundKey and the round-key byte, so the round is part of the key)
/// and MixColumns of a column.
#[derive(Default)]
struct Shared {
    sub: std::collections::HashMap<Vec<Bit>, Vec<Bit>>,
    mix: std::collections::HashMap<Vec<Bit>, Vec<Bit>>,
}

/// One block: its first [`SHARED_ROUNDS`] rounds with every S-box and
/// MixColumns looked up in `shared` first, then the rest
/// ([`rounds_after_sub`]).
fn encrypt(
    b: &mut Builder,
    round_keys: &[Vec<Bit>],
    block: &[Bit],
    kind: SboxKind,
    shared: &mut Shared,
) -> Vec<Bit> {
    assert_eq!(block.len(), 128, "AES block is 16 bytes");
    // Both key sizes have more rounds than are shared, so each shared
    // round has its MixColumns.
    debug_assert!(round_keys.len() - 1 > SHARED_ROUNDS);
    // The state before the round key of the round about to start is added.
    let mut state: Vec<Bit> = block.to_vec();
    for rk in &round_keys[..SHARED_ROUNDS] {
        let sub: Vec<Vec<Bit>> = state
            .chunks(8)
            .zip(rk.chunks(8))
            .map(|(x, k)| {
                let key = [x, k].concat();
                if let Some(out) = shared.sub.get(&key) {
                    return out.clone();
                }
                let byte = b.xor_words(x, k);
                let out = kind.apply(b, &byte);
                shared.sub.insert(key, out.clone());
                out
            })
            .collect();
        state = shift_rows(&sub)
            .chunks(4)
            .flat_map(|col| {
                let key = col.concat();
                if let Some(out) = shared.mix.get(&key) {
                    return out.clone();
                }
                let out = mix_column(b, col).concat();
                shared.mix.insert(key, out.clone());
                out
            })
            .collect();
    }
    let sub = state
        .chunks(8)
        .zip(round_keys[SHARED_ROUNDS].chunks(8))
        .map(|(x, k)| {
            let byte = b.xor_words(x, k);
            kind.apply(b, &byte)
        })
        .collect();
    rounds_after_sub(b, round_keys, sub, SHARED_ROUNDS + 1, kind)
}

/// ShiftRows: row r of column c comes from column c + r.
fn shift_rows(sub: &[Vec<Bit>]) -> Vec<Vec<Bit>> {
    (0..16)
        .map(|i| {
            let (r, c) = (i % 4, i / 4);
            sub[r + 4 * ((c + r) % 4)].clone()
        })
        .collect()
}

/// The first rounds' work of counter-mode blocks `prefix ‖ x` that
/// depends on the 15-byte `prefix` alone (the nonce and the counter's high
/// bytes), for [`ctr_tail`] to finish each block from its last byte `x`:
/// the first round's S-boxes of bytes 0 to 14 and the second round's of
/// columns 1 to 3, which byte 15 reaches only through the second
/// MixColumns. Output (15 bytes): the first round's S-box outputs of
/// bytes 0, 5 and 10 (column 0 after ShiftRows, with byte 15's), then the
/// second round's of bytes 4 to 15. 27 S-boxes, once per prefix; a proof
/// engine that evaluates one block circuit many times uses this where a
/// circuit of many blocks uses [`encrypt_blocks_with`].
pub fn ctr_head(
    b: &mut Builder,
    round_keys: &[Vec<Bit>],
    prefix: &[Bit],
    kind: SboxKind,
) -> Vec<Bit> {
    assert_eq!(prefix.len(), 120, "the prefix is 15 bytes");
    let sub1: Vec<Vec<Bit>> = (0..15)
        .map(|i| {
            let x = b.xor_words(&prefix[8 * i..8 * i + 8], &round_keys[0][8 * i..8 * i + 8]);
            kind.apply(b, &x)
        })
        .collect();
    let mut out = vec![sub1[0].clone(), sub1[5].clone(), sub1[10].clone()];
    for c in 1..4 {
        let col: Vec<Vec<Bit>> = (0..4)
            .map(|r| sub1[r + 4 * ((c + r) % 4)].clone())
            .collect();
        for (r, m) in mix_column(b, &col).iter().enumerate() {
            let i = r + 4 * c;
            let x = b.xor_words(m, &round_keys[1][8 * i..8 * i + 8]);
            out.push(kind.apply(b, &x));
        }
    }
    out.concat()
}

/// The rest of the block `prefix ‖ x` from [`ctr_head`]'s output for
/// `prefix` and the last byte `x`: 1 + 4 S-boxes of the first two rounds,
/// then the remaining rounds in full. `AES_K(prefix ‖ x)`.
pub fn ctr_tail(
    b: &mut Builder,
    round_keys: &[Vec<Bit>],
    head: &[Bit],
    last: &[Bit],
    kind: SboxKind,
) -> Vec<Bit> {
    assert_eq!(head.len(), 120, "the head is 15 bytes");
    assert_eq!(last.len(), 8, "the last byte");
    let byte = |k: usize| head[8 * k..8 * k + 8].to_vec();
    let x = b.xor_words(last, &round_keys[0][120..]);
    let col = [byte(0), byte(1), byte(2), kind.apply(b, &x)];
    let mut sub2: Vec<Vec<Bit>> = mix_column(b, &col)
        .iter()
        .enumerate()
        .map(|(r, m)| {
            let x = b.xor_words(m, &round_keys[1][8 * r..8 * r + 8]);
            kind.apply(b, &x)
        })
        .collect();
    sub2.extend((3..15).map(byte));
    rounds_after_sub(b, round_keys, sub2, 2, kind)
}

/// Finish a block from the output of round `round`'s SubBytes: its
/// ShiftRows, MixColumns (not in the last round) and AddRoundKey, then
/// the rounds after it.
fn rounds_after_sub(
    b: &mut Builder,
    round_keys: &[Vec<Bit>],
    mut sub: Vec<Vec<Bit>>,
    mut round: usize,
    kind: SboxKind,
) -> Vec<Bit> {
    let nr = round_keys.len() - 1;
    loop {
        let shifted = shift_rows(&sub);
        let mixed: Vec<Bit> = if round < nr {
            shifted
                .chunks(4)
                .flat_map(|col| mix_column(b, col).concat())
                .collect()
        } else {
            shifted.concat()
        };
        let added = b.xor_words(&mixed, &round_keys[round]);
        if round == nr {
            return added;
        }
        sub = added.chunks(8).map(|x| kind.apply(b, x)).collect();
        round += 1;
    }
}

fn build_multi(key_bytes: usize, blocks: usize) -> Circuit {
    aes_blocks_circuit_with(key_bytes, blocks, SboxKind::Boolean)
}

/// AES of `blocks` blocks under one 16- or 32-byte key, S-boxes of `kind`.
/// Inputs: `[key, plaintexts (16·blocks B)]`; output: the ciphertexts.
/// With [`SboxKind::Inversion`]: no AND gate, 40 + 160·blocks (AES-128) or
/// 52 + 224·blocks (AES-256) byte inversions.
pub fn aes_blocks_circuit_with(key_bytes: usize, blocks: usize, kind: SboxKind) -> Circuit {
    let mut b = Builder::new();
    let key = b.input_bytes(key_bytes);
    let pt = b.input_bytes(16 * blocks);
    let rks = key_schedule_with(&mut b, &key, kind);
    let mut ct = Vec::with_capacity(pt.len());
    for block in pt.chunks(128) {
        ct.extend(encrypt_block_with(&mut b, &rks, block, kind));
    }
    b.output(&ct);
    b.finish()
}

/// AES-128 with its key schedule. Inputs: `[key (16 B), plaintext (16 B)]`;
/// output: `[ciphertext (16 B)]`. 6,400 AND.
pub fn aes128_circuit() -> Circuit {
    build_multi(16, 1)
}

/// AES-128 of `blocks` blocks under one key (schedule paid once). Inputs:
/// `[key (16 B), plaintexts (16·blocks B)]`; output: the ciphertexts.
/// 1,280 + 5,120·blocks AND.
pub fn aes128_blocks_circuit(blocks: usize) -> Circuit {
    build_multi(16, blocks)
}

/// AES-256 with its key schedule. Inputs: `[key (32 B), plaintext (16 B)]`;
/// output: `[ciphertext (16 B)]`. 8,832 AND.
pub fn aes256_circuit() -> Circuit {
    build_multi(32, 1)
}

/// AES-256 of `blocks` blocks under one key. 1,664 + 7,168·blocks AND.
pub fn aes256_blocks_circuit(blocks: usize) -> Circuit {
    build_multi(32, blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits::{bits_to_bytes, bytes_to_bits};

    /// The FIPS-197 S-box computed from its definition (inverse in GF(2^8),
    /// then the affine map), independent of the circuit.
    fn sbox_ref(x: u8) -> u8 {
        let mul = |mut a: u8, mut c: u8| {
            let mut p = 0u8;
            while c != 0 {
                if c & 1 != 0 {
                    p ^= a;
                }
                a = xtime_u8(a);
                c >>= 1;
            }
            p
        };
        let inv = (1..=255u8).find(|&y| mul(x, y) == 1).unwrap_or(0);
        inv ^ inv.rotate_left(1)
            ^ inv.rotate_left(2)
            ^ inv.rotate_left(3)
            ^ inv.rotate_left(4)
            ^ 0x63
    }

    #[test]
    fn sbox_all_256_inputs() {
        let mut b = Builder::new();
        let x = b.input(8);
        let y = sbox(&mut b, &x);
        b.output(&y);
        let c = b.finish();
        assert_eq!(c.and_count(), 32);
        for v in 0..=255u8 {
            let out = c.eval(&[bytes_to_bits(&[v])]);
            assert_eq!(bits_to_bytes(&out[0])[0], sbox_ref(v), "input {v:#04x}");
        }
        assert_eq!(sbox_ref(0x00), 0x63);
        assert_eq!(sbox_ref(0x53), 0xed);
    }

    #[test]
    fn fips197_vectors() {
        // FIPS-197 appendix C.1 and C.3.
        let pt = hex("00112233445566778899aabbccddeeff");
        let k128 = hex("000102030405060708090a0b0c0d0e0f");
        let k256 = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
        let c = aes128_circuit();
        assert_eq!(
            c.eval_bytes(&[&k128, &pt])[0],
            hex("69c4e0d86a7b0430d8cdb78070b4c55a")
        );
        let c = aes256_circuit();
        assert_eq!(
            c.eval_bytes(&[&k256, &pt])[0],
            hex("8ea2b7ca516745bfeafc49904b496089")
        );
    }

    #[test]
    fn inversion_sbox_and_boolean_inverse_all_256_inputs() {
        let mut b = Builder::new();
        let x = b.input(8);
        let y = sbox_inversion(&mut b, &x);
        let z = byte_inverse_boolean(&mut b, &x);
        b.output(&y);
        b.output(&z);
        let c = b.finish();
        c.validate().unwrap();
        assert_eq!(c.byte_inv_count(), 1);
        assert_eq!(c.and_count(), 32);
        assert_eq!(c.zk_cost(), 8 + 32);
        for v in 0..=255u8 {
            let out = c.eval(&[bytes_to_bits(&[v])]);
            assert_eq!(bits_to_bytes(&out[0])[0], sbox_ref(v), "input {v:#04x}");
            assert_eq!(
                bits_to_bytes(&out[1])[0],
                crate::gf256::inv(v),
                "input {v:#04x}"
            );
        }
    }

    #[test]
    fn inversion_aes_matches_fips197_and_its_lowering() {
        let pt = hex("00112233445566778899aabbccddeeff");
        let k128 = hex("000102030405060708090a0b0c0d0e0f");
        let k256 = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
        let c = aes_blocks_circuit_with(16, 1, SboxKind::Inversion);
        c.validate().unwrap();
        assert_eq!(c.and_count(), 0);
        assert_eq!(c.byte_inv_count(), 200);
        assert_eq!(
            c.eval_bytes(&[&k128, &pt])[0],
            hex("69c4e0d86a7b0430d8cdb78070b4c55a")
        );
        let lowered = c.lower();
        lowered.validate().unwrap();
        assert_eq!(lowered.byte_inv_count(), 0);
        assert_eq!(lowered.and_count(), 6400);
        assert_eq!(
            lowered.eval_bytes(&[&k128, &pt])[0],
            hex("69c4e0d86a7b0430d8cdb78070b4c55a")
        );
        let c = aes_blocks_circuit_with(32, 2, SboxKind::Inversion);
        assert_eq!(c.byte_inv_count(), 52 + 2 * 224);
        let two = [pt.clone(), pt].concat();
        let want = hex("8ea2b7ca516745bfeafc49904b496089");
        assert_eq!(
            c.eval_bytes(&[&k256, &two])[0],
            [want.clone(), want].concat()
        );
    }

    #[test]
    fn inversion_aes_packed_and_bristol_agree_with_plain() {
        let c = aes_blocks_circuit_with(16, 2, SboxKind::Inversion);
        let instances: Vec<Vec<Vec<u8>>> = (0..70u8)
            .map(|i| {
                vec![
                    (0..16).map(|j| i.wrapping_mul(31) ^ j).collect(),
                    (0..32).map(|j| i.wrapping_add(j).wrapping_mul(7)).collect(),
                ]
            })
            .collect();
        let batch = c.eval_bytes_batch(&instances);
        let reparsed = crate::bristol::parse(&crate::bristol::write(&c)).unwrap();
        for (inst, got) in instances.iter().zip(&batch) {
            let plain = c.eval_bytes(&[&inst[0], &inst[1]]);
            assert_eq!(&plain, got);
            assert_eq!(reparsed.eval_bytes(&[&inst[0], &inst[1]]), plain);
        }
    }

    type BuildFn<'a> = dyn Fn(&mut Builder, &[Vec<Bit>]) -> Vec<Bit> + 'a;

    #[test]
    fn ctr_head_and_tail_give_the_block() {
        // Head once per prefix, tail per last byte: the same ciphertext as a
        // whole block, for both key sizes and both S-box kinds, with 27
        // S-boxes in the head and the rest in the tail.
        for (key_len, kind) in [
            (16, SboxKind::Boolean),
            (16, SboxKind::Inversion),
            (32, SboxKind::Boolean),
            (32, SboxKind::Inversion),
        ] {
            let mut b = Builder::new();
            let key = b.input_bytes(key_len);
            let prefix = b.input_bytes(15);
            let last = b.input_bytes(1);
            let rks = key_schedule_with(&mut b, &key, kind);
            let head = ctr_head(&mut b, &rks, &prefix, kind);
            let split = ctr_tail(&mut b, &rks, &head, &last, kind);
            let whole = encrypt_block_with(&mut b, &rks, &[prefix, last].concat(), kind);
            b.output(&split);
            b.output(&whole);
            let c = b.finish();
            c.validate().unwrap();
            for i in 0..20u8 {
                let k: Vec<u8> = (0..key_len as u8)
                    .map(|j| j.wrapping_mul(i ^ 0x5a))
                    .collect();
                let p: Vec<u8> = (0..15u8)
                    .map(|j| j.wrapping_add(i).wrapping_mul(13))
                    .collect();
                let out = c.eval_bytes(&[&k, &p, &[i.wrapping_mul(41)]]);
                assert_eq!(out[0], out[1], "AES-{} {kind:?}", 8 * key_len);
            }
            let sboxes = |f: &BuildFn<'_>| {
                let mut b = Builder::new();
                let rk = b.input(128 * (key_len / 4 + 7));
                let rks: Vec<Vec<Bit>> = rk.chunks(128).map(<[Bit]>::to_vec).collect();
                let out = f(&mut b, &rks);
                b.output(&out);
                let c = b.finish();
                c.and_count() / 32 + c.byte_inv_count()
            };
            let head = sboxes(&|b, rks| {
                let p = b.input(120);
                ctr_head(b, rks, &p, kind)
            });
            let tail = sboxes(&|b, rks| {
                let (h, l) = (b.input(120), b.input(8));
                ctr_tail(b, rks, &h, &l, kind)
            });
            let nr = key_len / 4 + 6;
            assert_eq!((head, tail), (27, 16 * nr - 27));
        }
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}

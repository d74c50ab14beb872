//! The crate's one bit-order convention and conversions.
//!
//! **Byte `i`, bit `j` (LSB first) is bit index `8i + j`.** Every circuit in
//! this crate takes and returns byte strings in this order: AES blocks and
//! keys, SHA-2 states and blocks (serialised big-endian, exactly as the digest
//! bytes), HMAC keys and tags, ChaCha20 keys, counters, nonces and keystream.
//!
//! Inside gadgets, integers are LSB-first bit vectors (index `k` holds
//! `2^k`); the helpers here convert between the byte order of a protocol
//! (big-endian for SHA-2, little-endian for ChaCha20) and such words.

use crate::builder::Bit;

/// Bits of `bytes`: byte `i` bit `j` (LSB first) at index `8i + j`.
pub fn bytes_to_bits(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|&b| (0..8).map(move |j| (b >> j) & 1 == 1))
        .collect()
}

/// Inverse of [`bytes_to_bits`]. Panics if `bits.len()` is not a multiple of 8.
pub fn bits_to_bytes(bits: &[bool]) -> Vec<u8> {
    assert!(bits.len() % 8 == 0, "bit length is not a multiple of 8");
    bits.chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (j, &b)| acc | ((b as u8) << j))
        })
        .collect()
}

/// Split a byte string (crate bit order) into big-endian words of `w` bits
/// (`w` a multiple of 8), each returned LSB first.
pub fn be_words(bits: &[Bit], w: usize) -> Vec<Vec<Bit>> {
    assert!(w % 8 == 0 && bits.len() % w == 0, "be_words: bad lengths");
    bits.chunks(w)
        .map(|chunk| {
            let nbytes = w / 8;
            (0..w)
                .map(|k| chunk[8 * (nbytes - 1 - k / 8) + k % 8])
                .collect()
        })
        .collect()
}

/// Inverse of [`be_words`]: serialise LSB-first words big-endian.
pub fn from_be_words(words: &[Vec<Bit>]) -> Vec<Bit> {
    let mut out = Vec::new();
    for word in words {
        let nbytes = word.len() / 8;
        for i in 0..nbytes {
            for j in 0..8 {
                out.push(word[8 * (nbytes - 1 - i) + j]);
            }
        }
    }
    out
}

/// Split a byte string (crate bit order) into little-endian words of `w` bits;
/// with this convention that is a plain chunking.
pub fn le_words(bits: &[Bit], w: usize) -> Vec<Vec<Bit>> {
    assert!(w % 8 == 0 && bits.len() % w == 0, "le_words: bad lengths");
    bits.chunks(w).map(|c| c.to_vec()).collect()
}

/// Inverse of [`le_words`].
pub fn from_le_words(words: &[Vec<Bit>]) -> Vec<Bit> {
    words.iter().flatten().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::const_bytes;

    #[test]
    fn bytes_bits_roundtrip() {
        let bytes: Vec<u8> = (0..=255).collect();
        let bits = bytes_to_bits(&bytes);
        assert_eq!(bits.len(), 256 * 8);
        assert!(bits[0..8].iter().all(|&b| !b));
        // 0x01 has only its least significant bit set, at index 8.
        assert!(bits[8] && !bits[9]);
        assert_eq!(bits_to_bytes(&bits), bytes);
    }

    fn word_value(w: &[Bit]) -> u64 {
        w.iter()
            .enumerate()
            .map(|(k, b)| (b.as_const().unwrap() as u64) << k)
            .sum()
    }

    #[test]
    fn word_orders() {
        let bytes = [0x01, 0x02, 0x03, 0x04, 0xa0, 0xb0, 0xc0, 0xd0];
        let bits = const_bytes(&bytes);
        let be = be_words(&bits, 32);
        assert_eq!(word_value(&be[0]), 0x0102_0304);
        assert_eq!(word_value(&be[1]), 0xa0b0_c0d0);
        assert_eq!(from_be_words(&be), bits);
        let le = le_words(&bits, 32);
        assert_eq!(word_value(&le[0]), 0x0403_0201);
        assert_eq!(from_le_words(&le), bits);
    }
}

//! Wire formats of the messages the two parties exchange, with strict parsing.
//!
//! Every receive states its exact or largest size, so a peer can never make
//! us allocate more than the protocol step allows; anything that does not
//! parse ends the session with [`Error::Malformed`].

use crate::Config;
use webproof_core::error::Result;
use webproof_core::{Block, Error};

/// Protocol identifier and version at the start of the hello.
const MAGIC: &[u8; 5] = b"WPZK2";
/// Bytes of the hello message.
pub const HELLO_LEN: usize = 5 + 4 + 4;
/// Largest abort message a verifier may send in place of its verdict.
pub const MAX_ABORT_LEN: usize = 64 << 10;
/// Bytes of a hash of MACs.
pub const HASH_LEN: usize = 32;
/// Bytes of the check answer `(U, V)`.
pub const CHECK_LEN: usize = 32;
/// Verdict byte values.
pub const VERDICT_ACCEPT: u8 = 1;
pub const VERDICT_REJECT: u8 = 0;

/// Bytes of the context a proof is bound to (see [`ChallengeChain::new`]).
pub const CONTEXT_LEN: usize = 32;

/// The challenge seeds, derived from the prover's messages (Fiat–Shamir):
/// `h_0 = SHA-256(label, context, hello)`, `h_j = SHA-256(h_{j-1},
/// segment_j)`, and segment `j`'s seed is the first 16 bytes of `h_j`. Each
/// seed depends on every correction sent so far, so the errors it weighs are
/// fixed before it exists; and on the caller's 32-byte context (a digest of
/// the session and the statement), so a proof transcript answers the
/// challenges of one session and statement only.
pub struct ChallengeChain {
    state: [u8; 32],
}

impl ChallengeChain {
    /// Start from the caller's context and the hello (binding the session,
    /// the statement and the parameters). Both inputs have a fixed length,
    /// so their concatenation is unambiguous.
    pub fn new(context: &[u8; CONTEXT_LEN], hello: &[u8]) -> Self {
        use sha2::{Digest, Sha256};
        let state = Sha256::new()
            .chain_update(b"webproof-zk/challenges/v3")
            .chain_update(context)
            .chain_update(hello)
            .finalize()
            .into();
        ChallengeChain { state }
    }

    /// The seed of the segment whose encoded frame is `segment`.
    pub fn next_seed(&mut self, segment: &[u8]) -> Block {
        use sha2::{Digest, Sha256};
        self.state = Sha256::new()
            .chain_update(self.state)
            .chain_update(segment)
            .finalize()
            .into();
        Block::from_bytes(self.state[..16].try_into().expect("16 bytes"))
    }
}

/// The prover's hello: the parameters it runs with.
pub fn encode_hello(cfg: &Config) -> Vec<u8> {
    let mut v = Vec::with_capacity(HELLO_LEN);
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&(cfg.cot_batch as u32).to_le_bytes());
    v.extend_from_slice(&(cfg.segment_bits as u32).to_le_bytes());
    v
}

/// Check the prover's hello against our own parameters.
pub fn check_hello(msg: &[u8], cfg: &Config) -> Result<()> {
    if msg.len() != HELLO_LEN || &msg[..5] != MAGIC {
        return Err(Error::Malformed("not a webproof-zk v2 hello".into()));
    }
    let batch = u32::from_le_bytes(msg[5..9].try_into().expect("4 bytes")) as usize;
    let seg = u32::from_le_bytes(msg[9..13].try_into().expect("4 bytes")) as usize;
    if batch != cfg.cot_batch || seg != cfg.segment_bits {
        return Err(Error::Aborted(format!(
            "parameter mismatch: prover uses cot_batch={batch} segment_bits={seg}, \
             verifier cot_batch={} segment_bits={}",
            cfg.cot_batch, cfg.segment_bits
        )));
    }
    Ok(())
}

/// Largest segment frame for a configuration.
pub fn max_segment_len(cfg: &Config) -> usize {
    4 + cfg.segment_bits.div_ceil(8)
}

/// A segment of correction bits: `u32` count, then the bits packed little-endian.
pub fn encode_segment(words: &[u64], nbits: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&(nbits as u32).to_le_bytes());
    let nbytes = nbits.div_ceil(8);
    for w in words.iter().take(nbits.div_ceil(64)) {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.truncate(4 + nbytes);
}

/// Parse a segment holding between 1 and `max_bits` bits into `words`
/// (cleared first); returns the number of bits.
pub fn decode_segment(msg: &[u8], max_bits: usize, words: &mut Vec<u64>) -> Result<usize> {
    if msg.len() < 4 {
        return Err(Error::Malformed("truncated correction segment".into()));
    }
    let n = u32::from_le_bytes(msg[..4].try_into().expect("4 bytes")) as usize;
    if n == 0 || n > max_bits {
        return Err(Error::Malformed(format!(
            "correction segment of {n} bits where 1..={max_bits} are expected"
        )));
    }
    let body = &msg[4..];
    if body.len() != n.div_ceil(8) {
        return Err(Error::Malformed(format!(
            "correction segment of {n} bits carries {} bytes",
            body.len()
        )));
    }
    unpack_bits_into(body, n, words)?;
    Ok(n)
}

/// Pack bools into bytes, little-endian bit order.
pub fn pack_bools(bits: impl Iterator<Item = bool>, out: &mut Vec<u8>) {
    let mut cur = 0u8;
    let mut k = 0;
    for b in bits {
        cur |= (b as u8) << k;
        k += 1;
        if k == 8 {
            out.push(cur);
            cur = 0;
            k = 0;
        }
    }
    if k > 0 {
        out.push(cur);
    }
}

/// Unpack `n` bits (little-endian) from exactly `n.div_ceil(8)` bytes; the
/// padding bits of the last byte must be zero.
pub fn unpack_bools(bytes: &[u8], n: usize) -> Result<Vec<bool>> {
    if bytes.len() != n.div_ceil(8) {
        return Err(Error::Malformed(format!(
            "{} bytes where {n} packed bits are expected",
            bytes.len()
        )));
    }
    check_padding(bytes, n)?;
    Ok((0..n).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect())
}

fn unpack_bits_into(bytes: &[u8], n: usize, words: &mut Vec<u64>) -> Result<()> {
    check_padding(bytes, n)?;
    words.clear();
    for chunk in bytes.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        words.push(u64::from_le_bytes(w));
    }
    Ok(())
}

fn check_padding(bytes: &[u8], n: usize) -> Result<()> {
    #[allow(clippy::manual_is_multiple_of)] // MSRV 1.85
    if n % 8 != 0 {
        let last = bytes[bytes.len() - 1];
        if last >> (n % 8) != 0 {
            return Err(Error::Malformed("nonzero padding bits".into()));
        }
    }
    Ok(())
}

/// Two blocks as 32 bytes.
pub fn encode_pair(u: Block, v: Block) -> [u8; 32] {
    let mut out = [0u8; 32];
    out[..16].copy_from_slice(&u.to_bytes());
    out[16..].copy_from_slice(&v.to_bytes());
    out
}

/// 32 bytes as two blocks (length checked by the caller's `recv_exact`).
pub fn decode_pair(msg: &[u8]) -> (Block, Block) {
    let u = Block::from_bytes(msg[..16].try_into().expect("16 bytes"));
    let v = Block::from_bytes(msg[16..32].try_into().expect("16 bytes"));
    (u, v)
}

/// The commitment a sealed prover sends: `SHA-256(label, salt, held)`. The
/// salt has a fixed length, so the concatenation is unambiguous.
pub fn seal_commitment(salt: &[u8; 32], held: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::new()
        .chain_update(b"webproof-zk/seal/v1")
        .chain_update(salt)
        .chain_update(held)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_roundtrip_and_rejects() {
        let words = vec![0xdead_beef_0123_4567u64, 0x5];
        let mut buf = Vec::new();
        encode_segment(&words, 67, &mut buf);
        assert_eq!(buf.len(), 4 + 9);
        let mut out = Vec::new();
        assert_eq!(decode_segment(&buf, 100, &mut out).unwrap(), 67);
        assert_eq!(out, words);
        // More bits than allowed.
        assert!(matches!(
            decode_segment(&buf, 66, &mut out),
            Err(Error::Malformed(_))
        ));
        // Truncated body, extra byte, no header, zero bits, dirty padding.
        assert!(decode_segment(&buf[..buf.len() - 1], 100, &mut out).is_err());
        let mut longer = buf.clone();
        longer.push(0);
        assert!(decode_segment(&longer, 100, &mut out).is_err());
        assert!(decode_segment(&buf[..3], 100, &mut out).is_err());
        assert!(decode_segment(&0u32.to_le_bytes(), 100, &mut out).is_err());
        let mut dirty = buf.clone();
        *dirty.last_mut().unwrap() |= 0x80;
        assert!(decode_segment(&dirty, 100, &mut out).is_err());
    }

    #[test]
    fn bools_roundtrip_and_padding() {
        let bits: Vec<bool> = (0..13).map(|i| i % 3 == 0).collect();
        let mut buf = Vec::new();
        pack_bools(bits.iter().copied(), &mut buf);
        assert_eq!(buf.len(), 2);
        assert_eq!(unpack_bools(&buf, 13).unwrap(), bits);
        assert!(unpack_bools(&buf, 12).is_err());
        assert!(unpack_bools(&buf[..1], 13).is_err());
        buf[1] |= 0x80;
        assert!(unpack_bools(&buf, 13).is_err());
    }

    #[test]
    fn challenges_depend_on_context_hello_and_segments() {
        let hello = encode_hello(&Config::default());
        let seed = |ctx: &[u8; CONTEXT_LEN], hello: &[u8], seg: &[u8]| {
            ChallengeChain::new(ctx, hello).next_seed(seg)
        };
        let base = seed(&[0; 32], &hello, b"segment");
        assert_eq!(base, seed(&[0; 32], &hello, b"segment"));
        let mut ctx = [0u8; 32];
        ctx[31] = 1;
        assert_ne!(base, seed(&ctx, &hello, b"segment"));
        let mut other = hello.clone();
        other[12] ^= 1;
        assert_ne!(base, seed(&[0; 32], &other, b"segment"));
        assert_ne!(base, seed(&[0; 32], &hello, b"segmenT"));
    }

    #[test]
    fn hello_mismatch_is_reported() {
        let a = Config::default();
        let b = Config {
            segment_bits: 1 << 10,
            ..a
        };
        assert!(check_hello(&encode_hello(&a), &a).is_ok());
        assert!(matches!(
            check_hello(&encode_hello(&a), &b),
            Err(Error::Aborted(_))
        ));
        let mut bad = encode_hello(&a);
        bad[0] = b'X';
        assert!(matches!(check_hello(&bad, &a), Err(Error::Malformed(_))));
    }
}

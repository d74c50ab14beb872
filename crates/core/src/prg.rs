//! The pseudo-random generator keyed by a seed block, and the batch AES
//! kernel of the fixed-key hashes.
//!
//! [`Prg`] is used wherever a protocol expands a short seed into many blocks
//! (OT extension rows, GGM trees, challenge vectors, a party's private
//! randomness). Not a source of entropy: seeds come from the caller's RNG.
//! It is the ChaCha12 keystream under the key `seed ‖ PRG_DOMAIN`
//! ([`crate::chacha::ChaCha12Stream`]): a stream cipher is the textbook
//! PRG, and unlike AES it needs no key schedule and no AES instructions, so
//! a browser computes it about five times as fast as bitsliced AES
//! counter mode (`scripts/browser-test.sh --bench`), and a GGM node costs
//! one block function instead of a key expansion.
//!
//! [`AesBatch`] is AES-128 under one key applied to whole slices: counter
//! mode, in-place encryption and the fixed-key hash `E(x) ⊕ x` (Ferret's
//! half-tree hash, whose security argument models fixed-key AES as a random
//! permutation). It exists
//! because the silent-OT and proof hot loops encrypt millions of blocks and
//! the generic `aes` crate interface reloads its key schedule and dispatches
//! on every call. On x86_64 it picks, once per batch, a kernel compiled for
//! VAES (16 blocks per step in AVX-512 registers) or AES-NI (8 blocks per
//! step, key schedule in registers); on WebAssembly with SIMD128 a
//! bitsliced kernel (`crate::simd128::Aes128x8` (wasm32 only), eight blocks per step);
//! elsewhere (WebAssembly without SIMD128, CPUs without AES-NI) the `aes`
//! crate. All paths are checked against
//! the `aes` crate in the tests.

use crate::block::Block;
use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes128;
use rand_core::{CryptoRng, RngCore};

/// AES-128 under a fixed key, for batches of blocks.
#[derive(Clone)]
pub struct AesBatch {
    imp: Imp,
}

#[derive(Clone)]
enum Imp {
    /// Round keys for the AES-NI / VAES kernels (x86_64 with AES-NI only).
    #[cfg(target_arch = "x86_64")]
    Hw(hw::RoundKeys),
    Soft(Box<Aes128>),
    /// Bitsliced, eight blocks per step (WebAssembly SIMD128).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd(Box<crate::simd128::Aes128x8>),
}

/// What [`AesBatch`] does to each block.
#[derive(Clone, Copy)]
enum Mode {
    /// `b ← E(b)`.
    Encrypt,
    /// `b ← E(b) ⊕ b`.
    Hash,
    /// `b ← E(counter + i)`.
    Counter(u128),
}

impl AesBatch {
    /// The cipher keyed by `key` (its little-endian bytes are the AES key).
    pub fn new(key: Block) -> Self {
        #[cfg(target_arch = "x86_64")]
        if hw::has_aes_ni() {
            return AesBatch {
                imp: Imp::Hw(hw::RoundKeys::new(key.0)),
            };
        }
        // 6.5x the `aes` crate's fixsliced code in Node (22 M vs 3.4 M
        // counter blocks/s; scripts/browser-test.sh --bench).
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            AesBatch::new_simd128(key)
        }
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            AesBatch::new_soft(key)
        }
    }

    /// The `aes` crate's implementation whatever the CPU has (for
    /// [`crate::kernels`]).
    pub(crate) fn new_soft(key: Block) -> Self {
        AesBatch {
            imp: Imp::Soft(Box::new(Aes128::new(&key.to_bytes().into()))),
        }
    }

    /// The bitsliced SIMD128 implementation (for [`crate::kernels`]).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    pub(crate) fn new_simd128(key: Block) -> Self {
        AesBatch {
            imp: Imp::Simd(Box::new(crate::simd128::Aes128x8::new(key.0))),
        }
    }

    /// `b ← E(b)` for every block.
    pub fn encrypt(&self, blocks: &mut [Block]) {
        self.apply(blocks, Mode::Encrypt)
    }

    /// `b ← E(b) ⊕ b` for every block (a fixed-key hash in Davies–Meyer /
    /// MMO form, as used by correlation-robust hashes).
    pub fn hash_in_place(&self, blocks: &mut [Block]) {
        self.apply(blocks, Mode::Hash)
    }

    /// `out[i] = E(counter + i)` (counter wrapping modulo 2^128).
    pub fn encrypt_counter(&self, counter: u128, out: &mut [Block]) {
        self.apply(out, Mode::Counter(counter))
    }

    /// Every implementation this CPU can run, for the tests.
    #[cfg(test)]
    fn variants(key: Block) -> Vec<AesBatch> {
        let soft = AesBatch {
            imp: Imp::Soft(Box::new(Aes128::new(&key.to_bytes().into()))),
        };
        let mut v = vec![soft];
        #[cfg(target_arch = "x86_64")]
        if let Imp::Hw(rk) = AesBatch::new(key).imp {
            v.push(AesBatch {
                imp: Imp::Hw(rk.narrow()),
            });
            v.push(AesBatch { imp: Imp::Hw(rk) });
        }
        v
    }

    fn apply(&self, blocks: &mut [Block], mode: Mode) {
        match &self.imp {
            #[cfg(target_arch = "x86_64")]
            Imp::Hw(rk) => rk.apply(blocks, mode),
            Imp::Soft(aes) => soft_apply(aes, blocks, mode),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Imp::Simd(aes) => simd_apply::<8>(blocks, mode, |x| aes.encrypt(x)),
        }
    }
}

/// The SIMD128 path: `N` blocks per step; a short tail is padded to `N`
/// (bitsliced code costs the same for one block as for eight).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn simd_apply<const N: usize>(
    blocks: &mut [Block],
    mode: Mode,
    encrypt: impl Fn([u128; N]) -> [u128; N],
) {
    let mut i = 0usize;
    for chunk in blocks.chunks_mut(N) {
        let x: [u128; N] = core::array::from_fn(|j| match mode {
            Mode::Counter(c) => c.wrapping_add((i + j) as u128),
            Mode::Encrypt | Mode::Hash => chunk.get(j).map_or(0, |b| b.0),
        });
        let e = encrypt(x);
        for (j, b) in chunk.iter_mut().enumerate() {
            *b = match mode {
                Mode::Hash => Block(e[j] ^ x[j]),
                Mode::Encrypt | Mode::Counter(_) => Block(e[j]),
            };
        }
        i += N;
    }
}

/// The portable path: the `aes` crate, eight blocks per call.
fn soft_apply(aes: &Aes128, blocks: &mut [Block], mode: Mode) {
    let mut done = 0u128;
    for chunk in blocks.chunks_mut(8) {
        let mut bufs = [aes::Block::default(); 8];
        for (i, (b, x)) in bufs.iter_mut().zip(chunk.iter()).enumerate() {
            *b = match mode {
                Mode::Counter(c) => c.wrapping_add(done + i as u128).to_le_bytes().into(),
                Mode::Encrypt | Mode::Hash => x.to_bytes().into(),
            };
        }
        aes.encrypt_blocks(&mut bufs[..chunk.len()]);
        for (x, b) in chunk.iter_mut().zip(bufs.iter()) {
            let e = Block::from_bytes((*b).into());
            *x = match mode {
                Mode::Hash => e ^ *x,
                Mode::Encrypt | Mode::Counter(_) => e,
            };
        }
        done += chunk.len() as u128;
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod hw {
    //! AES-NI and VAES kernels. Every `unsafe` block here either calls a
    //! `#[target_feature]` function after the matching runtime check, or
    //! does an unaligned SIMD load/store within a slice's bounds.

    use super::{Block, Mode};
    use core::arch::x86_64::*;

    pub(super) fn has_aes_ni() -> bool {
        std::is_x86_feature_detected!("aes") && std::is_x86_feature_detected!("sse2")
    }

    fn has_vaes512() -> bool {
        std::is_x86_feature_detected!("vaes") && std::is_x86_feature_detected!("avx512f")
    }

    /// The eleven AES-128 round keys.
    #[derive(Clone)]
    pub(super) struct RoundKeys {
        rk: [u128; 11],
        /// VAES with 512-bit registers is available (checked at creation).
        wide: bool,
    }

    impl RoundKeys {
        /// Only called when [`has_aes_ni`] holds.
        pub(super) fn new(key: u128) -> Self {
            // SAFETY: AES-NI presence checked by the caller.
            let rk = unsafe { expand_key(key) };
            RoundKeys {
                rk,
                wide: has_vaes512(),
            }
        }

        /// The same key without the VAES kernel (to test the AES-NI one).
        #[cfg(test)]
        pub(super) fn narrow(&self) -> Self {
            RoundKeys {
                rk: self.rk,
                wide: false,
            }
        }

        pub(super) fn apply(&self, blocks: &mut [Block], mode: Mode) {
            let mut done = 0;
            if self.wide && blocks.len() >= 16 {
                // SAFETY: VAES and AVX-512F checked in `new`.
                done = unsafe { apply_vaes(&self.rk, blocks, mode) };
            }
            let mode = match mode {
                Mode::Counter(c) => Mode::Counter(c.wrapping_add(done as u128)),
                m => m,
            };
            // SAFETY: AES-NI checked before this key schedule was made.
            unsafe { apply_ni(&self.rk, &mut blocks[done..], mode) }
        }
    }

    #[inline(always)]
    fn m128(x: u128) -> __m128i {
        // SAFETY: both are 16 plain bytes.
        unsafe { core::mem::transmute::<u128, __m128i>(x) }
    }

    /// The AES-128 key schedule with AESKEYGENASSIST (constant time).
    #[target_feature(enable = "aes", enable = "sse2")]
    unsafe fn expand_key(key: u128) -> [u128; 11] {
        let step = |k: __m128i, assist: __m128i| -> __m128i {
            let t = _mm_shuffle_epi32(assist, 0xff);
            let k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
            let k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
            let k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
            _mm_xor_si128(k, t)
        };
        let mut k = [m128(key); 11];
        macro_rules! round {
            ($i:expr, $rcon:expr) => {
                k[$i] = step(k[$i - 1], _mm_aeskeygenassist_si128::<$rcon>(k[$i - 1]));
            };
        }
        round!(1, 0x01);
        round!(2, 0x02);
        round!(3, 0x04);
        round!(4, 0x08);
        round!(5, 0x10);
        round!(6, 0x20);
        round!(7, 0x40);
        round!(8, 0x80);
        round!(9, 0x1b);
        round!(10, 0x36);
        k.map(|x| core::mem::transmute::<__m128i, u128>(x))
    }

    /// AES-NI, eight independent blocks per step (the AESENC latency is
    /// hidden behind the other seven), then one at a time.
    #[target_feature(enable = "aes", enable = "sse2")]
    unsafe fn apply_ni(rk: &[u128; 11], blocks: &mut [Block], mode: Mode) {
        let k: [__m128i; 11] = rk.map(m128);
        let p = blocks.as_mut_ptr().cast::<__m128i>();
        let n = blocks.len();
        let input = |i: usize| -> __m128i {
            match mode {
                Mode::Counter(c) => m128(c.wrapping_add(i as u128)),
                // SAFETY: i < n.
                Mode::Encrypt | Mode::Hash => unsafe { _mm_loadu_si128(p.add(i)) },
            }
        };
        let mut i = 0;
        while i + 8 <= n {
            let x: [__m128i; 8] = core::array::from_fn(|j| input(i + j));
            let mut s: [__m128i; 8] = core::array::from_fn(|j| _mm_xor_si128(x[j], k[0]));
            for r in &k[1..10] {
                for v in s.iter_mut() {
                    *v = _mm_aesenc_si128(*v, *r);
                }
            }
            for j in 0..8 {
                let mut e = _mm_aesenclast_si128(s[j], k[10]);
                if let Mode::Hash = mode {
                    e = _mm_xor_si128(e, x[j]);
                }
                _mm_storeu_si128(p.add(i + j), e);
            }
            i += 8;
        }
        while i < n {
            let x = input(i);
            let mut s = _mm_xor_si128(x, k[0]);
            for r in &k[1..10] {
                s = _mm_aesenc_si128(s, *r);
            }
            let mut e = _mm_aesenclast_si128(s, k[10]);
            if let Mode::Hash = mode {
                e = _mm_xor_si128(e, x);
            }
            _mm_storeu_si128(p.add(i), e);
            i += 1;
        }
    }

    /// VAES on 512-bit registers: 16 blocks per step (four registers of
    /// four). Returns how many blocks it did (a multiple of 16); the caller
    /// finishes the rest with AES-NI.
    #[target_feature(enable = "vaes", enable = "avx512f", enable = "aes", enable = "sse2")]
    unsafe fn apply_vaes(rk: &[u128; 11], blocks: &mut [Block], mode: Mode) -> usize {
        let k: [__m512i; 11] = rk.map(|r| _mm512_broadcast_i32x4(m128(r)));
        let p = blocks.as_mut_ptr().cast::<__m512i>();
        let n = blocks.len() / 16 * 16;
        // Counter mode: register j holds c+4j .. c+4j+3. When the low
        // halves do not wrap anywhere in the batch (all but one batch in
        // 2^64), a 64-bit lane add steps them; otherwise build each step
        // from scalars.
        let counters = |base: u128| -> [__m512i; 4] {
            core::array::from_fn(|j| {
                let c = |d: u128| base.wrapping_add((4 * j) as u128 + d);
                let (a, b, cc, d) = (c(0), c(1), c(2), c(3));
                _mm512_set_epi64(
                    (d >> 64) as i64,
                    d as i64,
                    (cc >> 64) as i64,
                    cc as i64,
                    (b >> 64) as i64,
                    b as i64,
                    (a >> 64) as i64,
                    a as i64,
                )
            })
        };
        let (mut ctr, simd_step) = match mode {
            Mode::Counter(c) => (counters(c), (c as u64).checked_add(n as u64).is_some()),
            _ => ([_mm512_setzero_si512(); 4], false),
        };
        let sixteen = _mm512_set_epi64(0, 16, 0, 16, 0, 16, 0, 16);
        let mut i = 0;
        while i < n {
            let x: [__m512i; 4] = match mode {
                Mode::Counter(c) => {
                    if i > 0 {
                        if simd_step {
                            for v in ctr.iter_mut() {
                                *v = _mm512_add_epi64(*v, sixteen);
                            }
                        } else {
                            ctr = counters(c.wrapping_add(i as u128));
                        }
                    }
                    ctr
                }
                // SAFETY: blocks i..i+16 are in bounds; 4 blocks per register.
                Mode::Encrypt | Mode::Hash => {
                    core::array::from_fn(|j| _mm512_loadu_si512(p.add(i / 4 + j).cast()))
                }
            };
            let mut s: [__m512i; 4] = core::array::from_fn(|j| _mm512_xor_si512(x[j], k[0]));
            for r in &k[1..10] {
                for v in s.iter_mut() {
                    *v = _mm512_aesenc_epi128(*v, *r);
                }
            }
            for j in 0..4 {
                let mut e = _mm512_aesenclast_epi128(s[j], k[10]);
                if let Mode::Hash = mode {
                    e = _mm512_xor_si512(e, x[j]);
                }
                _mm512_storeu_si512(p.add(i / 4 + j).cast(), e);
            }
            i += 16;
        }
        n
    }
}

/// The second half of a [`Prg`]'s ChaCha12 key (the first is the seed).
pub const PRG_DOMAIN: [u8; 16] = *b"webproof-prg-c12";

/// The ChaCha12 keystream under `seed ‖ PRG_DOMAIN`, read in 16-byte blocks.
#[derive(Clone)]
pub struct Prg {
    stream: crate::chacha::ChaCha12Stream,
    /// Byte position in the stream.
    pos: u64,
    spare: Option<Block>,
}

/// The ChaCha12 stream of a seed (shared with `webproof_ot`'s lockstep
/// streams, which must read the same bytes).
pub fn seed_stream(seed: Block) -> crate::chacha::ChaCha12Stream {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(&seed.to_bytes());
    key[16..].copy_from_slice(&PRG_DOMAIN);
    crate::chacha::ChaCha12Stream::new(key)
}

/// `out` ← the blocks of `stream` from byte `offset` (little-endian, as
/// [`Block::from_bytes`] reads them).
pub fn fill_blocks_at(stream: &crate::chacha::ChaCha12Stream, offset: u64, out: &mut [Block]) {
    const CHUNK: usize = 64;
    let mut bytes = [0u8; 16 * CHUNK];
    for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
        let buf = &mut bytes[..16 * chunk.len()];
        stream.fill(offset + (16 * CHUNK * i) as u64, buf);
        for (b, src) in chunk.iter_mut().zip(buf.chunks_exact(16)) {
            *b = Block::from_bytes(src.try_into().expect("16 bytes"));
        }
    }
}

impl Prg {
    /// A generator keyed by `seed`.
    pub fn new(seed: Block) -> Self {
        Prg {
            stream: seed_stream(seed),
            pos: 0,
            spare: None,
        }
    }

    /// Fill `out` with the next pseudo-random blocks (block `i` of the
    /// stream is keystream bytes `16 i .. 16 i + 16`).
    pub fn fill_blocks(&mut self, out: &mut [Block]) {
        fill_blocks_at(&self.stream, self.pos, out);
        self.pos += 16 * out.len() as u64;
    }
    /// One pseudo-random block.
    pub fn next_block(&mut self) -> Block {
        let mut b = [Block::ZERO];
        self.fill_blocks(&mut b);
        b[0]
    }

    /// `n` pseudo-random blocks.
    pub fn blocks(&mut self, n: usize) -> Vec<Block> {
        let mut v = vec![Block::ZERO; n];
        self.fill_blocks(&mut v);
        v
    }
}

impl RngCore for Prg {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        match self.spare.take() {
            Some(b) => (b.0 >> 64) as u64,
            None => {
                let b = self.next_block();
                self.spare = Some(b);
                b.0 as u64
            }
        }
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(16) {
            let b = self.next_block().to_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

// A stream cipher's keystream under a random key: fine as a CSPRNG.
impl CryptoRng for Prg {}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn deterministic_and_seed_dependent() {
        let a = Prg::new(Block(1)).blocks(20);
        let b = Prg::new(Block(1)).blocks(20);
        let c = Prg::new(Block(2)).blocks(20);
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Chunked filling gives the same stream as one call.
        let mut p = Prg::new(Block(1));
        let mut x = p.blocks(3);
        x.extend(p.blocks(17));
        assert_eq!(a, x);
    }

    /// The stream is ChaCha12 under `seed ‖ PRG_DOMAIN` by definition
    /// (checked with the `chacha20` crate, read from its start).
    #[test]
    fn prg_is_chacha12() {
        use chacha20::cipher::{KeyIvInit, StreamCipher};
        let seed = Block(0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100);
        let mut key = seed.to_bytes().to_vec();
        key.extend_from_slice(b"webproof-prg-c12");
        let mut reference = chacha20::ChaCha12::new_from_slices(&key, &[0u8; 12]).unwrap();
        let mut want = vec![0u8; 16 * 300];
        reference.apply_keystream(&mut want);
        let mut p = Prg::new(seed);
        let mut got = p.blocks(1);
        got.extend(p.blocks(130));
        got.extend(p.blocks(169));
        for (i, g) in got.iter().enumerate() {
            assert_eq!(g.to_bytes()[..], want[16 * i..16 * i + 16], "block {i}");
        }
    }

    /// FIPS-197 appendix C.1 through the batch interface.
    #[test]
    fn fips197_vector() {
        let key = Block::from_bytes(core::array::from_fn(|i| i as u8));
        let pt = Block::from_bytes(core::array::from_fn(|i| (i as u8) * 0x11));
        let mut b = [pt; 19];
        AesBatch::new(key).encrypt(&mut b);
        let ct = [
            0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
            0xc5, 0x5a,
        ];
        assert!(b.iter().all(|x| x.to_bytes() == ct));
    }

    /// Every kernel (wide, eight-wide, single, portable) against the `aes`
    /// crate, on random keys, lengths and counters (including counters whose
    /// low half or whole value wraps inside the batch).
    #[test]
    fn batch_kernels_match_aes_crate() {
        let mut rng = rand::thread_rng();
        for round in 0..60 {
            let key = Block(rng.gen());
            let soft = Aes128::new(&key.to_bytes().into());
            let len = [0usize, 1, 7, 8, 15, 16, 17, 33, 100, 257][round % 10];
            let input: Vec<Block> = (0..len).map(|_| Block(rng.gen())).collect();
            let reference = |x: Block| {
                let mut b: aes::Block = x.to_bytes().into();
                soft.encrypt_block(&mut b);
                Block::from_bytes(b.into())
            };
            let counter = match round % 4 {
                0 => u128::MAX - 20,
                1 => u64::MAX as u128 - 20 + ((rng.gen::<u64>() as u128) << 64),
                _ => rng.gen(),
            };
            let variants = AesBatch::variants(key);
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("aes") {
                assert_eq!(variants.len(), 3);
            }
            for fast in variants {
                let mut e = input.clone();
                fast.encrypt(&mut e);
                let mut h = input.clone();
                fast.hash_in_place(&mut h);
                let mut c = vec![Block::ZERO; len];
                fast.encrypt_counter(counter, &mut c);
                for i in 0..len {
                    assert_eq!(e[i], reference(input[i]));
                    assert_eq!(h[i], reference(input[i]) ^ input[i]);
                    assert_eq!(c[i], reference(Block(counter.wrapping_add(i as u128))));
                }
            }
        }
    }
}

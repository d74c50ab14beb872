//! SoftSpokenOT correlated-OT extension with a global `Delta`, maliciously
//! secure through a KOS-style consistency check.
//!
//! This module owns the extension protocol: from 128 base OTs (run once in
//! `setup`) it produces any number of random COTs in the convention of
//! [`webproof_core::cot`]: the **sender** ([`SoftSpokenSender`], the ZK
//! verifier) holds `Delta` with `lsb = 1` and keys `K_i` with `lsb = 0`; the
//! **receiver** ([`SoftSpokenReceiver`], the ZK prover) holds
//! `M_i = K_i ^ b_i*Delta`, `b_i = lsb(M_i)`. Roles of the base OTs are
//! reversed: the COT receiver is the base-OT sender.
//!
//! # Protocol (Roy, "SoftSpokenOT", CRYPTO 2022; small-field subspace VOLE
//! with the repetition code, i.e. plain COT)
//!
//! `Delta` is split into `m = 128/k` chunks `alpha_l` of `k` bits.
//! - *Setup.* For each chunk `l` the receiver grows a GGM tree with `2^k`
//!   leaves (seeds `s_{l,x}`); through `k` base OTs the sender learns every
//!   leaf except `s_{l,alpha_l}` (see [`crate::ggm`]).
//! - *Extension* of a batch of `N` COTs. Each seed is expanded into `N`
//!   pseudo-random bits `r_{l,x}`. Per COT `j` and chunk `l` the receiver
//!   computes `u_l = sum_x r_{l,x}` (a bit) and `v_l = sum_x x*r_{l,x}` (a
//!   `k`-bit vector); the sender, lacking only `r_{l,alpha}`, computes
//!   `w_l = sum_{x != alpha} (alpha ^ x)*r_{l,x} = v_l ^ u_l*alpha_l`.
//!   The receiver sends `c_l = u_l ^ u_0` for `l >= 1` (`m - 1` bits per
//!   COT) and the sender adds `c_l*alpha_l`, so that for the concatenations
//!   `W = V ^ u_0*Delta`: a COT. Finally the sender normalises
//!   `K = W ^ lsb(W)*Delta` and the receiver keeps `M = V`.
//! - *Consistency check* (per `extend` call). Every batch carries 128 extra
//!   COTs. The challenges `chi_j` in GF(2^128) (the 128 extra COTs get
//!   `chi = x^i`) come from a seed that both parties derive (Fiat–Shamir)
//!   as a SHA-256 hash of the setup's tree message, the call's number and
//!   size, and every correction of the call, so the receiver sends its
//!   answer right behind its corrections, with no round trip;
//!   the receiver answers `U = sum chi_j*b_j`, `V = sum chi_j*M_j`, and the
//!   sender checks `sum chi_j*K_j ^ U*Delta == V`. The extra COTs make `U`
//!   uniformly random (they contribute `sum x^i*b_i`, the bits themselves)
//!   and `V` is then determined by `U` and the sender's own data, so the
//!   check reveals nothing about the receiver's bits; they are then dropped.
//!
//! # Security
//!
//! Assumptions: the base OTs ([`crate::base`], CDH + random oracle), ChaCha12
//! as a PRG (GGM tree and seed expansion, [`webproof_core::Prg`]), SHA-256 as a random oracle for the
//! check's challenges. Parameters: `k = 8` by default, `m =
//! 16` trees; `k` in `{1, 2, 4, 8}` (k = 1 is IKNP/KOS).
//! - *Malicious sender* (ZK verifier): it only ever receives the correction
//!   bits, which are one-time padded by the pseudo-random `u_0` (it lacks
//!   `r_{0,alpha}`), and the check answer, which the extra COTs mask. Its
//!   choice of `Delta` (the punctured leaves) is its own business.
//! - *Malicious receiver* (ZK prover) can send corrections that are not of
//!   the form `u_l ^ u_0`, or inconsistent GGM sums in setup. Either makes
//!   the sender's `W` deviate from `V ^ u*Delta` by a term that depends on
//!   chunks of `Delta` the receiver does not know. After it has fixed every
//!   correction, the check is a random GF(2^128)-linear test of those
//!   deviations (random in the random-oracle model: its seed hashes every
//!   correction, so grinding `q` hashes gains about `q / 2^128`, and whether
//!   a deviation passes still depends on `Delta`, which no offline
//!   computation reveals); to pass it the receiver must predict the deviation, i.e.
//!   guess the involved `Delta` bits. This is the standard *selective
//!   failure* leakage of KOS/SoftSpokenOT: learning `t` bits of `Delta`
//!   costs an abort with probability `1 - 2^-t`, and otherwise (up to the
//!   `2^-128`-ish chance of a random linear test missing a deviation) the
//!   outputs are consistent COTs. Consumers (Ferret, QuickSilver) are proven
//!   with this leakage. The tests show both: a cheater is caught unless it
//!   guesses, and passes exactly when its guess was right.
//! - A failed check poisons the sender: it refuses every later `extend`
//!   (the correlations must never be reused after a detected attack). Any
//!   other failure inside `extend` (transport, malformed frame) does the
//!   same on either side, since the seed streams are then out of step.
//!
//! # Side channels
//!
//! `Delta` never steers a branch or a memory index: the sender expands the
//! punctured leaf's slot with an arbitrary (zero) seed like any other and
//! removes its contribution algebraically (`w_l = V' ^ alpha_l*U'`, the
//! arbitrary stream cancels), the GGM reconstruction is branch-free in
//! `alpha` ([`crate::ggm::reconstruct`]), and corrections and the lsb
//! normalisation are applied with masks. The receiver's bits are handled
//! the same way in the check.
//!
//! Outputs are raw correlations (no hashing): they are COTs, not random OTs.
//! To turn them into random OTs, hash with a correlation-robust hash.

use crate::streams::{AesBlock, Streams};
use crate::{base, ggm, transpose::transpose128};
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::error::Result;
use webproof_core::{Block, Channel, Error, Io, Prg};

/// Default number of base OTs per GGM tree (bits of `Delta` per chunk).
/// k = 8: 15 bits per COT of traffic, 32 PRG blocks per COT per side.
pub const DEFAULT_K: usize = 8;

/// COTs computed per correction message (bounds memory and message size).
const CHUNK_COTS: usize = 8192;
/// Extra COTs per `extend` call that mask the consistency check.
const MASK_COTS: usize = 128;
/// Largest `extend` request (a sanity bound on local buffers).
pub const MAX_EXTEND: usize = 1 << 30;

fn check_k(k: usize) -> Result<()> {
    if matches!(k, 1 | 2 | 4 | 8) {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "SoftSpokenOT chunk size k = {k}; supported: 1, 2, 4, 8"
        )))
    }
}

fn check_n(n: usize) -> Result<()> {
    if n > MAX_EXTEND {
        return Err(Error::Usage(format!(
            "extend({n}) exceeds the limit of {MAX_EXTEND} COTs per call"
        )));
    }
    Ok(())
}

/// The sender of the COT extension: holds `Delta` (the ZK verifier).
pub struct SoftSpokenSender {
    k: usize,
    delta: Block,
    /// Per tree `l`, `2^k` seed streams, index `l*2^k + x`; the punctured
    /// leaf `alpha_l` is unknown and replaced by the all-zero seed.
    streams: Streams,
    /// Binds the consistency checks' challenges to this instance.
    salt: [u8; 32],
    /// `extend` calls so far (bound into each call's challenges).
    calls: u64,
    /// Set when a check failed: no more COTs from this instance.
    poisoned: bool,
}

/// The receiver of the COT extension (the ZK prover).
pub struct SoftSpokenReceiver {
    k: usize,
    /// Set while an `extend` runs and cleared on success: after a failure
    /// the streams are out of step with the peer.
    broken: bool,
    /// Per tree `l`, all `2^k` seed streams, index `l*2^k + x`.
    streams: Streams,
    /// As the sender's.
    salt: [u8; 32],
    calls: u64,
}

/// The Fiat–Shamir transcript of one `extend` call's consistency check.
///
/// Soundness: the errors of a receiver's corrections are fixed by the
/// corrections, which the seed hashes, so a cheating receiver that makes
/// `q` hash queries finds challenges under which its errors vanish with
/// probability about `q / 2^128` (random-oracle model), as for the proof's
/// own Fiat–Shamir challenges; and whether a deviation would pass still
/// depends on `Delta`, which it learns nothing about offline. The salt (a
/// hash of the setup's tree message, masked by base-OT keys that depend on
/// the sender's random choices) makes every instance's challenges fresh.
struct CheckTranscript(Sha256);

impl CheckTranscript {
    fn salt(tree_message: &[u8]) -> [u8; 32] {
        Sha256::new()
            .chain_update(b"webproof-ot/softspoken/instance/v1")
            .chain_update(tree_message)
            .finalize()
            .into()
    }

    fn new(salt: &[u8; 32], call: u64, n: usize) -> Self {
        CheckTranscript(
            Sha256::new()
                .chain_update(b"webproof-ot/softspoken/check/v1")
                .chain_update(salt)
                .chain_update(call.to_le_bytes())
                .chain_update((n as u64).to_le_bytes()),
        )
    }

    fn absorb(&mut self, corr: &[Block]) {
        for c in corr {
            self.0.update(c.to_bytes());
        }
    }

    fn seed(self) -> Block {
        let d = self.0.finalize();
        Block::from_bytes(d[..16].try_into().expect("16 bytes"))
    }
}

impl SoftSpokenSender {
    /// Run the base OTs and GGM setup with the default `k`.
    pub async fn setup<T: Io, R: RngCore + CryptoRng>(
        channel: &mut Channel<T>,
        rng: &mut R,
    ) -> Result<Self> {
        Self::setup_with_k(channel, DEFAULT_K, rng).await
    }

    /// Setup with `k` base OTs per tree (the peer must use the same `k`).
    pub async fn setup_with_k<T: Io, R: RngCore + CryptoRng>(
        channel: &mut Channel<T>,
        k: usize,
        rng: &mut R,
    ) -> Result<Self> {
        check_k(k)?;
        let m = 128 / k;
        let delta = Block(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128).with_lsb(true);
        let alpha = |l: usize| ((delta.0 >> (l * k)) as usize) & ((1 << k) - 1);
        let choices: Vec<bool> = (0..m)
            .flat_map(|l| (1..=k).map(move |i| ggm::choice_bit(alpha(l), k, i)))
            .collect();
        let keys = base::receive(channel, &choices, rng).await?;
        let (masked, salt) = recv_tree_message(channel, k).await?;
        let mut seeds = Vec::with_capacity(m << k);
        for l in 0..m {
            let a = alpha(l);
            let leaves = ggm::reconstruct(
                k,
                a,
                &keys[l * k..(l + 1) * k],
                &masked[l * 2 * k..(l + 1) * 2 * k],
            );
            // Leaf alpha comes back as zero; its stream is cancelled later.
            seeds.extend(leaves);
        }
        Ok(SoftSpokenSender {
            k,
            delta,
            streams: Streams::new(seeds),
            salt,
            calls: 0,
            poisoned: false,
        })
    }

    /// The chunk size `k` this instance was set up with.
    pub fn k(&self) -> usize {
        self.k
    }
}

impl SoftSpokenReceiver {
    /// Run the base OTs and GGM setup with the default `k`.
    pub async fn setup<T: Io, R: RngCore + CryptoRng>(
        channel: &mut Channel<T>,
        rng: &mut R,
    ) -> Result<Self> {
        Self::setup_with_k(channel, DEFAULT_K, rng).await
    }

    /// Setup with `k` base OTs per tree (the peer must use the same `k`).
    pub async fn setup_with_k<T: Io, R: RngCore + CryptoRng>(
        channel: &mut Channel<T>,
        k: usize,
        rng: &mut R,
    ) -> Result<Self> {
        Self::setup_inner(channel, k, rng, |_| {}).await
    }

    /// The setup in two steps: [`SoftSpokenReceiverSetup::first_message`]
    /// (the base-OT sender's message, which depends on nothing from the
    /// peer) can travel in a flight the caller sends anyway, e.g. with its
    /// hello; [`SoftSpokenReceiverSetup::finish`] then runs the rest. The
    /// peer runs [`SoftSpokenSender::setup_with_k`] unchanged.
    pub fn begin<R: RngCore + CryptoRng>(k: usize, rng: &mut R) -> Result<SoftSpokenReceiverSetup> {
        check_k(k)?;
        Ok(SoftSpokenReceiverSetup {
            k,
            base: base::Sender::new(rng),
        })
    }

    /// Setup; `tamper` may alter the masked GGM sums (tests of a cheater).
    async fn setup_inner<T: Io, R: RngCore + CryptoRng>(
        channel: &mut Channel<T>,
        k: usize,
        rng: &mut R,
        tamper: impl FnOnce(&mut [Block]),
    ) -> Result<Self> {
        let start = Self::begin(k, rng)?;
        channel.send(&start.first_message()).await?;
        channel.flush().await?;
        start.finish_inner(channel, rng, tamper).await
    }
}

/// A [`SoftSpokenReceiver`] whose first message is made but whose setup is
/// not finished (see [`SoftSpokenReceiver::begin`]).
pub struct SoftSpokenReceiverSetup {
    k: usize,
    base: base::Sender,
}

impl SoftSpokenReceiverSetup {
    /// The first message of the setup: send it as one frame of the
    /// channel that [`Self::finish`] then uses (or of the same byte stream).
    pub fn first_message(&self) -> [u8; base::SENDER_MESSAGE_LEN] {
        self.base.message()
    }

    /// The rest of the setup, once [`Self::first_message`] is on its way.
    pub async fn finish<T: Io, R: RngCore + CryptoRng>(
        self,
        channel: &mut Channel<T>,
        rng: &mut R,
    ) -> Result<SoftSpokenReceiver> {
        self.finish_inner(channel, rng, |_| {}).await
    }

    async fn finish_inner<T: Io, R: RngCore + CryptoRng>(
        self,
        channel: &mut Channel<T>,
        rng: &mut R,
        tamper: impl FnOnce(&mut [Block]),
    ) -> Result<SoftSpokenReceiver> {
        let k = self.k;
        let m = 128 / k;
        let pairs = self.base.finish(channel, m * k).await?;
        let mut masked = Vec::with_capacity(m * 2 * k);
        let mut seeds = Vec::with_capacity(m << k);
        for l in 0..m {
            let root = Block(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128);
            let (leaves, sums) = ggm::expand_tree(root, k);
            masked.extend(ggm::mask_sums(&sums, &pairs[l * k..(l + 1) * k]));
            seeds.extend(leaves);
        }
        tamper(&mut masked);
        let mut msg = Vec::with_capacity(1 + masked.len() * 16);
        msg.push(k as u8);
        for b in &masked {
            msg.extend_from_slice(&b.to_bytes());
        }
        channel.send(&msg).await?;
        channel.flush().await?;
        Ok(SoftSpokenReceiver {
            k,
            broken: false,
            streams: Streams::new(seeds),
            salt: CheckTranscript::salt(&msg),
            calls: 0,
        })
    }
}

impl SoftSpokenReceiver {
    /// The chunk size `k` this instance was set up with.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Compute the receiver's columns and the correction blocks
    /// (`(m-1)*b` blocks, tree-major) for `b*128` COTs.
    fn columns(
        &mut self,
        b: usize,
        scratch: &mut Vec<AesBlock>,
        cols: &mut [Block],
        corrections: &mut Vec<Block>,
    ) {
        let mut u = Vec::new();
        party_columns(&mut self.streams, self.k, b, scratch, cols, &mut u);
        // c_l = u_l ^ u_0 for l >= 1.
        corrections.clear();
        let (u0, rest) = u.split_at(b);
        for ul in rest.chunks_exact(b) {
            corrections.extend(ul.iter().zip(u0).map(|(x, z)| *x ^ *z));
        }
    }

    /// The extension as run by the receiver; `cheat` lets tests deviate.
    async fn extend_inner<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
        cheat: &mut dyn Cheat,
    ) -> Result<()> {
        if self.broken {
            return Err(Error::Aborted(
                "COT extension refused: an earlier extend failed".into(),
            ));
        }
        check_n(n)?;
        let start = out.len();
        self.broken = true;
        let res = self.extend_run(channel, n, out, cheat).await;
        match res {
            Ok(()) => self.broken = false,
            // No partial batch: the caller sees all COTs of a call or none.
            Err(_) => out.truncate(start),
        }
        res
    }

    async fn extend_run<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
        cheat: &mut dyn Cheat,
    ) -> Result<()> {
        check_n(n)?;
        if n == 0 {
            return Ok(());
        }
        let n_pad = n.div_ceil(128) * 128;
        let total = n_pad + MASK_COTS;
        let start = out.len();
        out.reserve(n);
        let mut extra = Vec::with_capacity(total - n);
        let (mut scratch, mut corr) = (Vec::new(), Vec::new());
        let mut cols = vec![Block::ZERO; 128 * (CHUNK_COTS / 128)];
        let mut transcript = CheckTranscript::new(&self.salt, self.calls, n);
        self.calls += 1;
        let mut done = 0;
        while done < total {
            let rows = (total - done).min(CHUNK_COTS);
            let b = rows / 128;
            self.columns(b, &mut scratch, &mut cols[..128 * b], &mut corr);
            cheat.corrections(done, b, &mut corr);
            transcript.absorb(&corr);
            channel.send_blocks(&corr).await?;
            emit_rows(&cols[..128 * b], b, done, n, out, &mut extra, |r| r);
            done += rows;
        }
        let seed = transcript.seed();
        let (mut v, mut u) = combine(seed, &out[start..], &extra, n_pad);
        cheat.answer(seed, &mut u, &mut v);
        channel.send_blocks(&[u, v]).await?;
        channel.flush().await?;
        Ok(())
    }
}

/// The sender's half of the setup message: the receiver's `k` (one byte,
/// so that parties configured differently fail here, not later) and the
/// `2k` masked level sums of each of the `128/k` trees (always 256 blocks).
/// Returns the sums and the salt of the instance's check transcripts.
async fn recv_tree_message<T: Io>(
    channel: &mut Channel<T>,
    k: usize,
) -> Result<(Vec<Block>, [u8; 32])> {
    let msg = channel.recv_exact(1 + 256 * 16).await?;
    if msg[0] as usize != k {
        return Err(Error::Malformed(format!(
            "SoftSpokenOT setup: peer uses k = {}, this side k = {k}",
            msg[0]
        )));
    }
    let sums = msg[1..]
        .chunks_exact(16)
        .map(|c| Block::from_bytes(c.try_into().expect("16-byte chunk")))
        .collect();
    Ok((sums, CheckTranscript::salt(&msg)))
}

/// Hooks for a deviating receiver in tests; the honest one changes nothing.
trait Cheat: Send {
    /// May alter the correction blocks of the batch starting at COT `first`.
    fn corrections(&mut self, _first: usize, _b: usize, _corr: &mut [Block]) {}
    /// May alter the check answer.
    fn answer(&mut self, _seed: Block, _u: &mut Block, _v: &mut Block) {}
}

struct Honest;
impl Cheat for Honest {}

/// Given `2^k` expanded streams in `scratch` (each `b` blocks, index `x`),
/// write `k` columns `cols[i] = sum_{x: bit i of x} r_x` and leave
/// `sum_x r_x` in `scratch[..b]`. Pairwise halving: about `2^(k+1)` block
/// XORs per block of COTs instead of `k*2^(k-1)`.
/// Expand `b` blocks of every stream (tree-major, `2^k` per tree) and
/// reduce them: `cols[(l*k + i)*b + q] = sum_{x: bit i of x} r_{l,x}` and
/// `u[l*b + q] = sum_x r_{l,x}`. Both parties run exactly this; the sender's
/// punctured slot holds a stream of an arbitrary seed, whose contribution it
/// cancels afterwards (see [`SoftSpokenSender`]'s extend).
fn party_columns(
    streams: &mut Streams,
    k: usize,
    b: usize,
    scratch: &mut Vec<AesBlock>,
    cols: &mut [Block],
    u: &mut Vec<Block>,
) {
    let per_tree = 1 << k;
    scratch.resize(b << k, AesBlock::default());
    u.clear();
    streams.begin(b);
    for l in 0..128 / k {
        streams.fill(l * per_tree, scratch);
        tree_columns(k, b, scratch, &mut cols[l * k * b..(l + 1) * k * b]);
        // After the reduction scratch[..b] holds u_l = sum_x r_{l,x}.
        u.extend(scratch[..b].iter().map(|x| Block(ld(x))));
    }
    streams.advance();
}

fn tree_columns(k: usize, b: usize, scratch: &mut [AesBlock], cols: &mut [Block]) {
    let mut live = 1usize << k;
    for i in 0..k {
        let col = &mut cols[i * b..(i + 1) * b];
        col.fill(Block::ZERO);
        // At this stage buffer t holds the sum of r_x over all x with x >> i == t.
        for t in 0..live / 2 {
            if t == 0 {
                let (even, rest) = scratch.split_at_mut(b);
                for ((c, e), o) in col.iter_mut().zip(even.iter_mut()).zip(&rest[..b]) {
                    let o = ld(o);
                    c.0 ^= o;
                    st(e, ld(e) ^ o);
                }
            } else {
                // Slot t (< 2t) was consumed already, so it can take the pair's sum.
                let (head, tail) = scratch.split_at_mut(2 * t * b);
                let dst = &mut head[t * b..(t + 1) * b];
                let (even, odd) = tail[..2 * b].split_at(b);
                for (((c, d), e), o) in col.iter_mut().zip(dst.iter_mut()).zip(even).zip(odd) {
                    let o = ld(o);
                    c.0 ^= o;
                    st(d, ld(e) ^ o);
                }
            }
        }
        live /= 2;
    }
}

#[inline(always)]
fn ld(x: &AesBlock) -> u128 {
    u128::from_le_bytes((*x).into())
}

#[inline(always)]
fn st(x: &mut AesBlock, v: u128) {
    *x = v.to_le_bytes().into();
}

/// Transpose `b` groups of 128 columns into rows; row `done + j` goes to
/// `out` when below `n`, else to `extra`. `map` post-processes each row.
fn emit_rows(
    cols: &[Block],
    b: usize,
    done: usize,
    n: usize,
    out: &mut Vec<Block>,
    extra: &mut Vec<Block>,
    map: impl Fn(Block) -> Block,
) {
    let mut mat = [0u128; 128];
    for q in 0..b {
        for (c, row) in mat.iter_mut().enumerate() {
            *row = cols[c * b + q].0;
        }
        transpose128(&mut mat);
        for (r, row) in mat.iter().enumerate() {
            let idx = done + q * 128 + r;
            let v = map(Block(*row));
            if idx < n {
                out.push(v);
            } else {
                extra.push(v);
            }
        }
    }
}

/// The check sums over all rows of one `extend` call (`main` then `extra`):
/// `(sum chi_j*row_j, sum chi_j*lsb(row_j))`, with `chi_j` from `seed` for
/// `j < n_pad` and `x^(j - n_pad)` for the masking rows.
fn combine(seed: Block, main: &[Block], extra: &[Block], n_pad: usize) -> (Block, Block) {
    let mut prg = Prg::new(seed);
    let mut chis = [Block::ZERO; 64];
    let (mut lo, mut hi, mut bits) = (0u128, 0u128, 0u128);
    for (j, row) in main.iter().chain(extra).enumerate() {
        let chi = if j < n_pad {
            if j % 64 == 0 {
                prg.fill_blocks(&mut chis);
            }
            chis[j % 64]
        } else {
            Block::power_of_x(j - n_pad)
        };
        let (l, h) = chi.clmul(*row);
        lo ^= l;
        hi ^= h;
        // Branch-free: add chi when the row's bit (its lsb) is set.
        bits ^= chi.0 & (row.0 & 1).wrapping_neg();
    }
    (Block::reduce(lo, hi), Block(bits))
}

impl RandomCotSender for SoftSpokenSender {
    fn delta(&self) -> Block {
        self.delta
    }

    async fn extend<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> Result<()> {
        if self.poisoned {
            return Err(Error::Aborted(
                "COT extension refused: an earlier extend failed (check or transport)".into(),
            ));
        }
        check_n(n)?;
        if n == 0 {
            return Ok(());
        }
        // Any failure from here on leaves the seed streams out of step with
        // the peer (or follows an attack): only a success clears this.
        self.poisoned = true;
        let (k, m, delta) = (self.k, 128 / self.k, self.delta);
        let n_pad = n.div_ceil(128) * 128;
        let total = n_pad + MASK_COTS;
        let start = out.len();
        out.reserve(n);
        let mut extra = Vec::with_capacity(total - n);
        let (mut scratch, mut u) = (Vec::new(), Vec::new());
        let mut cols = vec![Block::ZERO; 128 * (CHUNK_COTS / 128)];
        let mut transcript = CheckTranscript::new(&self.salt, self.calls, n);
        self.calls += 1;
        let mut done = 0;
        while done < total {
            let rows = (total - done).min(CHUNK_COTS);
            let b = rows / 128;
            party_columns(
                &mut self.streams,
                k,
                b,
                &mut scratch,
                &mut cols[..128 * b],
                &mut u,
            );
            let corr = match channel.recv_blocks((m - 1) * b).await {
                Ok(c) => c,
                Err(e) => {
                    out.truncate(start);
                    return Err(e.into());
                }
            };
            transcript.absorb(&corr);
            // With r_alpha replaced by an arbitrary stream z, the reduction gave
            // V' = V ^ alpha*z-terms and U' = u_l ^ r_alpha ^ z; the wanted
            // w_l = sum_x (alpha ^ x) r_x = V' ^ alpha*U' (the z terms cancel),
            // and the correction adds alpha*c_l. So: columns whose Delta bit is
            // set get U'_l ^ c_l. Branch-free in Delta.
            for l in 0..m {
                for i in 0..k {
                    let mask = ((delta.0 >> (l * k + i)) & 1).wrapping_neg();
                    let col = &mut cols[(l * k + i) * b..(l * k + i + 1) * b];
                    let ul = &u[l * b..(l + 1) * b];
                    if l == 0 {
                        for (x, y) in col.iter_mut().zip(ul) {
                            x.0 ^= y.0 & mask;
                        }
                    } else {
                        let c = &corr[(l - 1) * b..l * b];
                        for ((x, y), z) in col.iter_mut().zip(ul).zip(c) {
                            x.0 ^= (y.0 ^ z.0) & mask;
                        }
                    }
                }
            }
            emit_rows(&cols[..128 * b], b, done, n, out, &mut extra, |w| {
                w ^ Block::select(w.lsb(), delta)
            });
            done += rows;
        }
        let seed = transcript.seed();
        let answer = channel.recv_blocks(2).await;
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                out.truncate(start);
                return Err(e.into());
            }
        };
        let (u, v) = (answer[0], answer[1]);
        let (lhs, _) = combine(seed, &out[start..], &extra, n_pad);
        if lhs ^ u.gf_mul(delta) != v {
            out.truncate(start);
            return Err(Error::CheckFailed(
                "SoftSpokenOT consistency check: the receiver's COTs are inconsistent".into(),
            ));
        }
        self.poisoned = false;
        Ok(())
    }
}

impl RandomCotReceiver for SoftSpokenReceiver {
    async fn extend<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> Result<()> {
        self.extend_inner(channel, n, out, &mut Honest).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;
    use webproof_core::{memory_duplex, ChannelError, MemoryIo};

    type Pair = (
        SoftSpokenSender,
        SoftSpokenReceiver,
        Channel<MemoryIo>,
        Channel<MemoryIo>,
    );

    fn setup_tampered(k: usize, seed: u64, tamper: impl FnOnce(&mut [Block])) -> Pair {
        let (a, b) = memory_duplex();
        let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
        let mut rs = ChaCha20Rng::seed_from_u64(seed);
        let mut rr = ChaCha20Rng::seed_from_u64(seed.wrapping_add(1 << 32));
        let (s, r) = block_on(async {
            futures::join!(
                SoftSpokenSender::setup_with_k(&mut ca, k, &mut rs),
                SoftSpokenReceiver::setup_inner(&mut cb, k, &mut rr, tamper)
            )
        });
        (s.unwrap(), r.unwrap(), ca, cb)
    }

    fn setup(k: usize, seed: u64) -> Pair {
        setup_tampered(k, seed, |_| {})
    }

    /// Run one extension with a (possibly cheating) receiver.
    fn extend_with(
        p: &mut Pair,
        n: usize,
        cheat: &mut dyn Cheat,
    ) -> (Result<Vec<Block>>, Result<Vec<Block>>) {
        let (s, r, ca, cb) = p;
        let (mut k, mut m) = (Vec::new(), Vec::new());
        let (x, y) = block_on(async {
            futures::join!(
                s.extend(ca, n, &mut k),
                r.extend_inner(cb, n, &mut m, cheat)
            )
        });
        (x.map(|_| k), y.map(|_| m))
    }

    fn assert_cots(delta: Block, keys: &[Block], macs: &[Block]) {
        assert_eq!(keys.len(), macs.len());
        assert!(delta.lsb());
        let mut ones = 0usize;
        for (k, m) in keys.iter().zip(macs) {
            assert!(!k.lsb());
            let b = m.lsb();
            ones += b as usize;
            assert_eq!(*m, *k ^ Block::select(b, delta));
        }
        if keys.len() >= 1000 {
            let n = keys.len();
            assert!(ones > n * 4 / 10 && ones < n * 6 / 10, "{ones} of {n}");
        }
    }

    #[test]
    fn correlation_holds_for_all_k() {
        for k in [1, 2, 4, 8] {
            let mut p = setup(k, k as u64);
            let delta = p.0.delta();
            for n in [1usize, 127, 128, 129, 5000, CHUNK_COTS * 2 + 300] {
                let (x, y) = extend_with(&mut p, n, &mut Honest);
                let (keys, macs) = (x.unwrap(), y.unwrap());
                assert_eq!(keys.len(), n);
                assert_cots(delta, &keys, &macs);
            }
        }
    }

    #[test]
    fn outputs_are_fresh_across_calls() {
        let mut p = setup(8, 11);
        let (a, _) = extend_with(&mut p, 256, &mut Honest);
        let (b, _) = extend_with(&mut p, 256, &mut Honest);
        let (a, b) = (a.unwrap(), b.unwrap());
        let mut all: Vec<u128> = a.iter().chain(&b).map(|x| x.0).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 512);
        // The trait path appends to existing output.
        let (s, r, ca, cb) = &mut p;
        let (mut k, mut m) = (vec![Block(1)], vec![Block(1)]);
        let (x, y) = block_on(async {
            futures::join!(s.extend(ca, 300, &mut k), r.extend(cb, 300, &mut m))
        });
        x.unwrap();
        y.unwrap();
        assert_eq!(k.len(), 301);
        assert_cots(s.delta(), &k[1..], &m[1..]);
    }

    #[test]
    fn traffic_per_cot() {
        let mut p = setup(8, 12);
        let (sa, sb) = (p.2.stats(), p.3.stats());
        let (s0, r0) = (sa.sent(), sb.sent());
        let n = 1 << 16;
        let (x, y) = extend_with(&mut p, n, &mut Honest);
        x.unwrap();
        y.unwrap();
        let up = (sb.sent() - r0) as f64 * 8.0 / n as f64;
        let down = (sa.sent() - s0) as f64 * 8.0 / n as f64;
        // 15 correction bits per COT plus framing and the 128 masking COTs.
        assert!(up > 15.0 && up < 15.2, "receiver->sender {up} bits/COT");
        assert!(down < 0.01, "sender->receiver {down} bits/COT");
    }

    /// Flips one correction bit at a random row and tree.
    struct FlipCorrection {
        row: usize,
        tree: usize,
    }
    impl Cheat for FlipCorrection {
        fn corrections(&mut self, first: usize, b: usize, corr: &mut [Block]) {
            if self.row >= first && self.row < first + 128 * b {
                let r = self.row - first;
                corr[(self.tree - 1) * b + r / 128].0 ^= 1u128 << (r % 128);
            }
        }
    }

    #[test]
    fn inconsistent_corrections_are_caught() {
        let mut rng = ChaCha20Rng::seed_from_u64(99);
        for trial in 0..40 {
            let k = [1, 2, 4, 8][trial % 4];
            let mut p = setup(k, 1000 + trial as u64);
            let n: usize = rng.gen_range(1..3000);
            // Any row: output, padding or masking rows.
            let row = rng.gen_range(0..n.div_ceil(128) * 128 + MASK_COTS);
            let tree = rng.gen_range(1..128 / k);
            let alpha = (p.0.delta().0 >> (tree * k)) & ((1 << k) - 1);
            let (x, y) = extend_with(&mut p, n, &mut FlipCorrection { row, tree });
            if alpha == 0 {
                // The flip is multiplied by a zero chunk of Delta: no effect
                // at all, and the outputs are still correct COTs.
                assert_cots(p.0.delta(), &x.unwrap(), &y.unwrap());
                continue;
            }
            assert!(
                matches!(x, Err(Error::CheckFailed(_))),
                "trial {trial}: not caught"
            );
            // The sender is poisoned afterwards (it refuses before any I/O).
            let mut keys = Vec::new();
            let x = block_on(p.0.extend(&mut p.2, 10, &mut keys));
            assert!(matches!(x, Err(Error::Aborted(_))));
        }
    }

    /// Flips one correction bit and compensates in the check answer for a
    /// guess `g` of that tree's chunk of Delta: passes iff the guess is right.
    struct GuessingCheat {
        row: usize,
        tree: usize,
        k: usize,
        guess: u128,
        n_pad: usize,
    }
    impl Cheat for GuessingCheat {
        fn corrections(&mut self, first: usize, b: usize, corr: &mut [Block]) {
            FlipCorrection {
                row: self.row,
                tree: self.tree,
            }
            .corrections(first, b, corr);
        }
        fn answer(&mut self, seed: Block, _u: &mut Block, v: &mut Block) {
            let chi = if self.row < self.n_pad {
                Prg::new(seed).blocks(self.row + 1)[self.row]
            } else {
                Block::power_of_x(self.row - self.n_pad)
            };
            *v ^= chi.gf_mul(Block(self.guess << (self.tree * self.k)));
        }
    }

    #[test]
    fn cheater_passes_only_by_guessing_delta() {
        let k = 2;
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let (mut passes, mut right_guesses) = (0, 0);
        for trial in 0..48 {
            let mut p = setup(k, 5000 + trial);
            let n = 500;
            let tree = rng.gen_range(1..128 / k);
            let guess = rng.gen_range(0..4u128);
            let alpha = (p.0.delta().0 >> (tree * k)) & 3;
            let mut cheat = GuessingCheat {
                row: rng.gen_range(0..n),
                tree,
                k,
                guess,
                n_pad: 512,
            };
            let (x, _) = extend_with(&mut p, n, &mut cheat);
            right_guesses += (guess == alpha) as usize;
            match x {
                Ok(_) => {
                    passes += 1;
                    assert_eq!(guess, alpha, "passed without guessing Delta");
                }
                Err(Error::CheckFailed(_)) => assert_ne!(guess, alpha),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(passes, right_guesses);
        // About a quarter of the guesses are right; both outcomes occurred.
        assert!(passes > 2 && passes < 30, "{passes}");
    }

    /// A check answer that is not the honest one is rejected.
    struct BadAnswer(u128, u128);
    impl Cheat for BadAnswer {
        fn answer(&mut self, _seed: Block, u: &mut Block, v: &mut Block) {
            u.0 ^= self.0;
            v.0 ^= self.1;
        }
    }

    #[test]
    fn wrong_check_answer_is_caught() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        for trial in 0..10 {
            let mut p = setup(8, 300 + trial);
            let (du, dv) = match trial % 3 {
                0 => (rng.gen::<u128>() | 1, 0),
                1 => (0, rng.gen::<u128>() | 1),
                _ => (rng.gen(), rng.gen()),
            };
            let (x, _) = extend_with(&mut p, 1000, &mut BadAnswer(du, dv));
            assert!(matches!(x, Err(Error::CheckFailed(_))));
        }
    }

    /// Corrupted GGM sums in setup: harmless when they hit the side the
    /// sender does not use, caught otherwise; so passing reveals one bit of
    /// Delta, which is the selective-failure leakage the model allows.
    #[test]
    fn corrupted_ggm_sums_pass_only_when_unused() {
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let k = 4;
        for trial in 0..24 {
            let (tree, level, side) = (
                rng.gen_range(0..128 / k),
                rng.gen_range(1..=k),
                rng.gen_range(0..2usize),
            );
            let idx = tree * 2 * k + 2 * (level - 1) + side;
            let noise = Block(rng.gen::<u128>() | 1);
            let mut p = setup_tampered(k, 700 + trial, |m| m[idx] ^= noise);
            let alpha = ((p.0.delta().0 >> (tree * k)) & 15) as usize;
            let used_side = ggm::choice_bit(alpha, k, level) as usize;
            let (x, _) = extend_with(&mut p, 700, &mut Honest);
            if side == used_side {
                assert!(matches!(x, Err(Error::CheckFailed(_))), "trial {trial}");
            } else {
                assert!(x.is_ok(), "trial {trial}: {x:?}");
            }
        }
    }

    #[test]
    fn malformed_correction_frames_end_the_run() {
        use futures::AsyncWriteExt;
        // 0: short frame, 1: long frame (over the limit), 2: header then hang-up,
        // 3: peer closes before sending anything.
        for variant in 0..4 {
            let (mut s, _r, mut ca, cb) = setup(8, 40 + variant);
            let mut keys = Vec::new();
            let res = block_on(async {
                let (x, _) = futures::join!(s.extend(&mut ca, 1000, &mut keys), async move {
                    let mut raw = cb.into_inner().await.unwrap();
                    let expected = 15 * 9 * 16; // (m-1) * b blocks for 1000 + 128 COTs
                    match variant {
                        0 => {
                            raw.write_all(&((expected - 16) as u32).to_le_bytes())
                                .await
                                .unwrap();
                            raw.write_all(&vec![0u8; expected - 16]).await.unwrap();
                        }
                        1 => {
                            raw.write_all(&(u32::MAX).to_le_bytes()).await.unwrap();
                        }
                        2 => {
                            raw.write_all(&(expected as u32).to_le_bytes())
                                .await
                                .unwrap();
                            raw.write_all(&[1, 2, 3]).await.unwrap();
                        }
                        _ => {}
                    }
                    drop(raw);
                });
                x
            });
            assert!(matches!(res, Err(Error::Channel(_))), "{variant}: {res:?}");
            assert!(keys.is_empty());
        }
    }

    #[test]
    fn oversized_request_is_a_usage_error() {
        let (mut s, mut r, mut ca, mut cb) = setup(4, 5);
        let mut out = Vec::new();
        let x = block_on(s.extend(&mut ca, MAX_EXTEND + 1, &mut out));
        assert!(matches!(x, Err(Error::Usage(_))));
        let y = block_on(r.extend(&mut cb, MAX_EXTEND + 1, &mut out));
        assert!(matches!(y, Err(Error::Usage(_))));
        // Nothing was sent: the pair still works.
        let (x, y) = extend_with(&mut (s, r, ca, cb), 100, &mut Honest);
        assert_eq!(x.unwrap().len(), y.unwrap().len());
    }

    #[test]
    fn mismatched_k_fails_in_setup() {
        let (a, b) = memory_duplex();
        let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
        let mut rs = ChaCha20Rng::seed_from_u64(1);
        let mut rr = ChaCha20Rng::seed_from_u64(2);
        let (s, r) = block_on(async {
            futures::join!(
                SoftSpokenSender::setup_with_k(&mut ca, 8, &mut rs),
                SoftSpokenReceiver::setup_with_k(&mut cb, 4, &mut rr)
            )
        });
        assert!(matches!(s, Err(Error::Malformed(_))), "{:?}", s.err());
        assert!(r.is_ok());
        assert!(matches!(
            SoftSpokenSender::setup_with_k(&mut ca, 3, &mut rs).now_or_never_err(),
            Some(Error::Usage(_))
        ));
    }

    #[test]
    fn mismatched_batch_sizes_fail_without_hanging() {
        let (mut s, mut r, ca, cb) = setup(8, 3);
        let (mut k, mut m) = (vec![], vec![]);
        let (x, y) = block_on(async {
            futures::join!(
                async move {
                    let mut ca = ca;
                    s.extend(&mut ca, 1000, &mut k).await
                    // ca dropped here: hang up, as a failed party does
                },
                async move {
                    let mut cb = cb;
                    r.extend(&mut cb, 100, &mut m).await
                }
            )
        });
        assert!(matches!(
            x,
            Err(Error::Channel(ChannelError::UnexpectedLength { .. }))
        ));
        // The receiver reads nothing during an extend (its challenges are
        // derived, not received), so the mismatch surfaces at the sender,
        // which refuses the batch and hangs up.
        assert!(y.is_ok(), "{y:?}");
    }

    /// The check's challenges depend on the instance, the call, its size
    /// and every correction.
    #[test]
    fn check_challenges_bind_instance_call_and_corrections() {
        let salt = CheckTranscript::salt(b"tree message");
        let corr = [Block(1), Block(2), Block(3)];
        let seed = |salt: &[u8; 32], call: u64, n: usize, corr: &[Block]| {
            let mut t = CheckTranscript::new(salt, call, n);
            t.absorb(corr);
            t.seed()
        };
        let base = seed(&salt, 0, 100, &corr);
        assert_eq!(base, seed(&salt, 0, 100, &corr));
        assert_ne!(base, seed(&CheckTranscript::salt(b"other"), 0, 100, &corr));
        assert_ne!(base, seed(&salt, 1, 100, &corr));
        assert_ne!(base, seed(&salt, 0, 101, &corr));
        assert_ne!(base, seed(&salt, 0, 100, &[Block(1), Block(2), Block(7)]));
        assert_ne!(base, seed(&salt, 0, 100, &corr[..2]));
    }

    trait NowOrNever {
        fn now_or_never_err(self) -> Option<Error>;
    }
    impl<F: core::future::Future<Output = Result<SoftSpokenSender>>> NowOrNever for F {
        fn now_or_never_err(self) -> Option<Error> {
            block_on(self).err()
        }
    }
}

//! Silent correlated OT with a global `Delta`, Ferret style.
//!
//! This crate turns a small batch of COTs from a bootstrap source (any
//! [`RandomCotSender`]/[`RandomCotReceiver`] pair, normally the base-OT +
//! SoftSpokenOT extension of `webproof-ot`) into an unbounded stream of COTs
//! for a few bits of traffic per thousand COTs. It follows Ferret (Yang, Weng,
//! Lan, Zhang, Wang, "Ferret: Fast extension for correlated OT with small
//! communication", CCS 2020) with regular-noise primal LPN, and expands its
//! single-point COTs with half-trees (Guo et al., Eurocrypt 2023).
//!
//! # Roles
//! The **sender** ([`FerretSender`], the ZK verifier) holds `Delta` (lsb 1)
//! and obtains keys `K` (lsb 0); the **receiver** ([`FerretReceiver`], the ZK
//! prover) obtains `M = K ⊕ b·Delta` with `b = lsb(M)`, the convention of
//! [`webproof_core::cot`].
//!
//! # One iteration (parameters `n, k, t, h` with `n = t·2^h`)
//! It consumes a *reserve* of `k + t·h + 128` COTs left by the previous
//! iteration (or by the bootstrap) and yields `n` COTs, the first
//! reserve-many of which become the next reserve:
//! 1. **Trees** (module `tree`): for each of the `t` blocks of `2^h` positions the
//!    sender builds a half-tree whose leaves `v` XOR to `Delta` and sends one
//!    correction per level (`t·h` blocks, one message). The receiver's noisy
//!    position `alpha` in the block is the complement of the random bits of
//!    that tree's `h` reserve COTs, and it recovers `w = v ⊕ unit(alpha)·Delta`.
//! 2. **Check** (module `check`): the receiver sends a random challenge seed and
//!    a masked field element (32 bytes; in the first iteration preceded by
//!    the 32-byte seed of the session's LPN codes, see step 3); the sender answers with a 32-byte
//!    digest; the receiver aborts unless it matches. This catches a sender
//!    who corrupted any tree, up to the selective-failure leakage Ferret's
//!    analysis allows (see the module `check`).
//! 3. **LPN** (module `lpn`): output `i` is `e_i ⊕ A_i·u` where `u` are the first
//!    `k` reserve COTs and `A_i` is a public column with 10 ones (a code
//!    per iteration, keyed from a seed the receiver picks per session; see
//!    the module `lpn` for why the receiver picks it): the sender
//!    computes it on keys (`v` and `K_u`), the receiver on MACs (`w` and
//!    `M_u`), and since both maps are linear the outputs are COTs with
//!    choice bits `x = u·A + e`, pseudo-random by regular LPN. The sender
//!    then moves `lsb` of its keys into the choice bit (`K ← K ⊕ lsb(K)·Delta`).
//!
//! Step 3 runs lazily, one tree at a time, as the caller draws COTs: memory
//! is two reserves plus one tree whatever the total, and a short session
//! does not pay for the LPN of outputs it never uses. Steps 1–2 run before
//! any output of the iteration is released, so the receiver never uses a
//! correlation that failed the check. The price is that each party expands
//! its trees twice (check, then output) and the sender a third time (to
//! compute the corrections): one fixed-key AES call per tree node each time,
//! small next to the LPN step with AES-NI. Where AES is slow (WebAssembly,
//! bitsliced) the receiver keeps the check's leaves of its first trees for
//! the outputs instead, within a memory budget
//! ([`FerretReceiver::keep_leaves`], [`DEFAULT_LEAF_CACHE`]).
//!
//! # Why the receiver's bits stay hidden, and the sender cannot cheat
//! The sender sees only the corrections it computed itself, the challenge
//! seed (independent of the receiver's secrets) and `x'' = Σ χ_{j,alpha_j} ⊕ x'`,
//! masked by the uniformly random `x'` of 128 fresh COTs; the outputs' choice
//! bits `u·A + e` are then pseudo-random under regular LPN with the above
//! leakage. A receiver learns every leaf but `alpha` of each tree, which
//! hides `v[alpha]` and thus `Delta` under the correlation-robustness of the
//! tree hash; its only message is the challenge, answered by a hash.
//!
//! # Parameters and costs
//! See [`params`]: the named sets, each estimated at 132.9 bits or more at
//! every prefix (the minimum over the regular-LPN hybrid attack, ISD,
//! Pooled Gauss and the algebraic attack; [`security`] holds the
//! estimator and a test holds every named set to 128 bits), and
//! [`FerretConfig`] presets built from them. A session is only as secure
//! as the weakest set of its chain, setup set included (each iteration's
//! secret and noise come from the one before). Per full iteration, traffic
//! is `t·h` blocks + 40 bytes from the sender and 36 bytes back (68 in the first iteration), so,
//! amortised:
//!
//! | preset | outputs/iteration | sender→receiver | memory per party |
//! |---|---|---|---|
//! | [`FerretConfig::throughput`] (k = 2^19) | 10,485,760 | 0.214 bits/COT | ~17 MB |
//! | [`FerretConfig::balanced`] (k = 2^18) | 4,915,200 | 0.40 bits/COT | ~9 MB |
//! | [`FerretConfig::compact`] (k = 40,960) | 563,200 | 2.47 bits/COT | ~1.7 MB |
//!
//! Setup with [`SilentCotSender::connect`]: base OTs, SoftSpokenOT for the
//! setup set's 50,988 COTs, and the setup iteration (1,100 trees of depth
//! 9): about 270 KB in total for the `throughput` preset.
//!
//! The public code of every iteration is keyed by a seed the receiver
//! picks per session (see the module `lpn`), so no two sessions share a
//! matrix.
//!
//! # What this crate does not do
//! No I/O of its own, no threads, no clock: it builds for
//! `wasm32-unknown-unknown`, and randomness comes from the caller's RNG.
//! It is not constant-time with respect to the receiver's noise positions:
//! the receiver's tree walk and its table look-ups depend on them (as in
//! every Ferret implementation). The peer sees only message timing, which
//! does not depend on the positions; a co-resident attacker watching the
//! cache is out of scope.

mod ccr;
mod check;
mod lpn;
pub mod params;
mod pool;
mod receiver;
pub mod security;
mod sender;
mod tree;

pub use params::{FerretConfig, LpnParams, ParamError};
pub use receiver::{FerretReceiver, DEFAULT_LEAF_CACHE};
pub use sender::FerretSender;

use rand_core::{CryptoRng, RngCore};
use webproof_core::{error::Result, Channel, Io};
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};

/// The production sender: Ferret bootstrapped by base OT + SoftSpokenOT.
pub type SilentCotSender = FerretSender<SoftSpokenSender>;
/// The production receiver: Ferret bootstrapped by base OT + SoftSpokenOT.
pub type SilentCotReceiver = FerretReceiver<SoftSpokenReceiver>;

impl FerretSender<SoftSpokenSender> {
    /// Everything from scratch: base OTs and SoftSpokenOT setup (which picks
    /// `Delta`), then the bootstrap COTs and Ferret's first iteration. The
    /// peer runs [`FerretReceiver::connect`] with the same `config`.
    pub async fn connect<T: Io>(
        config: FerretConfig,
        channel: &mut Channel<T>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let bootstrap = SoftSpokenSender::setup(channel, rng).await?;
        let mut s = FerretSender::new(config, bootstrap, rng)?;
        s.setup(channel).await?;
        Ok(s)
    }

    /// [`Self::connect`] up to the first iteration's tree corrections (see
    /// [`FerretSender::setup_until_check`]); the peer runs
    /// [`SilentCotReceiverOpening::connect_until_check`].
    pub async fn connect_until_check<T: Io>(
        config: FerretConfig,
        channel: &mut Channel<T>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let bootstrap = SoftSpokenSender::setup(channel, rng).await?;
        let mut s = FerretSender::new(config, bootstrap, rng)?;
        s.setup_until_check(channel).await?;
        Ok(s)
    }
}

impl FerretReceiver<SoftSpokenReceiver> {
    /// Everything from scratch; the peer runs [`FerretSender::connect`].
    pub async fn connect<T: Io>(
        config: FerretConfig,
        channel: &mut Channel<T>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let opening = Self::open(config, rng)?;
        channel.send(&opening.message()).await?;
        channel.flush().await?;
        opening.connect(channel, rng).await
    }

    /// [`Self::connect`] in two steps: the receiver speaks first (the base
    /// OT sender's point, which depends on nothing from the peer), so the
    /// caller may send [`SilentCotReceiverOpening::message`] in a flight of
    /// its own, e.g. with a hello, and then run
    /// [`SilentCotReceiverOpening::connect`]. The peer runs
    /// [`FerretSender::connect`] unchanged.
    pub fn open(
        config: FerretConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<SilentCotReceiverOpening> {
        config
            .validate()
            .map_err(|e| webproof_core::Error::Usage(format!("Ferret parameters: {e}")))?;
        Ok(SilentCotReceiverOpening {
            softspoken: SoftSpokenReceiver::begin(webproof_ot::DEFAULT_K, rng)?,
            config,
        })
    }
}

/// A production receiver whose first message is made (see
/// [`FerretReceiver::open`]).
pub struct SilentCotReceiverOpening {
    softspoken: webproof_ot::SoftSpokenReceiverSetup,
    config: FerretConfig,
}

impl SilentCotReceiverOpening {
    /// The receiver's first message: send it as one frame of the channel
    /// (or of the byte stream under it) before [`Self::connect`] reads.
    pub fn message(&self) -> Vec<u8> {
        self.softspoken.first_message().to_vec()
    }

    /// The rest of [`FerretReceiver::connect`], once the message is on its way.
    pub async fn connect<T: Io>(
        self,
        channel: &mut Channel<T>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<SilentCotReceiver> {
        let bootstrap = self.softspoken.finish(channel, rng).await?;
        let mut r = FerretReceiver::new(self.config, bootstrap, rng)?;
        r.setup(channel).await?;
        Ok(r)
    }

    /// [`Self::connect`] up to the first iteration's tree corrections (see
    /// [`FerretReceiver::setup_until_check`]).
    pub async fn connect_until_check<T: Io>(
        self,
        channel: &mut Channel<T>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<SilentCotReceiver> {
        let bootstrap = self.softspoken.finish(channel, rng).await?;
        let mut r = FerretReceiver::new(self.config, bootstrap, rng)?;
        r.setup_until_check(channel).await?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests;

/// Counters of one party's extension.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtensionStats {
    /// Iterations run (including the setup iteration).
    pub iterations: u64,
    /// COTs produced by the LPN step (handed out or kept as reserve).
    pub produced: u64,
    /// Bytes this party sent during bootstrap (as counted by the channel).
    pub bootstrap_sent: u64,
    /// Bytes this party received during bootstrap.
    pub bootstrap_received: u64,
    /// Bytes this party sent in Ferret iterations, frame headers included.
    pub protocol_sent: u64,
    /// Bytes this party received in Ferret iterations, frame headers included.
    pub protocol_received: u64,
}

#[doc(no_inline)]
pub use webproof_core::cot::{RandomCotReceiver, RandomCotSender};

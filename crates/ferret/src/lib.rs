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
//! One iteration step by step, why the receiver's bits stay hidden and the
//! sender cannot cheat, parameters and costs, and what the crate does not
//! do: `docs/protocol/ferret.md`.

mod ccr;
mod check;
mod lpn;
pub mod params;
mod pool;
mod receiver;
pub mod security;
mod sender;
#[cfg(feature = "testing")]
pub mod testing;
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

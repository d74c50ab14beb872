//! A proof session over the production COT stack, split into the
//! preprocessing that runs before the TLS connection and the proof after it.
//!
//! Setup runs base OT, SoftSpokenOT and Ferret's first iteration (the
//! bootstrap) and opens the QuickSilver session, so when the prover connects
//! to the server the only interactive cryptography left is the proof itself.
//! The channel is only lent to the setup, so between setup and proof the
//! caller can use the same connection for the TLS relay and its own messages.

use crate::{run, Proven, Result, Statement, Witness};
use rand_core::{CryptoRng, RngCore};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Channel, Io};
use webproof_ferret::{FerretConfig, SilentCotReceiver, SilentCotSender};
use webproof_zk::{Config, Prover, Verifier};

/// The parameters both parties must use.
#[derive(Clone, Copy, Debug)]
pub struct SessionConfig {
    /// Silent OT parameters.
    pub ferret: FerretConfig,
    /// Proof engine parameters.
    pub zk: Config,
}

impl Default for SessionConfig {
    /// Ferret's b13 sets: one main iteration (about 10 M COTs, sent as 266 KB
    /// of tree corrections) covers any ordinary session, and it runs during
    /// setup, before the server connection. The compact set would send
    /// about 2.4 bits per COT (over 500 KB for a 1.6 M-AND statement). Each
    /// party's memory stays around 16 MiB for the COTs plus a 256 Ki-COT batch.
    fn default() -> Self {
        SessionConfig {
            ferret: FerretConfig::throughput(),
            zk: Config {
                cot_batch: 1 << 18,
                segment_bits: 1 << 16,
            },
        }
    }
}

/// COTs the setup iteration leaves over: drawing them runs base OT,
/// SoftSpokenOT and Ferret's setup iteration; drawing one more runs the
/// first main iteration (its tree corrections and check). Both parties draw
/// the same numbers.
fn setup_output(config: &SessionConfig) -> usize {
    match config.ferret.setup {
        Some(setup) => setup.n.saturating_sub(config.ferret.main.reserve()),
        None => 0,
    }
}

/// The prover's preprocessed COTs: made before the TLS session, spent by the proof.
pub struct ProverPreprocessed {
    cot: SilentCotReceiver,
    config: SessionConfig,
}

impl ProverPreprocessed {
    /// Preprocessing over `channel` (lent, not kept): base OT, SoftSpokenOT
    /// and Ferret's iterations up to the first main one.
    pub async fn setup<T: Io>(
        channel: &mut Channel<T>,
        config: SessionConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut pre = Self::bootstrap(channel, config, rng).await?;
        pre.warm_up(channel).await?;
        Ok(pre)
    }

    /// The first part of [`Self::setup`]: base OT, SoftSpokenOT and Ferret's
    /// setup iteration. [`Self::warm_up`] may then run on another channel
    /// (a multiplexed stream beside the TLS relay).
    pub async fn bootstrap<T: Io>(
        channel: &mut Channel<T>,
        config: SessionConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut cot = SilentCotReceiver::connect(config.ferret, channel, rng).await?;
        RandomCotReceiver::extend(&mut cot, channel, setup_output(&config), &mut Vec::new())
            .await?;
        Ok(ProverPreprocessed { cot, config })
    }

    /// The second part of [`Self::setup`]: Ferret's first main iteration.
    pub async fn warm_up<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        if self.config.ferret.setup.is_some() {
            RandomCotReceiver::extend(&mut self.cot, channel, 1, &mut Vec::new()).await?;
        }
        Ok(())
    }

    /// Prove `statement` over `channel` and give the channel back.
    pub async fn prove<T: Io>(
        self,
        channel: Channel<T>,
        statement: &Statement,
        witness: &Witness,
    ) -> Result<(Proven, Channel<T>)> {
        let mut prover = Prover::new(self.cot, channel, self.config.zk).await?;
        let proven = run(&mut prover, statement, Some(witness)).await?;
        let (_, channel) = prover.finish().await?;
        Ok((proven, channel))
    }
}

/// The verifier's preprocessed COTs.
pub struct VerifierPreprocessed {
    cot: SilentCotSender,
    config: SessionConfig,
}

impl VerifierPreprocessed {
    /// Preprocessing over `channel` (lent, not kept).
    pub async fn setup<T: Io>(
        channel: &mut Channel<T>,
        config: SessionConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut pre = Self::bootstrap(channel, config, rng).await?;
        pre.warm_up(channel).await?;
        Ok(pre)
    }

    /// The first part of [`Self::setup`] (see [`ProverPreprocessed::bootstrap`]).
    pub async fn bootstrap<T: Io>(
        channel: &mut Channel<T>,
        config: SessionConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut cot = SilentCotSender::connect(config.ferret, channel, rng).await?;
        RandomCotSender::extend(&mut cot, channel, setup_output(&config), &mut Vec::new()).await?;
        Ok(VerifierPreprocessed { cot, config })
    }

    /// The second part of [`Self::setup`]: Ferret's first main iteration.
    pub async fn warm_up<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        if self.config.ferret.setup.is_some() {
            RandomCotSender::extend(&mut self.cot, channel, 1, &mut Vec::new()).await?;
        }
        Ok(())
    }

    /// Verify `statement` over `channel`; `Ok` means every check passed.
    /// Challenges are drawn from `rng`.
    pub async fn verify<T: Io>(
        self,
        channel: Channel<T>,
        statement: &Statement,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<(Proven, Channel<T>)> {
        let mut verifier = Verifier::new(self.cot, channel, self.config.zk, rng).await?;
        let proven = run(&mut verifier, statement, None).await?;
        let (_, channel) = verifier.finish().await?;
        Ok((proven, channel))
    }
}

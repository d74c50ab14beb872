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
use webproof_ferret::{FerretConfig, LpnParams, SilentCotReceiver, SilentCotSender};
use webproof_zk::{Config, Prover, Verifier};

/// The parameters both parties must use.
#[derive(Clone, Copy, Debug)]
pub struct SessionConfig {
    /// Silent OT parameters.
    pub ferret: FerretConfig,
    /// Proof engine parameters.
    pub zk: Config,
}

/// The main LPN set of proof sessions: Ferret's `b13` main set (k = 452,000,
/// 2^13-leaf blocks) cut to its first 640 of 1,280 noise blocks, so
/// 5,242,880 outputs per iteration (4.8 M net) for 133 KB of tree
/// corrections.
///
/// Security: the outputs of this instance are distributed exactly as the
/// first 5,242,880 outputs of a `b13` instance (independent uniformly
/// random 10-sparse columns over the same `k`-element secret, and one noisy
/// position in each of the first 640 blocks), so telling them from random
/// is no easier than for the full `b13` instance, whose 128-bit analysis
/// `webproof_ferret::params` cites. Cutting an instance only removes
/// samples from the adversary.
///
/// Why: a 1 KB / 2 KB session needs about 1.8 M COTs. A full `b13`
/// iteration makes 10.5 M, and its tree passes are most of the
/// preprocessing's work; half of it still covers statements up to about
/// 4.7 M AND gates in one iteration at 0.22 bits per COT. Larger
/// statements run more iterations during the proof (1.5 round trips each).
pub const SESSION_MAIN: LpnParams = LpnParams::new(640 << 13, 452_000, 640, 13);

impl Default for SessionConfig {
    /// Ferret with [`SESSION_MAIN`] after `b13`'s setup set: the first main
    /// iteration runs during preprocessing (beside the TLS session), so the
    /// proof of an ordinary session draws only ready COTs. Each party's
    /// memory stays around 16 MiB for the COTs plus a 256 Ki-COT batch.
    fn default() -> Self {
        SessionConfig {
            ferret: FerretConfig {
                main: SESSION_MAIN,
                setup: Some(webproof_ferret::params::B13_SETUP),
            },
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

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_ferret::params::B13_MAIN;

    /// The session set is a prefix of `b13` (the security argument above)
    /// and a valid configuration.
    #[test]
    fn session_set_is_a_prefix_of_b13() {
        assert_eq!(SESSION_MAIN.k, B13_MAIN.k);
        assert_eq!(SESSION_MAIN.log_bin, B13_MAIN.log_bin);
        assert!(SESSION_MAIN.t <= B13_MAIN.t);
        SessionConfig::default().ferret.validate().unwrap();
        assert!(SESSION_MAIN.net() > 4_700_000);
    }
}

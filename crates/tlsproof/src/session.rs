//! A proof session over the production COT stack, split into the
//! preprocessing that runs before the TLS connection and the proof after it.
//!
//! Setup runs base OT, SoftSpokenOT and Ferret's first iteration (the
//! bootstrap) and opens the QuickSilver session, so when the prover connects
//! to the server the only interactive cryptography left is the proof itself.
//! Between setup and proof the caller may use the same channel for its own
//! messages through [`ProverSession::channel`] / [`VerifierSession::channel`].

use crate::{run, Proven, Result, Statement, Witness};
use rand_core::{CryptoRng, RngCore};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Channel, ChannelStats, Io};
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

/// COTs to draw at setup so that the first main Ferret iteration (its tree
/// corrections and check) happens during preprocessing: one more than the
/// setup iteration leaves over. Both parties draw the same number.
fn warm_up(config: &SessionConfig) -> usize {
    match config.ferret.setup {
        Some(setup) => setup.n.saturating_sub(config.ferret.main.reserve()) + 1,
        None => 0,
    }
}

/// The prover's side of a proof session.
pub struct ProverSession<T> {
    prover: Prover<SilentCotReceiver, T>,
}

impl<T: Io> ProverSession<T> {
    /// Preprocessing: OT setup and the opening of the proof session.
    pub async fn setup(
        mut channel: Channel<T>,
        config: SessionConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut cot = SilentCotReceiver::connect(config.ferret, &mut channel, rng).await?;
        // Run the first main iteration now, in the preprocessing.
        RandomCotReceiver::extend(&mut cot, &mut channel, warm_up(&config), &mut Vec::new())
            .await?;
        let prover = Prover::new(cot, channel, config.zk).await?;
        Ok(ProverSession { prover })
    }

    /// The channel, for the caller's own messages between setup and proof.
    pub async fn channel(&mut self) -> Result<&mut Channel<T>> {
        self.prover.sync().await
    }

    /// Byte counters of the channel.
    pub fn channel_stats(&self) -> ChannelStats {
        self.prover.channel_stats()
    }

    /// Prove `statement` and give back the channel.
    pub async fn prove(
        mut self,
        statement: &Statement,
        witness: &Witness,
    ) -> Result<(Proven, Channel<T>)> {
        let proven = run(&mut self.prover, statement, Some(witness)).await?;
        let (_, channel) = self.prover.finish().await?;
        Ok((proven, channel))
    }
}

/// The verifier's side of a proof session.
pub struct VerifierSession<T> {
    verifier: Verifier<SilentCotSender, T>,
}

impl<T: Io> VerifierSession<T> {
    /// Preprocessing: OT setup and the opening of the proof session.
    pub async fn setup(
        mut channel: Channel<T>,
        config: SessionConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let mut cot = SilentCotSender::connect(config.ferret, &mut channel, rng).await?;
        RandomCotSender::extend(&mut cot, &mut channel, warm_up(&config), &mut Vec::new()).await?;
        let verifier = Verifier::new(cot, channel, config.zk, rng).await?;
        Ok(VerifierSession { verifier })
    }

    /// The channel, for the caller's own messages between setup and proof.
    pub async fn channel(&mut self) -> Result<&mut Channel<T>> {
        self.verifier.sync().await
    }

    /// Byte counters of the channel.
    pub fn channel_stats(&self) -> ChannelStats {
        self.verifier.channel_stats()
    }

    /// Verify `statement`; `Ok` means every check passed.
    pub async fn verify(mut self, statement: &Statement) -> Result<(Proven, Channel<T>)> {
        let proven = run(&mut self.verifier, statement, None).await?;
        let (_, channel) = self.verifier.finish().await?;
        Ok((proven, channel))
    }
}

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
    /// Memory-friendly: the compact Ferret set (about 0.5 M COTs per
    /// iteration) and a 256 Ki-COT batch, so each party stays far below 64 MiB.
    fn default() -> Self {
        SessionConfig {
            ferret: FerretConfig::compact(),
            zk: Config {
                cot_batch: 1 << 18,
                segment_bits: 1 << 16,
            },
        }
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
        let cot = SilentCotReceiver::connect(config.ferret, &mut channel, rng).await?;
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
        let cot = SilentCotSender::connect(config.ferret, &mut channel, rng).await?;
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

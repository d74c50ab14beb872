//! A proof session over the production COT stack, split into the
//! preprocessing that runs beside the TLS connection and the proof after it.
//!
//! Setup runs base OT, SoftSpokenOT and Ferret's setup iteration (the
//! bootstrap), then Ferret's first main iteration (the warm-up). Proxy
//! mode's network layer runs both on a stream of their own beside the TLS
//! relay, which starts as soon as the verifier has reached the server, so
//! when the prover has its TLS transcript the only interactive
//! cryptography left is the proof itself. No COT is used before the
//! TLS session ends, and none before its Ferret check has passed. The first main iteration is sized to the session
//! ([`SessionConfig::sized`], from the prover's [`expected_cots`]).
//! The channel is only lent to the setup, so between setup and proof the
//! caller can use the same connection for the TLS relay and its own messages.
//!
//! # Flights of the bootstrap (prover P, verifier V; bytes with frame headers)
//!
//! Figures for the small-session layout of [`SessionConfig::sized`]
//! ([`K17_MAIN`] after [`S20_SETUP`]); after a slash, the layout of a
//! larger one ([`K19_MAIN`] after [`S40_SETUP`]).
//!
//! 1. P: base-OT point `A` (36), sent by the network layer in the flight
//!    of its hello ([`ProverOpening`]);
//! 2. V: 128 base-OT point pairs (8,196), after its `Accepted`;
//! 3. P: SoftSpokenOT's masked GGM sums (4,101), the corrections of
//!    25,408 / 50,988 + 128 COTs (about 49 / 97 KB: the setup
//!    iteration's reserve) and, right behind them, the answer
//!    to SoftSpokenOT's consistency check (36). The check is not
//!    interactive: its challenges come from a SHA-256 hash of the tree
//!    message, the call's number and size and every correction
//!    (Fiat–Shamir, see `webproof_ot::softspoken`), so V sends no seed;
//! 4. V: checks the answer, then sends the tree corrections of Ferret's
//!    setup iteration (76,804 / 158,404).
//!
//! Then the warm-up: P's challenge of the setup
//! iteration with, in front, the 32-byte seed of the session's LPN codes
//! (68; P picks it, see `webproof_ferret`'s module `lpn`), V's digest (36) and the first main iteration's tree
//! corrections (176 / 208 bytes per noise block), P's challenge (36), V's digest
//! (36). Ferret's checks are interactive: the challenge is fresh
//! randomness of P (the COT receiver), sent after every tree correction it
//! covers. V checks SoftSpokenOT's answer before it sends anything
//! computed from its keys (flight 4), and each Ferret check passes before
//! its COTs are used; every other message waits for nothing it does not
//! need.
//!
//! # Binding
//!
//! The proof's Fiat–Shamir challenges are bound to a 32-byte context that
//! both parties compute on their own ([`ProverPreprocessed::prove`],
//! [`VerifierPreprocessed::verify`]); proxy mode uses a digest of the TLS
//! transcript and of the prover's plan.

use crate::{run, Aead, Proven, Result, Statement, Witness};
use rand_core::{CryptoRng, RngCore};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Channel, Io};
use webproof_ferret::params::{K17_MAIN, K19_MAIN, S20_SETUP, S40_SETUP};
use webproof_ferret::{
    FerretConfig, LpnParams, SilentCotReceiver, SilentCotReceiverOpening, SilentCotSender,
};
use webproof_zk::{Config, Prover, Verifier};

/// The parameters both parties must use.
#[derive(Clone, Copy, Debug)]
pub struct SessionConfig {
    /// Silent OT parameters.
    pub ferret: FerretConfig,
    /// Proof engine parameters.
    pub zk: Config,
}

/// The main LPN set of proof sessions: [`K19_MAIN`] (k = 2^19, 2^13-leaf
/// blocks) cut to its first 640 of 1,280 noise blocks, so 5,242,880
/// outputs per iteration (4.7 M net) for 133 KB of tree corrections.
///
/// Security: the outputs of this instance are distributed exactly as the
/// first 5,242,880 outputs of a [`K19_MAIN`] instance (independent
/// uniformly random 10-sparse columns over the same `k`-element secret, and
/// one noisy position in each of the first 640 blocks), so telling them
/// from random is no easier than for the full instance. The converse does
/// not hold (dropping samples can help an attacker), so
/// `webproof_ferret::params` checks every prefix of its sets with its
/// estimator: 138.5 bits at worst for [`K19_MAIN`] (the hybrid attack of
/// ePrint 2025/1284 binds), 150.6 for this prefix. The same holds for any
/// prefix, which is how [`SessionConfig::sized`] cuts the first main
/// iteration to the session's expected size ([`LpnParams::prefix`]).
///
/// Why: a full iteration makes 10.5 M COTs, and its tree passes are most of
/// the preprocessing's work; half of it still covers statements up to
/// about 4.5 M COTs in one iteration at 0.23 bits per COT. Larger
/// statements run more iterations during the proof (1.5 round trips each).
pub const SESSION_MAIN: LpnParams = K19_MAIN.prefix(640);

/// Largest expectation a party accepts from its peer ([`expected_cots`]
/// for far more than any relay limit allows); anything above one main
/// iteration runs the full [`SESSION_MAIN`] anyway.
pub const MAX_EXPECTED_COTS: u64 = 1 << 34;

/// COTs a proxy-mode proof of a TLS session is expected to draw: `sent`
/// bytes of application data from the prover, `received` from the server,
/// protected with `aead` (`None`: not known yet, so the costliest suite).
///
/// Per-statement costs (COTs, rounded up): TLS key derivation 390 K for
/// the SHA-256 suites and 990 K for SHA-384 (AES-256-GCM), TLS 1.3's figures
/// (1.2 is cheaper; see `kdf`'s module docs); per direction one key schedule (AES-128 320, AES-256
/// 480) and per block of keystream AES-128 1,280, AES-256 1,792, ChaCha20
/// 10,400 (64 bytes); per record the tag's block, counter rounding and a
/// check (128). Records are assumed to be at most 4 KiB, and the total gets
/// 10 % on top: an underestimate only costs more Ferret iterations during
/// the proof, an overestimate more preprocessing.
pub fn expected_cots(sent: usize, received: usize, aead: Option<Aead>) -> u64 {
    const KDF_SHA256: u64 = 390_000;
    const KDF_SHA384: u64 = 990_000;
    const CHECK: u64 = 128;
    const RECORD: u64 = 4096;
    let (block, per_block, per_key) = match aead.unwrap_or(Aead::ChaCha20Poly1305) {
        Aead::Aes128Gcm => (16, 1_280, 320),
        Aead::Aes256Gcm => (16, 1_792, 480),
        Aead::ChaCha20Poly1305 => (64, 10_400, 0),
    };
    // Unknown suite: the costliest derivation too.
    let kdf = match aead {
        Some(Aead::Aes128Gcm | Aead::ChaCha20Poly1305) => KDF_SHA256,
        Some(Aead::Aes256Gcm) | None => KDF_SHA384,
    };
    let direction = |bytes: usize| -> u64 {
        let bytes = bytes as u64;
        let records = bytes.div_ceil(RECORD).max(1);
        let blocks = bytes.div_ceil(block).saturating_add(2 * records);
        blocks
            .saturating_mul(per_block)
            .saturating_add(per_key + records * CHECK)
    };
    let total = kdf
        .saturating_add(direction(sent))
        .saturating_add(direction(received));
    total.saturating_add(total / 10).min(MAX_EXPECTED_COTS)
}

impl Default for SessionConfig {
    /// Ferret with [`SESSION_MAIN`] after [`S40_SETUP`]: the first main
    /// iteration runs during preprocessing (beside the TLS session), so the
    /// proof of an ordinary session draws only ready COTs. Each party's
    /// memory stays around 17 MiB for the COTs plus a 256 Ki-COT batch.
    fn default() -> Self {
        SessionConfig {
            ferret: FerretConfig {
                main: SESSION_MAIN,
                setup: Some(S40_SETUP),
                first_main_trees: None,
            },
            zk: Config {
                cot_batch: PROOF_BATCH,
                segment_bits: 1 << 16,
            },
        }
    }
}

impl SessionConfig {
    /// The configuration for a session expected to draw `expected_cots`
    /// (see [`expected_cots`]): Ferret's first main iteration is cut to a
    /// prefix that holds that many COTs rounded up to whole proof batches
    /// and still refills the next iteration's full reserve. Both parties
    /// call this with the number the prover stated in its hello.
    ///
    /// Which sets ([`SMALL_SESSION_COTS`]):
    /// - a session that one [`K17_MAIN`] iteration holds (about 1.44 M
    ///   COTs: an AES-128 session of up to 10 KB, not one whose suite is
    ///   still unknown) runs [`S20_SETUP`] and a prefix of [`K17_MAIN`]. Its
    ///   secret is 2^17 blocks (2 MiB, against 8 MiB for [`K19_MAIN`]), so
    ///   the LPN step's ten lookups per output miss the cache far less, and
    ///   the reserve the first iteration refills is 141,100 COTs instead of
    ///   541,056. It sends more tree corrections per COT (11 blocks per
    ///   2,048 outputs rather than 13 per 8,192), which would only show at
    ///   several million COTs, beyond its range;
    /// - a larger session runs [`SESSION_MAIN`] after [`S40_SETUP`], or a
    ///   longer prefix of [`K19_MAIN`] (up to all of its 1,280 noise blocks)
    ///   for the first iteration and any later one: one iteration during
    ///   preprocessing then covers statements up to about 9.7 M COTs,
    ///   rather than a second one during the proof, at 0.21 bits per COT.
    ///
    /// Security: every set is a named set of `webproof_ferret::params` or a
    /// prefix of one ([`LpnParams::prefix`]); that module's test checks
    /// every such prefix against its estimator (132.9 bits at worst, for
    /// [`K17_MAIN`]; 138.5 for [`K19_MAIN`]; the setup sets 145.1 and
    /// 139.9), and a test here checks the sets this function picks.
    /// Until protocol version 26 this function picked emp-ot's 2022 sets,
    /// which that estimator puts at 92.8–125.3 bits (see `params`).
    pub fn sized(expected_cots: u64) -> Self {
        let mut c = SessionConfig::default();
        if expected_cots <= SMALL_SESSION_COTS {
            c.zk.cot_batch = SMALL_PROOF_BATCH;
            c.ferret = FerretConfig {
                main: K17_MAIN,
                setup: Some(S20_SETUP),
                first_main_trees: Some(first_main_trees(&K17_MAIN, expected_cots, c.zk.cot_batch)),
            };
            return c;
        }
        let trees = first_main_trees(&K19_MAIN, expected_cots, c.zk.cot_batch);
        if trees > c.ferret.main.t {
            c.ferret.main = K19_MAIN.prefix(trees);
        }
        c.ferret.first_main_trees = Some(first_main_trees(
            &c.ferret.main,
            expected_cots,
            c.zk.cot_batch,
        ));
        c
    }
}

/// COTs the proof draws at a time ([`Config::cot_batch`] of the default
/// configuration).
const PROOF_BATCH: usize = 1 << 18;

/// COTs the proof of a session on [`K17_MAIN`] draws at a time: its last
/// batch is mostly left unused, and every COT of it costs both parties a
/// tree leaf and an LPN column, so a small session draws in small batches
/// (a proxy session of a few KB that needs about 430 K COTs draws 448 K
/// rather than 512 K, and holds 1 MiB of them per party instead of 4).
/// One segment of correction bits (`Config::segment_bits`) per batch, as
/// before: no more messages.
const SMALL_PROOF_BATCH: usize = 1 << 16;

/// The most COTs a session may expect and still run [`K17_MAIN`]
/// ([`SessionConfig::sized`]): what one whole [`K17_MAIN`] iteration yields
/// beyond its reserve, less one proof batch (the expectation is rounded up
/// to whole batches), so the first iteration never needs more noise
/// blocks than [`K17_MAIN`] has: 1,439,956.
///
/// Why the small set for everything it holds: a session on [`K17_MAIN`]
/// after [`S20_SETUP`] encodes its LPN over a 2 MiB secret instead of 8
/// MiB, and its setup iteration makes 153,600 COTs instead of 563,200;
/// for a proxy session of a few KB that is 67 ms of the verifier's CPU
/// against 117 ms on [`SESSION_MAIN`], with a third of the memory. Until
/// protocol version 30 this bound kept a second batch spare (1,177,812),
/// which put sessions of 8 to 10 KB on the large set.
pub const SMALL_SESSION_COTS: u64 = (K17_MAIN.n - K17_MAIN.reserve() - PROOF_BATCH) as u64;

/// Noise blocks of the first main iteration for `expected` COTs drawn in
/// batches of `batch`, between the fewest that refill a full reserve and
/// all of `main`'s.
fn first_main_trees(main: &LpnParams, expected: u64, batch: usize) -> usize {
    let bin = main.bin_size() as u64;
    let batch = batch.max(1) as u64;
    let draws = expected.min(MAX_EXPECTED_COTS).div_ceil(batch) * batch;
    // One COT more: `warm_up` draws one to run the iteration.
    let need = main.reserve() as u64 + draws + 1;
    let fewest = main.reserve() / main.bin_size() + 1;
    (need.div_ceil(bin).min(main.t as u64) as usize).max(fewest)
}

/// What `warm_up` draws (and drops): the setup iteration's surplus, whose
/// LPN step also fills the first main iteration's reserve, and one COT
/// more, which runs the first main iteration (tree corrections, check and
/// the LPN of the next reserve). The bootstrap stops after the setup
/// iteration's exchange, so all of this LPN work runs beside the TLS
/// session rather than before it. Both parties draw the same numbers.
fn warm_up_draw(config: &SessionConfig) -> usize {
    if config.ferret.setup.is_some() {
        config.ferret.setup_surplus() + 1
    } else {
        0
    }
}

/// The prover's preprocessing before its first message is sent: the
/// preprocessing starts with a prover message that depends on nothing the
/// verifier says (the base-OT sender's point), so it can travel in the
/// flight of the prover's hello and save a round trip.
pub struct ProverOpening {
    cot: SilentCotReceiverOpening,
    config: SessionConfig,
}

impl ProverOpening {
    /// Make the first message.
    pub fn new(config: SessionConfig, rng: &mut (impl RngCore + CryptoRng)) -> Result<Self> {
        Ok(ProverOpening {
            cot: SilentCotReceiver::open(config.ferret, rng)?,
            config,
        })
    }

    /// The first message: send it as one frame (the `Channel` framing)
    /// before the channel that [`Self::bootstrap`] uses reads anything.
    /// The verifier's [`VerifierPreprocessed::bootstrap`] reads it first.
    pub fn message(&self) -> Vec<u8> {
        self.cot.message()
    }

    /// The rest of [`ProverPreprocessed::bootstrap`], once [`Self::message`]
    /// is on its way.
    pub async fn bootstrap<T: Io>(
        self,
        channel: &mut Channel<T>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<ProverPreprocessed> {
        let config = self.config;
        let cot = self.cot.connect_until_check(channel, rng).await?;
        Ok(ProverPreprocessed { cot, config })
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

    /// The first part of [`Self::setup`]: base OT, SoftSpokenOT and the
    /// verifier's tree corrections of Ferret's setup iteration (its check
    /// and LPN step are left to [`Self::warm_up`], so the bootstrap ends
    /// with a verifier message; no COT is used before the check has
    /// passed). [`Self::warm_up`] may then run on another channel.
    pub async fn bootstrap<T: Io>(
        channel: &mut Channel<T>,
        config: SessionConfig,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        let opening = ProverOpening::new(config, rng)?;
        channel.send(&opening.message()).await?;
        channel.flush().await?;
        opening.bootstrap(channel, rng).await
    }

    /// The second part of [`Self::setup`]: the setup iteration's check and
    /// LPN step, and Ferret's first main iteration (exchange and the LPN step of the
    /// next reserve).
    pub async fn warm_up<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        let n = warm_up_draw(&self.config);
        RandomCotReceiver::extend(&mut self.cot, channel, n, &mut Vec::new()).await?;
        Ok(())
    }

    /// Prove `statement` over `channel` and give the channel back. The
    /// proof's Fiat–Shamir challenges are bound to `context`, 32 bytes that
    /// name the session and the statement (proxy mode: a digest of the TLS
    /// transcript and of the prover's plan); the verifier must pass the same
    /// bytes to [`VerifierPreprocessed::verify`] or reject the proof.
    pub async fn prove<T: Io>(
        self,
        channel: Channel<T>,
        statement: &Statement,
        witness: &Witness,
        context: &[u8; 32],
    ) -> Result<(Proven, Channel<T>)> {
        let mut prover = Prover::with_context(self.cot, channel, self.config.zk, context).await?;
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
        let cot = SilentCotSender::connect_until_check(config.ferret, channel, rng).await?;
        Ok(VerifierPreprocessed { cot, config })
    }

    /// The second part of [`Self::setup`] (see [`ProverPreprocessed::warm_up`]).
    pub async fn warm_up<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        let n = warm_up_draw(&self.config);
        RandomCotSender::extend(&mut self.cot, channel, n, &mut Vec::new()).await?;
        Ok(())
    }

    /// Verify `statement` over `channel`; `Ok` means every check passed.
    /// The challenges are derived (Fiat–Shamir) from `context`, which must
    /// be computed by the verifier itself from its own view of the session
    /// and statement (see [`ProverPreprocessed::prove`]), and from the
    /// prover's messages; `rng` is not drawn from today.
    pub async fn verify<T: Io>(
        self,
        channel: Channel<T>,
        statement: &Statement,
        context: &[u8; 32],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<(Proven, Channel<T>)> {
        let mut verifier =
            Verifier::with_context(self.cot, channel, self.config.zk, context, rng).await?;
        let proven = run(&mut verifier, statement, None).await?;
        let (_, channel) = verifier.finish().await?;
        Ok((proven, channel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_ferret::params::NAMED_SETS;
    use webproof_ferret::security::{Estimate, TARGET_BITS};

    /// The session set is a prefix of [`K19_MAIN`] (the security argument
    /// above) and a valid configuration.
    #[test]
    fn session_set_is_a_prefix_of_k19() {
        assert_eq!(SESSION_MAIN.k, K19_MAIN.k);
        assert_eq!(SESSION_MAIN.log_bin, K19_MAIN.log_bin);
        const { assert!(SESSION_MAIN.t <= K19_MAIN.t) };
        assert_eq!(SESSION_MAIN, K19_MAIN.prefix(SESSION_MAIN.t));
        SessionConfig::default().ferret.validate().unwrap();
        assert!(SESSION_MAIN.net() > 4_700_000);
    }

    /// The sized first iteration is a prefix of the layout's main set
    /// ([`K17_MAIN`] up to [`SMALL_SESSION_COTS`], [`K19_MAIN`] above),
    /// holds the expectation in whole batches and refills a full reserve;
    /// later iterations run the main set: [`K17_MAIN`]'s whole, or the
    /// session set, or the same longer prefix of [`K19_MAIN`] when one
    /// session set would not hold
    /// the expectation.
    #[test]
    fn sized_first_iteration_is_a_prefix_that_holds_the_expectation() {
        for expected in [
            1,
            100_000,
            expected_cots(1024, 2048, Some(Aead::Aes128Gcm)),
            expected_cots(1024, 2048, None),
            expected_cots(1024, 51 << 10, Some(Aead::Aes128Gcm)),
            expected_cots(1024, 51 << 10, None),
            5_000_000,
            9_000_000,
            SMALL_SESSION_COTS,
            SMALL_SESSION_COTS + 1,
            12_000_000,
            MAX_EXPECTED_COTS,
            u64::MAX,
        ] {
            let c = SessionConfig::sized(expected);
            c.ferret.validate().unwrap();
            let batch = c.zk.cot_batch as u64;
            let first = c.ferret.first_main();
            let main = c.ferret.main;
            let (full, setup) = if expected <= SMALL_SESSION_COTS {
                assert_eq!(main, K17_MAIN, "{expected}");
                assert_eq!(batch, SMALL_PROOF_BATCH as u64);
                (K17_MAIN, S20_SETUP)
            } else {
                assert_eq!(main, K19_MAIN.prefix(main.t));
                if first.t <= SESSION_MAIN.t {
                    assert_eq!(main, SESSION_MAIN, "{expected}");
                }
                (K19_MAIN, S40_SETUP)
            };
            assert_eq!(c.ferret.setup, Some(setup));
            let fewest = main.reserve() / main.bin_size() + 1;
            assert_eq!(first, full.prefix(first.t));
            assert!((fewest..=full.t).contains(&first.t));
            assert!(first.t <= main.t);
            assert_eq!(c.ferret.iteration(2), main);
            let net = c.ferret.first_main_net() as u64;
            let draws = expected.min(MAX_EXPECTED_COTS).div_ceil(batch) * batch;
            if first.t < full.t {
                assert!(net > draws, "{expected}");
                // No more than one tree beyond what is needed.
                let one_less = main.prefix(first.t - 1).n as u64;
                assert!(first.t == fewest || one_less <= main.reserve() as u64 + draws);
            } else {
                assert!(expected > SMALL_SESSION_COTS, "{expected}");
            }
        }
        // A 1 KB / 2 KB AES-128 session runs K17 and fits its first
        // iteration in about half its noise blocks; one whose suite is
        // unknown, or a 51 KB response, runs a prefix of K19.
        let small = SessionConfig::sized(expected_cots(1024, 2048, Some(Aead::Aes128Gcm)));
        assert_eq!(small.ferret.main, K17_MAIN);
        assert!(small.ferret.first_main().t < K17_MAIN.t * 3 / 5);
        let unknown = SessionConfig::sized(expected_cots(1024, 2048, None));
        assert_eq!(unknown.ferret.main, SESSION_MAIN);
        // (A 51 KB response needs more than the session set holds: one
        // longer prefix, 707 of K19's 1,280 blocks, for every iteration.)
        let big = expected_cots(1024, 51 << 10, Some(Aead::Aes128Gcm));
        assert_eq!(SessionConfig::sized(big).ferret.main, K19_MAIN.prefix(707));
        assert!(SessionConfig::sized(big).ferret.first_main_net() as u64 > big);
        assert_eq!(
            SessionConfig::sized(u64::MAX).ferret.first_main().t,
            K19_MAIN.t
        );
    }

    /// Every set a session of any size runs (setup, first main iteration,
    /// later iterations) is a named set of `webproof_ferret::params` or a
    /// prefix of one no shorter than that module's test covers, and, for
    /// the distinct sets of a sweep of sizes, the estimator puts each at
    /// 128 bits or more: a session is as weak as the weakest set of its
    /// chain, setup set included.
    #[test]
    fn every_set_a_session_runs_reaches_128_bits() {
        let named = |p: &LpnParams| {
            NAMED_SETS.iter().any(|(_, s)| {
                let fewest = s.reserve() / s.bin_size() + 1;
                *p == s.prefix(p.t) && (fewest.min(s.t)..=s.t).contains(&p.t)
            })
        };
        let mut seen: Vec<LpnParams> = Vec::new();
        for expected in [
            1,
            expected_cots(1024, 2048, Some(Aead::Aes128Gcm)),
            SMALL_SESSION_COTS,
            SMALL_SESSION_COTS + 1,
            expected_cots(1024, 51 << 10, Some(Aead::Aes128Gcm)),
            9_000_000,
            u64::MAX,
        ] {
            let c = SessionConfig::sized(expected).ferret;
            for i in 0..4 {
                let p = c.iteration(i);
                assert!(named(&p), "{expected}: iteration {i} runs {p:?}");
                if !seen.contains(&p) {
                    seen.push(p);
                }
            }
        }
        for p in seen {
            let bits = Estimate::of(&p).min();
            assert!(bits >= TARGET_BITS, "{p:?}: {bits:.1} bits");
        }
    }

    /// Both parties run `sized(expected_cots)` for their own number; the
    /// prover proves a statement with record disclosure.
    fn session_with(prover_expects: u64, verifier_expects: u64) -> Result<(Proven, Proven)> {
        use crate::testing::tls13_session;
        use crate::Disclosure;
        use futures::executor::block_on;
        use rand::SeedableRng;
        use webproof_core::memory_duplex;
        let mut s = tls13_session(
            Aead::Aes128Gcm,
            7,
            &[b"GET / HTTP/1.1\r\n\r\n"],
            &[&[b'x'; 1500]],
        );
        s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 1..1500)]);
        let (a, b) = memory_duplex();
        let (p, v) = block_on(async {
            let prover = async {
                let mut rng = rand::rngs::StdRng::seed_from_u64(1);
                let mut ch = Channel::new(a);
                let cfg = SessionConfig::sized(prover_expects);
                let mut pre = ProverPreprocessed::bootstrap(&mut ch, cfg, &mut rng).await?;
                pre.warm_up(&mut ch).await?;
                pre.prove(ch, &s.statement, &s.witness, &[3; 32])
                    .await
                    .map(|(p, _)| p)
            };
            let verifier = async {
                let mut rng = rand::rngs::StdRng::seed_from_u64(2);
                let mut ch = Channel::new(b);
                let cfg = SessionConfig::sized(verifier_expects);
                let mut pre = VerifierPreprocessed::bootstrap(&mut ch, cfg, &mut rng).await?;
                pre.warm_up(&mut ch).await?;
                pre.verify(ch, &s.statement, &[3; 32], &mut rng)
                    .await
                    .map(|(p, _)| p)
            };
            futures::join!(prover, verifier)
        });
        Ok((p?, v?))
    }

    /// A statement far larger than the expectation (one proof batch: the
    /// first main iteration holds 65,748 COTs, the key derivation alone
    /// needs six times that) still proves: the proof runs full-size
    /// iterations for the rest.
    #[test]
    fn a_statement_beyond_the_expectation_runs_more_iterations() {
        let smallest = SessionConfig::sized(1).ferret;
        assert_eq!(smallest.main, K17_MAIN);
        assert_eq!(smallest.first_main().t, 101);
        assert_eq!(smallest.first_main_net(), 65_748);
        let (p, v) = session_with(1, 1).unwrap();
        assert_eq!(p, v);
    }

    /// COT batches as long as the proof's segments (`cot_batch` =
    /// `segment_bits`): an evaluation whose first byte inversion comes when
    /// a segment has been read to its end and fewer than 8 COTs of the
    /// batch are left. The verifier once read the next segment as the rest
    /// of the old batch there and refused an honest proof
    /// (`webproof_zk`'s `first_room`).
    #[test]
    fn batches_as_long_as_segments_prove() {
        use crate::testing::{prove_with_config, tls13_session};
        use crate::Disclosure;
        let (request, response) = (vec![b'a'; 1024], vec![b'b'; 2174]);
        let mut s = tls13_session(Aead::Aes128Gcm, 7, &[&request], &[&response]);
        s.statement.sent.disclosure = Disclosure::Ranges(vec![(0, 0..1023)]);
        s.statement.recv.disclosure = Disclosure::Ranges(vec![(0, 0..2173)]);
        let mut cfg = SessionConfig::sized(expected_cots(1024, 2174, Some(Aead::Aes128Gcm)));
        cfg.zk.cot_batch = cfg.zk.segment_bits;
        let (p, v) = prove_with_config(&s.statement, &s.witness, cfg, 1);
        assert_eq!(p.unwrap(), v.unwrap());
    }

    /// Parties that size the first iteration differently fail cleanly (the
    /// tree corrections have the wrong length), they do not hang.
    #[test]
    fn parties_must_agree_on_the_expectation() {
        assert!(session_with(1, 2_000_000).is_err());
        assert!(session_with(2_000_000, 1).is_err());
    }

    #[test]
    fn expected_cots_follow_the_statement() {
        // statement_bench's figures plus 10 %: 384 K AND for TLS 1.3's key
        // derivation and 0.26 M COTs of AES for 1 KB / 2 KB over
        // AES-128, about 4.7 M for a 51 KB response.
        let aes = expected_cots(1024, 2048, Some(Aead::Aes128Gcm));
        assert!((650_000..800_000).contains(&aes), "{aes}");
        let big = expected_cots(1024, 51 << 10, Some(Aead::Aes128Gcm));
        assert!((4_900_000..7_000_000).contains(&big), "{big}");
        // Unknown suite: the costliest records (ChaCha20) and key
        // derivation (SHA-384).
        let any = expected_cots(1024, 2048, None);
        assert!(any > expected_cots(1024, 2048, Some(Aead::ChaCha20Poly1305)));
        assert!(any > expected_cots(1024, 2048, Some(Aead::Aes256Gcm)));
        assert!(expected_cots(1024, 2048, Some(Aead::Aes256Gcm)) > aes);
        // Monotone in both sizes, key derivation alone for an empty session.
        assert!(expected_cots(1024, 4096, None) > any);
        assert!(expected_cots(2048, 2048, None) > any);
        assert!(expected_cots(0, 0, None) >= 984_000);
        assert!(expected_cots(0, 0, Some(Aead::Aes128Gcm)) >= 384_000);
        assert_eq!(
            expected_cots(usize::MAX, usize::MAX, None),
            MAX_EXPECTED_COTS
        );
    }
}

//! The sender of the extension: holds `Delta`, gets keys (the ZK verifier).

use crate::ccr::Ccr;
use crate::check::{self, Challenge, CHALLENGE_LEN};
use crate::lpn::{LpnEncoder, CODE_SEED_LEN};
use crate::params::{FerretConfig, LpnParams};
use crate::pool::Pool;
use crate::tree::{sender_left_sums, sender_tree};
use crate::ExtensionStats;
use rand_core::{CryptoRng, RngCore};
use webproof_core::channel::Channel;
use webproof_core::cot::RandomCotSender;
use webproof_core::error::{Error, Result};
use webproof_core::{Block, Io, Prg};

/// Deviations a test can make the sender commit.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub(crate) enum Tamper {
    /// XOR `mask` into the correction of (`tree`, `level`).
    LevelMessage {
        tree: usize,
        level: u32,
        mask: Block,
    },
    /// Build `tree` from `(s, s ⊕ Delta ⊕ mask)` (another Delta), everywhere.
    RootDelta { tree: usize, mask: Block },
    /// XOR `mask` into the sender's own leaf (`tree`, `leaf`) (check and output).
    Leaf {
        tree: usize,
        leaf: usize,
        mask: Block,
    },
    /// Send corrections for seed `s` but use `s ⊕ mask` for check and output.
    SeedSwap { tree: usize, mask: Block },
    /// XOR `mask` into the check value before hashing.
    CheckValue { mask: Block },
}

/// State of the iteration whose trees are being turned into outputs.
struct Iteration {
    params: LpnParams,
    encoder: LpnEncoder,
    /// The iteration's reserve; its first `k` entries are the keys of `u`.
    base: Vec<Block>,
    /// One seed per tree.
    seeds: Vec<Block>,
    next_tree: usize,
}

/// An iteration whose tree corrections went out but whose check has not run.
struct Pending {
    index: usize,
    params: LpnParams,
    base: Vec<Block>,
    seeds: Vec<Block>,
    /// Bytes of the corrections message (for the counters).
    sent: usize,
}

/// Silent COT sender over a bootstrap COT source `B`.
///
/// Implements [`RandomCotSender`]: `extend(n)` hands out `n` keys `K_i`
/// (`lsb = 0`) under the bootstrap's `Delta`, running an iteration whenever
/// the current one is used up. The peer must run [`crate::FerretReceiver`]
/// with the same configuration and draw the same total number of COTs.
pub struct FerretSender<B> {
    config: FerretConfig,
    bootstrap: Option<B>,
    delta: Block,
    prg: Prg,
    ccr: Ccr,
    /// COTs for the next iteration to start.
    reserve: Vec<Block>,
    /// Storage recycled as the reserve being filled.
    spare: Vec<Block>,
    iter: Option<Iteration>,
    /// Corrections sent, check still to run (see [`Self::setup_until_check`]).
    pending: Option<Pending>,
    /// Iterations started so far (indexes [`FerretConfig::iteration`]).
    started: usize,
    pool: Pool,
    /// Tree storage of the correction and check passes.
    tree: Vec<Block>,
    sums: Vec<Block>,
    /// The seed of this session's LPN codes, as the receiver sent it with
    /// its first challenge (see the module `lpn` for why we take it).
    code_seed: Option<[u8; CODE_SEED_LEN]>,
    failed: bool,
    stats: ExtensionStats,
    #[cfg(test)]
    pub(crate) tamper: Option<Tamper>,
}

impl<B: RandomCotSender> FerretSender<B> {
    /// A sender that bootstraps from `bootstrap` (its `Delta` becomes ours).
    ///
    /// Fails if the configuration is malformed or the bootstrap `Delta` does
    /// not have its least significant bit set.
    pub fn new(
        config: FerretConfig,
        bootstrap: B,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        config
            .validate()
            .map_err(|e| Error::Usage(format!("Ferret parameters: {e}")))?;
        let delta = bootstrap.delta();
        if !delta.lsb() {
            return Err(Error::Usage("bootstrap Delta must have lsb 1".into()));
        }
        let mut seed = [0u8; 16];
        rng.fill_bytes(&mut seed);
        Ok(FerretSender {
            config,
            bootstrap: Some(bootstrap),
            delta,
            prg: Prg::new(Block::from_bytes(seed)),
            ccr: Ccr::new(),
            reserve: Vec::new(),
            spare: Vec::new(),
            iter: None,
            pending: None,
            started: 0,
            pool: Pool::new(),
            tree: Vec::new(),
            sums: Vec::new(),
            code_seed: None,
            failed: false,
            stats: ExtensionStats::default(),
            #[cfg(test)]
            tamper: None,
        })
    }

    /// Run the bootstrap and the first iteration's exchange now rather than on
    /// the first [`extend`](RandomCotSender::extend). Does nothing if done.
    pub async fn setup<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        if self.failed {
            return Err(aborted());
        }
        let r = self.setup_inner(channel).await;
        self.failed |= r.is_err();
        r
    }

    /// [`Self::setup`] up to sending the first iteration's tree
    /// corrections; the consistency check (answering the receiver's
    /// challenge) runs at the start of the next
    /// [`extend`](RandomCotSender::extend), which may use another channel
    /// carrying the same byte stream onwards. The peer runs
    /// [`crate::FerretReceiver::setup_until_check`].
    pub async fn setup_until_check<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        if self.failed {
            return Err(aborted());
        }
        let r = self.bootstrap_and_corrections(channel).await;
        self.failed |= r.is_err();
        r
    }

    /// Counters of the work done so far.
    pub fn stats(&self) -> ExtensionStats {
        self.stats
    }

    /// The configuration in use.
    pub fn config(&self) -> &FerretConfig {
        &self.config
    }

    /// Bytes currently held in buffers (reserves, current iteration, trees).
    pub fn memory_footprint(&self) -> usize {
        let it = self
            .iter
            .as_ref()
            .map_or(0, |i| (i.base.capacity() + i.seeds.capacity()) * Block::LEN);
        it + self.pool.footprint()
            + (self.reserve.capacity()
                + self.spare.capacity()
                + self.tree.capacity()
                + self.sums.capacity())
                * Block::LEN
    }

    async fn setup_inner<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        self.bootstrap_and_corrections(channel).await?;
        if self.pending.is_some() {
            self.finish_check(channel).await?;
        }
        Ok(())
    }

    /// The bootstrap and the first iteration's corrections, once.
    async fn bootstrap_and_corrections<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        let Some(mut bootstrap) = self.bootstrap.take() else {
            return Ok(());
        };
        let m = self.config.bootstrap_cots();
        let mut base = Vec::with_capacity(m);
        let before = (channel.stats().sent(), channel.stats().received());
        bootstrap.extend(channel, m, &mut base).await?;
        if base.len() != m {
            return Err(Error::Usage(
                "bootstrap COT source returned a wrong count".into(),
            ));
        }
        self.stats.bootstrap_sent += channel.stats().sent() - before.0;
        self.stats.bootstrap_received += channel.stats().received() - before.1;
        self.reserve = base;
        self.send_corrections(channel).await
    }

    /// Consume the reserve: send the tree corrections, answer the challenge.
    async fn start_iteration<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        self.send_corrections(channel).await?;
        self.finish_check(channel).await
    }

    /// First half of an iteration: the tree corrections.
    async fn send_corrections<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        let index = self.started;
        let params = self.config.iteration(index);
        let (k, t, h) = (params.k, params.t, params.log_bin);
        let hu = h as usize;
        let bin = params.bin_size();
        let base = core::mem::take(&mut self.reserve);
        debug_assert_eq!(base.len(), params.reserve());
        let tree_keys = &base[k..k + t * hu];
        let seeds = self.prg.blocks(t);
        let mut tree = core::mem::take(&mut self.tree);
        tree.resize(bin, Block::ZERO);
        self.sums.resize(hu, Block::ZERO);

        // Corrections: one block per level, all trees in one message.
        let mut msg = Vec::with_capacity(t * hu * Block::LEN);
        for (j, seed) in seeds.iter().enumerate() {
            let root = self.root_delta(j);
            sender_left_sums(&self.ccr, h, *seed, root, &mut tree, &mut self.sums);
            for i in 0..hu {
                #[allow(unused_mut)]
                let mut c = tree_keys[j * hu + i] ^ self.sums[i];
                #[cfg(test)]
                if let Some(Tamper::LevelMessage { tree, level, mask }) = self.tamper {
                    if tree == j && level as usize == i {
                        c ^= mask;
                    }
                }
                msg.extend_from_slice(&c.to_bytes());
            }
        }
        channel.send(&msg).await?;
        channel.flush().await?;
        self.tree = tree;
        self.started += 1;
        self.pending = Some(Pending {
            index,
            params,
            base,
            seeds,
            sent: msg.len(),
        });
        Ok(())
    }

    /// Second half: answer the receiver's challenge; the iteration's outputs
    /// can then be made.
    async fn finish_check<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        let Pending {
            index,
            params,
            base,
            seeds,
            sent,
        } = self.pending.take().expect("corrections sent");
        let (k, t, h) = (params.k, params.t, params.log_bin);
        let hu = h as usize;
        let bin = params.bin_size();
        let check_keys = &base[k + t * hu..];
        let mut tree = core::mem::take(&mut self.tree);
        tree.resize(bin, Block::ZERO);
        // The first challenge carries the receiver's code seed in front.
        let seed_len = if index == 0 { CODE_SEED_LEN } else { 0 };
        let reply = channel.recv_exact(seed_len + CHALLENGE_LEN).await?;
        let (code_seed, reply) = reply.split_at(seed_len);
        if index == 0 {
            self.code_seed = Some(code_seed.try_into().expect("32 bytes"));
        }
        let seed = Block::from_bytes(reply[..16].try_into().expect("16 bytes"));
        let x2 = Block::from_bytes(reply[16..].try_into().expect("16 bytes"));
        let challenge = Challenge::expand(seed, t, bin);
        let mut v = check::pack_cots(check_keys) ^ x2.gf_mul(self.delta);
        for (j, seed) in seeds.iter().enumerate() {
            let s = self.output_seed(j, *seed);
            sender_tree(&self.ccr, h, s, self.root_delta(j), &mut tree, None);
            self.tamper_leaves(j, &mut tree);
            v ^= challenge.fold_tree(j, &tree);
        }
        #[cfg(test)]
        if let Some(Tamper::CheckValue { mask }) = self.tamper {
            v ^= mask;
        }
        channel.send(&check::digest(v)).await?;
        channel.flush().await?;

        self.stats.iterations += 1;
        self.stats.protocol_sent += (sent + check::DIGEST_LEN + 8) as u64;
        self.stats.protocol_received += (seed_len + CHALLENGE_LEN + 4) as u64;
        self.tree = tree;
        self.pool.begin(
            core::mem::take(&mut self.spare),
            self.config.iteration(index + 1).reserve(),
            params.n,
            !self.config.is_setup(index),
        );
        self.iter = Some(Iteration {
            params,
            encoder: LpnEncoder::new(
                self.code_seed.as_ref().expect("set by the first check"),
                index,
                &self.config.code_of(index),
            ),
            base,
            seeds,
            next_tree: 0,
        });
        Ok(())
    }

    /// The Delta a tree is built with (honestly, ours).
    fn root_delta(&self, _tree: usize) -> Block {
        #[cfg(test)]
        if let Some(Tamper::RootDelta { tree, mask }) = self.tamper {
            if tree == _tree {
                return self.delta ^ mask;
            }
        }
        self.delta
    }

    /// The seed a tree's outputs are made from (honestly, the one corrected for).
    fn output_seed(&self, _tree: usize, seed: Block) -> Block {
        #[cfg(test)]
        if let Some(Tamper::SeedSwap { tree, mask }) = self.tamper {
            if tree == _tree {
                return seed ^ mask;
            }
        }
        seed
    }

    fn tamper_leaves(&self, _tree: usize, _leaves: &mut [Block]) {
        #[cfg(test)]
        if let Some(Tamper::Leaf { tree, leaf, mask }) = self.tamper {
            if tree == _tree {
                _leaves[leaf] ^= mask;
            }
        }
    }

    /// Outputs of the next tree into `out` (`2^log_bin` blocks).
    fn produce(&mut self, out: &mut [Block]) {
        let it = self.iter.as_mut().expect("an iteration is running");
        let j = it.next_tree;
        it.next_tree += 1;
        let p = it.params;
        let seed = it.seeds[j];
        let s = self.output_seed(j, seed);
        let it = self.iter.as_ref().expect("an iteration is running");
        sender_tree(&self.ccr, p.log_bin, s, self.root_delta(j), out, None);
        self.tamper_leaves(j, out);
        // Normalised to the convention (keys with lsb 0) as they are made.
        it.encoder
            .encode_with(j * p.bin_size(), &it.base[..p.k], out, Some(self.delta));
    }

    async fn extend_inner<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> Result<()> {
        self.setup_inner(channel).await?;
        out.reserve(n);
        let mut need = n;
        loop {
            need -= self.pool.drain(need, out);
            if need == 0 {
                return Ok(());
            }
            let done = self.iter.as_ref().is_none_or(|i| i.next_tree == i.params.t);
            if done {
                if let Some(it) = self.iter.take() {
                    self.reserve = self.pool.take_reserve();
                    self.spare = it.base;
                }
                self.start_iteration(channel).await?;
                continue;
            }
            let bin = self.iter.as_ref().expect("iteration").params.bin_size();
            if need >= bin && self.pool.take_direct(bin) {
                let len = out.len();
                out.resize(len + bin, Block::ZERO);
                self.produce(&mut out[len..]);
                need -= bin;
            } else {
                let mut buf = self.pool.take_chunk(bin);
                self.produce(&mut buf);
                self.pool.put_chunk(buf);
            }
            self.stats.produced += bin as u64;
        }
    }
}

fn aborted() -> Error {
    Error::Aborted("the COT extension failed earlier; start a new session".into())
}

impl<B: RandomCotSender> RandomCotSender for FerretSender<B> {
    fn delta(&self) -> Block {
        self.delta
    }

    async fn extend<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> Result<()> {
        if self.failed {
            return Err(aborted());
        }
        let r = self.extend_inner(channel, n, out).await;
        self.failed |= r.is_err();
        r
    }
}

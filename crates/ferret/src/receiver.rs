//! The receiver of the extension: gets MACs and choice bits (the ZK prover).

use crate::ccr::Ccr;
use crate::check::{self, Challenge, CHALLENGE_LEN, DIGEST_LEN};
use crate::lpn::{LpnEncoder, CODE_SEED_LEN};
use crate::params::{FerretConfig, LpnParams};
use crate::pool::Pool;
use crate::tree::receiver_tree;
use crate::ExtensionStats;
use rand_core::{CryptoRng, RngCore};
use webproof_core::channel::Channel;
use webproof_core::cot::RandomCotReceiver;
use webproof_core::error::{Error, Result};
use webproof_core::{Block, Io, Prg};

/// State of the iteration whose trees are being turned into outputs.
struct Iteration {
    params: LpnParams,
    encoder: LpnEncoder,
    /// The iteration's reserve; its first `k` entries are the MACs of `u`.
    base: Vec<Block>,
    /// Per tree and level: the XOR of that level's children off the path.
    learned: Vec<Block>,
    /// Per tree: the noisy position (the punctured leaf).
    alphas: Vec<usize>,
    next_tree: usize,
}

/// Bytes of tree leaves the receiver keeps from the check for the outputs
/// by default: on WebAssembly, where fixed-key AES is bitsliced, copying a
/// kept leaf is several times cheaper than hashing it again (the tree
/// hash is about a fifth of the browser prover's time, each tree expanded
/// twice); natively AES-NI expands a tree faster than memory returns it,
/// so nothing is kept. 64 MiB hold the first iteration of a session of up
/// to about 4 M COTs (a 51 KB response proven in zero knowledge).
pub const DEFAULT_LEAF_CACHE: usize = if cfg!(target_arch = "wasm32") {
    64 << 20
} else {
    0
};

/// An iteration whose tree corrections arrived but whose check has not run.
struct Pending {
    index: usize,
    params: LpnParams,
    base: Vec<Block>,
    learned: Vec<Block>,
    alphas: Vec<usize>,
}

/// Silent COT receiver over a bootstrap COT source `B`.
///
/// Implements [`RandomCotReceiver`]: `extend(n)` hands out `n` MACs
/// `M_i = K_i ⊕ b_i·Delta` with the choice bit `b_i = lsb(M_i)`. No output
/// of an iteration is released before that iteration's consistency check
/// has passed; after any failure every call returns an error.
pub struct FerretReceiver<B> {
    config: FerretConfig,
    bootstrap: Option<B>,
    prg: Prg,
    ccr: Ccr,
    reserve: Vec<Block>,
    spare: Vec<Block>,
    iter: Option<Iteration>,
    /// Corrections received, check still to run (see [`Self::setup_until_check`]).
    pending: Option<Pending>,
    /// Iterations started so far (indexes [`FerretConfig::iteration`]).
    started: usize,
    pool: Pool,
    tree: Vec<Block>,
    /// Leaves of the current iteration's first trees, kept from the check
    /// ([`Self::keep_leaves`]): tree `j`'s at `j·bin..(j + 1)·bin`.
    leaves: Vec<Block>,
    /// Most bytes `leaves` may hold.
    leaf_budget: usize,
    /// The seed of this session's LPN codes: ours to choose (see the
    /// module `lpn`), sent with the first check challenge.
    code_seed: [u8; CODE_SEED_LEN],
    failed: bool,
    stats: ExtensionStats,
}

impl<B: RandomCotReceiver> FerretReceiver<B> {
    /// A receiver that bootstraps from `bootstrap`.
    pub fn new(
        config: FerretConfig,
        bootstrap: B,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        config
            .validate()
            .map_err(|e| Error::Usage(format!("Ferret parameters: {e}")))?;
        let mut seed = [0u8; 16];
        rng.fill_bytes(&mut seed);
        let mut code_seed = [0u8; CODE_SEED_LEN];
        rng.fill_bytes(&mut code_seed);
        Ok(FerretReceiver {
            code_seed,
            config,
            bootstrap: Some(bootstrap),
            prg: Prg::new(Block::from_bytes(seed)),
            ccr: Ccr::new(),
            reserve: Vec::new(),
            spare: Vec::new(),
            iter: None,
            pending: None,
            started: 0,
            pool: Pool::new(),
            tree: Vec::new(),
            leaves: Vec::new(),
            leaf_budget: DEFAULT_LEAF_CACHE,
            failed: false,
            stats: ExtensionStats::default(),
        })
    }

    /// Keep up to `bytes` of each iteration's tree leaves from its check
    /// (which expands every tree) for its outputs, instead of expanding
    /// those trees a second time ([`DEFAULT_LEAF_CACHE`] unless set). The
    /// outputs are the same either way; only memory and time differ.
    pub fn keep_leaves(&mut self, bytes: usize) {
        self.leaf_budget = bytes;
    }

    /// Run the bootstrap and the first iteration's exchange now rather than on
    /// the first [`extend`](RandomCotReceiver::extend). Does nothing if done.
    pub async fn setup<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        if self.failed {
            return Err(aborted());
        }
        let r = self.setup_inner(channel).await;
        self.failed |= r.is_err();
        r
    }

    /// [`Self::setup`] up to the arrival of the first iteration's tree
    /// corrections: its consistency check (the receiver's challenge and
    /// the sender's digest) runs at the start of the next
    /// [`extend`](RandomCotReceiver::extend), which may use another
    /// channel carrying the same byte stream onwards. No output is released
    /// before that check has passed. The peer runs
    /// [`crate::FerretSender::setup_until_check`].
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
        let it = self.iter.as_ref().map_or(0, |i| {
            (i.base.capacity() + i.learned.capacity()) * Block::LEN
                + i.alphas.capacity() * core::mem::size_of::<usize>()
        });
        it + self.pool.footprint()
            + (self.reserve.capacity()
                + self.spare.capacity()
                + self.tree.capacity()
                + self.leaves.capacity())
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
        self.receive_corrections(channel).await
    }

    /// Consume the reserve: take the corrections, challenge, check.
    async fn start_iteration<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        self.receive_corrections(channel).await?;
        self.finish_check(channel).await
    }

    /// First half of an iteration: the sender's tree corrections.
    async fn receive_corrections<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        let index = self.started;
        let params = self.config.iteration(index);
        let (k, t, h) = (params.k, params.t, params.log_bin);
        let hu = h as usize;
        let base = core::mem::take(&mut self.reserve);
        debug_assert_eq!(base.len(), params.reserve());
        let tree_macs = &base[k..k + t * hu];

        // The channel bounds the frame: exactly t·h blocks or an error.
        let msg = channel.recv_exact(t * hu * Block::LEN).await?;
        let mut learned = Vec::with_capacity(t * hu);
        let mut alphas = Vec::with_capacity(t);
        for j in 0..t {
            let mut alpha = 0usize;
            for i in 0..hu {
                let at = (j * hu + i) * Block::LEN;
                let c = Block::from_bytes(msg[at..at + Block::LEN].try_into().expect("16 bytes"));
                let m = tree_macs[j * hu + i];
                // The COT's random bit picks the side we learn; the path takes the other.
                alpha = alpha << 1 | !m.lsb() as usize;
                learned.push(c ^ m);
            }
            alphas.push(alpha);
        }
        drop(msg);
        self.started += 1;
        self.pending = Some(Pending {
            index,
            params,
            base,
            learned,
            alphas,
        });
        Ok(())
    }

    /// Second half: challenge, check, and the iteration's outputs unlocked.
    async fn finish_check<T: Io>(&mut self, channel: &mut Channel<T>) -> Result<()> {
        let Pending {
            index,
            params,
            base,
            learned,
            alphas,
        } = self.pending.take().expect("corrections received");
        let (k, t, h) = (params.k, params.t, params.log_bin);
        let hu = h as usize;
        let bin = params.bin_size();
        let check_macs = &base[k + t * hu..];
        let seed = self.prg.next_block();
        let challenge = Challenge::expand(seed, t, bin);
        let mut x2 = check::pack_bits(check_macs);
        for (j, &alpha) in alphas.iter().enumerate() {
            x2 ^= challenge.chi(j, alpha);
        }
        // The first challenge carries the session's code seed in front.
        let mut reply = Vec::with_capacity(CODE_SEED_LEN + CHALLENGE_LEN);
        if index == 0 {
            reply.extend_from_slice(&self.code_seed);
        }
        reply.extend_from_slice(&seed.to_bytes());
        reply.extend_from_slice(&x2.to_bytes());
        channel.send(&reply).await?;
        channel.flush().await?;

        let mut tree = core::mem::take(&mut self.tree);
        tree.resize(bin, Block::ZERO);
        // The previous iteration's outputs are all out: its leaves go.
        self.leaves.clear();
        let cached = (self.leaf_budget / (bin * Block::LEN)).min(alphas.len());
        // Exactly: growing by doubling would pass through twice the budget.
        self.leaves.reserve_exact(cached * bin);
        let mut v = check::pack_cots(check_macs);
        for (j, &alpha) in alphas.iter().enumerate() {
            webproof_core::pause::pause().await;
            receiver_tree(
                &self.ccr,
                h,
                &learned[j * hu..(j + 1) * hu],
                alpha,
                &mut tree,
            );
            v ^= challenge.fold_tree(j, &tree);
            if j < cached {
                self.leaves.extend_from_slice(&tree);
            }
        }
        self.tree = tree;
        let digest = channel.recv_exact(DIGEST_LEN).await?;
        if !check::digests_equal(&digest, &check::digest(v)) {
            return Err(Error::CheckFailed(
                "Ferret consistency check: the sender's trees do not match its Delta".into(),
            ));
        }

        self.stats.iterations += 1;
        self.stats.protocol_received += (t * hu * Block::LEN + DIGEST_LEN + 8) as u64;
        self.stats.protocol_sent += (reply.len() + 4) as u64;
        self.pool.begin(
            core::mem::take(&mut self.spare),
            self.config.iteration(index + 1).reserve(),
            params.n,
            !self.config.is_setup(index),
        );
        self.iter = Some(Iteration {
            params,
            encoder: LpnEncoder::new(&self.code_seed, index, &self.config.code_of(index)),
            base,
            learned,
            alphas,
            next_tree: 0,
        });
        Ok(())
    }

    /// Outputs of the next tree into `out` (`2^log_bin` blocks).
    fn produce(&mut self, out: &mut [Block]) {
        let it = self.iter.as_mut().expect("an iteration is running");
        let j = it.next_tree;
        it.next_tree += 1;
        let p = it.params;
        let hu = p.log_bin as usize;
        let bin = p.bin_size();
        if let Some(kept) = self.leaves.get(j * bin..(j + 1) * bin) {
            out.copy_from_slice(kept);
        } else {
            receiver_tree(
                &self.ccr,
                p.log_bin,
                &it.learned[j * hu..(j + 1) * hu],
                it.alphas[j],
                out,
            );
        }
        it.encoder.encode(j * bin, &it.base[..p.k], out);
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
            webproof_core::pause::pause().await;
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

impl<B: RandomCotReceiver> RandomCotReceiver for FerretReceiver<B> {
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

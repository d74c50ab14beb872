//! LPN parameter sets and the extension configuration.
//!
//! Regular-noise primal LPN: the `n` outputs are `x = u·A + e` where `u` is a
//! random `k`-bit vector, `A` a public `k × n` local linear code (every column
//! has [`ROW_WEIGHT`] = 10 pseudo-random ones) and `e` has exactly one noisy
//! position in each of the `t` consecutive blocks of `2^log_bin` positions.
//!
//! # Where the sets come from, and how secure they are
//!
//! Only the named constants below ([`NAMED_SETS`]) are claimed to give
//! 128-bit security; a hand-made [`LpnParams::new`] set is checked for
//! shape only. Each is checked by a test against the estimator of
//! [`security`](crate::security) (the regular-LPN hybrid attack of ePrint
//! 2025/1284, Pooled Gauss, Stern/Dumer and BJMM ISD in the model of Liu,
//! Wang, Yang and Yu, Eurocrypt 2024, and Briaud and Øygarden's algebraic
//! attack, Eurocrypt 2023), at every prefix a session can run: a set is
//! only as strong as its weakest prefix, since an attacker may drop
//! samples. The hybrid attack binds for all of them. Figures (bits, the
//! minimum over attacks and prefixes, from `cargo run --release -p
//! webproof-ferret --example lpn_security`):
//!
//! | set | n | k | t | 2^h | min (binding attack) |
//! |---|---|---|---|---|---|
//! | [`K19_MAIN`] | 10,485,760 | 524,288 | 1,280 | 8,192 | 138.5 (hybrid) |
//! | [`K18_MAIN`] | 4,915,200 | 262,144 | 1,200 | 4,096 | 133.9 (hybrid) |
//! | [`K17_MAIN`] | 1,843,200 | 131,072 | 900 | 2,048 | 132.9 (BJMM; hybrid 134.0) |
//! | [`S40_SETUP`] | 563,200 | 40,960 | 1,100 | 512 | 139.9 (hybrid) |
//! | [`S20_SETUP`] | 153,600 | 20,480 | 600 | 256 | 145.1 (BJMM; hybrid 147.0) |
//!
//! They follow emp-ot's retune of 2026-05-09 (commit dcbafff: `k` a power of
//! two, `t` chosen against the hybrid attack), with `t` below emp-ot's
//! 128-bit boundary for margin (emp-ot's own sets sit at 128.1–128.7 bits):
//! [`K19_MAIN`] keeps the shape and traffic of the `ferret_b13` set that
//! webproof used before, with `k` raised from 452,000 to 2^19.
//!
//! A session's security is the minimum over its whole chain: each
//! iteration's LPN secret and noise positions are outputs of the one
//! before, so breaking the setup set exposes every later iteration. The
//! setup sets are therefore held to the same bar as the main sets.
//!
//! # Retired sets
//!
//! Until protocol version 27 webproof ran emp-ot's sets of 2022-10-14
//! (`ferret/constants.h`, commit 18f83b8: `ferret_b13`, `b12`, `b11` and
//! their setup sets) and kept the original paper's set for comparison.
//! They predate Briaud and Øygarden's attack (ePrint 2023/176) and emp-ot
//! retired them on 2026-05-09. This module's estimator puts them at
//! (hybrid attack, which binds): `b11` main (10,180,608, 124,000, 4,971,
//! 2^11) 92.8 bits and its 2,648-block prefix that a 51 KB session ran
//! 99.4; `b13` main (10,485,760, 452,000, 1,280, 2^13) 125.3; `b12` main
//! (10,268,672, 238,000, 2,507, 2^12) 104.5; the setup sets (178,944,
//! 17,384, 699, 2^8) 124.0, (470,016, 32,768, 918, 2^9) 119.8 and
//! (268,800, 17,384, 1,050, 2^8) 113.7; the paper's (649,728, 36,288,
//! 1,269, 2^9) 122.1. They are deleted, not kept usable.
//!
//! Rule of thumb for traffic: each iteration costs `t · log_bin` blocks from
//! the sender (the half-tree corrections) and 32 bytes back, for
//! `n - reserve` fresh COTs.

use core::fmt;

/// Ones per column of the LPN code: each output XORs this many entries of `u`.
pub const ROW_WEIGHT: usize = 10;

/// COTs spent per iteration on the malicious consistency check (one GF(2^128) element).
pub const CHECK_COTS: usize = 128;

/// One regular-noise LPN instance: `n = t · 2^log_bin` outputs from a
/// `k`-element secret with `t` noisy positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LpnParams {
    /// Outputs per iteration.
    pub n: usize,
    /// Length of the LPN secret (COTs consumed for `u`).
    pub k: usize,
    /// Noise weight = number of single-point COTs (trees).
    pub t: usize,
    /// log2 of the block (tree) size.
    pub log_bin: u32,
}

/// Why a parameter set or configuration was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// `n` is not `t · 2^log_bin`.
    ShapeMismatch { n: usize, t: usize, log_bin: u32 },
    /// Tree depth outside `1..=24`.
    TreeDepth(u32),
    /// `k` is zero or does not fit the 32-bit index sampler.
    SecretLength(usize),
    /// An iteration would not produce more than it consumes.
    NoNetOutput { n: usize, reserve: usize },
    /// The setup iteration produces fewer COTs than one main iteration needs.
    SetupTooSmall { produced: usize, needed: usize },
    /// The cut first main iteration has no trees, more trees than the main
    /// set, or does not refill a full main reserve with output to spare.
    FirstMainSize {
        trees: usize,
        max: usize,
        produced: usize,
        needed: usize,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::ShapeMismatch { n, t, log_bin } => {
                write!(f, "n = {n} is not t = {t} times 2^{log_bin}")
            }
            ParamError::TreeDepth(h) => write!(f, "tree depth {h} outside 1..=24"),
            ParamError::SecretLength(k) => write!(f, "LPN secret length {k} out of range"),
            ParamError::NoNetOutput { n, reserve } => {
                write!(f, "an iteration of {n} outputs consumes {reserve}")
            }
            ParamError::SetupTooSmall { produced, needed } => write!(
                f,
                "setup iteration yields {produced} COTs, a main iteration needs {needed}"
            ),
            ParamError::FirstMainSize {
                trees,
                max,
                produced,
                needed,
            } => write!(
                f,
                "first main iteration of {trees} trees (at most {max}) yields {produced} COTs, \
                 more than {needed} needed"
            ),
        }
    }
}

impl std::error::Error for ParamError {}

impl LpnParams {
    /// A parameter set, checked for shape (not for security: see the module docs).
    pub const fn new(n: usize, k: usize, t: usize, log_bin: u32) -> Self {
        LpnParams { n, k, t, log_bin }
    }

    /// Leaves per tree.
    pub const fn bin_size(&self) -> usize {
        1 << self.log_bin
    }

    /// COTs one iteration consumes: `k` for the secret, `t · log_bin` for the
    /// trees and [`CHECK_COTS`] for the consistency check.
    pub const fn reserve(&self) -> usize {
        self.k + self.t * self.log_bin as usize + CHECK_COTS
    }

    /// Fresh COTs an iteration yields beyond what the next one consumes.
    pub const fn net(&self) -> usize {
        self.n - self.reserve()
    }

    /// Bytes the sender sends per iteration (tree corrections and check digest).
    pub const fn sender_bytes(&self) -> usize {
        self.t * self.log_bin as usize * 16 + 32
    }

    /// Bytes the receiver sends per iteration (challenge seed and masked check value).
    pub const fn receiver_bytes(&self) -> usize {
        32
    }

    /// The first `t` noise blocks of this set: same `k`, same block size,
    /// `n = t · 2^log_bin`. Its outputs are distributed exactly as the first
    /// `n` outputs of an instance of `self` (same secret length, the same
    /// kind of random columns, one noisy position in each of the first `t`
    /// blocks), so it is at least as hard to tell from random: any
    /// distinguisher for the prefix is one for `self` that ignores the
    /// remaining samples. Only `t` is checked here (by [`FerretConfig::validate`]).
    pub const fn prefix(&self, t: usize) -> Self {
        LpnParams::new(t << self.log_bin, self.k, t, self.log_bin)
    }

    /// Check the shape constraints the protocol relies on.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(1..=24).contains(&self.log_bin) {
            return Err(ParamError::TreeDepth(self.log_bin));
        }
        if self.t.checked_mul(1 << self.log_bin) != Some(self.n) || self.t == 0 {
            return Err(ParamError::ShapeMismatch {
                n: self.n,
                t: self.t,
                log_bin: self.log_bin,
            });
        }
        if self.k == 0 || self.k > u32::MAX as usize {
            return Err(ParamError::SecretLength(self.k));
        }
        if self.n <= self.reserve() {
            return Err(ParamError::NoNetOutput {
                n: self.n,
                reserve: self.reserve(),
            });
        }
        Ok(())
    }
}

/// Main set of large sessions: 10,485,760 outputs, k = 2^19, t = 1,280,
/// 2^13 leaves (138.5 bits; `ferret_b13`'s old shape with a larger secret).
pub const K19_MAIN: LpnParams = LpnParams::new(10_485_760, 1 << 19, 1_280, 13);
/// A middle set: 4,915,200 outputs, k = 2^18, t = 1,200, 2^12 leaves (133.9
/// bits): half of [`K19_MAIN`]'s secret, for the `balanced` preset.
pub const K18_MAIN: LpnParams = LpnParams::new(4_915_200, 1 << 18, 1_200, 12);
/// Main set of small sessions: 1,843,200 outputs, k = 2^17, t = 900, 2^11
/// leaves (132.9 bits): a 2 MiB secret that stays closer to the cache.
pub const K17_MAIN: LpnParams = LpnParams::new(1_843_200, 1 << 17, 900, 11);
/// Setup set feeding [`K19_MAIN`] or [`K18_MAIN`] (and the `compact`
/// preset's only set): 563,200 outputs, k = 40,960, t = 1,100, 2^9 leaves
/// (139.9 bits).
pub const S40_SETUP: LpnParams = LpnParams::new(563_200, 40_960, 1_100, 9);
/// Setup set feeding [`K17_MAIN`]: 153,600 outputs, k = 20,480, t = 600,
/// 2^8 leaves (145.1 bits).
pub const S20_SETUP: LpnParams = LpnParams::new(153_600, 20_480, 600, 8);

/// Every set this crate claims at 128 bits, by name: the tests check each
/// (and each of its prefixes) against [`security`](crate::security).
pub const NAMED_SETS: [(&str, LpnParams); 5] = [
    ("K19_MAIN", K19_MAIN),
    ("K18_MAIN", K18_MAIN),
    ("K17_MAIN", K17_MAIN),
    ("S40_SETUP", S40_SETUP),
    ("S20_SETUP", S20_SETUP),
];

/// Which LPN sets an extension runs.
///
/// The iterations, in order (see [`FerretConfig::iteration`]): the setup set
/// once (if any), then the first main iteration (the main set, or its prefix
/// of `first_main_trees` noise blocks), then the main set for ever. The
/// bootstrap COT source supplies the first iteration's reserve; each
/// iteration keeps the next one's reserve (from its last outputs, a setup
/// iteration from its first: see `pool`) and hands out the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FerretConfig {
    /// The set every steady-state iteration uses.
    pub main: LpnParams,
    /// An optional smaller set run once to stretch the bootstrap COTs.
    pub setup: Option<LpnParams>,
    /// Cut the first main iteration to the first this-many noise blocks of
    /// `main` ([`LpnParams::prefix`]): a short session then pays for the
    /// trees and LPN it needs, not a whole main iteration. It must still
    /// refill a full `main` reserve, so later iterations run at full size.
    /// Both parties must use the same value. `None`: full size.
    pub first_main_trees: Option<usize>,
}

impl FerretConfig {
    /// Throughput: [`K19_MAIN`] after [`S40_SETUP`] (10.5 M outputs per
    /// iteration, about 0.21 bits per COT from the sender). Holds about 17
    /// MB per party (two reserves of 541 k blocks) whatever the number of
    /// COTs drawn.
    pub const fn throughput() -> Self {
        FerretConfig {
            main: K19_MAIN,
            setup: Some(S40_SETUP),
            first_main_trees: None,
        }
    }

    /// Balanced: [`K18_MAIN`] after [`S40_SETUP`] (4.9 M per iteration,
    /// about 0.40 bits per COT): half the secret of [`K19_MAIN`], so the
    /// encoder's table stays closer to the cache (faster LPN step) and each
    /// party holds about 9 MB.
    pub const fn balanced() -> Self {
        FerretConfig {
            main: K18_MAIN,
            setup: Some(S40_SETUP),
            first_main_trees: None,
        }
    }

    /// Memory-friendly: [`S40_SETUP`] (563,200 per iteration) as the main
    /// set and no setup stage. About 1.7 MB per party and little work per
    /// iteration, at about 2.5 bits per COT from the sender; for short
    /// sessions and small devices.
    pub const fn compact() -> Self {
        FerretConfig {
            main: S40_SETUP,
            setup: None,
            first_main_trees: None,
        }
    }

    /// The first main iteration's set: `main`, or its prefix.
    pub const fn first_main(&self) -> LpnParams {
        match self.first_main_trees {
            Some(t) => self.main.prefix(t),
            None => self.main,
        }
    }

    /// The set of iteration `i` (0-based, counting the setup iteration).
    pub const fn iteration(&self, i: usize) -> LpnParams {
        match (self.setup, i) {
            (Some(s), 0) => s,
            (Some(_), 1) | (None, 0) => self.first_main(),
            _ => self.main,
        }
    }

    /// Whether iteration `i` is the setup iteration.
    pub(crate) const fn is_setup(&self, i: usize) -> bool {
        self.setup.is_some() && i == 0
    }

    /// The set whose public LPN code iteration `i` uses: a cut first main
    /// iteration uses `main`'s code (its first columns), so it is literally
    /// a prefix of a `main` instance.
    pub(crate) const fn code_of(&self, i: usize) -> LpnParams {
        match (self.setup, i) {
            (Some(s), 0) => s,
            _ => self.main,
        }
    }

    /// COTs drawn from the bootstrap source.
    pub const fn bootstrap_cots(&self) -> usize {
        self.iteration(0).reserve()
    }

    /// COTs the iterations before the first main one hand out to the
    /// caller (the setup iteration's surplus beyond the first main
    /// iteration's reserve; 0 without a setup set). Drawing exactly this
    /// many runs the bootstrap and the setup iteration; one more runs the
    /// first main iteration.
    pub const fn setup_surplus(&self) -> usize {
        match self.setup {
            Some(s) => s.n.saturating_sub(self.first_main().reserve()),
            None => 0,
        }
    }

    /// COTs the first main iteration hands out to the caller.
    pub const fn first_main_net(&self) -> usize {
        self.first_main().n.saturating_sub(self.main.reserve())
    }

    /// Check every set, that the setup set feeds a main iteration and that
    /// a cut first main iteration refills a full main reserve.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.main.validate()?;
        if let Some(s) = self.setup {
            s.validate()?;
            if s.n < self.main.reserve() {
                return Err(ParamError::SetupTooSmall {
                    produced: s.n,
                    needed: self.main.reserve(),
                });
            }
        }
        if let Some(t) = self.first_main_trees {
            let first = self.main.prefix(t);
            if t == 0 || t > self.main.t || first.n <= self.main.reserve() {
                return Err(ParamError::FirstMainSize {
                    trees: t,
                    max: self.main.t,
                    produced: first.n,
                    needed: self.main.reserve(),
                });
            }
            first.validate()?;
        }
        Ok(())
    }
}

impl Default for FerretConfig {
    fn default() -> Self {
        FerretConfig::throughput()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::{Estimate, TARGET_BITS};

    /// Every named set, at every prefix a session could cut from it, is at
    /// 128 bits or more under every attack the estimator models. A new set
    /// must be added to [`NAMED_SETS`] (the example and this test read it)
    /// and pass here.
    #[test]
    fn named_sets_reach_128_bits() {
        for (name, p) in NAMED_SETS {
            // The shortest prefix that still refills a reserve.
            let fewest = p.reserve() / p.bin_size() + 1;
            let e = Estimate::of_prefixes(&p, fewest.min(p.t)..=p.t);
            assert!(e.min() >= TARGET_BITS, "{name} {p:?}: {e:?}");
        }
    }

    #[test]
    fn presets_are_well_formed() {
        for (_, p) in NAMED_SETS {
            p.validate().unwrap();
        }
        for c in [
            FerretConfig::throughput(),
            FerretConfig::balanced(),
            FerretConfig::compact(),
        ] {
            c.validate().unwrap();
        }
        // Each setup set feeds a full main iteration without much waste.
        for (main, setup) in [(K19_MAIN, S40_SETUP), (K17_MAIN, S20_SETUP)] {
            let c = FerretConfig {
                main,
                setup: Some(setup),
                first_main_trees: None,
            };
            c.validate().unwrap();
            assert!(setup.n - main.reserve() < setup.n / 10);
        }
    }

    #[test]
    fn bad_shapes_rejected() {
        assert!(matches!(
            LpnParams::new(1000, 10, 3, 8).validate(),
            Err(ParamError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            LpnParams::new(0, 10, 0, 8).validate(),
            Err(ParamError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            LpnParams::new(1 << 30, 10, 1 << 5, 25).validate(),
            Err(ParamError::TreeDepth(25))
        ));
        assert!(matches!(
            LpnParams::new(512, 500, 2, 8).validate(),
            Err(ParamError::NoNetOutput { .. })
        ));
        assert!(matches!(
            LpnParams::new(512, 0, 2, 8).validate(),
            Err(ParamError::SecretLength(0))
        ));
        let c = FerretConfig {
            main: K19_MAIN,
            setup: Some(S20_SETUP),
            first_main_trees: None,
        };
        assert!(matches!(
            c.validate(),
            Err(ParamError::SetupTooSmall { .. })
        ));
    }

    #[test]
    fn cut_first_main_iteration() {
        let full = FerretConfig::throughput();
        // The smallest cut refills a full reserve with output to spare.
        let min = full.main.reserve() / full.main.bin_size() + 1;
        for t in [min, 100, 640, full.main.t] {
            let c = FerretConfig {
                first_main_trees: Some(t),
                ..full
            };
            c.validate().unwrap();
            let first = c.first_main();
            assert_eq!((first.k, first.log_bin, first.t), (K19_MAIN.k, 13, t));
            assert_eq!(first.n, t << 13);
            assert_eq!(c.iteration(0), S40_SETUP);
            assert_eq!(c.iteration(1), first);
            assert_eq!(c.iteration(2), K19_MAIN);
            assert_eq!(c.iteration(7), K19_MAIN);
            assert_eq!(c.code_of(1), K19_MAIN);
            assert_eq!(c.first_main_net(), first.n - K19_MAIN.reserve());
            assert_eq!(c.setup_surplus(), S40_SETUP.n - first.reserve());
            assert!(c.setup_surplus() >= full.setup_surplus());
        }
        for t in [0, min - 1, full.main.t + 1, usize::MAX] {
            let c = FerretConfig {
                first_main_trees: Some(t),
                ..full
            };
            assert!(
                matches!(c.validate(), Err(ParamError::FirstMainSize { .. })),
                "{t}"
            );
        }
        // Without a setup set the cut iteration comes first.
        let c = FerretConfig {
            main: K19_MAIN,
            setup: None,
            first_main_trees: Some(200),
        };
        c.validate().unwrap();
        assert_eq!(c.iteration(0).t, 200);
        assert_eq!(c.bootstrap_cots(), K19_MAIN.prefix(200).reserve());
        assert_eq!(c.iteration(1), K19_MAIN);
        assert_eq!(c.setup_surplus(), 0);
    }
}

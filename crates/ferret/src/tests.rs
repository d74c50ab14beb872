//! Two-party tests of the whole extension, including cheating senders and bad input.

use crate::params::{FerretConfig, LpnParams};
use crate::sender::Tamper;
use crate::{FerretReceiver, FerretSender};
use futures::executor::block_on;
use futures::future::join;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use webproof_core::cot::ideal::{pair, IdealCotReceiver, IdealCotSender};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel, Error, MemoryIo};

/// Tiny (insecure) sets so that many iterations run in milliseconds.
fn tiny() -> FerretConfig {
    FerretConfig {
        main: LpnParams::new(2048, 512, 16, 7),
        setup: Some(LpnParams::new(1536, 256, 12, 7)),
        first_main_trees: None,
    }
}

type Pair = (
    FerretSender<IdealCotSender>,
    FerretReceiver<IdealCotReceiver>,
);

fn parties(config: FerretConfig, seed: u64) -> Pair {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let (bs, br) = pair(seed);
    (
        FerretSender::new(config, bs, &mut rng).unwrap(),
        FerretReceiver::new(config, br, &mut rng).unwrap(),
    )
}

fn channels() -> (Channel<MemoryIo>, Channel<MemoryIo>) {
    let (a, b) = memory_duplex();
    (Channel::new(a), Channel::new(b))
}

/// Draw the same batches on both sides; returns keys and MACs.
fn run(
    s: &mut FerretSender<IdealCotSender>,
    r: &mut FerretReceiver<IdealCotReceiver>,
    batches: &[usize],
) -> (Vec<Block>, Vec<Block>) {
    let (mut cs, mut cr) = channels();
    let (mut k, mut m) = (Vec::new(), Vec::new());
    block_on(async {
        let fs = async {
            for &n in batches {
                s.extend(&mut cs, n, &mut k).await.unwrap();
            }
        };
        let fr = async {
            for &n in batches {
                r.extend(&mut cr, n, &mut m).await.unwrap();
            }
        };
        join(fs, fr).await;
    });
    (k, m)
}

fn assert_correlated(delta: Block, k: &[Block], m: &[Block]) -> usize {
    assert_eq!(k.len(), m.len());
    let mut ones = 0;
    for (i, (k, m)) in k.iter().zip(m).enumerate() {
        assert!(!k.lsb(), "key {i} has lsb 1");
        let b = m.lsb();
        ones += b as usize;
        assert_eq!(
            *m,
            *k ^ Block::select(b, delta),
            "COT {i} is not correlated"
        );
    }
    ones
}

#[test]
fn tiny_sets_correlate_across_many_iterations_and_odd_batches() {
    let (mut s, mut r) = parties(tiny(), 1);
    let batches = [1, 7, 1000, 2048, 3, 5000, 128, 129, 10_000];
    let (k, m) = run(&mut s, &mut r, &batches);
    let total: usize = batches.iter().sum();
    assert_eq!(k.len(), total);
    let ones = assert_correlated(s.delta(), &k, &m);
    // Balanced bits: 18,316 draws, expect 9,158 ± 68 (1 sigma).
    assert!((total / 2).abs_diff(ones) < 600, "{ones} ones in {total}");
    assert!(s.stats().iterations >= 10);
    assert_eq!(s.stats().iterations, r.stats().iterations);
    // No two outputs equal (a stuck tree or encoder would repeat).
    let mut sorted: Vec<u128> = k.iter().map(|b| b.0).collect();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), total);
}

/// Keeping the check's leaves for the outputs changes only the work: the
/// same seeds give the same MACs with no cache, a cache of three trees
/// (the rest expanded again) and one of whole iterations, across many
/// iterations and odd batches; memory stays within the budget.
#[test]
fn kept_leaves_give_the_same_outputs() {
    let batches = [1, 700, 5000, 128, 9000];
    let bin_bytes = tiny().main.bin_size() * 16;
    let mut macs = Vec::new();
    for budget in [0, 3 * bin_bytes, 1 << 20] {
        let (mut s, mut r) = parties(tiny(), 77);
        r.keep_leaves(budget);
        let (k, m) = run(&mut s, &mut r, &batches);
        assert_correlated(s.delta(), &k, &m);
        let bound = 4 * tiny().main.reserve() * 16 + 8 * bin_bytes;
        assert!(r.memory_footprint() < bound + budget, "budget {budget}");
        macs.push(m);
    }
    assert_eq!(macs[0], macs[1]);
    assert_eq!(macs[0], macs[2]);
}

#[test]
fn batch_sizes_may_differ_if_totals_meet() {
    let (mut s, mut r) = parties(tiny(), 12);
    let (mut cs, mut cr) = channels();
    let (mut k, mut m) = (Vec::new(), Vec::new());
    block_on(join(
        async {
            for n in [5000, 1, 2999, 4000] {
                s.extend(&mut cs, n, &mut k).await.unwrap();
            }
        },
        async {
            for n in [3, 9997, 2000] {
                r.extend(&mut cr, n, &mut m).await.unwrap();
            }
        },
    ));
    assert_eq!(k.len(), 12_000);
    assert_correlated(s.delta(), &k, &m);
}

#[test]
fn no_setup_stage_also_works() {
    let config = FerretConfig {
        main: LpnParams::new(2048, 512, 16, 7),
        setup: None,
        first_main_trees: None,
    };
    let (mut s, mut r) = parties(config, 2);
    let (k, m) = run(&mut s, &mut r, &[10_000]);
    assert_correlated(s.delta(), &k, &m);
}

#[test]
fn compact_preset_two_million() {
    let (mut s, mut r) = parties(FerretConfig::compact(), 3);
    let n = 2_000_000;
    let (k, m) = run(&mut s, &mut r, &[n / 2, n / 2]);
    let ones = assert_correlated(s.delta(), &k, &m);
    // sigma = 707
    assert!((n / 2).abs_diff(ones) < 5_000, "{ones} ones in {n}");
    let st = s.stats();
    // Traffic per iteration: t·h blocks + digest one way, 32 bytes back.
    let per_iter = crate::params::S40_SETUP.sender_bytes() as u64 + 8;
    assert_eq!(st.protocol_sent, st.iterations * per_iter);
}

#[test]
fn throughput_preset_one_iteration() {
    let (mut s, mut r) = parties(FerretConfig::throughput(), 4);
    let n = 3_000_000;
    let (k, m) = run(&mut s, &mut r, &[n]);
    let ones = assert_correlated(s.delta(), &k, &m);
    assert!((n / 2).abs_diff(ones) < 6_000, "{ones} ones in {n}");
    // Setup iteration + first main iteration only.
    assert_eq!(s.stats().iterations, 2);
}

#[test]
fn memory_stays_bounded_over_many_iterations() {
    let (mut s, mut r) = parties(tiny(), 5);
    let (mut cs, mut cr) = channels();
    block_on(async {
        let fs = async {
            let mut out = Vec::new();
            let mut first = 0;
            for round in 0..60 {
                out.clear();
                s.extend(&mut cs, 3000, &mut out).await.unwrap();
                if round == 5 {
                    first = s.memory_footprint();
                }
                if round > 5 {
                    assert!(s.memory_footprint() <= first, "sender grows");
                }
            }
        };
        let fr = async {
            let mut out = Vec::new();
            let mut first = 0;
            for round in 0..60 {
                out.clear();
                r.extend(&mut cr, 3000, &mut out).await.unwrap();
                if round == 5 {
                    first = r.memory_footprint();
                }
                if round > 5 {
                    assert!(r.memory_footprint() <= first, "receiver grows");
                }
            }
        };
        join(fs, fr).await;
    });
    // 180,000 COTs went through 2,048-output iterations.
    assert!(s.stats().iterations > 80);
    let bound = 4 * tiny().main.reserve() * 16 + 8 * tiny().main.bin_size() * 16;
    assert!(s.memory_footprint() < bound);
    assert!(r.memory_footprint() < bound);
}

/// Run setup + some output with a cheating sender; the receiver must either
/// reject or hold correct correlations.
fn cheat_trial(config: FerretConfig, tamper: Tamper, seed: u64) -> bool {
    let (mut s, mut r) = parties(config, seed);
    s.tamper = Some(tamper);
    let (mut cs, mut cr) = channels();
    let (mut k, mut m) = (Vec::new(), Vec::new());
    let n = config.main.n;
    let (rs, rr) = block_on(async {
        join(
            async {
                let r = s.extend(&mut cs, n, &mut k).await;
                drop(cs);
                r
            },
            async {
                let r = r.extend(&mut cr, n, &mut m).await;
                drop(cr);
                r
            },
        )
        .await
    });
    match rr {
        Err(Error::CheckFailed(_)) => {
            // Nothing was released, and the instance refuses to go on.
            assert!(m.is_empty());
            let (mut c2, _peer) = channels();
            assert!(matches!(
                block_on(r.extend(&mut c2, 1, &mut m)),
                Err(Error::Aborted(_))
            ));
            true
        }
        Err(e) => panic!("unexpected receiver error {e}"),
        Ok(()) => {
            rs.unwrap();
            assert_correlated(s.delta(), &k, &m);
            false
        }
    }
}

fn random_mask(rng: &mut ChaCha12Rng) -> Block {
    // Any non-zero mask, including single-bit ones.
    if rng.gen_bool(0.5) {
        Block(1u128 << rng.gen_range(0..128))
    } else {
        Block(rng.gen::<u128>() | 1 << 100)
    }
}

#[test]
fn corrupted_level_messages_are_caught() {
    let config = FerretConfig {
        main: LpnParams::new(2048, 512, 16, 7),
        setup: None,
        first_main_trees: None,
    };
    let mut rng = ChaCha12Rng::seed_from_u64(6);
    for trial in 0..150 {
        let tamper = Tamper::LevelMessage {
            tree: rng.gen_range(0..16),
            level: rng.gen_range(0..7),
            mask: random_mask(&mut rng),
        };
        assert!(
            cheat_trial(config, tamper, 1000 + trial),
            "{tamper:?} passed"
        );
    }
}

#[test]
fn corrupted_leaves_and_roots_are_caught() {
    let config = FerretConfig {
        main: LpnParams::new(2048, 512, 16, 7),
        setup: None,
        first_main_trees: None,
    };
    let mut rng = ChaCha12Rng::seed_from_u64(7);
    for trial in 0..150 {
        let tree = rng.gen_range(0..16);
        let mask = random_mask(&mut rng);
        let tamper = match trial % 4 {
            0 => Tamper::Leaf {
                tree,
                leaf: rng.gen_range(0..128),
                mask,
            },
            1 => Tamper::RootDelta { tree, mask },
            2 => Tamper::SeedSwap { tree, mask },
            _ => Tamper::CheckValue { mask },
        };
        assert!(
            cheat_trial(config, tamper, 2000 + trial),
            "{tamper:?} passed"
        );
    }
}

#[test]
fn cheating_in_the_setup_iteration_is_caught() {
    let mut rng = ChaCha12Rng::seed_from_u64(8);
    for trial in 0..40 {
        // The setup set has 12 trees; tampering tree < 12 hits the setup iteration.
        let tamper = Tamper::LevelMessage {
            tree: rng.gen_range(0..12),
            level: rng.gen_range(0..7),
            mask: random_mask(&mut rng),
        };
        assert!(cheat_trial(tiny(), tamper, 3000 + trial));
    }
}

/// A peer that speaks raw frames.
fn raw_peer_test<F, Fut>(peer: F) -> Error
where
    F: FnOnce(Channel<MemoryIo>) -> Fut,
    Fut: core::future::Future<Output = ()>,
{
    let config = FerretConfig {
        main: LpnParams::new(2048, 512, 16, 7),
        setup: None,
        first_main_trees: None,
    };
    let (_, mut r) = parties(config, 9);
    let (cs, mut cr) = channels();
    let mut m = Vec::new();
    let (res, ()) = block_on(join(r.extend(&mut cr, 10, &mut m), peer(cs)));
    assert!(m.is_empty());
    res.unwrap_err()
}

#[test]
fn receiver_rejects_malformed_sender_messages() {
    let t_h_bytes = 16 * 7 * 16;
    // Truncated corrections.
    let e = raw_peer_test(|mut c| async move {
        c.send(&vec![0u8; t_h_bytes - 16]).await.unwrap();
        c.flush().await.unwrap();
    });
    assert!(matches!(e, Error::Channel(_)), "{e}");
    // Oversized corrections (announced length beyond the bound; no allocation).
    let e = raw_peer_test(|mut c| async move {
        use futures::AsyncWriteExt;
        let _ = c.flush().await;
        let mut io = c.into_inner().await.unwrap();
        io.write_all(&u32::MAX.to_le_bytes()).await.unwrap();
        io.flush().await.unwrap();
    });
    assert!(matches!(e, Error::Channel(_)), "{e}");
    // Right corrections, then a short digest.
    let e = raw_peer_test(|mut c| async move {
        c.send(&vec![7u8; t_h_bytes]).await.unwrap();
        let _challenge = c.recv(64).await.unwrap();
        c.send(&[1u8; 31]).await.unwrap();
        c.flush().await.unwrap();
    });
    assert!(matches!(e, Error::Channel(_)), "{e}");
    // Garbage of the right shape: caught by the check.
    let e = raw_peer_test(|mut c| async move {
        c.send(&vec![7u8; t_h_bytes]).await.unwrap();
        let _challenge = c.recv(64).await.unwrap();
        c.send(&[1u8; 32]).await.unwrap();
        c.flush().await.unwrap();
    });
    assert!(matches!(e, Error::CheckFailed(_)), "{e}");
    // Hang-up mid-protocol.
    let e = raw_peer_test(|c| async move { drop(c) });
    assert!(matches!(e, Error::Channel(_)), "{e}");
}

#[test]
fn sender_rejects_malformed_receiver_messages() {
    let config = FerretConfig {
        main: LpnParams::new(2048, 512, 16, 7),
        setup: None,
        first_main_trees: None,
    };
    for bad in [0usize, 31, 33, 4096] {
        let (mut s, _) = parties(config, 10);
        let (mut cs, mut cr) = channels();
        let mut k = Vec::new();
        let peer = async move {
            let _ = cr.recv(1 << 20).await.unwrap();
            cr.send(&vec![3u8; bad]).await.unwrap();
            cr.flush().await.unwrap();
            // Hanging up now still lets the sender read what was sent.
            drop(cr);
        };
        let (res, ()) = block_on(join(s.extend(&mut cs, 10, &mut k), peer));
        assert!(matches!(res, Err(Error::Channel(_))), "{bad}: {res:?}");
        assert!(k.is_empty());
        // Failed sender refuses to continue.
        assert!(matches!(
            block_on(s.extend(&mut cs, 1, &mut k)),
            Err(Error::Aborted(_))
        ));
    }
}

#[test]
fn bad_configurations_are_refused() {
    let mut rng = ChaCha12Rng::seed_from_u64(11);
    let (bs, br) = pair(11);
    let bad = FerretConfig {
        main: LpnParams::new(2000, 512, 16, 7),
        setup: None,
        first_main_trees: None,
    };
    assert!(matches!(
        FerretSender::new(bad, bs, &mut rng),
        Err(Error::Usage(_))
    ));
    assert!(matches!(
        FerretReceiver::new(bad, br, &mut rng),
        Err(Error::Usage(_))
    ));
}

#[test]
fn softspoken_bootstrap_end_to_end() {
    use crate::{SilentCotReceiver, SilentCotSender};
    let (mut cs, mut cr) = channels();
    let config = FerretConfig::compact();
    let n = 600_000;
    let ((s, k), (r, m)) = block_on(join(
        async {
            let mut rng = ChaCha12Rng::seed_from_u64(20);
            let mut s = SilentCotSender::connect(config, &mut cs, &mut rng)
                .await
                .unwrap();
            let mut k = Vec::new();
            s.extend(&mut cs, n, &mut k).await.unwrap();
            (s, k)
        },
        async {
            let mut rng = ChaCha12Rng::seed_from_u64(21);
            let mut r = SilentCotReceiver::connect(config, &mut cr, &mut rng)
                .await
                .unwrap();
            let mut m = Vec::new();
            r.extend(&mut cr, n, &mut m).await.unwrap();
            (r, m)
        },
    ));
    let ones = assert_correlated(s.delta(), &k, &m);
    assert!((n / 2).abs_diff(ones) < 4_000);
    assert_eq!(s.stats().iterations, r.stats().iterations);
    assert!(s.stats().bootstrap_sent + s.stats().bootstrap_received > 0);
}

/// `tiny()` with its first main iteration cut to `trees` noise blocks.
fn tiny_cut(trees: usize) -> FerretConfig {
    FerretConfig {
        first_main_trees: Some(trees),
        ..tiny()
    }
}

#[test]
fn cut_first_iteration_correlates_and_later_ones_run_full() {
    // main reserve = 512 + 16·7 + 128 = 752; 7 trees of 128 leave 144 over.
    let config = tiny_cut(7);
    config.validate().unwrap();
    let (mut s, mut r) = parties(config, 30);
    let surplus = config.setup_surplus();
    let first_net = config.first_main_net();
    assert_eq!(first_net, 7 * 128 - 752);
    // The setup surplus, exactly the cut iteration's output, then one more
    // COT (which needs a full-size iteration).
    let (k, m) = run(&mut s, &mut r, &[surplus, first_net]);
    assert_correlated(s.delta(), &k, &m);
    assert_eq!(s.stats().iterations, 2);
    let cut_sent = s.stats().protocol_sent;
    let setup_sent = config.iteration(0).sender_bytes() as u64 + 8;
    assert_eq!(
        cut_sent,
        setup_sent + config.first_main().sender_bytes() as u64 + 8
    );
    // 5,001 more: four full iterations of 2,048 - 752 = 1,296 each.
    let (k, m) = run(&mut s, &mut r, &[1, 5000]);
    assert_correlated(s.delta(), &k, &m);
    assert_eq!(s.stats().iterations, 6);
    assert_eq!(s.stats().iterations, r.stats().iterations);
    // Iterations after the cut one run the full set.
    let full = config.main.sender_bytes() as u64 + 8;
    assert_eq!(s.stats().protocol_sent, cut_sent + 4 * full);
}

/// The cut iteration is literally a prefix of a full one: with the same
/// randomness, its outputs are the full iteration's first outputs.
#[test]
fn cut_first_iteration_is_a_prefix_of_the_full_one() {
    let full = tiny();
    let cut = tiny_cut(9);
    let draw = |config: FerretConfig| {
        let (mut s, mut r) = parties(config, 31);
        // Skip the setup surplus (it differs: the cut iteration's reserve
        // is smaller); keep the first main iteration's output.
        let (_, _) = run(&mut s, &mut r, &[config.setup_surplus()]);
        let (k, m) = run(&mut s, &mut r, &[cut.first_main_net()]);
        assert_correlated(s.delta(), &k, &m);
        (s.delta(), k, m)
    };
    let (d_full, k_full, m_full) = draw(full);
    let (d_cut, k_cut, m_cut) = draw(cut);
    assert_eq!(d_full, d_cut);
    assert_eq!(k_full, k_cut);
    assert_eq!(m_full, m_cut);
}

/// A main iteration's reserve is made from its last trees: drawing just the
/// caller's part of a cut first iteration expands and encodes none of them
/// (a session sized to its needs never starts another iteration); drawing
/// on makes them and runs the next iteration, every output correlated.
#[test]
fn main_reserve_comes_last() {
    let config = tiny_cut(9);
    let bin = config.main.bin_size();
    let (mut s, mut r) = parties(config, 33);
    let (k, m) = run(&mut s, &mut r, &[config.setup_surplus()]);
    assert_correlated(s.delta(), &k, &m);
    // The setup iteration, all of it.
    assert_eq!(s.stats().produced, config.iteration(0).n as u64);
    let net = config.first_main_net();
    let (k, m) = run(&mut s, &mut r, &[net]);
    assert_correlated(s.delta(), &k, &m);
    let made = (s.stats().produced, r.stats().produced);
    let want = (config.iteration(0).n + net.div_ceil(bin) * bin) as u64;
    assert_eq!(made, (want, want));
    assert!(want < (config.iteration(0).n + config.first_main().n) as u64);
    let (k, m) = run(&mut s, &mut r, &[1, 2 * bin]);
    assert_correlated(s.delta(), &k, &m);
    assert_eq!(s.stats().iterations, 3);
    assert_eq!(r.stats().iterations, 3);
}

#[test]
fn cheating_in_a_cut_first_iteration_is_caught() {
    let mut rng = ChaCha12Rng::seed_from_u64(32);
    for trial in 0..40 {
        let tamper = Tamper::LevelMessage {
            tree: rng.gen_range(0..7),
            level: rng.gen_range(0..7),
            mask: random_mask(&mut rng),
        };
        let config = FerretConfig {
            setup: None,
            ..tiny_cut(7)
        };
        assert!(
            cheat_trial(config, tamper, 4000 + trial),
            "{tamper:?} passed"
        );
    }
}

/// The first iteration's check may run later, on the next `extend`: the
/// outputs are the same COTs, and a corrupted tree is still caught before
/// anything is released.
#[test]
fn check_deferred_to_the_next_extend() {
    for tamper in [
        None,
        Some(Tamper::LevelMessage {
            tree: 3,
            level: 2,
            mask: Block(1 << 77),
        }),
    ] {
        let (mut s, mut r) = parties(tiny_cut(7), 33);
        s.tamper = tamper;
        let (mut cs, mut cr) = channels();
        let (a, b) = block_on(join(
            s.setup_until_check(&mut cs),
            r.setup_until_check(&mut cr),
        ));
        a.unwrap();
        b.unwrap();
        // Other traffic may pass in between (the check's messages follow it).
        let (mut k, mut m) = (Vec::new(), Vec::new());
        let (a, b) = block_on(join(
            async move {
                cs.send(b"tls").await.unwrap();
                s.extend(&mut cs, 3000, &mut k).await.map(|()| (s, k))
            },
            async move {
                assert_eq!(cr.recv(8).await.unwrap(), b"tls");
                let res = r.extend(&mut cr, 3000, &mut m).await.map(|()| m);
                // A failed receiver hangs up, ending the sender's wait.
                drop(cr);
                res
            },
        ));
        match tamper {
            None => {
                let ((s, k), m) = (a.unwrap(), b.unwrap());
                assert_correlated(s.delta(), &k, &m);
            }
            Some(_) => assert!(matches!(b, Err(Error::CheckFailed(_)))),
        }
    }
}

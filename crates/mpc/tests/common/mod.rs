//! COT sources shared by the crate's integration tests: the workspace's
//! real OT extensions, run in-process over a memory duplex, seeded.
#![allow(dead_code)] // each test file uses some of these

use futures::executor::block_on;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel};
use webproof_ferret::{FerretConfig, SilentCotReceiver, SilentCotSender};
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};

/// `n` random COTs from SoftSpokenOT: (Δ, sender keys, receiver MACs).
pub fn cots(seed: u64, n: usize) -> (Block, Vec<Block>, Vec<Block>) {
    let (a, b) = memory_duplex();
    let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
    let mut r1 = ChaCha20Rng::seed_from_u64(seed);
    let mut r2 = ChaCha20Rng::seed_from_u64(seed + 1);
    block_on(async {
        let (s, r) = futures::join!(
            SoftSpokenSender::setup(&mut ca, &mut r1),
            SoftSpokenReceiver::setup(&mut cb, &mut r2)
        );
        let (mut s, mut r) = (s.unwrap(), r.unwrap());
        let (mut keys, mut macs) = (Vec::new(), Vec::new());
        let (x, y) = futures::join!(
            s.extend(&mut ca, n, &mut keys),
            r.extend(&mut cb, n, &mut macs)
        );
        x.unwrap();
        y.unwrap();
        (s.delta(), keys, macs)
    })
}

/// `n` COTs from Ferret (compact parameters).
pub fn ferret_cots(seed: u64, n: usize) -> (Block, Vec<Block>, Vec<Block>) {
    let (a, b) = memory_duplex();
    let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
    let mut r1 = ChaCha20Rng::seed_from_u64(seed);
    let mut r2 = ChaCha20Rng::seed_from_u64(seed + 1);
    block_on(async {
        let (s, r) = futures::join!(
            SilentCotSender::connect(FerretConfig::compact(), &mut ca, &mut r1),
            SilentCotReceiver::connect(FerretConfig::compact(), &mut cb, &mut r2)
        );
        let (mut s, mut r) = (s.unwrap(), r.unwrap());
        let (mut keys, mut macs) = (Vec::new(), Vec::new());
        let (x, y) = futures::join!(
            s.extend(&mut ca, n, &mut keys),
            r.extend(&mut cb, n, &mut macs)
        );
        x.unwrap();
        y.unwrap();
        (s.delta(), keys, macs)
    })
}

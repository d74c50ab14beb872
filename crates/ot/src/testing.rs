//! Seeded COTs over an in-memory link, for other crates' tests and
//! examples (feature `testing`): both parties run in one thread, so a test
//! that needs correlated keys and MACs does not write the setup again.

use crate::{SoftSpokenReceiver, SoftSpokenSender};
use futures::executor::block_on;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel};

/// `n` random COTs from SoftSpokenOT, the sender seeded with `seed` and the
/// receiver with `seed + 1`: (`Δ`, the sender's keys, the receiver's MACs)
/// and both extensions, to go on drawing from the same correlation.
///
/// # Panics
/// If the setup or the extension fails (in memory, they do not).
pub fn seeded_cots(
    seed: u64,
    n: usize,
) -> (
    Block,
    Vec<Block>,
    Vec<Block>,
    SoftSpokenSender,
    SoftSpokenReceiver,
) {
    let (a, b) = memory_duplex();
    let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
    let mut r1 = ChaCha20Rng::seed_from_u64(seed);
    let mut r2 = ChaCha20Rng::seed_from_u64(seed + 1);
    block_on(async {
        let (s, r) = futures::join!(
            SoftSpokenSender::setup(&mut ca, &mut r1),
            SoftSpokenReceiver::setup(&mut cb, &mut r2)
        );
        let (mut s, mut r) = (s.expect("setup in memory"), r.expect("setup in memory"));
        let (mut keys, mut macs) = (Vec::new(), Vec::new());
        let (x, y) = futures::join!(
            s.extend(&mut ca, n, &mut keys),
            r.extend(&mut cb, n, &mut macs)
        );
        x.expect("extension in memory");
        y.expect("extension in memory");
        (s.delta(), keys, macs, s, r)
    })
}

/// [`seeded_cots`] without the extensions: (`Δ`, keys, MACs).
pub fn cots(seed: u64, n: usize) -> (Block, Vec<Block>, Vec<Block>) {
    let (delta, keys, macs, _, _) = seeded_cots(seed, n);
    (delta, keys, macs)
}

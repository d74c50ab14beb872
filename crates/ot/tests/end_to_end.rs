//! The public API end to end: setup from scratch, random COTs through the
//! core traits, chosen-bit COTs through `derand`, both parties concurrent.

use futures::executor::block_on;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel};
use webproof_ot::{derand, SoftSpokenReceiver, SoftSpokenSender};

#[test]
fn random_and_chosen_cots_from_scratch() {
    let (a, b) = memory_duplex();
    let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
    let mut rs = ChaCha20Rng::seed_from_u64(21);
    let mut rr = ChaCha20Rng::seed_from_u64(22);
    let choices: Vec<bool> = (0..3000).map(|_| rr.gen()).collect();

    let sender = async {
        let mut s = SoftSpokenSender::setup(&mut ca, &mut rs).await?;
        let mut random = Vec::new();
        s.extend(&mut ca, 10_000, &mut random).await?;
        let mut chosen = Vec::new();
        derand::send_chosen(&mut s, &mut ca, 3000, &mut chosen).await?;
        Ok::<_, webproof_core::Error>((s.delta(), random, chosen))
    };
    let receiver = async {
        let mut r = SoftSpokenReceiver::setup(&mut cb, &mut rr).await?;
        let mut random = Vec::new();
        r.extend(&mut cb, 10_000, &mut random).await?;
        let mut chosen = Vec::new();
        derand::receive_chosen(&mut r, &mut cb, &choices, &mut chosen).await?;
        Ok::<_, webproof_core::Error>((random, chosen))
    };
    let (s, r) = block_on(async { futures::join!(sender, receiver) });
    let ((delta, keys, chosen_keys), (macs, chosen_macs)) = (s.unwrap(), r.unwrap());

    assert!(delta.lsb());
    assert_eq!((keys.len(), macs.len()), (10_000, 10_000));
    let mut ones = 0;
    for (k, m) in keys.iter().zip(&macs) {
        assert!(!k.lsb());
        ones += m.lsb() as usize;
        assert_eq!(*m, *k ^ Block::select(m.lsb(), delta));
    }
    assert!((4500..5500).contains(&ones), "{ones}");
    for ((k, m), c) in chosen_keys.iter().zip(&chosen_macs).zip(&choices) {
        assert_eq!(*m, *k ^ Block::select(*c, delta));
    }
}

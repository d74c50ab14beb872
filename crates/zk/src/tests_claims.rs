//! Claimed values ([`Prover::assert_claimed`] in a proof with
//! `defer_claims`): the verifier learns them only at the opening, an honest
//! claim verifies, and a claim of other values than the bits hold fails
//! however the prover discloses them.

use crate::{Config, Prover, ProverBit, SealedProver, SealedVerifier, Verifier, VerifierBit};
use futures::executor::block_on;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use webproof_core::cot::ideal::{pair, IdealCotReceiver, IdealCotSender};
use webproof_core::cot::RandomCotSender;
use webproof_core::{memory_duplex, Block, Channel, Error, MemoryIo};

type P = Prover<IdealCotReceiver, MemoryIo>;
type V = Verifier<IdealCotSender, MemoryIo>;

const SMALL: Config = Config {
    cot_batch: 1000,
    segment_bits: 192,
};

/// How the run deviates from an honest claim.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Fault {
    None,
    /// The prover holds bit `i` with the other value (an imported label
    /// it reads the wrong way), and claims and discloses that value.
    FalseBit(usize),
    /// The prover discloses value `i` flipped after claiming the truth.
    FlippedDisclosure(usize),
    /// The prover discloses one value fewer than it claimed.
    Short,
    /// No `defer_claims` on either side: claims are public assertions.
    Public,
}

/// Claim `n` imported bits in three calls, with a public assertion
/// between them; returns (prover, verifier) results and the values the
/// verifier held before the opening (none with deferred claims).
fn claim(seed: u64, n: usize, fault: Fault) -> (Result<(), Error>, Result<Vec<bool>, Error>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (cs, cr) = pair(seed);
    let delta = cs.delta();
    let values: Vec<bool> = (0..n).map(|_| rng.gen()).collect();
    let zeros: Vec<Block> = (0..n).map(|_| Block(rng.gen::<u128>() & !1)).collect();
    let binding: [u8; 32] = rng.gen();
    let deferred = fault != Fault::Public;
    let (a, b) = memory_duplex();
    let mut vrng = StdRng::seed_from_u64(seed ^ 1);
    block_on(async {
        let prover = async {
            let mut p: P = Prover::new(cr, Channel::new(a), SMALL).await?;
            p.defer();
            if deferred {
                p.defer_claims(binding)?;
            }
            let mut held = values.clone();
            if let Fault::FalseBit(i) = fault {
                held[i] = !held[i];
            }
            let bits: Vec<ProverBit> = zeros
                .iter()
                .zip(&values)
                .zip(&held)
                .map(|((&z, &x), &h)| p.import_label(z ^ Block::select(x, delta), h))
                .collect();
            let third = n / 3;
            p.assert_claimed(&bits[..third], &held[..third]).await?;
            let one = p.constant(true);
            p.assert_public(&[one], &[true]).await?;
            p.assert_claimed(&bits[third..2 * third], &held[third..2 * third])
                .await?;
            p.assert_claimed(&bits[2 * third..], &held[2 * third..])
                .await?;
            let mut s: SealedProver<_, _> = p.seal([9; 32]).await?;
            let d = s.parts().1.recv_exact(16).await?;
            assert_eq!(Block::from_bytes(d[..].try_into().unwrap()), delta);
            let mut disclosed = held.clone();
            match fault {
                Fault::FlippedDisclosure(i) => disclosed[i] = !disclosed[i],
                Fault::Short => {
                    disclosed.pop();
                }
                _ => {}
            }
            let mut msg = vec![0u8; disclosed.len()];
            for (m, &v) in msg.iter_mut().zip(&disclosed) {
                *m = v as u8;
            }
            // The caller's disclosure, before the opening (as MPC mode's
            // response proof sends it).
            s.parts().1.send(&msg).await?;
            s.open().await?;
            Ok::<(), Error>(())
        };
        let verifier = async {
            let mut v: V = Verifier::new(cs, Channel::new(b), SMALL, &mut vrng).await?;
            v.defer();
            if deferred {
                v.defer_claims(binding)?;
            }
            let bits: Vec<VerifierBit> = v.import_labels(&zeros);
            // Deferred: the values are unknown, any of the right length.
            let known = if deferred {
                vec![false; n]
            } else {
                values.clone()
            };
            let third = n / 3;
            v.assert_claimed(&bits[..third], &known[..third]).await?;
            let one = v.constant(true);
            v.assert_public(&[one], &[true]).await?;
            v.assert_claimed(&bits[third..2 * third], &known[third..2 * third])
                .await?;
            v.assert_claimed(&bits[2 * third..], &known[2 * third..])
                .await?;
            let mut s: SealedVerifier<_, _> = v.seal().await?;
            let d = s.delta();
            s.parts().1.send(&d.to_bytes()).await?;
            s.parts().1.flush().await?;
            let msg = s.parts().1.recv(1 << 16).await?;
            let disclosed: Vec<bool> = msg.iter().map(|&b| b == 1).collect();
            if deferred {
                s.verify_claimed(&disclosed).await?;
            } else {
                s.verify().await?;
            }
            Ok::<Vec<bool>, Error>(disclosed)
        };
        futures::join!(prover, verifier)
    })
}

#[test]
fn honest_claims_verify_at_the_opening() {
    for (seed, n) in [(1, 3), (2, 300), (3, 1000)] {
        let (p, v) = claim(seed, n, Fault::None);
        p.unwrap();
        assert_eq!(v.unwrap().len(), n);
    }
}

#[test]
fn public_claims_without_defer_claims_verify() {
    let (p, v) = claim(4, 300, Fault::Public);
    p.unwrap();
    v.unwrap();
}

#[test]
fn a_bit_held_with_another_value_fails() {
    for (seed, i) in [(5, 0), (6, 150), (7, 299)] {
        let (p, v) = claim(seed, 300, Fault::FalseBit(i));
        p.unwrap();
        match v {
            Err(Error::CheckFailed(why)) => assert!(why.contains("claimed"), "{why}"),
            other => panic!("seed {seed}: a false claim verified: {other:?}"),
        }
    }
}

#[test]
fn a_disclosure_other_than_the_claim_fails() {
    for (seed, i) in [(8, 0), (9, 77), (10, 299)] {
        let (p, v) = claim(seed, 300, Fault::FlippedDisclosure(i));
        p.unwrap();
        assert!(
            matches!(v, Err(Error::CheckFailed(_))),
            "seed {seed}: {v:?}"
        );
    }
}

#[test]
fn a_short_disclosure_fails() {
    let (_, v) = claim(11, 300, Fault::Short);
    match v {
        Err(Error::CheckFailed(why)) => assert!(why.contains("299 claimed values"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn claims_need_a_sealed_proof() {
    let (a, _b) = memory_duplex();
    let (_, cr) = pair(12);
    block_on(async {
        let mut p: P = Prover::new(cr, Channel::new(a), SMALL).await.unwrap();
        assert!(matches!(p.defer_claims([0; 32]), Err(Error::Usage(_))));
    });
}

//! Imported bits (garbled labels under the verifier's `Delta`) and sealed
//! proofs: an honest import proves, a wrong value or a forged label is
//! caught, in the ordinary and in the sealed mode, and a sealed opening
//! that differs from its commitment is refused.

use crate::{Config, Prover, ProverBit, SealedProver, SealedVerifier, Verifier, VerifierBit};
use futures::executor::block_on;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use webproof_circuits::{Circuit, Gate};
use webproof_core::cot::ideal::{pair, IdealCotReceiver, IdealCotSender};
use webproof_core::cot::RandomCotSender;
use webproof_core::{memory_duplex, Block, Channel, Error, MemoryIo};

type P = Prover<IdealCotReceiver, MemoryIo>;
type V = Verifier<IdealCotSender, MemoryIo>;

const SMALL: Config = Config {
    cot_batch: 1000,
    segment_bits: 192,
};

/// A garbled-circuit wire as the two parties hold it: the garbler's
/// 0-label and the evaluator's active label.
#[derive(Clone, Copy)]
struct Wire {
    zero: Block,
    active: Block,
}

fn wires(rng: &mut StdRng, delta: Block, bits: &[bool]) -> Vec<Wire> {
    bits.iter()
        .map(|&x| {
            let zero = Block(rng.gen());
            Wire {
                zero,
                active: zero ^ Block::select(x, delta),
            }
        })
        .collect()
}

/// A random circuit of `n_in` inputs, with every gate kind.
fn circuit(rng: &mut StdRng, n_in: usize, n_gates: usize, n_out: usize) -> Circuit {
    let mut c = Circuit {
        num_wires: n_in as u32,
        inputs: vec![(0..n_in as u32).collect()],
        ..Default::default()
    };
    for _ in 0..n_gates {
        let out = c.num_wires;
        let (a, b) = (rng.gen_range(0..out), rng.gen_range(0..out));
        c.gates.push(match rng.gen_range(0..10) {
            0..=3 => Gate::And { a, b, out },
            4..=7 => Gate::Xor { a, b, out },
            8 => Gate::Inv { a, out },
            _ => Gate::Const {
                value: rng.gen(),
                out,
            },
        });
        c.num_wires += 1;
    }
    c.outputs = vec![(c.num_wires - n_out as u32..c.num_wires).collect()];
    c
}

/// How the prover deviates from the honest import.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Import input `i` with the wrong value (and compute on it).
    WrongValue(usize),
    /// Claim output `i` flipped, with a label shifted by a guess of `Delta`.
    ForgedOutput(usize, Block),
}

/// Prove "the garbled outputs are the circuit on the garbled inputs",
/// ordinary or sealed. Returns (prover, verifier) results.
fn prove_imported(seed: u64, sealed: bool, fault: Fault) -> (Result<(), Error>, Result<(), Error>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let c = circuit(&mut rng, 24, 300, 16);
    let x: Vec<bool> = (0..24).map(|_| rng.gen()).collect();
    let y = c.eval(std::slice::from_ref(&x)).remove(0);
    let (cs, cr) = pair(seed);
    let delta = cs.delta();
    let inputs = wires(&mut rng, delta, &x);
    let outputs = wires(&mut rng, delta, &y);
    let (a, b) = memory_duplex();
    let mut vrng = StdRng::seed_from_u64(seed ^ 1);
    block_on(async {
        let prover = async {
            let mut p: P = Prover::new(cr, Channel::new(a), SMALL).await?;
            if sealed {
                p.defer();
            }
            let mut xv = x.clone();
            if let Fault::WrongValue(k) = fault {
                // An input that some AND gate reads (an unused input is no
                // part of the statement).
                let used: Vec<usize> = c
                    .gates
                    .iter()
                    .filter_map(|g| match *g {
                        Gate::And { a, .. } if (a as usize) < x.len() => Some(a as usize),
                        _ => None,
                    })
                    .collect();
                xv[used[k % used.len()]] ^= true;
            }
            let labels: Vec<Block> = inputs.iter().map(|w| w.active).collect();
            let xin = p.import_labels(&labels, &xv)?;
            let out = p.eval(&c, &[&xin]).await?.remove(0);
            let mut claimed: Vec<ProverBit> = outputs
                .iter()
                .zip(&y)
                .map(|(w, &v)| p.import_label(w.active, v))
                .collect();
            if let Fault::ForgedOutput(i, guess) = fault {
                claimed[i] = p.import_label(outputs[i].active ^ guess, !y[i]);
            }
            let diff: Vec<ProverBit> = out
                .iter()
                .zip(&claimed)
                .map(|(&o, &c)| p.xor(o, c))
                .collect();
            p.assert_zero(&diff).await?;
            if sealed {
                let mut s: SealedProver<_, _> = p.seal([7; 32]).await?;
                // The verifier reveals Delta; the prover could audit here.
                let d = s.parts().1.recv_exact(16).await?;
                assert_eq!(Block::from_bytes(d[..].try_into().unwrap()), delta);
                s.open().await?;
            } else {
                p.finish().await?;
            }
            Ok::<(), Error>(())
        };
        let verifier = async {
            let mut v: V = Verifier::new(cs, Channel::new(b), SMALL, &mut vrng).await?;
            if sealed {
                v.defer();
            }
            let zero: Vec<Block> = inputs.iter().map(|w| w.zero).collect();
            let xin = v.import_labels(&zero);
            let out = v.eval(&c, &[&xin]).await?.remove(0);
            let claimed: Vec<VerifierBit> =
                outputs.iter().map(|w| v.import_label(w.zero)).collect();
            let diff: Vec<VerifierBit> = out
                .iter()
                .zip(&claimed)
                .map(|(&o, &c)| v.xor(o, c))
                .collect();
            v.assert_zero(&diff).await?;
            if sealed {
                let mut s: SealedVerifier<_, _> = v.seal().await?;
                let d = s.delta();
                s.parts().1.send(&d.to_bytes()).await?;
                s.parts().1.flush().await?;
                s.verify().await?;
            } else {
                v.finish().await?;
            }
            Ok::<(), Error>(())
        };
        futures::join!(prover, verifier)
    })
}

#[test]
fn honest_import_proves_in_both_modes() {
    for seed in 0..8 {
        for sealed in [false, true] {
            let (p, v) = prove_imported(seed, sealed, Fault::None);
            assert!(
                p.is_ok() && v.is_ok(),
                "seed {seed} sealed {sealed}: {p:?} {v:?}"
            );
        }
    }
}

#[test]
fn import_matches_the_engine_convention() {
    // Imported constants and labels behave like engine bits: lsb(key) = 0,
    // MAC = key ^ value * Delta, whatever the point-and-permute bit.
    let (cs, cr) = pair(3);
    let delta = cs.delta();
    let (a, b) = memory_duplex();
    let mut rng = StdRng::seed_from_u64(3);
    block_on(async {
        let (p, v) = futures::join!(
            Prover::new(cr, Channel::new(a), SMALL),
            Verifier::new(cs, Channel::new(b), SMALL, &mut rng)
        );
        let (p, v): (P, V) = (p.unwrap(), v.unwrap());
        for z in [Block(0), Block(1), Block(0xabcd), Block(u128::MAX)] {
            for x in [false, true] {
                let m = p.import_label(z ^ Block::select(x, delta), x);
                let k = v.import_label(z);
                assert!(!k.key().lsb());
                assert_eq!(m.value(), x);
                assert_eq!(m.mac(), k.key() ^ Block::select(x, delta));
            }
        }
        // A constant's garbled 0-label is v * Delta and its label zero.
        for x in [false, true] {
            let m = p.import_label(Block::ZERO, x);
            let k = v.import_label(Block::select(x, delta));
            assert_eq!(m, p.constant(x));
            assert_eq!(k, v.constant(x));
        }
    });
}

#[test]
fn wrong_imported_value_is_caught() {
    for seed in 0..16 {
        for sealed in [false, true] {
            let (_, v) = prove_imported(seed, sealed, Fault::WrongValue(seed as usize % 24));
            assert!(
                matches!(v, Err(Error::CheckFailed(_))),
                "seed {seed} sealed {sealed}: {v:?}"
            );
        }
    }
}

#[test]
fn forged_output_label_is_caught() {
    let mut rng = StdRng::seed_from_u64(77);
    for seed in 0..16 {
        let guess = Block(rng.gen::<u128>() | 1);
        for sealed in [false, true] {
            let (_, v) =
                prove_imported(seed, sealed, Fault::ForgedOutput(seed as usize % 16, guess));
            assert!(
                matches!(v, Err(Error::CheckFailed(_))),
                "seed {seed} sealed {sealed}: {v:?}"
            );
        }
    }
}

#[test]
fn sealed_opening_must_match_its_commitment() {
    // A prover that commits, learns Delta and then sends other held
    // messages (here: a correct hash computed with Delta) is refused.
    let (cs, cr) = pair(5);
    let (a, b) = memory_duplex();
    let mut rng = StdRng::seed_from_u64(5);
    let (p, v) = block_on(async {
        let prover = async {
            let mut p: P = Prover::new(cr, Channel::new(a), SMALL).await?;
            p.defer();
            let w = p.commit(&[true, false]).await?;
            // A false claim: both bits are zero.
            p.assert_zero(&w).await?;
            let mut s = p.seal([1; 32]).await?;
            let d = s.parts().1.recv_exact(16).await?;
            let delta = Block::from_bytes(d[..].try_into().unwrap());
            // Knowing Delta it could now forge the hash, but the
            // commitment binds the held one; send the forgery instead.
            let forged = crate::prover::mac_hash_bits([w[0].mac() ^ delta, w[1].mac()].into_iter());
            let mut msg = vec![1u8; 32];
            msg.extend_from_slice(&forged);
            msg.extend_from_slice(&[0; 32]);
            let (_, ch) = s.parts();
            ch.send(&msg).await?;
            ch.flush().await?;
            Ok::<_, Error>(())
        };
        let verifier = async {
            let mut v: V = Verifier::new(cs, Channel::new(b), SMALL, &mut rng).await?;
            v.defer();
            let w = v.commit(2).await?;
            v.assert_zero(&w).await?;
            let mut s = v.seal().await?;
            let d = s.delta();
            s.parts().1.send(&d.to_bytes()).await?;
            s.parts().1.flush().await?;
            s.verify().await?;
            Ok::<_, Error>(())
        };
        futures::join!(prover, verifier)
    });
    assert!(p.is_ok(), "{p:?}");
    match v {
        Err(Error::CheckFailed(m)) => assert!(m.contains("commitment"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sealed_mode_refuses_openings_and_plain_finish() {
    let (cs, cr) = pair(9);
    let (a, b) = memory_duplex();
    let mut rng = StdRng::seed_from_u64(9);
    block_on(async {
        let (p, v) = futures::join!(
            Prover::new(cr, Channel::new(a), SMALL),
            Verifier::new(cs, Channel::new(b), SMALL, &mut rng)
        );
        let (mut p, mut v): (P, V) = (p.unwrap(), v.unwrap());
        p.defer();
        v.defer();
        assert!(p.is_deferred() && v.is_deferred());
        let one = p.constant(true);
        assert!(matches!(p.open(&[one]).await, Err(Error::Usage(_))));
        let k = v.constant(true);
        assert!(matches!(v.open(&[k]).await, Err(Error::Usage(_))));
        assert!(matches!(p.finish().await, Err(Error::Usage(_))));
        assert!(matches!(v.finish().await, Err(Error::Usage(_))));
    });
}

#[test]
fn seal_without_defer_is_a_usage_error() {
    let (cs, cr) = pair(11);
    let (a, b) = memory_duplex();
    let mut rng = StdRng::seed_from_u64(11);
    block_on(async {
        let (p, v) = futures::join!(
            Prover::new(cr, Channel::new(a), SMALL),
            Verifier::new(cs, Channel::new(b), SMALL, &mut rng)
        );
        let (p, v): (P, V) = (p.unwrap(), v.unwrap());
        assert!(matches!(p.seal([0; 32]).await, Err(Error::Usage(_))));
        assert!(matches!(v.seal().await, Err(Error::Usage(_))));
    });
}

#[test]
fn truncated_opening_is_an_error() {
    let (cs, cr) = pair(13);
    let (a, b) = memory_duplex();
    let mut rng = StdRng::seed_from_u64(13);
    let v = block_on(async {
        let prover = async {
            let mut p: P = Prover::new(cr, Channel::new(a), SMALL).await?;
            p.defer();
            let w = p.commit(&[false]).await?;
            p.assert_zero(&w).await?;
            let mut s = p.seal([2; 32]).await?;
            let _ = s.parts().1.recv_exact(16).await?;
            let n = s.opening_len();
            let (_, ch) = s.parts();
            ch.send(&vec![0u8; n - 1]).await?;
            ch.flush().await?;
            Ok::<_, Error>(())
        };
        let verifier = async {
            let mut v: V = Verifier::new(cs, Channel::new(b), SMALL, &mut rng).await?;
            v.defer();
            let w = v.commit(1).await?;
            v.assert_zero(&w).await?;
            let mut s = v.seal().await?;
            let d = s.delta();
            s.parts().1.send(&d.to_bytes()).await?;
            s.parts().1.flush().await?;
            s.verify().await?;
            Ok::<_, Error>(())
        };
        futures::join!(prover, verifier).1
    });
    assert!(v.is_err(), "{v:?}");
}

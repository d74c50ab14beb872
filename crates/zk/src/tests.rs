//! End-to-end tests of the engine with the ideal COT dealer: completeness on
//! random circuits, cheating provers that must be caught, and malformed
//! messages from either side.

use crate::{Config, Prover, ProverBit, Verifier, VerifierBit};
use futures::executor::block_on;
use futures::AsyncWriteExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use webproof_circuits::{bits_to_bytes, Circuit, Gate};
use webproof_core::cot::ideal::{pair, IdealCotReceiver, IdealCotSender};
use webproof_core::{memory_duplex, Block, Channel, Error, MemoryIo};

/// Test-only fault injection in the prover.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cheat {
    /// Index (from 0, over the session) of an AND gate whose output is flipped.
    pub flip_and: Option<u64>,
    /// A second AND gate flipped, for errors meant to cancel.
    pub flip_and_too: Option<u64>,
    /// A byte inversion (index over the session) whose output is XORed with a mask.
    pub byte_inv: Option<(u64, u8)>,
}

impl Cheat {
    #[inline(always)]
    pub fn flips(&self, and_index: u64) -> bool {
        self.flip_and == Some(and_index) || self.flip_and_too == Some(and_index)
    }

    #[inline(always)]
    pub fn byte_inv_mask(&self, index: u64) -> u8 {
        match self.byte_inv {
            Some((i, mask)) if i == index => mask,
            _ => 0,
        }
    }
}

type P = Prover<IdealCotReceiver, MemoryIo>;
type V = Verifier<IdealCotSender, MemoryIo>;

/// Small parameters so that tests cross many segment and COT-batch boundaries.
const SMALL: Config = Config {
    cot_batch: 1000,
    segment_bits: 192,
};

/// Run a prover script and a verifier script against each other.
fn run<FP, FV, RP, RV>(cfg: Config, seed: u64, prover: FP, verifier: FV) -> (RP, RV)
where
    FP: AsyncFnOnce(&mut P) -> RP,
    FV: AsyncFnOnce(&mut V) -> RV,
{
    let (a, b) = memory_duplex();
    let (cs, cr) = pair(seed);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    block_on(async {
        let p = async {
            let mut p = Prover::new(cr, Channel::new(a), cfg).await.unwrap();
            let r = prover(&mut p).await;
            drop(p); // close the transport so a waiting verifier sees it
            r
        };
        let v = async {
            let mut v = Verifier::new(cs, Channel::new(b), cfg, &mut rng)
                .await
                .unwrap();
            let r = verifier(&mut v).await;
            drop(v);
            r
        };
        futures::join!(p, v)
    })
}

/// A random circuit over `n_in` input bits with `n_gates` gates, about a third AND.
fn random_circuit(rng: &mut StdRng, n_in: usize, n_gates: usize, n_out: usize) -> Circuit {
    let mut c = Circuit {
        num_wires: n_in as u32,
        inputs: vec![(0..n_in as u32).collect()],
        ..Default::default()
    };
    for _ in 0..n_gates {
        let out = c.num_wires;
        let a = rng.gen_range(0..out);
        let b = rng.gen_range(0..out);
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
    let nw = c.num_wires;
    c.outputs = vec![(nw - n_out as u32..nw).collect()];
    c
}

fn random_bits(rng: &mut StdRng, n: usize) -> Vec<bool> {
    (0..n).map(|_| rng.gen()).collect()
}

#[test]
fn random_circuits_prove_and_open() {
    for seed in 0..6u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let c = random_circuit(&mut rng, 40, 3000, 64);
        let x = random_bits(&mut rng, 40);
        let expect = c.eval(std::slice::from_ref(&x));
        let cfg = if seed % 2 == 0 {
            SMALL
        } else {
            Config::default()
        };
        let (pr, vr) = run(
            cfg,
            seed,
            async |p: &mut P| {
                let xin = p.commit(&x).await?;
                let out = p.eval(&c, &[&xin]).await?;
                let opened = p.open(&out[0][..32]).await?;
                p.assert_public(&out[0][32..], &expect[0][32..]).await?;
                p.check().await?;
                Ok::<_, Error>(opened)
            },
            async |v: &mut V| {
                let xin = v.commit(40).await?;
                let out = v.eval(&c, &[&xin]).await?;
                let opened = v.open(&out[0][..32]).await?;
                v.assert_public(&out[0][32..], &expect[0][32..]).await?;
                v.check().await?;
                Ok::<_, Error>((opened, v.stats()))
            },
        );
        let (vo, stats) = vr.unwrap();
        assert_eq!(pr.unwrap(), expect[0][..32]);
        assert_eq!(vo, expect[0][..32]);
        assert_eq!(stats.and_gates as usize, c.and_count());
    }
}

#[test]
fn single_gate_api_matches_truth_tables() {
    let inputs = [false, false, false, true, true, false, true, true];
    let (pr, vr) = run(
        SMALL,
        9,
        async |p: &mut P| {
            let w = p.commit(&inputs).await?;
            let mut outs = Vec::new();
            for i in 0..4 {
                let (a, b) = (w[2 * i], w[2 * i + 1]);
                let and = p.and(a, b).await?;
                let t = p.constant(true);
                outs.extend([and, p.xor(a, b), p.not(a), p.and(a, t).await?]);
            }
            let r = p.open(&outs).await?;
            p.check().await?;
            Ok::<_, Error>(r)
        },
        async |v: &mut V| {
            let w = v.commit(8).await?;
            let mut outs = Vec::new();
            for i in 0..4 {
                let (a, b) = (w[2 * i], w[2 * i + 1]);
                let and = v.and(a, b).await?;
                let t = v.constant(true);
                outs.extend([and, v.xor(a, b), v.not(a), v.and(a, t).await?]);
            }
            let r = v.open(&outs).await?;
            v.check().await?;
            Ok::<_, Error>(r)
        },
    );
    let mut expect = Vec::new();
    for i in 0..4 {
        let (a, b) = (inputs[2 * i], inputs[2 * i + 1]);
        expect.extend([a & b, a ^ b, !a, a]);
    }
    assert_eq!(pr.unwrap(), expect);
    assert_eq!(vr.unwrap(), expect);
}

#[test]
fn field_elements_multiply_and_open() {
    let mut rng = StdRng::seed_from_u64(77);
    let xs: Vec<u128> = (0..5).map(|_| rng.gen()).collect();
    let c = Block(rng.gen());
    let bits_of = |x: u128| (0..128).map(|i| (x >> i) & 1 == 1).collect::<Vec<_>>();
    // Statement: prod = ((x0 x1 + c) * x2) * c ... folded over the inputs.
    let mut expect = Block(xs[0]);
    for &x in &xs[1..] {
        expect = expect.gf_mul(Block(x)).scale_add(c);
    }
    trait ScaleAdd {
        fn scale_add(self, c: Block) -> Block;
    }
    impl ScaleAdd for Block {
        fn scale_add(self, c: Block) -> Block {
            self.gf_mul(c) ^ c
        }
    }
    let (pr, vr) = run(
        SMALL,
        4,
        async |p: &mut P| {
            let mut acc = None;
            for &x in &xs {
                let bits = p.commit(&bits_of(x)).await?;
                let e = p.pack(&bits)?;
                acc = Some(match acc {
                    None => e,
                    Some(a) => {
                        let m = p.mul(a, e).await?;
                        m.scale(c) + p.elem_constant(c)
                    }
                });
            }
            let r = p.open_elems(&[acc.unwrap()]).await?;
            p.assert_elems_public(&[acc.unwrap()]).await?;
            p.check().await?;
            Ok::<_, Error>(r)
        },
        async |v: &mut V| {
            let mut acc = None;
            for _ in &xs {
                let bits = v.commit(128).await?;
                let e = v.pack(&bits)?;
                acc = Some(match acc {
                    None => e,
                    Some(a) => {
                        let m = v.mul(a, e).await?;
                        m.scale(c) + v.elem_constant(c)
                    }
                });
            }
            let r = v.open_elems(&[acc.unwrap()]).await?;
            v.assert_elems_public(&[acc.unwrap()], &[expect]).await?;
            v.check().await?;
            Ok::<_, Error>(r)
        },
    );
    assert_eq!(pr.unwrap(), vec![expect]);
    assert_eq!(vr.unwrap(), vec![expect]);
}

#[test]
fn wrong_witness_is_caught() {
    // The statement claims an output the witness does not produce.
    for seed in 0..100u64 {
        let mut rng = StdRng::seed_from_u64(1000 + seed);
        let c = random_circuit(&mut rng, 16, 200, 8);
        let x = random_bits(&mut rng, 16);
        let mut claim = c.eval(std::slice::from_ref(&x))[0].clone();
        let k = rng.gen_range(0..claim.len());
        claim[k] = !claim[k];
        let (_, vr) = run(
            SMALL,
            seed,
            async |p: &mut P| {
                let xin = p.commit(&x).await?;
                let out = p.eval(&c, &[&xin]).await?;
                p.assert_public(&out[0], &claim).await?;
                p.check().await
            },
            async |v: &mut V| {
                let xin = v.commit(16).await?;
                let out = v.eval(&c, &[&xin]).await?;
                v.assert_public(&out[0], &claim).await?;
                v.check().await
            },
        );
        assert!(
            matches!(vr, Err(Error::CheckFailed(_))),
            "seed {seed}: {vr:?}"
        );
    }
}

/// An honest proof of a random circuit under `prover_ctx`, verified under
/// `verifier_ctx`: the verifier's result.
fn prove_under_contexts(
    seed: u64,
    prover_ctx: [u8; 32],
    verifier_ctx: [u8; 32],
) -> Result<(), Error> {
    let mut rng = StdRng::seed_from_u64(7000 + seed);
    let c = random_circuit(&mut rng, 16, 300, 8);
    let x = random_bits(&mut rng, 16);
    let claim = c.eval(std::slice::from_ref(&x))[0].clone();
    let (a, b) = memory_duplex();
    let (cs, cr) = pair(seed);
    let mut vrng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let (pr, vr) = block_on(async {
        let p = async {
            let mut p = Prover::with_context(cr, Channel::new(a), SMALL, &prover_ctx).await?;
            let xin = p.commit(&x).await?;
            let out = p.eval(&c, &[&xin]).await?;
            let opened = p.open(&out[0]).await?;
            assert_eq!(opened, claim);
            p.finish().await.map(|_| ())
        };
        let v = async {
            let mut v =
                Verifier::with_context(cs, Channel::new(b), SMALL, &verifier_ctx, &mut vrng)
                    .await?;
            let xin = v.commit(16).await?;
            let out = v.eval(&c, &[&xin]).await?;
            let opened = v.open(&out[0]).await?;
            assert_eq!(opened, claim);
            v.finish().await.map(|_| ())
        };
        futures::join!(p, v)
    });
    if vr.is_ok() {
        pr?;
    }
    vr
}

#[test]
fn proofs_are_bound_to_their_context() {
    for seed in 0..20u64 {
        let ctx = [seed as u8; 32];
        prove_under_contexts(seed, ctx, ctx).unwrap();
        let mut other = ctx;
        other[(seed % 32) as usize] ^= 1 << (seed % 8);
        let r = prove_under_contexts(seed, ctx, other);
        assert!(
            matches!(r, Err(Error::CheckFailed(_))),
            "seed {seed}: {r:?}"
        );
        // `new` is the all-zero context.
        let r = prove_under_contexts(seed, [0; 32], [1; 32]);
        assert!(
            matches!(r, Err(Error::CheckFailed(_))),
            "seed {seed}: {r:?}"
        );
    }
}

#[test]
fn flipped_and_gate_in_large_circuit_is_caught() {
    let mut rng = StdRng::seed_from_u64(31337);
    let c = random_circuit(&mut rng, 64, 60_000, 64);
    let n_and = c.and_count() as u64;
    for trial in 0..40u64 {
        let x = random_bits(&mut rng, 64);
        let flip = rng.gen_range(0..n_and);
        let cfg = if trial % 2 == 0 {
            SMALL
        } else {
            Config::default()
        };
        // The cheating prover claims whatever its faulty evaluation outputs;
        // the verifier holds it to that claim, so only the AND check can catch it.
        let (pr, vr) = run(
            cfg,
            trial,
            async |p: &mut P| {
                p.cheat.flip_and = Some(flip);
                let xin = p.commit(&x).await?;
                let out = p.eval(&c, &[&xin]).await?;
                let claim: Vec<bool> = out[0].iter().map(|b| b.value()).collect();
                p.open(&out[0]).await?;
                p.check().await?;
                Ok::<_, Error>(claim)
            },
            async |v: &mut V| {
                let xin = v.commit(64).await?;
                let out = v.eval(&c, &[&xin]).await?;
                v.open(&out[0]).await?;
                v.check().await
            },
        );
        assert!(
            matches!(vr, Err(Error::CheckFailed(_))),
            "trial {trial} (flip {flip}): {vr:?}"
        );
        assert!(matches!(pr, Err(Error::CheckFailed(_))));
    }
}

/// Two flipped AND gates, each the first term of its segment. Were a
/// segment's first weight 1 (`chi^0`), their errors would cancel whatever
/// the challenges; the weights start at `chi`, so the pair is caught.
#[test]
fn errors_at_the_heads_of_two_segments_do_not_cancel() {
    // Two committed bits, then one AND per bit: with 192-bit segments the
    // first segment's terms are ANDs 0..190, the next ones start at 190
    // and 382.
    for (trial, flips) in [(0u64, (190u64, 382u64)), (1, (0, 190)), (2, (190, 191))] {
        let (pr, vr) = run(
            SMALL,
            trial,
            async |p: &mut P| {
                p.cheat.flip_and = Some(flips.0);
                p.cheat.flip_and_too = Some(flips.1);
                let x = p.commit(&[true, true]).await?;
                let mut out = Vec::new();
                for _ in 0..600 {
                    out.push(p.and(x[0], x[1]).await?);
                }
                p.check().await
            },
            async |v: &mut V| {
                let x = v.commit(2).await?;
                for _ in 0..600 {
                    v.and(x[0], x[1]).await?;
                }
                v.check().await
            },
        );
        assert!(
            matches!(vr, Err(Error::CheckFailed(_))),
            "flips {flips:?}: {vr:?}"
        );
        assert!(matches!(pr, Err(Error::CheckFailed(_))));
    }
}

/// Opened bits claimed with two errors in one packed run of 128 (and one
/// in each of two runs): the packed MACs move by a nonzero multiple of
/// `Delta`, so the claim is refused.
#[test]
fn wrong_bits_in_a_packed_opening_are_caught() {
    for (trial, wrong) in [
        (0u64, vec![3usize, 77]),
        (1, vec![5, 133]),
        (2, vec![0, 127, 128, 255]),
    ] {
        let (_, vr) = run(
            SMALL,
            trial,
            async |p: &mut P| {
                // Flipped values, their MACs as they are (off by `Delta ^ 1`).
                let mut x = p.commit(&[false; 300]).await?;
                for &i in &wrong {
                    x[i] = ProverBit(x[i].0 ^ Block::ONE);
                }
                p.open(&x).await.map(|_| ())
            },
            async |v: &mut V| {
                let x = v.commit(300).await?;
                v.open(&x).await.map(|_| ())
            },
        );
        assert!(
            matches!(vr, Err(Error::CheckFailed(_))),
            "wrong {wrong:?}: {vr:?}"
        );
    }
}

#[test]
fn forged_mac_on_opened_value_is_caught() {
    let mut rng = StdRng::seed_from_u64(99);
    for trial in 0..200u64 {
        let x = random_bits(&mut rng, 20);
        let k = rng.gen_range(0..20);
        // A guess of Delta (lsb 1 is public, the rest is guessed).
        let guess = Block(rng.gen::<u128>() | 1);
        let (_, vr) = run(
            SMALL,
            trial,
            async |p: &mut P| {
                let mut w = p.commit(&x).await?;
                w[k] = ProverBit(w[k].0 ^ guess);
                p.open(&w).await?;
                p.check().await
            },
            async |v: &mut V| {
                let w = v.commit(20).await?;
                v.open(&w).await?;
                v.check().await
            },
        );
        assert!(matches!(vr, Err(Error::CheckFailed(_))), "trial {trial}");
    }
}

#[test]
fn forged_element_product_is_caught() {
    // The prover commits a product that is off by a nonzero error term.
    let mut rng = StdRng::seed_from_u64(5150);
    for trial in 0..50u64 {
        let (x, y): (u128, u128) = (rng.gen(), rng.gen());
        let err = Block(rng.gen::<u128>() | 1);
        let bits_of = |x: u128| (0..128).map(|i| (x >> i) & 1 == 1).collect::<Vec<_>>();
        let z_fake = Block(x).gf_mul(Block(y)) ^ err;
        let (_, vr) = run(
            SMALL,
            trial,
            async |p: &mut P| {
                let xb = p.commit(&bits_of(x)).await?;
                let yb = p.commit(&bits_of(y)).await?;
                let (ex, ey) = (p.pack(&xb)?, p.pack(&yb)?);
                // Route around `mul`: commit the fake product and add its term by hand.
                let zb = p.commit(&bits_of(z_fake.0)).await?;
                let ez = p.pack(&zb)?;
                p.seg_terms.push([
                    ex.mac.gf_mul(ey.mac),
                    ex.value.gf_mul(ey.mac) ^ ey.value.gf_mul(ex.mac) ^ ez.mac,
                ]);
                p.assert_elems_public(&[ez]).await?;
                p.check().await
            },
            async |v: &mut V| {
                let xb = v.commit(128).await?;
                let yb = v.commit(128).await?;
                let (ex, ey) = (v.pack(&xb)?, v.pack(&yb)?);
                let z = v.mul(ex, ey).await?;
                v.assert_elems_public(&[z], &[z_fake]).await?;
                v.check().await
            },
        );
        assert!(matches!(vr, Err(Error::CheckFailed(_))), "trial {trial}");
    }
}

#[test]
fn tampered_input_wire_reuse_is_caught() {
    // The statement wires one committed vector into two evaluations; the
    // prover flips some of those bits (without the MAC change that would need
    // Delta) for the second evaluation.
    let mut rng = StdRng::seed_from_u64(4242);
    let c = random_circuit(&mut rng, 32, 2000, 32);
    for trial in 0..40u64 {
        // A tampered input that changes the claimed output (otherwise the
        // prover would gain nothing).
        let (k, k2, claim2) = loop {
            let k = random_bits(&mut rng, 32);
            let mut k2 = k.clone();
            let i = rng.gen_range(0..32);
            k2[i] = !k2[i];
            let claim2 = c.eval(&[k2.clone()])[0].clone();
            if claim2 != c.eval(std::slice::from_ref(&k))[0] {
                break (k, k2, claim2);
            }
        };
        let (_, vr) = run(
            SMALL,
            trial,
            async |p: &mut P| {
                let kin = p.commit(&k).await?;
                let o1 = p.eval(&c, &[&kin]).await?;
                let forged: Vec<ProverBit> = kin
                    .iter()
                    .zip(&k2)
                    .map(|(b, &v)| ProverBit(b.0.with_lsb(v)))
                    .collect();
                let o2 = p.eval(&c, &[&forged]).await?;
                p.open(&o1[0]).await?;
                p.assert_public(&o2[0], &claim2).await?;
                p.check().await
            },
            async |v: &mut V| {
                let kin = v.commit(32).await?;
                let o1 = v.eval(&c, &[&kin]).await?;
                let o2 = v.eval(&c, &[&kin]).await?;
                v.open(&o1[0]).await?;
                v.assert_public(&o2[0], &claim2).await?;
                v.check().await
            },
        );
        assert!(matches!(vr, Err(Error::CheckFailed(_))), "trial {trial}");
    }
}

/// Drive a verifier against a scripted (malicious or broken) prover that
/// writes raw bytes, then hangs up.
fn verifier_against(raw: Vec<u8>, n_commit: usize) -> Result<(), Error> {
    let (mut a, b) = memory_duplex();
    let (cs, _) = pair(1);
    let mut rng = StdRng::seed_from_u64(1);
    block_on(async {
        // Write, then half-close: our replies can still be written.
        let evil = async {
            let _ = a.write_all(&raw).await;
            let _ = a.close().await;
        };
        let honest = async {
            let mut v = Verifier::new(cs, Channel::new(b), SMALL, &mut rng).await?;
            let w = v.commit(n_commit).await?;
            v.open(&w).await?;
            v.check().await
        };
        futures::join!(evil, honest).1
    })
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(payload);
    v
}

#[test]
fn verifier_rejects_malformed_prover_messages() {
    let hello = frame(&crate::proto::encode_hello(&SMALL));
    // Wrong hello.
    let r = verifier_against(frame(b"HTTP/1.1 200 OK"), 8);
    assert!(matches!(r, Err(Error::Channel(_))), "{r:?}");
    let r = verifier_against(frame(b"WPZK2\0\0\0\0\0\0\0\0"), 8);
    assert!(matches!(r, Err(Error::Aborted(_))), "{r:?}");
    // The previous protocol version (verifier-sent challenges).
    let r = verifier_against(frame(b"WPZK1\0\0\0\0\0\0\0\0"), 8);
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
    let r = verifier_against(frame(b"WPZK2\0\0\0\0\0\0\0\0"), 8);
    assert!(matches!(r, Err(Error::Aborted(_))), "{r:?}");
    // Nothing after the hello: truncated session.
    let r = verifier_against(hello.clone(), 8);
    assert!(matches!(r, Err(Error::Channel(_))), "{r:?}");
    // An oversized segment frame (only the header is sent).
    let mut m = hello.clone();
    m.extend_from_slice(&(1u32 << 30).to_le_bytes());
    let r = verifier_against(m, 8);
    assert!(matches!(r, Err(Error::Channel(_))), "{r:?}");
    // A segment announcing more bits than allowed.
    let mut m = hello.clone();
    let mut seg = 1000u32.to_le_bytes().to_vec();
    seg.extend_from_slice(&[0u8; 24]);
    m.extend(frame(&seg));
    let r = verifier_against(m, 8);
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
    // A segment with more bits than the statement uses before the opening.
    let mut m = hello.clone();
    m.extend(frame(&[16, 0, 0, 0, 0xff, 0xff]));
    let r = verifier_against(m, 8);
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
    // A right segment, then an opening cut short.
    let mut m = hello.clone();
    m.extend(frame(&[8, 0, 0, 0, 0x5a]));
    m.extend(frame(&[0x11; 10]));
    let r = verifier_against(m, 8);
    assert!(matches!(r, Err(Error::Channel(_))), "{r:?}");
    // A right segment, then an opening with a garbage hash.
    let mut m = hello.clone();
    m.extend(frame(&[8, 0, 0, 0, 0x5a]));
    m.extend(frame(&[0x11; 33]));
    let r = verifier_against(m, 8);
    assert!(matches!(r, Err(Error::CheckFailed(_))), "{r:?}");
}

/// Drive an honest prover against a scripted verifier.
fn prover_against(raw: Vec<u8>) -> Result<(), Error> {
    let (a, mut b) = memory_duplex();
    let (_, cr) = pair(1);
    block_on(async {
        let evil = async {
            let _ = b.write_all(&raw).await;
            let _ = b.close().await;
        };
        let honest = async {
            let mut p = Prover::new(cr, Channel::new(a), SMALL).await?;
            let w = p.commit(&[true; 300]).await?;
            let x = p.and(w[0], w[1]).await?;
            p.open(&[x]).await?;
            p.check().await
        };
        futures::join!(evil, honest).1
    })
}

#[test]
fn prover_rejects_malformed_verifier_messages() {
    // The only message the prover reads is the verdict; anything longer is
    // the verifier's layer aborting, handed up with its payload.
    let r = prover_against(frame(b"{\"refused\":true}"));
    assert!(
        matches!(&r, Err(Error::PeerAbort(m)) if m == b"{\"refused\":true}"),
        "{r:?}"
    );
    // An empty frame is neither a verdict nor an abort.
    let r = prover_against(frame(&[]));
    assert!(matches!(r, Err(Error::PeerAbort(_))), "{r:?}");
    // Oversized frame header.
    let r = prover_against(u32::MAX.to_le_bytes().to_vec());
    assert!(matches!(r, Err(Error::Channel(_))), "{r:?}");
    // A bad verdict byte.
    let r = prover_against(frame(&[7u8]));
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
    // A verifier that hangs up.
    let r = prover_against(Vec::new());
    assert!(matches!(r, Err(Error::Channel(_))), "{r:?}");
}

#[test]
fn verifier_parameters_must_match() {
    let (a, b) = memory_duplex();
    let (cs, cr) = pair(3);
    let mut rng = StdRng::seed_from_u64(3);
    let r = block_on(async {
        let p = Prover::new(cr, Channel::new(a), SMALL);
        let v = Verifier::new(cs, Channel::new(b), Config::default(), &mut rng);
        futures::join!(p, v).1
    });
    assert!(matches!(r, Err(Error::Aborted(_))));
}

#[test]
fn bad_circuit_is_a_usage_error_before_any_message() {
    let c = Circuit {
        num_wires: 2,
        inputs: vec![vec![0]],
        outputs: vec![vec![1]],
        gates: vec![Gate::And { a: 0, b: 5, out: 1 }],
        byte_inv_inputs: vec![],
    };
    let (pr, vr) = run(
        SMALL,
        1,
        async |p: &mut P| {
            let w = p.commit(&[true]).await?;
            assert!(matches!(p.eval(&c, &[&w]).await, Err(Error::Usage(_))));
            assert!(matches!(p.eval(&c, &[]).await, Err(Error::Usage(_))));
            p.check().await
        },
        async |v: &mut V| {
            let w = v.commit(1).await?;
            assert!(matches!(v.eval(&c, &[&w]).await, Err(Error::Usage(_))));
            v.check().await
        },
    );
    pr.unwrap();
    vr.unwrap();
}

#[allow(dead_code)]
fn _types_are_send(p: P, v: V, a: VerifierBit) {
    fn is_send<T: Send>(_: &T) {}
    is_send(&p);
    is_send(&v);
    is_send(&a);
}

/// Statement: `c1 = AES_k(p1)` and `c2 = AES_k(p2)` for one committed key `k`
/// (the key wires are reused for both blocks) and committed plaintexts; the
/// ciphertexts are public. The cheating prover knows `c2 = AES_k'(p2)` for
/// another key `k'` and tries to use `k'` for the second block, either by
/// flipping the value bits of the key wires (MACs unchanged) or by adding a
/// guess of `Delta` to their MACs. Both must be caught.
#[test]
fn aes_blocks_under_another_key_are_caught() {
    use webproof_circuits::{bytes_to_bits, cache};
    let aes = cache::aes128();
    let mut rng = StdRng::seed_from_u64(2024);
    let enc = |k: &[bool], p: &[bool]| aes.eval(&[k.to_vec(), p.to_vec()]).swap_remove(0);
    for trial in 0..24u64 {
        let k = random_bits(&mut rng, 128);
        let k_other = random_bits(&mut rng, 128);
        let p1 = random_bits(&mut rng, 128);
        let p2 = random_bits(&mut rng, 128);
        let c1 = enc(&k, &p1);
        let c2 = enc(&k_other, &p2);
        let guess_delta = trial % 2 == 1;
        let guess = Block(rng.gen::<u128>() | 1);
        let (pr, vr) = run(
            Config::default(),
            trial,
            async |p: &mut P| {
                let kw = p.commit(&k).await?;
                let p1w = p.commit(&p1).await?;
                let p2w = p.commit(&p2).await?;
                let o1 = p.eval(aes, &[&kw, &p1w]).await?;
                let forged: Vec<ProverBit> = kw
                    .iter()
                    .zip(&k_other)
                    .map(|(b, &v)| {
                        if b.value() == v {
                            *b
                        } else if guess_delta {
                            ProverBit(b.0 ^ guess)
                        } else {
                            ProverBit(b.0.with_lsb(v))
                        }
                    })
                    .collect();
                let o2 = p.eval(aes, &[&forged, &p2w]).await?;
                assert_eq!(o2[0].iter().map(|b| b.value()).collect::<Vec<_>>(), c2);
                p.assert_public(&o1[0], &c1).await?;
                p.assert_public(&o2[0], &c2).await?;
                p.check().await
            },
            async |v: &mut V| {
                let kw = v.commit(128).await?;
                let p1w = v.commit(128).await?;
                let p2w = v.commit(128).await?;
                let o1 = v.eval(aes, &[&kw, &p1w]).await?;
                let o2 = v.eval(aes, &[&kw, &p2w]).await?;
                v.assert_public(&o1[0], &c1).await?;
                v.assert_public(&o2[0], &c2).await?;
                v.check().await
            },
        );
        assert!(
            matches!(vr, Err(Error::CheckFailed(_))),
            "trial {trial}: {vr:?}"
        );
        drop(pr);
    }
    // The honest version of the same statement (both blocks under k) passes,
    // and matches RustCrypto-checked circuit outputs via a known vector.
    let k = bytes_to_bits(&[0u8; 16]);
    let p0 = bytes_to_bits(&[0u8; 16]);
    // FIPS-197 / common vector: AES-128(0^128, 0^128) = 66e94bd4ef8a2c3b884cfa59ca342b2e.
    let c0 = bytes_to_bits(&[
        0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b, 0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34, 0x2b,
        0x2e,
    ]);
    let (pr, vr) = run(
        SMALL,
        1,
        async |p: &mut P| {
            let kw = p.commit(&k).await?;
            let pw = p.commit(&p0).await?;
            let o1 = p.eval(aes, &[&kw, &pw]).await?;
            let o2 = p.eval(aes, &[&kw, &pw]).await?;
            p.assert_public(&o1[0], &c0).await?;
            p.assert_public(&o2[0], &c0).await?;
            p.check().await
        },
        async |v: &mut V| {
            let kw = v.commit(128).await?;
            let pw = v.commit(128).await?;
            let o1 = v.eval(aes, &[&kw, &pw]).await?;
            let o2 = v.eval(aes, &[&kw, &pw]).await?;
            v.assert_public(&o1[0], &c0).await?;
            v.assert_public(&o2[0], &c0).await?;
            v.check().await
        },
    );
    pr.unwrap();
    vr.unwrap();
}

/// End to end over the real silent COT (Ferret bootstrapped by base OT and
/// SoftSpokenOT): an honest AES proof passes, and the same proof with one
/// flipped AND gate is rejected.
#[test]
fn end_to_end_over_silent_cot() {
    use webproof_circuits::cache;
    use webproof_ferret::{FerretConfig, SilentCotReceiver, SilentCotSender};
    let aes = cache::aes128();
    let mut rng = StdRng::seed_from_u64(8);
    let k = random_bits(&mut rng, 128);
    let pt = random_bits(&mut rng, 128);
    // Enough blocks to cross a COT batch and several segments.
    let blocks = 40;
    let cfg = Config {
        cot_batch: 100_000,
        segment_bits: 1 << 14,
    };
    let mut expect = pt.clone();
    for _ in 0..blocks {
        expect = aes.eval(&[k.clone(), expect]).swap_remove(0);
    }
    for flip in [None, Some(123_456u64)] {
        let (a, b) = memory_duplex();
        let (pr, vr) = block_on(async {
            let prover = async {
                let mut ch = Channel::new(a);
                let mut rng = StdRng::seed_from_u64(1);
                let cot =
                    SilentCotReceiver::connect(FerretConfig::compact(), &mut ch, &mut rng).await?;
                let mut p = Prover::new(cot, ch, cfg).await?;
                p.cheat.flip_and = flip;
                let kw = p.commit(&k).await?;
                let mut state = p.commit(&pt).await?;
                for _ in 0..blocks {
                    state = p.eval(aes, &[&kw, &state]).await?.swap_remove(0);
                }
                let opened = p.open(&state).await?;
                p.finish().await?;
                Ok::<_, Error>(opened)
            };
            let verifier = async {
                let mut ch = Channel::new(b);
                let mut rng = StdRng::seed_from_u64(2);
                let cot =
                    SilentCotSender::connect(FerretConfig::compact(), &mut ch, &mut rng).await?;
                let mut v = Verifier::new(cot, ch, cfg, &mut rng).await?;
                let kw = v.commit(128).await?;
                let mut state = v.commit(128).await?;
                for _ in 0..blocks {
                    state = v.eval(aes, &[&kw, &state]).await?.swap_remove(0);
                }
                let opened = v.open(&state).await?;
                let ands = v.stats().and_gates;
                v.finish().await?;
                Ok::<_, Error>((opened, ands))
            };
            futures::join!(prover, verifier)
        });
        match flip {
            None => {
                let (opened, ands) = vr.unwrap();
                assert_eq!(opened, expect);
                assert_eq!(ands as usize, blocks * aes.and_count());
                assert_eq!(pr.unwrap(), expect);
            }
            Some(_) => {
                assert!(matches!(vr, Err(Error::CheckFailed(_))), "{vr:?}");
                assert!(pr.is_err());
            }
        }
    }
}

/// Like [`random_circuit`], with about one gate in eight a byte inversion
/// (of random wires, some of them constant zeros, so zero bytes occur).
fn random_circuit_with_inversions(
    rng: &mut StdRng,
    n_in: usize,
    n_gates: usize,
    n_out: usize,
) -> Circuit {
    let mut c = Circuit {
        num_wires: n_in as u32 + 1,
        inputs: vec![(0..n_in as u32).collect()],
        gates: vec![Gate::Const {
            value: false,
            out: n_in as u32,
        }],
        ..Default::default()
    };
    let zero = n_in as u32;
    for _ in 0..n_gates {
        let out = c.num_wires;
        let a = rng.gen_range(0..out);
        let b = rng.gen_range(0..out);
        match rng.gen_range(0..8) {
            0 => {
                let ids: [u32; 8] = std::array::from_fn(|_| {
                    if rng.gen_range(0..3) == 0 {
                        zero
                    } else {
                        rng.gen_range(0..out)
                    }
                });
                c.gates.push(Gate::ByteInv {
                    inputs: c.byte_inv_inputs.len() as u32,
                    out,
                });
                c.byte_inv_inputs.push(ids);
                c.num_wires += 8;
            }
            1..=3 => {
                c.gates.push(Gate::And { a, b, out });
                c.num_wires += 1;
            }
            _ => {
                c.gates.push(Gate::Xor { a, b, out });
                c.num_wires += 1;
            }
        }
    }
    let nw = c.num_wires;
    c.outputs = vec![(nw - n_out as u32..nw).collect()];
    c.validate().unwrap();
    c
}

#[test]
fn byte_inversions_prove_across_segment_and_batch_boundaries() {
    for seed in 0..6u64 {
        let mut rng = StdRng::seed_from_u64(700 + seed);
        let c = random_circuit_with_inversions(&mut rng, 48, 3000, 96);
        let x = random_bits(&mut rng, 48);
        let expect = c.eval(std::slice::from_ref(&x));
        let cfg = if seed % 2 == 0 {
            SMALL
        } else {
            Config::default()
        };
        let (pr, vr) = run(
            cfg,
            seed,
            async |p: &mut P| {
                let xin = p.commit(&x).await?;
                let out = p.eval(&c, &[&xin]).await?;
                let opened = p.open(&out[0][..48]).await?;
                p.assert_public(&out[0][48..], &expect[0][48..]).await?;
                p.check().await?;
                Ok::<_, Error>(opened)
            },
            async |v: &mut V| {
                let xin = v.commit(48).await?;
                let out = v.eval(&c, &[&xin]).await?;
                let opened = v.open(&out[0][..48]).await?;
                v.assert_public(&out[0][48..], &expect[0][48..]).await?;
                v.check().await?;
                Ok::<_, Error>((opened, v.stats()))
            },
        );
        assert_eq!(pr.unwrap(), expect[0][..48]);
        let (opened, stats) = vr.unwrap();
        assert_eq!(opened, expect[0][..48]);
        assert_eq!(stats.byte_invs as usize, c.byte_inv_count());
        assert_eq!(stats.and_gates as usize, c.and_count());
    }
}

/// AES-128 with inversion S-boxes: an honest proof passes, and an output
/// of any one inversion changed by any mask is caught, including for a
/// zero input (where `t = 0` is the only valid answer).
#[test]
fn wrong_byte_inverse_is_caught() {
    use webproof_circuits::aes::{aes_blocks_circuit_with, SboxKind};
    let aes = aes_blocks_circuit_with(16, 1, SboxKind::Inversion);
    let mut rng = StdRng::seed_from_u64(4242);
    let key: Vec<u8> = (0..16).map(|_| rng.gen()).collect();
    let pt: Vec<u8> = (0..16).map(|_| rng.gen()).collect();
    let ct = aes.eval_bytes(&[&key, &pt]).remove(0);
    let prove = |cheat: Option<(u64, u8)>, seed: u64| {
        run(
            if seed & 1 == 0 {
                SMALL
            } else {
                Config::default()
            },
            seed,
            async |p: &mut P| {
                p.cheat.byte_inv = cheat;
                let k = p.commit_bytes(&key).await?;
                let m = p.commit_bytes(&pt).await?;
                let out = p.eval(&aes, &[&k, &m]).await?;
                // The cheater opens whatever its evaluation gives.
                p.open(&out[0]).await?;
                p.check().await?;
                Ok::<_, Error>(bits_to_bytes(
                    &out[0].iter().map(|b| b.value()).collect::<Vec<_>>(),
                ))
            },
            async |v: &mut V| {
                let k = v.commit_bytes(16).await?;
                let m = v.commit_bytes(16).await?;
                let out = v.eval(&aes, &[&k, &m]).await?;
                let opened = v.open(&out[0]).await?;
                v.check().await?;
                Ok::<_, Error>(bits_to_bytes(&opened))
            },
        )
    };
    let (pr, vr) = prove(None, 1);
    assert_eq!(pr.unwrap(), ct);
    assert_eq!(vr.unwrap(), ct);
    for trial in 0..24u64 {
        let index = rng.gen_range(0..aes.byte_inv_count() as u64);
        let mask = rng.gen_range(1..=255u8);
        let (_, vr) = prove(Some((index, mask)), trial);
        assert!(
            matches!(vr, Err(Error::CheckFailed(_))),
            "inversion {index} mask {mask:#04x}: {vr:?}"
        );
    }

    // One inversion of a committed byte, every input and every wrong output
    // for a few inputs (0 among them).
    let mut b = webproof_circuits::Builder::new();
    let y = b.input(8);
    let t = b.byte_inv(&y);
    b.output(&t);
    let single = b.finish();
    for y in [0u8, 1, 2, 0x53, 0xff] {
        for mask in 0..=255u8 {
            let bits: Vec<bool> = (0..8).map(|k| (y >> k) & 1 == 1).collect();
            let (_, vr) = run(
                SMALL,
                mask as u64,
                async |p: &mut P| {
                    p.cheat.byte_inv = Some((0, mask));
                    let yin = p.commit(&bits).await?;
                    let out = p.eval(&single, &[&yin]).await?;
                    p.open(&out[0]).await?;
                    p.check().await
                },
                async |v: &mut V| {
                    let yin = v.commit(8).await?;
                    let out = v.eval(&single, &[&yin]).await?;
                    let t = bits_to_bytes(&v.open(&out[0]).await?)[0];
                    v.check().await?;
                    Ok(t)
                },
            );
            if mask == 0 {
                assert_eq!(vr.unwrap(), webproof_circuits::gf256::inv(y));
            } else {
                assert!(
                    matches!(vr, Err(Error::CheckFailed(_))),
                    "y {y:#04x} mask {mask:#04x}: {vr:?}"
                );
            }
        }
    }
}

/// A prover that splits an inversion's 8 corrections over two segments is
/// out of step with the verifier, which says so instead of mis-reading bits.
#[test]
fn byte_inversion_split_across_segments_is_malformed() {
    let mut b = webproof_circuits::Builder::new();
    let y = b.input(8);
    let t = b.byte_inv(&y);
    b.output(&t);
    let single = b.finish();
    let (mut a, bio) = memory_duplex();
    let (cs, _) = pair(1);
    let mut rng = StdRng::seed_from_u64(1);
    let mut raw = frame(&crate::proto::encode_hello(&SMALL));
    // 8 committed bits and 4 of the inversion's 8, then the other 4.
    raw.extend(frame(&[12, 0, 0, 0, 0xa5, 0x03]));
    raw.extend(frame(&[4, 0, 0, 0, 0x0c]));
    let r = block_on(async {
        let evil = async {
            let _ = a.write_all(&raw).await;
            let _ = a.close().await;
        };
        let honest = async {
            let mut v = Verifier::new(cs, Channel::new(bio), SMALL, &mut rng).await?;
            let yin = v.commit(8).await?;
            v.eval(&single, &[&yin]).await?;
            v.check().await
        };
        futures::join!(evil, honest).1
    });
    assert!(matches!(r, Err(Error::Malformed(_))), "{r:?}");
}

/// Batch evaluation gives each instance what a plain evaluation gives,
/// with shared and per-instance input groups, across segment and batch
/// boundaries; a wrong inversion in any instance is caught.
#[test]
fn batch_evaluation_matches_instances_and_catches_cheats() {
    let mut rng = StdRng::seed_from_u64(8080);
    // Two input groups: the first shared, the second per instance.
    let base = random_circuit_with_inversions(&mut rng, 40, 1500, 64);
    let mut c = base.clone();
    c.inputs = vec![(0..16).collect(), (16..40).collect()];
    for (seed, n) in [(1u64, 1usize), (2, 3), (3, 7), (4, 16)] {
        let shared = random_bits(&mut rng, 16);
        let own: Vec<Vec<bool>> = (0..n).map(|_| random_bits(&mut rng, 24)).collect();
        let expect: Vec<bool> = own
            .iter()
            .flat_map(|o| c.eval(&[shared.clone(), o.clone()]).remove(0))
            .collect();
        let flat: Vec<bool> = own.concat();
        for cheat in [
            None,
            Some(rng.gen_range(0..(c.byte_inv_count() * n) as u64)),
        ] {
            let (pr, vr) = run(
                if seed & 1 == 0 {
                    SMALL
                } else {
                    Config::default()
                },
                seed,
                async |p: &mut P| {
                    p.cheat.byte_inv = cheat.map(|i| (i, 0x40));
                    let s = p.commit(&shared).await?;
                    let o = p.commit(&flat).await?;
                    let out = p.eval_batch(&c, n, &[&s, &o]).await?;
                    p.open(&out[0]).await?;
                    p.check().await
                },
                async |v: &mut V| {
                    let s = v.commit(16).await?;
                    let o = v.commit(24 * n).await?;
                    let out = v.eval_batch(&c, n, &[&s, &o]).await?;
                    let opened = v.open(&out[0]).await?;
                    v.check().await?;
                    Ok::<_, Error>((opened, v.stats()))
                },
            );
            match cheat {
                None => {
                    pr.unwrap();
                    let (opened, stats) = vr.unwrap();
                    assert_eq!(opened, expect, "n = {n}");
                    assert_eq!(stats.byte_invs as usize, n * c.byte_inv_count());
                }
                Some(i) => assert!(
                    matches!(vr, Err(Error::CheckFailed(_))),
                    "n = {n}, cheat at {i}: {vr:?}"
                ),
            }
        }
    }
}

#[test]
fn batch_and_order_errors_are_usage_errors() {
    let mut b = webproof_circuits::Builder::new();
    let x = b.input(8);
    let t = b.byte_inv(&x);
    b.output(&t);
    let good = b.finish();
    // A gate that reads a wire above the one it writes.
    let mut backwards = good.clone();
    backwards.num_wires += 1;
    backwards.gates.push(Gate::Xor {
        a: backwards.num_wires - 1,
        b: 0,
        out: 8,
    });
    let (pr, _) = run(
        SMALL,
        1,
        async |p: &mut P| {
            let w = p.commit(&[true; 8]).await?;
            assert!(matches!(
                p.eval_batch(&good, 0, &[&w]).await,
                Err(Error::Usage(_))
            ));
            assert!(matches!(
                p.eval_batch(&good, crate::MAX_BATCH + 1, &[&w]).await,
                Err(Error::Usage(_))
            ));
            assert!(matches!(
                p.eval_batch(&good, 2, &[&w[..5]]).await,
                Err(Error::Usage(_))
            ));
            assert!(matches!(
                p.eval(&backwards, &[&w]).await,
                Err(Error::Usage(_))
            ));
            Ok::<_, Error>(())
        },
        async |_v: &mut V| Ok::<_, Error>(()),
    );
    pr.unwrap();
}

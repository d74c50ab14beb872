//! The malicious-security layer end to end: two garbled circuits and one
//! GF(2^128) OLE between a verifier (garbler, COT sender) and a prover,
//! then the sealed consistency proof, the reveal of `Δ` and the prover's
//! audit. Every cheat of either party must end in a typed error.

use futures::executor::block_on;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use webproof_circuits::{Builder, Circuit};
use webproof_core::cot::ideal::pair;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel, MemoryIo};
use webproof_mpc::consistency::{self, EvaluatedCircuit, GarbledCircuit, OleBatch};
use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
use webproof_mpc::field::Gf128;
use webproof_mpc::ole::{OleReceiver, OleSender};
use webproof_mpc::{Error, Plan};
use webproof_zk::{Config, Prover, Verifier};

const N: usize = 128;
const CFG: Config = Config {
    cot_batch: 4096,
    segment_bits: 4096,
};
const OLE_STREAM: u64 = 7;

/// Circuit 1 ("key derivation"): prover's `x`, verifier's mask `m`;
/// output `y = (x ∧ rot(x)) ⊕ (m ∧ rot3(x)) ⊕ m`, the prover's share.
/// With `negate_out0` the garbler's variant that flips output bit 0.
fn circuit1(negate_out0: bool) -> Circuit {
    let mut b = Builder::new();
    let x = b.input(N);
    let m = b.input(N);
    let mut y = Vec::with_capacity(N);
    for i in 0..N {
        let t = b.and(x[i], x[(i + 1) % N]);
        let u = b.and(m[i], x[(i + 3) % N]);
        let v = b.xor(t, u);
        y.push(b.xor(v, m[i]));
    }
    if negate_out0 {
        y[0] = y[0].not();
    }
    b.output(&y);
    b.finish()
}

/// Circuit 2 ("record"): the prover's share `s` (must be circuit 1's `y`)
/// and the verifier's `v`; output `z = s ∧ v ⊕ rot(s)` (64 bits).
fn circuit2() -> Circuit {
    let mut b = Builder::new();
    let s = b.input(N);
    let v = b.input(N);
    let z: Vec<_> = (0..64)
        .map(|i| {
            let a = b.and(s[i], v[i]);
            b.xor(a, s[(i + 1) % N])
        })
        .collect();
    b.output(&z);
    b.finish()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cheat {
    None,
    // The verifier (garbler, OLE sender):
    /// Garbles circuit 1 with output bit 0 negated (another function).
    OtherFunction,
    /// Flips a bit of the first table of circuit 1.
    CorruptTable,
    /// Flips control bit `z2` of the first table of circuit 1 (used only
    /// when the evaluator's colour on the gate's first input is 1).
    CorruptControl,
    /// Shifts the correction of the prover's input wire 0 by `Δ`.
    FlipCorrection,
    /// Shifts it by a random block.
    SpoilCorrection,
    /// Uses a wrong COT key for the prover's input wire 1.
    WrongCotKey,
    /// Swaps the digests and flips the permute bit of output bit 0.
    WrongDecoding,
    /// Reveals another mask `m` than it encoded.
    WrongReveal,
    /// Reveals a `Δ` that is not the COT's.
    WrongDelta,
    /// Alters its OLE answer.
    WrongOleAnswer,
    /// Reveals another OLE input than it used.
    WrongOleReveal,
    // The prover:
    /// Claims output bit 3 of circuit 1 flipped.
    WrongOutput,
    /// Feeds circuit 2 a share other than circuit 1's output.
    InconsistentInput,
    /// Flips its OT input (flip) for wire 5 and claims the original bit.
    WrongFlip,
    /// Inputs another element than its share into the OLE.
    WrongOleInput,
}

impl Cheat {
    /// A cheating prover does not audit the verifier (it would only stop
    /// itself); it opens whatever it committed to.
    fn by_prover(self) -> bool {
        matches!(
            self,
            Cheat::WrongOutput | Cheat::InconsistentInput | Cheat::WrongFlip | Cheat::WrongOleInput
        )
    }
}

#[derive(Debug)]
struct Outcome {
    /// The prover stopped during the session (before any proof).
    online: Option<Error>,
    prover: Result<(), Error>,
    verifier: Result<(), Error>,
}

fn bits(rng: &mut StdRng, n: usize) -> Vec<bool> {
    (0..n).map(|_| rng.gen()).collect()
}

fn to_block(bits: &[bool]) -> Block {
    Block(
        bits.iter()
            .enumerate()
            .fold(0u128, |a, (i, &b)| a | ((b as u128) << i)),
    )
}

/// COTs from both halves (ideal or Ferret), over the session's channels.
fn draw<S: RandomCotSender, R: RandomCotReceiver>(
    s: &mut S,
    r: &mut R,
    cs: &mut Channel<MemoryIo>,
    cr: &mut Channel<MemoryIo>,
    n: usize,
) -> (Vec<Block>, Vec<Block>) {
    let (mut k, mut m) = (Vec::new(), Vec::new());
    block_on(async {
        let (a, b) = futures::join!(s.extend(cs, n, &mut k), r.extend(cr, n, &mut m));
        a.unwrap();
        b.unwrap();
    });
    (k, m)
}

/// One session: both circuits, the OLE, the sealed proof, the reveal and
/// the audit, with `cheat` applied. `x0` fixes the prover's input bit 0
/// (to show that an abort does not depend on it).
fn session<S, R>(mut cot_s: S, mut cot_r: R, seed: u64, cheat: Cheat, x0: bool) -> Outcome
where
    S: RandomCotSender,
    R: RandomCotReceiver,
{
    let mut rng = StdRng::seed_from_u64(seed);
    let (a, b) = memory_duplex();
    let (mut ch_p, mut ch_v) = (Channel::new(a), Channel::new(b));
    let delta = cot_s.delta();
    let c1 = circuit1(false);
    let c2 = circuit2();
    let plan1 = Arc::new(Plan::new(&c1.lower()).unwrap());
    let plan2 = Arc::new(Plan::new(&c2.lower()).unwrap());
    let garbled1 = if cheat == Cheat::OtherFunction {
        Arc::new(Plan::new(&circuit1(true).lower()).unwrap())
    } else {
        Arc::clone(&plan1)
    };

    // Private inputs.
    let mut x = bits(&mut rng, N);
    x[0] = x0;
    let m = bits(&mut rng, N);
    let v = bits(&mut rng, N);
    let ole_a = Gf128(Block(rng.gen()));

    // --- Circuit 1: preprocessing, inputs by COT, evaluation. ---
    let mut vc1 = VerifierCircuit::new(Arc::clone(&garbled1), delta, 1, 0, &mut rng).unwrap();
    let mut chunks1 = vc1.garble_all();
    let mut dec1 = vc1.decoding().unwrap();
    if cheat == Cheat::CorruptTable {
        chunks1[0][8] ^= 1;
    }
    if cheat == Cheat::CorruptControl {
        let n = u32::from_le_bytes(chunks1[0][4..8].try_into().unwrap()) as usize;
        chunks1[0][webproof_mpc::CHUNK_HEADER + n * webproof_mpc::HALVES_BYTES] ^= 1 << 2;
    }
    if cheat == Cheat::WrongDecoding {
        // Group 0 of N bits: count, len, then the permute bits.
        dec1[8] ^= 1;
    }
    let (mut keys1, macs1) = draw(&mut cot_s, &mut cot_r, &mut ch_v, &mut ch_p, N);
    let mut pc1 = ProverCircuit::new(Arc::clone(&plan1), 1, 0).unwrap();
    let mut x_sent = x.clone();
    if cheat == Cheat::WrongFlip {
        x_sent[5] ^= true;
    }
    let flips1 = pc1.flips(&macs1, &x_sent).unwrap();
    if cheat == Cheat::WrongCotKey {
        keys1[1] ^= Block(rng.gen::<u128>() & !1);
    }
    let mut in1 = vc1
        .inputs(&keys1, &flips1, std::slice::from_ref(&m))
        .unwrap();
    if cheat == Cheat::FlipCorrection {
        for (i, byte) in delta.to_bytes().iter().enumerate() {
            in1[i] ^= byte;
        }
    }
    if cheat == Cheat::SpoilCorrection {
        in1[3] ^= 0x40;
    }
    let online = (|| -> Result<Vec<bool>, Error> {
        pc1.receive_inputs(&in1)?;
        for c in &chunks1 {
            pc1.feed(c)?;
        }
        pc1.finish()?;
        Ok(pc1.decode(&dec1)?.remove(0))
    })();
    let y = match online {
        Ok(y) => y,
        Err(e) => {
            return Outcome {
                online: Some(e),
                prover: Ok(()),
                verifier: Ok(()),
            }
        }
    };

    // --- Circuit 2: the prover's share y goes in again (fresh COTs). ---
    let mut s_in = y.clone();
    if cheat == Cheat::InconsistentInput {
        s_in[7] ^= true;
    }
    let mut vc2 = VerifierCircuit::new(Arc::clone(&plan2), delta, 2, 0, &mut rng).unwrap();
    let chunks2 = vc2.garble_all();
    let dec2 = vc2.decoding().unwrap();
    let (keys2, macs2) = draw(&mut cot_s, &mut cot_r, &mut ch_v, &mut ch_p, N);
    let mut pc2 = ProverCircuit::new(Arc::clone(&plan2), 2, 0).unwrap();
    let flips2 = pc2.flips(&macs2, &s_in).unwrap();
    let in2 = vc2
        .inputs(&keys2, &flips2, std::slice::from_ref(&v))
        .unwrap();
    pc2.receive_inputs(&in2).unwrap();
    for c in &chunks2 {
        pc2.feed(c).unwrap();
    }
    pc2.finish().unwrap();
    let z = pc2.decode(&dec2).unwrap().remove(0);

    // --- One GF(2^128) OLE on the prover's share y. ---
    let mut ole_b = Gf128(to_block(&y));
    if cheat == Cheat::WrongOleInput {
        ole_b = Gf128(ole_b.0 ^ Block(1 << 9));
    }
    let (ole_keys, ole_macs) = draw(&mut cot_s, &mut cot_r, &mut ch_v, &mut ch_p, 128);
    let (pending, ole_flips) = OleReceiver::new(OLE_STREAM)
        .choose(&ole_macs, &[ole_b])
        .unwrap();
    let (ole_u, mut ole_resp) = OleSender::new(delta, OLE_STREAM)
        .respond(&ole_keys, &[ole_a], &ole_flips)
        .unwrap();
    if cheat == Cheat::WrongOleAnswer {
        ole_resp[40] ^= 1;
    }
    let ole_v = pending.finish(&ole_resp).unwrap();
    if cheat == Cheat::None {
        assert_eq!(ole_u[0] + ole_v[0], ole_a * ole_b);
    }

    // --- After the session: the verifier reveals its inputs. ---
    let mut m_rev = m.clone();
    if cheat == Cheat::WrongReveal {
        m_rev[2] ^= true;
    }
    let msg = consistency::encode_bits(&[m_rev, v.clone()]);
    let revealed = consistency::decode_bits(&msg, &[N, N]).unwrap();
    let mut a_rev = ole_a;
    if cheat == Cheat::WrongOleReveal {
        a_rev = Gf128(a_rev.0 ^ Block(1 << 100));
    }

    // What each side keeps for the proof.
    let ev1 = EvaluatedCircuit::from_evaluator(pc1.evaluator(), Some(&dec1)).unwrap();
    let ev2 = EvaluatedCircuit::from_evaluator(pc2.evaluator(), Some(&dec2)).unwrap();
    let gc1 = GarbledCircuit::from_garbler(vc1.garbler()).unwrap();
    let gc2 = GarbledCircuit::from_garbler(vc2.garbler()).unwrap();
    let mut y_claim = y.clone();
    if cheat == Cheat::WrongOutput {
        y_claim[3] ^= true;
    }
    let in1_values = vec![x.clone(), revealed[0].clone()];
    let in2_values = vec![s_in.clone(), revealed[1].clone()];
    let ole_batch = OleBatch {
        macs: ole_macs.clone(),
        inputs: vec![ole_b],
        response: ole_resp.clone(),
    };

    let mut vrng = StdRng::seed_from_u64(seed ^ 0xfeed);
    block_on(async {
        let prover = async {
            let mut p = Prover::new(cot_r, ch_p, CFG)
                .await
                .map_err(Error::from_zk)?;
            p.defer();
            let w1 = ev1.import(&p, &in1_values, &[y_claim.clone()])?;
            let w2 = ev2.import(&p, &in2_values, std::slice::from_ref(&z))?;
            let ole_bits = consistency::import_ole_inputs(&p, &ole_macs, &[ole_b])?;
            consistency::prove_circuit(&mut p, &c1, &w1).await?;
            consistency::prove_circuit(&mut p, &c2, &w2).await?;
            consistency::prove_equal(&mut p, &w1.outputs[0], &w2.inputs[0]).await?;
            consistency::prove_equal(&mut p, &w1.outputs[0], &ole_bits).await?;
            let mut sealed = p.seal(rand::random()).await.map_err(Error::from_zk)?;
            let d = consistency::receive_delta(&mut sealed).await?;
            // The audit, before anything MAC-dependent leaves.
            if !cheat.by_prover() {
                ev1.audit(d, &in1_values)?;
                ev2.audit(d, &in2_values)?;
                consistency::audit_ole(d, OLE_STREAM, &[ole_batch], &[vec![a_rev]])?;
            }
            sealed.open().await.map_err(Error::from_zk)?;
            Ok::<_, Error>(())
        };
        let verifier = async {
            let mut v = Verifier::new(cot_s, ch_v, CFG, &mut vrng)
                .await
                .map_err(Error::from_zk)?;
            v.defer();
            let w1 = gc1.import(&v)?;
            let w2 = gc2.import(&v)?;
            let ole_bits = consistency::import_ole_keys(&v, &ole_keys, &ole_flips)?;
            consistency::verify_circuit(&mut v, &c1, &w1).await?;
            consistency::verify_circuit(&mut v, &c2, &w2).await?;
            consistency::verify_equal(&mut v, &w1.outputs[0], &w2.inputs[0]).await?;
            consistency::verify_equal(&mut v, &w1.outputs[0], &ole_bits).await?;
            let mut sealed = v.seal().await.map_err(Error::from_zk)?;
            if cheat == Cheat::WrongDelta {
                let wrong = sealed.delta() ^ Block(2);
                let (cot, ch) = sealed.parts();
                let mut keys = Vec::new();
                cot.extend(ch, consistency::DELTA_CHECK_COTS, &mut keys)
                    .await
                    .map_err(Error::from_zk)?;
                let mut msg = wrong.to_bytes().to_vec();
                keys.iter()
                    .for_each(|k| msg.extend_from_slice(&k.to_bytes()));
                ch.send(&msg)
                    .await
                    .map_err(|e| Error::Proof(e.to_string()))?;
                ch.flush().await.map_err(|e| Error::Proof(e.to_string()))?;
            } else {
                consistency::reveal_delta(&mut sealed).await?;
            }
            sealed.verify().await.map_err(Error::from_zk)?;
            Ok::<_, Error>(())
        };
        let (prover, verifier) = futures::join!(prover, verifier);
        Outcome {
            online: None,
            prover,
            verifier,
        }
    })
}

fn ideal_session(seed: u64, cheat: Cheat, x0: bool) -> Outcome {
    let (s, r) = pair(seed);
    session(s, r, seed, cheat, x0)
}

fn assert_honest(o: &Outcome) {
    assert!(o.online.is_none(), "{o:?}");
    assert!(o.prover.is_ok() && o.verifier.is_ok(), "{o:?}");
}

#[test]
fn honest_session_proves_with_the_ideal_cot() {
    for seed in 0..3 {
        assert_honest(&ideal_session(seed, Cheat::None, seed % 2 == 0));
    }
}

#[test]
fn honest_session_proves_with_ferret_sharing_one_delta() {
    // One Ferret sender for the label transfers, the OLE and the proof:
    // the garbler's Δ is the proof's Δ, or the imports would not verify.
    use rand_chacha::rand_core::SeedableRng as _;
    use webproof_ferret::{FerretConfig, SilentCotReceiver, SilentCotSender};
    let (a, b) = memory_duplex();
    let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
    let mut r1 = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let mut r2 = rand_chacha::ChaCha20Rng::seed_from_u64(2);
    let (s, r) = block_on(async {
        futures::join!(
            SilentCotSender::connect(FerretConfig::compact(), &mut ca, &mut r1),
            SilentCotReceiver::connect(FerretConfig::compact(), &mut cb, &mut r2)
        )
    });
    assert_honest(&session(s.unwrap(), r.unwrap(), 11, Cheat::None, true));
}

fn expect_verifier_caught(cheat: Cheat, x0: bool) -> Outcome {
    let o = ideal_session(21, cheat, x0);
    assert!(o.online.is_none(), "{cheat:?}: {o:?}");
    assert!(
        matches!(o.prover, Err(Error::VerifierCheated(_))),
        "{cheat:?}: {o:?}"
    );
    assert!(o.verifier.is_err(), "{cheat:?}: {o:?}");
    o
}

fn expect_prover_caught(cheat: Cheat) {
    let o = ideal_session(33, cheat, false);
    assert!(o.online.is_none(), "{cheat:?}: {o:?}");
    assert!(o.prover.is_ok(), "{cheat:?}: {o:?}");
    assert!(
        matches!(o.verifier, Err(Error::ConsistencyFailed(_))),
        "{cheat:?}: {o:?}"
    );
}

#[test]
fn garbler_computing_another_function_is_caught_by_the_audit() {
    for x0 in [false, true] {
        expect_verifier_caught(Cheat::OtherFunction, x0);
    }
}

#[test]
fn wrong_decoding_is_caught_by_the_audit() {
    for x0 in [false, true] {
        expect_verifier_caught(Cheat::WrongDecoding, x0);
    }
}

#[test]
fn flipped_correction_is_caught_whatever_the_prover_bit() {
    // The evaluator computes on x0 ^ 1 without noticing; the audit
    // derives the 0-label from x0 and finds another garbling, for either
    // value of x0: the abort does not depend on the bit.
    let a = expect_verifier_caught(Cheat::FlipCorrection, false);
    let b = expect_verifier_caught(Cheat::FlipCorrection, true);
    assert_eq!(a.prover, b.prover);
}

#[test]
fn spoiled_correction_or_cot_key_is_caught_whatever_the_prover_bit() {
    // A label that is neither valid one gives wrong outputs for both
    // values of the bit, and the audit refuses it for both: the abort
    // does not depend on the bit.
    for cheat in [Cheat::SpoilCorrection, Cheat::WrongCotKey] {
        let a = expect_verifier_caught(cheat, false);
        let b = expect_verifier_caught(cheat, true);
        assert_eq!(a.prover, b.prover, "{cheat:?}");
    }
}

#[test]
fn corrupted_table_is_caught_by_the_audit() {
    // A corrupted row is used only for one value of a permute bit, so the
    // evaluator's outputs may depend on the prover's data (the one-bit
    // selective failure the module docs bound, if a later check refuses
    // them); nothing online stops the prover here, and the session never
    // ends accepted: the audit refuses the tables whichever row was used.
    for cheat in [Cheat::CorruptTable, Cheat::CorruptControl] {
        for seed in 0..16 {
            let o = ideal_session(seed, cheat, seed % 2 == 1);
            assert!(o.online.is_none(), "{cheat:?} seed {seed}: {o:?}");
            assert!(
                matches!(o.prover, Err(Error::VerifierCheated(_))),
                "{cheat:?} seed {seed}: {o:?}"
            );
            assert!(o.verifier.is_err(), "{cheat:?} seed {seed}: {o:?}");
        }
    }
}

#[test]
fn wrong_reveal_of_the_verifier_inputs_is_caught() {
    expect_verifier_caught(Cheat::WrongReveal, true);
}

#[test]
fn wrong_delta_reveal_is_caught() {
    let o = expect_verifier_caught(Cheat::WrongDelta, false);
    assert_eq!(
        o.prover,
        Err(Error::VerifierCheated(
            "the revealed Delta is not the COT sender's"
        ))
    );
}

#[test]
fn wrong_ole_answer_or_reveal_is_caught() {
    for cheat in [Cheat::WrongOleAnswer, Cheat::WrongOleReveal] {
        expect_verifier_caught(cheat, false);
    }
}

#[test]
fn prover_claiming_a_wrong_output_is_caught() {
    expect_prover_caught(Cheat::WrongOutput);
}

#[test]
fn prover_with_inconsistent_inputs_across_circuits_is_caught() {
    expect_prover_caught(Cheat::InconsistentInput);
}

#[test]
fn prover_lying_about_its_ot_input_is_caught() {
    expect_prover_caught(Cheat::WrongFlip);
}

#[test]
fn prover_with_a_wrong_ole_input_is_caught() {
    expect_prover_caught(Cheat::WrongOleInput);
}

#[test]
fn garbler_with_another_delta_cannot_import() {
    let (s, r) = pair(1);
    let mut rng = StdRng::seed_from_u64(1);
    let plan = Arc::new(Plan::new(&circuit2().lower()).unwrap());
    let other = Block(rng.gen::<u128>() | 1);
    let mut vc = VerifierCircuit::new(plan, other, 0, 0, &mut rng).unwrap();
    vc.garble_all();
    let gc = GarbledCircuit::from_garbler(vc.garbler()).unwrap();
    let (a, b) = memory_duplex();
    block_on(async {
        let (p, v) = futures::join!(
            Prover::new(r, Channel::new(a), CFG),
            Verifier::new(s, Channel::new(b), CFG, &mut rng)
        );
        let (_p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(gc.import(&v).err(), Some(Error::DeltaMismatch));
    });
}

#[test]
fn unsealed_proof_is_refused() {
    let (s, r) = pair(2);
    let mut rng = StdRng::seed_from_u64(2);
    let c = circuit2();
    let plan = Arc::new(Plan::new(&c.lower()).unwrap());
    let delta = s.delta();
    let mut vc = VerifierCircuit::new(plan, delta, 0, 0, &mut rng).unwrap();
    vc.garble_all();
    let gc = GarbledCircuit::from_garbler(vc.garbler()).unwrap();
    let (a, b) = memory_duplex();
    block_on(async {
        let (p, v) = futures::join!(
            Prover::new(r, Channel::new(a), CFG),
            Verifier::new(s, Channel::new(b), CFG, &mut rng)
        );
        let (mut p, mut v) = (p.unwrap(), v.unwrap());
        let w = gc.import(&v).unwrap();
        assert_eq!(
            consistency::verify_circuit(&mut v, &c, &w).await.err(),
            Some(Error::NotSealed)
        );
        let bit = p.constant(true);
        assert_eq!(
            consistency::prove_equal(&mut p, &[bit], &[bit]).await.err(),
            Some(Error::NotSealed)
        );
    });
}

#[test]
fn malformed_reveals_are_errors() {
    let good = consistency::encode_bits(&[vec![true; 10], vec![false; 3]]);
    assert!(consistency::decode_bits(&good, &[10, 3]).is_ok());
    for bad in [
        good[..good.len() - 1].to_vec(),
        [good.clone(), vec![0]].concat(),
        Vec::new(),
    ] {
        assert_eq!(
            consistency::decode_bits(&bad, &[10, 3]),
            Err(Error::Malformed("revealed bits"))
        );
    }
    // Other lengths than expected, padding bits set.
    assert!(consistency::decode_bits(&good, &[10, 4]).is_err());
    assert!(consistency::decode_bits(&good, &[10]).is_err());
    let mut padded = good.clone();
    padded[4 + 4 + 1] |= 0x80;
    assert!(consistency::decode_bits(&padded, &[10, 3]).is_err());
    // A Δ reveal of the wrong length, or for other COTs.
    let macs = vec![Block::ZERO; consistency::DELTA_CHECK_COTS];
    for len in [
        0,
        16,
        consistency::DELTA_REVEAL_LEN - 1,
        consistency::DELTA_REVEAL_LEN + 1,
    ] {
        assert_eq!(
            consistency::check_delta(&vec![1; len], &macs),
            Err(Error::Malformed("Delta reveal"))
        );
    }
    assert!(consistency::check_delta(&vec![0; consistency::DELTA_REVEAL_LEN], &macs[1..]).is_err());
}

#[test]
fn values_of_the_wrong_shape_are_refused() {
    let (s, r) = pair(3);
    let mut rng = StdRng::seed_from_u64(3);
    let c = circuit2();
    let plan = Arc::new(Plan::new(&c.lower()).unwrap());
    let delta = s.delta();
    let mut vc = VerifierCircuit::new(Arc::clone(&plan), delta, 0, 0, &mut rng).unwrap();
    let chunks = vc.garble_all();
    let (keys, macs) = {
        let (a, b) = memory_duplex();
        let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
        let (mut s2, mut r2) = pair(30);
        draw(&mut s2, &mut r2, &mut ca, &mut cb, N)
    };
    let mut pc = ProverCircuit::new(plan, 0, 0).unwrap();
    let flips = pc.flips(&macs, &[false; N]).unwrap();
    // Labels from another correlation: the evaluation still runs.
    let _ = vc
        .inputs(&keys, &flips, &[vec![true; N]])
        .map(|m| pc.receive_inputs(&m));
    for ch in &chunks {
        let _ = pc.feed(ch);
    }
    let _ = pc.finish();
    let ev = EvaluatedCircuit::from_evaluator(pc.evaluator(), None).unwrap();
    assert_eq!(ev.input_lens(), vec![N, N]);
    let (a, b) = memory_duplex();
    block_on(async {
        let (p, _v) = futures::join!(
            Prover::new(r, Channel::new(a), CFG),
            Verifier::new(s, Channel::new(b), CFG, &mut rng)
        );
        let p = p.unwrap();
        assert!(ev
            .import(&p, &[vec![false; N]], &[vec![false; 64]])
            .is_err());
        assert!(ev
            .import(
                &p,
                &[vec![false; N], vec![false; N - 1]],
                &[vec![false; 64]]
            )
            .is_err());
        assert!(ev.audit(delta, &[vec![false; N]]).is_err());
    });
}

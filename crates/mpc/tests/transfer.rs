//! The evaluator's input labels from the workspace's real COT extensions
//! (base OT + SoftSpokenOT, and Ferret on top of it) run in-process over an
//! in-memory channel, with the garbler's Δ taken from its COT sender.

use aes::cipher::{BlockEncrypt, KeyInit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_circuits::{bits_to_bytes, bytes_to_bits};
use webproof_core::Block;
use webproof_ferret::testing::cots as ferret_cots;
use webproof_mpc::{transfer, Error, Evaluator, Garbler};
use webproof_ot::testing::cots;

fn aes_ref(key: &[u8; 16], pt: &[u8; 16]) -> [u8; 16] {
    let aes = aes::Aes128::new(key.into());
    let mut b = (*pt).into();
    aes.encrypt_block(&mut b);
    b.into()
}

/// The evaluator's AES key through Ferret COTs, chosen before garbling.
#[test]
fn chosen_inputs_from_ferret() {
    let mut rng = ChaCha20Rng::seed_from_u64(25);
    let key: [u8; 16] = rng.gen();
    let pt: [u8; 16] = rng.gen();
    let (delta, keys, macs) = ferret_cots(26, 128);
    let c = webproof_circuits::cache::aes128();
    let x = bytes_to_bits(&key);
    let flips = transfer::flips(&macs, &x).unwrap();
    let mut g = Garbler::new(c, delta, &mut rng).unwrap();
    g.set_input_zero_labels(
        0,
        &transfer::zero_labels_from_cot(&keys, delta, &flips).unwrap(),
    )
    .unwrap();
    let chunks = g.garble_all();
    let mut e = Evaluator::new(c).unwrap();
    e.set_input(0, &macs).unwrap();
    e.set_input(1, &g.encode(1, &bytes_to_bits(&pt)).unwrap())
        .unwrap();
    for ch in &chunks {
        e.feed(ch).unwrap();
    }
    let out = e.decode(&g.decoding().unwrap()).unwrap();
    assert_eq!(bits_to_bytes(&out[0]), aes_ref(&key, &pt));
}

/// Garbler holds the AES key (group 0), the evaluator the plaintext (group
/// 1), chosen by COT before garbling: the evaluator's labels are its MACs.
#[test]
fn chosen_inputs_before_garbling() {
    let mut rng = ChaCha20Rng::seed_from_u64(20);
    let key: [u8; 16] = rng.gen();
    let pt: [u8; 16] = rng.gen();
    let x = bytes_to_bits(&pt);
    let (delta, keys, macs) = cots(21, 128);
    let c = webproof_circuits::cache::aes128();

    let flips = transfer::flips(&macs, &x).unwrap();
    assert_eq!(flips.len(), 16);
    let zero = transfer::zero_labels_from_cot(&keys, delta, &flips).unwrap();
    let mut g = Garbler::new(c, delta, &mut rng).unwrap();
    g.set_input_zero_labels(1, &zero).unwrap();
    let chunks = g.garble_all();

    let mut e = Evaluator::new(c).unwrap();
    e.set_input(0, &g.encode(0, &bytes_to_bits(&key)).unwrap())
        .unwrap();
    e.set_input(1, &macs).unwrap();
    for ch in &chunks {
        e.feed(ch).unwrap();
    }
    let out = e.decode(&g.decoding().unwrap()).unwrap();
    assert_eq!(bits_to_bytes(&out[0]), aes_ref(&key, &pt));
    // The evaluator's input labels are IT-MACs of its bits under Δ, keyed
    // by the garbler's 0-labels (what the consistency proof will reuse).
    let held = e.input_labels(1).unwrap();
    for i in 0..128 {
        assert_eq!(
            held[i],
            g.input_zero_labels(1).unwrap()[i] ^ Block::select(x[i], delta)
        );
    }
}

/// Tables garbled first (preprocessing), the evaluator's input transferred
/// afterwards with one correction block per bit.
#[test]
fn inputs_after_garbling_by_corrections() {
    let mut rng = ChaCha20Rng::seed_from_u64(22);
    let key: [u8; 16] = rng.gen();
    let pt: [u8; 16] = rng.gen();
    let (delta, keys, macs) = cots(23, 128);
    let c = webproof_circuits::cache::aes128();

    // Preprocessing: garble and ship the tables before the key is known.
    let mut g = Garbler::new(c, delta, &mut rng).unwrap();
    let chunks = g.garble_all();

    // Online: the evaluator's key by COT.
    let x = bytes_to_bits(&key);
    let flips = transfer::flips(&macs, &x).unwrap();
    let corr =
        transfer::corrections(g.input_zero_labels(0).unwrap(), &keys, delta, &flips).unwrap();
    assert_eq!(corr.len(), 128 * 16);
    let labels = transfer::labels_from_corrections(&macs, &corr).unwrap();

    let mut e = Evaluator::new(c).unwrap();
    e.set_input(0, &labels).unwrap();
    e.set_input(1, &g.encode(1, &bytes_to_bits(&pt)).unwrap())
        .unwrap();
    for ch in &chunks {
        e.feed(ch).unwrap();
    }
    let out = e.decode(&g.decoding().unwrap()).unwrap();
    assert_eq!(bits_to_bytes(&out[0]), aes_ref(&key, &pt));

    // A corrupted correction spoils the wire: the evaluator reads a wrong
    // output (the audit after the session names the cheat).
    let mut bad = corr.clone();
    bad[5 * 16 + 3] ^= 0x10;
    let labels = transfer::labels_from_corrections(&macs, &bad).unwrap();
    let mut e = Evaluator::new(c).unwrap();
    e.set_input(0, &labels).unwrap();
    e.set_input(1, &g.encode(1, &bytes_to_bits(&pt)).unwrap())
        .unwrap();
    for ch in &chunks {
        e.feed(ch).unwrap();
    }
    let out = e.decode(&g.decoding().unwrap()).unwrap();
    assert_ne!(bits_to_bytes(&out[0]), aes_ref(&key, &pt));
}

#[test]
fn malformed_transfer_messages_are_refused() {
    let (delta, keys, macs) = cots(24, 13);
    let x = vec![true; 13];
    assert!(matches!(
        transfer::flips(&macs, &x[..12]),
        Err(Error::Transfer(_))
    ));
    let flips = transfer::flips(&macs, &x).unwrap();
    assert_eq!(flips.len(), 2);
    assert!(matches!(
        transfer::zero_labels_from_cot(&keys, delta, &flips[..1]),
        Err(Error::Transfer(_))
    ));
    // Padding bits set.
    let mut pad = flips.clone();
    pad[1] |= 0x80;
    assert!(matches!(
        transfer::zero_labels_from_cot(&keys, delta, &pad),
        Err(Error::Transfer(_))
    ));
    let zero = transfer::zero_labels_from_cot(&keys, delta, &flips).unwrap();
    for i in 0..13 {
        assert_eq!(macs[i], zero[i] ^ delta);
    }
    assert!(matches!(
        transfer::corrections(&zero[..12], &keys, delta, &flips),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        transfer::labels_from_corrections(&macs, &[0; 13 * 16 - 1]),
        Err(Error::Malformed(_))
    ));
}

/// The verifier's groups known before the session go in preprocessing
/// (`early_inputs`): the evaluation is the same as with every label in
/// the input message, the verifier retains every group's bits for its
/// reveal, and misuse is refused (twice, after the inputs, the prover's
/// group, the wrong length, a message that still carries the group).
#[test]
fn early_input_labels_evaluate_as_late_ones() {
    use std::sync::Arc;
    use webproof_mpc::exec::{early_len, ProverCircuit, VerifierCircuit};
    use webproof_mpc::Plan;
    let mut rng = ChaCha20Rng::seed_from_u64(40);
    let key: [u8; 16] = rng.gen();
    let pt: [u8; 16] = rng.gen();
    let (delta, keys, macs) = cots(41, 128);
    // Group 0 the verifier's key, group 1 the prover's plaintext.
    let plan = Arc::new(Plan::new(webproof_circuits::cache::aes128()).unwrap());
    let key_bits = bytes_to_bits(&key);
    let mut v = VerifierCircuit::new(Arc::clone(&plan), delta, 7, 1, &mut rng).unwrap();
    let chunks = v.garble_all();
    assert!(v.early_inputs(&[1], &[bytes_to_bits(&pt)]).is_err());
    assert!(v
        .early_inputs(&[0, 0], &[key_bits.clone(), key_bits.clone()])
        .is_err());
    let early = v
        .early_inputs(&[0], std::slice::from_ref(&key_bits))
        .unwrap();
    assert_eq!(early.len(), early_len(&plan, &[0]));
    assert!(v
        .early_inputs(&[0], std::slice::from_ref(&key_bits))
        .is_err());

    let mut p = ProverCircuit::new(Arc::clone(&plan), 7, 1).unwrap();
    assert!(p.receive_early(&[0], &early[1..]).is_err());
    assert!(p.receive_early(&[1], &early).is_err());
    p.receive_early(&[0], &early).unwrap();
    let flips = p.flips(&macs, &bytes_to_bits(&pt)).unwrap();
    assert!(v
        .inputs(&keys, &flips, std::slice::from_ref(&key_bits))
        .is_err());
    let msg = v.inputs(&keys, &flips, &[]).unwrap();
    assert_eq!(msg.len(), 16 * 128);
    assert_eq!(p.inputs_len(), msg.len());
    assert!(v
        .early_inputs(&[0], std::slice::from_ref(&key_bits))
        .is_err());
    p.receive_inputs(&msg).unwrap();
    for ch in &chunks {
        p.feed(ch).unwrap();
    }
    p.finish().unwrap();
    let out = p.decode(&v.decoding().unwrap()).unwrap();
    assert_eq!(bits_to_bytes(&out[0]), aes_ref(&key, &pt));
    assert_eq!(v.retain().unwrap().own, vec![key_bits]);
}

/// Early inputs in several calls: one group in preprocessing, another
/// online a step ahead (the reduced PRF's advance labels). Any order of
/// calls works as long as no group comes twice and all come before the
/// inputs; the evaluation is the one with every label in the input
/// message.
#[test]
fn early_inputs_in_several_calls() {
    use std::sync::Arc;
    use webproof_circuits::Builder;
    use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
    use webproof_mpc::Plan;
    let mut rng = ChaCha20Rng::seed_from_u64(44);
    let [x, y, z]: [[u8; 4]; 3] = core::array::from_fn(|_| rng.gen());
    // Group 0 the prover's, groups 1 to 3 the verifier's:
    // out = (p ⊕ a) ∧ (b ⊕ c).
    let mut b = Builder::new();
    let (pg, a, bg, c) = (
        b.input_bytes(4),
        b.input_bytes(4),
        b.input_bytes(4),
        b.input_bytes(4),
    );
    let l = b.xor_words(&pg, &a);
    let r = b.xor_words(&bg, &c);
    let o = b.and_words(&l, &r);
    b.output(&o);
    let plan = Arc::new(Plan::from_circuit(b.finish()).unwrap());
    let p_in: [u8; 4] = rng.gen();
    let (delta, keys, macs) = cots(45, 32);
    let mut v = VerifierCircuit::new(Arc::clone(&plan), delta, 3, 0, &mut rng).unwrap();
    let chunks = v.garble_all();
    let mut p = ProverCircuit::new(Arc::clone(&plan), 3, 0).unwrap();
    // Group 3 first (preprocessing), then group 1 (a step ahead).
    let e3 = v.early_inputs(&[3], &[bytes_to_bits(&z)]).unwrap();
    assert!(v
        .early_inputs(&[1, 3], &[bytes_to_bits(&x), bytes_to_bits(&z)])
        .is_err());
    let e1 = v.early_inputs(&[1], &[bytes_to_bits(&x)]).unwrap();
    p.receive_early(&[3], &e3).unwrap();
    assert!(p.receive_early(&[3], &e3).is_err(), "a group taken twice");
    p.receive_early(&[1], &e1).unwrap();
    let flips = p.flips(&macs, &bytes_to_bits(&p_in)).unwrap();
    let msg = v.inputs(&keys, &flips, &[bytes_to_bits(&y)]).unwrap();
    assert!(v.early_inputs(&[2], &[bytes_to_bits(&y)]).is_err());
    assert_eq!(p.inputs_len(), msg.len());
    p.receive_inputs(&msg).unwrap();
    assert!(
        p.receive_early(&[2], &e1).is_err(),
        "early after the inputs"
    );
    assert!(p.receive_inputs(&msg).is_err(), "a second input message");
    for ch in &chunks {
        p.feed(ch).unwrap();
    }
    p.finish().unwrap();
    let out = bits_to_bytes(&p.decode(&v.decoding().unwrap()).unwrap()[0]);
    let want: Vec<u8> = (0..4).map(|i| (p_in[i] ^ x[i]) & (y[i] ^ z[i])).collect();
    assert_eq!(out, want);
    // The reveal lists every verifier group in group order.
    let own = v.retain().unwrap().own;
    assert_eq!(
        own,
        vec![bytes_to_bits(&x), bytes_to_bits(&y), bytes_to_bits(&z)]
    );
}

/// A circuit whose prover group is chained to another circuit's output
/// (`chain_prover_input`): evaluated on the labels the prover holds there,
/// it computes on that output with no input message (answering flips for
/// it is refused), the verifier retains its early groups as its input
/// bits, and the audit passes. A garbler that chained the group to other
/// 0-labels than the output's (so that the prover's labels decode to
/// something else, or to nothing) is caught by the audit.
#[test]
fn chained_inputs_take_the_other_circuits_labels() {
    use std::sync::Arc;
    use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
    use webproof_mpc::Plan;
    let mut rng = ChaCha20Rng::seed_from_u64(50);
    let key: [u8; 16] = rng.gen();
    let pt: [u8; 16] = rng.gen();
    let (delta, keys, _) = cots(51, 128);
    let plan = Arc::new(Plan::new(webproof_circuits::cache::aes128()).unwrap());
    // Stand-in for the earlier circuit: the 0-labels of the wires holding
    // the prover's key, and the labels the prover evaluated there.
    let key_bits = bytes_to_bits(&key);
    let out_zero: Vec<Block> = (0..128).map(|_| Block(rng.gen::<u128>())).collect();
    let held: Vec<Block> = out_zero
        .iter()
        .zip(&key_bits)
        .map(|(&z, &b)| if b { z ^ delta } else { z })
        .collect();
    let pt_bits = bytes_to_bits(&pt);
    let run = |zero: &[Block], rng: &mut ChaCha20Rng| {
        // Group 0 the prover's key (chained), group 1 the verifier's block.
        let mut v = VerifierCircuit::new(Arc::clone(&plan), delta, 9, 0, rng).unwrap();
        v.chain_prover_input(zero).unwrap();
        let chunks = v.garble_all();
        let early = v
            .early_inputs(&[1], std::slice::from_ref(&pt_bits))
            .unwrap();
        assert!(v.inputs(&keys, &[0; 16], &[]).is_err());
        let mut p = ProverCircuit::new(Arc::clone(&plan), 9, 0).unwrap();
        p.receive_early(&[1], &early).unwrap();
        p.chain_prover_input(&held, &key_bits).unwrap();
        assert!(p.flips(&keys, &key_bits).is_err());
        for ch in &chunks {
            p.feed(ch).unwrap();
        }
        p.finish().unwrap();
        let out = p.decode(&v.decoding().unwrap()).unwrap();
        let garbled = v.retain().unwrap();
        assert_eq!(garbled.own, vec![pt_bits.clone()]);
        let evaluated = p.retain().unwrap();
        let values = vec![key_bits.clone(), pt_bits.clone()];
        (
            bits_to_bytes(&out[0]),
            evaluated.circuit.audit(delta, &values),
        )
    };
    let (ct, audit) = run(&out_zero, &mut rng);
    assert_eq!(ct, aes_ref(&key, &pt));
    audit.unwrap();
    // Chained to other wires: another key in the circuit's eyes.
    let mut other = out_zero.clone();
    other[5] ^= Block(1 << 70);
    let (_, audit) = run(&other, &mut rng);
    assert!(matches!(audit, Err(Error::VerifierCheated(_))), "{audit:?}");
}

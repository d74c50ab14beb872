//! The 2PC payloads inside MPC mode's messages, as each party parses its
//! peer's (`webproof_mpc`): the evaluator's (prover's) take of the
//! garbler's early input labels, input message, garbled chunks and
//! decoding; the garbler's (verifier's) take of the prover's flips and of
//! its reveal of an output; an OLE batch's answer and flips, both sides.
//! Never a panic, whatever the bytes: bad input is an error.
//!
//! Input: a selector byte, then pieces, each a 2-byte big-endian length
//! and its bytes (a short piece takes what is left).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::sync::{Arc, OnceLock};
use webproof_circuits::Builder;
use webproof_core::Block;
use webproof_mpc::exec::{ProverCircuit, VerifierCircuit};
use webproof_mpc::field::Gf128;
use webproof_mpc::ole::{self, OleReceiver, OleSender};
use webproof_mpc::Plan;

/// Groups: 0 the prover's (4 bytes), 1 the verifier's (4 bytes), 2 the
/// verifier's, sent early (2 bytes); outputs: a sum and a product-ish mix.
fn plan() -> Arc<Plan> {
    static PLAN: OnceLock<Arc<Plan>> = OnceLock::new();
    PLAN.get_or_init(|| {
        let mut b = Builder::new();
        let p = b.input_bytes(4);
        let v = b.input_bytes(4);
        let e = b.input_bytes(2);
        let s = b.add(&p, &v);
        let m = b.and_words(&s[..16], &e);
        b.output(&s);
        b.output(&m);
        Arc::new(Plan::from_circuit(b.finish()).expect("plan"))
    })
    .clone()
}

fn pieces(mut d: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while d.len() >= 2 {
        let n = (usize::from(d[0]) << 8 | usize::from(d[1])).min(d.len() - 2);
        out.push(&d[2..2 + n]);
        d = &d[2 + n..];
    }
    out
}

fn blocks(n: usize, seed: u128) -> Vec<Block> {
    (0..n as u128).map(|i| Block(seed ^ (i * 0x9e37_79b9_7f4a_7c15))).collect()
}

fn gf(n: usize) -> Vec<Gf128> {
    (0..n as u128).map(|i| Gf128(Block(i + 3))).collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let p = pieces(rest);
    let piece = |i: usize| p.get(i).copied().unwrap_or(&[]);
    match sel % 4 {
        // The evaluator: early labels, flips, the input message, chunks,
        // the decoding, its output reveal.
        0 => {
            let Ok(mut c) = ProverCircuit::new(plan(), 0, 0) else {
                return;
            };
            let _ = c.receive_early(&[2], piece(0));
            let bits = vec![true; c.input_len()];
            let _ = c.flips(&blocks(c.input_len(), 5), &bits);
            if c.receive_inputs(piece(1)).is_err() {
                return;
            }
            for i in 2..p.len().saturating_sub(1) {
                if c.feed(piece(i)).is_err() {
                    return;
                }
            }
            if c.finish().is_ok() && c.decode(piece(p.len().saturating_sub(1))).is_ok() {
                let _ = c.output_message(0);
            }
        }
        // The garbler: the prover's flips, then its reveal of output 0.
        1 => {
            let mut rng = ChaCha20Rng::seed_from_u64(7);
            let delta = Block(0x1234_5678_9abc_def0_1122_3344_5566_7789);
            let Ok(mut g) = VerifierCircuit::new(plan(), delta, 0, 0, &mut rng) else {
                return;
            };
            let _ = g.early_inputs(&[2], &[vec![false; 16]]);
            let _ = g.garble_all();
            let _ = g.inputs(&blocks(32, 9), piece(0), &[vec![true; 32]]);
            let _ = g.check_output(0, piece(1));
            let _ = g.check_output(1, piece(2));
        }
        // An OLE batch's receiver: the sender's answer.
        2 => {
            let n = 1 + usize::from(sel >> 2) % 4;
            let mut r = OleReceiver::new(1);
            let macs = blocks(ole::cots_needed::<Gf128>(n), 11);
            if let Ok((pending, _flips)) = r.choose::<Gf128>(&macs, &gf(n)) {
                let _ = pending.finish(piece(0));
            }
        }
        // An OLE batch's sender: the receiver's flips.
        _ => {
            let n = 1 + usize::from(sel >> 2) % 4;
            let delta = Block(0x0fed_cba9_8765_4321_0f0f_0f0f_f0f0_f0f1);
            let mut s = OleSender::new(delta, 1);
            let keys = blocks(ole::cots_needed::<Gf128>(n), 13);
            let _ = s.respond::<Gf128>(&keys, &gf(n), piece(0));
        }
    }
});

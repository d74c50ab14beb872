//! The evaluator's input labels from correlated OT with the garbler's `Δ`.
//!
//! A random COT with global `Δ` (the garbler is the COT sender, the
//! evaluator the receiver; [`webproof_core::cot`] conventions) gives the
//! garbler `K` and the evaluator `M = K ⊕ r·Δ` for a random bit `r = lsb(M)`:
//! `M` already *is* a garbled label of `r` under the 0-label `K`. To input
//! its own bit `x` the evaluator sends `d = r ⊕ x` ([`flips`]; one bit per
//! input bit, a one-time pad of `x`). Then, two ways:
//!
//! - **Chosen before garbling** ([`zero_labels_from_cot`]): the garbler uses
//!   `K ⊕ d·Δ` as the wire's 0-label ([`crate::Garbler::set_input_zero_labels`]);
//!   the evaluator's label is `M = (K ⊕ d·Δ) ⊕ x·Δ` itself. Nothing else is
//!   sent, and `M` stays an information-theoretic MAC of `x` under `Δ`, the
//!   form the QuickSilver engine consumes.
//! - **After garbling** (tables made in preprocessing, input known online;
//!   [`corrections`] / [`labels_from_corrections`]): the wire already has a
//!   random 0-label `X`; the garbler sends `c = X ⊕ K ⊕ d·Δ` (16 bytes per
//!   bit) and the evaluator takes `M ⊕ c = X ⊕ x·Δ`. Since `X` is uniform
//!   and independent of everything else, `c` reveals only the label of `x`;
//!   the MAC of `x` is still `M`, with the public offset `c`.
//!
//! # What it rests on
//! - the COT's security (the existing SoftSpokenOT extension from base OT,
//!   and Ferret on top, both maliciously secure for the receiver's bits and
//!   the sender's `Δ` up to the leakage their analyses allow): the garbler
//!   learns nothing about `r`, hence nothing about `x` from `d`; the
//!   evaluator learns nothing about `Δ`, hence only one label per wire;
//! - the garbling hash being circular correlation robust, since the labels
//!   and the COT outputs share `Δ` (see [`crate::hash`]).
//!
//! Each COT must serve one input bit once: the same COTs must not also
//! feed the ZK engine or another transfer.
//!
//! A malicious garbler can still apply the wrong correction or 0-label,
//! which flips or spoils the evaluator's input wire (a spoiled wire gives
//! wrong outputs whatever `x` is). Catching that is the job of the
//! consistency proof that follows the garbling ([`crate::consistency`]: the
//! prover's audit derives every 0-label once `Δ` is revealed), not of this
//! module.

use crate::error::{Error, Result};
use webproof_core::Block;
use webproof_ot::derand;

/// Evaluator: the packed flips `d_i = lsb(M_i) ⊕ x_i` (bit `i % 8` of byte
/// `i / 8`) for COT outputs `macs` and input bits `bits`.
pub fn flips(macs: &[Block], bits: &[bool]) -> Result<Vec<u8>> {
    derand::flips(macs, bits).map_err(|e| Error::Transfer(e.to_string()))
}

/// Garbler, before garbling: the 0-labels `K_i ⊕ d_i·Δ` for the evaluator's
/// input wires, from its COT keys and the evaluator's flips.
pub fn zero_labels_from_cot(keys: &[Block], delta: Block, flips: &[u8]) -> Result<Vec<Block>> {
    let mut out = keys.to_vec();
    derand::apply_flips(&mut out, delta, flips).map_err(|e| Error::Transfer(e.to_string()))?;
    Ok(out)
}

/// Garbler, after garbling: corrections `c_i = X_i ⊕ K_i ⊕ d_i·Δ` (16 bytes
/// each) for wires already garbled with 0-labels `zero`.
pub fn corrections(zero: &[Block], keys: &[Block], delta: Block, flips: &[u8]) -> Result<Vec<u8>> {
    if zero.len() != keys.len() {
        return Err(Error::Length {
            group: 0,
            expected: zero.len(),
            got: keys.len(),
        });
    }
    let shifted = zero_labels_from_cot(keys, delta, flips)?;
    Ok(zero
        .iter()
        .zip(&shifted)
        .flat_map(|(&x, &k)| (x ^ k).to_bytes())
        .collect())
}

/// Evaluator: its labels `M_i ⊕ c_i` from its COT outputs and the
/// garbler's corrections.
pub fn labels_from_corrections(macs: &[Block], corrections: &[u8]) -> Result<Vec<Block>> {
    if corrections.len() != 16 * macs.len() {
        return Err(Error::Malformed("label corrections of the wrong length"));
    }
    Ok(macs
        .iter()
        .zip(corrections.chunks(16))
        .map(|(&m, c)| m ^ Block::from_bytes(c.try_into().expect("16 bytes")))
        .collect())
}

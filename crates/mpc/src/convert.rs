//! Share conversions over [`crate::ole`]: additive to multiplicative (A2M)
//! and multiplicative to additive (M2A), batched.
//!
//! This module owns the two conversions and their messages; the OLE batch
//! inside each one is [`crate::ole`]'s. Sans-I/O, one round trip each:
//! the prover (OLE receiver) sends flips, the verifier (OLE sender)
//! answers.
//!
//! # A2M
//! Shares `a_V + a_P = a`. The verifier picks a uniform nonzero `r` per
//! value; one OLE on (`r`, `a_P`) gives `e_V + e_P = r·a_P`; the verifier
//! also sends `t = r·a_V + e_V`. The prover's multiplicative share is
//! `m_P = t + e_P = r·a`, the verifier's `m_V = r^{-1}`; `m_V·m_P = a`.
//! Messages: prover → verifier the OLE flips; verifier → prover the OLE
//! response and one element per value.
//!
//! The prover learns `r·a`: uniform over the nonzero elements when
//! `a ≠ 0`, and `0` when `a = 0`. So A2M reveals to the prover whether the
//! shared value is zero and nothing else; callers that must not reveal
//! that must rule it out first (in `webproof_mpc_tls::keyx::ectf` a zero means a
//! degenerate point sum, which occurs with negligible probability for
//! honest parties). The verifier learns nothing (OLE flips only).
//!
//! # M2A
//! Multiplicative shares `m_V·m_P = c`: one OLE on (`m_V`, `m_P`) gives
//! additive shares of `c`. Nothing else is sent.
//!
//! # Shares of powers (the GHASH key)
//! Additive shares of `H` become shares of `H, H^2, …, H^k` with one round
//! trip online whatever `k`: the verifier fixes its multiplier `r` ahead,
//! so its multiplicative share `h_V = r^{-1}` and every power `h_V^i` are
//! known before the session, and the M2A batch of `k` OLEs on `(h_V^i,
//! ρ_i)` for random prover inputs `ρ_i` is answered in preprocessing
//! ([`crate::ole::OleReceiver::choose_random`]; 2 KiB verifier → prover
//! per power, with the garbled tables). Online, one A2M gives `h_P` with
//! `h_V·h_P = H`; the prover sends `d_i = h_P^i + ρ_i` (16 bytes per power)
//! and the verifier adds `d_i·h_V^i` to its share: additive shares of every
//! `H^i` (`webproof_mpc_tls::rec::gcm`).
//!
//! # Not caught here
//! A malicious verifier can send any `t` or use any `r` (the prover's share
//! is then wrong by an amount it chose), a malicious prover can input any
//! `a_P`; either way the shares stop matching the real value, and it is the
//! later consistency check that catches that (see `webproof_mpc_tls::keyx::ectf`).

use crate::error::{Error, Result};
use crate::ole::{OleField, OleReceiver, OleSender, PendingOle};
use rand_core::RngCore;
use webproof_core::Block;

/// Verifier side of A2M: answer the prover's flips. `keys` are
/// `ole::cots_needed::<F>(shares.len())` fresh COT keys. Returns the
/// verifier's multiplicative shares `r^{-1}` and the message.
pub fn a2m_respond<F: OleField, R: RngCore + ?Sized>(
    ole: &mut OleSender,
    keys: &[Block],
    shares: &[F],
    flips: &[u8],
    rng: &mut R,
) -> Result<(Vec<F>, Vec<u8>)> {
    let masks: Vec<F> = shares.iter().map(|_| nonzero(rng)).collect();
    let msg = a2m_respond_with(ole, keys, shares, &masks, flips)?;
    let inv = masks
        .iter()
        .map(|r| r.inverse().expect("nonzero by construction"))
        .collect();
    Ok((inv, msg))
}

/// A uniform nonzero element.
pub fn nonzero<F: OleField, R: RngCore + ?Sized>(rng: &mut R) -> F {
    loop {
        let r = F::random(rng);
        if r != F::zero() {
            break r;
        }
    }
}

/// [`a2m_respond`] with multipliers `r` the verifier chose before (nonzero;
/// its multiplicative shares are their inverses): for a caller that needs
/// those shares ahead, as the powers of the GHASH key do
/// (`webproof_mpc_tls::rec::gcm`).
pub fn a2m_respond_with<F: OleField>(
    ole: &mut OleSender,
    keys: &[Block],
    shares: &[F],
    masks: &[F],
    flips: &[u8],
) -> Result<Vec<u8>> {
    if masks.len() != shares.len() || masks.iter().any(|r| *r == F::zero()) {
        return Err(Error::Malformed("A2M multipliers: one nonzero per share"));
    }
    let (e, mut msg) = ole.respond(keys, masks, flips)?;
    for ((r, a), e) in masks.iter().zip(shares).zip(&e) {
        (*r * *a + *e).encode(&mut msg);
    }
    Ok(msg)
}

/// Prover side of A2M, waiting for the verifier's message.
#[derive(Debug)]
pub struct PendingA2m<F: OleField> {
    ole: PendingOle<F>,
}

/// Prover side of A2M: start with its additive shares; returns the pending
/// state and the flips to send.
pub fn a2m_choose<F: OleField>(
    ole: &mut OleReceiver,
    macs: &[Block],
    shares: &[F],
) -> Result<(PendingA2m<F>, Vec<u8>)> {
    let (ole, flips) = ole.choose(macs, shares)?;
    Ok((PendingA2m { ole }, flips))
}

impl<F: OleField> PendingA2m<F> {
    /// Bytes the verifier's message must have.
    pub fn expected_len(&self) -> usize {
        self.ole.expected_len() + self.ole.len() * F::BYTES
    }

    /// The prover's multiplicative shares `r·a` (zero exactly when the
    /// shared value is zero).
    pub fn finish(self, msg: &[u8]) -> Result<Vec<F>> {
        if msg.len() != self.expected_len() {
            return Err(Error::Malformed("A2M message of the wrong length"));
        }
        let split = self.ole.expected_len();
        let e = self.ole.finish(&msg[..split])?;
        e.iter()
            .zip(msg[split..].chunks(F::BYTES))
            .map(|(e, t)| {
                F::decode(t)
                    .map(|t| t + *e)
                    .ok_or(Error::Malformed("A2M element not canonical"))
            })
            .collect()
    }
}

/// Verifier side of M2A: its additive shares of `m_V·m_P` and the message.
pub fn m2a_respond<F: OleField>(
    ole: &mut OleSender,
    keys: &[Block],
    shares: &[F],
    flips: &[u8],
) -> Result<(Vec<F>, Vec<u8>)> {
    ole.respond(keys, shares, flips)
}

/// Prover side of M2A: start with its multiplicative shares; finish the
/// returned batch with the verifier's message for its additive shares.
pub fn m2a_choose<F: OleField>(
    ole: &mut OleReceiver,
    macs: &[Block],
    shares: &[F],
) -> Result<(PendingOle<F>, Vec<u8>)> {
    ole.choose(macs, shares)
}

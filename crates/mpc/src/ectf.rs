//! EC to field (ECtF): additive shares of the x-coordinate of the sum of
//! two points, one held by each party, without revealing either point.
//!
//! This module owns the two-round-trip protocol on affine coordinates over
//! a prime field; [`crate::keyshare`] turns TLS key shares on P-256 and
//! X25519 into the points it takes, and the premaster secret back into
//! bytes. Sans-I/O like the rest of the crate: the caller moves four
//! messages and hands over fresh COTs ([`cots_needed`] per ECtF).
//!
//! # The formula
//! For points `(x_V, y_V)` (verifier) and `(x_P, y_P)` (prover) with
//! `x_V ≠ x_P`, on a curve whose chord addition reads
//! `x_3 = λ^2 − A − x_V − x_P`, `λ = (y_P − y_V)/(x_P − x_V)`:
//! - short Weierstrass `y^2 = x^3 + a·x + b` (P-256): `A = 0`;
//! - Montgomery `v^2 = u^3 + A·u^2 + u` (Curve25519, `A = 486662`,
//!   `B = 1`): `u_3 = λ^2 − A − u_V − u_P` with the same `λ` on `(u, v)`.
//!   The points come from Edwards points by the birational map of RFC 7748
//!   §4.1, `u = (1+y)/(1−y)`, `v = sqrt(−486664)·u/x` (a group
//!   isomorphism, so the sum of the images is the image of the sum), see
//!   [`crate::keyshare`].
//!
//! # Protocol (verifier = OLE sender, prover = OLE receiver)
//! Additive shares of `Δx = x_P − x_V` and `Δy = y_P − y_V` are local
//! (`x_P`, `−x_V` and so on).
//! 1. P → V: flips of an [`A2M`](crate::convert) batch on `(Δx, Δy)`
//!    (2 OLEs).
//! 2. V → P: the A2M answer. V holds `r^{-1}, s^{-1}`, P holds `r·Δx`,
//!    `s·Δy`. P computes `α = s·Δy / (r·Δx)` (refusing `r·Δx = 0`), V
//!    computes `β = r/s`; `λ = α·β`.
//! 3. P → V: flips of an M2A (one OLE) on `(β^2, α^2)`.
//! 4. V → P: the OLE answer: shares `q_V + q_P = λ^2`.
//!
//! Outputs: `q_P − x_P` (prover) and `q_V − x_V − A` (verifier). Two round
//! trips, three OLEs: `3·256` COTs; P-256 moves 96 bytes P → V and
//! 24,640 bytes V → P.
//!
//! # Security and what the later check must cover
//! Semi-honest: V sees only OLE flips; P sees `r·Δx` and `s·Δy`, uniform
//! and independent for `Δx, Δy ≠ 0` (and `Δy = 0` has negligible
//! probability for honest random shares), and OLE outputs. `Δx = 0` means
//! `P_V = ±P_P` (negligible for honest parties); the prover refuses it.
//!
//! Not caught by this layer, each making the shares add up to something
//! other than the premaster secret:
//! - a party using another point than `s_i·S` for its own share `s_i` of
//!   the key it announced ([`crate::keyshare`]);
//! - a verifier answering with wrong OLE corrections or a wrong A2M
//!   element, or using different `r`, `s`, `β^2` than the protocol says;
//! - a prover feeding inconsistent inputs (for instance another `α^2`).
//!
//! None of these gives a party the premaster secret or the other's point,
//! but a wrong premaster is not itself detected here, and an answer that is
//! wrong *depending on the other party's secret bits* (a wrong correction
//! for one OLE bit changes the prover's share only if that bit is 1) turns
//! the session's success or failure into a leak of that bit (selective
//! failure; one bit per aborted session, since the premaster itself is
//! never revealed to either party). Two things close this. First, the TLS
//! transcript: the premaster feeds the master secret, so a wrong one
//! makes the client Finished wrong (the server aborts) and the server's
//! Finished fail to verify in 2PC; the session ends with nothing attested.
//! Second, the consistency check that follows the session, once the
//! prover has committed to the transcript and the verifier's secrets may
//! be revealed (garble-then-prove). The plan this module is shaped for:
//! the OLE COTs come from their own COT instance (not the garbling's `Δ`),
//! so the verifier can then reveal that `Δ`, its point `P_V`, its masks
//! `r`, `s` and its randomness; the prover recomputes every message it
//! received (each OLE correction from its MACs and `Δ`, the A2M elements,
//! `β^2`) and refuses to go on if any differs, and checks `P_V = s_V·S`
//! against the opened key share. The prover's own inputs (`x_P`, `y_P`,
//! `α^2` and its flips) are bound by proving the ECtF arithmetic of its
//! side with QuickSilver, or simply by the Finished check above, since a
//! wrong prover input only makes the session fail.

use crate::convert::{self, PendingA2m};
use crate::error::{Error, Result};
use crate::ole::{self, OleField, OleReceiver, OleSender, PendingOle};
use rand_core::RngCore;
use webproof_core::Block;

/// Round trips of one ECtF.
pub const ROUND_TRIPS: usize = 2;

/// COTs one ECtF consumes: 2 for the first round's OLEs, 1 for the second.
pub fn cots_needed<F: OleField>() -> usize {
    3 * F::BITS
}

/// COTs of the first round (the rest go to the second).
pub fn first_round_cots<F: OleField>() -> usize {
    2 * F::BITS
}

/// The verifier's side before the first message.
#[derive(Debug, Clone)]
pub struct VerifierEctf<F: OleField> {
    x: F,
    y: F,
    a: F,
}

/// The verifier's side between the two rounds.
#[derive(Debug, Clone)]
pub struct VerifierEctfRound2<F: OleField> {
    x: F,
    a: F,
    beta: F,
}

impl<F: OleField> VerifierEctf<F> {
    /// The verifier's point `(x, y)` on a curve with chord constant `a`
    /// (`0` for short Weierstrass, Montgomery `A` for Curve25519).
    pub fn new(x: F, y: F, a: F) -> Self {
        VerifierEctf { x, y, a }
    }

    /// Answer the prover's first flips with `first_round_cots` COT keys.
    pub fn respond<R: RngCore + ?Sized>(
        self,
        ole: &mut OleSender,
        keys: &[Block],
        flips: &[u8],
        rng: &mut R,
    ) -> Result<(VerifierEctfRound2<F>, Vec<u8>)> {
        let (m, msg) = convert::a2m_respond(ole, keys, &[-self.x, -self.y], flips, rng)?;
        // m = (r^{-1}, s^{-1}); β = r/s = m[1]/m[0].
        let beta = m[1] * m[0].inverse().expect("A2M masks are nonzero");
        Ok((
            VerifierEctfRound2 {
                x: self.x,
                a: self.a,
                beta,
            },
            msg,
        ))
    }
}

impl<F: OleField> VerifierEctfRound2<F> {
    /// Answer the prover's second flips with `F::BITS` COT keys: the
    /// verifier's share of the sum's x-coordinate and the last message.
    pub fn respond(
        self,
        ole: &mut OleSender,
        keys: &[Block],
        flips: &[u8],
    ) -> Result<(F, Vec<u8>)> {
        let b2 = self.beta * self.beta;
        let (q, msg) = convert::m2a_respond(ole, keys, &[b2], flips)?;
        Ok((q[0] - self.x - self.a, msg))
    }
}

/// The prover's side waiting for the first answer.
#[derive(Debug)]
pub struct ProverEctf<F: OleField> {
    x: F,
    a2m: PendingA2m<F>,
}

/// The prover's side waiting for the last answer.
#[derive(Debug)]
pub struct ProverEctfRound2<F: OleField> {
    x: F,
    m2a: PendingOle<F>,
}

impl<F: OleField> ProverEctf<F> {
    /// Start with the prover's point and `first_round_cots` COT MACs;
    /// returns the state and the first flips.
    pub fn start(ole: &mut OleReceiver, macs: &[Block], x: F, y: F) -> Result<(Self, Vec<u8>)> {
        let (a2m, flips) = convert::a2m_choose(ole, macs, &[x, y])?;
        Ok((ProverEctf { x, a2m }, flips))
    }

    /// Bytes of the verifier's first answer.
    pub fn expected_len(&self) -> usize {
        self.a2m.expected_len()
    }

    /// Take the verifier's first answer and `F::BITS` more COT MACs;
    /// returns the state and the second flips.
    pub fn step(
        self,
        ole: &mut OleReceiver,
        macs: &[Block],
        msg: &[u8],
    ) -> Result<(ProverEctfRound2<F>, Vec<u8>)> {
        let m = self.a2m.finish(msg)?;
        let inv = m[0].inverse().ok_or(Error::Malformed(
            "ECtF: the points have equal x-coordinates (P1 = ±P2) or the answer is forged",
        ))?;
        let alpha = m[1] * inv;
        let (m2a, flips) = convert::m2a_choose(ole, macs, &[alpha * alpha])?;
        Ok((ProverEctfRound2 { x: self.x, m2a }, flips))
    }
}

impl<F: OleField> ProverEctfRound2<F> {
    /// Bytes of the verifier's last answer.
    pub fn expected_len(&self) -> usize {
        self.m2a.expected_len()
    }

    /// The prover's share of the sum's x-coordinate.
    pub fn finish(self, msg: &[u8]) -> Result<F> {
        let q = self.m2a.finish(msg)?;
        Ok(q[0] - self.x)
    }
}

/// Bytes each way of one ECtF: `(prover → verifier, verifier → prover)`.
pub fn traffic<F: OleField>() -> (usize, usize) {
    (
        ole::flips_len::<F>(2) + ole::flips_len::<F>(1),
        ole::response_len::<F>(2) + 2 * F::BYTES + ole::response_len::<F>(1),
    )
}

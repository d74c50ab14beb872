//! EC to field (ECtF): additive shares of the x-coordinate of the sum of
//! two points, one held by each party, without revealing either point.
//!
//! This module owns the one-round-trip protocol on affine coordinates over
//! a prime field; [`crate::keyx::keyshare`] turns TLS key shares on P-256 and
//! X25519 into the points it takes, and the premaster secret back into
//! bytes. Sans-I/O like the rest of the crate: the caller moves three
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
//!   [`crate::keyx::keyshare`].
//!
//! # Protocol (verifier = OLE sender, prover = OLE receiver)
//! Additive shares of `Δx = x_P − x_V` and `Δy = y_P − y_V` are local
//! (`x_P`, `−x_V` and so on). The verifier picks nonzero `r`, `s` and sets
//! `β = r/s`; the prover picks a uniform `c`.
//! 1. P → V: flips of one batch of three OLEs: the prover's inputs
//!    `(x_P, y_P, c)` against the verifier's `(r, s, β^2)`.
//! 2. V → P: the OLE answer and the two A2M elements `r·(−x_V) + e_1`,
//!    `s·(−y_V) + e_2`. P now holds `r·Δx`, `s·Δy` and computes
//!    `α = s·Δy / (r·Δx)` (refusing `r·Δx = 0`), so `λ = α·β`; the third
//!    OLE left it `u_P` and the verifier `u_V` with `u_P + u_V = β^2·c`.
//! 3. P → V: the correction `d = α^2 − c` (one element, one-time padded
//!    by `c`), sent with the prover's next message: no answer follows.
//!    V sets `q_V = u_V + β^2·d`, P keeps `q_P = u_P`, so
//!    `q_V + q_P = β^2·α^2 = λ^2`.
//!
//! Outputs: `q_P − x_P` (prover) and `q_V − x_V − A` (verifier). One
//! round trip and a message that rides with the next one, three OLEs:
//! `3·256` COTs; P-256 moves 128 bytes P → V and 24,640 bytes V → P.
//! (Before protocol version 21 the `β^2·α^2` product was a second OLE
//! round trip after the first answer; the padded correction replaces it
//! because the verifier's `β` is its own choice, known before the flips.)
//!
//! # Security and what the later check must cover
//! Semi-honest: V sees OLE flips and `d`, which `c` pads perfectly (`c`
//! is uniform in the field and used once); P sees `r·Δx` and `s·Δy`,
//! uniform and independent for `Δx, Δy ≠ 0` (and `Δy = 0` has negligible
//! probability for honest random shares), and OLE outputs. `Δx = 0` means
//! `P_V = ±P_P` (negligible for honest parties); the prover refuses it.
//!
//! Not caught by this layer, each making the shares add up to something
//! other than the premaster secret:
//! - a party using another point than `s_i·S` for its own share `s_i` of
//!   the key it announced ([`crate::keyx::keyshare`]);
//! - a verifier answering with wrong OLE corrections or a wrong A2M
//!   element, or using another `β^2` than `(r/s)^2` for its `r`, `s`
//!   ([`check_verifier_inputs`] catches that one once they are revealed);
//! - a prover sending another `d` or flips for other inputs; this is what
//!   it could always do (choose its own `α^2`), and it only makes the
//!   session fail.
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
//! so the verifier can then reveal that `Δ` and its OLE inputs
//! `(r, s, β^2)`; the prover recomputes every OLE correction it received
//! from its MACs and `Δ` and checks `β^2 = (r/s)^2`
//! ([`check_verifier_inputs`]), and refuses to go on if any differs. The
//! prover's own inputs (`x_P`, `y_P`, `c`, `d`) are bound by the Finished
//! check above, since a wrong prover input only makes the session fail.

use rand_core::RngCore;
use webproof_core::Block;
use webproof_mpc::convert;
use webproof_mpc::error::{Error, Result};
use webproof_mpc::ole::{self, OleField, OleReceiver, OleSender, PendingOle};

/// Round trips of one ECtF: its last message rides with the prover's next.
pub const ROUND_TRIPS: usize = 1;

/// OLEs of one ECtF: the A2M of `(Δx, Δy)` and the product `β^2·c`.
const OLES: usize = 3;

/// COTs one ECtF consumes, all in its one round.
pub fn cots_needed<F: OleField>() -> usize {
    OLES * F::BITS
}

/// Bytes of the prover's correction `d` (its last message).
pub fn correction_len<F: OleField>() -> usize {
    F::BYTES
}

/// The verifier's side before the prover's flips.
#[derive(Debug, Clone)]
pub struct VerifierEctf<F: OleField> {
    x: F,
    y: F,
    a: F,
}

/// The verifier's side waiting for the prover's correction.
#[derive(Debug, Clone)]
pub struct VerifierEctfPending<F: OleField> {
    x: F,
    a: F,
    beta2: F,
    /// `u_V`: its share of `β^2·c`.
    u: F,
}

impl<F: OleField> VerifierEctf<F> {
    /// The verifier's point `(x, y)` on a curve with chord constant `a`
    /// (`0` for short Weierstrass, Montgomery `A` for Curve25519).
    pub fn new(x: F, y: F, a: F) -> Self {
        VerifierEctf { x, y, a }
    }

    /// Answer the prover's flips with [`cots_needed`] COT keys.
    pub fn respond<R: RngCore + ?Sized>(
        self,
        ole: &mut OleSender,
        keys: &[Block],
        flips: &[u8],
        rng: &mut R,
    ) -> Result<(VerifierEctfPending<F>, Vec<u8>)> {
        let (r, s) = (convert::nonzero::<F, _>(rng), convert::nonzero::<F, _>(rng));
        let beta = r * s.inverse().expect("nonzero by construction");
        let beta2 = beta * beta;
        let (e, mut msg) = ole.respond(keys, &[r, s, beta2], flips)?;
        // The A2M elements: the prover adds its OLE shares to get r·Δx, s·Δy.
        (r * -self.x + e[0]).encode(&mut msg);
        (s * -self.y + e[1]).encode(&mut msg);
        Ok((
            VerifierEctfPending {
                x: self.x,
                a: self.a,
                beta2,
                u: e[2],
            },
            msg,
        ))
    }
}

impl<F: OleField> VerifierEctfPending<F> {
    /// Take the prover's correction: the verifier's share of the sum's
    /// x-coordinate. Any length but [`correction_len`] or a non-canonical
    /// element is refused.
    pub fn finish(self, correction: &[u8]) -> Result<F> {
        if correction.len() != correction_len::<F>() {
            return Err(Error::Malformed("ECtF correction of the wrong length"));
        }
        let d = F::decode(correction).ok_or(Error::Malformed("ECtF correction not canonical"))?;
        Ok(self.u + self.beta2 * d - self.x - self.a)
    }
}

/// The verifier's OLE inputs of one ECtF as revealed after the session,
/// `(r, s, β^2)`: refused unless `r`, `s` are nonzero and `β^2 = (r/s)^2`,
/// which is what the protocol makes them.
pub fn check_verifier_inputs<F: OleField>(inputs: &[F]) -> Result<()> {
    let [r, s, beta2] = inputs else {
        return Err(Error::Malformed("ECtF: not three verifier OLE inputs"));
    };
    let beta = s.inverse().map(|i| *r * i);
    match beta {
        Some(b) if *r != F::zero() && b * b == *beta2 => Ok(()),
        _ => Err(Error::Malformed(
            "ECtF: the verifier's OLE inputs are not (r, s, (r/s)^2)",
        )),
    }
}

/// The prover's side waiting for the verifier's answer.
#[derive(Debug)]
pub struct ProverEctf<F: OleField> {
    x: F,
    c: F,
    ole: PendingOle<F>,
}

impl<F: OleField> ProverEctf<F> {
    /// Start with the prover's point and [`cots_needed`] COT MACs;
    /// returns the state and the flips.
    pub fn start<R: RngCore + ?Sized>(
        ole: &mut OleReceiver,
        macs: &[Block],
        x: F,
        y: F,
        rng: &mut R,
    ) -> Result<(Self, Vec<u8>)> {
        let c = F::random(rng);
        let (pending, flips) = ole.choose(macs, &[x, y, c])?;
        Ok((ProverEctf { x, c, ole: pending }, flips))
    }

    /// Bytes of the verifier's answer.
    pub fn expected_len(&self) -> usize {
        self.ole.expected_len() + 2 * F::BYTES
    }

    /// Take the verifier's answer: the prover's share of the sum's
    /// x-coordinate and its correction, the last message.
    pub fn finish(self, msg: &[u8]) -> Result<(F, Vec<u8>)> {
        if msg.len() != self.expected_len() {
            return Err(Error::Malformed("ECtF answer of the wrong length"));
        }
        let split = self.ole.expected_len();
        let e = self.ole.finish(&msg[..split])?;
        let mut t = msg[split..].chunks(F::BYTES).zip(&e).map(|(b, e)| {
            F::decode(b)
                .map(|t| t + *e)
                .ok_or(Error::Malformed("A2M element not canonical"))
        });
        let (rdx, sdy) = (
            t.next().expect("two elements")?,
            t.next().expect("two elements")?,
        );
        let inv = rdx.inverse().ok_or(Error::Malformed(
            "ECtF: the points have equal x-coordinates (P1 = ±P2) or the answer is forged",
        ))?;
        let alpha = sdy * inv;
        let mut d = Vec::with_capacity(F::BYTES);
        (alpha * alpha - self.c).encode(&mut d);
        Ok((e[2] - self.x, d))
    }
}

/// Bytes each way of one ECtF: `(prover → verifier, verifier → prover)`.
pub fn traffic<F: OleField>() -> (usize, usize) {
    (
        ole::flips_len::<F>(OLES) + correction_len::<F>(),
        ole::response_len::<F>(OLES) + 2 * F::BYTES,
    )
}

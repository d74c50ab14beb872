//! The client's ECDHE key shared between prover and verifier, for P-256 and
//! X25519: key-share setup, each party's point on the server's key (the
//! input of [`crate::keyx::ectf`]), and the premaster secret's encoding.
//!
//! This module owns the curve arithmetic of the 2PC key exchange (on
//! RustCrypto `p256` and `curve25519-dalek`, constant time on secret
//! scalars) and the setup messages; it does no I/O.
//!
//! # Setup (one round trip and a half, before the ClientHello)
//! Each party draws a scalar share `s_i` and computes `Q_i = s_i·G`.
//! 1. P → V: a commitment `SHA-256(tag ‖ blind ‖ Q_P)` ([`commit`]);
//! 2. V → P: `Q_V` ([`P256Share::public`], [`X25519Share::public`]);
//! 3. P computes the client key share `Q_P + Q_V` ([`p256_client_share`],
//!    [`x25519_client_share`]) for its ClientHello / ClientKeyExchange, and
//!    later opens the commitment (`Q_P`, blind; it can ride with the first
//!    ECtF flips); V checks it ([`check_opening`]) and that `Q_P + Q_V` is
//!    the key share in the transcript (the client-share functions are
//!    symmetric: V calls them with its own share and the opened `Q_P`).
//!
//! The order matters: without the commitment the prover could pick
//! `Q_P = K − Q_V` for a key `K` it knows the secret of (and hold the whole
//! premaster); with the verifier speaking second it could do the same. The
//! commitment binds the prover before it sees `Q_V`, and `Q_V` is fixed
//! before the verifier sees `Q_P`, so the client secret `s_P + s_V` is
//! uniform unless both cheat.
//!
//! After the server's key `S` is known, each party computes `P_i = s_i·S`
//! ([`P256Share::point_on`], [`X25519Share::point_on`]); the ECtF gives
//! shares of the x (u) coordinate of `P_P + P_V = (s_P + s_V)·S`, the
//! premaster secret ([`p256_premaster`], [`x25519_premaster`]).
//!
//! # X25519 in Edwards form
//! An X25519 public value is a Montgomery u-coordinate, which fixes a point
//! only up to sign, so two u's cannot be added. Here the scalar shares act
//! on Edwards points: the verifier sends `Q_V` compressed in Edwards form,
//! the server's u is lifted to the Edwards point with sign 0
//! (`MontgomeryPoint::to_edwards(0)`, either lift gives the same u at the
//! end) and both points are multiplied by the cofactor 8 first, so the
//! share sum `t = t_P + t_V` (mod ℓ) acts like the clamped X25519 scalar
//! `k` with `t = k/8 mod ℓ` ([`x25519_scalar_of`]): `u(t·[8]S) = X25519(k,
//! S)`, torsion components of a malicious server's key included. A point
//! becomes ECtF input as Montgomery `(u, v)` with
//! `u = (1+y)/(1−y)`, `v = c·u/x` for a fixed `c` with `c^2 = −486664`.
//!
//! # Not caught here
//! Nothing checks that a party's `P_i` uses the same `s_i` as its `Q_i`;
//! a party that does not gets a wrong premaster, which the TLS Finished
//! messages expose (see [`crate::keyx::ectf`]).

use crypto_bigint::U256;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::montgomery::MontgomeryPoint;
use curve25519_dalek::scalar::Scalar as EdScalar;
use curve25519_dalek::traits::IsIdentity;
use p256::elliptic_curve::group::Group as _;
use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use p256::elliptic_curve::{Field, PrimeField};
use p256::{AffinePoint, EncodedPoint, ProjectivePoint, Scalar as P256Scalar};
use rand_core::RngCore;
use sha2::{Digest, Sha256};
use webproof_mpc::error::{Error, Result};
use webproof_mpc::field::{Curve25519Base, P256Base};

/// Domain tag of the key-share commitment.
const COMMIT_TAG: &[u8] = b"webproof-mpc keyshare commitment v1";

/// Commit to a public key share: `(commitment, blind)`; send the
/// commitment now, `(public, blind)` later.
pub fn commit<R: RngCore + ?Sized>(public: &[u8], rng: &mut R) -> ([u8; 32], [u8; 32]) {
    let mut blind = [0u8; 32];
    rng.fill_bytes(&mut blind);
    (commitment(public, &blind), blind)
}

fn commitment(public: &[u8], blind: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(COMMIT_TAG);
    h.update(blind);
    h.update((public.len() as u32).to_be_bytes());
    h.update(public);
    h.finalize().into()
}

/// Verifier: check the prover's opening against its commitment.
pub fn check_opening(commitment_bytes: &[u8], public: &[u8], blind: &[u8]) -> Result<()> {
    let blind: &[u8; 32] = blind
        .try_into()
        .map_err(|_| Error::Malformed("key-share opening: blind of the wrong length"))?;
    if commitment_bytes.len() != 32 || commitment(public, blind)[..] != *commitment_bytes {
        return Err(Error::Malformed(
            "key-share opening does not match the commitment",
        ));
    }
    Ok(())
}

fn p256_affine(bytes: &[u8]) -> Result<AffinePoint> {
    let ep =
        EncodedPoint::from_bytes(bytes).map_err(|_| Error::Malformed("P-256 point encoding"))?;
    let p: Option<AffinePoint> = AffinePoint::from_encoded_point(&ep).into();
    let p = p.ok_or(Error::Malformed("P-256 point not on the curve"))?;
    if bool::from(ProjectivePoint::from(p).is_identity()) {
        return Err(Error::Malformed("P-256 point at infinity"));
    }
    Ok(p)
}

fn p256_xy(p: ProjectivePoint) -> Result<(P256Base, P256Base)> {
    let ep = p.to_affine().to_encoded_point(false);
    match (ep.x(), ep.y()) {
        // Coordinates are reduced already; no branch on secret values.
        (Some(x), Some(y)) => Ok((
            P256Base::from_uint_reduced(&U256::from_be_slice(x)),
            P256Base::from_uint_reduced(&U256::from_be_slice(y)),
        )),
        _ => Err(Error::Malformed("P-256: the point is at infinity")),
    }
}

/// One party's share of the client's P-256 ECDHE secret.
#[derive(Clone)]
pub struct P256Share {
    s: P256Scalar,
}

impl core::fmt::Debug for P256Share {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("P256Share(..)")
    }
}

impl P256Share {
    /// A uniform nonzero share.
    pub fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        loop {
            let s = P256Scalar::random(&mut *rng);
            if !bool::from(s.is_zero()) {
                return P256Share { s };
            }
        }
    }

    /// A share from a big-endian scalar `< n`, nonzero (tests, fixed keys).
    pub fn from_be_bytes(bytes: &[u8; 32]) -> Result<Self> {
        let s: Option<P256Scalar> = P256Scalar::from_repr((*bytes).into()).into();
        match s {
            Some(s) if !bool::from(s.is_zero()) => Ok(P256Share { s }),
            _ => Err(Error::Malformed("P-256 scalar out of range")),
        }
    }

    /// The share's scalar, big-endian.
    pub fn to_be_bytes(&self) -> [u8; 32] {
        self.s.to_repr().into()
    }

    /// `s·G`, uncompressed SEC1 (65 bytes).
    pub fn public(&self) -> Vec<u8> {
        (ProjectivePoint::GENERATOR * self.s)
            .to_affine()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    /// `s·S` for the server's key share `S` (SEC1), as ECtF input.
    pub fn point_on(&self, server: &[u8]) -> Result<(P256Base, P256Base)> {
        let s = p256_affine(server)?;
        p256_xy(ProjectivePoint::from(s) * self.s)
    }
}

/// Prover: the client's key share `Q_P + Q_V` (uncompressed SEC1) from its
/// own share and the verifier's public share.
pub fn p256_client_share(own: &P256Share, verifier_public: &[u8]) -> Result<Vec<u8>> {
    let qv = p256_affine(verifier_public)?;
    let q = ProjectivePoint::GENERATOR * own.s + ProjectivePoint::from(qv);
    if bool::from(q.is_identity()) {
        return Err(Error::Malformed("P-256: the key shares cancel"));
    }
    Ok(q.to_affine().to_encoded_point(false).as_bytes().to_vec())
}

/// The P-256 premaster secret (the x-coordinate, 32 bytes big-endian) from
/// the two ECtF shares.
pub fn p256_premaster(a: P256Base, b: P256Base) -> [u8; 32] {
    (a + b).to_be_bytes()
}

/// Montgomery `A` of Curve25519, the chord constant of its ECtF.
pub fn curve25519_a() -> Curve25519Base {
    Curve25519Base::from_u64(486_662)
}

/// The chord constant of P-256's ECtF (short Weierstrass: none).
pub fn p256_a() -> P256Base {
    P256Base::ZERO
}

/// One party's share `t` of the client's X25519 secret, acting on points
/// multiplied by the cofactor.
#[derive(Clone)]
pub struct X25519Share {
    t: EdScalar,
}

impl core::fmt::Debug for X25519Share {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("X25519Share(..)")
    }
}

/// The share sum `t` that acts as the X25519 private key `k`:
/// `clamp(k)/8 mod ℓ` (for tests and for splitting a fixed key).
pub fn x25519_scalar_of(k: &[u8; 32]) -> EdScalar {
    let clamped = curve25519_dalek::scalar::clamp_integer(*k);
    EdScalar::from_bytes_mod_order(clamped) * EdScalar::from(8u8).invert()
}

fn ed_from_montgomery(u: &[u8; 32]) -> Result<EdwardsPoint> {
    let e = MontgomeryPoint(*u)
        .to_edwards(0)
        .ok_or(Error::Malformed(
            "X25519 key not on the curve (twist point)",
        ))?
        .mul_by_cofactor();
    if e.is_identity() {
        return Err(Error::Malformed("X25519 key of small order"));
    }
    Ok(e)
}

/// Montgomery `(u, v)` of an Edwards point that is not the identity and
/// not of order 2 (`x ≠ 0`).
fn montgomery_uv(p: &EdwardsPoint) -> Result<(Curve25519Base, Curve25519Base)> {
    if p.is_identity() {
        return Err(Error::Malformed("X25519: the point is the identity"));
    }
    let u = Curve25519Base::from_uint_reduced(&U256::from_le_slice(&p.to_montgomery().0));
    let sign = p.compress().0[31] >> 7 == 1;
    let a = curve25519_a();
    let rhs = (u.square() + a * u + Curve25519Base::ONE) * u;
    let v = rhs
        .sqrt()
        .ok_or(Error::Malformed("X25519: u not on the curve"))?;
    let vinv = v
        .invert()
        .ok_or(Error::Malformed("X25519: point of order 2"))?;
    let x = edwards_c() * u * vinv;
    // v or -v by arithmetic, not by a branch on the secret sign.
    let flip = Curve25519Base::from_u64((x.is_odd() != sign) as u64);
    Ok((u, v - (v + v) * flip))
}

/// `c` with `c^2 = −486664` (the root `sqrt` returns; fixed for both parties).
fn edwards_c() -> Curve25519Base {
    (-Curve25519Base::from_u64(486_664))
        .sqrt()
        .expect("-486664 is a square mod 2^255-19")
}

impl X25519Share {
    /// A uniform nonzero share.
    pub fn random<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        loop {
            let mut b = [0u8; 64];
            rng.fill_bytes(&mut b);
            let t = EdScalar::from_bytes_mod_order_wide(&b);
            if t != EdScalar::ZERO {
                return X25519Share { t };
            }
        }
    }

    /// A share from a scalar (nonzero).
    pub fn from_scalar(t: EdScalar) -> Result<Self> {
        if t == EdScalar::ZERO {
            return Err(Error::Malformed("X25519 share is zero"));
        }
        Ok(X25519Share { t })
    }

    /// The share's scalar.
    pub fn scalar(&self) -> EdScalar {
        self.t
    }

    fn public_point(&self) -> EdwardsPoint {
        EdwardsPoint::mul_base(&(self.t * EdScalar::from(8u8)))
    }

    /// `t·[8]B`, compressed Edwards (32 bytes): what the verifier sends.
    pub fn public(&self) -> [u8; 32] {
        self.public_point().compress().0
    }

    /// `t·[8]S` for the server's X25519 key `S` (a u-coordinate), as
    /// Montgomery `(u, v)` for the ECtF.
    pub fn point_on(&self, server: &[u8; 32]) -> Result<(Curve25519Base, Curve25519Base)> {
        let s = ed_from_montgomery(server)?;
        montgomery_uv(&(s * self.t))
    }
}

/// Prover: the client's X25519 key share (a u-coordinate, 32 bytes) from
/// its own share and the verifier's public share (compressed Edwards).
pub fn x25519_client_share(own: &X25519Share, verifier_public: &[u8]) -> Result<[u8; 32]> {
    let bytes: [u8; 32] = verifier_public
        .try_into()
        .map_err(|_| Error::Malformed("X25519 public share of the wrong length"))?;
    let qv = CompressedEdwardsY(bytes)
        .decompress()
        .ok_or(Error::Malformed("X25519 public share not on the curve"))?;
    if qv.is_identity() || !qv.is_torsion_free() {
        return Err(Error::Malformed(
            "X25519 public share outside the prime-order subgroup",
        ));
    }
    let q = own.public_point() + qv;
    if q.is_identity() {
        return Err(Error::Malformed("X25519: the key shares cancel"));
    }
    Ok(q.to_montgomery().0)
}

/// The X25519 shared secret (u, 32 bytes little-endian) from the two ECtF
/// shares.
pub fn x25519_premaster(a: Curve25519Base, b: Curve25519Base) -> [u8; 32] {
    (a + b).to_le_bytes()
}

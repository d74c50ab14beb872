//! The client's ECDHE key exchange in 2PC for the session: each party's
//! key shares for both groups (the group is not known before the
//! ServerKeyExchange), and the ECtF to additive premaster shares, over
//! [`keyshare`] and [`ectf`].
//!
//! Owns the dispatch between P-256 and X25519 and nothing else: the
//! commitment order and the security argument are `keyshare`'s (the prover
//! commits to its public shares in its `Hello`, before it sees the
//! verifier's in `Setup`, and opens the one of the negotiated group in
//! `KeyOpen`; the verifier checks the opening and that the client key
//! share in the ClientKeyExchange is the sum).

pub mod ectf;
pub mod keyshare;

use crate::error::{Error, Result};
use crate::kdf::tls12::Curve;
use crate::keyx::ectf::{ProverEctf, VerifierEctf, VerifierEctfPending};
use crate::keyx::keyshare::{P256Share, X25519Share};
use rand_core::RngCore;
use webproof_core::Block;
use webproof_mpc::field::{Curve25519Base, P256Base};
use webproof_mpc::ole::{OleReceiver, OleSender};

/// OLE stream of the ECtF (records use `1 + id`).
pub(crate) const ECTF_STREAM: u64 = 0;

/// COTs of the ECtF for `curve` (all in its one round).
pub(crate) fn ectf_cots(curve: Curve) -> usize {
    match curve {
        Curve::P256 => ectf::cots_needed::<P256Base>(),
        Curve::X25519 => ectf::cots_needed::<Curve25519Base>(),
    }
}

/// One party's scalar shares for both groups.
pub(crate) struct Shares {
    pub p256: P256Share,
    pub x25519: X25519Share,
}

impl Shares {
    pub(crate) fn random(rng: &mut impl RngCore) -> Self {
        Shares {
            p256: P256Share::random(rng),
            x25519: X25519Share::random(rng),
        }
    }

    /// The public share of `curve`.
    pub(crate) fn public(&self, curve: Curve) -> Vec<u8> {
        match curve {
            Curve::P256 => self.p256.public(),
            Curve::X25519 => self.x25519.public().to_vec(),
        }
    }

    /// The client key share (the sum) from this party's share and the
    /// other's public share.
    pub(crate) fn client_share(&self, curve: Curve, other_public: &[u8]) -> Result<Vec<u8>> {
        Ok(match curve {
            Curve::P256 => keyshare::p256_client_share(&self.p256, other_public)?,
            Curve::X25519 => keyshare::x25519_client_share(&self.x25519, other_public)?.to_vec(),
        })
    }
}

fn x25519_key(server: &[u8]) -> Result<[u8; 32]> {
    server
        .try_into()
        .map_err(|_| Error::Unsupported("an X25519 server key that is not 32 bytes".into()))
}

/// The prover's ECtF waiting for the verifier's answer.
pub(crate) enum ProverKx {
    P256(ProverEctf<P256Base>),
    X25519(ProverEctf<Curve25519Base>),
}

impl ProverKx {
    /// The prover's point on the server's key and its flips.
    pub(crate) fn start<R: RngCore + ?Sized>(
        shares: &Shares,
        curve: Curve,
        server: &[u8],
        ole: &mut OleReceiver,
        macs: &[Block],
        rng: &mut R,
    ) -> Result<(Self, Vec<u8>)> {
        Ok(match curve {
            Curve::P256 => {
                let (x, y) = shares.p256.point_on(server)?;
                let (s, f) = ProverEctf::start(ole, macs, x, y, rng)?;
                (ProverKx::P256(s), f)
            }
            Curve::X25519 => {
                let (x, y) = shares.x25519.point_on(&x25519_key(server)?)?;
                let (s, f) = ProverEctf::start(ole, macs, x, y, rng)?;
                (ProverKx::X25519(s), f)
            }
        })
    }

    /// The prover's premaster share (little-endian) and its correction,
    /// the ECtF's last message.
    pub(crate) fn finish(self, msg: &[u8]) -> Result<([u8; 32], Vec<u8>)> {
        Ok(match self {
            ProverKx::P256(s) => {
                let (x, d) = s.finish(msg)?;
                (x.to_le_bytes(), d)
            }
            ProverKx::X25519(s) => {
                let (x, d) = s.finish(msg)?;
                (x.to_le_bytes(), d)
            }
        })
    }
}

/// The verifier's ECtF before the prover's flips.
pub(crate) enum VerifierKx {
    P256(VerifierEctf<P256Base>),
    X25519(VerifierEctf<Curve25519Base>),
}

/// The verifier's ECtF waiting for the prover's correction.
pub(crate) enum VerifierKx2 {
    P256(VerifierEctfPending<P256Base>),
    X25519(VerifierEctfPending<Curve25519Base>),
}

impl VerifierKx {
    /// The verifier's point on the server's key (from the
    /// ServerKeyExchange it parsed itself).
    pub(crate) fn new(shares: &Shares, curve: Curve, server: &[u8]) -> Result<Self> {
        Ok(match curve {
            Curve::P256 => {
                let (x, y) = shares.p256.point_on(server)?;
                VerifierKx::P256(VerifierEctf::new(x, y, keyshare::p256_a()))
            }
            Curve::X25519 => {
                let (x, y) = shares.x25519.point_on(&x25519_key(server)?)?;
                VerifierKx::X25519(VerifierEctf::new(x, y, keyshare::curve25519_a()))
            }
        })
    }

    pub(crate) fn respond<R: RngCore + ?Sized>(
        self,
        ole: &mut OleSender,
        keys: &[Block],
        flips: &[u8],
        rng: &mut R,
    ) -> Result<(VerifierKx2, Vec<u8>)> {
        Ok(match self {
            VerifierKx::P256(s) => {
                let (s, m) = s.respond(ole, keys, flips, rng)?;
                (VerifierKx2::P256(s), m)
            }
            VerifierKx::X25519(s) => {
                let (s, m) = s.respond(ole, keys, flips, rng)?;
                (VerifierKx2::X25519(s), m)
            }
        })
    }
}

impl VerifierKx2 {
    /// The verifier's premaster share (little-endian) from the prover's
    /// correction.
    pub(crate) fn finish(self, correction: &[u8]) -> Result<[u8; 32]> {
        Ok(match self {
            VerifierKx2::P256(s) => s.finish(correction)?.to_le_bytes(),
            VerifierKx2::X25519(s) => s.finish(correction)?.to_le_bytes(),
        })
    }
}

//! Verifier signing keys, public keys, key ids and attestation signatures.
//!
//! Two schemes:
//! - **secp256k1 ECDSA**, so an EVM contract can check an attestation: the
//!   signed digest is `Keccak-256(body)` where `body` is the attestation's
//!   canonical binary encoding (see [`crate::attestation`]); the signature is
//!   the 65-byte `r ‖ s ‖ v` form with `s` in the lower half of the group
//!   order and `v = 27 + recovery id`, which is what `ecrecover(keccak256(body),
//!   v, r, s)` takes. High-`s` signatures are rejected.
//! - **Ed25519** (RFC 8032) over the body bytes themselves, verified with
//!   the strict rules (canonical `S`, no small-order keys).
//!
//! Key id: `SHA-256("webproof/key-id/v1" ‖ scheme byte ‖ public key)` with
//! the public key as 33-byte compressed SEC1 (secp256k1) or 32 bytes
//! (Ed25519); scheme bytes are 1 (secp256k1) and 2 (Ed25519).
//!
//! Text forms: public keys `secp256k1:<hex>` / `ed25519:<hex>` (bare hex is
//! accepted: 33 or 65 bytes mean secp256k1, 32 bytes Ed25519); secret keys
//! `secp256k1-secret:<hex>` / `ed25519-secret:<hex>`, distinct so a secret is
//! never mistaken for a public key. Secrets are zeroized on drop and never
//! shown by `Debug`.

use std::fmt;
use std::str::FromStr;

use k256::ecdsa::{self, RecoveryId};
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use sha3::Keccak256;
use zeroize::Zeroizing;

use crate::error::{DecodeError, Error, Result, VerifyError};

/// Signature scheme of a verifier key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Secp256k1,
    Ed25519,
}

impl Scheme {
    pub const fn to_byte(self) -> u8 {
        match self {
            Scheme::Secp256k1 => 1,
            Scheme::Ed25519 => 2,
        }
    }

    pub const fn from_byte(b: u8) -> Option<Self> {
        match b {
            1 => Some(Scheme::Secp256k1),
            2 => Some(Scheme::Ed25519),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Scheme::Secp256k1 => "secp256k1",
            Scheme::Ed25519 => "ed25519",
        }
    }

    /// Length of this scheme's signatures in the encodings.
    pub const fn signature_len(self) -> usize {
        match self {
            Scheme::Secp256k1 => 65,
            Scheme::Ed25519 => 64,
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scheme {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "secp256k1" => Ok(Scheme::Secp256k1),
            "ed25519" => Ok(Scheme::Ed25519),
            _ => Err(Error::InvalidKey(
                "unknown scheme (expected secp256k1 or ed25519)",
            )),
        }
    }
}

/// Hash identifying a verifier public key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub [u8; 32]);

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyId({self})")
    }
}

/// A verifier's public key.
#[derive(Clone, PartialEq, Eq)]
pub enum VerifyingKey {
    Secp256k1(ecdsa::VerifyingKey),
    Ed25519(ed25519_dalek::VerifyingKey),
}

impl VerifyingKey {
    pub fn scheme(&self) -> Scheme {
        match self {
            VerifyingKey::Secp256k1(_) => Scheme::Secp256k1,
            VerifyingKey::Ed25519(_) => Scheme::Ed25519,
        }
    }

    /// The public key bytes hashed into the key id (compressed SEC1 for
    /// secp256k1).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            VerifyingKey::Secp256k1(k) => k.to_encoded_point(true).as_bytes().to_vec(),
            VerifyingKey::Ed25519(k) => k.to_bytes().to_vec(),
        }
    }

    pub fn from_bytes(scheme: Scheme, bytes: &[u8]) -> Result<Self> {
        match scheme {
            Scheme::Secp256k1 => ecdsa::VerifyingKey::from_sec1_bytes(bytes)
                .map(VerifyingKey::Secp256k1)
                .map_err(|_| Error::InvalidKey("not a secp256k1 public key")),
            Scheme::Ed25519 => {
                let arr: [u8; 32] = bytes
                    .try_into()
                    .map_err(|_| Error::InvalidKey("Ed25519 public keys are 32 bytes"))?;
                let k = ed25519_dalek::VerifyingKey::from_bytes(&arr)
                    .map_err(|_| Error::InvalidKey("not an Ed25519 public key"))?;
                if k.is_weak() {
                    return Err(Error::InvalidKey("small-order Ed25519 public key"));
                }
                Ok(VerifyingKey::Ed25519(k))
            }
        }
    }

    pub fn key_id(&self) -> KeyId {
        let mut h = Sha256::new();
        h.update(b"webproof/key-id/v1");
        h.update([self.scheme().to_byte()]);
        h.update(self.to_bytes());
        KeyId(h.finalize().into())
    }

    /// The EIP-55 checksummed Ethereum address of a secp256k1 key, which is
    /// what a contract compares `ecrecover`'s result with.
    pub fn ethereum_address(&self) -> Option<String> {
        let VerifyingKey::Secp256k1(k) = self else {
            return None;
        };
        let point = k.to_encoded_point(false);
        let hash = Keccak256::digest(&point.as_bytes()[1..]);
        let lower = hex::encode(&hash[12..]);
        let check = Keccak256::digest(lower.as_bytes());
        let mut out = String::from("0x");
        for (i, c) in lower.chars().enumerate() {
            let nibble = (check[i / 2] >> (4 * (1 - i % 2))) & 0xf;
            out.push(if nibble >= 8 {
                c.to_ascii_uppercase()
            } else {
                c
            });
        }
        Some(out)
    }

    /// Checks `sig` over the attestation body bytes.
    pub(crate) fn verify(&self, body: &[u8], sig: &Signature) -> Result<(), VerifyError> {
        match (self, sig) {
            (VerifyingKey::Secp256k1(key), Signature::Secp256k1(bytes)) => {
                let s = ecdsa::Signature::from_slice(&bytes[..64])
                    .map_err(|_| VerifyError::BadSignature)?;
                if s.normalize_s().is_some() {
                    return Err(VerifyError::BadSignature); // high s: malleable form
                }
                let recid = RecoveryId::from_byte(bytes[64].wrapping_sub(27))
                    .ok_or(VerifyError::BadSignature)?;
                let digest = Keccak256::digest(body);
                let recovered = ecdsa::VerifyingKey::recover_from_prehash(&digest, &s, recid)
                    .map_err(|_| VerifyError::BadSignature)?;
                if &recovered == key {
                    Ok(())
                } else {
                    Err(VerifyError::BadSignature)
                }
            }
            (VerifyingKey::Ed25519(key), Signature::Ed25519(bytes)) => key
                .verify_strict(body, &ed25519_dalek::Signature::from_bytes(bytes))
                .map_err(|_| VerifyError::BadSignature),
            _ => Err(VerifyError::SchemeMismatch),
        }
    }
}

impl fmt::Display for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.scheme(), hex::encode(self.to_bytes()))
    }
}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerifyingKey({self})")
    }
}

impl FromStr for VerifyingKey {
    type Err = Error;
    /// `secp256k1:<hex>`, `ed25519:<hex>`, or bare hex (33/65 bytes:
    /// secp256k1, 32 bytes: Ed25519). An optional `0x` before hex is allowed.
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.contains("-secret:") {
            return Err(Error::InvalidKey("this is a secret key, not a public key"));
        }
        let (scheme, hex_part) = match s.split_once(':') {
            Some((name, rest)) => (Some(name.parse::<Scheme>()?), rest),
            None => (None, s),
        };
        let hex_part = hex_part.strip_prefix("0x").unwrap_or(hex_part);
        let bytes =
            hex::decode(hex_part).map_err(|_| Error::InvalidKey("public key is not hex"))?;
        let scheme = match (scheme, bytes.len()) {
            (Some(s), _) => s,
            (None, 33 | 65) => Scheme::Secp256k1,
            (None, 32) => Scheme::Ed25519,
            _ => return Err(Error::InvalidKey("public key has an unexpected length")),
        };
        VerifyingKey::from_bytes(scheme, &bytes)
    }
}

/// A verifier's secret signing key. Zeroized on drop (by the underlying
/// crates); `Debug` shows only the scheme and key id.
#[derive(Clone)]
pub enum SigningKey {
    Secp256k1(ecdsa::SigningKey),
    Ed25519(ed25519_dalek::SigningKey),
}

impl SigningKey {
    pub fn generate(scheme: Scheme, rng: &mut (impl RngCore + CryptoRng)) -> Self {
        match scheme {
            Scheme::Secp256k1 => SigningKey::Secp256k1(ecdsa::SigningKey::random(rng)),
            Scheme::Ed25519 => SigningKey::Ed25519(ed25519_dalek::SigningKey::generate(rng)),
        }
    }

    pub fn from_secret_bytes(scheme: Scheme, bytes: &[u8]) -> Result<Self> {
        match scheme {
            Scheme::Secp256k1 => ecdsa::SigningKey::from_slice(bytes)
                .map(SigningKey::Secp256k1)
                .map_err(|_| Error::InvalidKey("not a secp256k1 secret key")),
            Scheme::Ed25519 => {
                let arr: &[u8; 32] = bytes
                    .try_into()
                    .map_err(|_| Error::InvalidKey("Ed25519 secret keys are 32 bytes"))?;
                Ok(SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(
                    arr,
                )))
            }
        }
    }

    pub fn scheme(&self) -> Scheme {
        match self {
            SigningKey::Secp256k1(_) => Scheme::Secp256k1,
            SigningKey::Ed25519(_) => Scheme::Ed25519,
        }
    }

    pub fn verifying_key(&self) -> VerifyingKey {
        match self {
            SigningKey::Secp256k1(k) => VerifyingKey::Secp256k1(*k.verifying_key()),
            SigningKey::Ed25519(k) => VerifyingKey::Ed25519(k.verifying_key()),
        }
    }

    pub fn key_id(&self) -> KeyId {
        self.verifying_key().key_id()
    }

    /// The secret in its text form (`<scheme>-secret:<hex>`), for key files.
    pub fn to_secret_text(&self) -> Zeroizing<String> {
        let bytes: Zeroizing<Vec<u8>> = Zeroizing::new(match self {
            SigningKey::Secp256k1(k) => k.to_bytes().to_vec(),
            SigningKey::Ed25519(k) => k.to_bytes().to_vec(),
        });
        Zeroizing::new(format!("{}-secret:{}", self.scheme(), hex::encode(&*bytes)))
    }

    /// Parses the text form written by [`SigningKey::to_secret_text`].
    pub fn from_secret_text(s: &str) -> Result<Self> {
        let s = s.trim();
        let (name, hex_part) = s
            .split_once("-secret:")
            .ok_or(Error::InvalidKey("expected <scheme>-secret:<hex>"))?;
        let scheme: Scheme = name.parse()?;
        let bytes = Zeroizing::new(
            hex::decode(hex_part).map_err(|_| Error::InvalidKey("secret key is not hex"))?,
        );
        Self::from_secret_bytes(scheme, &bytes)
    }

    /// Signs attestation body bytes (see the module docs for what is signed).
    pub(crate) fn sign(&self, body: &[u8]) -> Result<Signature> {
        match self {
            SigningKey::Secp256k1(k) => {
                let digest = Keccak256::digest(body);
                let (sig, recid) = k
                    .sign_prehash_recoverable(&digest)
                    .map_err(|_| Error::InvalidKey("secp256k1 signing failed"))?;
                // k256 already returns low-s; normalise defensively and fix
                // the recovery id to match.
                let (sig, recid) = match sig.normalize_s() {
                    Some(low) => (
                        low,
                        RecoveryId::new(!recid.is_y_odd(), recid.is_x_reduced()),
                    ),
                    None => (sig, recid),
                };
                if recid.is_x_reduced() {
                    // Probability about 2^-127; v could not express it.
                    return Err(Error::InvalidKey(
                        "secp256k1 signature needs an x-reduced recovery id",
                    ));
                }
                let mut out = [0u8; 65];
                out[..64].copy_from_slice(&sig.to_bytes());
                out[64] = 27 + recid.to_byte();
                Ok(Signature::Secp256k1(out))
            }
            SigningKey::Ed25519(k) => {
                use ed25519_dalek::Signer;
                Ok(Signature::Ed25519(k.sign(body).to_bytes()))
            }
        }
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("scheme", &self.scheme())
            .field("key_id", &self.key_id())
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// An attestation signature.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Signature {
    /// `r ‖ s ‖ v`, `v` in {27, 28}.
    Secp256k1([u8; 65]),
    Ed25519([u8; 64]),
}

impl Signature {
    pub fn scheme(&self) -> Scheme {
        match self {
            Signature::Secp256k1(_) => Scheme::Secp256k1,
            Signature::Ed25519(_) => Scheme::Ed25519,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Signature::Secp256k1(b) => b,
            Signature::Ed25519(b) => b,
        }
    }

    /// Builds a signature from its scheme and bytes, checking the length and
    /// (secp256k1) that `v` is 27 or 28.
    pub fn from_parts(scheme: Scheme, bytes: &[u8]) -> Result<Self, DecodeError> {
        let wrong_len = DecodeError::Truncated { what: "signature" };
        match scheme {
            Scheme::Secp256k1 => {
                let arr: [u8; 65] = bytes.try_into().map_err(|_| wrong_len)?;
                if arr[64] != 27 && arr[64] != 28 {
                    return Err(DecodeError::InvalidRecoveryByte(arr[64]));
                }
                Ok(Signature::Secp256k1(arr))
            }
            Scheme::Ed25519 => Ok(Signature::Ed25519(bytes.try_into().map_err(|_| wrong_len)?)),
        }
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Signature({}:{})",
            self.scheme(),
            hex::encode(self.as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(7)
    }

    #[test]
    fn text_forms_round_trip_and_debug_redacts() {
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            let sk = SigningKey::generate(scheme, &mut rng());
            let text = sk.to_secret_text();
            let back = SigningKey::from_secret_text(&text).unwrap();
            assert_eq!(back.key_id(), sk.key_id());
            let secret_hex = text.split_once("-secret:").unwrap().1.to_string();
            let dbg = format!("{sk:?}");
            assert!(!dbg.contains(&secret_hex) && dbg.contains("redacted"));
            let pk = sk.verifying_key();
            assert_eq!(pk.to_string().parse::<VerifyingKey>().unwrap(), pk);
            assert_eq!(
                hex::encode(pk.to_bytes()).parse::<VerifyingKey>().unwrap(),
                pk
            );
            // A secret key is never accepted as a public key.
            assert!(text.parse::<VerifyingKey>().is_err());
        }
    }

    #[test]
    fn secp256k1_signature_is_ecrecover_compatible_and_low_s() {
        let sk = SigningKey::generate(Scheme::Secp256k1, &mut rng());
        let pk = sk.verifying_key();
        for i in 0..20u8 {
            let msg = [i; 40];
            let Signature::Secp256k1(sig) = sk.sign(&msg).unwrap() else {
                panic!()
            };
            assert!(sig[64] == 27 || sig[64] == 28);
            let s = ecdsa::Signature::from_slice(&sig[..64]).unwrap();
            assert!(s.normalize_s().is_none(), "s must be low");
            pk.verify(&msg, &Signature::Secp256k1(sig)).unwrap();
            // Wrong v, high s, other message: rejected.
            let mut flipped = sig;
            flipped[64] ^= 27 ^ 28;
            assert_eq!(
                pk.verify(&msg, &Signature::Secp256k1(flipped)),
                Err(VerifyError::BadSignature)
            );
            let high = s.normalize_s().unwrap_or_else(|| {
                let (r, s) = s.split_scalars();
                ecdsa::Signature::from_scalars(r, -*s).unwrap()
            });
            let mut high_bytes = sig;
            high_bytes[..64].copy_from_slice(&high.to_bytes());
            high_bytes[64] ^= 27 ^ 28;
            assert_eq!(
                pk.verify(&msg, &Signature::Secp256k1(high_bytes)),
                Err(VerifyError::BadSignature)
            );
            assert!(pk.verify(&[i ^ 1; 40], &Signature::Secp256k1(sig)).is_err());
        }
    }

    #[test]
    fn ethereum_address_known_answer() {
        // Secret key 1: the generator point, whose address is well known.
        let mut one = [0u8; 32];
        one[31] = 1;
        let sk = SigningKey::from_secret_bytes(Scheme::Secp256k1, &one).unwrap();
        assert_eq!(
            sk.verifying_key().ethereum_address().unwrap(),
            "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"
        );
    }

    #[test]
    fn ed25519_rfc8032_test_vector_1() {
        let secret =
            hex::decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
                .unwrap();
        let sk = SigningKey::from_secret_bytes(Scheme::Ed25519, &secret).unwrap();
        assert_eq!(
            hex::encode(sk.verifying_key().to_bytes()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        );
        let Signature::Ed25519(sig) = sk.sign(b"").unwrap() else {
            panic!()
        };
        assert_eq!(
            hex::encode(sig),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
    }

    #[test]
    fn scheme_mismatch_and_other_key_rejected() {
        let a = SigningKey::generate(Scheme::Ed25519, &mut rng());
        let b = SigningKey::generate(Scheme::Secp256k1, &mut rng());
        let sig = a.sign(b"x").unwrap();
        assert_eq!(
            b.verifying_key().verify(b"x", &sig),
            Err(VerifyError::SchemeMismatch)
        );
        let c = SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[9; 32]));
        assert_eq!(
            c.verifying_key().verify(b"x", &sig),
            Err(VerifyError::BadSignature)
        );
    }
}

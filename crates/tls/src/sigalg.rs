//! Signature verification algorithms for `webpki`, on RustCrypto.
//!
//! The verifier checks certificate chains, CertificateVerify and
//! ServerKeyExchange signatures with these, so the protocol core stays pure
//! Rust and builds for `wasm32-unknown-unknown` (ring's randomness source
//! needs JavaScript glue there). Only verification is done here: no secret
//! key is ever handled, so timing side channels on private keys do not arise.

use rustls_pki_types::{
    alg_id, AlgorithmIdentifier, InvalidSignature, SignatureVerificationAlgorithm,
};
use sha2::{Digest, Sha256, Sha384, Sha512};

#[derive(Debug, Clone, Copy)]
enum Kind {
    EcdsaP256(HashKind),
    EcdsaP384(HashKind),
    RsaPkcs1(HashKind),
    RsaPss(HashKind),
    Ed25519,
}

#[derive(Debug, Clone, Copy)]
enum HashKind {
    Sha256,
    Sha384,
    Sha512,
}

impl HashKind {
    fn digest(self, m: &[u8]) -> Vec<u8> {
        match self {
            HashKind::Sha256 => Sha256::digest(m).to_vec(),
            HashKind::Sha384 => Sha384::digest(m).to_vec(),
            HashKind::Sha512 => Sha512::digest(m).to_vec(),
        }
    }
}

/// One (public key algorithm, signature algorithm) pair.
#[derive(Debug)]
pub struct Alg {
    public_key: AlgorithmIdentifier,
    signature: AlgorithmIdentifier,
    kind: Kind,
}

impl SignatureVerificationAlgorithm for Alg {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        use p256::ecdsa::signature::hazmat::PrehashVerifier;
        use rsa::signature::Verifier;
        match self.kind {
            Kind::EcdsaP256(h) => {
                let vk = p256::ecdsa::VerifyingKey::from_sec1_bytes(public_key)
                    .map_err(|_| InvalidSignature)?;
                let sig =
                    p256::ecdsa::Signature::from_der(signature).map_err(|_| InvalidSignature)?;
                vk.verify_prehash(&h.digest(message), &sig)
                    .map_err(|_| InvalidSignature)
            }
            Kind::EcdsaP384(h) => {
                let vk = p384::ecdsa::VerifyingKey::from_sec1_bytes(public_key)
                    .map_err(|_| InvalidSignature)?;
                let sig =
                    p384::ecdsa::Signature::from_der(signature).map_err(|_| InvalidSignature)?;
                vk.verify_prehash(&h.digest(message), &sig)
                    .map_err(|_| InvalidSignature)
            }
            Kind::RsaPkcs1(h) | Kind::RsaPss(h) => {
                use rsa::pkcs1::DecodeRsaPublicKey;
                use rsa::traits::PublicKeyParts;
                let key =
                    rsa::RsaPublicKey::from_pkcs1_der(public_key).map_err(|_| InvalidSignature)?;
                let bits = key.n().bits();
                if !(2048..=8192).contains(&bits) {
                    return Err(InvalidSignature);
                }
                macro_rules! check {
                    ($m:ident, $d:ty) => {{
                        let sig = rsa::$m::Signature::try_from(signature)
                            .map_err(|_| InvalidSignature)?;
                        rsa::$m::VerifyingKey::<$d>::new(key)
                            .verify(message, &sig)
                            .map_err(|_| InvalidSignature)
                    }};
                }
                match (self.kind, h) {
                    (Kind::RsaPkcs1(_), HashKind::Sha256) => check!(pkcs1v15, Sha256),
                    (Kind::RsaPkcs1(_), HashKind::Sha384) => check!(pkcs1v15, Sha384),
                    (Kind::RsaPkcs1(_), HashKind::Sha512) => check!(pkcs1v15, Sha512),
                    (_, HashKind::Sha256) => check!(pss, Sha256),
                    (_, HashKind::Sha384) => check!(pss, Sha384),
                    (_, HashKind::Sha512) => check!(pss, Sha512),
                }
            }
            Kind::Ed25519 => {
                let pk: [u8; 32] = public_key.try_into().map_err(|_| InvalidSignature)?;
                let vk =
                    ed25519_dalek::VerifyingKey::from_bytes(&pk).map_err(|_| InvalidSignature)?;
                let sig = ed25519_dalek::Signature::from_slice(signature)
                    .map_err(|_| InvalidSignature)?;
                vk.verify_strict(message, &sig)
                    .map_err(|_| InvalidSignature)
            }
        }
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        self.public_key
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        self.signature
    }
}

macro_rules! alg {
    ($name:ident, $pk:ident, $sig:ident, $kind:expr) => {
        #[allow(missing_docs)]
        pub static $name: &Alg = &Alg {
            public_key: alg_id::$pk,
            signature: alg_id::$sig,
            kind: $kind,
        };
    };
}

alg!(
    ECDSA_P256_SHA256,
    ECDSA_P256,
    ECDSA_SHA256,
    Kind::EcdsaP256(HashKind::Sha256)
);
alg!(
    ECDSA_P256_SHA384,
    ECDSA_P256,
    ECDSA_SHA384,
    Kind::EcdsaP256(HashKind::Sha384)
);
alg!(
    ECDSA_P384_SHA256,
    ECDSA_P384,
    ECDSA_SHA256,
    Kind::EcdsaP384(HashKind::Sha256)
);
alg!(
    ECDSA_P384_SHA384,
    ECDSA_P384,
    ECDSA_SHA384,
    Kind::EcdsaP384(HashKind::Sha384)
);
alg!(
    RSA_PKCS1_SHA256,
    RSA_ENCRYPTION,
    RSA_PKCS1_SHA256,
    Kind::RsaPkcs1(HashKind::Sha256)
);
alg!(
    RSA_PKCS1_SHA384,
    RSA_ENCRYPTION,
    RSA_PKCS1_SHA384,
    Kind::RsaPkcs1(HashKind::Sha384)
);
alg!(
    RSA_PKCS1_SHA512,
    RSA_ENCRYPTION,
    RSA_PKCS1_SHA512,
    Kind::RsaPkcs1(HashKind::Sha512)
);
alg!(
    RSA_PSS_SHA256,
    RSA_ENCRYPTION,
    RSA_PSS_SHA256,
    Kind::RsaPss(HashKind::Sha256)
);
alg!(
    RSA_PSS_SHA384,
    RSA_ENCRYPTION,
    RSA_PSS_SHA384,
    Kind::RsaPss(HashKind::Sha384)
);
alg!(
    RSA_PSS_SHA512,
    RSA_ENCRYPTION,
    RSA_PSS_SHA512,
    Kind::RsaPss(HashKind::Sha512)
);
alg!(ED25519, ED25519, ED25519, Kind::Ed25519);

/// Every algorithm accepted in certificate chains.
pub static ALL: &[&dyn SignatureVerificationAlgorithm] = &[
    ECDSA_P256_SHA256,
    ECDSA_P256_SHA384,
    ECDSA_P384_SHA256,
    ECDSA_P384_SHA384,
    RSA_PKCS1_SHA256,
    RSA_PKCS1_SHA384,
    RSA_PKCS1_SHA512,
    RSA_PSS_SHA256,
    RSA_PSS_SHA384,
    RSA_PSS_SHA512,
    ED25519,
];

//! Protocol versions, cipher suites and key-exchange groups webproof supports.
//!
//! A suite not listed here is never offered by the prover and is rejected by
//! the verifier.

use serde::{Deserialize, Serialize};

use core::fmt;

/// A TLS version: the one type every crate of the workspace uses for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TlsVersion {
    /// TLS 1.2 (RFC 5246); proxy mode takes ECDHE and AEAD suites only.
    #[serde(rename = "1.2", alias = "TLSv1.2")]
    Tls12,
    /// TLS 1.3 (RFC 8446), no PSK, no 0-RTT.
    #[serde(rename = "1.3", alias = "TLSv1.3")]
    Tls13,
}

impl TlsVersion {
    pub const fn code(self) -> u16 {
        match self {
            TlsVersion::Tls12 => 0x0303,
            TlsVersion::Tls13 => 0x0304,
        }
    }

    pub const fn from_code(code: u16) -> Option<Self> {
        match code {
            0x0303 => Some(TlsVersion::Tls12),
            0x0304 => Some(TlsVersion::Tls13),
            _ => None,
        }
    }
}

impl fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TlsVersion::Tls12 => "TLS 1.2",
            TlsVersion::Tls13 => "TLS 1.3",
        })
    }
}

/// Which way the bytes went.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client to server (the request).
    Sent,
    /// Server to client (the response).
    Received,
}

impl Direction {
    /// The byte that stands for this direction in leaf preimages and encodings.
    pub const fn to_byte(self) -> u8 {
        match self {
            Direction::Sent => 0,
            Direction::Received => 1,
        }
    }

    pub const fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Direction::Sent),
            1 => Some(Direction::Received),
            _ => None,
        }
    }

    pub const BOTH: [Direction; 2] = [Direction::Sent, Direction::Received];
}

impl Direction {
    /// Who sends in this direction, for messages: `client` or `server`
    /// (`Display` gives the direction's own name, `sent` or `received`).
    pub const fn sender(self) -> &'static str {
        match self {
            Direction::Sent => "client",
            Direction::Received => "server",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Sent => "sent",
            Direction::Received => "received",
        })
    }
}

/// The hash of a suite's PRF / key schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HashAlg {
    /// SHA-256 (32-byte output).
    Sha256,
    /// SHA-384 (48-byte output).
    Sha384,
}

impl HashAlg {
    /// Output length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 48,
        }
    }

    /// Hash `data`.
    pub fn hash(self, data: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        match self {
            HashAlg::Sha256 => sha2::Sha256::digest(data).to_vec(),
            HashAlg::Sha384 => sha2::Sha384::digest(data).to_vec(),
        }
    }
}

/// The record protection algorithm of a suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AeadAlg {
    /// AES-128-GCM.
    Aes128Gcm,
    /// AES-256-GCM.
    Aes256Gcm,
    /// ChaCha20-Poly1305.
    ChaCha20Poly1305,
}

impl AeadAlg {
    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            AeadAlg::Aes128Gcm => 16,
            AeadAlg::Aes256Gcm | AeadAlg::ChaCha20Poly1305 => 32,
        }
    }

    /// Length of the IV derived by the key schedule: the full 12-byte nonce
    /// base, except TLS 1.2 GCM whose 4-byte implicit salt is completed by an
    /// explicit 8-byte nonce in each record.
    pub fn iv_len(self, version: TlsVersion) -> usize {
        match (version, self) {
            (TlsVersion::Tls12, AeadAlg::Aes128Gcm | AeadAlg::Aes256Gcm) => 4,
            _ => 12,
        }
    }
}

/// A supported cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(non_camel_case_types)]
pub enum CipherSuite {
    /// 0x1301
    TLS13_AES_128_GCM_SHA256,
    /// 0x1302
    TLS13_AES_256_GCM_SHA384,
    /// 0x1303
    TLS13_CHACHA20_POLY1305_SHA256,
    /// 0xC02B
    TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    /// 0xC02C
    TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    /// 0xC02F
    TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    /// 0xC030
    TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    /// 0xCCA9
    TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    /// 0xCCA8
    TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

impl CipherSuite {
    /// Every supported suite, TLS 1.3 first.
    pub const ALL: [CipherSuite; 9] = [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_AES_256_GCM_SHA384,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ];

    /// The IANA code point.
    pub fn code(self) -> u16 {
        use CipherSuite::*;
        match self {
            TLS13_AES_128_GCM_SHA256 => 0x1301,
            TLS13_AES_256_GCM_SHA384 => 0x1302,
            TLS13_CHACHA20_POLY1305_SHA256 => 0x1303,
            TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => 0xC02B,
            TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => 0xC02C,
            TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => 0xC02F,
            TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => 0xC030,
            TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => 0xCCA9,
            TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => 0xCCA8,
        }
    }

    /// The suite with this code point, if supported.
    pub fn from_code(code: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.code() == code)
    }

    /// The suite's IANA name (also its JSON form).
    pub fn name(self) -> &'static str {
        use CipherSuite::*;
        match self {
            TLS13_AES_128_GCM_SHA256 => "TLS13_AES_128_GCM_SHA256",
            TLS13_AES_256_GCM_SHA384 => "TLS13_AES_256_GCM_SHA384",
            TLS13_CHACHA20_POLY1305_SHA256 => "TLS13_CHACHA20_POLY1305_SHA256",
            TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
            }
            TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => {
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
            }
        }
    }

    /// Parse a suite name; case-insensitive, the `TLS13_`/`TLS_` prefix optional.
    pub fn from_name(name: &str) -> Option<Self> {
        let up = name.trim().to_ascii_uppercase().replace('-', "_");
        Self::ALL.into_iter().find(|s| {
            let n = s.name();
            n == up
                || n.strip_prefix("TLS13_") == Some(up.as_str())
                || n.strip_prefix("TLS_") == Some(up.as_str())
        })
    }

    /// The version this suite belongs to.
    pub fn version(self) -> TlsVersion {
        if self.code() >> 8 == 0x13 {
            TlsVersion::Tls13
        } else {
            TlsVersion::Tls12
        }
    }

    /// The PRF / key-schedule hash.
    pub fn hash(self) -> HashAlg {
        use CipherSuite::*;
        match self {
            TLS13_AES_256_GCM_SHA384
            | TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            | TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => HashAlg::Sha384,
            _ => HashAlg::Sha256,
        }
    }

    /// The record protection.
    pub fn aead(self) -> AeadAlg {
        use CipherSuite::*;
        match self {
            TLS13_AES_128_GCM_SHA256
            | TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
            | TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => AeadAlg::Aes128Gcm,
            TLS13_AES_256_GCM_SHA384
            | TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            | TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => AeadAlg::Aes256Gcm,
            _ => AeadAlg::ChaCha20Poly1305,
        }
    }
}

impl core::fmt::Display for CipherSuite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A supported ECDHE group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KxGroup {
    /// X25519 (0x001D).
    #[serde(rename = "x25519")]
    X25519,
    /// NIST P-256 / secp256r1 (0x0017).
    #[serde(rename = "secp256r1")]
    Secp256r1,
}

impl KxGroup {
    /// The IANA code point.
    pub fn code(self) -> u16 {
        match self {
            KxGroup::X25519 => 0x001D,
            KxGroup::Secp256r1 => 0x0017,
        }
    }

    /// The group with this code point, if supported.
    pub fn from_code(code: u16) -> Option<Self> {
        match code {
            0x001D => Some(KxGroup::X25519),
            0x0017 => Some(KxGroup::Secp256r1),
            _ => None,
        }
    }

    /// Parse `x25519`, `p256`, `p-256`, `secp256r1`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "x25519" => Some(KxGroup::X25519),
            "p256" | "p-256" | "secp256r1" => Some(KxGroup::Secp256r1),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip() {
        for s in CipherSuite::ALL {
            assert_eq!(CipherSuite::from_code(s.code()), Some(s));
            assert_eq!(CipherSuite::from_name(s.name()), Some(s));
        }
        assert_eq!(
            CipherSuite::from_name("aes_128_gcm_sha256"),
            Some(CipherSuite::TLS13_AES_128_GCM_SHA256)
        );
        assert_eq!(CipherSuite::from_code(0x009C), None);
        assert_eq!(KxGroup::from_name("P-256"), Some(KxGroup::Secp256r1));
    }

    #[test]
    fn group_codes_round_trip() {
        for g in [KxGroup::X25519, KxGroup::Secp256r1] {
            assert_eq!(KxGroup::from_code(g.code()), Some(g));
        }
        assert_eq!(KxGroup::X25519.code(), 0x001D);
        assert_eq!(KxGroup::Secp256r1.code(), 0x0017);
        // secp384r1 is not supported.
        assert_eq!(KxGroup::from_code(0x0018), None);
    }
}

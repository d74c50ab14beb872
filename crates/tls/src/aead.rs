//! Record protection: nonces, additional data and the TLS 1.3 inner plaintext.
//!
//! One [`RecordCipher`] per direction and key epoch; the caller supplies the
//! sequence number, so a dropped, reordered or replayed record fails to
//! authenticate.

use crate::error::{malformed, Result};
use crate::keys::TrafficKeys;
use crate::record::{content_type, Record};
use crate::suite::{AeadAlg, CipherSuite, TlsVersion};
use aes_gcm::aead::{Aead, KeyInit, Payload};

/// Length of the AEAD tag of every supported suite.
pub const TAG_LEN: usize = 16;
/// Length of the explicit nonce of TLS 1.2 GCM records.
pub const EXPLICIT_NONCE_LEN: usize = 8;

/// A record's plaintext after removing protection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The real content type (TLS 1.3: the inner type).
    pub content_type: u8,
    /// The content.
    pub data: Vec<u8>,
}

/// Why a record failed to open: authentication, or a malformed inner plaintext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// The tag did not verify.
    Auth,
    /// Authentic, but the content is malformed (e.g. TLS 1.3 all-zero inner plaintext).
    Malformed(String),
}

/// Decrypts (and, for tests and provers, encrypts) records of one direction.
#[derive(Clone)]
pub struct RecordCipher {
    suite: CipherSuite,
    version: TlsVersion,
    keys: TrafficKeys,
}

impl core::fmt::Debug for RecordCipher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "RecordCipher({})", self.suite)
    }
}

impl RecordCipher {
    /// A cipher for `suite` with these keys.
    pub fn new(suite: CipherSuite, keys: TrafficKeys) -> Result<Self> {
        let a = suite.aead();
        let v = suite.version();
        if keys.key.len() != a.key_len() || keys.iv.len() != a.iv_len(v) {
            return Err(malformed(
                "traffic keys",
                "wrong key or IV length for the suite",
            ));
        }
        Ok(RecordCipher {
            suite,
            version: v,
            keys,
        })
    }

    /// The nonce and the ciphertext-with-tag of `record` at sequence number `seq`.
    pub fn nonce_and_ciphertext<'a>(
        &self,
        seq: u64,
        record: &'a Record,
    ) -> Result<([u8; 12], &'a [u8]), OpenError> {
        if has_explicit_nonce(self.suite) {
            if record.payload.len() < EXPLICIT_NONCE_LEN + TAG_LEN {
                return Err(OpenError::Auth);
            }
            let mut nonce = [0u8; 12];
            nonce[..4].copy_from_slice(&self.keys.iv);
            nonce[4..].copy_from_slice(&record.payload[..EXPLICIT_NONCE_LEN]);
            Ok((nonce, &record.payload[EXPLICIT_NONCE_LEN..]))
        } else {
            if record.payload.len() < TAG_LEN {
                return Err(OpenError::Auth);
            }
            Ok((xor_seq(&self.keys.iv, seq), &record.payload))
        }
    }

    /// The additional data of `record` at `seq`, given its plaintext length.
    fn aad(&self, seq: u64, record: &Record, plain_len: usize) -> Vec<u8> {
        additional_data(self.version, seq, record, plain_len)
    }

    /// Remove the protection of `record`, the `seq`-th of its direction under this key.
    pub fn open(&self, seq: u64, record: &Record) -> Result<Opened, OpenError> {
        let (nonce, ct) = self.nonce_and_ciphertext(seq, record)?;
        let aad = self.aad(seq, record, ct.len() - TAG_LEN);
        let plain = aead_decrypt(self.suite.aead(), &self.keys.key, &nonce, &aad, ct)
            .ok_or(OpenError::Auth)?;
        match self.version {
            TlsVersion::Tls12 => Ok(Opened {
                content_type: record.content_type,
                data: plain,
            }),
            TlsVersion::Tls13 => {
                if record.content_type != content_type::APPLICATION_DATA {
                    return Err(OpenError::Malformed(format!(
                        "protected record with outer type {}",
                        record.content_type
                    )));
                }
                let mut plain = plain;
                // Inner plaintext: content || type || zero padding.
                let Some(pos) = plain.iter().rposition(|&b| b != 0) else {
                    return Err(OpenError::Malformed(
                        "inner plaintext is all padding".into(),
                    ));
                };
                let ct = plain[pos];
                plain.truncate(pos);
                Ok(Opened {
                    content_type: ct,
                    data: plain,
                })
            }
        }
    }

    /// Protect `data` of type `typ` as the `seq`-th record (used by tests to
    /// forge records, and by anyone replaying a session).
    pub fn seal(&self, seq: u64, typ: u8, data: &[u8], padding: usize) -> Record {
        let (outer, mut plain) = match self.version {
            TlsVersion::Tls13 => {
                let mut p = data.to_vec();
                p.push(typ);
                p.extend(core::iter::repeat_n(0u8, padding));
                (content_type::APPLICATION_DATA, p)
            }
            TlsVersion::Tls12 => (typ, data.to_vec()),
        };
        let explicit = has_explicit_nonce(self.suite);
        let mut record = Record {
            direction: crate::record::Direction::Sent,
            content_type: outer,
            version: 0x0303,
            payload: Vec::new(),
        };
        let plain_len = plain.len();
        let mut prefix = Vec::new();
        let nonce = if explicit {
            prefix = seq.to_be_bytes().to_vec();
            let mut n = [0u8; 12];
            n[..4].copy_from_slice(&self.keys.iv);
            n[4..].copy_from_slice(&prefix);
            n
        } else {
            xor_seq(&self.keys.iv, seq)
        };
        let total = prefix.len() + plain_len + TAG_LEN;
        record.payload = vec![0; total];
        let aad = self.aad(seq, &record, plain_len);
        let ct = aead_encrypt(self.suite.aead(), &self.keys.key, &nonce, &aad, &mut plain);
        prefix.extend_from_slice(&ct);
        record.payload = prefix;
        record
    }
}

/// Whether records of `suite` carry an explicit nonce (TLS 1.2 AES-GCM).
pub fn has_explicit_nonce(suite: CipherSuite) -> bool {
    suite.version() == TlsVersion::Tls12 && suite.aead() != AeadAlg::ChaCha20Poly1305
}

/// The additional data of `record`, the `seq`-th of its direction, whose
/// plaintext is `plain_len` bytes: TLS 1.3 the record header; TLS 1.2
/// `seq || type || version || plaintext length`.
pub fn additional_data(
    version: TlsVersion,
    seq: u64,
    record: &Record,
    plain_len: usize,
) -> Vec<u8> {
    match version {
        TlsVersion::Tls13 => record.header().to_vec(),
        TlsVersion::Tls12 => {
            let mut aad = seq.to_be_bytes().to_vec();
            aad.push(record.content_type);
            aad.extend_from_slice(&record.version.to_be_bytes());
            aad.extend_from_slice(&(plain_len as u16).to_be_bytes());
            aad
        }
    }
}

/// The ciphertext (without explicit nonce) and the tag of a protected
/// record's payload, or `None` if the payload is too short to hold them.
pub fn ciphertext_and_tag(suite: CipherSuite, payload: &[u8]) -> Option<(&[u8], &[u8; TAG_LEN])> {
    let head = if has_explicit_nonce(suite) {
        EXPLICIT_NONCE_LEN
    } else {
        0
    };
    let body = payload.get(head..)?;
    let split = body.len().checked_sub(TAG_LEN)?;
    let (ct, tag) = body.split_at(split);
    Some((ct, tag.try_into().ok()?))
}

/// nonce = iv XOR big-endian(seq), right-aligned.
pub fn xor_seq(iv: &[u8], seq: u64) -> [u8; 12] {
    let mut n = [0u8; 12];
    n.copy_from_slice(&iv[..12]);
    for (i, b) in seq.to_be_bytes().iter().enumerate() {
        n[4 + i] ^= b;
    }
    n
}

fn aead_decrypt(
    a: AeadAlg,
    key: &[u8],
    nonce: &[u8; 12],
    aad: &[u8],
    ct: &[u8],
) -> Option<Vec<u8>> {
    let p = Payload { msg: ct, aad };
    match a {
        AeadAlg::Aes128Gcm => aes_gcm::Aes128Gcm::new_from_slice(key)
            .ok()?
            .decrypt(nonce.into(), p)
            .ok(),
        AeadAlg::Aes256Gcm => aes_gcm::Aes256Gcm::new_from_slice(key)
            .ok()?
            .decrypt(nonce.into(), p)
            .ok(),
        AeadAlg::ChaCha20Poly1305 => chacha20poly1305::ChaCha20Poly1305::new_from_slice(key)
            .ok()?
            .decrypt(nonce.into(), p)
            .ok(),
    }
}

fn aead_encrypt(a: AeadAlg, key: &[u8], nonce: &[u8; 12], aad: &[u8], plain: &mut [u8]) -> Vec<u8> {
    let p = Payload { msg: plain, aad };
    let r = match a {
        AeadAlg::Aes128Gcm => aes_gcm::Aes128Gcm::new_from_slice(key)
            .expect("key length checked")
            .encrypt(nonce.into(), p),
        AeadAlg::Aes256Gcm => aes_gcm::Aes256Gcm::new_from_slice(key)
            .expect("key length checked")
            .encrypt(nonce.into(), p),
        AeadAlg::ChaCha20Poly1305 => chacha20poly1305::ChaCha20Poly1305::new_from_slice(key)
            .expect("key length checked")
            .encrypt(nonce.into(), p),
    };
    r.expect("encryption of a bounded record cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_open_round_trip_every_suite() {
        for suite in CipherSuite::ALL {
            let a = suite.aead();
            let keys = TrafficKeys {
                key: vec![7; a.key_len()],
                iv: vec![9; a.iv_len(suite.version())],
            };
            let c = RecordCipher::new(suite, keys).unwrap();
            let rec = c.seal(5, content_type::APPLICATION_DATA, b"hello", 3);
            let o = c.open(5, &rec).unwrap();
            assert_eq!(o.data, b"hello");
            assert_eq!(o.content_type, content_type::APPLICATION_DATA);
            // Wrong sequence number (a reordered or replayed record).
            if suite.version() == TlsVersion::Tls13 || a == AeadAlg::ChaCha20Poly1305 {
                assert_eq!(c.open(6, &rec), Err(OpenError::Auth));
            } else {
                // GCM in TLS 1.2: the sequence number is in the additional data.
                assert_eq!(c.open(4, &rec), Err(OpenError::Auth));
            }
            let mut bad = rec.clone();
            let n = bad.payload.len();
            bad.payload[n - 1] ^= 1;
            assert_eq!(c.open(5, &bad), Err(OpenError::Auth));
            let mut short = rec.clone();
            short.payload.truncate(3);
            assert_eq!(c.open(5, &short), Err(OpenError::Auth));
        }
    }
}

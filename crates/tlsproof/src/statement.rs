//! The public statement of a proxy-mode proof and what it proves.

use core::ops::Range;
use webproof_circuits::sha2::HashAlg;
use webproof_core::{Error, Result};

/// The record protection of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aead {
    /// AES-128-GCM.
    Aes128Gcm,
    /// AES-256-GCM.
    Aes256Gcm,
    /// ChaCha20-Poly1305.
    ChaCha20Poly1305,
}

impl Aead {
    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            Aead::Aes128Gcm => 16,
            Aead::Aes256Gcm | Aead::ChaCha20Poly1305 => 32,
        }
    }

    /// Length of the TLS 1.2 fixed IV (the implicit nonce part).
    pub fn tls12_iv_len(self) -> usize {
        match self {
            Aead::Aes128Gcm | Aead::Aes256Gcm => 4,
            Aead::ChaCha20Poly1305 => 12,
        }
    }

    /// Bytes of keystream one block-function call yields.
    pub fn keystream_block_len(self) -> usize {
        match self {
            Aead::Aes128Gcm | Aead::Aes256Gcm => 16,
            Aead::ChaCha20Poly1305 => 64,
        }
    }
}

/// One protected record as the verifier recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The record's sequence number in its direction.
    pub seq: u64,
    /// TLS 1.2 AES-GCM: the explicit nonce carried in the record.
    pub explicit_nonce: Option<[u8; 8]>,
    /// The encrypted payload, without explicit nonce and tag.
    pub ciphertext: Vec<u8>,
}

/// TLS 1.3 public handshake data.
#[derive(Clone, Debug)]
pub struct Tls13Handshake {
    /// The suite's hash.
    pub hash: HashAlg,
    /// Transcript-Hash(ClientHello..ServerHello).
    pub hello_hash: Vec<u8>,
    /// Transcript-Hash(ClientHello..server Finished).
    pub finished_hash: Vec<u8>,
    /// client_handshake_traffic_secret, revealed to and used by the verifier.
    pub client_handshake_secret: Vec<u8>,
    /// server_handshake_traffic_secret, revealed to and used by the verifier.
    pub server_handshake_secret: Vec<u8>,
}

/// TLS 1.2 public handshake data.
#[derive(Clone, Debug)]
pub struct Tls12Handshake {
    /// The PRF hash.
    pub hash: HashAlg,
    /// ClientHello.random.
    pub client_random: [u8; 32],
    /// ServerHello.random.
    pub server_random: [u8; 32],
    /// Hash of the handshake messages before the client Finished.
    pub client_finished_hash: Vec<u8>,
    /// Hash of the handshake messages before the server Finished.
    pub server_finished_hash: Vec<u8>,
    /// The client Finished verify_data (disclosed; the verifier needs it for
    /// `server_finished_hash`).
    pub client_verify_data: [u8; 12],
    /// The encrypted client Finished record (sequence number 0).
    pub client_finished: Record,
    /// The encrypted server Finished record (sequence number 0).
    pub server_finished: Record,
}

/// The handshake part of a statement.
#[derive(Clone, Debug)]
pub enum Handshake {
    /// TLS 1.3: witness is the handshake secret.
    Tls13(Tls13Handshake),
    /// TLS 1.2: witness is the master secret.
    Tls12(Tls12Handshake),
}

/// What a direction discloses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disclosure {
    /// Everything: the traffic key is opened (the fast path).
    Key,
    /// These byte ranges of these records (by index in `records`).
    Ranges(Vec<(usize, Range<usize>)>),
}

/// One direction's records and disclosure.
#[derive(Clone, Debug)]
pub struct Direction {
    /// Application records in order.
    pub records: Vec<Record>,
    /// What to disclose.
    pub disclosure: Disclosure,
}

/// The public statement both parties agree on.
#[derive(Clone, Debug)]
pub struct Statement {
    /// Record protection.
    pub aead: Aead,
    /// Handshake data.
    pub handshake: Handshake,
    /// Client to server.
    pub sent: Direction,
    /// Server to client.
    pub recv: Direction,
}

/// What a direction's proof established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirectionOutput {
    /// The traffic key and IV, proven derived from the handshake.
    Key { key: Vec<u8>, iv: Vec<u8> },
    /// Per record, the plaintext bytes proven (`None` where not disclosed).
    Bytes(Vec<Vec<Option<u8>>>),
}

/// The result of a successful proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proven {
    /// Client to server.
    pub sent: DirectionOutput,
    /// Server to client.
    pub recv: DirectionOutput,
}

/// Limits that keep a statement's cost bounded (the verifier enforces its
/// transcript limits earlier; these only rule out nonsense).
const MAX_RECORD_LEN: usize = (1 << 14) + 256;
const MAX_RECORDS: usize = 1 << 16;

impl Statement {
    /// Check that the statement is well formed.
    pub fn validate(&self) -> Result<()> {
        let hash_len = match &self.handshake {
            Handshake::Tls13(h) => {
                let n = h.hash.output_len();
                for (what, v) in [
                    ("hello hash", &h.hello_hash),
                    ("finished hash", &h.finished_hash),
                    ("client handshake secret", &h.client_handshake_secret),
                    ("server handshake secret", &h.server_handshake_secret),
                ] {
                    if v.len() != n {
                        return Err(Error::Malformed(format!(
                            "{what} is {} bytes, expected {n}",
                            v.len()
                        )));
                    }
                }
                n
            }
            Handshake::Tls12(h) => {
                let n = h.hash.output_len();
                if h.client_finished_hash.len() != n || h.server_finished_hash.len() != n {
                    return Err(Error::Malformed("Finished hash of the wrong length".into()));
                }
                for r in [&h.client_finished, &h.server_finished] {
                    self.check_record(r)?;
                }
                n
            }
        };
        let expect_hash = match self.aead {
            Aead::Aes256Gcm => 48,
            _ => 32,
        };
        if hash_len != expect_hash {
            return Err(Error::Malformed(
                "the hash does not match the cipher suite".into(),
            ));
        }
        for d in [&self.sent, &self.recv] {
            if d.records.len() > MAX_RECORDS {
                return Err(Error::Malformed("too many records".into()));
            }
            for r in &d.records {
                self.check_record(r)?;
            }
            if let Disclosure::Ranges(ranges) = &d.disclosure {
                for (i, range) in ranges {
                    let r = d.records.get(*i).ok_or_else(|| {
                        Error::Malformed(format!(
                            "disclosed range names record {i}, which does not exist"
                        ))
                    })?;
                    if range.start > range.end || range.end > r.ciphertext.len() {
                        return Err(Error::Malformed(format!(
                            "disclosed range {range:?} is outside record {i} ({} bytes)",
                            r.ciphertext.len()
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_record(&self, r: &Record) -> Result<()> {
        if r.ciphertext.len() > MAX_RECORD_LEN {
            return Err(Error::Malformed(format!(
                "record of {} bytes exceeds the TLS limit",
                r.ciphertext.len()
            )));
        }
        let needs_explicit =
            matches!(self.handshake, Handshake::Tls12(_)) && self.aead != Aead::ChaCha20Poly1305;
        if needs_explicit != r.explicit_nonce.is_some() {
            return Err(Error::Malformed(
                "explicit nonce present where the suite has none, or missing".into(),
            ));
        }
        Ok(())
    }
}

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
pub struct SealedRecord {
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
    pub client_finished: SealedRecord,
    /// The encrypted server Finished record (sequence number 0).
    pub server_finished: SealedRecord,
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

/// A hash commitment to plaintext, proven in zero knowledge:
/// `SHA-256(prefix || blinder || plaintext of spans)`, where the blinder is
/// the prover's secret and only the digest reaches the verifier. This is how
/// attestations commit to data the verifier never sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commitment {
    /// Public bytes hashed first (e.g. a leaf header).
    pub prefix: Vec<u8>,
    /// Length in bytes of the secret blinder hashed after the prefix.
    pub blinder_len: usize,
    /// Plaintext spans `(record index, byte range)` hashed after the blinder.
    pub spans: Vec<(usize, Range<usize>)>,
}

/// A byte-class constraint: every plaintext byte of `spans` is proven,
/// inside the proof, to differ from each value of `forbidden`, without
/// being opened. Used to prove that hidden bytes cannot change how a
/// revealed skeleton (e.g. a JSON document's structure) is read: a hidden
/// string content holds no quote or backslash, a hidden number no
/// structural character.
///
/// Cost: the keystream of every constrained byte (as for an opened byte),
/// then at most 4 AND gates per distinct bit pair, high and low nibble of
/// the forbidden values plus one per value, per byte: 14 for the quote and
/// the backslash, under 40 for the 12 JSON delimiters and whitespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteClass {
    /// The values no byte of `spans` may take: strictly increasing, not empty.
    pub forbidden: Vec<u8>,
    /// Plaintext spans `(record index, byte range)`: non-empty, increasing
    /// and disjoint.
    pub spans: Vec<(usize, Range<usize>)>,
}

/// One direction's records, disclosure and commitments.
#[derive(Clone, Debug)]
pub struct DirectionStatement {
    /// Application records in order.
    pub records: Vec<SealedRecord>,
    /// What to disclose.
    pub disclosure: Disclosure,
    /// Hash commitments. Their spans, taken in order across all commitments,
    /// must be increasing and disjoint (each commitment covers a later part
    /// of the transcript than the previous one).
    pub commitments: Vec<Commitment>,
    /// Open each record's one-time MAC material ([`TagMaterial`]), computed
    /// in the proof from this direction's key, so the verifier can check the
    /// records' AEAD tags without the key. Meant for the client direction
    /// when it is not disclosed by [`Disclosure::Key`]: the prover produced
    /// those records, so only their tags show that the server would have
    /// accepted them. Opens no plaintext (see the crate docs).
    pub open_tag_material: bool,
    /// Byte-class constraints on this direction's plaintext (at most
    /// [`MAX_BYTE_CLASSES`]). Ignored for bytes the verifier sees anyway,
    /// but proven all the same.
    pub byte_classes: Vec<ByteClass>,
}

/// Limit on byte classes per direction.
pub const MAX_BYTE_CLASSES: usize = 8;

impl DirectionStatement {
    /// Records with nothing disclosed and nothing committed.
    pub fn new(records: Vec<SealedRecord>) -> Self {
        DirectionStatement {
            records,
            disclosure: Disclosure::Ranges(Vec::new()),
            commitments: Vec::new(),
            open_tag_material: false,
            byte_classes: Vec::new(),
        }
    }
}

/// The prover's secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct Witness {
    /// TLS 1.3 handshake secret or TLS 1.2 master secret.
    pub secret: Vec<u8>,
    /// One blinder per commitment of the sent direction.
    pub sent_blinders: Vec<Vec<u8>>,
    /// One blinder per commitment of the received direction.
    pub recv_blinders: Vec<Vec<u8>>,
}

impl core::fmt::Debug for Witness {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Witness(..)")
    }
}

impl Witness {
    /// A witness with no commitments.
    pub fn new(secret: Vec<u8>) -> Self {
        Witness {
            secret,
            sent_blinders: Vec::new(),
            recv_blinders: Vec::new(),
        }
    }

    pub(crate) fn check_against(&self, s: &Statement) -> Result<()> {
        for (d, b) in [
            (&s.sent, &self.sent_blinders),
            (&s.recv, &self.recv_blinders),
        ] {
            if d.commitments.len() != b.len()
                || d.commitments
                    .iter()
                    .zip(b)
                    .any(|(c, b)| c.blinder_len != b.len())
            {
                return Err(Error::Usage(
                    "the blinders do not match the commitments".into(),
                ));
            }
        }
        Ok(())
    }
}

/// The public statement both parties agree on.
#[derive(Clone, Debug)]
pub struct Statement {
    /// Record protection.
    pub aead: Aead,
    /// Handshake data.
    pub handshake: Handshake,
    /// Client to server.
    pub sent: DirectionStatement,
    /// Server to client.
    pub recv: DirectionStatement,
}

/// What a direction's proof established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirectionOutput {
    /// The traffic key and IV, proven derived from the handshake.
    Key { key: Vec<u8>, iv: Vec<u8> },
    /// Per record, the plaintext bytes proven (`None` where not disclosed).
    Bytes(Vec<Vec<Option<u8>>>),
}

/// What one direction's proof established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectionProof {
    /// The disclosed key or bytes.
    pub disclosed: DirectionOutput,
    /// The digest of each commitment, in order.
    pub commitments: Vec<[u8; 32]>,
    /// The records' one-time MAC material, if the direction asked for it
    /// ([`DirectionStatement::open_tag_material`]).
    pub tag_material: Option<TagMaterial>,
}

/// The one-time MAC material of a direction's records, computed in the proof
/// from the direction's bound key and each record's nonce (built as for the
/// keystream: TLS 1.3 IV XOR sequence number, TLS 1.2 salt || explicit
/// nonce, or IV XOR sequence number for ChaCha20). With the recorded
/// ciphertext, the additional data and the tag, it is all a verifier needs to
/// check a record's AEAD tag; it yields no keystream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagMaterial {
    /// AES-GCM: `tag = GHASH_H(A, C) XOR E_K(J0)`.
    Gcm {
        /// The GHASH key `H = E_K(0^128)`, one per direction.
        hash_key: [u8; 16],
        /// Per record, in order: `E_K(J0)`, `J0 = nonce || 0x00000001`.
        masks: Vec<[u8; 16]>,
    },
    /// ChaCha20-Poly1305: `tag = Poly1305_otk(A, C)`.
    Poly1305 {
        /// Per record, in order: the one-time key, the first 32 bytes of the
        /// ChaCha20 block with counter 0 under the record's nonce.
        keys: Vec<[u8; 32]>,
    },
}

/// The result of a successful proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proven {
    /// Client to server.
    pub sent: DirectionProof,
    /// Server to client.
    pub recv: DirectionProof,
}

/// Limits that keep a statement's cost bounded (the verifier enforces its
/// transcript limits earlier; these only rule out nonsense).
const MAX_RECORD_LEN: usize = (1 << 14) + 256;
const MAX_RECORDS: usize = 1 << 16;
const MAX_PREFIX: usize = 1 << 10;
const MAX_BLINDER: usize = 64;

/// A direction's byte classes: at most [`MAX_BYTE_CLASSES`], forbidden
/// values strictly increasing and not empty, spans non-empty, increasing,
/// disjoint and within their records.
pub(crate) fn check_byte_classes(d: &DirectionStatement) -> Result<()> {
    if d.byte_classes.len() > MAX_BYTE_CLASSES {
        return Err(Error::Malformed(format!(
            "{} byte classes in a direction (at most {MAX_BYTE_CLASSES})",
            d.byte_classes.len()
        )));
    }
    for class in &d.byte_classes {
        if class.forbidden.is_empty() || class.forbidden.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::Malformed(
                "a byte class's forbidden values must be strictly increasing and not empty".into(),
            ));
        }
        let mut last: Option<(usize, usize)> = None;
        for (i, range) in &class.spans {
            let r = d.records.get(*i).ok_or_else(|| {
                Error::Malformed(format!(
                    "constrained span names record {i}, which does not exist"
                ))
            })?;
            if range.start > range.end || range.end > r.ciphertext.len() {
                return Err(Error::Malformed(format!(
                    "constrained span {range:?} is outside record {i} ({} bytes)",
                    r.ciphertext.len()
                )));
            }
            if range.is_empty() || last.is_some_and(|l| (*i, range.start) < l) {
                return Err(Error::Malformed(
                    "constrained spans must be non-empty, increasing and disjoint".into(),
                ));
            }
            last = Some((*i, range.end));
        }
    }
    Ok(())
}

/// Check commitments over `records`: prefix and blinder within bounds,
/// spans inside their records, non-empty, increasing and disjoint across
/// all commitments.
pub(crate) fn check_commitments(
    records: &[SealedRecord],
    commitments: &[Commitment],
) -> Result<()> {
    let mut last: (usize, usize) = (0, 0);
    for c in commitments {
        if c.prefix.len() > MAX_PREFIX || c.blinder_len > MAX_BLINDER {
            return Err(Error::Malformed(
                "commitment prefix or blinder too long".into(),
            ));
        }
        if c.spans.is_empty() {
            return Err(Error::Malformed("a commitment covers no plaintext".into()));
        }
        for (i, range) in &c.spans {
            let r = records.get(*i).ok_or_else(|| {
                Error::Malformed(format!(
                    "committed span names record {i}, which does not exist"
                ))
            })?;
            if range.start > range.end || range.end > r.ciphertext.len() {
                return Err(Error::Malformed(format!(
                    "committed span {range:?} is outside record {i} ({} bytes)",
                    r.ciphertext.len()
                )));
            }
            if range.is_empty() || (*i, range.start) < last {
                return Err(Error::Malformed(
                    "committed spans must be non-empty, increasing and disjoint".into(),
                ));
            }
            last = (*i, range.end);
        }
    }
    Ok(())
}

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
            let span_ok = |i: usize, range: &Range<usize>, what: &str| -> Result<()> {
                let r = d.records.get(i).ok_or_else(|| {
                    Error::Malformed(format!("{what} names record {i}, which does not exist"))
                })?;
                if range.start > range.end || range.end > r.ciphertext.len() {
                    return Err(Error::Malformed(format!(
                        "{what} {range:?} is outside record {i} ({} bytes)",
                        r.ciphertext.len()
                    )));
                }
                Ok(())
            };
            if let Disclosure::Ranges(ranges) = &d.disclosure {
                for (i, range) in ranges {
                    span_ok(*i, range, "disclosed range")?;
                }
            }
            check_byte_classes(d)?;
            check_commitments(&d.records, &d.commitments)?;
        }
        Ok(())
    }

    fn check_record(&self, r: &SealedRecord) -> Result<()> {
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

//! The verified response of a TLS 1.3 session: after `Close` /
//! `CloseAck`, a sealed QuickSilver proof (`webproof_zk`) that the server records
//! the verifier recorded after the server Finished decrypt, under the
//! server application key the key schedule's 2PC derived, to inner
//! plaintexts whose content types, padding and chosen byte ranges the
//! prover claims.
//!
//! # What is proven, and where each public value comes from
//! The key schedule's step 3 output the prover's key-block share as
//! output labels, IT-MACs under the verifier's `Δ` (the COT sender's,
//! the proof's too): both import them as authenticated bits (prover: MAC
//! and value; verifier: the 0-label) and XOR in the verifier's shares as
//! public constants (the prover's from `CloseAck`, the verifier's its
//! own masks), so both hold the authenticated server key and IV. The
//! prover claims ([`Claim13`]) the server IV in the clear (an HKDF output
//! that says nothing of the key), per server record its inner content
//! type and content length, the closing alert's two bytes, and the
//! revealed ranges of the response. In the proof (tlsproof's
//! `assert_plaintext` and `assert_tags`, with TLS 1.3 nonces: the IV XOR
//! the record's sequence number):
//! - the IV bits equal the claimed IV;
//! - each record's tag (over its header as additional data) is right
//!   under the key: the records reached the verifier through the prover,
//!   and CTR mode is malleable;
//! - each record's plaintext byte at its claimed content length is its
//!   claimed content type and every byte after it is zero: the inner
//!   type and padding are stripped inside the statement, so the response
//!   (the contents of the type-23 records, in order) has public
//!   boundaries the verifier computes itself;
//! - the claimed alert is the last record's content; each revealed byte
//!   is its record's keystream byte XOR the recorded ciphertext byte;
//! - the request (as TLS 1.2's `crate::response`): under the client key
//!   and the claimed client IV, each request record's masked ciphertext
//!   from the 2PC (the verifier never saw the ciphertext) XOR its mask
//!   (the hidden M2A's COT choice bits, imported as authenticated bits)
//!   XOR the keystream has inner content type 23 and the claimed request
//!   bytes; under ChaCha20-Poly1305 the masked ciphertext is `D¹` and
//!   its second copy `D²` is tied to it (`D¹ ⊕ χ¹ = D² ⊕ χ²`, padding
//!   zero: `crate::response::prove_chacha_copies`, as TLS 1.2's), and the
//!   tags are Poly1305's under the same 12-byte IV nonce form;
//! - the hidden bytes of the request's heads the claim names
//!   ([`Claim13::request_crlf_free`], offsets into the request) are none
//!   of CR and LF (`webproof_tlsproof::assert_byte_classes` over the same
//!   masked plaintext), so the verifier can fix where each pipelined
//!   request ends and pair each response with its request
//!   (`webproof_disclosure::exchange`). The verifier maps the offsets to
//!   record spans itself, over the records' contents: each record's
//!   inner content type byte lies past its content, so no span takes it;
//! - with the prover's commitment to the transcript (an attestation), each
//!   leaf's hash over its plaintext, the prover's blinder its witness.
//!
//! The verifier takes the records (sequence numbers from 0 after the
//! server Finished, their ciphertexts, tags and headers) from its own
//! recording, and checks the claim's shape against it before the proof:
//! one entry per record, each content within its record, a type of
//! application data, handshake (a NewSessionTicket; a KeyUpdate's next
//! record would fail its tag under this key) or alert, an alert only
//! last, every range within the response, the ranges free of line ends
//! sorted, disjoint, non-empty, at most `crate::response::MAX_CRLF_FREE`
//! and within the request.
//!
//! # The run (one channel), as TLS 1.2's
//! 1. verifier → prover: its input bits of every garbled circuit
//!    ([`super::audit::reveal_bits`]; the recording is final, they protect
//!    nothing any more);
//! 2. prover → verifier: the claim's shape ([`Claim13::shape`]: the
//!    revealed bytes' places and lengths and a salted commitment to them,
//!    not the bytes); the verifier checks it against its recording;
//! 3. both run the statement above in a proof bound to the recording and
//!    the shape, deferred, its claimed bytes deferred to the commitment;
//!    the prover seals;
//! 4. the verifier reveals `Δ`, the prover checks it against fresh COTs
//!    and audits the garbling ([`super::audit`]); only then it discloses
//!    the bytes with the salt and opens;
//! 5. the verifier checks the disclosure against the commitment, the
//!    opening, and the disclosed bytes as the proof's claimed values.
//!
//! # Not yet (see `docs/protocol/mpc-tls13.md`)
//! No consistency proof in ZK of the garbled circuits (`crate::consist`
//! knows TLS 1.2's circuits only; the audit checks the garbling and the
//! chaining holds by construction of the labels).

use super::{Tls13ProverSession, Tls13VerifierSession};
use crate::error::{Error, Result};
use crate::kdf::tls13::IV_LEN;
use crate::response::{crlf_free_spans_of, mpc_err, zk_err, MAX_CRLF_FREE};
use core::ops::Range;
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use webproof_attestation::commit::check_layout;
use webproof_attestation::{Direction as LeafDir, LeafRange, TranscriptCommitment};
use webproof_circuits::bytes_to_bits;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Channel, Io};
use webproof_disclosure::attest::{leaf_commitments, MAX_LEAVES};
use webproof_mpc::consistency;
use webproof_tls::record::{content_type, Record};
use webproof_tls::Recording;
use webproof_tlsproof::{Aead, ByteClass, PlaintextClaim, RecordTag, SealedRecord};
use webproof_zk::{Config, Prover, Verifier};

/// Most revealed ranges in a claim.
const MAX_RANGES: usize = 256;

/// The AEAD tag (AES-GCM's, Poly1305's).
const TAG: usize = 16;

/// The server key's and the server IV's bits in the key block
/// (`client_key ‖ server_key ‖ client_iv ‖ server_iv`) of `key_len`-byte
/// keys.
fn server_bits(key_len: usize) -> (Range<usize>, Range<usize>) {
    let (k, i) = (8 * key_len, 8 * IV_LEN);
    (k..2 * k, 2 * k + i..2 * k + 2 * i)
}

/// The AEAD of a TLS 1.3 suite MPC mode runs, and its key length.
fn aead_of(suite: webproof_tls::CipherSuite) -> Result<(Aead, usize)> {
    let key_len = super::schedule_of(suite)?.key_len;
    Ok(match (super::is_chacha(suite), key_len) {
        (true, _) => (Aead::ChaCha20Poly1305, key_len),
        (false, 16) => (Aead::Aes128Gcm, 16),
        _ => (Aead::Aes256Gcm, 32),
    })
}

/// What the prover claims of the server's records after its Finished,
/// and of its request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim13 {
    /// The server application IV.
    pub server_iv: [u8; IV_LEN],
    /// Per record: inner content type and content length.
    pub records: Vec<(u8, usize)>,
    /// The last record's content, if it is an alert.
    pub alert: Option<[u8; 2]>,
    /// Revealed ranges of the response: offset and bytes.
    pub ranges: Vec<(usize, Vec<u8>)>,
    /// The client application IV.
    pub client_iv: [u8; IV_LEN],
    /// Revealed ranges of the request: offset and bytes.
    pub request: Vec<(usize, Vec<u8>)>,
    /// Hidden ranges of the request (offset, length) the proof shows to
    /// hold no CR or LF, as TLS 1.2's
    /// `crate::ResponseClaim::request_crlf_free`: the hidden bytes of its
    /// heads (`webproof_disclosure::exchange::hidden_head_bytes`), so the
    /// verifier can fix where each request ends and pair the responses.
    /// Offsets into the request (the records' contents in order), never
    /// into a record's inner plaintext: no span reaches a record's inner
    /// content type byte.
    pub request_crlf_free: Vec<(usize, usize)>,
    /// For an attestation: the leaves of the prover's commitment to the
    /// request and the response (partitioning both, in order) and their
    /// hashes (empty: no attestation).
    pub leaves: Vec<LeafRange>,
    /// One hash per leaf.
    pub leaf_hashes: Vec<[u8; 32]>,
}

/// `ranges` of `data`, each with its offset.
fn cut(data: &[u8], ranges: &[Range<usize>], what: &str) -> Result<Vec<(usize, Vec<u8>)>> {
    ranges
        .iter()
        .map(|r| {
            data.get(r.clone())
                .map(|b| (r.start, b.to_vec()))
                .ok_or_else(|| Error::Usage(format!("a range outside the {what}")))
        })
        .collect()
}

impl Claim13 {
    /// The prover's claim revealing `ranges` of the response it
    /// decrypted (and nothing of the request: [`Self::with_request`]).
    pub fn new(p: &Tls13ProverSession, ranges: &[Range<usize>]) -> Result<Self> {
        let r = p
            .response()
            .ok_or(Error::OutOfOrder("a claim before CloseAck"))?;
        let (_, own) = p.key_block()?;
        let keys = r.revealed.combine(&own);
        let iv = |v: Vec<u8>| -> Result<[u8; IV_LEN]> {
            v.try_into().map_err(|_| Error::Malformed("IV length"))
        };
        Ok(Claim13 {
            server_iv: iv(keys.server_iv)?,
            records: r.records.clone(),
            alert: r.alert,
            ranges: cut(&r.response, ranges, "response")?,
            client_iv: iv(keys.client_iv)?,
            request: Vec::new(),
            request_crlf_free: Vec::new(),
            leaves: Vec::new(),
            leaf_hashes: Vec::new(),
        })
    }

    /// The claim committing to the transcript for an attestation:
    /// `commitment` is the prover's over this session's request and
    /// response (its blinders are the proof's witness,
    /// `webproof_disclosure::attest::blinders`).
    pub fn with_commitment(mut self, commitment: &TranscriptCommitment) -> Self {
        self.leaves = commitment.leaves().to_vec();
        self.leaf_hashes = commitment.leaf_hashes().to_vec();
        self
    }

    /// The leaves of `direction`, their hashes and (the prover's) their
    /// blinders, in order.
    fn leaves_of(&self, direction: LeafDir, blinders: Option<&[[u8; 16]]>) -> Leaves {
        let pick = |i: usize| self.leaves[i].direction == direction;
        let idx: Vec<usize> = (0..self.leaves.len()).filter(|&i| pick(i)).collect();
        Leaves {
            leaves: idx.iter().map(|&i| self.leaves[i]).collect(),
            hashes: idx.iter().map(|&i| self.leaf_hashes[i]).collect(),
            blinders: blinders.map(|b| idx.iter().map(|&i| b[i].to_vec()).collect()),
        }
    }

    /// The claim revealing `ranges` of the request too.
    pub fn with_request(mut self, p: &Tls13ProverSession, ranges: &[Range<usize>]) -> Result<Self> {
        self.request = cut(p.request(), ranges, "request")?;
        Ok(self)
    }

    /// The claim proving `ranges` of the request (hidden bytes of its
    /// heads) free of CR and LF: sorted, disjoint, non-empty, within it
    /// (the statement refuses others, on both sides, before the proof).
    pub fn with_request_crlf_free(mut self, ranges: &[Range<usize>]) -> Self {
        self.request_crlf_free = ranges.iter().map(|r| (r.start, r.len())).collect();
        self
    }

    /// Bytes: the server IV, the record count and per record its type and
    /// length (u32), an alert flag and the alert, the range count and
    /// per range its offset, length and bytes; then the client IV and the
    /// request's ranges alike; the count of the request's ranges free of
    /// line ends and per range its offset and length; the leaves (u32
    /// big-endian).
    pub fn encode(&self) -> Vec<u8> {
        let ranges = |v: &mut Vec<u8>, rs: &[(usize, Vec<u8>)]| {
            v.extend((rs.len() as u32).to_be_bytes());
            for (o, b) in rs {
                v.extend((*o as u32).to_be_bytes());
                v.extend((b.len() as u32).to_be_bytes());
                v.extend(b);
            }
        };
        let mut v = self.server_iv.to_vec();
        v.extend((self.records.len() as u32).to_be_bytes());
        for (t, l) in &self.records {
            v.push(*t);
            v.extend((*l as u32).to_be_bytes());
        }
        match self.alert {
            Some(a) => v.extend([1, a[0], a[1]]),
            None => v.push(0),
        }
        ranges(&mut v, &self.ranges);
        v.extend(self.client_iv);
        ranges(&mut v, &self.request);
        v.extend((self.request_crlf_free.len() as u32).to_be_bytes());
        for (o, l) in &self.request_crlf_free {
            v.extend((*o as u32).to_be_bytes());
            v.extend((*l as u32).to_be_bytes());
        }
        v.extend((self.leaves.len() as u32).to_be_bytes());
        for (l, h) in self.leaves.iter().zip(&self.leaf_hashes) {
            v.push(matches!(l.direction, LeafDir::Received) as u8);
            v.extend(l.start.to_be_bytes());
            v.extend(l.end.to_be_bytes());
            v.extend(h);
        }
        v
    }

    /// Parse [`Self::encode`]'s bytes; every count is checked against the
    /// bytes present before anything is allocated.
    pub fn decode(b: &[u8]) -> Result<Self> {
        let mut r = Reader(b);
        let server_iv: [u8; IV_LEN] = r.take(IV_LEN)?.try_into().expect("12");
        let n = r.u32()?;
        let mut records = Vec::new();
        for _ in 0..n {
            let t = r.take(1)?[0];
            records.push((t, r.u32()?));
        }
        let alert = match r.take(1)?[0] {
            0 => None,
            1 => Some(r.take(2)?.try_into().expect("2")),
            _ => return Err(Reader::BAD),
        };
        let ranges = r.ranges()?;
        let client_iv: [u8; IV_LEN] = r.take(IV_LEN)?.try_into().expect("12");
        let request = r.ranges()?;
        let n = r.u32()?;
        // Eight bytes each: a count beyond the message is refused before
        // anything is reserved for it.
        if n > MAX_CRLF_FREE || n > r.0.len() / 8 {
            return Err(Error::Malformed("too many ranges free of line ends"));
        }
        let mut request_crlf_free = Vec::with_capacity(n);
        for _ in 0..n {
            let o = r.u32()?;
            request_crlf_free.push((o, r.u32()?));
        }
        let n = r.u32()?;
        if n > MAX_LEAVES {
            return Err(Error::Malformed("too many leaves"));
        }
        let (mut leaves, mut leaf_hashes) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let direction = match r.take(1)?[0] {
                0 => LeafDir::Sent,
                1 => LeafDir::Received,
                _ => return Err(Reader::BAD),
            };
            let (start, end) = (r.u32()? as u32, r.u32()? as u32);
            leaves.push(LeafRange {
                direction,
                start,
                end,
            });
            leaf_hashes.push(r.take(32)?.try_into().expect("32"));
        }
        if !r.0.is_empty() {
            return Err(Reader::BAD);
        }
        Ok(Claim13 {
            server_iv,
            records,
            alert,
            ranges,
            client_iv,
            request,
            request_crlf_free,
            leaves,
            leaf_hashes,
        })
    }
}

/// A bounds-checked reader of a claim's bytes.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    const BAD: Error = Error::Malformed("a TLS 1.3 response claim");

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(Self::BAD);
        }
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(a)
    }

    fn u32(&mut self) -> Result<usize> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4")) as usize)
    }

    fn ranges(&mut self) -> Result<Vec<(usize, Vec<u8>)>> {
        let m = self.u32()?;
        if m > MAX_RANGES {
            return Err(Error::Malformed("too many ranges"));
        }
        let mut out = Vec::new();
        for _ in 0..m {
            let o = self.u32()?;
            let l = self.u32()?;
            out.push((o, self.take(l)?.to_vec()));
        }
        Ok(out)
    }
}

/// The label of the commitment to the revealed bytes.
const BYTES_LABEL: &[u8] = b"webproof mpc-tls13 revealed bytes v1";

impl Claim13 {
    /// The revealed bytes, in range order: the response's, then the
    /// request's.
    fn bytes(&self) -> Vec<u8> {
        self.ranges
            .iter()
            .chain(&self.request)
            .flat_map(|(_, b)| b.iter().copied())
            .collect()
    }

    /// The commitment to the revealed bytes under `salt`.
    fn commitment(&self, salt: &[u8; 32]) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(BYTES_LABEL);
        h.update(salt);
        h.update(self.bytes());
        h.finalize().into()
    }

    /// The claim's shape, what the verifier gets before the proof: the
    /// claim without the revealed bytes (their places and lengths only),
    /// then the commitment to them.
    pub fn shape(&self, salt: &[u8; 32]) -> Vec<u8> {
        let zero =
            |rs: &[(usize, Vec<u8>)]| rs.iter().map(|(o, b)| (*o, vec![0; b.len()])).collect();
        let blank = Claim13 {
            ranges: zero(&self.ranges),
            request: zero(&self.request),
            ..self.clone()
        };
        [blank.encode(), self.commitment(salt).to_vec()].concat()
    }

    /// Parse [`Self::shape`]: the claim with zeros in place of the
    /// revealed bytes, and the commitment.
    pub fn decode_shape(b: &[u8]) -> Result<(Self, [u8; 32])> {
        let cut = b
            .len()
            .checked_sub(32)
            .ok_or(Error::Malformed("a TLS 1.3 claim shape"))?;
        let c = Claim13::decode(&b[..cut])?;
        if c.ranges
            .iter()
            .chain(&c.request)
            .any(|(_, r)| r.iter().any(|&x| x != 0))
        {
            return Err(Error::Malformed("revealed bytes in a claim shape"));
        }
        Ok((c, b[cut..].try_into().expect("32 bytes")))
    }

    /// The disclosure after the audit: the salt and the bytes.
    fn disclosure(&self, salt: &[u8; 32]) -> Vec<u8> {
        [&salt[..], &self.bytes()].concat()
    }

    /// The shape with the disclosed bytes in place, if they open the
    /// commitment.
    fn open(mut self, commitment: &[u8; 32], disclosure: &[u8]) -> Result<Self> {
        let n: usize = self
            .ranges
            .iter()
            .chain(&self.request)
            .map(|(_, b)| b.len())
            .sum();
        if disclosure.len() != 32 + n {
            return Err(Error::Proof("a disclosure of another length".into()));
        }
        let (salt, mut bytes) = disclosure.split_at(32);
        for (_, b) in self.ranges.iter_mut().chain(self.request.iter_mut()) {
            let (head, tail) = bytes.split_at(b.len());
            b.copy_from_slice(head);
            bytes = tail;
        }
        if self.commitment(salt.try_into().expect("32 bytes")) != *commitment {
            return Err(Error::Proof(
                "the disclosed bytes do not open the commitment".into(),
            ));
        }
        Ok(self)
    }
}

/// What the verifier establishes: the response's length and the revealed
/// ranges at their offsets in it; whether the server closed with
/// close_notify (the last record proven to be that alert).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified13 {
    /// Bytes of the response (the type-23 records' contents).
    pub response_len: usize,
    /// The revealed ranges.
    pub ranges: Vec<(usize, Vec<u8>)>,
    /// The last record is a close_notify alert.
    pub close_notify: bool,
    /// Records of inner type handshake (NewSessionTicket), not part of
    /// the response.
    pub handshake_records: usize,
    /// Per server record after the Finished, its bytes of the response
    /// (0 for a handshake record or the alert).
    pub app_lens: Vec<usize>,
    /// Bytes of the request (its records' contents).
    pub request_len: usize,
    /// The revealed ranges of the request.
    pub request_ranges: Vec<(usize, Vec<u8>)>,
    /// Hidden ranges of the request proven to hold no CR or LF.
    pub request_crlf_free: Vec<Range<usize>>,
    /// The proven leaves of the prover's commitment (empty: none).
    pub leaves: Vec<LeafRange>,
    /// Their hashes.
    pub leaf_hashes: Vec<[u8; 32]>,
}

/// One direction's committed leaves: what the statement proves of them.
struct Leaves {
    leaves: Vec<LeafRange>,
    hashes: Vec<[u8; 32]>,
    /// The prover's blinders (the verifier has none).
    blinders: Option<Vec<Vec<u8>>>,
}

/// The leaves' hashes over the plaintext of `records` (each record's
/// content first in its inner plaintext, `record_data[i]` bytes of it,
/// as `webproof_attestation::commit` hashes a leaf), asserted in the
/// proof; nothing when there are none.
#[allow(clippy::too_many_arguments)]
async fn assert_leaves<P: webproof_tlsproof::ZkParty<Bit = B>, B: Copy>(
    zk: &mut P,
    aead: Aead,
    key: &[B],
    iv: &[u8],
    records: &[SealedRecord],
    masks: &[Vec<B>],
    record_data: &[usize],
    leaves: &Leaves,
) -> Result<()> {
    let Some(first) = leaves.leaves.first() else {
        return Ok(());
    };
    let commitments = leaf_commitments(&leaves.leaves, first.direction, record_data)
        .map_err(Error::Disclosure)?;
    webproof_tlsproof::assert_commitments(
        zk,
        aead,
        key,
        iv,
        records,
        masks,
        &commitments,
        leaves.blinders.as_deref(),
        &leaves.hashes,
    )
    .await
    .map_err(zk_err)
}

/// The claim's leaves, one hash each, partition the request (`sent_len`
/// bytes) and the response (`received_len`) in order.
fn check_leaves(claim: &Claim13, sent_len: usize, received_len: usize) -> Result<()> {
    if claim.leaves.is_empty() {
        return Ok(());
    }
    let len = |n: usize| u32::try_from(n).map_err(|_| Error::Malformed("transcript too long"));
    if claim.leaf_hashes.len() != claim.leaves.len() {
        return Err(Error::Malformed("one hash per committed leaf is needed"));
    }
    check_layout(&claim.leaves, len(sent_len)?, len(received_len)?).map_err(|e| {
        Error::Disclosure(webproof_disclosure::DisclosureError::Attestation(format!(
            "committed leaves: {e}"
        )))
    })
}

/// The statement's public parts, from a recording and a claim checked
/// against it.
struct Statement {
    records: Vec<SealedRecord>,
    tags: Vec<RecordTag>,
    claims: Vec<PlaintextClaim>,
    verified: Verified13,
}

/// The claim against the server records `recv[start..]` (the verifier's
/// recording, or the prover's, which is the same bytes): the statement.
fn statement(recv: &[Record], start: usize, claim: &Claim13) -> Result<Statement> {
    let recs = recv
        .get(start..)
        .ok_or(Error::Recording("no records".into()))?;
    if recs.len() != claim.records.len() {
        return Err(Error::Malformed(
            "a claim naming another number of server records than recorded",
        ));
    }
    let mut st = Statement {
        records: Vec::new(),
        tags: Vec::new(),
        claims: Vec::new(),
        verified: Verified13 {
            response_len: 0,
            ranges: claim.ranges.clone(),
            close_notify: false,
            handshake_records: 0,
            app_lens: Vec::new(),
            request_len: 0,
            request_ranges: claim.request.clone(),
            request_crlf_free: claim
                .request_crlf_free
                .iter()
                // Checked against the request by `request_statement`;
                // saturating so that a prover's unchecked claim cannot
                // overflow here first.
                .map(|&(at, n)| at..at.saturating_add(n))
                .collect(),
            leaves: claim.leaves.clone(),
            leaf_hashes: claim.leaf_hashes.clone(),
        },
    };
    // (index, offset in the response, length) of each application record.
    let mut app = Vec::new();
    for (i, (rec, &(typ, len))) in recs.iter().zip(&claim.records).enumerate() {
        let p = &rec.payload;
        if rec.content_type != content_type::APPLICATION_DATA || p.len() < TAG + 1 {
            return Err(Error::Recording(format!(
                "server record {i} after the Finished is no TLS 1.3 protected record"
            )));
        }
        let ct = &p[..p.len() - TAG];
        // The content, its type, then zeros: at least the type byte.
        if len >= ct.len() {
            return Err(Error::Malformed("a claimed content length past its record"));
        }
        let last = i + 1 == recs.len();
        st.verified
            .app_lens
            .push(if typ == content_type::APPLICATION_DATA {
                len
            } else {
                0
            });
        match typ {
            content_type::APPLICATION_DATA => {
                app.push((i, st.verified.response_len, len));
                st.verified.response_len += len;
            }
            content_type::HANDSHAKE => st.verified.handshake_records += 1,
            content_type::ALERT if last && len == 2 => {
                let a = claim
                    .alert
                    .ok_or(Error::Malformed("an alert record without its bytes"))?;
                st.claims.push(PlaintextClaim {
                    record: i,
                    offset: 0,
                    bytes: a.to_vec(),
                });
                st.verified.close_notify = a[1] == 0;
            }
            _ => {
                return Err(Error::Malformed(
                    "a claimed inner content type out of place",
                ))
            }
        }
        let mut tail = vec![0u8; ct.len() - len];
        tail[0] = typ;
        st.claims.push(PlaintextClaim {
            record: i,
            offset: len,
            bytes: tail,
        });
        st.records.push(SealedRecord {
            seq: i as u64,
            explicit_nonce: None,
            ciphertext: ct.to_vec(),
        });
        st.tags.push(RecordTag {
            aad: rec.header().to_vec(),
            tag: p[p.len() - TAG..].try_into().expect("16 bytes"),
        });
    }
    if claim.alert.is_some() && !matches!(claim.records.last(), Some(&(content_type::ALERT, 2))) {
        return Err(Error::Malformed("alert bytes without an alert record last"));
    }
    let total = st.verified.response_len;
    map_ranges(&app, total, &claim.ranges, &mut st.claims)?;
    Ok(st)
}

/// Per-record claims for `ranges` of a stream whose records hold
/// `app[k] = (record index, offset in the stream, length)` of its
/// `total` bytes; a range outside the stream is refused.
fn map_ranges(
    app: &[(usize, usize, usize)],
    total: usize,
    ranges: &[(usize, Vec<u8>)],
    claims: &mut Vec<PlaintextClaim>,
) -> Result<()> {
    for (at, bytes) in ranges {
        let end = at
            .checked_add(bytes.len())
            .filter(|&e| e <= total)
            .ok_or(Error::Malformed("a revealed range outside its direction"))?;
        let mut pos = *at;
        while pos < end {
            let k = app.partition_point(|&(_, off, len)| off + len <= pos);
            let (ri, off, len) = app[k];
            let stop = end.min(off + len);
            claims.push(PlaintextClaim {
                record: ri,
                offset: pos - off,
                bytes: bytes[pos - at..stop - at].to_vec(),
            });
            pos = stop;
        }
    }
    Ok(())
}

/// The request's part of the statement: per request record its masked
/// ciphertext (`C ⊕ ρ`, the 2PC's: the verifier never saw `C`), the
/// claim that its inner content type is 23 (application data: the
/// request's bytes are its content), the revealed ranges of the
/// request, and the spans of its hidden head bytes to prove free of CR
/// and LF.
struct RequestStatement {
    records: Vec<SealedRecord>,
    claims: Vec<PlaintextClaim>,
    len: usize,
    /// Each record's content length.
    lens: Vec<usize>,
    /// [`Claim13::request_crlf_free`] as `(record index, range of its
    /// inner plaintext)`: within the records' contents, so never over an
    /// inner content type byte.
    crlf_free: Vec<(usize, Range<usize>)>,
}

/// The request's statement of `claim` over `hidden` (the request records
/// as the 2PC ran them: their lengths are the recording's, their masked
/// ciphertexts the verifier's own); refuses ranges outside the request and
/// ranges free of line ends that are not sorted, disjoint and non-empty.
fn request_statement(
    hidden: &[crate::rec::HiddenRecord],
    claim: &Claim13,
) -> Result<RequestStatement> {
    let ranges = &claim.request;
    let mut st = RequestStatement {
        records: Vec::new(),
        claims: Vec::new(),
        len: 0,
        lens: Vec::new(),
        crlf_free: Vec::new(),
    };
    let mut app = Vec::new();
    for (i, h) in hidden.iter().enumerate() {
        let inner = h.masked.len();
        if inner == 0 || h.cots.len() != crate::response::hide_cots_of(h) {
            return Err(Error::Malformed("a request record of another shape"));
        }
        let content = inner - 1;
        st.lens.push(content);
        app.push((i, st.len, content));
        st.len += content;
        st.claims.push(PlaintextClaim {
            record: i,
            offset: content,
            bytes: vec![content_type::APPLICATION_DATA],
        });
        st.records.push(SealedRecord {
            seq: i as u64,
            explicit_nonce: None,
            ciphertext: h.masked.clone(),
        });
    }
    let total = st.len;
    map_ranges(&app, total, ranges, &mut st.claims)?;
    // The offsets are into the request: `app` holds each record's content
    // only, so a span ends at its record's content, before the type byte.
    st.crlf_free = crlf_free_spans_of(&app, total, &claim.request_crlf_free)?;
    Ok(st)
}

/// The byte class of the request's spans free of line ends, if any (the
/// statement asserts it under the client key, after the request's
/// revealed bytes).
fn crlf_class(rst: &RequestStatement) -> Option<ByteClass> {
    (!rst.crlf_free.is_empty()).then(|| ByteClass {
        forbidden: vec![b'\n', b'\r'],
        spans: rst.crlf_free.clone(),
    })
}

/// The client key's and the client IV's bits in the key block.
fn client_bits(key_len: usize) -> (Range<usize>, Range<usize>) {
    let (k, i) = (8 * key_len, 8 * IV_LEN);
    (0..k, 2 * k..2 * k + i)
}

/// The proof's context: the recording and the claim's shape.
fn context(recording: &Recording, shape: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof mpc-tls13 verified response v2");
    h.update(recording.digest());
    h.update(shape);
    h.finalize().into()
}

/// The prover's run on `ch` with the session's COT correlation (`cot`:
/// the receiver whose sender's `Δ` is the garbler's): the claim's shape
/// (the revealed bytes committed to, not sent), the sealed proof, then
/// `Δ` and the audit of the verifier's garbling ([`super::audit`]), and
/// only if the audit passed the disclosure of the bytes and the opening.
pub async fn prove_response13<C: RandomCotReceiver, T: Io>(
    cot: C,
    mut ch: Channel<T>,
    cfg: Config,
    p: &Tls13ProverSession,
    claim: &Claim13,
    blinders: &[[u8; 16]],
    rng: &mut (impl RngCore + CryptoRng),
) -> Result<(C, Channel<T>)> {
    if blinders.len() != claim.leaves.len() {
        return Err(Error::Usage(
            "one blinder per committed leaf is needed".into(),
        ));
    }
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    let start = p.server_app_start().ok_or(Error::OutOfOrder("the proof"))?;
    let r = p
        .response()
        .ok_or(Error::OutOfOrder("the proof before CloseAck"))?;
    let st = statement(&p.recording().received, start, claim)?;
    let hidden = p.hidden_records();
    let rst = request_statement(&hidden, claim)?;
    check_leaves(claim, rst.len, st.verified.response_len)?;
    let mut salt = [0u8; 32];
    rng.fill_bytes(&mut salt);
    let shape = claim.shape(&salt);
    ch.send(&shape).await.map_err(io)?;
    ch.flush().await.map_err(io)?;
    // The verifier's input bits, sent by it unasked after `CloseAck`.
    let reveal = ch.recv(super::audit::reveal_len(p)?).await.map_err(io)?;
    let mut zk = Prover::with_context(cot, ch, cfg, &context(p.recording(), &shape))
        .await
        .map_err(zk_err)?;
    zk.defer();
    zk.defer_claims(claim.commitment(&salt)).map_err(zk_err)?;
    let (labels, own) = p.key_block()?;
    let kb = [
        &own.client_key[..],
        &own.server_key,
        &own.client_iv,
        &own.server_iv,
    ]
    .concat();
    let bits = zk
        .import_labels(&labels, &bytes_to_bits(&kb))
        .map_err(zk_err)?;
    let (aead, key_len) = aead_of(p.suite())?;
    let (kr, ir) = server_bits(key_len);
    let key =
        consistency::xor_public_prover(&zk, &bits[kr], &bytes_to_bits(&r.revealed.server_key))
            .map_err(mpc_err)?;
    let iv = consistency::xor_public_prover(&zk, &bits[ir], &bytes_to_bits(&r.revealed.server_iv))
        .map_err(mpc_err)?;
    zk.assert_public(&iv, &bytes_to_bits(&claim.server_iv))
        .await
        .map_err(zk_err)?;
    webproof_tlsproof::assert_plaintext(
        &mut zk,
        aead,
        &key,
        &claim.server_iv,
        &st.records,
        &st.claims,
    )
    .await
    .map_err(zk_err)?;
    webproof_tlsproof::assert_tags(&mut zk, aead, &key, &claim.server_iv, &st.records, &st.tags)
        .await
        .map_err(zk_err)?;
    assert_leaves(
        &mut zk,
        aead,
        &key,
        &claim.server_iv,
        &st.records,
        &[],
        &st.verified.app_lens,
        &claim.leaves_of(LeafDir::Received, Some(blinders)),
    )
    .await?;
    // The request: under the client key, its masked ciphertexts with the
    // masks as the hidden M2A's COT choice bits (each MAC's lsb).
    let (ck, ci) = client_bits(key_len);
    let ckey =
        consistency::xor_public_prover(&zk, &bits[ck], &bytes_to_bits(&r.revealed.client_key))
            .map_err(mpc_err)?;
    let civ = consistency::xor_public_prover(&zk, &bits[ci], &bytes_to_bits(&r.revealed.client_iv))
        .map_err(mpc_err)?;
    zk.assert_public(&civ, &bytes_to_bits(&claim.client_iv))
        .await
        .map_err(zk_err)?;
    let mut mask_bits = Vec::with_capacity(hidden.len());
    for h in &hidden {
        let choices: Vec<bool> = h.cots.iter().map(|m| m.lsb()).collect();
        mask_bits.push(zk.import_labels(&h.cots, &choices).map_err(zk_err)?);
    }
    // ChaCha20-Poly1305's second masked copy tied to the first.
    crate::response::prove_chacha_copies(&mut zk, &hidden, &mask_bits).await?;
    let masks = crate::response::masks_in_byte_order(&hidden, mask_bits);
    webproof_tlsproof::assert_masked_plaintext(
        &mut zk,
        aead,
        &ckey,
        &claim.client_iv,
        &rst.records,
        &masks,
        &rst.claims,
    )
    .await
    .map_err(zk_err)?;
    if let Some(class) = crlf_class(&rst) {
        webproof_tlsproof::assert_byte_classes(
            &mut zk,
            aead,
            &ckey,
            &claim.client_iv,
            &rst.records,
            &masks,
            &[class],
        )
        .await
        .map_err(zk_err)?;
    }
    assert_leaves(
        &mut zk,
        aead,
        &ckey,
        &claim.client_iv,
        &rst.records,
        &masks,
        &rst.lens,
        &claim.leaves_of(LeafDir::Sent, Some(blinders)),
    )
    .await?;
    let mut seal_salt = [0u8; 32];
    rng.fill_bytes(&mut seal_salt);
    let mut sealed = zk.seal(seal_salt).await.map_err(zk_err)?;
    let delta = consistency::receive_delta(&mut sealed)
        .await
        .map_err(mpc_err)?;
    // Only an honest garbling gets the revealed bytes and the opening.
    super::audit::audit13(p, &reveal, delta)?;
    let (_, ch) = sealed.parts();
    ch.send(&claim.disclosure(&salt)).await.map_err(io)?;
    sealed.open().await.map_err(zk_err)
}

/// The verifier's run: its input bits, the claim's shape checked against
/// its recording, the sealed proof, `Δ`, then the disclosure checked
/// against the commitment and the claimed values; the revealed ranges,
/// valid only if this returns `Ok`.
pub async fn verify_response13<C: RandomCotSender, T: Io>(
    cot: C,
    mut ch: Channel<T>,
    cfg: Config,
    v: &Tls13VerifierSession,
    can_attest: bool,
    rng: &mut (impl RngCore + CryptoRng),
) -> Result<Verified13> {
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    let start = v.server_app_start().ok_or(Error::OutOfOrder("the proof"))?;
    let recording = v.recording();
    // The reveal protects nothing after `Close`: it goes first, so the
    // prover's proof need not wait for it.
    ch.send(&super::audit::reveal_bits(v)?).await.map_err(io)?;
    ch.flush().await.map_err(io)?;
    // Both IVs, a type and length per record, the alert, the places of
    // both directions' ranges, the request's ranges free of line ends,
    // the leaves (41 bytes each, each at least a recorded byte), the
    // commitment.
    let payloads: usize = recording
        .received
        .iter()
        .chain(&recording.sent)
        .map(|r| r.payload.len())
        .sum();
    let max = 2 * IV_LEN
        + 4
        + 5 * recording.received.len()
        + 3
        + 2 * (4 + 8 * MAX_RANGES)
        + 4
        + 8 * MAX_CRLF_FREE
        + 4
        + 41 * MAX_LEAVES.min(payloads)
        + 32;
    let shape = ch.recv(max).await.map_err(io)?;
    let (blank, commitment) = Claim13::decode_shape(&shape)?;
    let st = statement(&recording.received, start, &blank)?;
    let hidden = v.hidden_records();
    let rst = request_statement(&hidden, &blank)?;
    if !blank.leaves.is_empty() && !can_attest {
        // A commitment costs the proof work for a signature this verifier
        // cannot give.
        return Err(Error::Disclosure(
            webproof_disclosure::DisclosureError::Attestation(
                "this verifier does not sign attestations (it has no attestation key)".into(),
            ),
        ));
    }
    check_leaves(&blank, rst.len, st.verified.response_len)?;
    let (zero, masks, delta) = v.key_block()?;
    let mut zk = Verifier::with_context(cot, ch, cfg, &context(recording, &shape), rng)
        .await
        .map_err(zk_err)?;
    if zk.delta() != delta {
        return Err(Error::Usage(
            "the proof's COT sender has another Delta than the garbler".into(),
        ));
    }
    zk.defer();
    zk.defer_claims(commitment).map_err(zk_err)?;
    let bits = zk.import_labels(&zero);
    let (aead, key_len) = aead_of(v.suite())?;
    let (kr, ir) = server_bits(key_len);
    let key = consistency::xor_public_verifier(&zk, &bits[kr], &bytes_to_bits(&masks.server_key))
        .map_err(mpc_err)?;
    let iv = consistency::xor_public_verifier(&zk, &bits[ir], &bytes_to_bits(&masks.server_iv))
        .map_err(mpc_err)?;
    zk.assert_public(&iv, &bytes_to_bits(&blank.server_iv))
        .await
        .map_err(zk_err)?;
    webproof_tlsproof::assert_plaintext(
        &mut zk,
        aead,
        &key,
        &blank.server_iv,
        &st.records,
        &st.claims,
    )
    .await
    .map_err(zk_err)?;
    webproof_tlsproof::assert_tags(&mut zk, aead, &key, &blank.server_iv, &st.records, &st.tags)
        .await
        .map_err(zk_err)?;
    assert_leaves(
        &mut zk,
        aead,
        &key,
        &blank.server_iv,
        &st.records,
        &[],
        &st.verified.app_lens,
        &blank.leaves_of(LeafDir::Received, None),
    )
    .await?;
    // The request, as the prover's side: the COT keys are the masks'
    // 0-labels (their flips are zero).
    let (ck, ci) = client_bits(key_len);
    let ckey = consistency::xor_public_verifier(&zk, &bits[ck], &bytes_to_bits(&masks.client_key))
        .map_err(mpc_err)?;
    let civ = consistency::xor_public_verifier(&zk, &bits[ci], &bytes_to_bits(&masks.client_iv))
        .map_err(mpc_err)?;
    zk.assert_public(&civ, &bytes_to_bits(&blank.client_iv))
        .await
        .map_err(zk_err)?;
    let mask_bits: Vec<_> = hidden.iter().map(|h| zk.import_labels(&h.cots)).collect();
    crate::response::verify_chacha_copies(&mut zk, &hidden, &mask_bits).await?;
    let cmasks = crate::response::masks_in_byte_order(&hidden, mask_bits);
    webproof_tlsproof::assert_masked_plaintext(
        &mut zk,
        aead,
        &ckey,
        &blank.client_iv,
        &rst.records,
        &cmasks,
        &rst.claims,
    )
    .await
    .map_err(zk_err)?;
    // The spans from the verifier's own view (`request_statement` over
    // its 2PC's records), the class asserted as the prover's side does.
    if let Some(class) = crlf_class(&rst) {
        webproof_tlsproof::assert_byte_classes(
            &mut zk,
            aead,
            &ckey,
            &blank.client_iv,
            &rst.records,
            &cmasks,
            &[class],
        )
        .await
        .map_err(zk_err)?;
    }
    assert_leaves(
        &mut zk,
        aead,
        &ckey,
        &blank.client_iv,
        &rst.records,
        &cmasks,
        &rst.lens,
        &blank.leaves_of(LeafDir::Sent, None),
    )
    .await?;
    let mut sealed = zk.seal().await.map_err(zk_err)?;
    consistency::reveal_delta(&mut sealed)
        .await
        .map_err(mpc_err)?;
    let (_, ch) = sealed.parts();
    let n: usize = blank
        .ranges
        .iter()
        .chain(&blank.request)
        .map(|(_, b)| b.len())
        .sum();
    let disclosure = ch.recv_exact(32 + n).await.map_err(io)?;
    let claim = blank.open(&commitment, &disclosure)?;
    let opened = statement(&recording.received, start, &claim)?;
    let ropened = request_statement(&hidden, &claim)?;
    let mut claimed =
        webproof_tlsproof::claimed_bits(&opened.records, &opened.claims).map_err(zk_err)?;
    claimed.extend(
        webproof_tlsproof::claimed_bits(&ropened.records, &ropened.claims).map_err(zk_err)?,
    );
    sealed.verify_claimed(&claimed).await.map_err(zk_err)?;
    let mut out = opened.verified;
    out.request_len = ropened.len;
    Ok(out)
}

//! The verified response: after the prover's `Close`, a sealed QuickSilver
//! proof (`webproof_zk`) that the server records the verifier recorded
//! decrypt, under the server write key of this session, to plaintext of
//! which the prover reveals chosen byte ranges.
//!
//! # What is proven
//! The prover's key-block share came out of the key derivation's garbled
//! circuits as output labels ([`crate::KeyLabels`]), IT-MACs under the
//! verifier's `Δ` (the COT sender's, which is also the proof's): both
//! parties import them as authenticated bits (`import_labels`: MAC `L`,
//! key `L0`), add the verifier's revealed masks (`CloseAck`) as public
//! constants (`webproof_mpc::consistency::xor_public_prover` /
//! `xor_public_verifier`) and so hold the authenticated server write key
//! and IV, with no fresh commitment. The prover then claims
//! ([`ResponseClaim`]) the IV (the 4-byte GCM salt, a PRF output that says
//! nothing of the key) in the clear, and the bytes of each range it
//! reveals under a commitment ([`ClaimShape`]: their places and lengths in
//! the clear, the bytes only after its audit of the verifier). In the
//! proof it asserts the IV bits equal the claimed IV, and, with
//! `webproof_tlsproof::assert_plaintext` (proxy mode's keystream
//! circuits, the AES counter blocks built from the salt and each
//! record's explicit nonce), that each claimed byte is the keystream byte
//! XOR the recorded ciphertext byte: as claimed values of the sealed
//! proof (`webproof_zk::Prover::assert_claimed`, bound to the bytes'
//! commitment), which the verifier checks once the bytes are disclosed.
//!
//! The request is proven the same way when the claim reveals any of it
//! ([`ResponseClaim::with_request`]): the client key and IV bits are the
//! key block's first key and IV, completed by the verifier's shares it
//! revealed in `CloseAck` (after the prover's `Close` fixed the
//! recording, so the client key can no longer make a record the
//! verifier would take), the client IV is claimed in the clear, and the
//! claimed bytes are checked against the client's records after its
//! Finished (sequence numbers from 1, lengths and nonces from the
//! verifier's recording). The verifier never saw those records'
//! ciphertext: it holds the masked ciphertext `C ⊕ ρ` the 2PC gave it,
//! and `ρ` is the choice bits of the COTs of the records' hidden M2A
//! (`crate::rec::gcm`, "Hidden ciphertext"), which both parties
//! import as authenticated bits (the prover's MACs, the verifier's keys;
//! [`crate::HiddenRecord`]). So each claimed request byte is asserted to
//! be the keystream XOR the mask XOR the public masked byte
//! (`webproof_tlsproof::assert_masked_plaintext`). No tag is asserted for
//! the request: its ciphertext is the one the 2PC tagged, and another
//! needs `H`.
//!
//! The hidden bytes of the request's heads (a cookie's value) are proven
//! free of CR and LF the same way ([`ResponseClaim::request_crlf_free`],
//! a byte class over the masked plaintext, `webproof_tlsproof::
//! assert_byte_classes`), so the verifier can fix where each pipelined
//! request ends and pair each response with its request
//! (`webproof_disclosure::exchange`).
//!
//! # Attestations
//! For an attestation the prover commits to the request and the response
//! as proxy mode does (`webproof_attestation::commit`: leaves that
//! partition each direction, each hashed as `SHA-256(header ‖ blinder ‖
//! bytes)` with a secret blinder) and puts the leaves and their hashes in
//! the claim ([`ResponseClaim::with_commitment`]). The blinders are the
//! proof's witness. Per leaf the statement hashes, in the proof, the
//! header the verifier builds from the leaf's offsets, the committed
//! blinder and the plaintext bits of the leaf's bytes (keystream XOR the
//! recorded ciphertext, the same keystream as the revealed ranges), and
//! asserts the digest equal to the claimed hash (sealed mode: asserted,
//! not opened; `webproof_tlsproof::assert_commitments`). The verifier
//! checks the layout against its recording's lengths before it reveals
//! anything, and refuses a commitment when it holds no attestation key;
//! after the proof it signs the root ([`crate::attestation`]).
//!
//! # Where the public values come from
//! The verifier builds the statement from its own recording
//! ([`crate::VerifierOutcome::recording`]): the server's records after its
//! ChangeCipherSpec, the first being the Finished (sequence number 0) and
//! each later one numbered by its position; their content types, lengths
//! (payload minus the 8-byte explicit nonce and the 16-byte tag),
//! explicit nonces and ciphertexts. The response is the concatenation of
//! the application-data records' plaintexts in that order; a claimed range
//! is given as offsets into it, and the verifier maps them to records and
//! record offsets itself. The prover's claim carries only the offsets and
//! the bytes; the verifier's output ([`VerifiedResponse`]) places each
//! revealed range at its offset in the response.
//!
//! # The run (one channel, after `Close` / `CloseAck`)
//! 1. verifier → prover, as soon as the session is over: its private
//!    inputs ([`crate::VerifierRetained::reveal`]), the bits of its input
//!    groups of every garbled circuit and its OLE inputs. The prover's
//!    `Close` fixed the recording before, so they protect nothing any
//!    more, whatever the prover claims next;
//! 2. prover → verifier: the claim's shape ([`ClaimShape::encode`]: IVs,
//!    places and lengths of the revealed ranges, leaves, and the
//!    commitment to the revealed bytes, `SHA-256(label ‖ salt ‖ bytes)`
//!    with 32 secret random bytes of salt); the
//!    verifier answers `0` (taken) or `1` and the reason it refuses the
//!    claim (malformed, a commitment without an attestation key, leaves
//!    that do not partition the recording). The prover does not wait for
//!    the answer: it starts proving, and its next receive reads the answer
//!    first (`webproof_core::Channel::check_next`), before any message of
//!    the proof; on a refusal it stops with the verifier's reason, which
//!    the verifier makes sure reaches it by taking what it sends until it
//!    hangs up ([`MAX_DRAIN`] bytes at most). No step of the proof waits
//!    on that round trip any more (protocol version 22);
//! 3. both start the engine bound to a context naming the recording and
//!    the claim ([`context`]), the verifier's COT sender being the
//!    session's (one `Δ`: the garbling's, the OLEs', the proof's), and
//!    `defer` (sealed mode);
//! 4. the statement above ([`prove_statement`] / [`verify_statement`]),
//!    then the consistency proof of every garbled circuit of the session
//!    ([`crate::consist`]: each key-derivation step and record circuit's
//!    input and output labels imported, the prover shares tied between
//!    steps, each record's key ‖ IV input and the statement's key bits
//!    tied to the key derivation's outputs);
//! 5. `seal` (the prover commits to its held messages);
//! 6. the verifier reveals `Δ` (`consistency::reveal_delta`), the prover
//!    checks it against fresh COTs (`consistency::receive_delta`: a `Δ`
//!    other than the COT sender's passes with probability `2^-128`), then
//!    audits the garbling (every circuit garbled again from its labels and
//!    the revealed inputs; tables digest, decoding, output labels; with
//!    the `parallel` feature, as the native driver builds it, on two
//!    threads, since the verifier waits on it: 61 to 33 ms for a 1 KB
//!    request) and
//!    every OLE batch (answered again for the revealed inputs), and only
//!    then discloses the revealed bytes with the salt
//!    ([`ResponseClaim::disclosure`]) and opens; a failed check is
//!    [`Error::VerifierCheated`];
//! 7. the verifier checks that the disclosure opens the commitment, then
//!    the opening, the disclosed bytes as the claimed values
//!    (`SealedVerifier::verify_claimed`), and outputs the revealed ranges;
//!    a false statement, consistency claim or disclosure is
//!    [`Error::Proof`].
//!
//! Cost on the reference case (1 KB request, 2 KB response, SoftSpokenOT
//! COTs, 2-core machine, release; the test
//! `consistency_overhead_figures` prints it): AES-128-GCM-SHA256 (reduced
//! PRF, 9 circuits and the server Finished's check, 621,246 AND)
//! +1.06 MB prover → verifier (mostly COT extension: one COT per AND
//! gate), +3.5 KB verifier → prover (the input reveal), +0.6 s;
//! AES-256-GCM-SHA384 (full PRF, 5 circuits and the Finished's check,
//! 1,898,051 AND) +3.7 MB, +1.6 KB, +2.0 s. The statement alone is
//! ~0.5 MB and 0.2 s. (The real driver draws the COTs from Ferret, whose
//! traffic is a small fraction of this.)
//!
//! # Security argument
//! **Against a prover.** Its key-share bits are the output labels of the
//! key derivation; a label for a bit other than the one the garbled
//! circuit computed needs `Δ` (authenticity of the garbling), and
//! importing a label with another value leaves a MAC off by `Δ ⊕ 1`, so
//! the key bits in the proof are the key-block share the garbled circuits
//! computed, plus masks the verifier chose itself: the server write key of
//! the handshake the verifier checked (the server Finished's tag and its
//! `verify_data` are asserted in this proof under that key,
//! [`crate::consist::FinishedCheck`]). The records are the verifier's
//! recording, complete before the mask was revealed. A claim of other
//! bytes, other offsets or another IV is a false statement about
//! authenticated bits, which passes QuickSilver's check with probability
//! about `(q + 2)/2^127`; sealing keeps that bound, since the held
//! messages are committed to before `Δ` is revealed. A claimed leaf
//! hash that is not the hash of its header, the committed blinder and
//! those plaintext bits is a false assertion on the digest's bits, caught
//! the same way (the hash is computed in the proof: another preimage of
//! the claimed hash would be a SHA-256 second preimage). Every record's
//! AEAD tag is asserted in the proof too (`webproof_tlsproof::assert_tags`:
//! `GHASH_H(A, C) XOR E_K(J0)` from the key bits, equal to the recorded
//! tag). The server's records reach the verifier through the prover, and
//! CTR mode is malleable: without the tags, a prover that flipped
//! ciphertext bits on the way (it cannot decrypt before `CloseAck`, but it
//! can predict a status line or a balance it has seen) would make the
//! recorded record decrypt to the plaintext it chose. A tag it did not
//! get from the server needs `H` and `E_K(J0)`, which it did not know
//! before the recording was complete. The consistency proof adds that the
//! shares it carried between steps are the ones output before, and that
//! the key bits of the statement are the key derivation's outputs (not,
//! say, its client-key share in their place); that each output is what its
//! circuit computed on the inputs it holds is the garbling's authenticity
//! (a label of another value would give it `Δ`,
//! `webproof_mpc::consistency`).
//!
//! **Against a verifier.** Before `Δ` is revealed it sees only the
//! claim's shape (the IVs, where the revealed ranges lie and how long they
//! are, the leaves' blinded hashes: not one revealed byte), corrections
//! padded by COT bits and hiding commitments; the revealed bytes and the
//! opening, sent only after `Δ` and the audit checked out, hold the bytes
//! the prover chose to reveal and hashes and sums of MACs the verifier can
//! compute itself from them. A verifier that reveals another `Δ`, or
//! fails the audit, or stops before the reveal, gets neither
//! (`revealed_bytes_do_not_reach_a_verifier_that_stops_before_the_audit`).
//!
//! **Against a verifier, the garbling.** After the `Δ` reveal the prover
//! knows every 0-label and checks every circuit and OLE answer against
//! the inputs the verifier revealed; it opens only if all pass, so a
//! garbler that garbled another function, altered a table, encoded other
//! input bits than it revealed, or answered an OLE wrongly gets no
//! opening (what it could learn *before*, by selective failure or from
//! outputs used online, is `webproof_mpc::consistency`'s list).
//!
//! # The verifier's revealed inputs
//! Before the proof starts, the prover checks the verifier's reveal
//! against what the protocol makes each value
//! ([`crate::ProverRetained::check_inputs`]): the key derivation's public
//! groups (randoms, session and handshake hashes, computed by the prover
//! over the handshake it wrote and received), the reduced PRF's inner
//! digests (`SHA-256(IS ‖ message)` of the values revealed during the
//! session), every mask reused where a later step takes it as its share,
//! each record circuit's key ‖ IV share (the key derivation's mask for
//! its direction) and explicit nonce (the record's). The key shares the
//! verifier revealed at the close must be those masks. The audit, after
//! the `Δ` reveal, checks that these values are the ones garbled with.
//!
//! # Not in this proof yet
//! - The ECtF's output (the prover's premaster share) is not tied to the
//!   key derivation's step-0 input (field arithmetic, not bits), and the
//!   verifier's premaster share there is its own choice; the ECtF's A2M
//!   answer's masked elements beyond the OLE, and the verifier's tag and
//!   ECtF shares, are not checked against the revealed inputs. A wrong value
//!   in any of these makes the session's keys wrong, so the server ends
//!   the session.
//! - Privacy against a cheating verifier holds only after the fact: it
//!   can garble another function than the session's (through its tables
//!   or its inputs) and see part of the result online, in the revealed
//!   values. The audit and the check above catch that when the session
//!   reaches the proof; a cheat that also breaks the handshake ends the
//!   session first and is never reported as one. The revealed chain
//!   values and `verify_data` feed the handshake: a garbling that leaks
//!   through them makes the session's keys wrong, and the server ends the
//!   session before the request goes out. The request's ciphertext,
//!   which a record circuit garbled to output a keystream the verifier
//!   knows would turn into the request in the clear, is never sent to
//!   the verifier (protocol version 24), and the keystream that encrypts
//!   it is checked by dual execution before it is used
//!   (`crate::rec::dual`, version 27): a selective failure in the
//!   hidden M2A or the check tells the verifier at most one bit of the
//!   prover's ephemeral inputs per session, ending it, and nothing of the
//!   request.
use crate::consist;
use crate::error::{Error, Result};
use crate::hello::suite_params;
use crate::kdf::tls12::KeyShares;
use crate::prover::ProverOutcome;
use crate::verifier::VerifierOutcome;
use crate::{HiddenRecord, KeyLabels};
use core::ops::Range;
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use std::sync::{Arc, OnceLock};
use webproof_attestation::commit::check_layout;
use webproof_attestation::{Direction as LeafDir, LeafRange, TranscriptCommitment};
use webproof_circuits::bits::bytes_to_bits;
use webproof_circuits::tls::Tls12Suite;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Block, Channel, Io};
use webproof_disclosure::attest::{leaf_commitments, MAX_LEAVES};
use webproof_mpc::consistency;
use webproof_tls::record::{content_type, Record};
use webproof_tls::Recording;
use webproof_tlsproof::{Aead, ByteClass, PlaintextClaim, RecordTag, SealedRecord};
use webproof_zk::{Config, Prover, ProverBit, Verifier, VerifierBit};

/// Most ranges one claim may reveal.
pub const MAX_RANGES: usize = 4096;
/// The verifier's answer to the claim: taken.
const CLAIM_TAKEN: u8 = 0;
/// The verifier's answer to the claim: refused, the reason follows.
const CLAIM_REFUSED: u8 = 1;
/// Longest reason of a refusal.
const MAX_REFUSAL: usize = 1024;
/// Most bytes a verifier that refused the claim takes from the prover,
/// which was proving meanwhile, before it hangs up (the prover stops at
/// its next receive, which reads the refusal; this keeps its writes from
/// blocking on a full link before then).
pub const MAX_DRAIN: usize = 64 << 20;

/// What the prover reveals: the server IV (GCM salt) and, per range, its
/// offset in the response and its bytes; the same of the request, if it
/// reveals any of it; the committed leaves for an attestation. Before the
/// proof the verifier gets only its [`ClaimShape`]; the bytes follow the
/// prover's audit ([`ResponseClaim::disclosure`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseClaim {
    /// The server write IV (the 4-byte GCM salt).
    pub iv: Vec<u8>,
    /// Per revealed range: its first byte's offset in the response, its bytes.
    pub ranges: Vec<(usize, Vec<u8>)>,
    /// The client write IV (GCM salt); empty when no request range is
    /// claimed.
    pub request_iv: Vec<u8>,
    /// Per revealed range of the request: its offset, its bytes.
    pub request: Vec<(usize, Vec<u8>)>,
    /// Hidden ranges of the request (offset, length) the proof shows to
    /// hold no CR or LF: the hidden bytes of its heads
    /// (`webproof_disclosure::exchange::hidden_head_bytes`), so the
    /// verifier can fix where each request ends and pair the responses.
    pub request_crlf_free: Vec<(usize, usize)>,
    /// The leaves of the prover's transcript commitment, for an
    /// attestation (`webproof_attestation::commit`'s layout: the request's
    /// leaves, then the response's, each direction partitioned in order);
    /// empty when no attestation is asked for.
    pub leaves: Vec<LeafRange>,
    /// Per leaf, its blinded hash, which the proof shows is over the
    /// session's plaintext.
    pub leaf_hashes: Vec<[u8; 32]>,
    /// The server's last recorded record is a close_notify alert, which
    /// the proof shows decrypts to [`CLOSE_NOTIFY`]: nothing of the
    /// response was cut after it.
    pub close_notify: bool,
}

/// The plaintext of a close_notify alert (level warning, description 0).
pub const CLOSE_NOTIFY: [u8; 2] = [1, 0];

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(p, q)| p ^ q).collect()
}

/// The claimed bytes of `ranges` of `data` (`what` names it in errors);
/// the ranges must not overlap: the statement claims each byte once.
fn claim_ranges(data: &[u8], ranges: &[Range<usize>], what: &str) -> Result<Vec<(usize, Vec<u8>)>> {
    let mut sorted: Vec<&Range<usize>> = ranges.iter().collect();
    sorted.sort_unstable_by_key(|r| r.start);
    if sorted.windows(2).any(|w| w[1].start < w[0].end) {
        return Err(Error::Usage("overlapping ranges".into()));
    }
    ranges
        .iter()
        .map(|r| {
            let bytes = data.get(r.clone()).ok_or(Error::Usage(format!(
                "range {r:?} outside the {what} ({} bytes)",
                data.len()
            )))?;
            Ok((r.start, bytes.to_vec()))
        })
        .collect()
}

fn encode_places(v: &mut Vec<u8>, places: &[(usize, usize)]) {
    v.extend_from_slice(&(places.len() as u32).to_be_bytes());
    for (at, len) in places {
        v.extend_from_slice(&(*at as u32).to_be_bytes());
        v.extend_from_slice(&(*len as u32).to_be_bytes());
    }
}

impl ResponseClaim {
    /// The honest claim of `ranges` (offsets into the decrypted response;
    /// they must not overlap: the statement claims each byte once).
    pub fn new(outcome: &ProverOutcome, ranges: &[Range<usize>]) -> Result<Self> {
        Ok(ResponseClaim {
            iv: xor(&outcome.key_shares.server_iv, &outcome.revealed_server_iv),
            ranges: claim_ranges(&outcome.response, ranges, "response")?,
            request_iv: Vec::new(),
            request: Vec::new(),
            request_crlf_free: Vec::new(),
            leaves: Vec::new(),
            leaf_hashes: Vec::new(),
            // The prover saw the close_notify ([`ProverOutcome::close_notify`])
            // as the last record it forwarded.
            close_notify: outcome.close_notify
                && outcome
                    .recording
                    .received
                    .last()
                    .is_some_and(|r| r.content_type == content_type::ALERT),
        })
    }

    /// The same claim revealing `ranges` of `request` too (the request this
    /// session sent: its records are proven to carry these bytes).
    pub fn with_request(
        mut self,
        outcome: &ProverOutcome,
        request: &[u8],
        ranges: &[Range<usize>],
    ) -> Result<Self> {
        self.request = claim_ranges(request, ranges, "request")?;
        self.set_request_iv(outcome);
        Ok(self)
    }

    /// The same claim proving `ranges` of the request (hidden bytes of its
    /// heads) free of CR and LF: sorted, disjoint, non-empty, within it.
    pub fn with_request_crlf_free(
        mut self,
        outcome: &ProverOutcome,
        ranges: &[Range<usize>],
    ) -> Result<Self> {
        self.request_crlf_free = ranges.iter().map(|r| (r.start, r.len())).collect();
        self.set_request_iv(outcome);
        Ok(self)
    }

    /// The same claim committing to the transcript for an attestation:
    /// `commitment` is the prover's, over this session's request and
    /// response (its blinders are the proof's witness, see
    /// [`prove_response`]).
    pub fn with_commitment(
        mut self,
        outcome: &ProverOutcome,
        commitment: &TranscriptCommitment,
    ) -> Self {
        self.leaves = commitment.leaves().to_vec();
        self.leaf_hashes = commitment.leaf_hashes().to_vec();
        self.set_request_iv(outcome);
        self
    }

    /// The client IV is claimed exactly when the proof uses the client
    /// key: a revealed request range or a committed request leaf.
    fn set_request_iv(&mut self, outcome: &ProverOutcome) {
        self.request_iv = if self.uses_client_key() {
            xor(&outcome.key_shares.client_iv, &outcome.revealed_client_iv)
        } else {
            Vec::new()
        };
    }

    /// Whether the statement covers the request's records.
    fn uses_client_key(&self) -> bool {
        !self.request.is_empty()
            || !self.request_crlf_free.is_empty()
            || self.leaves.iter().any(|l| l.direction == LeafDir::Sent)
    }

    /// The leaves of `direction` and their hashes.
    fn leaves_of(&self, direction: LeafDir) -> (Vec<LeafRange>, Vec<[u8; 32]>) {
        self.leaves
            .iter()
            .zip(&self.leaf_hashes)
            .filter(|(l, _)| l.direction == direction)
            .map(|(l, h)| (*l, *h))
            .unzip()
    }

    /// The revealed bytes in claim order: the response's ranges, then the
    /// request's.
    fn revealed_bytes(&self) -> Vec<u8> {
        self.ranges
            .iter()
            .chain(&self.request)
            .flat_map(|(_, b)| b.iter().copied())
            .collect()
    }

    /// What the verifier learns of this claim before the proof: all but
    /// the revealed bytes, which `salt` (32 fresh random bytes, kept for
    /// [`Self::disclosure`]) blinds in their commitment.
    pub fn shape(&self, salt: &[u8; 32]) -> ClaimShape {
        let places = |r: &[(usize, Vec<u8>)]| r.iter().map(|(at, b)| (*at, b.len())).collect();
        ClaimShape {
            iv: self.iv.clone(),
            ranges: places(&self.ranges),
            request_iv: self.request_iv.clone(),
            request: places(&self.request),
            request_crlf_free: self.request_crlf_free.clone(),
            leaves: self.leaves.clone(),
            leaf_hashes: self.leaf_hashes.clone(),
            close_notify: self.close_notify,
            bytes_commitment: bytes_commitment(salt, &self.revealed_bytes()),
        }
    }

    /// The revealed bytes with the salt of their commitment (`salt ||
    /// bytes`), sent once the prover's audit of the verifier passed.
    pub fn disclosure(&self, salt: &[u8; 32]) -> Vec<u8> {
        [&salt[..], &self.revealed_bytes()].concat()
    }
}

/// `SHA-256(label || salt || bytes)`: hiding (the salt is secret until the
/// disclosure) and binding.
fn bytes_commitment(salt: &[u8; 32], bytes: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof mpc-tls claimed bytes v1");
    h.update(salt);
    h.update(bytes);
    h.finalize().into()
}

/// A claim as the verifier gets it before the proof: the IVs, the places
/// and lengths of the revealed ranges, the committed leaves, and a
/// commitment to the revealed bytes, which the prover discloses only after
/// its audit of the verifier ([`ClaimShape::open`]). The proof claims
/// those bytes without showing them (`webproof_zk`'s deferred claims,
/// bound to `bytes_commitment`), so a verifier that fails the audit never
/// sees them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimShape {
    /// The server write IV (the 4-byte GCM salt).
    pub iv: Vec<u8>,
    /// Per revealed range of the response: its offset and length.
    pub ranges: Vec<(usize, usize)>,
    /// The client write IV; empty when the claim covers no request byte.
    pub request_iv: Vec<u8>,
    /// Per revealed range of the request: its offset and length.
    pub request: Vec<(usize, usize)>,
    /// As [`ResponseClaim::request_crlf_free`].
    pub request_crlf_free: Vec<(usize, usize)>,
    /// As [`ResponseClaim::leaves`].
    pub leaves: Vec<LeafRange>,
    /// As [`ResponseClaim::leaf_hashes`].
    pub leaf_hashes: Vec<[u8; 32]>,
    /// As [`ResponseClaim::close_notify`].
    pub close_notify: bool,
    /// The commitment to the revealed bytes ([`ResponseClaim::shape`]).
    pub bytes_commitment: [u8; 32],
}

impl ClaimShape {
    /// Bytes the claim reveals (both directions).
    pub fn revealed_len(&self) -> usize {
        self.ranges
            .iter()
            .chain(&self.request)
            .map(|&(_, n)| n)
            .fold(0usize, usize::saturating_add)
    }

    /// The claim with zeros in place of the revealed bytes: the statement
    /// the verifier runs before the disclosure (its claimed values are
    /// not read, see `webproof_tlsproof::ZkParty::assert_claimed`).
    pub fn placeholder(&self) -> ResponseClaim {
        let zeros = |r: &[(usize, usize)]| r.iter().map(|&(at, n)| (at, vec![0; n])).collect();
        ResponseClaim {
            iv: self.iv.clone(),
            ranges: zeros(&self.ranges),
            request_iv: self.request_iv.clone(),
            request: zeros(&self.request),
            request_crlf_free: self.request_crlf_free.clone(),
            leaves: self.leaves.clone(),
            leaf_hashes: self.leaf_hashes.clone(),
            close_notify: self.close_notify,
        }
    }

    /// The whole claim from the prover's disclosure (`salt || bytes`),
    /// if it opens the commitment.
    pub fn open(&self, disclosure: &[u8]) -> Result<ResponseClaim> {
        if disclosure.len() != 32 + self.revealed_len() {
            return Err(Error::Malformed("claim disclosure of the wrong length"));
        }
        let (salt, mut bytes) = disclosure.split_at(32);
        let salt: &[u8; 32] = salt.try_into().expect("32 bytes");
        if bytes_commitment(salt, bytes) != self.bytes_commitment {
            return Err(Error::Proof(
                "the disclosed bytes do not open the claim's commitment".into(),
            ));
        }
        let mut claim = self.placeholder();
        for (_, b) in claim.ranges.iter_mut().chain(claim.request.iter_mut()) {
            let (head, rest) = bytes.split_at(b.len());
            b.copy_from_slice(head);
            bytes = rest;
        }
        Ok(claim)
    }

    /// `iv_len (1) || iv || ranges || request_iv_len (1) || request_iv ||
    /// request ranges || request line-end-free ranges || leaves ||
    /// close_notify (1) || bytes_commitment (32)`, where ranges
    /// are `count (4) || per range: offset (4), len (4)` and leaves
    /// `count (4) || per leaf: direction (1: 0 request, 1 response), start
    /// (4), end (4), hash (32)`.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = vec![self.iv.len() as u8];
        v.extend_from_slice(&self.iv);
        encode_places(&mut v, &self.ranges);
        v.push(self.request_iv.len() as u8);
        v.extend_from_slice(&self.request_iv);
        encode_places(&mut v, &self.request);
        encode_places(&mut v, &self.request_crlf_free);
        v.extend_from_slice(&(self.leaves.len() as u32).to_be_bytes());
        for (l, h) in self.leaves.iter().zip(&self.leaf_hashes) {
            v.push(l.direction.to_byte());
            v.extend_from_slice(&l.start.to_be_bytes());
            v.extend_from_slice(&l.end.to_be_bytes());
            v.extend_from_slice(h);
        }
        v.push(self.close_notify as u8);
        v.extend_from_slice(&self.bytes_commitment);
        v
    }

    /// Parse [`Self::encode`]'s output.
    pub fn decode(msg: &[u8]) -> Result<Self> {
        let mut r = ClaimReader(msg);
        let iv = r.iv()?;
        let ranges = r.places()?;
        let request_iv = r.iv()?;
        let request = r.places()?;
        let request_crlf_free = r.places()?;
        let (leaves, leaf_hashes) = r.leaves()?;
        let close_notify = match r.take(1)?[0] {
            0 => false,
            1 => true,
            _ => return Err(Error::Malformed(ClaimReader::WHAT)),
        };
        let bytes_commitment = r.take(32)?.try_into().expect("32 bytes");
        if !r.0.is_empty() {
            return Err(Error::Malformed(ClaimReader::WHAT));
        }
        Ok(ClaimShape {
            iv,
            ranges,
            request_iv,
            request,
            request_crlf_free,
            leaves,
            leaf_hashes,
            close_notify,
            bytes_commitment,
        })
    }
}

/// The parser of [`ClaimShape::decode`].
struct ClaimReader<'a>(&'a [u8]);

impl<'a> ClaimReader<'a> {
    const WHAT: &'static str = "claim";

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(Error::Malformed(Self::WHAT));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }

    fn u32(&mut self) -> Result<usize> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")) as usize)
    }

    fn iv(&mut self) -> Result<Vec<u8>> {
        let n = self.take(1)?[0] as usize;
        Ok(self.take(n)?.to_vec())
    }

    fn places(&mut self) -> Result<Vec<(usize, usize)>> {
        let n = self.u32()?;
        // Each place takes 8 bytes: a count beyond the message is refused
        // before anything is reserved for it.
        if n > MAX_RANGES || n > self.0.len() / 8 {
            return Err(Error::Malformed(Self::WHAT));
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.u32()?;
            out.push((at, self.u32()?));
        }
        Ok(out)
    }

    fn leaves(&mut self) -> Result<(Vec<LeafRange>, Vec<[u8; 32]>)> {
        let n = self.u32()?;
        // Each leaf takes 41 bytes: a count beyond the message is refused
        // before anything is reserved for it.
        if n > MAX_LEAVES || n > self.0.len() / 41 {
            return Err(Error::Malformed(Self::WHAT));
        }
        let (mut leaves, mut hashes) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let direction =
                LeafDir::from_byte(self.take(1)?[0]).ok_or(Error::Malformed(Self::WHAT))?;
            let (start, end) = (self.u32()? as u32, self.u32()? as u32);
            leaves.push(LeafRange {
                direction,
                start,
                end,
            });
            hashes.push(self.take(32)?.try_into().expect("32 bytes"));
        }
        Ok((leaves, hashes))
    }
}

/// One revealed range, as the verifier established it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevealedRange {
    /// Offset of the first byte in the response.
    pub offset: usize,
    /// The bytes, proven to be the response's from `offset` on.
    pub bytes: Vec<u8>,
}

/// The verifier's result: the revealed ranges of the response, placed by
/// its own recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedResponse {
    /// Length of the response (the application data the server sent after
    /// its Finished), from the recording.
    pub response_len: usize,
    /// The server write IV (GCM salt), proven.
    pub server_iv: Vec<u8>,
    /// The revealed ranges, in the order claimed.
    pub ranges: Vec<RevealedRange>,
    /// Length of the request (the application data the client sent after
    /// its Finished), from the recording.
    pub request_len: usize,
    /// The revealed ranges of the request, in the order claimed.
    pub request_ranges: Vec<RevealedRange>,
    /// Hidden ranges of the request proven to hold no CR or LF.
    pub request_crlf_free: Vec<Range<usize>>,
    /// The leaves of the prover's transcript commitment (empty: no
    /// attestation asked for), their layout checked against the
    /// recording's lengths.
    pub leaves: Vec<LeafRange>,
    /// Per leaf, its blinded hash, proven over the session's plaintext.
    pub leaf_hashes: Vec<[u8; 32]>,
    /// The server's last recorded record is a close_notify, proven.
    pub close_notify: bool,
    /// Bytes the proof took prover → verifier (the claim included).
    pub prover_bytes: u64,
    /// Bytes verifier → prover.
    pub verifier_bytes: u64,
}

/// What the prover learns of its proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofStats {
    /// Bytes sent to the verifier (the claim included).
    pub sent: u64,
    /// Bytes received.
    pub received: u64,
    /// The engine's counters (AND gates, byte inversions, COTs used).
    pub zk: webproof_zk::Stats,
    /// The share of the consistency proof of the session's circuits.
    pub consistency: ConsistencyStats,
}

/// What the consistency proof of the circuits adds to the proof of the
/// response (the prover's view; the `Δ` reveal and the audit not
/// counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConsistencyStats {
    /// Garbled circuits whose labels the proof imported.
    pub circuits: usize,
    /// AND gates of the consistency proof: the server Finished's check (no
    /// garbled circuit is evaluated again, [`crate::consist`]).
    pub and_gates: u64,
    /// COTs consumed.
    pub cots_used: u64,
    /// Bytes of the verifier's input reveal (sealed mode holds the
    /// proof's own messages until the seal, so its bytes show only in the
    /// totals).
    pub reveal: u64,
}

/// The server's protected records of the session as the statement needs
/// them: every record after the ChangeCipherSpec but the Finished
/// (sequence numbers from 1), and for each application-data record its
/// offset in the response.
struct ServerRecords {
    records: Vec<SealedRecord>,
    /// Each record's tag and additional data.
    tags: Vec<RecordTag>,
    /// `(index in records, offset in the response, length)` of each
    /// application-data record.
    app: Vec<(usize, usize, usize)>,
    /// Each record's content type.
    kinds: Vec<u8>,
    len: usize,
}

fn server_records(recording: &Recording, suite: Tls12Suite) -> Result<ServerRecords> {
    protected_records(&recording.received, "server", suite)
}

/// The client's records after its ChangeCipherSpec, as
/// [`server_records`] gives the server's.
/// The request's records: their places, types, lengths and nonces from
/// the recording (which holds no ciphertext of them), their public
/// ciphertext the masked one of the 2PC (`hidden`, one per record, in
/// order), whose mask the statement takes as authenticated bits.
fn client_records(
    recording: &Recording,
    hidden: &[HiddenRecord],
    suite: Tls12Suite,
) -> Result<ServerRecords> {
    let mut out = protected_records(&recording.sent, "client", suite)?;
    if out.records.len() != hidden.len() {
        return Err(Error::Recording(format!(
            "{} request records recorded, {} run in 2PC",
            out.records.len(),
            hidden.len()
        )));
    }
    for (r, h) in out.records.iter_mut().zip(hidden) {
        if h.masked.len() != r.ciphertext.len() {
            return Err(Error::Recording(
                "a request record of another length than its 2PC's".into(),
            ));
        }
        r.ciphertext = h.masked.clone();
    }
    // The tags are the prover's alone (the recording holds zeros):
    // nothing asserts them, the ciphertext is bound by the 2PC's tag.
    out.tags.clear();
    Ok(out)
}

/// The request records' masks as authenticated bits in the statement's
/// order (per record, [`bytes_to_bits`] of its ciphertext), from the bits
/// the COTs of their hidden M2A authenticate (`bits[128·i + m]`: bit `m`
/// of block `i`'s mask as a field element).
pub(crate) fn masks_in_byte_order<B: Copy>(
    hidden: &[HiddenRecord],
    bits: Vec<Vec<B>>,
) -> Vec<Vec<B>> {
    hidden
        .iter()
        .zip(bits)
        .map(|(h, b)| {
            if is_chacha_record(h) {
                // ChaCha20-Poly1305's `χ¹` are in `bytes_to_bits` order
                // already (`crate::rec::chacha::masked_cots`).
                return b[..8 * h.masked.len()].to_vec();
            }
            (0..8 * h.masked.len())
                .map(|n| b[(n & !127) + crate::rec::gcm::masked_bit(n & 127)])
                .collect()
        })
        .collect()
}

/// Whether a hidden request record is ChaCha20-Poly1305's (it carries the
/// second masked copy of its ciphertext).
fn is_chacha_record(h: &HiddenRecord) -> bool {
    !h.masked2.is_empty()
}

/// COTs a hidden request record's masks take: one per bit of its whole
/// blocks (AES-GCM), two (ChaCha20-Poly1305's `χ¹`, `χ²`).
pub(crate) fn hide_cots_of(h: &HiddenRecord) -> usize {
    if is_chacha_record(h) {
        crate::rec::chacha::hide_cots(h.masked.len())
    } else {
        crate::rec::gcm::hide_cots(h.masked.len())
    }
}

/// The proof of the request's ChaCha20-Poly1305 records, prover's side
/// (TLS 1.2's and 1.3's): the statement's ciphertext is `D¹ ⊕ χ¹`
/// (`mask_bits[i]`: record `i`'s COT choice bits as authenticated bits),
/// while the tag the server checked was computed on `D¹ ⊕ χ¹` and
/// `D² ⊕ χ²`: both must be it, padding zero
/// (`crate::rec::chacha::prove_hidden_ciphertext`). AES-GCM's records
/// are skipped.
pub(crate) async fn prove_chacha_copies<C: RandomCotReceiver, T: Io>(
    zk: &mut Prover<C, T>,
    hidden: &[HiddenRecord],
    mask_bits: &[Vec<ProverBit>],
) -> Result<()> {
    for (h, bits) in hidden.iter().zip(mask_bits) {
        let Some(copies) = h.chacha_copies() else {
            continue;
        };
        let ct = consistency::xor_public_prover(
            zk,
            &bits[..8 * h.masked.len()],
            &bytes_to_bits(&h.masked),
        )
        .map_err(mpc_err)?;
        crate::rec::chacha::prove_hidden_ciphertext(
            zk,
            h.masked.len(),
            &h.cots,
            (&copies.0, &copies.1),
            &ct,
        )
        .await
        .map_err(mpc_err)?;
    }
    Ok(())
}

/// The verifier's side of [`prove_chacha_copies`] (`mask_bits[i]`: the
/// 0-labels of record `i`'s COTs imported, `D¹`, `D²` its own from the
/// prover's tag request).
pub(crate) async fn verify_chacha_copies<C: RandomCotSender, T: Io>(
    zk: &mut Verifier<C, T>,
    hidden: &[HiddenRecord],
    mask_bits: &[Vec<VerifierBit>],
) -> Result<()> {
    for (h, bits) in hidden.iter().zip(mask_bits) {
        let Some(copies) = h.chacha_copies() else {
            continue;
        };
        let ct = consistency::xor_public_verifier(
            zk,
            &bits[..8 * h.masked.len()],
            &bytes_to_bits(&h.masked),
        )
        .map_err(mpc_err)?;
        crate::rec::chacha::verify_hidden_ciphertext(
            zk,
            h.masked.len(),
            &h.cots,
            (&copies.0, &copies.1),
            &ct,
        )
        .await
        .map_err(mpc_err)?;
    }
    Ok(())
}

/// Every request record's COTs, one per bit of its whole blocks.
fn check_hidden(hidden: &[HiddenRecord]) -> Result<()> {
    if hidden.iter().any(|h| h.cots.len() != hide_cots_of(h)) {
        return Err(Error::Malformed(
            "a request record's COTs of another length",
        ));
    }
    Ok(())
}

fn protected_records(recv: &[Record], who: &str, suite: Tls12Suite) -> Result<ServerRecords> {
    let ccs = recv
        .iter()
        .position(|r| r.content_type == content_type::CHANGE_CIPHER_SPEC)
        .ok_or(Error::Recording(format!(
            "no ChangeCipherSpec from the {who}"
        )))?;
    // ccs + 1 is the Finished (sequence number 0).
    let after = recv
        .get(ccs + 2..)
        .ok_or(Error::Recording(format!("no Finished from the {who}")))?;
    let mut out = ServerRecords {
        records: Vec::with_capacity(after.len()),
        tags: Vec::with_capacity(after.len()),
        app: Vec::new(),
        kinds: Vec::with_capacity(after.len()),
        len: 0,
    };
    for (i, r) in after.iter().enumerate() {
        let seq = i as u64 + 1;
        // The suite's layout: AES-GCM's explicit nonce is read from the
        // record, ChaCha20-Poly1305 has none (its nonce is the IV XOR
        // `seq`, which the proof computes).
        let (record, tag) = crate::rec::sealed(suite, seq, r.content_type, &r.payload)
            .ok_or_else(|| Error::Recording(format!("{who} record {} too short", i + 1)))?;
        let len = record.ciphertext.len();
        if r.content_type == content_type::APPLICATION_DATA {
            out.app.push((i, out.len, len));
            out.len += len;
        }
        out.kinds.push(r.content_type);
        out.tags.push(tag);
        out.records.push(record);
    }
    Ok(out)
}

/// Map the claim's ranges to per-record claims; refuses a range outside
/// the response.
fn record_claims(srv: &ServerRecords, ranges: &[(usize, Vec<u8>)]) -> Result<Vec<PlaintextClaim>> {
    if ranges.len() > MAX_RANGES {
        return Err(Error::Malformed("too many ranges"));
    }
    let mut out = Vec::new();
    for (at, bytes) in ranges {
        let end = at
            .checked_add(bytes.len())
            .filter(|&e| e <= srv.len)
            .ok_or(Error::Malformed(
                "a claimed range lies outside the application data",
            ))?;
        let mut pos = *at;
        while pos < end {
            // The application-data record holding `pos`.
            let k = srv.app.partition_point(|&(_, off, len)| off + len <= pos);
            let (ri, off, len) = srv.app[k];
            let stop = end.min(off + len);
            out.push(PlaintextClaim {
                record: ri,
                offset: pos - off,
                bytes: bytes[pos - at..stop - at].to_vec(),
            });
            pos = stop;
        }
    }
    Ok(out)
}

/// Most ranges [`ResponseClaim::request_crlf_free`] may hold.
pub const MAX_CRLF_FREE: usize = 4096;

/// [`ResponseClaim::request_crlf_free`] as spans of the request's records:
/// the ranges sorted, disjoint, non-empty and within its application data
/// (the verifier's recording says where each record's bytes lie).
fn crlf_free_spans(
    cli: &ServerRecords,
    ranges: &[(usize, usize)],
) -> Result<Vec<(usize, Range<usize>)>> {
    crlf_free_spans_of(&cli.app, cli.len, ranges)
}

/// [`crlf_free_spans`] over a request of `len` bytes whose records hold
/// `app[k] = (record index, offset in the request, length)` (TLS 1.3's
/// records too: the offsets are into the request, each record's content
/// first in its plaintext, so its inner content type byte lies past
/// every span).
pub(crate) fn crlf_free_spans_of(
    app: &[(usize, usize, usize)],
    len: usize,
    ranges: &[(usize, usize)],
) -> Result<Vec<(usize, Range<usize>)>> {
    let total = len;
    if ranges.len() > MAX_CRLF_FREE {
        return Err(Error::Malformed("too many ranges free of line ends"));
    }
    let mut out = Vec::new();
    let mut after = 0;
    for &(at, len) in ranges {
        let end = at
            .checked_add(len)
            .filter(|&e| len > 0 && at >= after && e <= total)
            .ok_or(Error::Malformed(
                "ranges free of line ends must be non-empty, sorted, disjoint and within the request",
            ))?;
        after = end;
        let mut pos = at;
        while pos < end {
            let k = app.partition_point(|&(_, off, len)| off + len <= pos);
            let (ri, off, len) = app[k];
            let stop = end.min(off + len);
            out.push((ri, pos - off..stop - off));
            pos = stop;
        }
    }
    Ok(out)
}

/// The statement's claims on the server's records: the revealed ranges,
/// and with [`ResponseClaim::close_notify`] the last record's plaintext,
/// which must then be a 2-byte alert.
fn response_claims(srv: &ServerRecords, claim: &ResponseClaim) -> Result<Vec<PlaintextClaim>> {
    let mut claims = record_claims(srv, &claim.ranges)?;
    if claim.close_notify {
        claims.push(PlaintextClaim {
            record: last_alert(srv)?,
            offset: 0,
            bytes: CLOSE_NOTIFY.to_vec(),
        });
    }
    Ok(claims)
}

/// The index of the last server record, if it is a 2-byte alert (what a
/// close_notify claim needs).
fn last_alert(srv: &ServerRecords) -> Result<usize> {
    match (srv.kinds.last(), srv.records.last()) {
        (Some(&content_type::ALERT), Some(r)) if r.ciphertext.len() == CLOSE_NOTIFY.len() => {
            Ok(srv.records.len() - 1)
        }
        _ => Err(Error::Malformed(
            "close_notify claimed, but the last server record is no alert",
        )),
    }
}

/// The proof's context: the recording and the claim's shape (its bytes
/// through their commitment).
pub fn context(recording: &Recording, claim: &ClaimShape) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof mpc-tls verified response v2");
    h.update(recording.digest());
    h.update(claim.encode());
    h.finalize().into()
}

/// The suite (its record layout) of a key and IV length: a 12-byte IV is
/// ChaCha20-Poly1305's, a 4-byte one AES-GCM's salt.
fn layout_for(key_len: usize, iv_len: usize) -> Result<Tls12Suite> {
    match (key_len, iv_len) {
        (16, 4) => Ok(Tls12Suite::AES_128_GCM_SHA256),
        (32, 4) => Ok(Tls12Suite::AES_256_GCM_SHA384),
        (32, 12) => Ok(Tls12Suite::CHACHA20_POLY1305_SHA256),
        _ => Err(Error::Unsupported(format!(
            "{key_len}-byte server key with a {iv_len}-byte IV"
        ))),
    }
}

fn aead_for(key_len: usize, iv_len: usize) -> Result<Aead> {
    layout_for(key_len, iv_len).map(crate::rec::aead)
}

/// The key block's layout: `client_key || server_key || client_iv ||
/// server_iv`; the range of the server key's and the server IV's bits.
fn key_block_bits(key_len: usize, iv_len: usize) -> (Range<usize>, Range<usize>, usize) {
    let (k, i) = (8 * key_len, 8 * iv_len);
    (k..2 * k, 2 * k + i..2 * k + 2 * i, 2 * k + 2 * i)
}

/// The client key's and the client IV's bits in the key block.
fn client_block_bits(key_len: usize, iv_len: usize) -> (Range<usize>, Range<usize>) {
    let (k, i) = (8 * key_len, 8 * iv_len);
    (0..k, 2 * k..2 * k + i)
}

fn all_labels(labels: &[KeyLabels], bits: usize) -> Result<Vec<Block>> {
    let v: Vec<Block> = labels
        .iter()
        .flat_map(|l| l.labels.iter().copied())
        .collect();
    if v.len() != bits {
        return Err(Error::Malformed("key-block labels of the wrong length"));
    }
    Ok(v)
}

pub(crate) fn zk_err(e: webproof_core::Error) -> Error {
    Error::Proof(e.to_string())
}

pub(crate) fn mpc_err(e: webproof_mpc::Error) -> Error {
    match e {
        webproof_mpc::Error::VerifierCheated(what) => Error::VerifierCheated(what.into()),
        e => Error::Mpc(e),
    }
}

/// The prover's statement, in a proof started with [`context`] and
/// deferred: imports its key-share labels, adds the revealed masks,
/// asserts the claimed IV and the claimed bytes. The claim's bytes are
/// what the prover asserts, whatever its outcome decrypted. Returns the
/// imported key-block bits (the consistency proof ties them to the key
/// derivation's outputs).
pub async fn prove_statement<C: RandomCotReceiver, T: Io>(
    zk: &mut Prover<C, T>,
    outcome: &ProverOutcome,
    claim: &ResponseClaim,
    blinders: &[[u8; 16]],
) -> Result<Vec<ProverBit>> {
    Ok(prove_statement_keys(zk, outcome, claim, blinders).await?.0)
}

/// [`prove_statement`], also returning the server key's authenticated
/// bits (the server Finished's check in the consistency proof uses them).
async fn prove_statement_keys<C: RandomCotReceiver, T: Io>(
    zk: &mut Prover<C, T>,
    outcome: &ProverOutcome,
    claim: &ResponseClaim,
    blinders: &[[u8; 16]],
) -> Result<(Vec<ProverBit>, Vec<ProverBit>)> {
    if blinders.len() != claim.leaves.len() {
        return Err(Error::Usage(
            "one blinder per committed leaf is needed".into(),
        ));
    }
    let shares = &outcome.key_shares;
    let (kl, il) = (shares.server_key.len(), shares.server_iv.len());
    let aead = aead_for(kl, il)?;
    let (key_r, iv_r, n) = key_block_bits(kl, il);
    let labels = all_labels(&outcome.key_labels, n)?;
    let kb = [
        &shares.client_key[..],
        &shares.server_key,
        &shares.client_iv,
        &shares.server_iv,
    ]
    .concat();
    let bits = zk
        .import_labels(&labels, &bytes_to_bits(&kb))
        .map_err(zk_err)?;
    let key = consistency::xor_public_prover(
        zk,
        &bits[key_r],
        &bytes_to_bits(&outcome.revealed_server_key),
    )
    .map_err(mpc_err)?;
    let iv = consistency::xor_public_prover(
        zk,
        &bits[iv_r],
        &bytes_to_bits(&outcome.revealed_server_iv),
    )
    .map_err(mpc_err)?;
    let client = if !claim.uses_client_key() {
        None
    } else {
        let (ck, ci) = client_block_bits(kl, il);
        if outcome.revealed_client_key.len() != kl || outcome.revealed_client_iv.len() != il {
            return Err(Error::Usage("no client key share from the verifier".into()));
        }
        check_hidden(&outcome.hidden)?;
        // The masks are the COT choice bits: each MAC's lsb.
        let mut mask_bits = Vec::with_capacity(outcome.hidden.len());
        for h in &outcome.hidden {
            let choices: Vec<bool> = h.cots.iter().map(|m| m.lsb()).collect();
            mask_bits.push(zk.import_labels(&h.cots, &choices).map_err(zk_err)?);
        }
        prove_chacha_copies(zk, &outcome.hidden, &mask_bits).await?;
        Some(DirKeys {
            masks: masks_in_byte_order(&outcome.hidden, mask_bits),
            key: consistency::xor_public_prover(
                zk,
                &bits[ck],
                &bytes_to_bits(&outcome.revealed_client_key),
            )
            .map_err(mpc_err)?,
            iv: consistency::xor_public_prover(
                zk,
                &bits[ci],
                &bytes_to_bits(&outcome.revealed_client_iv),
            )
            .map_err(mpc_err)?,
        })
    };
    let server = DirKeys {
        key,
        iv,
        masks: Vec::new(),
    };
    statement::<_, ProverBit>(
        zk,
        aead,
        &server,
        client.as_ref(),
        &outcome.recording,
        &outcome.hidden,
        claim,
        Some(blinders),
    )
    .await?;
    Ok((bits, server.key))
}

/// The verifier's side of [`prove_statement`]; returns the revealed
/// ranges, valid only once the sealed proof verified, and the key-block
/// bits.
pub async fn verify_statement<C: RandomCotSender, T: Io>(
    zk: &mut Verifier<C, T>,
    outcome: &VerifierOutcome,
    claim: &ResponseClaim,
) -> Result<(VerifiedResponse, Vec<VerifierBit>)> {
    let (out, bits, _) = verify_statement_keys(zk, outcome, claim).await?;
    Ok((out, bits))
}

/// [`verify_statement`], also returning the server key's authenticated
/// bits.
async fn verify_statement_keys<C: RandomCotSender, T: Io>(
    zk: &mut Verifier<C, T>,
    outcome: &VerifierOutcome,
    claim: &ResponseClaim,
) -> Result<(VerifiedResponse, Vec<VerifierBit>, Vec<VerifierBit>)> {
    let suite = suite_params(outcome.suite)
        .ok_or_else(|| Error::Unsupported(format!("suite {}", outcome.suite)))?;
    let shares = &outcome.key_shares;
    let (kl, il) = (suite.key_len, suite.iv_len);
    if shares.server_key.len() != kl || shares.server_iv.len() != il {
        return Err(Error::Malformed("key shares of the wrong length"));
    }
    let aead = aead_for(kl, il)?;
    let (key_r, iv_r, n) = key_block_bits(kl, il);
    let labels = all_labels(&outcome.key_labels, n)?;
    let bits = zk.import_labels(&labels);
    let key =
        consistency::xor_public_verifier(zk, &bits[key_r], &bytes_to_bits(&shares.server_key))
            .map_err(mpc_err)?;
    let iv = consistency::xor_public_verifier(zk, &bits[iv_r], &bytes_to_bits(&shares.server_iv))
        .map_err(mpc_err)?;
    let client = if !claim.uses_client_key() {
        None
    } else {
        let (ck, ci) = client_block_bits(kl, il);
        check_hidden(&outcome.hidden)?;
        // The COT keys are the masks' 0-labels (their flips are zero).
        let mask_bits: Vec<Vec<VerifierBit>> = outcome
            .hidden
            .iter()
            .map(|h| zk.import_labels(&h.cots))
            .collect();
        verify_chacha_copies(zk, &outcome.hidden, &mask_bits).await?;
        Some(DirKeys {
            masks: masks_in_byte_order(&outcome.hidden, mask_bits),
            key: consistency::xor_public_verifier(
                zk,
                &bits[ck],
                &bytes_to_bits(&shares.client_key),
            )
            .map_err(mpc_err)?,
            iv: consistency::xor_public_verifier(zk, &bits[ci], &bytes_to_bits(&shares.client_iv))
                .map_err(mpc_err)?,
        })
    };
    let server = DirKeys {
        key,
        iv,
        masks: Vec::new(),
    };
    let (len, request_len) = statement::<_, VerifierBit>(
        zk,
        aead,
        &server,
        client.as_ref(),
        &outcome.recording,
        &outcome.hidden,
        claim,
        None,
    )
    .await?;
    let out = VerifiedResponse {
        response_len: len,
        server_iv: claim.iv.clone(),
        ranges: placed(&claim.ranges),
        request_len,
        request_ranges: placed(&claim.request),
        request_crlf_free: claim
            .request_crlf_free
            .iter()
            .map(|&(at, n)| at..at + n)
            .collect(),
        leaves: claim.leaves.clone(),
        leaf_hashes: claim.leaf_hashes.clone(),
        close_notify: claim.close_notify,
        prover_bytes: 0,
        verifier_bytes: 0,
    };
    Ok((out, bits, server.key))
}

/// The claim's ranges as the verifier's output places them.
fn placed(ranges: &[(usize, Vec<u8>)]) -> Vec<RevealedRange> {
    ranges
        .iter()
        .map(|(offset, bytes)| RevealedRange {
            offset: *offset,
            bytes: bytes.clone(),
        })
        .collect()
}

/// Authenticated key and IV bits of one direction, and (the request's)
/// the masks of its records' public ciphertexts.
struct DirKeys<B> {
    key: Vec<B>,
    iv: Vec<B>,
    masks: Vec<Vec<B>>,
}

/// One direction's committed leaves: what the statement proves of them.
struct Leaves {
    /// The direction's leaves, in order.
    leaves: Vec<LeafRange>,
    /// Their claimed hashes.
    hashes: Vec<[u8; 32]>,
    /// The prover's blinders (the verifier has none).
    blinders: Option<Vec<Vec<u8>>>,
}

/// One direction's part of the statement: the IV bits equal the claimed
/// IV, each claimed byte is its record's keystream byte XOR the recorded
/// ciphertext, and each committed leaf's hash is over the plaintext of its
/// bytes (the leaf's header, from the verifier's view of its offsets, then
/// the blinder, then the plaintext, as `webproof_attestation::commit`).
async fn direction<P: webproof_tlsproof::ZkParty<Bit = B>, B: Copy>(
    zk: &mut P,
    aead: Aead,
    keys: &DirKeys<B>,
    claimed_iv: &[u8],
    records: &ServerRecords,
    claims: &[PlaintextClaim],
    leaves: &Leaves,
) -> Result<()> {
    if claimed_iv.len() * 8 != keys.iv.len() {
        return Err(Error::Malformed("claimed IV of the wrong length"));
    }
    zk.assert_public(&keys.iv, &bytes_to_bits(claimed_iv))
        .await
        .map_err(zk_err)?;
    webproof_tlsproof::assert_masked_plaintext(
        zk,
        aead,
        &keys.key,
        claimed_iv,
        &records.records,
        &keys.masks,
        claims,
    )
    .await
    .map_err(zk_err)?;
    if keys.masks.is_empty() {
        // Every server record's tag under the key: the records reached
        // the verifier through the prover, and a flipped ciphertext bit
        // flips the same plaintext bit (see the module docs' security
        // argument). The request's masked records need none: their
        // ciphertext is the one the 2PC tagged.
        webproof_tlsproof::assert_tags(
            zk,
            aead,
            &keys.key,
            claimed_iv,
            &records.records,
            &records.tags,
        )
        .await
        .map_err(zk_err)?;
    }
    if leaves.leaves.is_empty() {
        return Ok(());
    }
    // Application-data bytes per record (0 for the others), from the
    // recording: where each leaf's bytes lie.
    let mut record_data = vec![0usize; records.records.len()];
    for &(i, _, len) in &records.app {
        record_data[i] = len;
    }
    let commitments = leaf_commitments(&leaves.leaves, leaves.leaves[0].direction, &record_data)
        .map_err(Error::Disclosure)?;
    webproof_tlsproof::assert_commitments(
        zk,
        aead,
        &keys.key,
        claimed_iv,
        &records.records,
        &keys.masks,
        &commitments,
        leaves.blinders.as_deref(),
        &leaves.hashes,
    )
    .await
    .map_err(zk_err)
}

/// The statement both parties run on the authenticated key and IV bits:
/// the response's claimed ranges and committed leaves under the server
/// keys, then the request's under the client keys (`client` is `None`
/// exactly when the claim neither reveals nor commits to any of the
/// request). `blinders`: the prover's, one per leaf of the claim. Returns
/// the lengths of the response and the request.
#[allow(clippy::too_many_arguments)]
async fn statement<P: webproof_tlsproof::ZkParty<Bit = B>, B: Copy>(
    zk: &mut P,
    aead: Aead,
    server: &DirKeys<B>,
    client: Option<&DirKeys<B>>,
    recording: &Recording,
    hidden: &[HiddenRecord],
    claim: &ResponseClaim,
    blinders: Option<&[[u8; 16]]>,
) -> Result<(usize, usize)> {
    let suite = layout_of(aead);
    let srv = server_records(recording, suite)?;
    let cli = client_records(recording, hidden, suite)?;
    if !claim.leaves.is_empty() {
        // The layout against the recording's lengths: both directions
        // partitioned in order (the attestation signs these lengths).
        check_leaves(&claim.leaves, &claim.leaf_hashes, cli.len, srv.len)?;
    }
    let leaves_of = |d: LeafDir| {
        let (leaves, hashes) = claim.leaves_of(d);
        let blinders = blinders.map(|b| {
            claim
                .leaves
                .iter()
                .zip(b)
                .filter(|(l, _)| l.direction == d)
                .map(|(_, b)| b.to_vec())
                .collect()
        });
        Leaves {
            leaves,
            hashes,
            blinders,
        }
    };
    let recv = leaves_of(LeafDir::Received);
    let claims = response_claims(&srv, claim)?;
    direction(zk, aead, server, &claim.iv, &srv, &claims, &recv).await?;
    if let Some(keys) = client {
        let sent = leaves_of(LeafDir::Sent);
        let claims = record_claims(&cli, &claim.request)?;
        direction(zk, aead, keys, &claim.request_iv, &cli, &claims, &sent).await?;
        if !claim.request_crlf_free.is_empty() {
            let class = ByteClass {
                forbidden: vec![b'\n', b'\r'],
                spans: crlf_free_spans(&cli, &claim.request_crlf_free)?,
            };
            webproof_tlsproof::assert_byte_classes(
                zk,
                aead,
                &keys.key,
                &claim.request_iv,
                &cli.records,
                &keys.masks,
                &[class],
            )
            .await
            .map_err(zk_err)?;
        }
    }
    Ok((srv.len, cli.len))
}

/// The verifier's whole sealed part, in a proof started with [`context`]
/// and deferred after its input reveal
/// ([`crate::VerifierRetained::reveal`]): the statement, then the
/// consistency proof of every garbled circuit, tied to the statement's key
/// bits.
pub async fn verify_sealed<C: RandomCotSender, T: Io>(
    zk: &mut Verifier<C, T>,
    outcome: &VerifierOutcome,
    claim: &ResponseClaim,
) -> Result<VerifiedResponse> {
    let (out, key_bits, key) = verify_statement_keys(zk, outcome, claim).await?;
    // The IV the statement asserted the key block's IV bits equal.
    let server = consist::ServerKey {
        key: &key,
        iv: &claim.iv,
    };
    consist::verify(zk, &outcome.retained, &key_bits, &server).await?;
    Ok(out)
}

/// The key shares the verifier revealed at the close (`CloseAck`) must be
/// the masks it input to the key derivation: the statement takes them as
/// public values.
fn check_revealed_shares(outcome: &ProverOutcome, masks: &KeyShares) -> Result<()> {
    let client = outcome.revealed_client_key.is_empty()
        || (outcome.revealed_client_key == masks.client_key
            && outcome.revealed_client_iv == masks.client_iv);
    if outcome.revealed_server_key != masks.server_key
        || outcome.revealed_server_iv != masks.server_iv
        || !client
    {
        return Err(Error::VerifierCheated(
            "the key shares revealed at the close are not the ones it input to the key derivation"
                .into(),
        ));
    }
    Ok(())
}

/// The prover's whole run on `ch` (see the module docs): take the
/// verifier's input reveal, send the claim, prove sealed (the consistency
/// proof of every circuit and the statement) with the verifier's answer
/// to the claim read at the first receive, check the revealed `Δ`, audit
/// the garbling, open. `cot` is the receiver of the session's COT
/// correlation (the one the pool's MACs came from).
#[allow(clippy::too_many_arguments)]
pub async fn prove_response<C: RandomCotReceiver, T: Io>(
    cot: C,
    mut ch: Channel<T>,
    cfg: Config,
    outcome: &ProverOutcome,
    claim: &ResponseClaim,
    blinders: &[[u8; 16]],
    rng: &mut (impl RngCore + CryptoRng),
) -> Result<(ProofStats, C, Channel<T>)> {
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    let retained = &outcome.retained;
    let mut claim_salt = [0u8; 32];
    rng.fill_bytes(&mut claim_salt);
    let shape = claim.shape(&claim_salt);
    ch.send(&shape.encode()).await.map_err(io)?;
    ch.flush().await.map_err(io)?;
    // Sent by the verifier after its `CloseAck`: here by now, or soon.
    let reveal = ch.recv(retained.reveal_len()).await.map_err(io)?;
    // Its answer to the claim comes next; the proof does not wait for it.
    // A refusal (`Some(reason)`) or a malformed answer (`None`) is kept
    // here, so that whichever step reads it reports it as such.
    let refused: Arc<OnceLock<Option<String>>> = Arc::new(OnceLock::new());
    let seen = Arc::clone(&refused);
    ch.check_next(1 + MAX_REFUSAL, move |m| {
        let why = match m.split_first() {
            Some((&CLAIM_TAKEN, [])) => return Ok(()),
            Some((&CLAIM_REFUSED, why)) => Some(String::from_utf8_lossy(why).into_owned()),
            _ => None,
        };
        let _ = seen.set(why);
        // Reported from `refused` below, whatever step read it.
        Err(webproof_core::ChannelError::Refused(
            "the verifier's answer to the claim".into(),
        ))
    });
    let run = async {
        let values = retained.input_values(&reveal)?;
        check_revealed_shares(outcome, &retained.check_inputs(&values)?)?;
        retained.check_server_finished(&values)?;
        let ctx = context(&outcome.recording, &shape);
        let mut zk = Prover::with_context(cot, ch, cfg, &ctx)
            .await
            .map_err(zk_err)?;
        zk.defer();
        zk.defer_claims(shape.bytes_commitment).map_err(zk_err)?;
        let (key_bits, key) = prove_statement_keys(&mut zk, outcome, claim, blinders).await?;
        let before = zk.stats();
        let server = consist::ServerKey {
            key: &key,
            iv: &claim.iv,
        };
        consist::prove(&mut zk, retained, &values, &key_bits, &server).await?;
        let zk_stats = zk.stats();
        let mut salt = [0u8; 32];
        rng.fill_bytes(&mut salt);
        let mut sealed = zk.seal(salt).await.map_err(zk_err)?;
        let delta = consistency::receive_delta(&mut sealed)
            .await
            .map_err(mpc_err)?;
        // Only an honest garbling and honest OLE answers get the revealed
        // bytes and the opening.
        retained.audit(delta, &values)?;
        retained.audit_oles(delta, &reveal)?;
        let (_, ch) = sealed.parts();
        ch.send(&claim.disclosure(&claim_salt)).await.map_err(io)?;
        let (cot, ch) = sealed.open().await.map_err(zk_err)?;
        let s = ch.stats();
        Ok((
            ProofStats {
                sent: s.sent(),
                received: s.received(),
                zk: zk_stats,
                consistency: ConsistencyStats {
                    and_gates: zk_stats.and_gates - before.and_gates,
                    cots_used: zk_stats.cots_used - before.cots_used,
                    reveal: reveal.len() as u64,
                    circuits: retained.runs.len(),
                },
            },
            cot,
            ch,
        ))
    };
    // Whatever step read the refusal, the verifier's reason is the error.
    run.await.map_err(|e| match refused.get() {
        Some(Some(why)) => Error::Aborted(format!("the verifier refused the claim: {why}")),
        Some(None) => Error::Malformed("the verifier's answer to the claim"),
        None => e,
    })
}

/// The verifier's whole run on `ch`: reveal its input bits (the prover's
/// `Close` fixed the recording before), receive and answer the claim,
/// verify the sealed proof, reveal `Δ`, check the opening. `cot` is the
/// sender of the session's COT correlation (its `Δ` must be the
/// garbler's).
pub async fn verify_response<C: RandomCotSender, T: Io>(
    cot: C,
    mut ch: Channel<T>,
    cfg: Config,
    outcome: &VerifierOutcome,
    can_attest: bool,
    rng: &mut (impl RngCore + CryptoRng),
) -> Result<VerifiedResponse> {
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    // The reveal depends on nothing the prover says now: it goes first,
    // so the prover's proof need not wait a round trip for it.
    ch.send(&outcome.retained.reveal()).await.map_err(io)?;
    ch.flush().await.map_err(io)?;
    let payloads = outcome_len(outcome);
    let max = 2 * (1 + 255 + 4 + 8 * MAX_RANGES) + 4 + 41 * MAX_LEAVES.min(payloads) + 32;
    let msg = ch.recv(max).await.map_err(io)?;
    let shape = match ClaimShape::decode(&msg).and_then(|c| admit(outcome, c, can_attest)) {
        Ok(c) => c,
        Err(e) => {
            // The prover is proving already: tell it why, and take what
            // it sends until its next receive reads this and it hangs up.
            let mut why = e.to_string();
            let mut cut = why.len().min(MAX_REFUSAL);
            while !why.is_char_boundary(cut) {
                cut -= 1;
            }
            why.truncate(cut);
            let _ = ch
                .send(&[&[CLAIM_REFUSED][..], why.as_bytes()].concat())
                .await;
            let _ = ch.flush().await;
            let mut left = MAX_DRAIN;
            while let Ok(m) = ch.recv(left).await {
                left = left.saturating_sub(m.len() + 4);
            }
            return Err(e);
        }
    };
    ch.send(&[CLAIM_TAKEN]).await.map_err(io)?;
    ch.flush().await.map_err(io)?;
    let ctx = context(&outcome.recording, &shape);
    let mut zk = Verifier::with_context(cot, ch, cfg, &ctx, rng)
        .await
        .map_err(zk_err)?;
    if zk.delta() != outcome.delta {
        return Err(Error::Usage(
            "the proof's COT sender has another Delta than the garbler".into(),
        ));
    }
    zk.defer();
    zk.defer_claims(shape.bytes_commitment).map_err(zk_err)?;
    let mut out = verify_sealed(&mut zk, outcome, &shape.placeholder()).await?;
    let mut sealed = zk.seal().await.map_err(zk_err)?;
    consistency::reveal_delta(&mut sealed)
        .await
        .map_err(mpc_err)?;
    let (_, ch) = sealed.parts();
    let disclosure = ch.recv_exact(32 + shape.revealed_len()).await.map_err(io)?;
    let claim = shape.open(&disclosure)?;
    let claimed = claimed_values(outcome, &claim)?;
    let (_, ch) = sealed.verify_claimed(&claimed).await.map_err(zk_err)?;
    out.ranges = placed(&claim.ranges);
    out.request_ranges = placed(&claim.request);
    let s = ch.stats();
    out.prover_bytes = s.received();
    out.verifier_bytes = s.sent();
    Ok(out)
}

/// The record layout of the AEAD the statement runs (the PRF hash is
/// not implied; only the layout is read).
fn layout_of(aead: Aead) -> Tls12Suite {
    match aead {
        Aead::Aes128Gcm => Tls12Suite::AES_128_GCM_SHA256,
        Aead::Aes256Gcm => Tls12Suite::AES_256_GCM_SHA384,
        Aead::ChaCha20Poly1305 => Tls12Suite::CHACHA20_POLY1305_SHA256,
    }
}

/// The negotiated suite's parameters, from the verifier's own view.
fn verifier_suite(outcome: &VerifierOutcome) -> Result<Tls12Suite> {
    suite_params(outcome.suite)
        .ok_or_else(|| Error::Unsupported(format!("suite {}", outcome.suite)))
}

/// The verifier's checks of a claim before the proof: every range within
/// its direction's application data (which also bounds what the
/// statement and the disclosure may take), a commitment only with an
/// attestation key, and its leaves partitioning both directions of the
/// recording.
fn admit(outcome: &VerifierOutcome, claim: ClaimShape, can_attest: bool) -> Result<ClaimShape> {
    let within = |places: &[(usize, usize)], len: usize| {
        places
            .iter()
            .all(|&(at, n)| at.checked_add(n).is_some_and(|end| end <= len))
    };
    let suite = verifier_suite(outcome)?;
    let srv = server_records(&outcome.recording, suite)?;
    if claim.close_notify {
        last_alert(&srv)?;
    }
    if !within(&claim.ranges, srv.len) {
        return Err(Error::Malformed(
            "a claimed range lies outside the application data",
        ));
    }
    if !claim.request.is_empty() {
        let cli = client_records(&outcome.recording, &outcome.hidden, suite)?;
        if !within(&claim.request, cli.len) {
            return Err(Error::Malformed(
                "a claimed range lies outside the application data",
            ));
        }
    }
    if claim.leaves.is_empty() {
        return Ok(claim);
    }
    if !can_attest {
        return Err(Error::Disclosure(
            webproof_disclosure::DisclosureError::Attestation(
                "this verifier does not sign attestations (it has no attestation key)".into(),
            ),
        ));
    }
    let cli = client_records(&outcome.recording, &outcome.hidden, suite)?;
    check_leaves(&claim.leaves, &claim.leaf_hashes, cli.len, srv.len)?;
    Ok(claim)
}

/// The claimed bits of the statement in the order it claims them (the
/// response's ranges, then the request's when the statement covers it),
/// for the check of the disclosed bytes against the sealed proof.
fn claimed_values(outcome: &VerifierOutcome, claim: &ResponseClaim) -> Result<Vec<bool>> {
    let suite = verifier_suite(outcome)?;
    let srv = server_records(&outcome.recording, suite)?;
    let claims = response_claims(&srv, claim)?;
    let mut bits = webproof_tlsproof::claimed_bits(&srv.records, &claims).map_err(zk_err)?;
    if claim.uses_client_key() {
        let cli = client_records(&outcome.recording, &outcome.hidden, suite)?;
        let claims = record_claims(&cli, &claim.request)?;
        bits.extend(webproof_tlsproof::claimed_bits(&cli.records, &claims).map_err(zk_err)?);
    }
    Ok(bits)
}

/// The claim's leaves, one hash each, partition the request (`sent_len`
/// bytes) and the response (`received_len`) in order.
fn check_leaves(
    leaves: &[LeafRange],
    hashes: &[[u8; 32]],
    sent_len: usize,
    received_len: usize,
) -> Result<()> {
    let len = |n: usize| u32::try_from(n).map_err(|_| Error::Malformed("transcript too long"));
    if hashes.len() != leaves.len() {
        return Err(Error::Malformed("one hash per committed leaf is needed"));
    }
    check_layout(leaves, len(sent_len)?, len(received_len)?).map_err(|e| {
        Error::Disclosure(webproof_disclosure::DisclosureError::Attestation(format!(
            "committed leaves: {e}"
        )))
    })
}

/// Bytes of the recorded payloads both ways (a bound on a claim's bytes
/// and on its leaves, each at least one byte).
fn outcome_len(outcome: &VerifierOutcome) -> usize {
    let r = &outcome.recording;
    r.received
        .iter()
        .chain(&r.sent)
        .map(|r| r.payload.len())
        .sum()
}

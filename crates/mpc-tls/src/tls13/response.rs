//! The verified response of a TLS 1.3 session: after `Close` /
//! `CloseAck`, a QuickSilver proof (`webproof_zk`) that the server records
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
//!   is its record's keystream byte XOR the recorded ciphertext byte.
//!
//! The verifier takes the records (sequence numbers from 0 after the
//! server Finished, their ciphertexts, tags and headers) from its own
//! recording, and checks the claim's shape against it before the proof:
//! one entry per record, each content within its record, a type of
//! application data, handshake (a NewSessionTicket; a KeyUpdate's next
//! record would fail its tag under this key) or alert, an alert only
//! last, every range within the response.
//!
//! # Not yet (see `docs/protocol/mpc-tls13.md`)
//! The proof is plain, not sealed, and runs neither the consistency
//! proof of the garbled circuits nor the prover's audit of them
//! (`crate::consist` knows TLS 1.2's circuits only): the revealed bytes
//! travel in the claim before the proof. It is sound against a prover
//! (the key bits are output labels of the verifier's garbling, which the
//! prover cannot forge), but the prover's protection against a garbler
//! that cheats rests, for TLS 1.3 sessions so far, on the dual execution
//! of the request's keystream only. No request ranges and no attestation
//! commitments yet.

use super::{Tls13ProverSession, Tls13VerifierSession};
use crate::error::{Error, Result};
use crate::response::{mpc_err, zk_err};
use core::ops::Range;
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use webproof_circuits::bytes_to_bits;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Channel, Io};
use webproof_mpc::consistency;
use webproof_mpc::tls13::IV_LEN;
use webproof_tls::record::{content_type, Record};
use webproof_tls::Recording;
use webproof_tlsproof::{Aead, PlaintextClaim, RecordTag, SealedRecord};
use webproof_zk::{Config, Prover, Verifier};

/// Most revealed ranges in a claim.
const MAX_RANGES: usize = 256;

/// The AES-GCM tag.
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
    Ok(match super::schedule_of(suite)?.key_len {
        16 => (Aead::Aes128Gcm, 16),
        _ => (Aead::Aes256Gcm, 32),
    })
}

/// What the prover claims of the server's records after its Finished.
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
}

impl Claim13 {
    /// The prover's claim revealing `ranges` of the response it
    /// decrypted.
    pub fn new(p: &Tls13ProverSession, ranges: &[Range<usize>]) -> Result<Self> {
        let r = p
            .response()
            .ok_or(Error::OutOfOrder("a claim before CloseAck"))?;
        let (_, own) = p.key_block()?;
        let iv = r.revealed.combine(&own).server_iv;
        let mut out = Vec::new();
        for range in ranges {
            let bytes = r
                .response
                .get(range.clone())
                .ok_or(Error::Usage("a range outside the response".into()))?;
            out.push((range.start, bytes.to_vec()));
        }
        Ok(Claim13 {
            server_iv: iv.try_into().map_err(|_| Error::Malformed("IV length"))?,
            records: r.records.clone(),
            alert: r.alert,
            ranges: out,
        })
    }

    /// Bytes: the IV, the record count and per record its type and
    /// length (u32), an alert flag and the alert, the range count and
    /// per range its offset, length and bytes (u32 big-endian).
    pub fn encode(&self) -> Vec<u8> {
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
        v.extend((self.ranges.len() as u32).to_be_bytes());
        for (o, b) in &self.ranges {
            v.extend((*o as u32).to_be_bytes());
            v.extend((b.len() as u32).to_be_bytes());
            v.extend(b);
        }
        v
    }

    /// Parse [`Self::encode`]'s bytes; every count is checked against the
    /// bytes present before anything is allocated.
    pub fn decode(b: &[u8]) -> Result<Self> {
        let bad = Error::Malformed("a TLS 1.3 response claim");
        let mut r = b;
        let mut take = |n: usize| -> Result<&[u8]> {
            if r.len() < n {
                return Err(bad.clone());
            }
            let (a, rest) = r.split_at(n);
            r = rest;
            Ok(a)
        };
        let server_iv: [u8; IV_LEN] = take(IV_LEN)?.try_into().expect("12");
        let u32_at = |s: &[u8]| u32::from_be_bytes(s.try_into().expect("4")) as usize;
        let n = u32_at(take(4)?);
        let mut records = Vec::new();
        for _ in 0..n {
            let e = take(5)?;
            records.push((e[0], u32_at(&e[1..])));
        }
        let alert = match take(1)?[0] {
            0 => None,
            1 => Some(take(2)?.try_into().expect("2")),
            _ => return Err(bad),
        };
        let m = u32_at(take(4)?);
        if m > MAX_RANGES {
            return Err(Error::Malformed("too many ranges"));
        }
        let mut ranges = Vec::new();
        for _ in 0..m {
            let o = u32_at(take(4)?);
            let l = u32_at(take(4)?);
            ranges.push((o, take(l)?.to_vec()));
        }
        if !take(0)?.is_empty() || !r.is_empty() {
            return Err(bad);
        }
        Ok(Claim13 {
            server_iv,
            records,
            alert,
            ranges,
        })
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
    for (at, bytes) in &claim.ranges {
        let end = at
            .checked_add(bytes.len())
            .filter(|&e| e <= st.verified.response_len)
            .ok_or(Error::Malformed("a revealed range outside the response"))?;
        let mut pos = *at;
        while pos < end {
            let k = app.partition_point(|&(_, off, len)| off + len <= pos);
            let (ri, off, len) = app[k];
            let stop = end.min(off + len);
            st.claims.push(PlaintextClaim {
                record: ri,
                offset: pos - off,
                bytes: bytes[pos - at..stop - at].to_vec(),
            });
            pos = stop;
        }
    }
    Ok(st)
}

/// The proof's context: the recording and the claim.
fn context(recording: &Recording, claim: &Claim13) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof mpc-tls13 verified response v1");
    h.update(recording.digest());
    h.update(claim.encode());
    h.finalize().into()
}

/// The prover's run: the claim, then the proof, on `ch` with the
/// session's COT correlation (`cot`: the receiver whose sender's `Δ` is
/// the garbler's).
pub async fn prove_response13<C: RandomCotReceiver, T: Io>(
    cot: C,
    mut ch: Channel<T>,
    cfg: Config,
    p: &Tls13ProverSession,
    claim: &Claim13,
) -> Result<(C, Channel<T>)> {
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    let start = p.server_app_start().ok_or(Error::OutOfOrder("the proof"))?;
    let r = p
        .response()
        .ok_or(Error::OutOfOrder("the proof before CloseAck"))?;
    let st = statement(&p.recording().received, start, claim)?;
    ch.send(&claim.encode()).await.map_err(io)?;
    ch.flush().await.map_err(io)?;
    let mut zk = Prover::with_context(cot, ch, cfg, &context(p.recording(), claim))
        .await
        .map_err(zk_err)?;
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
    let (mut cot, mut ch) = zk.finish().await.map_err(zk_err)?;
    // The proof is done: the verifier's reveal, and the audit.
    super::audit::audit13(&mut cot, &mut ch, p).await?;
    Ok((cot, ch))
}

/// The verifier's run: the claim checked against its recording, then the
/// proof; the revealed ranges, valid only if this returns `Ok`.
pub async fn verify_response13<C: RandomCotSender, T: Io>(
    cot: C,
    mut ch: Channel<T>,
    cfg: Config,
    v: &Tls13VerifierSession,
    rng: &mut (impl RngCore + CryptoRng),
) -> Result<Verified13> {
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    let start = v.server_app_start().ok_or(Error::OutOfOrder("the proof"))?;
    let recording = v.recording();
    // At most: the IV, a header per record, the alert, the ranges' heads
    // and every byte of the response once more.
    let payload: usize = recording.received.iter().map(|r| r.payload.len()).sum();
    let max = IV_LEN + 4 + 5 * recording.received.len() + 3 + 4 + 8 * MAX_RANGES + payload;
    let msg = ch.recv(max).await.map_err(io)?;
    let claim = Claim13::decode(&msg)?;
    let st = statement(&recording.received, start, &claim)?;
    let (zero, masks, delta) = v.key_block()?;
    let mut zk = Verifier::with_context(cot, ch, cfg, &context(recording, &claim), rng)
        .await
        .map_err(zk_err)?;
    if zk.delta() != delta {
        return Err(Error::Usage(
            "the proof's COT sender has another Delta than the garbler".into(),
        ));
    }
    let bits = zk.import_labels(&zero);
    let (aead, key_len) = aead_of(v.suite())?;
    let (kr, ir) = server_bits(key_len);
    let key = consistency::xor_public_verifier(&zk, &bits[kr], &bytes_to_bits(&masks.server_key))
        .map_err(mpc_err)?;
    let iv = consistency::xor_public_verifier(&zk, &bits[ir], &bytes_to_bits(&masks.server_iv))
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
    let (mut cot, mut ch) = zk.finish().await.map_err(zk_err)?;
    // The proof verified: nothing the prover learns now can change it.
    super::audit::reveal13(&mut cot, &mut ch, v).await?;
    Ok(st.verified)
}

//! The zero-knowledge statements of proxy mode.
//!
//! After a proxied TLS session the verifier holds the recorded ciphertexts and
//! the public handshake data it checked itself (certificates, signatures,
//! transcript hashes). This crate proves, with the QuickSilver engine of
//! [`webproof_zk`], that:
//!
//! - **TLS 1.3**: there is a handshake secret `HS` from which the client and
//!   server *handshake* traffic secrets follow (they were revealed to the
//!   verifier, which used them to check the server's handshake flight), and
//!   from which — with the transcript hashes as public inputs — the
//!   application traffic keys and IVs of both directions follow;
//! - **TLS 1.2**: there is a master secret from which the key block follows
//!   and whose client and server Finished `verify_data` equal what the
//!   recorded, encrypted Finished records decrypt to (this binds the master
//!   secret to the server's view of the handshake);
//! - every opened byte of every record is the ciphertext XOR the keystream of
//!   **the one key per direction derived above** (nonce = IV XOR sequence
//!   number, or the TLS 1.2 explicit nonce), so no record can be "decrypted"
//!   under a key of the prover's choosing (the key-consistency attack), and
//!   AES-GCM's lack of key commitment does not matter: the key is fixed by
//!   the handshake.
//!
//! The key derivation runs HMAC with each key's inner chaining state
//! opened to the verifier (and, in TLS 1.2, the PRF's chain values `A(i)`):
//! the verifier hashes the public messages from those states itself and
//! only the outer compressions are proven, about 0.38 M AND for TLS 1.3
//! with SHA-256 instead of 0.61 M (0.17 M instead of 0.46 M for TLS 1.2).
//! The outer states stay hidden, so the keys do; the `kdf` module gives the
//! argument.
//!
//! For attestations, a direction can also carry hash [`Commitment`]s:
//! `SHA-256(prefix || blinder || plaintext spans)` computed inside the proof
//! over the plaintext the records decrypt to, with a secret blinder, so the
//! verifier can sign digests of data it never sees and the prover can later
//! open them to a third party.
//!
//! A direction can also carry [`ByteClass`] constraints: spans of plaintext
//! proven, without being opened, to avoid a set of byte values (each byte's
//! equality with each forbidden value is computed by AND gates on its
//! plaintext bits and asserted zero). Proxy mode uses them to prove that the
//! hidden bytes of a JSON body cannot change how its revealed skeleton is
//! read (`webproof_disclosure::json`).
//!
//! When a whole direction is disclosed, the fast path opens the traffic key
//! and IV of that direction instead (the verifier then decrypts and checks
//! the AEAD tags itself).
//!
//! ## AEAD tags
//!
//! Tags are not checked inside the proof. For the **server's** records none
//! is needed: the verifier recorded their ciphertexts itself on its
//! connection to the server, so their integrity is not in question and what
//! the proof must bind is the key. The **client's** records are another
//! matter: the prover produced them, so a record whose tag the server would
//! reject (and so never took as data) would still count as "sent". A
//! direction disclosed by [`Disclosure::Key`] has its tags checked by the
//! verifier, which decrypts it. Otherwise the direction sets
//! [`DirectionStatement::open_tag_material`] and the proof **opens each record's
//! one-time MAC material** ([`TagMaterial`]), computed in the circuit from the
//! one bound key of the direction and the record's nonce (the same nonce the
//! keystream uses):
//!
//! - AES-GCM: `H = E_K(0^128)` once per direction, and `E_K(J0)` per record,
//!   `J0 = nonce || 0x00000001`; the tag is `GHASH_H(A, C) XOR E_K(J0)`;
//! - ChaCha20-Poly1305: the 32-byte Poly1305 key per record, the first half
//!   of the ChaCha20 block with counter 0 under the record's nonce.
//!
//! The verifier recomputes each tag from the public ciphertext, the record's
//! additional data and this material, and compares it with the recorded tag
//! (`webproof_proxy::tags`). As the material is proven to come from the
//! bound key and nonce, this is exactly the AEAD's own tag check under the
//! key of the handshake: a record the server would reject is refused.
//!
//! **Why this reveals no plaintext.** The plaintext is hidden by keystream
//! blocks: AES-GCM `E_K(nonce || c)` for counters `c >= 2`, ChaCha20 blocks
//! with counter `>= 1`. The opened blocks are the same keyed permutation
//! (AES) or PRF (ChaCha20 block function) at inputs that are none of these:
//! `0^128` and `nonce || 1` differ from every `nonce' || c` with `c >= 2`
//! whatever the nonces (even if a TLS 1.2 sender repeated an explicit
//! nonce), and ChaCha20's counter 0 differs from every counter `>= 1`. For a
//! pseudorandom function or permutation, outputs at other inputs say
//! nothing about the keystream (beyond the negligible PRP/PRF switching
//! term). Besides, the ciphertext and the tag are public, so `E_K(J0) = tag
//! XOR GHASH_H(A, C)` adds nothing once `H` is known, and `H` is a single
//! block unrelated to any record. The second half of ChaCha20's block 0 is
//! not opened. The server's material is never opened.
//!
//! **What it does give, and why that is harmless here.** With `H` and
//! `E_K(J0)` (or the Poly1305 key) of a nonce, anyone can forge a tag for
//! any ciphertext under *that nonce*; with the keystream bytes it already
//! knows (ciphertext XOR disclosed plaintext) it could even choose those
//! bytes. TLS 1.3 and TLS 1.2 ChaCha20 derive the nonce from the sequence
//! number, so no opened nonce is ever accepted again; TLS 1.2 AES-GCM lets
//! the sender pick the explicit nonce and servers do not refuse a repeated
//! one. So the verifier must no longer be able to write to the server's
//! connection when it receives the material: proxy mode's verifier drops
//! its connection to the server when the relay ends, before the proof
//! (which opens the material) starts. [`run`] returns the material only
//! once the whole proof has been checked.
//!
//! Both parties run [`run`] with the same public [`Statement`]; only the
//! prover passes the witness. The crate does no I/O and builds for
//! `wasm32-unknown-unknown`.
#![forbid(unsafe_code)]

mod circuits;
mod kdf;
mod party;
mod records;
pub mod session;
mod statement;

pub use party::ZkParty;
pub use records::{claimed_bits, PlaintextClaim};
pub use session::{ProverPreprocessed, SessionConfig, VerifierPreprocessed};
pub use statement::MAX_BYTE_CLASSES;
pub use statement::{
    Aead, ByteClass, Commitment, DirectionOutput, DirectionProof, DirectionStatement, Disclosure,
    Handshake, Proven, SealedRecord, Statement, TagMaterial, Tls12Handshake, Tls13Handshake,
    Witness,
};
pub use webproof_circuits::sha2::HashAlg;
pub use webproof_core::{Error, Result};

#[cfg(test)]
mod golden;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;

use kdf::HmacKey;
use webproof_circuits::bits::{bits_to_bytes, bytes_to_bits};

/// TLS 1.3 Finished / TLS 1.2 Finished handshake header: type 20, length 12.
const FINISHED_HEADER: [u8; 4] = [0x14, 0x00, 0x00, 0x0c];

/// Prove (with the prover's `witness`) or verify (`None`) `statement`.
///
/// Returns what was proven: per direction the traffic key and IV or the
/// opened plaintext bytes of each record, and the digests of the hash
/// commitments. The verifier must treat the result as valid only if this
/// returns `Ok`.
pub async fn run<P: ZkParty>(
    party: &mut P,
    statement: &Statement,
    witness: Option<&Witness>,
) -> Result<Proven> {
    statement.validate()?;
    if let Some(w) = witness {
        w.check_against(statement)?;
    }
    let secret = witness.map(|w| w.secret.as_slice());
    let keys = match &statement.handshake {
        Handshake::Tls13(hs) => prove_tls13_keys(party, statement.aead, hs, secret).await?,
        Handshake::Tls12(hs) => prove_tls12_keys(party, statement.aead, hs, secret).await?,
    };
    let mut ivs = keys.client_iv.clone();
    ivs.extend_from_slice(&keys.server_iv);
    let iv_bits = party.open(&ivs).await?;
    let (client_iv, server_iv) = {
        let bytes = bits_to_bytes(&iv_bits);
        let n = keys.client_iv.len() / 8;
        (bytes[..n].to_vec(), bytes[n..].to_vec())
    };

    let mut client = DirectionKey::new(statement.aead, &keys.client_key, client_iv);
    let mut server = DirectionKey::new(statement.aead, &keys.server_key, server_iv);

    if let Handshake::Tls12(hs) = &statement.handshake {
        prove_tls12_finished(party, &mut client, &mut server, hs, &keys).await?;
    }

    let sent = records::prove_direction(
        party,
        &mut client,
        &statement.sent,
        witness.map(|w| w.sent_blinders.as_slice()),
        None,
    )
    .await?;
    let recv = records::prove_direction(
        party,
        &mut server,
        &statement.recv,
        witness.map(|w| w.recv_blinders.as_slice()),
        None,
    )
    .await?;
    party.check().await?;
    Ok(Proven { sent, recv })
}

/// Deferred decryption with a key authenticated elsewhere (MPC mode,
/// where the key comes from garbled labels, `webproof_mpc::consistency`):
/// proves that the plaintext of `records` under `key` (authenticated bits,
/// most significant bit of the first byte first) and the public `iv`
/// (TLS 1.2 GCM: the 4-byte salt; the nonce is the salt and the record's
/// explicit nonce) is `claims`, with the same keystream circuits as
/// [`run`]. Only assertions, no openings: it runs in a sealed proof too.
/// Runs no check of its own (the caller's `check`, `finish` or `seal`
/// covers it). The caller takes every public value (records, claims'
/// places) from its own recording.
pub async fn assert_plaintext<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    key: &[P::Bit],
    iv: &[u8],
    records: &[SealedRecord],
    claims: &[PlaintextClaim],
) -> Result<()> {
    assert_masked_plaintext(party, aead, key, iv, records, &[], claims).await
}

/// [`assert_plaintext`] for records whose ciphertext is public only under
/// a mask (MPC mode's request, which the verifier never sees): record
/// `i`'s ciphertext is `records[i].ciphertext` XOR the authenticated bits
/// `masks[i]` (one per ciphertext bit, [`webproof_circuits::bytes_to_bits`]'s
/// order), so each claimed byte is asserted to be the keystream XOR the
/// mask XOR the public bytes. `masks` is empty (no mask) or has one entry
/// per record.
pub async fn assert_masked_plaintext<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    key: &[P::Bit],
    iv: &[u8],
    records: &[SealedRecord],
    masks: &[Vec<P::Bit>],
    claims: &[PlaintextClaim],
) -> Result<()> {
    check_key_and_iv(aead, key.len(), iv, records)?;
    let mut dir = DirectionKey::new(aead, key, iv.to_vec());
    dir.set_masks(records, masks)?;
    records::assert_plaintext(party, &mut dir, records, claims).await
}

/// Hash commitments over the plaintext of `records` under a key
/// authenticated elsewhere (MPC mode's attestations), with assertions
/// only: each commitment's digest, computed in the proof as for [`run`]
/// (`SHA-256(prefix || blinder || plaintext of spans)`), is asserted equal
/// to the digest the prover claimed in the clear (`digests`, one per
/// commitment, in order), so it runs in a sealed proof. `blinders` is the
/// prover's witness (one per commitment); the verifier passes `None`.
/// `key` and `iv` as for [`assert_plaintext`], `masks` as for
/// [`assert_masked_plaintext`] (empty: the ciphertexts are public); runs
/// no check of its own.
#[allow(clippy::too_many_arguments)]
pub async fn assert_commitments<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    key: &[P::Bit],
    iv: &[u8],
    records: &[SealedRecord],
    masks: &[Vec<P::Bit>],
    commitments: &[Commitment],
    blinders: Option<&[Vec<u8>]>,
    digests: &[[u8; 32]],
) -> Result<()> {
    check_key_and_iv(aead, key.len(), iv, records)?;
    statement::check_commitments(records, commitments)?;
    let mut dir = DirectionKey::new(aead, key, iv.to_vec());
    dir.set_masks(records, masks)?;
    let direction = DirectionStatement {
        records: records.to_vec(),
        disclosure: Disclosure::Ranges(Vec::new()),
        commitments: commitments.to_vec(),
        open_tag_material: false,
        byte_classes: Vec::new(),
    };
    records::prove_direction(party, &mut dir, &direction, blinders, Some(digests)).await?;
    Ok(())
}

/// Byte-class constraints over the plaintext of `records` under a key
/// authenticated elsewhere (MPC mode's request, whose hidden head bytes are
/// proven free of CR and LF), with assertions only, so it runs in a sealed
/// proof: every byte of each class's spans is asserted to differ from each
/// of its forbidden values, as [`ByteClass`] in a [`Statement`]. `key`,
/// `iv` and `masks` as for [`assert_commitments`]; the caller takes the
/// spans from its own view. Runs no check of its own.
pub async fn assert_byte_classes<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    key: &[P::Bit],
    iv: &[u8],
    records: &[SealedRecord],
    masks: &[Vec<P::Bit>],
    classes: &[ByteClass],
) -> Result<()> {
    check_key_and_iv(aead, key.len(), iv, records)?;
    let direction = DirectionStatement {
        records: records.to_vec(),
        disclosure: Disclosure::Ranges(Vec::new()),
        commitments: Vec::new(),
        open_tag_material: false,
        byte_classes: classes.to_vec(),
    };
    statement::check_byte_classes(&direction)?;
    let mut dir = DirectionKey::new(aead, key, iv.to_vec());
    dir.set_masks(records, masks)?;
    records::prove_direction(party, &mut dir, &direction, None, Some(&[])).await?;
    Ok(())
}

/// A record's AEAD tag and the additional data it covers, for
/// [`assert_tags`]; the caller takes both from its own recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordTag {
    /// The additional data (TLS 1.2: sequence number, content type,
    /// version, plaintext length).
    pub aad: Vec<u8>,
    /// The tag the record carries.
    pub tag: [u8; 16],
}

/// The AEAD tags of `records` under a key authenticated elsewhere, asserted
/// in the proof. AES-GCM: `tag = GHASH_H(A, C) XOR E_K(J0)`, with `H` and
/// each record's `E_K(J0)` computed from `key` and never opened, and GHASH
/// by Horner's rule, one GF(2^128) multiplication (128 committed bits) per
/// block. ChaCha20-Poly1305: Poly1305 keyed by block 0 of the record's
/// nonce, as a circuit (about 28,000 AND gates a 16-byte block). MPC mode needs it for the server's records, which reach the
/// verifier through the prover: CTR mode is malleable, so without the tags
/// a prover could flip ciphertext bits on the way and claim the plaintext
/// it predicted. Only assertions: it runs in a sealed proof. `key` and `iv`
/// as for [`assert_plaintext`]; `tags` one per record; runs no check of its
/// own.
pub async fn assert_tags<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    key: &[P::Bit],
    iv: &[u8],
    records: &[SealedRecord],
    tags: &[RecordTag],
) -> Result<()> {
    check_key_and_iv(aead, key.len(), iv, records)?;
    if tags.len() != records.len() {
        return Err(Error::Usage(format!(
            "{} tags for {} records",
            tags.len(),
            records.len()
        )));
    }
    let mut dir = DirectionKey::new(aead, key, iv.to_vec());
    records::assert_tags(party, &mut dir, records, tags).await
}

/// A TLS 1.2 Finished record under a key authenticated elsewhere (MPC
/// mode's server Finished, checked after the session): its plaintext is
/// the Finished header and `verify_data` (96 authenticated bits, or
/// constants when it is public), and its AES-GCM tag is `tag`. Only
/// assertions: it runs in a sealed proof. `key` and `iv` as for
/// [`assert_plaintext`]; the caller takes the record and the tag's
/// additional data from its own recording; runs no check of its own.
#[allow(clippy::too_many_arguments)]
pub async fn assert_finished<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    key: &[P::Bit],
    iv: &[u8],
    record: &SealedRecord,
    tag: &RecordTag,
    verify_data: &[P::Bit],
) -> Result<()> {
    let records = core::slice::from_ref(record);
    check_key_and_iv(aead, key.len(), iv, records)?;
    if record.ciphertext.len() != 16 || verify_data.len() != 96 {
        return Err(Error::Malformed(format!(
            "a TLS 1.2 Finished record carries 16 bytes of plaintext, a verify_data 96 bits; \
             here {} bytes and {} bits",
            record.ciphertext.len(),
            verify_data.len()
        )));
    }
    let mut dir = DirectionKey::new(aead, key, iv.to_vec());
    assert_finished_plaintext(party, &mut dir, record, verify_data).await?;
    records::assert_tags(party, &mut dir, records, core::slice::from_ref(tag)).await
}

/// A 16-byte Finished record's keystream XOR `FINISHED_HEADER ‖
/// verify_data` asserted equal to its recorded ciphertext.
async fn assert_finished_plaintext<P: ZkParty>(
    party: &mut P,
    dir: &mut DirectionKey<P::Bit>,
    record: &SealedRecord,
    verify_data: &[P::Bit],
) -> Result<()> {
    let ks = dir.keystream(party, record, &[0]).await?.remove(0);
    let header = bytes_to_bits(&FINISHED_HEADER);
    let expected: Vec<P::Bit> = (0..128)
        .map(|i| {
            let m = if i < 32 {
                party.constant(header[i])
            } else {
                verify_data[i - 32]
            };
            party.xor(ks[i], m)
        })
        .collect();
    party
        .assert_public(&expected, &bytes_to_bits(&record.ciphertext))
        .await
}

/// `key_bits` and `iv` fit `aead`, and every record has the nonce it needs.
fn check_key_and_iv(
    aead: Aead,
    key_bits: usize,
    iv: &[u8],
    records: &[SealedRecord],
) -> Result<()> {
    if key_bits != 8 * aead.key_len() {
        return Err(Error::Usage(format!(
            "{key_bits} key bits for a {}-byte key",
            aead.key_len()
        )));
    }
    let iv_ok = match aead {
        // TLS 1.2: the 4-byte salt and each record's explicit nonce;
        // TLS 1.3 (MPC mode's, whose key comes from garbled labels): the
        // 12-byte IV, the nonce the IV XOR the sequence number.
        Aead::Aes128Gcm | Aead::Aes256Gcm => {
            (iv.len() == 4 && records.iter().all(|r| r.explicit_nonce.is_some()))
                || (iv.len() == 12 && records.iter().all(|r| r.explicit_nonce.is_none()))
        }
        Aead::ChaCha20Poly1305 => iv.len() == 12,
    };
    if !iv_ok {
        return Err(Error::Usage(
            "IV or explicit nonces do not fit the AEAD".into(),
        ));
    }
    Ok(())
}

/// Authenticated outputs of a key schedule.
struct SessionKeys<B> {
    client_key: Vec<B>,
    client_iv: Vec<B>,
    server_key: Vec<B>,
    server_iv: Vec<B>,
    /// TLS 1.2 only: the Finished verify_data of both sides.
    verify_data: Option<(Vec<B>, Vec<B>)>,
}

async fn prove_tls13_keys<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    hs: &Tls13Handshake,
    witness: Option<&[u8]>,
) -> Result<SessionKeys<P::Bit>> {
    let h = hs.hash;
    let hl = h.output_len();
    let secret = party.commit_secret(witness, hl).await?;
    let hs_key = HmacKey::new(party, h, &secret).await?;
    let mut hs_secrets =
        kdf::expand_label(party, &hs_key, "c hs traffic", &hs.hello_hash, hl).await?;
    hs_secrets.extend(kdf::expand_label(party, &hs_key, "s hs traffic", &hs.hello_hash, hl).await?);
    let mut public = hs.client_handshake_secret.clone();
    public.extend_from_slice(&hs.server_handshake_secret);
    party
        .assert_public(&hs_secrets, &bytes_to_bits(&public))
        .await?;

    let empty_hash = webproof_circuits::sha2::digest(h, b"");
    let derived = kdf::expand_label(party, &hs_key, "derived", &empty_hash, hl).await?;
    // Master Secret = HKDF-Extract(salt = derived, IKM = 0).
    let ms = HmacKey::new(party, h, &derived)
        .await?
        .mac(party, &vec![0u8; hl])
        .await?;
    let ms_key = HmacKey::new(party, h, &ms).await?;
    let mut keys = Vec::with_capacity(4);
    for label in ["c ap traffic", "s ap traffic"] {
        let traffic = kdf::expand_label(party, &ms_key, label, &hs.finished_hash, hl).await?;
        let tk = HmacKey::new(party, h, &traffic).await?;
        keys.push(kdf::expand_label(party, &tk, "key", &[], aead.key_len()).await?);
        keys.push(kdf::expand_label(party, &tk, "iv", &[], 12).await?);
    }
    let mut keys = keys.into_iter();
    let mut next = || keys.next().expect("four outputs");
    Ok(SessionKeys {
        client_key: next(),
        client_iv: next(),
        server_key: next(),
        server_iv: next(),
        verify_data: None,
    })
}

async fn prove_tls12_keys<P: ZkParty>(
    party: &mut P,
    aead: Aead,
    hs: &Tls12Handshake,
    witness: Option<&[u8]>,
) -> Result<SessionKeys<P::Bit>> {
    let secret = party.commit_secret(witness, 48).await?;
    let key = HmacKey::new(party, hs.hash, &secret).await?;
    let (kl, il) = (aead.key_len(), aead.tls12_iv_len());
    let seed = [hs.server_random.as_slice(), hs.client_random.as_slice()].concat();
    // AEAD suites have no MAC keys: the key block is both keys, then both IVs.
    let kb = kdf::tls12_prf(party, &key, "key expansion", &seed, 2 * kl + 2 * il).await?;
    let client_vd =
        kdf::tls12_prf(party, &key, "client finished", &hs.client_finished_hash, 12).await?;
    let server_vd =
        kdf::tls12_prf(party, &key, "server finished", &hs.server_finished_hash, 12).await?;
    let at = |from: usize, len: usize| kb[8 * from..8 * (from + len)].to_vec();
    Ok(SessionKeys {
        client_key: at(0, kl),
        server_key: at(kl, kl),
        client_iv: at(2 * kl, il),
        server_iv: at(2 * kl + il, il),
        verify_data: Some((client_vd, server_vd)),
    })
}

/// TLS 1.2: the encrypted Finished records decrypt, under the derived keys, to
/// the Finished messages whose verify_data the master secret determines.
async fn prove_tls12_finished<P: ZkParty>(
    party: &mut P,
    client: &mut DirectionKey<P::Bit>,
    server: &mut DirectionKey<P::Bit>,
    hs: &Tls12Handshake,
    keys: &SessionKeys<P::Bit>,
) -> Result<()> {
    let (client_vd, server_vd) = keys.verify_data.as_ref().expect("TLS 1.2 keys");
    // The client's verify_data is disclosed (the verifier needs the client
    // Finished to hash the server Finished); it is a PRF output and says
    // nothing about the keys.
    party
        .assert_public(client_vd, &bytes_to_bits(&hs.client_verify_data))
        .await?;
    for (dir, record, vd) in [
        (client, &hs.client_finished, client_vd),
        (server, &hs.server_finished, server_vd),
    ] {
        if record.ciphertext.len() != 16 {
            return Err(Error::Malformed(format!(
                "a TLS 1.2 Finished record carries 16 bytes of plaintext, this one {}",
                record.ciphertext.len()
            )));
        }
        assert_finished_plaintext(party, dir, record, vd).await?;
    }
    Ok(())
}

/// One direction's authenticated key material, shared by all of its records.
pub(crate) struct DirectionKey<B> {
    pub(crate) aead: Aead,
    pub(crate) key: Vec<B>,
    /// AES round keys, expanded once (the same wires for every block).
    round_keys: Option<Vec<B>>,
    /// Public IV (TLS 1.3: 12 bytes; TLS 1.2 GCM: the 4-byte salt).
    pub(crate) iv: Vec<u8>,
    /// The counter-mode heads ([`circuits::aes_ctr_head`]) of the record
    /// being proven, by prefix (nonce ‖ the counter's high bytes): its
    /// keystream comes in several calls, and each head is built once.
    heads: Vec<([u8; 15], Vec<B>)>,
    /// Per record (by sequence number), authenticated bits XORed into its
    /// keystream: its public ciphertext is masked by them
    /// ([`assert_masked_plaintext`]).
    masks: Vec<(u64, Vec<B>)>,
}

impl<B: Copy> DirectionKey<B> {
    fn new(aead: Aead, key: &[B], iv: Vec<u8>) -> Self {
        DirectionKey {
            aead,
            key: key.to_vec(),
            round_keys: None,
            iv,
            heads: Vec::new(),
            masks: Vec::new(),
        }
    }

    /// Mask each record's keystream with its `masks` entry (one bit per
    /// ciphertext bit; empty: no masks).
    fn set_masks(&mut self, records: &[SealedRecord], masks: &[Vec<B>]) -> Result<()> {
        if masks.is_empty() {
            return Ok(());
        }
        if masks.len() != records.len() {
            return Err(Error::Malformed("ciphertext masks: one per record".into()));
        }
        for (r, m) in records.iter().zip(masks) {
            if m.len() != 8 * r.ciphertext.len() || self.masks.iter().any(|(s, _)| *s == r.seq) {
                return Err(Error::Malformed(
                    "a ciphertext mask of another length, or two for one record".into(),
                ));
            }
            self.masks.push((r.seq, m.clone()));
        }
        Ok(())
    }

    /// The AEAD nonce of `record`.
    fn nonce(&self, record: &SealedRecord) -> [u8; 12] {
        let mut n = [0u8; 12];
        match (self.iv.len(), record.explicit_nonce) {
            (4, Some(explicit)) => {
                n[..4].copy_from_slice(&self.iv);
                n[4..].copy_from_slice(&explicit);
            }
            _ => {
                n.copy_from_slice(&self.iv);
                for (b, s) in n[4..].iter_mut().zip(record.seq.to_be_bytes()) {
                    *b ^= s;
                }
            }
        }
        n
    }

    /// Authenticated keystream blocks `indices` of `record` (16 bytes each
    /// for AES-GCM, 64 for ChaCha20), one vector of bits per block. The
    /// blocks are evaluated as one batch (one pass over the circuit).
    pub(crate) async fn keystream<P: ZkParty<Bit = B>>(
        &mut self,
        party: &mut P,
        record: &SealedRecord,
        indices: &[usize],
    ) -> Result<Vec<Vec<B>>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        let nonce = self.nonce(record);
        match self.aead {
            Aead::Aes128Gcm | Aead::Aes256Gcm => {
                // GCM: counter block J0 + 1 + index, J0 = nonce || 1.
                let ctrs = indices
                    .iter()
                    .map(|&index| {
                        u32::try_from(index + 2)
                            .map_err(|_| Error::Malformed("record too long for GCM".into()))
                    })
                    .collect::<Result<Vec<u32>>>()?;
                let mut blocks = self.aes_ctr_blocks(party, &nonce, &ctrs).await?;
                if let Some((_, mask)) = self.masks.iter().find(|(s, _)| *s == record.seq) {
                    for (&index, block) in indices.iter().zip(&mut blocks) {
                        // Bits past the record's end stay unmasked (unused).
                        let at = (128 * index).min(mask.len());
                        let end = (at + 128).min(mask.len());
                        for (k, &m) in block.iter_mut().zip(&mask[at..end]) {
                            *k = party.xor(*k, m);
                        }
                    }
                }
                Ok(blocks)
            }
            Aead::ChaCha20Poly1305 => {
                // Block 0 keys Poly1305; the payload starts at counter 1.
                let mut ctrs = Vec::with_capacity(4 * indices.len());
                for &index in indices {
                    let counter = u32::try_from(index + 1)
                        .map_err(|_| Error::Malformed("record too long for ChaCha20".into()))?;
                    ctrs.extend_from_slice(&counter.to_le_bytes());
                }
                let mut blocks = self.chacha_blocks(party, &ctrs, &nonce).await?;
                if let Some((_, mask)) = self.masks.iter().find(|(s, _)| *s == record.seq) {
                    for (&index, block) in indices.iter().zip(&mut blocks) {
                        // Bits past the record's end stay unmasked (unused).
                        let at = (512 * index).min(mask.len());
                        let end = (at + 512).min(mask.len());
                        for (k, &m) in block.iter_mut().zip(&mask[at..end]) {
                            *k = party.xor(*k, m);
                        }
                    }
                }
                Ok(blocks)
            }
        }
    }

    /// The one-time MAC blocks of `records` (at most [`webproof_zk`]'s batch
    /// size), as one batch: AES-GCM: `E_K(J0)` per record, preceded by
    /// `H = E_K(0^128)` if `with_hash_key`; ChaCha20: the block with counter 0
    /// per record (the Poly1305 key is its first 32 bytes). None of these
    /// blocks is keystream: GCM payloads start at counter 2, ChaCha20
    /// payloads at counter 1.
    pub(crate) async fn tag_blocks<P: ZkParty<Bit = B>>(
        &mut self,
        party: &mut P,
        records: &[SealedRecord],
        with_hash_key: bool,
    ) -> Result<Vec<Vec<B>>> {
        match self.aead {
            Aead::Aes128Gcm | Aead::Aes256Gcm => {
                let mut blocks = Vec::with_capacity(16 * (records.len() + 1));
                if with_hash_key {
                    blocks.extend_from_slice(&[0u8; 16]);
                }
                for record in records {
                    blocks.extend_from_slice(&self.nonce(record));
                    blocks.extend_from_slice(&1u32.to_be_bytes());
                }
                if blocks.is_empty() {
                    return Ok(Vec::new());
                }
                self.aes_blocks(party, &blocks).await
            }
            Aead::ChaCha20Poly1305 => {
                if records.is_empty() {
                    return Ok(Vec::new());
                }
                let nonces: Vec<u8> = records.iter().flat_map(|r| self.nonce(r)).collect();
                self.chacha_blocks(party, &[0u8; 4], &nonces).await
            }
        }
    }

    /// Expand the round keys on first use.
    async fn expand_round_keys<P: ZkParty<Bit = B>>(&mut self, party: &mut P) -> Result<()> {
        if self.round_keys.is_none() {
            let schedule = circuits::aes_key_schedule(self.aead.key_len());
            let out = party.eval(schedule, &[&self.key]).await?;
            self.round_keys = Some(out.into_iter().next().expect("one output"));
        }
        Ok(())
    }

    /// `E_K(block)` for each 16-byte block of `blocks`, as one batch.
    async fn aes_blocks<P: ZkParty<Bit = B>>(
        &mut self,
        party: &mut P,
        blocks: &[u8],
    ) -> Result<Vec<Vec<B>>> {
        self.expand_round_keys(party).await?;
        let rk = self.round_keys.as_deref().expect("expanded above");
        let n = blocks.len() / 16;
        let blocks = constants(party, blocks);
        let circuit = circuits::aes_block(self.aead.key_len());
        let out = party.eval_batch(circuit, n, &[rk, &blocks]).await?;
        let bits = out.into_iter().next().expect("one output");
        Ok(bits.chunks(128).map(<[B]>::to_vec).collect())
    }

    /// `E_K(nonce ‖ ctr)` for each counter, as one batch: the work that
    /// depends on the nonce and the counter's high bytes alone (27 of the
    /// block's S-boxes) is proven once per prefix and kept for the
    /// record's later calls ([`circuits::aes_ctr_head`]), then each block
    /// pays the rest ([`circuits::aes_ctr_tail`]).
    async fn aes_ctr_blocks<P: ZkParty<Bit = B>>(
        &mut self,
        party: &mut P,
        nonce: &[u8; 12],
        counters: &[u32],
    ) -> Result<Vec<Vec<B>>> {
        self.expand_round_keys(party).await?;
        let rk = self.round_keys.as_deref().expect("expanded above");
        let key_len = self.aead.key_len();
        let prefix = |ctr: u32| -> [u8; 15] {
            let mut p = [0u8; 15];
            p[..12].copy_from_slice(nonce);
            p[12..].copy_from_slice(&ctr.to_be_bytes()[..3]);
            p
        };
        // Heads are kept for one nonce (one record) at a time.
        if self
            .heads
            .first()
            .is_some_and(|(p, _)| p[..12] != nonce[..])
        {
            self.heads.clear();
        }
        let mut missing: Vec<[u8; 15]> = counters
            .iter()
            .map(|&c| prefix(c))
            .filter(|p| !self.heads.iter().any(|(q, _)| q == p))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let bits = constants(party, &missing.concat());
            let circuit = circuits::aes_ctr_head(key_len);
            let out = party
                .eval_batch(circuit, missing.len(), &[rk, &bits])
                .await?;
            let heads = out.into_iter().next().expect("one output");
            self.heads.extend(
                missing
                    .into_iter()
                    .zip(heads.chunks(120).map(<[B]>::to_vec)),
            );
        }
        let mut heads = Vec::with_capacity(120 * counters.len());
        for &c in counters {
            let (_, head) = self
                .heads
                .iter()
                .find(|(p, _)| *p == prefix(c))
                .expect("every head computed above");
            heads.extend_from_slice(head);
        }
        let last: Vec<u8> = counters.iter().map(|&c| c as u8).collect();
        let last = constants(party, &last);
        let circuit = circuits::aes_ctr_tail(key_len);
        let out = party
            .eval_batch(circuit, counters.len(), &[rk, &heads, &last])
            .await?;
        let bits = out.into_iter().next().expect("one output");
        Ok(bits.chunks(128).map(<[B]>::to_vec).collect())
    }

    /// ChaCha20 blocks under the direction key: `counters` holds 4 bytes
    /// (little-endian) per block or one counter for all, `nonces` 12 bytes
    /// per block or one nonce for all.
    async fn chacha_blocks<P: ZkParty<Bit = B>>(
        &mut self,
        party: &mut P,
        counters: &[u8],
        nonces: &[u8],
    ) -> Result<Vec<Vec<B>>> {
        let n = (counters.len() / 4).max(nonces.len() / 12);
        let ctr = constants(party, counters);
        let nonce = constants(party, nonces);
        let circuit = webproof_circuits::cache::chacha20_block();
        let out = party
            .eval_batch(circuit, n, &[&self.key, &ctr, &nonce])
            .await?;
        let bits = out.into_iter().next().expect("one output");
        Ok(bits.chunks(512).map(<[B]>::to_vec).collect())
    }
}

/// Public bytes as constant bits.
fn constants<P: ZkParty>(party: &P, bytes: &[u8]) -> Vec<P::Bit> {
    bytes_to_bits(bytes)
        .into_iter()
        .map(|b| party.constant(b))
        .collect()
}

//! The verifier's check of the client records' AEAD tags on the ZK path.
//!
//! The verifier recorded the server's records on its own connection to the
//! server, so their integrity is not in question. The client's records are
//! the prover's: without a tag check, a record the server would have
//! rejected (a forged or altered ciphertext, a wrong tag) would still count
//! as "sent" data. When the client direction is disclosed by its key, the
//! verifier decrypts it and so checks the tags; otherwise the ZK statement
//! asks the proof to open each client record's one-time MAC material
//! ([`tp::TagMaterial`]: AES-GCM `H` and `E_K(J0)`, ChaCha20-Poly1305 the
//! Poly1305 key), computed from the one key the handshake binds, and
//! [`check_client_tags`] recomputes every tag from the recorded ciphertext,
//! the record's additional data and that material (see `webproof_tlsproof`'s
//! docs for why the material reveals no plaintext).

use crate::aead::{additional_data, ciphertext_and_tag, OpenError, RecordCipher, TAG_LEN};
use crate::error::{malformed, ProxyError, Result};
use crate::keys::TrafficKeys;
use crate::record::Direction;
use crate::statement::{Statement, StatementRecord};
use crate::suite::{AeadAlg, CipherSuite};
use ghash::universal_hash::{KeyInit, UniversalHash};
use webproof_tlsproof as tp;

/// Verifier side, after the proof succeeded: check the AEAD tag of every
/// client (sent) record of `statement` (the statement the verifier built
/// from its own recording, the one the proof's ZK statement came from).
///
/// With the client direction disclosed by its key, the records are
/// decrypted under it; otherwise `proven.sent` must carry the tag material
/// the statement asked for (one entry per client record, in order), and
/// each tag is recomputed from it and compared in constant time.
///
/// A tag that does not verify is [`ProxyError::Tag`] naming the record;
/// material of the wrong kind or count, or missing, is
/// [`ProxyError::Malformed`].
pub fn check_client_tags(statement: &Statement, proven: &tp::Proven) -> Result<()> {
    let suite = statement.suite;
    let sent: Vec<&StatementRecord> = statement
        .records
        .iter()
        .filter(|r| r.record.direction == Direction::Sent)
        .collect();
    match (&proven.sent.tag_material, &proven.sent.disclosed) {
        (Some(material), _) => check_with_material(suite, &sent, material),
        (None, tp::DirectionOutput::Key { key, iv }) => {
            let cipher = RecordCipher::new(
                suite,
                TrafficKeys {
                    key: key.clone(),
                    iv: iv.clone(),
                },
            )?;
            for r in sent {
                // A malformed inner plaintext is authentic: the layout checks
                // of `zk::assemble_proven` deal with it.
                if let Err(OpenError::Auth) = cipher.open(r.seq, &r.record) {
                    return Err(tag_error(r));
                }
            }
            Ok(())
        }
        (None, tp::DirectionOutput::Bytes(_)) => Err(bad(
            "the proof opened no tag material for the client's records",
        )),
    }
}

fn bad(detail: impl Into<String>) -> ProxyError {
    malformed("client tag material", detail)
}

fn tag_error(r: &StatementRecord) -> ProxyError {
    ProxyError::Tag {
        direction: r.record.direction,
        index: r.index,
        seq: r.seq,
    }
}

fn check_with_material(
    suite: CipherSuite,
    sent: &[&StatementRecord],
    material: &tp::TagMaterial,
) -> Result<()> {
    let count = match material {
        tp::TagMaterial::Gcm { masks, .. } => masks.len(),
        tp::TagMaterial::Poly1305 { keys } => keys.len(),
    };
    if count != sent.len() {
        return Err(bad(format!(
            "{count} entries for {} client records",
            sent.len()
        )));
    }
    let kind_ok = matches!(
        (suite.aead(), material),
        (
            AeadAlg::Aes128Gcm | AeadAlg::Aes256Gcm,
            tp::TagMaterial::Gcm { .. }
        ) | (AeadAlg::ChaCha20Poly1305, tp::TagMaterial::Poly1305 { .. })
    );
    if !kind_ok {
        return Err(bad(format!("material of another AEAD than {suite}'s")));
    }
    match material {
        tp::TagMaterial::Gcm { hash_key, masks } => {
            for (r, mask) in sent.iter().zip(masks) {
                check_one(suite, r, |aad, ct, tag| {
                    gcm_tag_ok(hash_key, mask, aad, ct, tag)
                })?;
            }
        }
        tp::TagMaterial::Poly1305 { keys } => {
            for (r, otk) in sent.iter().zip(keys) {
                check_one(suite, r, |aad, ct, tag| poly1305_tag_ok(otk, aad, ct, tag))?;
            }
        }
    }
    Ok(())
}

/// Split `r`'s payload, build its additional data, and check its tag with `tag_ok`.
fn check_one(
    suite: CipherSuite,
    r: &StatementRecord,
    tag_ok: impl FnOnce(&[u8], &[u8], &[u8; TAG_LEN]) -> bool,
) -> Result<()> {
    let (ct, tag) = ciphertext_and_tag(suite, &r.record.payload).ok_or_else(|| tag_error(r))?;
    let aad = additional_data(suite.version(), r.seq, &r.record, ct.len());
    if tag_ok(&aad, ct, tag) {
        Ok(())
    } else {
        Err(tag_error(r))
    }
}

/// Bit lengths of the additional data and the ciphertext, as one block.
fn lengths(aad: &[u8], ct: &[u8], encode: fn(u64) -> [u8; 8]) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&encode(aad.len() as u64));
    block[8..].copy_from_slice(&encode(ct.len() as u64));
    block
}

/// AES-GCM (SP 800-38D): `tag = GHASH_H(A || pad || C || pad || [len(A)]_64
/// || [len(C)]_64) XOR E_K(J0)`, lengths in bits, big-endian. Compared as
/// `GHASH == tag XOR E_K(J0)`, in constant time.
fn gcm_tag_ok(h: &[u8; 16], mask: &[u8; 16], aad: &[u8], ct: &[u8], tag: &[u8; TAG_LEN]) -> bool {
    let mut ghash = ghash::GHash::new(h.into());
    ghash.update_padded(aad);
    ghash.update_padded(ct);
    let bits = |n: u64| n.wrapping_mul(8).to_be_bytes();
    ghash.update(&[lengths(aad, ct, bits).into()]);
    let mut expected = *tag;
    for (e, m) in expected.iter_mut().zip(mask) {
        *e ^= m;
    }
    ghash.verify(&expected.into()).is_ok()
}

/// ChaCha20-Poly1305 (RFC 8439 section 2.8): `tag = Poly1305_otk(A || pad ||
/// C || pad || le64(len(A)) || le64(len(C)))`, lengths in bytes. Compared
/// in constant time.
fn poly1305_tag_ok(otk: &[u8; 32], aad: &[u8], ct: &[u8], tag: &[u8; TAG_LEN]) -> bool {
    let mut mac = poly1305::Poly1305::new(otk.into());
    mac.update_padded(aad);
    mac.update_padded(ct);
    mac.update(&[lengths(aad, ct, u64::to_le_bytes).into()]);
    mac.verify(tag.into()).is_ok()
}

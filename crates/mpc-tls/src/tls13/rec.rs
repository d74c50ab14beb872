//! The client records a TLS 1.3 session runs in 2PC, numbered by id: `0`
//! computes the client direction's GHASH key and nothing else (a
//! zero-length record never sent: TLS 1.3 has no client Finished in 2PC to
//! do it, since the client handshake key is known to both), `1..` the
//! request's records in order. Owns what both parties derive from an id
//! and the session's suite (length, sequence number, additional data, the
//! circuits), so they cannot disagree on it.
//!
//! Under ChaCha20-Poly1305 there is no record `0` (each record's Poly1305
//! key comes from its own nonce, `crate::rec::chacha`); the request's
//! records keep ids `1..`, so sequence numbers, garbling instances and
//! OLE streams are the same functions of the id under every suite. Each
//! runs two circuits (record, tag: [`circuits_per_record`]).

use crate::error::{Error, Result};
use crate::hello::record;
use crate::rec::dual::{keystream_circuit_with, RecordCipher};
use crate::rec::gcm::{gcm_circuit_with, powers_needed, tls13_aad, NonceForm};
use crate::rec::{cached_plan, PlanCache, PLAN_CACHE_BYTES};
use std::sync::{Arc, Mutex};
use webproof_mpc::Plan;
use webproof_tls::record::content_type;

/// The record that computes the GHASH key.
pub(crate) const GHASH_RECORD: u32 = 0;

/// Its public nonce input: a sequence number no record of the session
/// reaches, so its `E_K(J0)` (masked, never used) is no sent record's.
const GHASH_SEQ: u64 = u64::MAX;

/// What an id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    pub id: u32,
    /// Bytes encrypted: the request's bytes and the inner content type
    /// (no padding), zero for the GHASH record.
    pub len: usize,
    /// The key's bytes (16 or 32).
    pub key_len: usize,
    /// ChaCha20-Poly1305's record (`crate::rec::chacha`), else
    /// AES-GCM's.
    pub chacha: bool,
}

impl Spec {
    /// Every record of a session whose request records carry
    /// `content_lens` bytes of the request each, under a suite of
    /// `key_len`-byte keys (ChaCha20-Poly1305's if `chacha`): AES-GCM's
    /// GHASH record first.
    pub(crate) fn all(content_lens: &[usize], key_len: usize, chacha: bool) -> Vec<Spec> {
        let mut v = Vec::new();
        if !chacha {
            v.push(Spec {
                id: GHASH_RECORD,
                len: 0,
                key_len,
                chacha,
            });
        }
        v.extend(content_lens.iter().enumerate().map(|(i, &l)| Spec {
            id: 1 + i as u32,
            len: l + 1,
            key_len,
            chacha,
        }));
        v
    }

    pub(crate) fn computes_h(&self) -> bool {
        self.id == GHASH_RECORD
    }

    /// The public nonce input: the sequence number under the client
    /// application key (the request's records are its first).
    pub(crate) fn seq(&self) -> u64 {
        match self.id {
            GHASH_RECORD => GHASH_SEQ,
            id => u64::from(id) - 1,
        }
    }

    /// Garbling instance (the key schedule's four steps come first), for
    /// the verifier's record circuit and the prover's keystream circuit
    /// alike (different `Δ`s; the instance keeps the tweaks distinct
    /// within each garbler's circuits).
    pub(crate) fn instance(&self) -> u64 {
        super::KDF_INSTANCE + crate::kdf::tls13::STEPS as u64 + u64::from(self.id)
    }

    /// OLE stream (the ECtF's is 0).
    pub(crate) fn stream(&self) -> u64 {
        1 + u64::from(self.id)
    }

    /// The additional data: the record header.
    pub(crate) fn aad(&self) -> [u8; 5] {
        tls13_aad(self.len)
    }

    /// The garbling instances of a ChaCha20-Poly1305 record's two
    /// circuits: its record circuit's ([`Self::instance`]), its tag
    /// circuit's, apart from every record circuit's (ids below 2^20).
    pub(crate) fn chacha_instances(&self) -> [u64; 2] {
        [self.instance(), self.instance() + crate::rec::TAG_INSTANCES]
    }

    /// The verifier's record circuit (AES-GCM), cached per process as
    /// TLS 1.2's ([`crate::rec::cached_plan`]; the circuits differ by
    /// their nonce, so the caches are TLS 1.3's own).
    pub(crate) fn plan(&self) -> Result<Arc<Plan>> {
        static SHARED: Mutex<PlanCache> = Mutex::new(PlanCache::new(PLAN_CACHE_BYTES));
        cached_plan(&SHARED, (self.key_len, self.len, self.computes_h()), || {
            gcm_circuit_with(NonceForm::Tls13, self.key_len, self.len, self.computes_h())
        })
    }

    /// The verifier's record and tag circuits (ChaCha20-Poly1305): TLS
    /// 1.2's, which depend on the length alone (`crate::rec::chacha_plans`).
    pub(crate) fn chacha_plans(&self) -> Result<(Arc<Plan>, Arc<Plan>)> {
        crate::rec::chacha_plans(self.len)
    }

    /// The prover's keystream circuit (dual execution), cached likewise:
    /// ChaCha20's nonce is the IV XOR the sequence number in TLS 1.2 and
    /// 1.3 alike, so its circuit is TLS 1.2's.
    pub(crate) fn keystream_plan(&self) -> Result<Arc<Plan>> {
        if self.chacha {
            return crate::rec::chacha_keystream_plan(self.len);
        }
        static SHARED: Mutex<PlanCache> = Mutex::new(PlanCache::new(PLAN_CACHE_BYTES));
        cached_plan(&SHARED, (self.key_len, self.len, false), || {
            keystream_circuit_with(NonceForm::Tls13, self.key_len, self.len)
        })
    }

    /// The cipher the verifier evaluates the prover's keystream garbling
    /// under (its key ‖ IV length and its bound on the tables).
    pub(crate) fn cipher(&self) -> Result<RecordCipher> {
        if self.chacha {
            return Ok(RecordCipher::Chacha20Poly1305);
        }
        RecordCipher::aes13(self.key_len)
            .ok_or(Error::Malformed("a TLS 1.3 record of another key length"))
    }
}

/// Circuits a record runs in 2PC: AES-GCM's one, ChaCha20-Poly1305's two
/// (record circuit, then tag circuit).
pub(crate) fn circuits_per_record(chacha: bool) -> usize {
    if chacha {
        2
    } else {
        1
    }
}

/// Bytes of a TLS 1.3 record's AAD: its header.
pub(crate) const AAD_LEN: usize = 5;

/// Powers of `H` the longest request record's tag needs.
pub(crate) fn ghash_powers(specs: &[Spec]) -> usize {
    specs
        .iter()
        .map(|s| powers_needed(s.len))
        .max()
        .unwrap_or(2)
}

/// A request record as both recordings hold it: its header, then zeros
/// in place of its ciphertext and tag (the verifier never sees either).
pub(crate) fn hidden_record(spec: &Spec) -> Vec<u8> {
    record(content_type::APPLICATION_DATA, &vec![0; spec.len + 16])
}

/// Checks the request record lengths of a `Hello`.
pub(crate) fn check_lens(lens: &[usize]) -> Result<()> {
    use crate::cots::{MAX_RECORD, MAX_REQUEST};
    if lens.is_empty()
        || lens.iter().any(|&l| l == 0 || l > MAX_RECORD)
        || lens.iter().sum::<usize>() > MAX_REQUEST
    {
        return Err(Error::Malformed("request record lengths out of bounds"));
    }
    Ok(())
}

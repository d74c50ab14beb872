//! TLS key-schedule gadgets: what a proof must bind between the secret of a
//! handshake and the keys that decrypt its records.
//!
//! * TLS 1.3 (RFC 8446 §7.1): from the handshake secret `HS` (witness) and
//!   the public transcript hashes to the handshake and application traffic
//!   secrets of both sides and the application keys and IVs. With SHA-256:
//!   30 compressions with pads cached (HS pads 2, the two handshake secrets 4,
//!   "derived" 2, Master Secret with its pads 4+2, the two application secrets
//!   4, then per direction pads 2 + key 2 + iv 2).
//! * TLS 1.2 (RFC 5246 §5, §6.3, §7.4.9): from the master secret (witness)
//!   and the public randoms and handshake hashes to the key block (write keys
//!   and IVs of both sides) and both Finished `verify_data`: 23 compressions.
//!   Also the master secret from the pre-master secret (RFC 5246 §8.1, and
//!   the extended master secret of RFC 7627) for the MPC mode.
//!
//! Two forms of each circuit: with the transcript hashes and randoms folded
//! in as constants (fewest AND gates, built per session), or with them as
//! input groups (`*_public_inputs`, one circuit per suite, cached in
//! [`crate::cache`]).
//!
//! **Soundness:** in the second form those input groups are public values.
//! The proof system must fix them to the values the verifier computed itself
//! (treat them as constants, or open/assert them equal to the public bytes);
//! if they were left as free witness bits, the prover could choose its own
//! "transcript hash" and derive keys unrelated to the observed handshake.

use crate::builder::{const_bytes, Bit, Builder};
use crate::hmac::{hkdf_expand_label, hkdf_expand_label_bits, tls12_prf_bits, HmacKey};
use crate::sha2::HashAlg;
use crate::Circuit;

/// The parameters of a TLS 1.3 cipher suite that the key schedule needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tls13Suite {
    /// The suite's hash.
    pub hash: HashAlg,
    /// AEAD key length in bytes.
    pub key_len: usize,
}

impl Tls13Suite {
    /// TLS_AES_128_GCM_SHA256.
    pub const AES_128_GCM_SHA256: Self = Self {
        hash: HashAlg::Sha256,
        key_len: 16,
    };
    /// TLS_AES_256_GCM_SHA384.
    pub const AES_256_GCM_SHA384: Self = Self {
        hash: HashAlg::Sha384,
        key_len: 32,
    };
    /// TLS_CHACHA20_POLY1305_SHA256.
    pub const CHACHA20_POLY1305_SHA256: Self = Self {
        hash: HashAlg::Sha256,
        key_len: 32,
    };
    /// AEAD nonce (IV) length: 12 bytes for every TLS 1.3 suite.
    pub const IV_LEN: usize = 12;
}

/// Outputs of the TLS 1.3 gadget, each as bytes in the crate bit order.
#[derive(Clone, Debug)]
pub struct Tls13Secrets {
    /// client_handshake_traffic_secret.
    pub client_handshake: Vec<Bit>,
    /// server_handshake_traffic_secret.
    pub server_handshake: Vec<Bit>,
    /// client_application_traffic_secret_0.
    pub client_application: Vec<Bit>,
    /// server_application_traffic_secret_0.
    pub server_application: Vec<Bit>,
    /// Client application write key.
    pub client_key: Vec<Bit>,
    /// Client application write IV (12 bytes).
    pub client_iv: Vec<Bit>,
    /// Server application write key.
    pub server_key: Vec<Bit>,
    /// Server application write IV (12 bytes).
    pub server_iv: Vec<Bit>,
}

/// TLS 1.3 key schedule from the handshake secret.
///
/// `hs` is the handshake secret (hash length); `hello_hash` is
/// Transcript-Hash(ClientHello..ServerHello) and `finished_hash` is
/// Transcript-Hash(ClientHello..server Finished), folded in as constants.
pub fn tls13_key_schedule(
    b: &mut Builder,
    suite: Tls13Suite,
    hs: &[Bit],
    hello_hash: &[u8],
    finished_hash: &[u8],
) -> Tls13Secrets {
    tls13_key_schedule_bits(
        b,
        suite,
        hs,
        &const_bytes(hello_hash),
        &const_bytes(finished_hash),
    )
}

/// [`tls13_key_schedule`] with the transcript hashes as bits: constants, or
/// public input wires for a circuit that is built once for all sessions.
pub fn tls13_key_schedule_bits(
    b: &mut Builder,
    suite: Tls13Suite,
    hs: &[Bit],
    hello_hash: &[Bit],
    finished_hash: &[Bit],
) -> Tls13Secrets {
    let h = suite.hash;
    let hl = h.output_len();
    assert_eq!(hs.len(), 8 * hl, "handshake secret has the hash length");
    assert_eq!(
        hello_hash.len(),
        8 * hl,
        "transcript hash has the hash length"
    );
    assert_eq!(
        finished_hash.len(),
        8 * hl,
        "transcript hash has the hash length"
    );
    let hs_key = HmacKey::new(b, h, hs);
    let client_handshake = hkdf_expand_label_bits(b, &hs_key, "c hs traffic", hello_hash, hl);
    let server_handshake = hkdf_expand_label_bits(b, &hs_key, "s hs traffic", hello_hash, hl);
    let derived = hkdf_expand_label(b, &hs_key, "derived", &crate::sha2::digest(h, &[]), hl);
    // Master Secret = HKDF-Extract(salt = derived, IKM = 0^hl).
    let ms = HmacKey::new(b, h, &derived).mac(b, &const_bytes(&vec![0u8; hl]));
    let ms_key = HmacKey::new(b, h, &ms);
    let client_application = hkdf_expand_label_bits(b, &ms_key, "c ap traffic", finished_hash, hl);
    let server_application = hkdf_expand_label_bits(b, &ms_key, "s ap traffic", finished_hash, hl);
    let mut traffic_keys = |secret: &[Bit]| {
        let k = HmacKey::new(b, h, secret);
        let key = hkdf_expand_label(b, &k, "key", &[], suite.key_len);
        let iv = hkdf_expand_label(b, &k, "iv", &[], Tls13Suite::IV_LEN);
        (key, iv)
    };
    let (client_key, client_iv) = traffic_keys(&client_application);
    let (server_key, server_iv) = traffic_keys(&server_application);
    Tls13Secrets {
        client_handshake,
        server_handshake,
        client_application,
        server_application,
        client_key,
        client_iv,
        server_key,
        server_iv,
    }
}

fn output_tls13(b: &mut Builder, s: &Tls13Secrets) {
    for out in [
        &s.client_handshake,
        &s.server_handshake,
        &s.client_application,
        &s.server_application,
        &s.client_key,
        &s.client_iv,
        &s.server_key,
        &s.server_iv,
    ] {
        b.output(out);
    }
}

/// Standalone TLS 1.3 key-schedule circuit. Input: `[HS]`; outputs, in this
/// order: `[c hs traffic, s hs traffic, c ap traffic, s ap traffic,
/// client key, client iv, server key, server iv]`.
pub fn tls13_key_schedule_circuit(
    suite: Tls13Suite,
    hello_hash: &[u8],
    finished_hash: &[u8],
) -> Circuit {
    let mut b = Builder::new();
    let hs = b.input_bytes(suite.hash.output_len());
    let s = tls13_key_schedule(&mut b, suite, &hs, hello_hash, finished_hash);
    output_tls13(&mut b, &s);
    b.finish()
}

/// TLS 1.3 key-schedule circuit independent of the session: the transcript
/// hashes are input groups (public inputs for the proof system) instead of
/// constants, so it can be built once and cached ([`crate::cache`]). Costs
/// more AND gates than the folded circuit (the four traffic-secret
/// derivations no longer have a constant message schedule).
///
/// Inputs: `[HS, hello_hash, finished_hash]`; outputs as
/// [`tls13_key_schedule_circuit`].
pub fn tls13_key_schedule_circuit_public_inputs(suite: Tls13Suite) -> Circuit {
    let mut b = Builder::new();
    let hl = suite.hash.output_len();
    let hs = b.input_bytes(hl);
    let th1 = b.input_bytes(hl);
    let th2 = b.input_bytes(hl);
    let s = tls13_key_schedule_bits(&mut b, suite, &hs, &th1, &th2);
    output_tls13(&mut b, &s);
    b.finish()
}

/// The parameters of a TLS 1.2 AEAD cipher suite that the key block needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tls12Suite {
    /// The PRF hash.
    pub hash: HashAlg,
    /// Write key length in bytes.
    pub key_len: usize,
    /// Fixed IV length in bytes (4 for GCM, 12 for ChaCha20-Poly1305).
    pub iv_len: usize,
}

impl Tls12Suite {
    /// TLS_ECDHE_*_WITH_AES_128_GCM_SHA256.
    pub const AES_128_GCM_SHA256: Self = Self {
        hash: HashAlg::Sha256,
        key_len: 16,
        iv_len: 4,
    };
    /// TLS_ECDHE_*_WITH_AES_256_GCM_SHA384.
    pub const AES_256_GCM_SHA384: Self = Self {
        hash: HashAlg::Sha384,
        key_len: 32,
        iv_len: 4,
    };
    /// TLS_ECDHE_*_WITH_CHACHA20_POLY1305_SHA256.
    pub const CHACHA20_POLY1305_SHA256: Self = Self {
        hash: HashAlg::Sha256,
        key_len: 32,
        iv_len: 12,
    };
}

/// Public inputs of the TLS 1.2 gadget.
#[derive(Clone, Copy, Debug)]
pub struct Tls12Public<'a> {
    /// ClientHello.random.
    pub client_random: &'a [u8; 32],
    /// ServerHello.random.
    pub server_random: &'a [u8; 32],
    /// Hash of the handshake messages before the client Finished.
    pub client_finished_hash: &'a [u8],
    /// Hash of the handshake messages before the server Finished (including
    /// the client Finished).
    pub server_finished_hash: &'a [u8],
}

/// Outputs of the TLS 1.2 gadget.
#[derive(Clone, Debug)]
pub struct Tls12Keys {
    /// client_write_key.
    pub client_key: Vec<Bit>,
    /// server_write_key.
    pub server_key: Vec<Bit>,
    /// client_write_IV (the fixed part of the nonce).
    pub client_iv: Vec<Bit>,
    /// server_write_IV.
    pub server_iv: Vec<Bit>,
    /// verify_data of the client Finished (12 bytes).
    pub client_verify_data: Vec<Bit>,
    /// verify_data of the server Finished (12 bytes).
    pub server_verify_data: Vec<Bit>,
}

/// TLS 1.2 key block and Finished values from the 48-byte master secret,
/// with the public values folded in as constants.
pub fn tls12_key_schedule(
    b: &mut Builder,
    suite: Tls12Suite,
    ms: &[Bit],
    public: &Tls12Public<'_>,
) -> Tls12Keys {
    tls12_key_schedule_bits(
        b,
        suite,
        ms,
        &const_bytes(public.client_random),
        &const_bytes(public.server_random),
        &const_bytes(public.client_finished_hash),
        &const_bytes(public.server_finished_hash),
    )
}

/// [`tls12_key_schedule`] with the randoms (32 bytes each) and the handshake
/// hashes given as bits: constants or public input wires.
pub fn tls12_key_schedule_bits(
    b: &mut Builder,
    suite: Tls12Suite,
    ms: &[Bit],
    client_random: &[Bit],
    server_random: &[Bit],
    client_finished_hash: &[Bit],
    server_finished_hash: &[Bit],
) -> Tls12Keys {
    assert_eq!(ms.len(), 8 * 48, "master secret is 48 bytes");
    assert_eq!(client_random.len(), 256, "client random is 32 bytes");
    assert_eq!(server_random.len(), 256, "server random is 32 bytes");
    let key = HmacKey::new(b, suite.hash, ms);
    let seed = [server_random, client_random].concat();
    let (kl, il) = (suite.key_len, suite.iv_len);
    // AEAD suites have no MAC keys: the key block is keys then IVs.
    let kb = tls12_prf_bits(b, &key, "key expansion", &seed, 2 * kl + 2 * il);
    let client_verify_data = tls12_prf_bits(b, &key, "client finished", client_finished_hash, 12);
    let server_verify_data = tls12_prf_bits(b, &key, "server finished", server_finished_hash, 12);
    let at = |from: usize, len: usize| kb[8 * from..8 * (from + len)].to_vec();
    Tls12Keys {
        client_key: at(0, kl),
        server_key: at(kl, kl),
        client_iv: at(2 * kl, il),
        server_iv: at(2 * kl + il, il),
        client_verify_data,
        server_verify_data,
    }
}

fn output_tls12(b: &mut Builder, k: &Tls12Keys) {
    for out in [
        &k.client_key,
        &k.server_key,
        &k.client_iv,
        &k.server_iv,
        &k.client_verify_data,
        &k.server_verify_data,
    ] {
        b.output(out);
    }
}

/// Standalone TLS 1.2 circuit. Input: `[master secret (48 B)]`; outputs, in
/// this order: `[client key, server key, client iv, server iv, client
/// verify_data, server verify_data]`.
pub fn tls12_key_schedule_circuit(suite: Tls12Suite, public: &Tls12Public<'_>) -> Circuit {
    let mut b = Builder::new();
    let ms = b.input_bytes(48);
    let k = tls12_key_schedule(&mut b, suite, &ms, public);
    output_tls12(&mut b, &k);
    b.finish()
}

/// TLS 1.2 circuit independent of the session (cacheable). Inputs:
/// `[master secret (48 B), client random (32 B), server random (32 B),
/// client Finished hash, server Finished hash]`, all but the first public;
/// outputs as [`tls12_key_schedule_circuit`].
pub fn tls12_key_schedule_circuit_public_inputs(suite: Tls12Suite) -> Circuit {
    let mut b = Builder::new();
    let hl = suite.hash.output_len();
    let ms = b.input_bytes(48);
    let cr = b.input_bytes(32);
    let sr = b.input_bytes(32);
    let h1 = b.input_bytes(hl);
    let h2 = b.input_bytes(hl);
    let k = tls12_key_schedule_bits(&mut b, suite, &ms, &cr, &sr, &h1, &h2);
    output_tls12(&mut b, &k);
    b.finish()
}

/// TLS 1.2 master secret from the pre-master secret: PRF(pms, "master
/// secret", client_random || server_random), or with `session_hash` the
/// extended master secret of RFC 7627 (PRF(pms, "extended master secret",
/// session_hash)).
pub fn tls12_master_secret(
    b: &mut Builder,
    hash: HashAlg,
    pms: &[Bit],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
    session_hash: Option<&[u8]>,
) -> Vec<Bit> {
    let key = HmacKey::new(b, hash, pms);
    match session_hash {
        Some(h) => tls12_prf_bits(b, &key, "extended master secret", &const_bytes(h), 48),
        None => {
            let seed = [client_random.as_slice(), server_random.as_slice()].concat();
            tls12_prf_bits(b, &key, "master secret", &const_bytes(&seed), 48)
        }
    }
}

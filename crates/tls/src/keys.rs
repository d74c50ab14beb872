//! Key derivation: the TLS 1.3 key schedule (RFC 8446 section 7) and the
//! TLS 1.2 PRF (RFC 5246 section 5, RFC 7627).
//!
//! Each function is one step of the specification, so the ZK statement
//! circuits can mirror this module step for step and be tested against it.

use crate::suite::{AeadAlg, CipherSuite, HashAlg, TlsVersion};
use hmac::{Hmac, Mac};

/// HMAC with the suite hash.
pub fn hmac(h: HashAlg, key: &[u8], data: &[&[u8]]) -> Vec<u8> {
    macro_rules! run {
        ($d:ty) => {{
            let mut m = <Hmac<$d>>::new_from_slice(key).expect("HMAC takes any key length");
            for d in data {
                m.update(d);
            }
            m.finalize().into_bytes().to_vec()
        }};
    }
    match h {
        HashAlg::Sha256 => run!(sha2::Sha256),
        HashAlg::Sha384 => run!(sha2::Sha384),
    }
}

/// HKDF-Extract(salt, ikm).
pub fn hkdf_extract(h: HashAlg, salt: &[u8], ikm: &[u8]) -> Vec<u8> {
    hmac(h, salt, &[ikm])
}

/// HKDF-Expand(prk, info, len), len at most 255 hash lengths.
pub fn hkdf_expand(h: HashAlg, prk: &[u8], info: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut t = Vec::new();
    let mut i = 1u8;
    while out.len() < len {
        t = hmac(h, prk, &[&t, info, &[i]]);
        out.extend_from_slice(&t);
        i += 1;
    }
    out.truncate(len);
    out
}

/// HKDF-Expand-Label(secret, label, context, len) of TLS 1.3.
pub fn hkdf_expand_label(
    h: HashAlg,
    secret: &[u8],
    label: &str,
    context: &[u8],
    len: usize,
) -> Vec<u8> {
    let mut info = Vec::with_capacity(4 + 6 + label.len() + context.len());
    info.extend_from_slice(&(len as u16).to_be_bytes());
    info.push((6 + label.len()) as u8);
    info.extend_from_slice(b"tls13 ");
    info.extend_from_slice(label.as_bytes());
    info.push(context.len() as u8);
    info.extend_from_slice(context);
    hkdf_expand(h, secret, &info, len)
}

/// Derive-Secret(secret, label, transcript_hash).
pub fn derive_secret(h: HashAlg, secret: &[u8], label: &str, transcript_hash: &[u8]) -> Vec<u8> {
    hkdf_expand_label(h, secret, label, transcript_hash, h.output_len())
}

/// TLS 1.3: the handshake secret from the (EC)DHE shared secret, no PSK.
pub fn tls13_handshake_secret(h: HashAlg, ecdhe: &[u8]) -> Vec<u8> {
    let zeros = vec![0u8; h.output_len()];
    let early = hkdf_extract(h, &zeros, &zeros);
    let derived = derive_secret(h, &early, "derived", &h.hash(b""));
    hkdf_extract(h, &derived, ecdhe)
}

/// TLS 1.3 handshake traffic secrets (client, server) from the handshake
/// secret and the hash of ClientHello..ServerHello.
pub fn tls13_handshake_traffic(h: HashAlg, hs: &[u8], th_hello: &[u8]) -> (Vec<u8>, Vec<u8>) {
    (
        derive_secret(h, hs, "c hs traffic", th_hello),
        derive_secret(h, hs, "s hs traffic", th_hello),
    )
}

/// TLS 1.3 master secret from the handshake secret.
pub fn tls13_master_secret(h: HashAlg, hs: &[u8]) -> Vec<u8> {
    let derived = derive_secret(h, hs, "derived", &h.hash(b""));
    hkdf_extract(h, &derived, &vec![0u8; h.output_len()])
}

/// TLS 1.3 first application traffic secrets (client, server) from the
/// handshake secret and the hash of ClientHello..server Finished.
pub fn tls13_application_traffic(
    h: HashAlg,
    hs: &[u8],
    th_server_finished: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let ms = tls13_master_secret(h, hs);
    (
        derive_secret(h, &ms, "c ap traffic", th_server_finished),
        derive_secret(h, &ms, "s ap traffic", th_server_finished),
    )
}

/// TLS 1.3 Finished verify_data for a base (handshake traffic) secret.
pub fn tls13_finished(h: HashAlg, base: &[u8], transcript_hash: &[u8]) -> Vec<u8> {
    let key = hkdf_expand_label(h, base, "finished", &[], h.output_len());
    hmac(h, &key, &[transcript_hash])
}

/// A record protection key and IV for one direction.
#[derive(Clone, PartialEq, Eq)]
pub struct TrafficKeys {
    /// The AEAD key.
    pub key: Vec<u8>,
    /// The IV: 12 bytes, or the 4-byte salt for TLS 1.2 GCM.
    pub iv: Vec<u8>,
}

impl core::fmt::Debug for TrafficKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("TrafficKeys(..)")
    }
}

/// TLS 1.3: key and IV from a traffic secret.
pub fn tls13_traffic_keys(suite: CipherSuite, secret: &[u8]) -> TrafficKeys {
    let h = suite.hash();
    let a = suite.aead();
    TrafficKeys {
        key: hkdf_expand_label(h, secret, "key", &[], a.key_len()),
        iv: hkdf_expand_label(h, secret, "iv", &[], 12),
    }
}

/// The TLS 1.2 PRF: P_hash(secret, label || seed) truncated to `len`.
pub fn tls12_prf(h: HashAlg, secret: &[u8], label: &str, seed: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut a = hmac(h, secret, &[label.as_bytes(), seed]);
    while out.len() < len {
        out.extend_from_slice(&hmac(h, secret, &[&a, label.as_bytes(), seed]));
        a = hmac(h, secret, &[&a]);
    }
    out.truncate(len);
    out
}

/// TLS 1.2 master secret from the pre-master secret; with extended master
/// secret (RFC 7627) `seed` is the session hash, else client_random || server_random.
pub fn tls12_master_secret(h: HashAlg, pms: &[u8], ems: bool, seed: &[u8]) -> Vec<u8> {
    let label = if ems {
        "extended master secret"
    } else {
        "master secret"
    };
    tls12_prf(h, pms, label, seed, 48)
}

/// TLS 1.2 key expansion: (client keys, server keys) for an AEAD suite.
pub fn tls12_key_block(
    suite: CipherSuite,
    ms: &[u8],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
) -> (TrafficKeys, TrafficKeys) {
    let a: AeadAlg = suite.aead();
    let (kl, il) = (a.key_len(), a.iv_len(TlsVersion::Tls12));
    let mut seed = server_random.to_vec();
    seed.extend_from_slice(client_random);
    let kb = tls12_prf(suite.hash(), ms, "key expansion", &seed, 2 * kl + 2 * il);
    (
        TrafficKeys {
            key: kb[..kl].to_vec(),
            iv: kb[2 * kl..2 * kl + il].to_vec(),
        },
        TrafficKeys {
            key: kb[kl..2 * kl].to_vec(),
            iv: kb[2 * kl + il..].to_vec(),
        },
    )
}

/// TLS 1.2 Finished verify_data (12 bytes); `label` is "client finished" or "server finished".
pub fn tls12_finished(h: HashAlg, ms: &[u8], label: &str, handshake_hash: &[u8]) -> Vec<u8> {
    tls12_prf(h, ms, label, handshake_hash, 12)
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 8448 section 3 ("Simple 1-RTT Handshake"), TLS_AES_128_GCM_SHA256.
    #[test]
    fn rfc8448_key_schedule() {
        let h = HashAlg::Sha256;
        let ecdhe = hex::decode("8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d")
            .unwrap();
        let hs = tls13_handshake_secret(h, &ecdhe);
        assert_eq!(
            hex::encode(&hs),
            "1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac"
        );
        // Hash of ClientHello..ServerHello as in RFC 8448.
        let th = hex::decode("860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8")
            .unwrap();
        let (c, s) = tls13_handshake_traffic(h, &hs, &th);
        assert_eq!(
            hex::encode(&c),
            "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"
        );
        assert_eq!(
            hex::encode(&s),
            "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38"
        );
        let k = tls13_traffic_keys(CipherSuite::TLS13_AES_128_GCM_SHA256, &s);
        assert_eq!(hex::encode(&k.key), "3fce516009c21727d0f2e4e86ee403bc");
        assert_eq!(hex::encode(&k.iv), "5d313eb2671276ee13000b30");
        let ms = tls13_master_secret(h, &hs);
        assert_eq!(
            hex::encode(&ms),
            "18df06843d13a08bf2a449844c5f8a478001bc4d4c627984d5a41da8d0402919"
        );
    }

    // A published TLS 1.2 PRF (SHA-256) test vector.
    #[test]
    fn tls12_prf_sha256_vector() {
        let secret = hex::decode("9bbe436ba940f017b17652849a71db35").unwrap();
        let seed = hex::decode("a0ba9f936cda311827a6f796ffd5198c").unwrap();
        let out = tls12_prf(HashAlg::Sha256, &secret, "test label", &seed, 100);
        assert_eq!(
            hex::encode(&out[..32]),
            "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a"
        );
    }
}

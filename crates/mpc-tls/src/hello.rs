//! The TLS 1.2 messages the client writes in MPC mode, and the suites and
//! groups it offers.
//!
//! The prover writes the ClientHello itself ([`client_hello`]): TLS 1.2
//! only (no `supported_versions`, no key share: the client's ECDHE key
//! goes in the ClientKeyExchange), the ECDHE AES-GCM and ChaCha20-Poly1305
//! suites of the session's family, P-256
//! and X25519, SNI, and optionally the extended master secret. The
//! verifier never trusts this writer: it parses the ClientHello from the
//! bytes the prover forwarded and checks it ([`check_client_hello`]).
//! [`client_key_exchange`] and [`finished`] are computed by both parties
//! from values both know (the joint key share, the `verify_data` computed
//! in 2PC), so the verifier can compare the prover's records with its own.
//!
//! Suites and groups are `webproof_tls`'s [`CipherSuite`] and [`KxGroup`]
//! throughout the crate; their `u16` codes exist only in bytes, written
//! here and in [`crate::msg`] and typed where they are read
//! ([`suite_from_wire`], [`group_from_wire`]), so a code no suite or group
//! has is refused there, by name, and never reaches a session's state.

use crate::error::{Error, Result};
use crate::kdf::tls12::Curve;
use webproof_circuits::tls::Tls12Suite;
use webproof_tls::handshake::{self as hsk, msg_type};
use webproof_tls::{CipherSuite, KxGroup};

/// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256.
pub const ECDHE_ECDSA_AES128_GCM_SHA256: CipherSuite =
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
/// TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384.
pub const ECDHE_ECDSA_AES256_GCM_SHA384: CipherSuite =
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384;
/// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256.
pub const ECDHE_RSA_AES128_GCM_SHA256: CipherSuite =
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256;
/// TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384.
pub const ECDHE_RSA_AES256_GCM_SHA384: CipherSuite =
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384;
/// TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256.
pub const ECDHE_ECDSA_CHACHA20_POLY1305_SHA256: CipherSuite =
    CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256;
/// TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256.
pub const ECDHE_RSA_CHACHA20_POLY1305_SHA256: CipherSuite =
    CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256;
/// Every suite MPC mode runs, in the default order of preference
/// (ChaCha20-Poly1305 last: its records cost more in 2PC than AES-GCM's,
/// `docs/protocol/mpc-chacha.md`).
pub const SUITES: [CipherSuite; 6] = [
    ECDHE_ECDSA_AES128_GCM_SHA256,
    ECDHE_RSA_AES128_GCM_SHA256,
    ECDHE_ECDSA_AES256_GCM_SHA384,
    ECDHE_RSA_AES256_GCM_SHA384,
    ECDHE_ECDSA_CHACHA20_POLY1305_SHA256,
    ECDHE_RSA_CHACHA20_POLY1305_SHA256,
];
/// secp256r1.
pub const GROUP_P256: KxGroup = KxGroup::Secp256r1;
/// x25519.
pub const GROUP_X25519: KxGroup = KxGroup::X25519;

/// The record layer and PRF parameters of a suite MPC mode runs over TLS
/// 1.2 (none for the TLS 1.3 suites, [`crate::tls13`]'s).
pub fn suite_params(suite: CipherSuite) -> Option<Tls12Suite> {
    use CipherSuite::*;
    match suite {
        TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 | TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => {
            Some(Tls12Suite::AES_128_GCM_SHA256)
        }
        TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 | TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => {
            Some(Tls12Suite::AES_256_GCM_SHA384)
        }
        TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        | TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => Some(Tls12Suite::CHACHA20_POLY1305_SHA256),
        TLS13_AES_128_GCM_SHA256 | TLS13_AES_256_GCM_SHA384 | TLS13_CHACHA20_POLY1305_SHA256 => {
            None
        }
    }
}

/// The 2PC curve of a group: MPC mode runs every group `webproof_tls`
/// knows (no wildcard arm, so a group added there must be decided here).
pub fn group_curve(group: KxGroup) -> Curve {
    match group {
        KxGroup::Secp256r1 => Curve::P256,
        KxGroup::X25519 => Curve::X25519,
    }
}

/// The suite of a code read off the wire (a ServerHello, the prover's
/// `Hello`): a code of no suite `webproof_tls` knows ends the session
/// with an error naming it. Past this point suites are typed.
pub fn suite_from_wire(code: u16) -> Result<CipherSuite> {
    CipherSuite::from_code(code)
        .ok_or_else(|| Error::Unsupported(format!("cipher suite {code:#06x}")))
}

/// The group of a code read off the wire (a ServerKeyExchange, the
/// prover's `Hello`), as [`suite_from_wire`] does for suites.
pub fn group_from_wire(code: u16) -> Result<KxGroup> {
    KxGroup::from_code(code).ok_or_else(|| {
        Error::Unsupported(format!(
            "group {code:#06x} (MPC mode runs P-256 and X25519)"
        ))
    })
}

/// What a session is preprocessed for, fixed by the prover before the
/// ClientHello: the verifier garbles the key derivation and the records
/// for exactly this suite family (key length and PRF hash) and EMS offer
/// before the server connection opens. The ClientHello offers no suite
/// outside the family; it offers every group, the terms' first, since a
/// server with an ECDSA certificate needs the certificate's curve among
/// them (RFC 4492). The key derivation's first circuit serves either
/// group (the verifier encodes the server's choice as a public bit), so
/// the server may pick either. A server that picks another family ends
/// the session at its ServerHello, with an error that names it (the
/// prover can run again with another `--suite`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terms {
    /// A suite of [`SUITES`]; every offered suite has its parameters
    /// (the ECDSA and RSA variants share the circuits). A suite outside
    /// them (TLS 1.3's) is refused by [`Terms::params`].
    pub suite: CipherSuite,
    /// The group offered first.
    pub group: KxGroup,
    /// The extended master secret is offered (the SHA-384 suites' full
    /// PRF garbles the variant the server must then negotiate).
    pub ems: bool,
}

impl Terms {
    /// The terms for suites and groups in order of preference (empty: the
    /// defaults, AES-128-GCM-SHA256 and X25519).
    pub fn choose(suites: &[CipherSuite], groups: &[KxGroup], ems: bool) -> Result<Self> {
        let suite = suites.first().copied().unwrap_or(SUITES[0]);
        let group = groups.first().copied().unwrap_or(GROUP_X25519);
        let t = Terms { suite, group, ems };
        t.params()?;
        Ok(t)
    }

    /// The suite's parameters and the group's curve, or why they are not
    /// MPC mode's.
    pub fn params(&self) -> Result<(Tls12Suite, Curve)> {
        let suite = suite_params(self.suite)
            .ok_or_else(|| Error::Unsupported(format!("cipher suite {}", self.suite)))?;
        Ok((suite, group_curve(self.group)))
    }

    /// Whether the server's choice of suite fits what was preprocessed: a
    /// suite of the same family and, for the full PRF, the same EMS. (Its
    /// group needs no check: the key derivation serves every group.)
    pub fn check_negotiated(&self, suite: CipherSuite, ems: bool) -> Result<()> {
        let (want, _) = self.params()?;
        let got = suite_params(suite)
            .ok_or_else(|| Error::Unsupported(format!("cipher suite {suite}")))?;
        if got != want {
            return Err(Error::Unsupported(format!(
                "the server chose suite {suite}, the session was garbled for {}'s family (run again with --suite naming one the server takes)",
                self.suite
            )));
        }
        if !crate::kdf::reduced_suite(want) && ems != self.ems {
            return Err(Error::Unsupported(
                "the server's extended-master-secret choice differs from what the SHA-384 key derivation was garbled for".into(),
            ));
        }
        Ok(())
    }

    /// The suites of `preferred` (empty: [`SUITES`]) in this family, in order.
    pub fn offered_suites(&self, preferred: &[CipherSuite]) -> Vec<CipherSuite> {
        let want = suite_params(self.suite);
        let all: &[CipherSuite] = if preferred.is_empty() {
            &SUITES
        } else {
            preferred
        };
        all.iter()
            .copied()
            .filter(|&s| suite_params(s).is_some() && suite_params(s) == want)
            .collect()
    }
}

/// Signature schemes offered (ECDSA, RSA-PSS, RSA PKCS#1; SHA-2 only).
const SIG_SCHEMES: [u16; 8] = [
    0x0403, 0x0503, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601,
];

/// What the ClientHello offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelloParams {
    /// The client random (the verifier's).
    pub random: [u8; 32],
    /// Server name for SNI (none for an IP address).
    pub server_name: Option<String>,
    /// Suites, in order; each one of [`SUITES`].
    pub suites: Vec<CipherSuite>,
    /// Groups, in order.
    pub groups: Vec<KxGroup>,
    /// Offer the extended master secret (RFC 7627).
    pub ems: bool,
}

fn u16s(v: impl IntoIterator<Item = u16>) -> Vec<u8> {
    v.into_iter().flat_map(|x| x.to_be_bytes()).collect()
}

fn vec16(b: &[u8]) -> Vec<u8> {
    [&(b.len() as u16).to_be_bytes()[..], b].concat()
}

fn ext(typ: u16, data: &[u8]) -> Vec<u8> {
    [&typ.to_be_bytes()[..], &vec16(data)].concat()
}

/// A handshake message: type, 24-bit length, body.
pub fn handshake_message(typ: u8, body: &[u8]) -> Vec<u8> {
    let l = body.len() as u32;
    let mut m = vec![typ, (l >> 16) as u8, (l >> 8) as u8, l as u8];
    m.extend_from_slice(body);
    m
}

/// A TLS 1.2 record of content type `ct`.
pub fn record(ct: u8, payload: &[u8]) -> Vec<u8> {
    let mut r = vec![ct, 3, 3];
    r.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    r.extend_from_slice(payload);
    r
}

/// The ClientHello handshake message (header included).
pub fn client_hello(p: &HelloParams) -> Vec<u8> {
    let mut exts = Vec::new();
    if let Some(name) = &p.server_name {
        let mut list = vec![0u8];
        list.extend(vec16(name.as_bytes()));
        exts.extend(ext(hsk::ext::SERVER_NAME, &vec16(&list)));
    }
    exts.extend(ext(10, &vec16(&u16s(p.groups.iter().map(|g| g.code())))));
    // ec_point_formats: uncompressed only.
    exts.extend(ext(11, &[1, 0]));
    exts.extend(ext(13, &vec16(&u16s(SIG_SCHEMES))));
    if p.ems {
        exts.extend(ext(hsk::ext::EXTENDED_MASTER_SECRET, &[]));
    }
    // renegotiation_info, empty: this client never renegotiates.
    exts.extend(ext(0xff01, &[0]));
    let mut body = vec![3, 3];
    body.extend_from_slice(&p.random);
    body.push(0); // no session id: no resumption
    body.extend(vec16(&u16s(p.suites.iter().map(|s| s.code()))));
    body.extend([1, 0]); // null compression only
    body.extend(vec16(&exts));
    handshake_message(msg_type::CLIENT_HELLO, &body)
}

/// Extensions a ClientHello may carry in MPC mode: those [`client_hello`]
/// writes. Anything else (session tickets, ALPN, OCSP stapling, a maximum
/// fragment length...) would negotiate something the verifier neither
/// runs nor records.
const ALLOWED_EXTENSIONS: [u16; 6] = [
    hsk::ext::SERVER_NAME,
    10, // supported_groups
    11, // ec_point_formats
    13, // signature_algorithms
    hsk::ext::EXTENDED_MASTER_SECRET,
    0xff01, // renegotiation_info
];

/// The ClientHello body's layout: an empty session id (no resumption),
/// null compression only, each extension one of [`ALLOWED_EXTENSIONS`] at
/// most once, nothing after the extensions.
fn check_hello_layout(body: &[u8]) -> Result<()> {
    let bad = Error::ClientHello;
    let truncated = || bad("truncated");
    let mut at = 2 + 32;
    let sid = *body.get(at).ok_or_else(truncated)? as usize;
    if sid != 0 {
        return Err(bad("carries a session id (resumption is not run)"));
    }
    at += 1;
    let suites = u16::from_be_bytes(
        body.get(at..at + 2)
            .ok_or_else(truncated)?
            .try_into()
            .expect("two bytes"),
    ) as usize;
    at += 2 + suites;
    let comp_len = *body.get(at).ok_or_else(truncated)? as usize;
    if body.get(at + 1..at + 1 + comp_len) != Some(&[0][..]) {
        return Err(bad("offers compression other than null alone"));
    }
    at += 1 + comp_len;
    let ext_len = u16::from_be_bytes(
        body.get(at..at + 2)
            .ok_or_else(truncated)?
            .try_into()
            .expect("two bytes"),
    ) as usize;
    at += 2;
    let exts = body.get(at..at + ext_len).ok_or_else(truncated)?;
    if at + ext_len != body.len() {
        return Err(bad("has bytes after its extensions"));
    }
    let mut seen = Vec::new();
    let mut i = 0;
    while i < exts.len() {
        let head = exts.get(i..i + 4).ok_or_else(truncated)?;
        let typ = u16::from_be_bytes([head[0], head[1]]);
        let len = u16::from_be_bytes([head[2], head[3]]) as usize;
        if !ALLOWED_EXTENSIONS.contains(&typ) {
            return Err(bad("offers an extension MPC mode does not support"));
        }
        if seen.contains(&typ) {
            return Err(bad("repeats an extension"));
        }
        seen.push(typ);
        i += 4 + len;
    }
    if i != exts.len() {
        return Err(truncated());
    }
    Ok(())
}

/// The verifier's check of the ClientHello it received: its own random,
/// TLS 1.2 only, only suites of [`SUITES`], the configured server name
/// (none for an IP address), no resumption (empty session id) or early
/// data, null compression only, and no extension but those MPC mode
/// writes (SNI, groups, point formats, signature algorithms, EMS,
/// renegotiation_info).
pub fn check_client_hello(msg: &hsk::Message, random: &[u8; 32], server_name: &str) -> Result<()> {
    if msg.typ != msg_type::CLIENT_HELLO {
        return Err(Error::ClientHello("not a ClientHello"));
    }
    let ch = hsk::parse_client_hello(msg.body())?;
    check_hello_layout(msg.body())?;
    if &ch.random != random {
        return Err(Error::ClientHello(
            "the client random is not the verifier's",
        ));
    }
    if msg.body().get(..2) != Some(&[3, 3][..]) || ch.offers_tls13 {
        return Err(Error::ClientHello("offers another version than TLS 1.2"));
    }
    let runs = |&code: &u16| CipherSuite::from_code(code).is_some_and(|s| SUITES.contains(&s));
    if ch.cipher_suites.is_empty() || !ch.cipher_suites.iter().all(runs) {
        return Err(Error::ClientHello("offers a suite MPC mode does not run"));
    }
    if ch.offers_psk_or_early_data || !ch.key_shares.is_empty() {
        return Err(Error::ClientHello("offers TLS 1.3 features"));
    }
    let is_ip = server_name.parse::<core::net::IpAddr>().is_ok();
    match (&ch.server_name, is_ip) {
        (Some(sni), false) if sni.eq_ignore_ascii_case(server_name) => Ok(()),
        (None, true) => Ok(()),
        _ => Err(Error::ClientHello(
            "names another server than the session's",
        )),
    }
}

/// The ClientKeyExchange handshake message for the client's public key.
pub fn client_key_exchange(public: &[u8]) -> Vec<u8> {
    let mut body = vec![public.len() as u8];
    body.extend_from_slice(public);
    handshake_message(msg_type::CLIENT_KEY_EXCHANGE, &body)
}

/// The Finished handshake message for `verify_data`.
pub fn finished(verify_data: &[u8; 12]) -> Vec<u8> {
    handshake_message(msg_type::FINISHED, verify_data)
}

/// The handshake hash of `msgs` under the suite's PRF hash.
pub(crate) fn transcript_hash(suite: Tls12Suite, msgs: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    match suite.hash {
        webproof_circuits::sha2::HashAlg::Sha384 => sha2::Sha384::digest(msgs).to_vec(),
        _ => sha2::Sha256::digest(msgs).to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> HelloParams {
        HelloParams {
            random: [7; 32],
            server_name: Some("example.test".into()),
            suites: SUITES.to_vec(),
            groups: vec![GROUP_X25519, GROUP_P256],
            ems: true,
        }
    }

    fn message(b: Vec<u8>) -> hsk::Message {
        hsk::Message {
            typ: b[0],
            bytes: b,
        }
    }

    #[test]
    fn hello_parses_and_passes_the_verifier() {
        let m = message(client_hello(&params()));
        let ch = hsk::parse_client_hello(m.body()).unwrap();
        assert_eq!(ch.random, [7; 32]);
        assert_eq!(ch.server_name.as_deref(), Some("example.test"));
        assert!(ch.ems);
        check_client_hello(&m, &[7; 32], "example.test").unwrap();
        check_client_hello(&m, &[7; 32], "EXAMPLE.test").unwrap();
    }

    #[test]
    fn verifier_refuses_other_terms() {
        let m = message(client_hello(&params()));
        assert!(check_client_hello(&m, &[8; 32], "example.test").is_err());
        assert!(check_client_hello(&m, &[7; 32], "other.test").is_err());
        let mut p = params();
        p.suites.push(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let m = message(client_hello(&p));
        assert!(check_client_hello(&m, &[7; 32], "example.test").is_err());
        let mut p = params();
        p.server_name = None;
        let m = message(client_hello(&p));
        assert!(check_client_hello(&m, &[7; 32], "example.test").is_err());
        check_client_hello(&m, &[7; 32], "127.0.0.1").unwrap();
        // A suite code no TLS stack of the workspace knows, in place of
        // the first offered (after the header, version, random and the
        // empty session id, and the list's length).
        let mut b = client_hello(&params());
        let first = 4 + 2 + 32 + 1 + 2;
        b[first..first + 2].copy_from_slice(&0x009cu16.to_be_bytes());
        assert!(check_client_hello(&message(b), &[7; 32], "example.test").is_err());
    }

    #[test]
    fn wire_codes_are_typed_or_refused() {
        // The codes the ClientHello and the `Hello` carry.
        let codes: Vec<u16> = SUITES.iter().map(|s| s.code()).collect();
        assert_eq!(codes, [0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8]);
        assert_eq!((GROUP_P256.code(), GROUP_X25519.code()), (0x0017, 0x001d));
        for s in SUITES {
            assert_eq!(suite_from_wire(s.code()), Ok(s));
            assert!(suite_params(s).is_some());
        }
        assert_eq!(group_from_wire(0x0017), Ok(GROUP_P256));
        assert_eq!(group_from_wire(0x001d), Ok(GROUP_X25519));
        assert!(matches!(
            suite_from_wire(0x009c),
            Err(Error::Unsupported(why)) if why.contains("0x009c")
        ));
        assert!(matches!(
            group_from_wire(0x0018),
            Err(Error::Unsupported(why)) if why.contains("0x0018")
        ));
        // A known suite MPC mode does not run over TLS 1.2 types, but has
        // no parameters.
        let tls13 = suite_from_wire(0x1301).unwrap();
        assert_eq!(suite_params(tls13), None);
    }

    /// The body of [`client_hello`] with `edit` applied to its parts
    /// (session id, compression methods, extensions), lengths recomputed.
    fn hello_with(edit: impl FnOnce(&mut Vec<u8>, &mut Vec<u8>, &mut Vec<u8>)) -> hsk::Message {
        let p = params();
        let mut sid = Vec::new();
        let mut comp = vec![0u8];
        let mut exts = Vec::new();
        if let Some(name) = &p.server_name {
            let mut list = vec![0u8];
            list.extend(vec16(name.as_bytes()));
            exts.extend(ext(hsk::ext::SERVER_NAME, &vec16(&list)));
        }
        exts.extend(ext(10, &vec16(&u16s(p.groups.iter().map(|g| g.code())))));
        exts.extend(ext(13, &vec16(&u16s(SIG_SCHEMES))));
        edit(&mut sid, &mut comp, &mut exts);
        let mut body = vec![3, 3];
        body.extend_from_slice(&p.random);
        body.push(sid.len() as u8);
        body.extend(&sid);
        body.extend(vec16(&u16s(p.suites.iter().map(|s| s.code()))));
        body.push(comp.len() as u8);
        body.extend(&comp);
        body.extend(vec16(&exts));
        message(handshake_message(msg_type::CLIENT_HELLO, &body))
    }

    /// A session id, compression, and extensions MPC mode does not write
    /// (session ticket, ALPN, status_request, max_fragment_length), or one
    /// written twice, are refused; the hello as written passes.
    #[test]
    fn verifier_refuses_resumption_compression_and_unknown_extensions() {
        check_client_hello(&hello_with(|_, _, _| {}), &[7; 32], "example.test").unwrap();
        let refused = |m: hsk::Message, why: &str| {
            let e = check_client_hello(&m, &[7; 32], "example.test").unwrap_err();
            assert!(e.to_string().contains(why), "{e}");
        };
        refused(hello_with(|sid, _, _| *sid = vec![1; 32]), "session id");
        refused(hello_with(|_, c, _| *c = vec![1, 0]), "compression");
        refused(hello_with(|_, c, _| *c = vec![1]), "compression");
        for typ in [35u16, 16, 5, 1] {
            refused(
                hello_with(|_, _, e| e.extend(ext(typ, &[]))),
                "extension MPC mode does not support",
            );
        }
        // A repeated extension (the shared parser refuses it first).
        let twice = hello_with(|_, _, e| {
            let once = ext(11, &[1, 0]);
            e.extend(&once);
            e.extend(&once);
        });
        assert!(check_client_hello(&twice, &[7; 32], "example.test").is_err());
    }
}

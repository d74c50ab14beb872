//! The TLS 1.3 handshake as both sessions see it: the ClientHello the
//! prover writes and the verifier checks, the ServerHello's checks, the
//! server's encrypted flight read under the revealed server handshake key,
//! and the client Finished record.
//!
//! Nothing here trusts the other party: the verifier runs
//! [`check_client_hello`] on the bytes the prover forwarded, and both read
//! the server's messages from their own copy of the server's bytes.

use crate::error::{Error, Result};
use crate::hello::{handshake_message, record};
use crate::kdf::tls13::{traffic_keys, HandshakeSecrets};
use webproof_tls::aead::{OpenError, RecordCipher};
use webproof_tls::handshake::{self as hsk, msg_type, Message, Reassembler};
use webproof_tls::keys::TrafficKeys;
use webproof_tls::record::{content_type, Record};
use webproof_tls::{CipherSuite, KxGroup};

/// Signature schemes offered: those TLS 1.3 allows for CertificateVerify
/// that `webproof_tls::identity` verifies (no PKCS#1 v1.5 signatures,
/// which TLS 1.3 forbids there).
const SIG_SCHEMES: [u16; 5] = [0x0403, 0x0503, 0x0804, 0x0805, 0x0806];

/// supported_groups.
const SUPPORTED_GROUPS: u16 = 10;
/// signature_algorithms.
const SIGNATURE_ALGORITHMS: u16 = 13;

/// The only extensions a TLS 1.3 ClientHello may carry in MPC mode: those
/// [`client_hello`] writes. Without `psk_key_exchange_modes` a server
/// should send no tickets (RFC 8446 §4.2.9; any it sends are skipped),
/// and without `pre_shared_key` or
/// `early_data` nothing is resumed or sent early.
const ALLOWED: [u16; 5] = [
    hsk::ext::SERVER_NAME,
    SUPPORTED_GROUPS,
    SIGNATURE_ALGORITHMS,
    hsk::ext::SUPPORTED_VERSIONS,
    hsk::ext::KEY_SHARE,
];

fn vec16(b: &[u8]) -> Vec<u8> {
    [&(b.len() as u16).to_be_bytes()[..], b].concat()
}

fn ext(typ: u16, data: &[u8]) -> Vec<u8> {
    [&typ.to_be_bytes()[..], &vec16(data)].concat()
}

/// The TLS 1.3 ClientHello (handshake message, header included): legacy
/// version 1.2, the verifier's `random`, an empty session id (no
/// middlebox compatibility mode: the server then sends no
/// ChangeCipherSpec, though one is tolerated), [`super::SUITE`] alone,
/// null compression, SNI (none for an IP address), `group` alone in
/// supported_groups with the parties' joint `key_share` for it, the
/// signature schemes, supported_versions 1.3 alone.
pub fn client_hello(
    random: &[u8; 32],
    server_name: Option<&str>,
    suite: CipherSuite,
    preferred: KxGroup,
    group: KxGroup,
    key_share: &[u8],
) -> Vec<u8> {
    let mut exts = Vec::new();
    if let Some(name) = server_name {
        let mut list = vec![0u8];
        list.extend(vec16(name.as_bytes()));
        exts.extend(ext(hsk::ext::SERVER_NAME, &vec16(&list)));
    }
    exts.extend(ext(SUPPORTED_GROUPS, &vec16(&groups(preferred))));
    let schemes: Vec<u8> = SIG_SCHEMES.iter().flat_map(|s| s.to_be_bytes()).collect();
    exts.extend(ext(SIGNATURE_ALGORITHMS, &vec16(&schemes)));
    exts.extend(ext(hsk::ext::SUPPORTED_VERSIONS, &[2, 3, 4]));
    let entry = [&group.code().to_be_bytes()[..], &vec16(key_share)].concat();
    exts.extend(ext(hsk::ext::KEY_SHARE, &vec16(&entry)));
    let mut body = vec![3, 3];
    body.extend_from_slice(random);
    body.push(0);
    body.extend(vec16(&suite.code().to_be_bytes()));
    body.extend([1, 0]);
    body.extend(vec16(&exts));
    handshake_message(msg_type::CLIENT_HELLO, &body)
}

/// supported_groups' list: the terms' group first, then the other (so a
/// server that runs only the other asks for it by a HelloRetryRequest).
fn groups(preferred: KxGroup) -> Vec<u8> {
    [preferred, super::other_group(preferred)]
        .iter()
        .flat_map(|g| g.code().to_be_bytes())
        .collect()
}

/// The extensions of a ClientHello body, in order, after its fixed
/// fields are checked: an empty session id and null compression alone.
fn hello_extensions(body: &[u8]) -> Result<Vec<(u16, &[u8])>> {
    let bad = Error::ClientHello;
    let get = |at: usize, n: usize| body.get(at..at + n).ok_or(bad("truncated"));
    let mut at = 2 + 32;
    if get(at, 1)? != [0] {
        return Err(bad("carries a session id (resumption is not run)"));
    }
    at += 1;
    let suites = u16::from_be_bytes(get(at, 2)?.try_into().expect("2")) as usize;
    at += 2 + suites;
    if get(at, 2)? != [1, 0] {
        return Err(bad("offers compression other than null alone"));
    }
    at += 2;
    let len = u16::from_be_bytes(get(at, 2)?.try_into().expect("2")) as usize;
    at += 2;
    let exts = get(at, len)?;
    if at + len != body.len() {
        return Err(bad("has bytes after its extensions"));
    }
    let mut out: Vec<(u16, &[u8])> = Vec::new();
    let mut i = 0;
    while i < exts.len() {
        let head = exts.get(i..i + 4).ok_or(bad("truncated"))?;
        let typ = u16::from_be_bytes([head[0], head[1]]);
        let n = u16::from_be_bytes([head[2], head[3]]) as usize;
        let data = exts.get(i + 4..i + 4 + n).ok_or(bad("truncated"))?;
        if !ALLOWED.contains(&typ) {
            return Err(bad(
                "offers an extension MPC mode over TLS 1.3 does not run",
            ));
        }
        if out.iter().any(|(t, _)| *t == typ) {
            return Err(bad("repeats an extension"));
        }
        out.push((typ, data));
        i += 4 + n;
    }
    Ok(out)
}

/// The verifier's check of the ClientHello the prover forwarded: its own
/// `random`, [`super::SUITE`] alone, TLS 1.3 alone in supported_versions,
/// `group` alone with `key_share` (the sum of the parties' shares, which
/// the verifier computed itself) as its one key share, the session's
/// server name, no session id, no PSK or early data, and no extension
/// but [`client_hello`]'s.
pub fn check_client_hello(
    msg: &Message,
    random: &[u8; 32],
    server_name: &str,
    suite: CipherSuite,
    preferred: KxGroup,
    group: KxGroup,
    key_share: &[u8],
) -> Result<()> {
    let bad = Error::ClientHello;
    if msg.typ != msg_type::CLIENT_HELLO {
        return Err(bad("not a ClientHello"));
    }
    let ch = hsk::parse_client_hello(msg.body())?;
    let exts = hello_extensions(msg.body())?;
    if &ch.random != random {
        return Err(bad("the client random is not the verifier's"));
    }
    if msg.body().get(..2) != Some(&[3, 3][..]) {
        return Err(bad("legacy version is not TLS 1.2"));
    }
    let found = |t: u16| exts.iter().find(|(x, _)| *x == t).map(|(_, d)| *d);
    if found(hsk::ext::SUPPORTED_VERSIONS) != Some(&[2, 3, 4][..]) {
        return Err(bad("offers another version than TLS 1.3 alone"));
    }
    if ch.cipher_suites != [suite.code()] {
        return Err(bad("offers another suite than the session's"));
    }
    if found(SUPPORTED_GROUPS) != Some(&vec16(&groups(preferred))[..]) {
        return Err(bad("offers other groups than the session's"));
    }
    if ch.offers_psk_or_early_data {
        return Err(bad("offers a PSK or early data"));
    }
    if ch.key_shares.len() != 1
        || ch.key_shares[0].0 != group.code()
        || ch.key_shares[0].1 != key_share
    {
        return Err(bad("its key share is not the sum of the parties' shares"));
    }
    let is_ip = server_name.parse::<core::net::IpAddr>().is_ok();
    match (&ch.server_name, is_ip) {
        (Some(sni), false) if sni.eq_ignore_ascii_case(server_name) => Ok(()),
        (None, true) => Ok(()),
        _ => Err(bad("names another server than the session's")),
    }
}

/// The server's handshake messages in the clear at the head of its
/// records (a ServerHello, or a HelloRetryRequest and then the
/// ServerHello), each whole, and the index of the first record after
/// them; a ChangeCipherSpec among them is skipped (middlebox
/// compatibility), an alert ends the session with the alert. The key
/// changes after the ServerHello, so no message may share its record
/// with the next (RFC 8446 §5.1).
pub fn clear_messages(records: &[Record]) -> Result<(Vec<Message>, usize)> {
    let mut r = Reassembler::default();
    let mut out = Vec::new();
    let mut next = 0;
    for (i, rec) in records.iter().enumerate() {
        match rec.content_type {
            content_type::HANDSHAKE => r.push(&rec.payload)?,
            content_type::CHANGE_CIPHER_SPEC if rec.payload == [1] && r.is_empty() => {
                next = i + 1;
                continue;
            }
            content_type::ALERT => {
                return Err(Error::ServerAlert {
                    level: rec.payload.first().copied().unwrap_or(0),
                    description: rec.payload.get(1).copied().unwrap_or(255),
                })
            }
            content_type::APPLICATION_DATA if r.is_empty() && !out.is_empty() => break,
            _ => {
                return Err(Error::Unexpected {
                    expected: "ServerHello",
                    got: "another record",
                })
            }
        }
        while let Some(m) = r.next_message()? {
            if !r.is_empty() {
                return Err(Error::Unexpected {
                    expected: "the ServerHello alone in its record",
                    got: "more handshake bytes in the clear",
                });
            }
            out.push(m);
        }
        if r.is_empty() {
            next = i + 1;
        }
        if out.len() == 2 {
            break;
        }
    }
    Ok((out, next))
}

/// Whether a server message is a HelloRetryRequest (by its random).
pub fn is_hrr(msg: &Message) -> bool {
    msg.typ == msg_type::SERVER_HELLO && msg.body().get(2..34) == Some(&hsk::HRR_RANDOM[..])
}

/// The checks of a HelloRetryRequest: TLS 1.3, the session's suite, and
/// the group the client offered without a key share (the other one) as
/// its selected group; nothing else asked for (a cookie or any other
/// extension is refused: the second ClientHello would have to echo what
/// this client does not write). Returns the group.
pub fn check_hrr(msg: &Message, suite: CipherSuite, preferred: KxGroup) -> Result<KxGroup> {
    let sh = hsk::parse_server_hello(msg.body())?;
    let other = super::other_group(preferred);
    if !sh.is_hrr() || sh.version != 0x0304 || sh.cipher_suite != suite.code() || sh.psk {
        return Err(Error::Unexpected {
            expected: "a HelloRetryRequest for TLS 1.3 and the session's suite",
            got: "another HelloRetryRequest",
        });
    }
    match sh.key_share {
        Some((g, _)) if g == other.code() => {}
        _ => {
            return Err(Error::Unsupported(
                "a HelloRetryRequest for a group the client did not offer, or for the one it \
                 sent a key share for"
                    .into(),
            ))
        }
    }
    // Its extensions, raw: supported_versions and key_share alone.
    let b = msg.body();
    let sid = *b.get(34).ok_or(Error::Malformed("a HelloRetryRequest"))? as usize;
    let mut at = 35 + sid + 3 + 2;
    while at < b.len() {
        let head = b
            .get(at..at + 4)
            .ok_or(Error::Malformed("a HelloRetryRequest"))?;
        let typ = u16::from_be_bytes([head[0], head[1]]);
        if typ != hsk::ext::SUPPORTED_VERSIONS && typ != hsk::ext::KEY_SHARE {
            return Err(Error::Unsupported(format!(
                "a HelloRetryRequest with extension {typ} (a cookie is not echoed yet)"
            )));
        }
        at += 4 + u16::from_be_bytes([head[2], head[3]]) as usize;
    }
    Ok(other)
}

/// The transcript through the ServerHello, as both parties hash it: the
/// ClientHello and the ServerHello; after a HelloRetryRequest, the first
/// ClientHello replaced by its `message_hash` (RFC 8446 §4.4.1), the
/// HelloRetryRequest, the second ClientHello, the ServerHello.
pub fn hello_transcript(
    suite: CipherSuite,
    ch1: &Message,
    retry: Option<(&Message, &Message)>,
    sh: &Message,
) -> Vec<u8> {
    match retry {
        None => [&ch1.bytes[..], &sh.bytes].concat(),
        Some((hrr, ch2)) => {
            let h = suite.hash();
            let digest = h.hash(&ch1.bytes);
            let mut t = vec![msg_type::MESSAGE_HASH, 0, 0, digest.len() as u8];
            t.extend_from_slice(&digest);
            [&t[..], &hrr.bytes, &ch2.bytes, &sh.bytes].concat()
        }
    }
}

/// The checks of the ServerHello both parties run on their own copy:
/// TLS 1.3, [`super::SUITE`], no HelloRetryRequest and no PSK (refused
/// clearly: neither is run yet), a key share for `group`. Returns the
/// server's key share.
pub fn check_server_hello(msg: &Message, suite: CipherSuite, group: KxGroup) -> Result<Vec<u8>> {
    if msg.typ != msg_type::SERVER_HELLO {
        return Err(Error::Unexpected {
            expected: "ServerHello",
            got: "another handshake message",
        });
    }
    let sh = hsk::parse_server_hello(msg.body())?;
    if sh.is_hrr() {
        return Err(Error::Unsupported(
            "a HelloRetryRequest where a ServerHello was due (a second one, or one after \
             the retry)"
                .into(),
        ));
    }
    if sh.version != 0x0304 {
        return Err(Error::Unsupported(format!(
            "protocol version {:#06x} where TLS 1.3 was offered alone",
            sh.version
        )));
    }
    if sh.cipher_suite != suite.code() {
        return Err(Error::Unsupported(format!(
            "cipher suite {:#06x}: the ClientHello offered {suite} alone",
            sh.cipher_suite,
        )));
    }
    if sh.psk {
        return Err(Error::Unsupported("a pre-shared key handshake".into()));
    }
    match sh.key_share {
        Some((g, k)) if g == group.code() && !k.is_empty() => Ok(k),
        _ => Err(Error::Unexpected {
            expected: "a key share for the offered group",
            got: "another ServerHello",
        }),
    }
}

/// A handshake traffic secret's record keys under `suite` (one of
/// [`super::SUITES`]).
pub fn handshake_keys(suite: CipherSuite, secret: &[u8]) -> Result<TrafficKeys> {
    let (key, iv) = traffic_keys(super::schedule_of(suite)?, secret);
    Ok(TrafficKeys {
        key,
        iv: iv.to_vec(),
    })
}

/// The server's encrypted handshake messages, whole.
pub struct ServerFlight {
    /// EncryptedExtensions, Certificate, CertificateVerify, Finished, in order.
    pub messages: [Message; 4],
    /// Records of the server read (ServerHello's included).
    pub records: usize,
}

/// The server's encrypted flight from `records[first..]` (after the
/// ServerHello), decrypted under the revealed server handshake secret:
/// `None` until the server Finished is whole. Refused: an alert, any
/// record that does not decrypt, a CertificateRequest (client
/// certificates are not run), a message out of order, anything but
/// handshake messages before the Finished.
pub fn read_flight(
    records: &[Record],
    first: usize,
    suite: CipherSuite,
    secrets: &HandshakeSecrets,
) -> Result<Option<ServerFlight>> {
    let cipher = RecordCipher::new(suite, handshake_keys(suite, &secrets.server)?)?;
    let order = [
        (msg_type::ENCRYPTED_EXTENSIONS, "EncryptedExtensions"),
        (msg_type::CERTIFICATE, "Certificate"),
        (msg_type::CERTIFICATE_VERIFY, "CertificateVerify"),
        (msg_type::FINISHED, "Finished"),
    ];
    let mut r = Reassembler::default();
    let mut got: Vec<Message> = Vec::new();
    let mut seq = 0u64;
    for (i, rec) in records.iter().enumerate().skip(first) {
        if rec.content_type == content_type::CHANGE_CIPHER_SPEC {
            // Middlebox compatibility (RFC 8446 §D.4): meaningless.
            if rec.payload != [1] {
                return Err(Error::Unexpected {
                    expected: "ChangeCipherSpec [1]",
                    got: "another ChangeCipherSpec",
                });
            }
            continue;
        }
        let opened = cipher.open(seq, rec).map_err(|e| match e {
            OpenError::Auth => Error::Decrypt { index: i },
            OpenError::Malformed(_) => Error::Decrypt { index: i },
        })?;
        seq += 1;
        match opened.content_type {
            content_type::HANDSHAKE => r.push(&opened.data)?,
            content_type::ALERT => {
                return Err(Error::ServerAlert {
                    level: opened.data.first().copied().unwrap_or(0),
                    description: opened.data.get(1).copied().unwrap_or(255),
                })
            }
            t => return Err(Error::ServerEncrypted(t)),
        }
        while let Some(m) = r.next_message()? {
            let (typ, name) = order[got.len()];
            if m.typ == msg_type::CERTIFICATE_REQUEST {
                return Err(Error::Unsupported(
                    "client certificates (the server sent a CertificateRequest)".into(),
                ));
            }
            if m.typ != typ {
                return Err(Error::Unexpected {
                    expected: name,
                    got: "another handshake message",
                });
            }
            got.push(m);
            if got.len() == 4 {
                if !r.is_empty() {
                    return Err(Error::Unexpected {
                        expected: "the server Finished last in its record",
                        got: "more handshake bytes under the handshake key",
                    });
                }
                let messages: [Message; 4] = got.try_into().expect("four");
                return Ok(Some(ServerFlight {
                    messages,
                    records: i + 1,
                }));
            }
        }
    }
    Ok(None)
}

/// The client Finished record under the client handshake secret: the
/// first record of that key (sequence number 0), no padding. Both parties
/// compute it, from values both hold.
pub fn client_finished_record(
    suite: CipherSuite,
    secrets: &HandshakeSecrets,
    verify_data: &[u8],
) -> Result<Vec<u8>> {
    let cipher = RecordCipher::new(suite, handshake_keys(suite, &secrets.client)?)?;
    let msg = handshake_message(msg_type::FINISHED, verify_data);
    let rec = cipher.seal(0, content_type::HANDSHAKE, &msg, 0);
    Ok(record(rec.content_type, &rec.payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: CipherSuite = super::super::SUITE;

    /// A ServerHello message with `random`, `suite`, supported_versions
    /// `version` and the given extra extensions after the key share.
    fn sh(random: [u8; 32], suite: u16, version: u16, key: &[u8], extra: &[u8]) -> Message {
        let mut exts = ext(hsk::ext::SUPPORTED_VERSIONS, &version.to_be_bytes());
        let share = [&KxGroup::X25519.code().to_be_bytes()[..], &vec16(key)].concat();
        exts.extend(ext(hsk::ext::KEY_SHARE, &share));
        exts.extend_from_slice(extra);
        let mut body = vec![3, 3];
        body.extend_from_slice(&random);
        body.push(0);
        body.extend(suite.to_be_bytes());
        body.push(0);
        body.extend(vec16(&exts));
        let bytes = handshake_message(msg_type::SERVER_HELLO, &body);
        Message {
            typ: bytes[0],
            bytes,
        }
    }

    #[test]
    fn server_hello_checks() {
        let code = super::super::SUITE.code();
        let ok = sh([7; 32], code, 0x0304, &[9; 32], &[]);
        assert_eq!(
            check_server_hello(&ok, S, KxGroup::X25519).unwrap(),
            [9; 32]
        );
        // Another group than the one offered.
        assert!(check_server_hello(&ok, S, KxGroup::Secp256r1).is_err());
        // A HelloRetryRequest: its key share names a group alone.
        let hrr = {
            let mut exts = ext(hsk::ext::SUPPORTED_VERSIONS, &[3, 4]);
            exts.extend(ext(
                hsk::ext::KEY_SHARE,
                &KxGroup::X25519.code().to_be_bytes(),
            ));
            let mut body = vec![3, 3];
            body.extend_from_slice(&hsk::HRR_RANDOM);
            body.push(0);
            body.extend(code.to_be_bytes());
            body.push(0);
            body.extend(vec16(&exts));
            let bytes = handshake_message(msg_type::SERVER_HELLO, &body);
            Message {
                typ: bytes[0],
                bytes,
            }
        };
        let e = check_server_hello(&hrr, S, KxGroup::X25519).unwrap_err();
        assert!(format!("{e}").contains("HelloRetryRequest"), "{e}");
        // As a retry: to X25519 when P-256 had the key share, and not to
        // the group that had it, nor under another suite.
        assert!(is_hrr(&hrr) && !is_hrr(&ok));
        assert_eq!(
            check_hrr(&hrr, S, KxGroup::Secp256r1).unwrap(),
            KxGroup::X25519
        );
        assert!(matches!(
            check_hrr(&hrr, S, KxGroup::X25519),
            Err(Error::Unsupported(_))
        ));
        let s384 = CipherSuite::TLS13_AES_256_GCM_SHA384;
        assert!(check_hrr(&hrr, s384, KxGroup::Secp256r1).is_err());
        assert!(check_hrr(&ok, S, KxGroup::Secp256r1).is_err());
        // A retry that asks for a cookie: refused by name.
        let cookie = {
            let mut exts = ext(hsk::ext::SUPPORTED_VERSIONS, &[3, 4]);
            exts.extend(ext(
                hsk::ext::KEY_SHARE,
                &KxGroup::X25519.code().to_be_bytes(),
            ));
            exts.extend(ext(44, &vec16(&[1, 2, 3])));
            let mut body = vec![3, 3];
            body.extend_from_slice(&hsk::HRR_RANDOM);
            body.push(0);
            body.extend(code.to_be_bytes());
            body.push(0);
            body.extend(vec16(&exts));
            let bytes = handshake_message(msg_type::SERVER_HELLO, &body);
            Message {
                typ: bytes[0],
                bytes,
            }
        };
        let e = check_hrr(&cookie, S, KxGroup::Secp256r1).unwrap_err();
        assert!(format!("{e}").contains("cookie"), "{e}");
        // TLS 1.2, another suite, a PSK.
        let v12 = sh([7; 32], code, 0x0303, &[9; 32], &[]);
        assert!(matches!(
            check_server_hello(&v12, S, KxGroup::X25519),
            Err(Error::Unsupported(_))
        ));
        let other = sh([7; 32], 0x1302, 0x0304, &[9; 32], &[]);
        assert!(matches!(
            check_server_hello(&other, S, KxGroup::X25519),
            Err(Error::Unsupported(_))
        ));
        let psk = sh(
            [7; 32],
            code,
            0x0304,
            &[9; 32],
            &ext(hsk::ext::PRE_SHARED_KEY, &[0, 0]),
        );
        let e = check_server_hello(&psk, S, KxGroup::X25519).unwrap_err();
        assert!(format!("{e}").contains("pre-shared key"), "{e}");
        // Not a ServerHello at all; truncated.
        let mut not = ok.clone();
        not.typ = msg_type::CERTIFICATE;
        assert!(check_server_hello(&not, S, KxGroup::X25519).is_err());
        let mut short = ok.clone();
        short.bytes.truncate(20);
        assert!(check_server_hello(&short, S, KxGroup::X25519).is_err());
    }

    #[test]
    fn client_hello_checks() {
        let key = [5u8; 32];
        let ch = client_hello(
            &[1; 32],
            Some("a.test"),
            S,
            KxGroup::X25519,
            KxGroup::X25519,
            &key,
        );
        let m = |bytes: Vec<u8>| Message {
            typ: bytes[0],
            bytes,
        };
        let check = |b: &[u8]| {
            check_client_hello(
                &m(b.to_vec()),
                &[1; 32],
                "a.test",
                S,
                KxGroup::X25519,
                KxGroup::X25519,
                &key,
            )
        };
        check(&ch).unwrap();
        assert!(check_client_hello(
            &m(ch.clone()),
            &[2; 32],
            "a.test",
            S,
            KxGroup::X25519,
            KxGroup::X25519,
            &key
        )
        .is_err());
        assert!(check_client_hello(
            &m(ch.clone()),
            &[1; 32],
            "b.test",
            S,
            KxGroup::X25519,
            KxGroup::X25519,
            &key
        )
        .is_err());
        assert!(check_client_hello(
            &m(ch.clone()),
            &[1; 32],
            "a.test",
            S,
            KxGroup::X25519,
            KxGroup::X25519,
            &[6; 32]
        )
        .is_err());
        assert!(check_client_hello(
            &m(ch.clone()),
            &[1; 32],
            "a.test",
            S,
            KxGroup::Secp256r1,
            KxGroup::Secp256r1,
            &key
        )
        .is_err());
        // Truncated anywhere.
        for n in [4, 40, 60, ch.len() - 1] {
            assert!(check(&ch[..n]).is_err(), "{n}");
        }
        // Another suite than the session's.
        let other = CipherSuite::TLS13_AES_256_GCM_SHA384;
        assert!(check_client_hello(
            &m(ch.clone()),
            &[1; 32],
            "a.test",
            other,
            KxGroup::X25519,
            KxGroup::X25519,
            &key
        )
        .is_err());
        // The key share for the other group (the second ClientHello after
        // a HelloRetryRequest) keeps the groups' list.
        let ch2 = client_hello(
            &[1; 32],
            Some("a.test"),
            S,
            KxGroup::X25519,
            KxGroup::Secp256r1,
            &[4; 65],
        );
        check_client_hello(
            &m(ch2.clone()),
            &[1; 32],
            "a.test",
            S,
            KxGroup::X25519,
            KxGroup::Secp256r1,
            &[4; 65],
        )
        .unwrap();
        assert!(check_client_hello(
            &m(ch2),
            &[1; 32],
            "a.test",
            S,
            KxGroup::Secp256r1,
            KxGroup::Secp256r1,
            &[4; 65]
        )
        .is_err());
        // An IP address: no SNI.
        let ip = client_hello(&[1; 32], None, S, KxGroup::X25519, KxGroup::X25519, &key);
        check_client_hello(
            &m(ip),
            &[1; 32],
            "127.0.0.1",
            S,
            KxGroup::X25519,
            KxGroup::X25519,
            &key,
        )
        .unwrap();
    }
}

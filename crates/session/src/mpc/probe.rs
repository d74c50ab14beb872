//! Which TLS version MPC mode runs when the request names none: the
//! prover asks the server itself, through the same [`Connector`], with a
//! plain ClientHello offering every suite MPC mode could run (the TLS 1.3
//! ones, ChaCha20-Poly1305 last, with a throwaway X25519 key share, the
//! TLS 1.2 ECDHE AES-GCM and ChaCha20-Poly1305 ones), reads the ServerHello and hangs up. The server's pick decides
//! the session.
//!
//! Why a probe and not "TLS 1.3 first, then TLS 1.2": the 2PC session is
//! garbled for one version and one suite before the ClientHello (seconds
//! of tables), and a wrong guess would cost a whole second session and a
//! second verifier link; the probe costs one TCP connection and one round
//! trip to the server, no 2PC and nothing of the verifier's. Nothing it
//! reads is trusted: the ServerHello only chooses which session to run,
//! and that session checks the real ServerHello against its own terms (a
//! server that answers the session otherwise is refused by it). The
//! probe sends no request and takes no key: it learns nothing the
//! session would not.

use crate::runtime::Connector;
use crate::{Error, Result};
use futures::io::{AsyncReadExt, AsyncWriteExt};
use rand_core::RngCore;
use webproof_tls::handshake::{msg_type, parse_server_hello};
use webproof_tls::CipherSuite;

/// The TLS 1.2 suites offered when the request names none: those MPC mode
/// runs (ECDHE with AES-GCM, then ChaCha20-Poly1305, as
/// `webproof_mpc_tls::hello::SUITES` orders them).
pub(crate) const SUITES12: [CipherSuite; 6] = [
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
];

/// Signature schemes offered: ECDSA P-256/P-384, RSA-PSS and PKCS#1.
const SIG_SCHEMES: [u16; 8] = [
    0x0403, 0x0503, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601,
];

fn vec16(b: &[u8]) -> Vec<u8> {
    let mut v = (b.len() as u16).to_be_bytes().to_vec();
    v.extend_from_slice(b);
    v
}

fn ext(typ: u16, body: &[u8]) -> Vec<u8> {
    let mut v = typ.to_be_bytes().to_vec();
    v.extend(vec16(body));
    v
}

/// The probe's ClientHello record.
pub(crate) fn client_hello(
    host: &str,
    suites13: &[CipherSuite],
    suites12: &[CipherSuite],
    rng: &mut impl RngCore,
) -> Vec<u8> {
    let mut random = [0u8; 32];
    rng.fill_bytes(&mut random);
    // Any 32 bytes are an X25519 public key; nobody holds its secret, and
    // no key is derived from it.
    let mut share = [0u8; 32];
    rng.fill_bytes(&mut share);
    let mut exts = Vec::new();
    if host.parse::<std::net::IpAddr>().is_err() {
        let mut list = vec![0u8];
        list.extend(vec16(host.as_bytes()));
        exts.extend(ext(0, &vec16(&list)));
    }
    exts.extend(ext(10, &vec16(&[0x00, 0x1d, 0x00, 0x17])));
    exts.extend(ext(11, &[1, 0]));
    let schemes: Vec<u8> = SIG_SCHEMES.iter().flat_map(|s| s.to_be_bytes()).collect();
    exts.extend(ext(13, &vec16(&schemes)));
    if !suites12.is_empty() {
        exts.extend(ext(0x0017, &[]));
        exts.extend(ext(0xff01, &[0]));
    }
    if !suites13.is_empty() {
        let versions: &[u8] = if suites12.is_empty() {
            &[2, 3, 4]
        } else {
            &[4, 3, 4, 3, 3]
        };
        exts.extend(ext(0x002b, versions));
        let entry = [&[0x00, 0x1d][..], &vec16(&share)].concat();
        exts.extend(ext(0x0033, &vec16(&entry)));
    }
    let codes: Vec<u8> = suites13
        .iter()
        .chain(suites12)
        .flat_map(|s| s.code().to_be_bytes())
        .collect();
    let mut body = vec![3, 3];
    body.extend_from_slice(&random);
    body.push(0);
    body.extend(vec16(&codes));
    body.extend_from_slice(&[1, 0]);
    body.extend(vec16(&exts));
    let mut msg = vec![msg_type::CLIENT_HELLO];
    msg.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    msg.extend(body);
    let mut rec = vec![0x16, 3, 1];
    rec.extend(vec16(&msg));
    rec
}

/// What the server's ServerHello picked from the probe's offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Picked {
    /// Its suite.
    pub suite: CipherSuite,
    /// Whether it took extended_master_secret (TLS 1.2): the SHA-384 key
    /// derivation is garbled for one choice ahead.
    pub ems: bool,
}

/// The suite the server picks from the offer, by its ServerHello (or
/// HelloRetryRequest); the server's refusal names its alert.
pub(crate) async fn probe<C: Connector>(
    server: &C,
    host: &str,
    port: u16,
    suites13: &[CipherSuite],
    suites12: &[CipherSuite],
    rng: &mut impl RngCore,
) -> Result<Picked> {
    let mut conn = server.connect(host, port).await?;
    let hello = client_hello(host, suites13, suites12, rng);
    let io = |e: std::io::Error| Error::Tls(format!("asking the server for its TLS version: {e}"));
    conn.write_all(&hello).await.map_err(io)?;
    conn.flush().await.map_err(io)?;
    let mut hs = Vec::new();
    let picked = loop {
        let mut head = [0u8; 5];
        conn.read_exact(&mut head).await.map_err(io)?;
        let len = u16::from_be_bytes([head[3], head[4]]) as usize;
        if len > 1 << 14 {
            return Err(Error::Tls("the server's first record is too long".into()));
        }
        let mut body = vec![0u8; len];
        conn.read_exact(&mut body).await.map_err(io)?;
        match head[0] {
            0x15 => {
                let alert = body.get(1).copied().unwrap_or_default();
                let what = match alert {
                    40 => "handshake_failure: no suite or group in common",
                    70 => "protocol_version: it does not run the version offered",
                    71 => "insufficient_security",
                    _ => "",
                };
                return Err(Error::Tls(format!(
                    "the server refused every suite MPC mode runs (alert {alert}{}{what}; \
                     offered {})",
                    if what.is_empty() { "" } else { ", " },
                    offered(suites13, suites12)
                )));
            }
            0x16 => hs.extend(body),
            t => {
                return Err(Error::Tls(format!(
                    "the server answered the ClientHello with a record of type {t}"
                )))
            }
        }
        if hs.len() >= 4 {
            let n = u32::from_be_bytes([0, hs[1], hs[2], hs[3]]) as usize;
            if hs.len() >= 4 + n {
                if hs[0] != msg_type::SERVER_HELLO {
                    return Err(Error::Tls(
                        "the server did not answer with a ServerHello".into(),
                    ));
                }
                let sh = parse_server_hello(&hs[4..4 + n])
                    .map_err(|e| Error::Tls(format!("the server's ServerHello: {e}")))?;
                break (sh.cipher_suite, sh.ems);
            }
        }
        if hs.len() > 1 << 16 {
            return Err(Error::Tls("the server's ServerHello is too long".into()));
        }
    };
    let _ = conn.close().await;
    let (picked, ems) = picked;
    CipherSuite::ALL
        .into_iter()
        .find(|s| s.code() == picked)
        .map(|suite| Picked { suite, ems })
        .ok_or_else(|| {
            Error::Tls(format!(
                "the server picked suite {picked:#06x}, which MPC mode does not run (offered {})",
                offered(suites13, suites12)
            ))
        })
}

fn offered(suites13: &[CipherSuite], suites12: &[CipherSuite]) -> String {
    suites13
        .iter()
        .chain(suites12)
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    /// The probe offers exactly the TLS 1.2 suites the sessions run, in
    /// their order: a suite the probe finds must be one a session takes.
    #[test]
    fn tls12_offer_is_the_sessions_suites() {
        assert_eq!(super::SUITES12, webproof_mpc_tls::hello::SUITES);
    }
}

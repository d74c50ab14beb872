//! Cheating provers and altered transcripts, checked by the verifier's
//! clear-text verification (`webproof_proxy::verify_full_reveal`).
//!
//! Sessions are real rustls handshakes between the instrumented client and
//! the fixture's server configuration, run in memory and recorded exactly as
//! the verifier's relay records them.

use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use webproof_net::provider::{instrumented_provider, take_shared_secret, CollectingKeyLog};
use webproof_proxy::disclosure::Opening;
use webproof_proxy::{
    verify_full_reveal, CipherSuite, Direction, Disclosure, ProxyError, Recorder, RecorderLimits,
    Recording, RootStore, SessionSecret, VerifyConfig,
};

struct Session {
    transcript: Recording,
    witness: SessionSecret,
    cfg: VerifyConfig,
    request: Vec<u8>,
    response: Vec<u8>,
}

async fn session(suite: CipherSuite, size: usize) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let certs = webproof_net::FixtureCerts::generate(dir.path(), &[]).unwrap();
    let server_cfg = certs.server_config().unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certs.chain[1].clone()).unwrap();
    let keylog = CollectingKeyLog::new();
    let versions: &[&rustls::SupportedProtocolVersion] =
        if suite.version() == webproof_proxy::TlsVersion::Tls13 {
            &[&rustls::version::TLS13]
        } else {
            &[&rustls::version::TLS12]
        };
    let mut client_cfg =
        rustls::ClientConfig::builder_with_provider(Arc::new(instrumented_provider(&[suite], &[])))
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    client_cfg.resumption = rustls::client::Resumption::disabled();
    client_cfg.key_log = keylog.clone();

    // client <-> [recording relay] <-> server, all in memory.
    let (c_end, relay_c) = tokio::io::duplex(1 << 16);
    let (relay_s, s_end) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(async move {
        let acceptor = tokio_rustls::TlsAcceptor::from(server_cfg);
        let mut tls = acceptor.accept(s_end).await.unwrap();
        let mut buf = vec![0u8; 4096];
        let n = tls.read(&mut buf).await.unwrap();
        assert!(n > 0);
        let body: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
        let mut resp = format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n").into_bytes();
        resp.extend_from_slice(&body);
        // Several writes: several records.
        for chunk in resp.chunks(1000) {
            tls.write_all(chunk).await.unwrap();
            tls.flush().await.unwrap();
        }
        tls.shutdown().await.unwrap();
    });
    let relay = tokio::spawn(async move {
        let mut rec = Recorder::new(RecorderLimits::default());
        let (mut cr, mut cw) = tokio::io::split(relay_c);
        let (mut sr, mut sw) = tokio::io::split(relay_s);
        let mut b1 = vec![0u8; 1 << 16];
        let mut b2 = vec![0u8; 1 << 16];
        let (mut c_open, mut s_open) = (true, true);
        while c_open || s_open {
            tokio::select! {
                n = cr.read(&mut b1), if c_open => match n {
                    Ok(0) | Err(_) => { c_open = false; let _ = sw.shutdown().await; }
                    Ok(n) => { rec.feed(Direction::Sent, &b1[..n]).unwrap(); sw.write_all(&b1[..n]).await.unwrap(); rec.mark_sent_delivered(); }
                },
                n = sr.read(&mut b2), if s_open => match n {
                    Ok(0) | Err(_) => { s_open = false; let _ = cw.shutdown().await; }
                    Ok(n) => { rec.feed(Direction::Received, &b2[..n]).unwrap(); let _ = cw.write_all(&b2[..n]).await; }
                },
            }
        }
        rec.finish()
    });
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_cfg));
    let mut tls = connector
        .connect(
            rustls::pki_types::ServerName::try_from("localhost").unwrap(),
            c_end,
        )
        .await
        .unwrap();
    let request = b"GET /secret HTTP/1.1\r\nHost: localhost\r\nCookie: k=v\r\n\r\n".to_vec();
    tls.write_all(&request).await.unwrap();
    let mut response = Vec::new();
    let _ = tls.read_to_end(&mut response).await;
    drop(tls);
    server.await.unwrap();
    let transcript = relay.await.unwrap();
    let ecdhe = webproof_proxy::verify::client_public_keys(&transcript)
        .unwrap()
        .iter()
        .find_map(|k| take_shared_secret(k))
        .unwrap();
    let derived = webproof_proxy::verify::derive_witness(&transcript, &ecdhe).unwrap();
    assert_eq!(
        keylog
            .get(derived.keylog_check.0, &derived.client_random)
            .as_ref(),
        Some(&derived.keylog_check.1)
    );
    let mut roots = RootStore::empty();
    roots.add_pem(certs.ca_pem.as_bytes()).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    Session {
        transcript,
        witness: derived.witness,
        cfg: VerifyConfig {
            roots,
            server_name: "localhost".into(),
            port: 443,
            time: now,
        },
        request,
        response,
    }
}

fn openings(s: &Session) -> Vec<Opening> {
    Disclosure::all(s.request.len(), s.response.len())
        .open(&s.request, &s.response)
        .unwrap()
}

fn flip(w: &SessionSecret) -> SessionSecret {
    match w.clone() {
        SessionSecret::Tls13 {
            mut handshake_secret,
        } => {
            handshake_secret[0] ^= 1;
            SessionSecret::Tls13 { handshake_secret }
        }
        SessionSecret::Tls12 { mut master_secret } => {
            master_secret[0] ^= 1;
            SessionSecret::Tls12 { master_secret }
        }
    }
}

/// Index of the first post-handshake record of the server.
fn app_records(t: &Recording) -> Vec<usize> {
    // The last records carry the response; find those after the handshake by size.
    (0..t.received.len())
        .filter(|&i| t.received[i].content_type == 23 && t.received[i].payload.len() > 900)
        .collect()
}

async fn cheats_rejected(suite: CipherSuite) {
    let s = session(suite, 5000).await;
    let ok = verify_full_reveal(&s.transcript, &s.cfg, &s.witness, &openings(&s)).unwrap();
    assert_eq!(ok.received.bytes, s.response);
    assert_eq!(ok.server_close_notify, Some(true));

    // A wrong session secret.
    let e =
        verify_full_reveal(&s.transcript, &s.cfg, &flip(&s.witness), &openings(&s)).unwrap_err();
    assert!(
        matches!(
            e,
            ProxyError::Decrypt { .. } | ProxyError::Finished(_) | ProxyError::SecretMismatch(_)
        ),
        "{suite}: {e}"
    );

    // Claiming a different plaintext.
    let mut o = openings(&s);
    let last = o.len() - 1;
    let n = o[last].bytes.len();
    o[last].bytes[n - 1] ^= 0x20;
    assert!(matches!(
        verify_full_reveal(&s.transcript, &s.cfg, &s.witness, &o),
        Err(ProxyError::Opening(_))
    ));

    let app = app_records(&s.transcript);
    assert!(app.len() >= 3, "{suite}: need several response records");
    // Dropped record.
    let mut t = s.transcript.clone();
    t.received.remove(app[1]);
    let e = verify_full_reveal(&t, &s.cfg, &s.witness, &openings(&s)).unwrap_err();
    assert!(
        matches!(
            e,
            ProxyError::Decrypt {
                direction: Direction::Received,
                ..
            }
        ),
        "{suite} drop: {e}"
    );
    // Reordered records.
    let mut t = s.transcript.clone();
    t.received.swap(app[0], app[1]);
    let e = verify_full_reveal(&t, &s.cfg, &s.witness, &openings(&s)).unwrap_err();
    assert!(
        matches!(e, ProxyError::Decrypt { .. }),
        "{suite} reorder: {e}"
    );
    // Replayed record.
    let mut t = s.transcript.clone();
    let dup = t.received[app[0]].clone();
    t.received.insert(app[0] + 1, dup);
    let e = verify_full_reveal(&t, &s.cfg, &s.witness, &openings(&s)).unwrap_err();
    assert!(
        matches!(e, ProxyError::Decrypt { .. }),
        "{suite} replay: {e}"
    );
    // Key consistency: one record re-encrypted under another key (e.g. a
    // prover substituting a record it can open under a key of its choice).
    let mut t = s.transcript.clone();
    let a = suite.aead();
    let other = webproof_proxy::aead::RecordCipher::new(
        suite,
        webproof_proxy::keys::TrafficKeys {
            key: vec![1; a.key_len()],
            iv: vec![2; a.iv_len(suite.version())],
        },
    )
    .unwrap();
    let seq_guess = app[1] as u64; // any sequence number: the key is wrong anyway
    let mut forged = other.seal(seq_guess, 23, b"HTTP/1.1 200 OK forged", 0);
    forged.direction = Direction::Received;
    t.received[app[1]] = forged;
    let e = verify_full_reveal(&t, &s.cfg, &s.witness, &openings(&s)).unwrap_err();
    assert!(
        matches!(e, ProxyError::Decrypt { .. }),
        "{suite} other key: {e}"
    );
    // A flipped ciphertext bit in the client's direction.
    let mut t = s.transcript.clone();
    let last = t.sent.len() - 1;
    t.sent[last].payload[0] ^= 1;
    assert!(verify_full_reveal(&t, &s.cfg, &s.witness, &openings(&s)).is_err());

    // Server identity: wrong name, untrusted root, outside validity.
    let mut cfg = s.cfg.clone();
    cfg.server_name = "webproof.test".into();
    assert!(matches!(
        verify_full_reveal(&s.transcript, &cfg, &s.witness, &openings(&s)),
        Err(ProxyError::Certificate(_))
    ));
    let mut cfg = s.cfg.clone();
    cfg.server_name = "evil.example".into();
    assert!(matches!(
        verify_full_reveal(&s.transcript, &cfg, &s.witness, &openings(&s)),
        Err(ProxyError::Certificate(_))
    ));
    let mut cfg = s.cfg.clone();
    cfg.roots = RootStore::webpki_roots();
    assert!(matches!(
        verify_full_reveal(&s.transcript, &cfg, &s.witness, &openings(&s)),
        Err(ProxyError::Certificate(_))
    ));
    let mut cfg = s.cfg.clone();
    cfg.time = 0;
    assert!(matches!(
        verify_full_reveal(&s.transcript, &cfg, &s.witness, &openings(&s)),
        Err(ProxyError::Certificate(_))
    ));

    // A transcript cut in the handshake.
    let mut t = s.transcript.clone();
    t.received.truncate(1);
    assert!(matches!(
        verify_full_reveal(&t, &s.cfg, &s.witness, &openings(&s)),
        Err(ProxyError::Incomplete(_))
    ));
    // Openings past the data.
    let mut o = openings(&s);
    o[0].range.end += 1000;
    assert!(verify_full_reveal(&s.transcript, &s.cfg, &s.witness, &o).is_err());
}

#[tokio::test]
async fn tls13_cheats_rejected() {
    for suite in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_AES_256_GCM_SHA384,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    ] {
        cheats_rejected(suite).await;
    }
}

#[tokio::test]
async fn tls12_cheats_rejected() {
    for suite in [
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ] {
        cheats_rejected(suite).await;
    }
}

#[tokio::test]
async fn tls13_forged_certificate_verify_and_finished_rejected() {
    let s = session(CipherSuite::TLS13_AES_128_GCM_SHA256, 100).await;
    // Re-encrypt the server's handshake flight with one byte changed in the
    // CertificateVerify signature / Finished: the prover knows the handshake
    // keys, so it could forge these records; the signature and MAC catch it.
    let SessionSecret::Tls13 { handshake_secret } = &s.witness else {
        unreachable!()
    };
    let suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    let h = suite.hash();
    // Recompute the server handshake traffic key from the transcript.
    let ch = &s.transcript.sent[0].payload;
    let sh = &s.transcript.received[0].payload;
    let mut msgs = ch.clone();
    msgs.extend_from_slice(sh);
    let (_, shts) =
        webproof_proxy::keys::tls13_handshake_traffic(h, handshake_secret, &h.hash(&msgs));
    let c = webproof_proxy::aead::RecordCipher::new(
        suite,
        webproof_proxy::keys::tls13_traffic_keys(suite, &shts),
    )
    .unwrap();
    // Server handshake records: after ServerHello and an optional CCS.
    let mut idx = 1;
    if s.transcript.received[idx].content_type == 20 {
        idx += 1;
    }
    let mut seq = 0u64;
    let mut flight = Vec::new();
    while flight
        .iter()
        .filter(|(_, o): &&(usize, webproof_proxy::aead::Opened)| o.content_type == 22)
        .map(|(_, o)| o.data.len())
        .sum::<usize>()
        < 10
        || !flight
            .iter()
            .any(|(_, o): &(usize, webproof_proxy::aead::Opened)| {
                o.data
                    .windows(4)
                    .any(|w| w[0] == 20 && w[1] == 0 && w[2] == 0 && w[3] == 32)
            })
    {
        let o = c.open(seq, &s.transcript.received[idx]).unwrap();
        flight.push((idx, o));
        idx += 1;
        seq += 1;
    }
    // Alter the last byte of the flight's plaintext (inside Finished).
    {
        let target = flight.len() - 1;
        let (ri, o) = &flight[target];
        let mut data = o.data.clone();
        let n = data.len();
        data[n - 1] ^= 1;
        let mut t = s.transcript.clone();
        let mut rec = c.seal(target as u64, 22, &data, 0);
        rec.direction = Direction::Received;
        t.received[*ri] = rec;
        let e = verify_full_reveal(&t, &s.cfg, &s.witness, &openings(&s)).unwrap_err();
        assert!(
            matches!(
                e,
                ProxyError::Finished(_) | ProxyError::Signature(_) | ProxyError::Malformed { .. }
            ),
            "{e}"
        );
    }
}

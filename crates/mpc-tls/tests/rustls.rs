//! Whole sessions against a real `rustls` TLS 1.2 server in one thread:
//! both certificate types, both groups, both AES-GCM suites, EMS on and
//! off. The request reaches the server byte-exact, the response reaches
//! the prover byte-exact after deferred decryption, and the verifier's
//! recording is the bytes that crossed the wire, record by record.

mod common;
use common::*;
use webproof_mpc_tls::hello::*;
use webproof_tls::Direction;
use webproof_tls::{CipherSuite, KxGroup};

const REQUEST: &[u8] = b"GET /json HTTP/1.1\r\nHost: webproof.test\r\nConnection: close\r\n\r\n";

fn response(n: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

fn check(
    kind: KeyKind,
    suite: CipherSuite,
    group: KxGroup,
    ems: bool,
    request: &[u8],
    seed: u64,
) -> Done {
    let c = certs(kind, &[NAME], false);
    let resp = response(2000);
    let (p, hello, v) = sessions(
        seed,
        prover_config(NAME, suite, group, ems, request),
        verifier_config(&c.ca_der, NAME),
    );
    let t = std::time::Instant::now();
    let d = run(p, hello, v, server(&c), &resp, Hooks::default())
        .unwrap_or_else(|e| panic!("{kind:?} {suite} {group:?} ems={ems}: {e:?}"));
    assert_eq!(d.request_at_server, request);
    assert_eq!(d.prover.response, resp);
    assert!(d.prover.close_notify);
    let rec = &d.verifier.recording;
    // The recording is the wire, record by record, both ways.
    let got = |dir: Direction| -> Vec<(u8, usize)> {
        rec.records(dir)
            .iter()
            .map(|r| (r.content_type, r.payload.len()))
            .collect()
    };
    assert_eq!(got(Direction::Sent), records(&d.client_bytes));
    assert_eq!(got(Direction::Received), records(&d.server_bytes));
    let wire: Vec<u8> = rec
        .received
        .iter()
        .flat_map(|r| [&r.header()[..], &r.payload].concat())
        .collect();
    assert_eq!(wire, d.server_bytes);
    // Client: ClientHello, ClientKeyExchange, CCS, Finished, the request.
    let sent = got(Direction::Sent);
    assert_eq!(sent[1..4], [(22, sent[1].1), (20, 1), (22, 40)]);
    assert_eq!(sent[4..], [(23, 8 + request.len() + 16)]);
    // Order: the ClientHello first, the request before any response record.
    assert_eq!(rec.order.len(), rec.sent.len() + rec.received.len());
    assert_eq!(rec.order[0], Direction::Sent);
    let req_at = rec
        .order
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == Direction::Sent)
        .nth(4)
        .unwrap()
        .0;
    assert!(rec.order[req_at..].contains(&Direction::Received));
    assert_eq!(rec.order.last(), Some(&Direction::Received));
    // Both keep the same recording.
    assert_eq!(d.prover.recording.digest(), rec.digest());
    // The prover's key-block labels are IT-MACs under the verifier's Δ.
    let delta = d.verifier.delta;
    assert_eq!(d.prover.key_labels.len(), d.verifier.key_labels.len());
    let mut n = 0;
    for (p, v) in d.prover.key_labels.iter().zip(&d.verifier.key_labels) {
        assert_eq!((p.instance, p.group), (v.instance, v.group));
        assert_eq!(p.labels.len(), v.labels.len());
        for (a, z) in p.labels.iter().zip(&v.labels) {
            assert!(*a == *z || *a == (*z ^ delta));
            n += 1;
        }
    }
    let kl = suite_params(suite).unwrap().key_len;
    assert_eq!(n, 8 * 2 * (kl + 4));
    assert_eq!(d.verifier.suite, suite);
    assert_eq!(d.verifier.group, group);
    assert_eq!(d.verifier.ems, ems);
    eprintln!(
        "{kind:?} {suite} {group:?} ems={ems}: {:.2} MB P->V, {:.2} MB V->P, {} P->V flights, {:.2} s",
        d.stats.up as f64 / 1e6,
        d.stats.down as f64 / 1e6,
        d.stats.flights_up,
        t.elapsed().as_secs_f64()
    );
    d
}

#[test]
fn ecdsa_aes128_x25519_ems() {
    check(
        KeyKind::Ecdsa,
        ECDHE_ECDSA_AES128_GCM_SHA256,
        GROUP_X25519,
        true,
        REQUEST,
        1,
    );
}

#[test]
fn ecdsa_aes128_p256_no_ems() {
    check(
        KeyKind::Ecdsa,
        ECDHE_ECDSA_AES128_GCM_SHA256,
        GROUP_P256,
        false,
        REQUEST,
        2,
    );
}

#[test]
fn ecdsa_aes256_p256_ems() {
    check(
        KeyKind::Ecdsa,
        ECDHE_ECDSA_AES256_GCM_SHA384,
        GROUP_P256,
        true,
        REQUEST,
        3,
    );
}

#[test]
fn rsa_aes128_p256_ems() {
    check(
        KeyKind::Rsa,
        ECDHE_RSA_AES128_GCM_SHA256,
        GROUP_P256,
        true,
        REQUEST,
        4,
    );
}

#[test]
fn rsa_aes256_x25519_no_ems() {
    check(
        KeyKind::Rsa,
        ECDHE_RSA_AES256_GCM_SHA384,
        GROUP_X25519,
        false,
        REQUEST,
        5,
    );
}

/// A request over one record's limit goes as several records, in order.
#[test]
fn long_request_in_several_records() {
    let mut req = b"POST /echo HTTP/1.1\r\nHost: webproof.test\r\nX-Padding: ".to_vec();
    req.extend(std::iter::repeat_n(b'p', 2100));
    req.extend(b"\r\nConnection: close\r\n\r\n");
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let resp = response(10);
    let (p, hello, v) = sessions(
        6,
        prover_config(
            NAME,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            GROUP_X25519,
            true,
            &req,
        ),
        verifier_config(&c.ca_der, NAME),
    );
    let d = run(p, hello, v, server(&c), &resp, Hooks::default()).unwrap();
    assert_eq!(d.request_at_server, req);
    assert_eq!(d.prover.response, resp);
    let sent: Vec<(u8, usize)> = d
        .verifier
        .recording
        .sent
        .iter()
        .map(|r| (r.content_type, r.payload.len()))
        .collect();
    assert_eq!(
        sent[4..],
        [(23, 8 + 2048 + 16), (23, 8 + req.len() - 2048 + 16)]
    );
}

/// The field's reference case: a 1 KB request and a 2 KB response (the
/// figures are printed: bytes each way, flights, time in this process).
#[test]
fn one_kb_request_two_kb_response() {
    let mut req = b"GET /bytes?size=2000 HTTP/1.1\r\nHost: webproof.test\r\nX-Padding: ".to_vec();
    req.resize(1024 - 4, b'p');
    req.extend(b"\r\n\r\n");
    assert_eq!(req.len(), 1024);
    for (suite, group) in [
        (ECDHE_ECDSA_AES128_GCM_SHA256, GROUP_P256),
        (ECDHE_ECDSA_AES256_GCM_SHA384, GROUP_X25519),
    ] {
        let d = check(KeyKind::Ecdsa, suite, group, true, &req, 7);
        assert_eq!(d.request_at_server, req);
    }
}

/// False Start: the request is encrypted in 2PC and goes to the server
/// right after the client Finished, while the server's ChangeCipherSpec
/// and Finished are still on their way (held back here); the server
/// accepts it, and the session cannot `Close` before the server Finished
/// has passed its check.
#[test]
fn request_goes_out_before_the_server_finished() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let (mut p, hello, mut v) = sessions(
        7,
        prover_config(
            NAME,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            GROUP_P256,
            true,
            REQUEST,
        ),
        verifier_config(&c.ca_der, NAME),
    );
    let mut srv = server(&c);
    let mut to_v = vec![hello];
    let mut to_server: Vec<u8> = Vec::new();
    let mut delivered = 0;
    for _ in 0..1000 {
        while let Some(m) = p.next_upload().unwrap() {
            to_v.push(m);
        }
        while !to_v.is_empty() {
            for m in std::mem::take(&mut to_v) {
                for r in answer(&mut v, m).unwrap() {
                    let out = p.on_verifier(r).unwrap();
                    to_v.extend(out.to_verifier);
                    to_server.extend(out.to_server);
                }
            }
        }
        assert!(!to_server.is_empty(), "the session stalled");
        let app_data = records(&to_server).iter().any(|&(ct, _)| ct == 23);
        let mut rd = &to_server[..];
        while !rd.is_empty() {
            srv.read_tls(&mut rd).unwrap();
            srv.process_new_packets().unwrap();
        }
        to_server.clear();
        if app_data {
            // Only the server's first flight reached the prover.
            assert_eq!(delivered, 1);
            // The request is out; no Close before the server's Finished.
            assert!(!p.handshake_done() && p.records_done());
            assert!(p.close().is_err());
            let mut got = Vec::new();
            let mut buf = [0u8; 512];
            while let Ok(n) = std::io::Read::read(&mut srv.reader(), &mut buf) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got, REQUEST);
            return;
        }
        let mut buf = Vec::new();
        while srv.wants_write() {
            srv.write_tls(&mut buf).unwrap();
        }
        if !buf.is_empty() && delivered == 0 {
            delivered += 1;
            let out = p.on_server_bytes(&buf).unwrap();
            to_v.extend(out.to_verifier);
            to_server.extend(out.to_server);
        }
    }
    panic!("the request never went out");
}

//! Deterministic randomised tests of the network parsers (the same inputs
//! the `fuzz/` targets get, in the normal suite): random bytes and mutations
//! of valid messages to relay frames, control messages, the record
//! recorder and the handshake parsers. Nothing may panic; what decodes must
//! re-encode consistently.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use webproof_proxy::disclosure::Range;
use webproof_proxy::handshake::{self, msg_type, Reassembler};
use webproof_proxy::protocol::{self, ProofPayload, ProverMsg, RelayFrame, VerifierMsg};
use webproof_proxy::record::{Direction, Recorder, RecorderLimits};
use webproof_proxy::zk::{RecordLayout, ZkPlan};
use webproof_proxy::Disclosure;

/// A mutation of `seed`: random bytes, flipped bytes, a truncation, an
/// insertion, or a 1/2/3/4-byte window set to an extreme length value.
fn mutate(rng: &mut StdRng, seed: &[u8]) -> Vec<u8> {
    let mut input = seed.to_vec();
    match rng.gen_range(0..6) {
        0 => {
            let n = rng.gen_range(0..200);
            input = (0..n).map(|_| rng.gen()).collect();
        }
        1 if !input.is_empty() => {
            for _ in 0..rng.gen_range(1..6) {
                let i = rng.gen_range(0..input.len());
                input[i] = rng.gen();
            }
        }
        2 if !input.is_empty() => input.truncate(rng.gen_range(0..input.len())),
        3 => {
            let i = rng.gen_range(0..=input.len());
            let extra: Vec<u8> = (0..rng.gen_range(1..20)).map(|_| rng.gen()).collect();
            input.splice(i..i, extra);
        }
        _ => {
            let w = rng.gen_range(1..=4usize);
            if input.len() >= w {
                let i = rng.gen_range(0..=input.len() - w);
                let v: u32 = [0, 1, 0x7fff_ffff, u32::MAX, 0xffff, 0xff_ffff][rng.gen_range(0..6)];
                let be = v.to_be_bytes();
                input[i..i + w].copy_from_slice(&be[4 - w..]);
            }
        }
    }
    input
}

#[test]
fn relay_frames_random_and_mutated() {
    let seeds: Vec<Vec<u8>> = [
        RelayFrame::Data(vec![23, 3, 3, 0, 1, 9]),
        RelayFrame::ServerClosed("eof".into()),
        RelayFrame::Close {
            sent: 2,
            received: 7,
        },
        RelayFrame::CloseAck(Ok([5; 32])),
        RelayFrame::CloseAck(Err(protocol::Rejection::new(
            protocol::RejectKind::Limit,
            "limit",
        ))),
    ]
    .iter()
    .map(RelayFrame::encode)
    .collect();
    let mut rng = StdRng::seed_from_u64(0x7e1a);
    for i in 0..20_000 {
        let input = mutate(&mut rng, &seeds[i % seeds.len()]);
        if let Ok(f) = RelayFrame::decode(&input) {
            let again = RelayFrame::decode(&f.encode()).unwrap();
            if !matches!(
                f,
                RelayFrame::ServerClosed(_) | RelayFrame::CloseAck(Err(_))
            ) {
                assert_eq!(f, again);
                assert_eq!(f.encode(), input);
            }
        }
    }
}

#[test]
fn control_messages_random_and_mutated() {
    let plan = ZkPlan {
        layouts: vec![RecordLayout {
            data_len: 18,
            content_type: 23,
        }],
        disclosure: Disclosure {
            sent: vec![Range::new(0, 18)],
            received: vec![Range::new(0, 4294967295)],
        },
        client_verify_data: vec![1, 2, 3],
        commitments: vec![],
        json: vec![webproof_proxy::json::JsonClaim {
            direction: Direction::Received,
            body: Range::new(10, 40),
            path: "a.0.b".into(),
            value: Range::new(20, 24),
            hidden_strings: vec![Range::new(30, 32)],
            hidden_tokens: vec![],
        }],
        sent_crlf_free: Vec::new(),
    };
    let seeds: Vec<Vec<u8>> = vec![
        protocol::encode(&ProverMsg::Hello {
            version: protocol::PROTOCOL_VERSION,
            host: "example.com".into(),
            port: 443,
            api_key: Some("k".into()),
            expected_cots: 1 << 20,
            mpc: None,
        }),
        protocol::encode(&ProverMsg::Proof {
            payload: ProofPayload::Zk {
                plan,
                handshake_secrets: None,
            },
        }),
        protocol::encode(&VerifierMsg::Accepted),
        protocol::encode(&VerifierMsg::Refused(protocol::Rejection::new(
            protocol::RejectKind::Unauthorized,
            "no",
        ))),
        protocol::encode(&VerifierMsg::Ready {
            time: 1,
            limits: RecorderLimits::default(),
        }),
    ];
    let mut rng = StdRng::seed_from_u64(0xc0de);
    for i in 0..20_000 {
        let input = mutate(&mut rng, &seeds[i % seeds.len()]);
        if let Ok(m) = protocol::decode::<ProverMsg>(&input) {
            let again: ProverMsg = protocol::decode(&protocol::encode(&m)).unwrap();
            if let (
                ProverMsg::Proof {
                    payload: ProofPayload::Zk { plan: a, .. },
                },
                ProverMsg::Proof {
                    payload: ProofPayload::Zk { plan: b, .. },
                },
            ) = (&m, &again)
            {
                assert_eq!(a, b);
                assert_eq!(
                    webproof_proxy::zk::proof_context(&[1; 32], a),
                    webproof_proxy::zk::proof_context(&[1; 32], b)
                );
            }
        }
        if let Ok(m) = protocol::decode::<VerifierMsg>(&input) {
            let _: VerifierMsg = protocol::decode(&protocol::encode(&m)).unwrap();
        }
    }
}

#[test]
fn recorder_random_and_mutated() {
    let limits = RecorderLimits {
        max_sent_bytes: 4096,
        max_recv_bytes: 1 << 16,
        max_sent_records: 8,
        max_recv_records: 64,
    };
    let mut stream = Vec::new();
    for (ct, len) in [(22u8, 40usize), (20, 1), (23, 300), (21, 2), (23, 0)] {
        stream.extend_from_slice(&[ct, 3, 3, (len >> 8) as u8, len as u8]);
        stream.extend(std::iter::repeat_n(0x5a, len));
    }
    let mut rng = StdRng::seed_from_u64(0x4ec0);
    for _ in 0..5_000 {
        let input = mutate(&mut rng, &stream);
        let mut rec = Recorder::new(limits);
        let d = if rng.gen() {
            Direction::Sent
        } else {
            Direction::Received
        };
        let mut fed = 0;
        let mut ok = true;
        while fed < input.len() {
            let n = rng.gen_range(1..=input.len() - fed);
            if rec.feed(d, &input[fed..fed + n]).is_err() {
                ok = false;
                break;
            }
            fed += n;
        }
        if ok {
            let t = rec.transcript();
            let mut again = Vec::new();
            for r in t.records(d) {
                again.extend_from_slice(&r.header());
                again.extend_from_slice(&r.payload);
            }
            assert_eq!(again.len() + rec.pending(d), input.len());
            assert_eq!(&input[..again.len()], &again[..]);
        }
    }
}

#[test]
fn handshake_parsers_random_and_mutated() {
    let mut ch = vec![3, 3];
    ch.extend_from_slice(&[9; 32]);
    ch.extend_from_slice(&[0, 0, 4, 0x13, 0x01, 0xc0, 0x2f, 1, 0]);
    let exts: Vec<u8> = [
        &[0u8, 0, 0, 14, 0, 12, 0, 0, 9][..],
        b"a.example",
        &[0, 43, 0, 3, 2, 3, 4],
        &[0, 51, 0, 8, 0, 6, 0, 0x1d, 0, 2, 7, 7],
        &[0, 23, 0, 0],
    ]
    .concat();
    ch.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    ch.extend_from_slice(&exts);
    assert!(handshake::parse_client_hello(&ch).is_ok());
    let mut sh = vec![3, 3];
    sh.extend_from_slice(&[7; 32]);
    sh.extend_from_slice(&[0, 0x13, 0x01, 0, 0, 6, 0, 43, 0, 2, 3, 4]);
    assert!(handshake::parse_server_hello(&sh).is_ok());
    let cert = [0u8, 0, 0, 9, 0, 0, 4, 0x30, 1, 2, 3, 0, 0];
    assert!(handshake::parse_certificate(&cert, true).is_ok());
    let ske = [3u8, 0, 0x1d, 2, 9, 8, 4, 3, 0, 1, 5];
    assert!(handshake::parse_server_key_exchange(&ske).is_ok());
    let seeds: Vec<(u8, Vec<u8>)> = vec![
        (msg_type::CLIENT_HELLO, ch),
        (msg_type::SERVER_HELLO, sh),
        (msg_type::CERTIFICATE, cert.to_vec()),
        (msg_type::SERVER_KEY_EXCHANGE, ske.to_vec()),
        (msg_type::CERTIFICATE_VERIFY, vec![4, 3, 0, 2, 1, 1]),
        (msg_type::CLIENT_KEY_EXCHANGE, vec![2, 1, 1]),
    ];
    let mut rng = StdRng::seed_from_u64(0x4a5d);
    for i in 0..20_000 {
        let (typ, seed) = &seeds[i % seeds.len()];
        let body = mutate(&mut rng, seed);
        let _ = handshake::parse_client_hello(&body);
        let _ = handshake::parse_server_hello(&body);
        let _ = handshake::parse_certificate(&body, true);
        let _ = handshake::parse_certificate(&body, false);
        let _ = handshake::parse_certificate_verify(&body);
        if let Ok(s) = handshake::parse_server_key_exchange(&body) {
            assert!(body.starts_with(&s.params));
            assert!(s.params.ends_with(&s.public));
        }
        let _ = handshake::parse_client_key_exchange(&body);
        // The same body as a handshake message, reassembled from random
        // fragments behind a (possibly mutated) header.
        let mut msg = vec![*typ];
        msg.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        msg.extend_from_slice(&body);
        let msg = if rng.gen_range(0..4) == 0 {
            mutate(&mut rng, &msg)
        } else {
            msg
        };
        let mut r = Reassembler::default();
        let mut pos = 0;
        'feed: while pos < msg.len() {
            let n = rng.gen_range(1..=msg.len() - pos);
            if r.push(&msg[pos..pos + n]).is_err() {
                break;
            }
            pos += n;
            loop {
                match r.next_message() {
                    Ok(Some(m)) => assert_eq!(m.typ, m.bytes[0]),
                    Ok(None) => break,
                    Err(_) => break 'feed,
                }
            }
        }
    }
}

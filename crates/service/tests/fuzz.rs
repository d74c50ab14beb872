//! Short randomized fuzzing of what a prover can make the service parse:
//! control messages, relay frames, frame headers, and WebSocket input
//! through the byte-stream adapter. Random and mutated inputs must give a
//! value or an error, never a panic or a hang. Seeds are fixed so a failure
//! reproduces; `WEBPROOF_FUZZ_ITERS` runs longer.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use webproof_net::transport::{ws_config, WsStream};
use webproof_proxy::protocol::{
    decode, ProverMsg, RejectKind, Rejection, RelayFrame, VerifierMsg, PROTOCOL_VERSION,
};
use webproof_proxy::RecorderLimits;

fn iters(default: usize) -> usize {
    std::env::var("WEBPROOF_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Flip, insert, delete, truncate or splice bytes of `seed`.
fn mutate(rng: &mut StdRng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..rng.gen_range(1..=4) {
        match rng.gen_range(0..6) {
            0 if !v.is_empty() => {
                let i = rng.gen_range(0..v.len());
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            1 => {
                let i = rng.gen_range(0..=v.len());
                v.insert(i, rng.gen());
            }
            2 if !v.is_empty() => {
                v.remove(rng.gen_range(0..v.len()));
            }
            3 => v.truncate(rng.gen_range(0..=v.len())),
            4 if !v.is_empty() => {
                // Interesting values: quotes, braces, huge numbers, NUL.
                let picks: [&[u8]; 6] = [b"\"", b"{", b"]", b"99999999999999999999", b"\0", b"-1"];
                let p = picks[rng.gen_range(0..picks.len())];
                let i = rng.gen_range(0..v.len());
                v.splice(i..i, p.iter().copied());
            }
            _ => {
                let i = rng.gen_range(0..=v.len());
                let j = rng.gen_range(i..=v.len());
                v.drain(i..j);
            }
        }
    }
    v
}

fn random_bytes(rng: &mut StdRng, max: usize) -> Vec<u8> {
    let n = rng.gen_range(0..=max);
    (0..n).map(|_| rng.gen()).collect()
}

fn seeds() -> Vec<Vec<u8>> {
    use webproof_proxy::protocol::encode;
    vec![
        encode(&ProverMsg::Hello {
            version: PROTOCOL_VERSION,
            host: "server.test".into(),
            port: 443,
            api_key: Some("key".into()),
            expected_cots: 1_000_000,
            mpc: None,
        }),
        encode(&VerifierMsg::Accepted),
        encode(&VerifierMsg::Ready {
            time: 1_700_000_000,
            limits: RecorderLimits::default(),
        }),
        encode(&VerifierMsg::Refused(Rejection::new(
            RejectKind::Unavailable,
            "at capacity",
        ))),
        encode(&VerifierMsg::Verdict {
            result: Err(Rejection::new(RejectKind::Protocol, "rejected")),
            attestation: None,
            session_id: Some(webproof_proxy::protocol::SessionId([7; 16])),
        }),
        br#"{"proof":{"payload":{"full_reveal":{"witness":{}}},"openings":[{"direction":"sent","start":0,"end":5}]}}"#.to_vec(),
    ]
}

#[test]
fn control_message_decoders_never_panic() {
    let mut rng = StdRng::seed_from_u64(0x5e41ce);
    let seeds = seeds();
    for i in 0..iters(4000) {
        let input = if i % 4 == 0 {
            random_bytes(&mut rng, 300)
        } else {
            let s = &seeds[rng.gen_range(0..seeds.len())];
            mutate(&mut rng, s)
        };
        let _ = decode::<ProverMsg>(&input);
        let _ = decode::<VerifierMsg>(&input);
    }
    // The seeds themselves decode (the mutations start from valid input).
    assert!(decode::<ProverMsg>(&seeds[0]).is_ok());
    assert!(decode::<VerifierMsg>(&seeds[2]).is_ok());
}

#[test]
fn relay_frame_decoder_never_panics_and_round_trips() {
    let mut rng = StdRng::seed_from_u64(0xf4a3e);
    let frames = [
        RelayFrame::Data(b"\x16\x03\x01\x00\x05hello".to_vec()),
        RelayFrame::ServerClosed("server closed".into()),
        RelayFrame::Close {
            sent: 2,
            received: 7,
        },
        RelayFrame::CloseAck(Ok([7; 32])),
        RelayFrame::CloseAck(Err(Rejection::new(RejectKind::Limit, "limit"))),
    ];
    for f in &frames {
        assert_eq!(&RelayFrame::decode(&f.encode()).unwrap(), f);
    }
    for i in 0..iters(4000) {
        let input = if i % 3 == 0 {
            random_bytes(&mut rng, 200)
        } else {
            {
                let f = frames[rng.gen_range(0..frames.len())].encode();
                mutate(&mut rng, &f)
            }
        };
        if let Ok(f) = RelayFrame::decode(&input) {
            // Whatever decodes re-encodes to the same bytes (no ambiguity),
            // except that reasons for humans are read as lossy UTF-8.
            if std::str::from_utf8(&input[1..]).is_ok() || matches!(input[0], 0 | 2 | 3) {
                assert_eq!(f.encode(), input);
            }
        }
    }
    // Oversized data frames are refused.
    let mut big = vec![0u8];
    big.resize(webproof_proxy::protocol::MAX_RELAY_DATA + 2, 0);
    assert!(RelayFrame::decode(&big).is_err());
}

#[tokio::test]
async fn frame_reader_never_panics_or_over_allocates() {
    let mut rng = StdRng::seed_from_u64(0xf7a3e);
    for i in 0..iters(3000) {
        let mut input = if i % 2 == 0 {
            random_bytes(&mut rng, 64)
        } else {
            let payload = random_bytes(&mut rng, 40);
            mutate(
                &mut rng,
                &[&(payload.len() as u32).to_le_bytes()[..], &payload].concat(),
            )
        };
        // Sometimes announce a huge frame: refused from the header alone.
        if i % 7 == 0 && input.len() >= 4 {
            input[3] = 0xff;
        }
        let mut r: &[u8] = &input;
        match webproof_net::frame::read_frame(&mut r, 1024).await {
            Ok(Some(p)) => assert!(p.len() <= 1024),
            Ok(None) => assert!(input.is_empty()),
            Err(_) => {}
        }
    }
}

/// The raw bytes a client-role WebSocket writes for these messages.
async fn client_bytes(msgs: Vec<Message>) -> Vec<u8> {
    use futures::SinkExt;
    let (a, mut b) = tokio::io::duplex(1 << 20);
    let mut ws = WebSocketStream::from_raw_socket(a, Role::Client, None).await;
    for m in msgs {
        ws.send(m).await.unwrap();
    }
    drop(ws);
    let mut out = Vec::new();
    b.read_to_end(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn websocket_adapter_never_panics_or_hangs() {
    let mut rng = StdRng::seed_from_u64(0x3e650c);
    let hello = seeds()[0].clone();
    let valid = client_bytes(vec![
        Message::binary([&(hello.len() as u32).to_le_bytes()[..], &hello].concat()),
        Message::Ping(vec![1, 2, 3].into()),
        Message::binary(vec![9; 300]),
        Message::Close(None),
    ])
    .await;
    for i in 0..iters(1500) {
        let input = if i % 3 == 0 {
            random_bytes(&mut rng, 400)
        } else {
            mutate(&mut rng, &valid)
        };
        let (mut peer, ours) = tokio::io::duplex(1 << 16);
        peer.write_all(&input).await.unwrap();
        // Then the peer is gone: the adapter must reach an end, whatever
        // the input, without panicking.
        drop(peer);
        let mut s = WsStream::new(
            WebSocketStream::from_raw_socket(ours, Role::Server, Some(ws_config())).await,
        );
        let r = tokio::time::timeout(Duration::from_secs(5), async {
            let mut got = Vec::new();
            let mut b = [0u8; 512];
            loop {
                match s.read(&mut b).await {
                    Ok(0) | Err(_) => return got.len(),
                    Ok(n) => got.extend_from_slice(&b[..n]),
                }
            }
        })
        .await;
        let n = r.expect("the adapter ends when its input does");
        assert!(n <= input.len());
    }
    // The unmutated stream reads back the hello frame and the data.
    let (mut peer, ours) = tokio::io::duplex(1 << 16);
    peer.write_all(&valid).await.unwrap();
    let mut s = WsStream::new(
        WebSocketStream::from_raw_socket(ours, Role::Server, Some(ws_config())).await,
    );
    let mut got = Vec::new();
    s.read_to_end(&mut got).await.unwrap();
    assert_eq!(got.len(), 4 + hello.len() + 300);
}

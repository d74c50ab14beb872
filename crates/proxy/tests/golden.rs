//! Golden vectors of the session's control messages (JSON on the wire):
//! the hello in both modes, admission, refusal with every reason code, a
//! rejected verdict, and every relay frame, pinned in
//! `tests/golden/messages.txt` with the protocol version they belong to.
//! A change to any of them without a new `PROTOCOL_VERSION` fails here; an
//! intended one is blessed with `WEBPROOF_BLESS=1` (`webproof_core::golden`).

use webproof_proxy::protocol::{
    encode, MpcHello, ProverMsg, RejectKind, Rejection, RelayFrame, SessionId, VerifierMsg,
    PROTOCOL_VERSION,
};
use webproof_proxy::RecorderLimits;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn control_messages_are_pinned() {
    let mut out = format!("# protocol {PROTOCOL_VERSION}: name, then the encoding\n");
    // JSON messages as their text, binary relay frames in hex.
    let mut line = |name: &str, bytes: Vec<u8>| {
        let shown = if name.starts_with("relay.") {
            hex(&bytes)
        } else {
            String::from_utf8(bytes).expect("JSON")
        };
        out += &format!("{name} {shown}\n");
    };
    line(
        "hello.proxy",
        encode(&ProverMsg::Hello {
            version: PROTOCOL_VERSION,
            host: "bank.example".into(),
            port: 443,
            api_key: Some("k-123".into()),
            expected_cots: 1_234_567,
            mpc: None,
        }),
    );
    line(
        "hello.mpc",
        encode(&ProverMsg::Hello {
            version: PROTOCOL_VERSION,
            host: "10.0.0.7".into(),
            port: 8443,
            api_key: None,
            expected_cots: 99,
            mpc: Some(MpcHello { request_len: 1024 }),
        }),
    );
    line("accepted", encode(&VerifierMsg::Accepted));
    line(
        "ready",
        encode(&VerifierMsg::Ready {
            time: 1_796_561_314,
            limits: RecorderLimits::default(),
        }),
    );
    use RejectKind::*;
    for kind in [
        Version,
        SessionSize,
        Unauthorized,
        ServerName,
        Forbidden,
        Unreachable,
        Unavailable,
        Timeout,
        Malformed,
        Unsupported,
        Limit,
        Incomplete,
        Certificate,
        Signature,
        Decrypt,
        Tag,
        Finished,
        SecretMismatch,
        HandshakeAlert,
        Opening,
        Undelivered,
        Attestation,
        Verdict,
        Protocol,
    ] {
        line(
            &format!("refused.{kind:?}"),
            encode(&VerifierMsg::Refused(Rejection::new(kind, "why"))),
        );
    }
    line(
        "verdict.rejected",
        encode(&VerifierMsg::Verdict {
            result: Err(Rejection::new(RejectKind::Tag, "record 3")),
            attestation: None,
            session_id: Some(SessionId([0xab; 16])),
        }),
    );
    line(
        "relay.data",
        RelayFrame::Data(vec![0x17, 3, 3, 0, 1, 0xff]).encode(),
    );
    line(
        "relay.server_closed",
        RelayFrame::ServerClosed("eof".into()).encode(),
    );
    line(
        "relay.close",
        RelayFrame::Close {
            sent: 2,
            received: 70_000,
        }
        .encode(),
    );
    line(
        "relay.close_ack",
        RelayFrame::CloseAck(Ok([7; 32])).encode(),
    );
    line(
        "relay.close_ack.refused",
        RelayFrame::CloseAck(Err(Rejection::new(RejectKind::Limit, "too long"))).encode(),
    );
    // Every frame decodes to itself.
    for f in [
        RelayFrame::Data(vec![1, 2]),
        RelayFrame::ServerClosed("x".into()),
        RelayFrame::Close {
            sent: 1,
            received: 2,
        },
        RelayFrame::CloseAck(Ok([9; 32])),
    ] {
        assert_eq!(RelayFrame::decode(&f.encode()).unwrap(), f);
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/messages.txt");
    webproof_core::golden::check(&path, &out);
}

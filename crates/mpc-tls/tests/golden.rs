//! Golden vectors of MPC mode's messages: one of every kind of both
//! parties, encoded, pinned in `tests/golden/messages.txt` with the
//! protocol version they belong to, and each decoded back to itself. A
//! change to the encoding without a new `PROTOCOL_VERSION` fails here; an
//! intended one is blessed with `WEBPROOF_BLESS=1` (`webproof_core::golden`).

use webproof_mpc_tls::hello::Terms;
use webproof_mpc_tls::{ProverMsg, VerifierMsg};
use webproof_proxy::protocol::PROTOCOL_VERSION;
use webproof_tls::{CipherSuite, KxGroup};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `n` bytes counting up from `from`: distinct fields stay distinct.
fn bytes(from: u8, n: usize) -> Vec<u8> {
    (0..n).map(|i| from.wrapping_add(i as u8)).collect()
}

fn prover_messages() -> Vec<ProverMsg> {
    vec![
        ProverMsg::Hello {
            commit_p256: [1; 32],
            commit_x25519: [2; 32],
            request_lens: vec![1024, 37],
            // 0xc02f and 0x001d on the wire.
            terms: Terms {
                suite: CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
                group: KxGroup::X25519,
                ems: true,
            },
            dual_ot: [3; 32],
        },
        ProverMsg::DualLabels(bytes(4, 48)),
        ProverMsg::DualTables {
            id: 1,
            chunk: bytes(5, 40),
        },
        ProverMsg::DualEnd {
            id: 1,
            end: bytes(6, 33),
        },
        ProverMsg::ToServer(bytes(0x16, 9)),
        ProverMsg::FromServer(bytes(0x17, 7)),
        ProverMsg::ServerClosed,
        ProverMsg::KeyOpen {
            public: bytes(7, 65),
            blind: [8; 32],
            flips: bytes(9, 5),
        },
        ProverMsg::EctfCorrection(bytes(10, 32)),
        ProverMsg::KdfFlips {
            step: 2,
            flips: bytes(11, 6),
        },
        ProverMsg::KdfLabels {
            step: 3,
            labels: bytes(12, 32),
        },
        ProverMsg::RecCiphertext {
            id: 1,
            ct: bytes(13, 20),
            offsets: bytes(14, 32),
            labels: bytes(15, 16),
        },
        ProverMsg::RecSent { id: 1 },
        ProverMsg::Close {
            sent: 2,
            received: 300,
        },
        ProverMsg::Abort("the server's flight".into()),
    ]
}

fn verifier_messages() -> Vec<VerifierMsg> {
    vec![
        VerifierMsg::Setup {
            client_random: [20; 32],
            q_p256: bytes(21, 65),
            q_x25519: [22; 32],
            dual_ot: bytes(23, 64),
        },
        VerifierMsg::EctfAnswer(bytes(24, 48)),
        VerifierMsg::Tables {
            circuit: 4,
            chunk: bytes(25, 40),
        },
        VerifierMsg::Decoding {
            circuit: 4,
            decoding: bytes(26, 12),
            early: bytes(27, 16),
        },
        VerifierMsg::KdfInputs {
            step: 1,
            msg: bytes(28, 32),
        },
        VerifierMsg::KdfAdvance {
            step: 5,
            msg: bytes(29, 16),
        },
        VerifierMsg::RecPowers {
            id: 1,
            msg: bytes(30, 32),
        },
        VerifierMsg::RecTagShare {
            id: 1,
            tag: [31; 16],
            corrections: bytes(32, 16),
            check: bytes(33, 32),
        },
        VerifierMsg::CloseAck {
            server_key: bytes(34, 16),
            server_iv: bytes(35, 4),
            client_key: bytes(36, 16),
            client_iv: bytes(37, 4),
        },
        VerifierMsg::Abort("a table out of order".into()),
    ]
}

#[test]
fn every_message_is_pinned_and_decodes_to_itself() {
    let mut out = format!("# protocol {PROTOCOL_VERSION}: party.kind, then the encoding in hex\n");
    for m in prover_messages() {
        let b = m.encode();
        assert_eq!(ProverMsg::decode(&b).unwrap(), m, "{}", m.name());
        out += &format!("prover.{} {}\n", m.name(), hex(&b));
    }
    for m in verifier_messages() {
        let b = m.encode();
        assert_eq!(VerifierMsg::decode(&b).unwrap(), m, "{}", m.name());
        out += &format!("verifier.{} {}\n", m.name(), hex(&b));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/messages.txt");
    webproof_core::golden::check(&path, &out);
}

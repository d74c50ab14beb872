//! The proof context binds the transcript digest and the plan: it changes
//! with either, and it survives the plan's trip through the wire encoding.

use webproof_proxy::disclosure::Range;
use webproof_proxy::json::JsonClaim;
use webproof_proxy::protocol;
use webproof_proxy::zk::{proof_context, RecordLayout, ZkPlan};
use webproof_proxy::Direction;
use webproof_proxy::Disclosure;

fn plan() -> ZkPlan {
    ZkPlan {
        layouts: vec![
            RecordLayout {
                data_len: 18,
                content_type: 23,
            },
            RecordLayout {
                data_len: 1500,
                content_type: 23,
            },
        ],
        disclosure: Disclosure {
            sent: vec![Range::new(0, 18)],
            received: vec![Range::new(0, 15)],
        },
        client_verify_data: vec![],
        commitments: vec![],
        json: vec![JsonClaim {
            direction: Direction::Received,
            body: Range::new(0, 1500),
            path: "a".into(),
            value: Range::new(5, 9),
            hidden_strings: vec![],
            hidden_tokens: vec![],
        }],
        sent_crlf_free: Vec::new(),
    }
}

#[test]
fn context_binds_transcript_and_plan() {
    let digest = [9u8; 32];
    let base = proof_context(&digest, &plan());
    assert_eq!(base, proof_context(&digest, &plan()));
    let mut other_digest = digest;
    other_digest[31] ^= 1;
    assert_ne!(base, proof_context(&other_digest, &plan()));
    let mut p = plan();
    p.layouts[1].data_len -= 1;
    assert_ne!(base, proof_context(&digest, &p));
    let mut p = plan();
    p.disclosure.received[0].end = 16;
    assert_ne!(base, proof_context(&digest, &p));
    let mut p = plan();
    p.client_verify_data = vec![0; 12];
    assert_ne!(base, proof_context(&digest, &p));
    let mut p = plan();
    p.json[0].path = "b".into();
    assert_ne!(base, proof_context(&digest, &p));
}

/// The verifier hashes the plan it decoded; the prover the plan it encoded.
#[test]
fn context_is_the_same_after_the_wire() {
    let digest = [3u8; 32];
    let p = plan();
    let wire = protocol::encode(&p);
    let decoded: ZkPlan = protocol::decode(&wire).unwrap();
    assert_eq!(proof_context(&digest, &p), proof_context(&digest, &decoded));
}

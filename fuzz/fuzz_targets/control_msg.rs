//! Control messages (`protocol::decode`) of both parties, and what the
//! verifier computes from a prover's plan before the proof.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webproof_proxy::protocol::{self, ProofPayload, ProverMsg, VerifierMsg};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = protocol::decode::<ProverMsg>(data) {
        // Whatever decodes re-encodes and decodes again.
        let again: ProverMsg = protocol::decode(&protocol::encode(&m)).expect("round trip");
        if let (
            ProverMsg::Proof {
                payload: ProofPayload::Zk { plan, .. },
                ..
            },
            ProverMsg::Proof {
                payload: ProofPayload::Zk { plan: plan2, .. },
                ..
            },
        ) = (&m, &again)
        {
            assert_eq!(plan, plan2);
            // The proof context is the same on both sides of the wire.
            assert_eq!(
                webproof_proxy::zk::proof_context(&[0; 32], plan),
                webproof_proxy::zk::proof_context(&[0; 32], plan2)
            );
        }
    }
    if let Ok(m) = protocol::decode::<VerifierMsg>(data) {
        let _: VerifierMsg = protocol::decode(&protocol::encode(&m)).expect("round trip");
    }
});

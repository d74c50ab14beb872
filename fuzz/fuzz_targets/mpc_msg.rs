//! MPC mode's messages between prover and verifier (`webproof_mpc_tls`'s
//! `ProverMsg`, `VerifierMsg`) and the prover's claim after the session
//! (`ResponseClaim`): never a panic, and every encoding is canonical (what
//! decodes re-encodes to the input), so no two byte strings stand for one
//! message.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webproof_mpc_tls::{ProverMsg, ResponseClaim, VerifierMsg};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = ProverMsg::decode(data) {
        assert_eq!(m.encode(), data);
    }
    if let Ok(m) = VerifierMsg::decode(data) {
        assert_eq!(m.encode(), data);
    }
    if let Ok(c) = ResponseClaim::decode(data) {
        assert_eq!(c.encode(), data);
    }
});

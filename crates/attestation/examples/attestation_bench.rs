//! Prints the costs of commitments, attestations and presentations for the
//! benchmark sizes: leaves and SHA-256 compressions the ZK proof must cover,
//! presentation sizes, and signing/verification times.
//!
//! `cargo run --release -p webproof-attestation --example attestation_bench`

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use webproof_attestation::commit::leaf_compressions;
use webproof_attestation::{
    verify_presentation, Attestation, AttestationFields, CipherSuite, CommitPlan, CommitmentSeed,
    Completeness, Direction, OrderSpan, PresentationBuilder, Scheme, SessionFacts, SigningKey,
    Transcript, TranscriptCommitment,
};

fn main() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    println!(
        "{:>6} {:>7} {:>9} {:>6} {:>6} {:>9} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "sent",
        "recv",
        "scheme",
        "leaves",
        "sha_c",
        "commit_us",
        "sign_us",
        "bin_B",
        "json_B",
        "build_us",
        "verify_us"
    );
    for (sent_len, recv_len) in [(1024, 2048), (1024, 51_200)] {
        let sent: Vec<u8> = (0..sent_len).map(|_| rng.gen()).collect();
        let recv: Vec<u8> = (0..recv_len).map(|_| rng.gen()).collect();
        let t = Transcript::new(sent, recv);
        // Everything revealed except one byte, as in the field's benchmark.
        let hidden = recv_len / 2;
        let plan = CommitPlan::new().range(Direction::Received, hidden..hidden + 1);
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            let key = SigningKey::generate(scheme, &mut rng);
            let start = Instant::now();
            let c =
                TranscriptCommitment::new(&t, &plan, CommitmentSeed::generate(&mut rng)).unwrap();
            let commit_us = start.elapsed().as_micros();
            let compressions: usize = c.leaves().iter().map(|l| leaf_compressions(l.len())).sum();
            let start = Instant::now();
            let att = Attestation::sign(
                AttestationFields::for_commitment(
                    "example.com",
                    0,
                    CipherSuite::TLS13_AES_128_GCM_SHA256,
                    &c,
                    [0; 32],
                    SessionFacts {
                        mode: webproof_attestation::ProofMode::Proxy,
                        server_port: 443,
                        server_close_notify: Some(true),
                        server_records_after_cut: Some(0),
                        response_complete: Completeness::Complete,
                        order: OrderSpan::sent_then_received(c.sent_len(), c.received_len()),
                        sent_crlf_free: Vec::new(),
                    },
                ),
                &key,
            )
            .unwrap();
            let sign_us = start.elapsed().as_micros();
            let start = Instant::now();
            let mut b = PresentationBuilder::new(&att, &t, &c).unwrap();
            b.reveal_all(Direction::Sent);
            b.reveal(Direction::Received, 0..hidden).unwrap();
            b.reveal(Direction::Received, hidden + 1..recv_len).unwrap();
            let p = b.build();
            let build_us = start.elapsed().as_micros();
            let bin = p.to_bytes();
            let json = p.to_json();
            let trusted = [key.verifying_key()];
            let start = Instant::now();
            let v = verify_presentation(&bin, &trusted).unwrap();
            let verify_us = start.elapsed().as_micros();
            assert_eq!(v.received.revealed_len() as usize, recv_len - 1);
            println!(
                "{:>6} {:>7} {:>9} {:>6} {:>6} {:>9} {:>8} {:>8} {:>9} {:>9} {:>9}",
                sent_len,
                recv_len,
                scheme.name(),
                c.leaf_count(),
                compressions,
                commit_us,
                sign_us,
                bin.len(),
                json.len(),
                build_us,
                verify_us
            );
        }
    }
}

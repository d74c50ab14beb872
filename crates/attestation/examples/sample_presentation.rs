//! Makes a sample attestation and presentation for trying `webproof verify`
//! without a live session: an HTTP exchange with the cookie value and one
//! JSON field hidden.
//!
//! ```text
//! webproof keygen -o /tmp/v.key
//! cargo run -p webproof-attestation --example sample_presentation -- /tmp/v.key /tmp/p.json
//! webproof verify /tmp/p.json --trusted-key /tmp/v.key.pub
//! ```
//! A third argument also writes the binary encoding there.

use std::path::Path;

use rand_core::OsRng;
use webproof_attestation::{
    keyfile, Attestation, AttestationFields, CipherSuite, CommitPlan, CommitmentSeed, Completeness,
    Direction, OrderSpan, PresentationBuilder, ServerIdentity, SessionFacts, Transcript,
    TranscriptCommitment,
};

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .expect("needle present")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return Err("usage: sample_presentation KEY_FILE OUT.json [OUT.bin]".into());
    }
    let key = keyfile::read_signing_key(Path::new(&args[0]))?;

    let request = b"GET /api/me HTTP/1.1\r\nHost: api.example.com\r\nCookie: sid=9f2c1e77\r\n\r\n";
    let response = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 44\r\n\r\n{\"user\":\"alice\",\"age\":31,\"ssn\":\"123-45-6789\"}";
    let transcript = Transcript::new(request.to_vec(), response.to_vec());

    // Commit the secrets as their own leaves so they can stay hidden.
    let sid = find(request, b"9f2c1e77");
    let ssn = find(response, b"123-45-6789");
    let plan = CommitPlan::new()
        .range(Direction::Sent, sid..sid + 8)
        .range(Direction::Received, ssn..ssn + 11);
    let commitment =
        TranscriptCommitment::new(&transcript, &plan, CommitmentSeed::generate(&mut OsRng))?;

    let identity = ServerIdentity::new(vec![b"sample leaf certificate (DER)".to_vec()])?;
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let fields = AttestationFields::for_commitment(
        "api.example.com",
        time,
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        &commitment,
        identity.hash(),
        SessionFacts {
            mode: webproof_attestation::ProofMode::Proxy,
            server_port: 443,
            server_close_notify: Some(true),
            server_records_after_cut: Some(0),
            response_complete: Completeness::Complete,
            order: OrderSpan::sent_then_received(commitment.sent_len(), commitment.received_len()),
            sent_crlf_free: Vec::new(),
        },
    );
    let attestation = Attestation::sign(fields, &key)?;

    let mut b = PresentationBuilder::new(&attestation, &transcript, &commitment)?;
    b.reveal(Direction::Sent, 0..sid)?
        .reveal(Direction::Sent, sid + 8..request.len())?
        .reveal(Direction::Received, 0..ssn)?
        .reveal(Direction::Received, ssn + 11..response.len())?
        .server_identity(identity)?;
    let presentation = b.build();
    std::fs::write(&args[1], presentation.to_json())?;
    if let Some(bin) = args.get(2) {
        std::fs::write(bin, presentation.to_bytes())?;
    }
    println!(
        "wrote {} ({} leaves committed)",
        args[1],
        commitment.leaf_count()
    );
    Ok(())
}

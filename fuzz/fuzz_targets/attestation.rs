//! Attestation and presentation decoding (binary and JSON): never a panic,
//! and the binary encodings are canonical (what decodes re-encodes to the
//! input).
#![no_main]
use libfuzzer_sys::fuzz_target;
use webproof_attestation::{Attestation, Presentation, SignedAttestation};

fuzz_target!(|data: &[u8]| {
    if let Ok(a) = SignedAttestation::from_bytes(data) {
        assert_eq!(a.to_bytes(), data);
    }
    if let Ok(a) = Attestation::from_bytes(data) {
        assert_eq!(a.to_bytes(), data);
    }
    if let Ok(p) = Presentation::from_bytes(data) {
        assert_eq!(p.to_bytes(), data);
        assert_eq!(Presentation::from_json(&p.to_json()).expect("JSON round trip"), p);
        // No trusted key: verification fails, but must not panic.
        assert!(p.verify(&[]).is_err());
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(a) = SignedAttestation::from_json(text) {
            assert_eq!(SignedAttestation::from_bytes(&a.to_bytes()).expect("binary"), a);
        }
    }
    if let Ok(p) = Presentation::decode(data) {
        assert_eq!(Presentation::from_bytes(&p.to_bytes()).expect("binary"), p);
        assert!(p.verify(&[]).is_err());
    }
});

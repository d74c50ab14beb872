//! Any bytes: attestation decoders never panic and are canonical.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webproof_attestation::{Attestation, SignedAttestation};

fuzz_target!(|data: &[u8]| {
    if let Ok(a) = SignedAttestation::from_bytes(data) {
        assert_eq!(a.to_bytes(), data);
        assert_eq!(SignedAttestation::from_json(&a.to_json()).as_ref(), Ok(&a));
    }
    if let Ok(a) = Attestation::from_bytes(data) {
        assert_eq!(a.to_bytes(), data);
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = SignedAttestation::from_json(s);
    }
});

//! Any bytes: decoding (binary or JSON) and verification never panic, and
//! whatever decodes re-encodes to a form that decodes to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webproof_attestation::{Presentation, Scheme, SigningKey};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Presentation::decode(data) {
        let bin = p.to_bytes();
        assert_eq!(Presentation::from_bytes(&bin).as_ref(), Ok(&p));
        assert_eq!(Presentation::from_json(&p.to_json()).as_ref(), Ok(&p));
        if data.starts_with(b"WPPR") {
            // Canonical: the binary form is unique.
            assert_eq!(bin, data);
        }
        let key = SigningKey::from_secret_bytes(Scheme::Ed25519, &[1; 32]).unwrap();
        let _ = p.verify(&[key.verifying_key()]);
    }
});

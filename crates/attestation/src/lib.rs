//! webproof-attestation (work in progress).

//! Proxy mode's runs: the verifier relays the prover's TLS connection to
//! the server and records it; the prover proves the records in zero
//! knowledge. The prover's run ([`prover`]) and the verifier's
//! ([`verifier`]), over `webproof_proxy::session`'s decisions.

pub mod prover;
pub mod verifier;

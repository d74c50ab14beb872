//! One module per area; each owns its arguments and its `run`.
pub mod attestation;
pub mod attested;
pub mod bench;
pub mod harness;
pub mod health;
pub mod proxy;
pub mod relay;
pub mod serve;

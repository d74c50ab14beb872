//! TLS.

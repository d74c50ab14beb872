//! webproof-proxy (work in progress).

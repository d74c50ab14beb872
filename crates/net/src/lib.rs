//! webproof-net (work in progress).

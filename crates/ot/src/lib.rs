//! webproof-ot (work in progress).

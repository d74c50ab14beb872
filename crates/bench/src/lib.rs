//! webproof-bench (work in progress).

//! webproof-zk (work in progress).

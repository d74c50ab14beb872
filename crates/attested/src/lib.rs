//! webproof-attested (work in progress).

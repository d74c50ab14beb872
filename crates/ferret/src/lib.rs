//! webproof-ferret (work in progress).

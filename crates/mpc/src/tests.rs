//! Unit tests driving both parties in one process.

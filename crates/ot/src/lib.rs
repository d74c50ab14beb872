//! Oblivious transfer for webproof: maliciously secure base OT and the
//! correlated-OT (COT) extension that bootstraps the silent COT generator.
//!
//! - [`base`]: Masny–Rindal endemic OT on Ristretto (random OTs, one
//!   message each way).
//! - [`ggm`]: all-but-one OT from base OTs with a GGM tree.
//! - [`softspoken`]: SoftSpokenOT COT extension with a global `Delta`,
//!   implementing [`webproof_core::cot::RandomCotSender`] and
//!   [`webproof_core::cot::RandomCotReceiver`].
//! - [`derand`]: turn random COTs into COTs on chosen receiver bits.
//!
//! The crate does no I/O of its own: every protocol talks through the
//! [`webproof_core::Channel`] it is given and takes its randomness from the
//! caller, so it runs unchanged in WebAssembly.
#![forbid(unsafe_code)]

pub mod base;
pub mod derand;
pub mod ggm;
pub mod softspoken;
pub mod streams;
pub mod transpose;

pub use softspoken::{SoftSpokenReceiver, SoftSpokenSender, DEFAULT_K};

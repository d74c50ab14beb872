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
//! - `testing` (feature `testing`): seeded COTs in memory for other
//!   crates' tests and examples.
//! - [`streams`], [`transpose`]: the extension's PRG expansion and bit-matrix
//!   transposition.
//!
//! Typical use (the COT sender is the ZK verifier, the receiver the prover):
//! `SoftSpokenSender::setup(&mut channel, &mut rng).await?` on one side,
//! `SoftSpokenReceiver::setup(..)` on the other, then `extend(channel, n, &mut
//! out)` from the [`webproof_core::cot`] traits on both, with equal `n`. A
//! failed call leaves `out` as it was; after any error the session must be
//! dropped (the sender refuses to continue after a failed check).
//!
//! Figures (`cargo run --release -p webproof-ot --example ot_bench`): 128
//! base OTs ~10-15 ms CPU per party, 8.2 KB; SoftSpokenOT k = 8: 15 bits per
//! COT, ~5 M COT/s per party's core; k = 4: 31 bits, ~18 M COT/s.
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
#[cfg(feature = "testing")]
pub mod testing;
pub mod transpose;

pub use softspoken::{SoftSpokenReceiver, SoftSpokenReceiverSetup, SoftSpokenSender, DEFAULT_K};

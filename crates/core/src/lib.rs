//! Shared building blocks of webproof's protocol cores.
//!
//! This crate owns the types that every proof and OT protocol speaks:
//! - [`Block`]: a 128-bit value, used both as a GF(2^128) field element and
//!   as an OT/VOLE key or MAC;
//! - [`Channel`]: a framed, byte-counting message channel over any
//!   `futures` `AsyncRead + AsyncWrite` transport (TCP, in-memory, WebSocket);
//! - [`Prg`]: the ChaCha12 pseudo-random generator for protocol expansion;
//! - [`cot`]: the correlated-OT interfaces that the OT crate implements and the
//!   ZK engine consumes;
//! - [`pause`]: points where long computations let a driver that shares
//!   their thread (a browser worker) run its I/O.
//!
//! It does no I/O of its own, spawns no threads and builds for
//! `wasm32-unknown-unknown`.
#![deny(unsafe_code)]

pub mod block;
pub mod chacha;
pub mod channel;
pub mod cot;
pub mod error;
#[cfg(feature = "golden")]
pub mod golden;
pub mod kernels;
pub mod lanes;
pub mod memory;
pub mod pause;
pub mod powers;
pub mod prg;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub mod simd128;
pub mod subfield;

pub use block::Block;
pub use channel::{Channel, ChannelError, ChannelStats};
pub use error::{Error, Result};
pub use memory::{memory_duplex, MemoryIo};
pub use prg::Prg;

/// The transport bound every protocol in webproof is generic over.
pub trait Io: futures::AsyncRead + futures::AsyncWrite + Unpin + Send {}
impl<T: futures::AsyncRead + futures::AsyncWrite + Unpin + Send> Io for T {}

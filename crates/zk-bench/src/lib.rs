//! The ZK engine's micro-benchmark, `webproof bench zk` ([`zkbench`]): the
//! COT source and QuickSilver on AES-128 and SHA-256 circuits, each party on
//! its own thread, over memory or loopback TCP. It lives beside the engine
//! (`webproof-zk`) but apart from it, so the engine stays a no-I/O core.
//!
//! It also holds the system probes every benchmark shares ([`sys`]); see
//! that module for why they live here.

pub mod sys;
pub mod zkbench;

//! webproof's benchmark harness.
//!
//! The harness owns everything around a benchmark run and nothing of the
//! protocol: it builds an emulated network ([`topology`], [`emu`]), checks it
//! ([`probe`]), runs the server fixture, the verifier and the prover as
//! separate processes in their namespaces ([`runner`], [`proc`]), and turns
//! the samples into CSV ([`metrics`]), charts ([`plot`]) and Markdown
//! reports ([`report`]). Configs are data (TOML, [`config`]); pictures are
//! made from results only.
//!
//! Its own small worker roles — a plain TLS client and an HTTPS fixture —
//! live in [`plain`].

pub mod config;
pub mod emu;
pub mod netns;
pub mod probe;
pub mod topology;

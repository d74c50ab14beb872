//! Attested-TLS workloads (issue 5).
//!
//! - [`dcap`]: offline Intel DCAP quote verification with `dcap-qvl`
//!   against caller-supplied collateral, with report-data checks;
//! - [`tdx`]: TDX quote generation through Linux configfs-tsm;
//! - [`workload`]: the `bench dcap` workloads (verify, tdx, fs) and the
//!   thread-per-worker concurrency runner with its table, CSV and chart;
//! - [`nested`]: TLS inside TLS against single TLS over loopback, with
//!   per-side CPU time, wire byte counts, link emulation, statistics that
//!   refuse to report unstable figures, and an attested inner certificate;
//! - [`stats`]: summaries shared by both benches; their charts are the
//!   the benchmark reports' (`webproof_bench_report::plot::lines`).
//!
//! This crate is a native benchmark layer: it uses threads, sockets and
//! clocks, and is not part of the WebAssembly protocol cores.

#![deny(unsafe_code)]

pub mod dcap;
pub mod nested;
pub mod stats;
pub mod tdx;
pub mod workload;

//! webproof's benchmark results, from CSV to what people read: the samples
//! and refused runs as data and their reading ([`metrics`]), aggregation,
//! tables and Markdown reports with comparisons ([`report`]), and SVG charts
//! ([`plot`]). It reads results only: no runs, no network, no tokio, so a
//! report can be made anywhere from files alone.

pub mod metrics;
pub mod plot;
pub mod report;

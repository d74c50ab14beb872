//! Structured logs: a `tracing` dispatcher writing text or JSON lines to
//! stderr. Each session's events carry its span (`session{id, peer,
//! transport}`), so one session's lines can be picked out of many.
//!
//! The dispatcher is attached to the service's futures
//! (`tracing::instrument::WithSubscriber`), not installed globally: the
//! binary may already have a global subscriber for its other commands.

use crate::config::{LogConfig, LogFormat};
use crate::error::{Result, ServiceError};
use tracing_subscriber::EnvFilter;

/// The variable that overrides `log.filter`.
pub const LOG_ENV: &str = "WEBPROOF_LOG";

/// A dispatcher for `cfg` writing to stderr (the `WEBPROOF_LOG` variable
/// overrides the filter).
pub fn dispatch(cfg: &LogConfig) -> Result<tracing::Dispatch> {
    let filter = match std::env::var(LOG_ENV) {
        Ok(f) => EnvFilter::try_new(&f)
            .map_err(|e| ServiceError::invalid(LOG_ENV, format!("{f:?}: {e}")))?,
        Err(_) => filter(cfg)?,
    };
    build(cfg.format, filter, std::io::stderr)
}

/// A dispatcher for exactly `cfg` (no environment override), writing where
/// `writer` says (tests capture the lines).
pub fn dispatch_to<W>(cfg: &LogConfig, writer: W) -> Result<tracing::Dispatch>
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    build(cfg.format, filter(cfg)?, writer)
}

fn filter(cfg: &LogConfig) -> Result<EnvFilter> {
    EnvFilter::try_new(&cfg.filter)
        .map_err(|e| ServiceError::invalid("log.filter", format!("{:?}: {e}", cfg.filter)))
}

fn build<W>(format: LogFormat, filter: EnvFilter, writer: W) -> Result<tracing::Dispatch>
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_target(false);
    Ok(match format {
        LogFormat::Text => tracing::Dispatch::new(builder.finish()),
        LogFormat::Json => tracing::Dispatch::new(
            builder
                .json()
                .with_current_span(true)
                .with_span_list(false)
                .finish(),
        ),
    })
}

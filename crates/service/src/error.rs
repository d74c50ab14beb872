//! Errors of the service: configuration and start-up. Session failures are
//! `webproof_net::NetError`s, counted in the metrics, never fatal.

use std::path::PathBuf;

/// Why the service could not be configured or started.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The configuration file is not valid TOML or has an unknown or
    /// ill-typed field (the message names the field and its line).
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The TOML error, with line and column.
        message: String,
    },
    /// A field has a value the service cannot use.
    #[error("config field `{field}`: {message}")]
    Invalid {
        /// Dotted path of the field (`limits.max_sessions`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A file the configuration names could not be read.
    #[error("config field `{field}`: reading {}: {source}", path.display())]
    File {
        /// Dotted path of the field naming the file.
        field: String,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Binding a listener failed.
    #[error("binding {what} on {addr}: {source}")]
    Bind {
        /// Which listener.
        what: &'static str,
        /// The address.
        addr: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// No listener is configured.
    #[error(
        "no listener configured (set `listen`, `listen_tls`, `listen_http` or `listen_https`)"
    )]
    NoListener,
}

impl ServiceError {
    pub(crate) fn invalid(field: &str, message: impl Into<String>) -> Self {
        ServiceError::Invalid {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// Result with [`ServiceError`].
pub type Result<T, E = ServiceError> = std::result::Result<T, E>;

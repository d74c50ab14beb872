//! The two ways a session reaches the server.

use serde::{Deserialize, Serialize};

/// How the session reaches the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The verifier relays the prover's TLS connection and records it;
    /// the prover proves the records in zero knowledge.
    #[default]
    Proxy,
    /// The prover connects to the server; the verifier takes part in the
    /// TLS client through two-party computation and never relays
    /// (TLS 1.2).
    Mpc,
}

impl Mode {
    /// Every mode this crate's verifier runs (a service publishes them).
    pub const ALL: [Mode; 2] = [Mode::Proxy, Mode::Mpc];

    /// The name on the command line and in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Proxy => "proxy",
            Mode::Mpc => "mpc",
        }
    }
}

impl core::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> core::result::Result<Self, String> {
        match s {
            "proxy" => Ok(Mode::Proxy),
            "mpc" => Ok(Mode::Mpc),
            _ => Err(format!("unknown mode {s:?} (proxy, mpc)")),
        }
    }
}

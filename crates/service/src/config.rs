//! The service configuration: `verifier.toml`.
//!
//! [`FileConfig`] is the file as written (every field optional, unknown
//! fields rejected with their name and line); [`FileConfig::build`] checks
//! it, reads the files it names and gives the [`ServiceConfig`] the service
//! runs with. Relative paths are taken from the config file's directory.
//! Command-line flags override fields by editing the [`FileConfig`] before
//! `build`. A complete, commented example is `verifier.example.toml` in
//! this crate:
//!
//! ```toml
//! listen = "0.0.0.0:7047"              # plain TCP
//! listen_http = "0.0.0.0:7080"         # /health, /metrics, WebSocket /v1/session
//! listen_https = "0.0.0.0:7444"        # the same over TLS (wss://), [listen_tls] cert
//! attestation_key = "verifier.key"     # or the WEBPROOF_SIGNING_KEY variable
//! retired_attestation_keys = ["ed25519:..."]  # signed with before a rotation
//!
//! [listen_tls]                         # TLS with the service's own certificate
//! addr = "0.0.0.0:7443"                # optional: raw TLS for tls:// provers
//! cert = "cert.pem"                    # chain, leaf first
//! key = "key.pem"
//!
//! [roots]                              # which server certificates are trusted
//! webpki = true
//! ca_certs = ["extra-ca.pem"]
//!
//! [resolve]                            # names pinned to an address
//! "server.test" = "192.0.2.10"
//!
//! [policy]                             # server addresses (default: public only)
//! allow = ["127.0.0.0/8"]
//! deny = ["198.51.100.0/24"]
//!
//! [limits]                             # the defaults
//! max_sessions = 32
//! max_sent_bytes = 65536
//! max_recv_bytes = 17825792
//! max_sent_records = 256
//! max_recv_records = 32768
//! max_message_bytes = 16777216
//! max_mpc_request_bytes = 4096
//! session_timeout_secs = 900
//! connect_timeout_secs = 10
//! relay_timeout_secs = 60
//! idle_timeout_secs = 15
//! proof_timeout_secs = 600
//! shutdown_grace_secs = 30
//! drain_delay_secs = 0                 # readiness fails this long before the listeners close
//!
//! [api_keys]                           # any of the three; none: no key needed
//! digests = ["<hex of webproof_net::verifier::api_key_digest>"]
//! file = "api-keys.txt"                # one key per line, `#` comments
//! env = "WEBPROOF_API_KEYS"            # a variable with comma-separated keys
//!
//! [log]
//! format = "text"                      # or "json"
//! filter = "info"                      # tracing filter; WEBPROOF_LOG overrides
//!
//! [results]                            # verified sessions: SQLite or PostgreSQL
//! path = "results.sqlite"              # one replica: an SQLite file, or
//! # database_url = "postgres://webproof@db/webproof"  # a fleet sharing PostgreSQL,
//! # database_url_env = "WEBPROOF_DATABASE_URL"       # or the URL in a variable
//! retention = "7d"                     # s, m, h or d
//! [results.api_keys]                   # who reads /v1/sessions/{id}; as [api_keys]
//! env = "WEBPROOF_RESULTS_API_KEYS"
//!
//! [[webhook]]                          # one table per endpoint; needs [results]
//! url = "https://app.example/webproof" # http:// only to loopback or with allow_http
//! secret_env = "WEBHOOK_SECRET"        # or secret_file; at least 16 bytes
//! max_attempts = 8
//! timeout_secs = 10
//! backoff_secs = 1
//! max_backoff_secs = 600
//! ```

use crate::error::{Result, ServiceError};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use webproof_attestation::SigningKey;
use webproof_net::{IpNet, ServerPolicy, VerifierConfig};
use webproof_proxy::{RecorderLimits, RootStore};

/// The configuration file as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Plain TCP listener address.
    pub listen: Option<String>,
    /// TLS listener.
    pub listen_tls: Option<TlsListenConfig>,
    /// HTTP listener: `/health`, `/metrics`, WebSocket `/v1/session`.
    pub listen_http: Option<String>,
    /// The same over TLS (`wss://`), with the `[listen_tls]` certificate.
    pub listen_https: Option<String>,
    /// Trusted roots for server certificates.
    #[serde(default)]
    pub roots: RootsConfig,
    /// Host names connected to a fixed address instead of resolving them.
    #[serde(default)]
    pub resolve: BTreeMap<String, IpAddr>,
    /// Which server addresses may be contacted.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// Limits and timeouts.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// API keys provers must present.
    #[serde(default)]
    pub api_keys: ApiKeysConfig,
    /// Signing key file for attestations (else `WEBPROOF_SIGNING_KEY`, else none).
    pub attestation_key: Option<PathBuf>,
    /// Public keys this service signed attestations with before its current
    /// one (`ed25519:HEX`, `secp256k1:HEX`): `/v1/info` lists them as
    /// retired, so applications trust old attestations through a rotation
    /// while new ones carry the new key's id.
    #[serde(default)]
    pub retired_attestation_keys: Vec<String>,
    /// Logging.
    #[serde(default)]
    pub log: LogConfig,
    /// Stored results: where, for how long, who may read them.
    pub results: Option<ResultsConfig>,
    /// Webhooks told of every verified session (`[[webhook]]`, one table
    /// per endpoint).
    #[serde(default)]
    pub webhook: Vec<WebhookConfig>,
    /// Directory relative paths are resolved against (the config file's).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// `[listen_tls]`: the service's certificate, and where raw TLS is served.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsListenConfig {
    /// Listen address for TLS provers (`tls://`); none: the certificate
    /// only serves `listen_https`.
    pub addr: Option<String>,
    /// Certificate chain (PEM), leaf first.
    pub cert: PathBuf,
    /// Private key (PEM: PKCS#8, SEC1 or PKCS#1).
    pub key: PathBuf,
}

/// `[roots]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootsConfig {
    /// Trust the built-in webpki roots (default true).
    #[serde(default = "yes")]
    pub webpki: bool,
    /// Extra root certificates (PEM files).
    #[serde(default)]
    pub ca_certs: Vec<PathBuf>,
}

fn yes() -> bool {
    true
}

impl Default for RootsConfig {
    fn default() -> Self {
        RootsConfig {
            webpki: true,
            ca_certs: Vec::new(),
        }
    }
}

/// `[policy]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Networks allowed although special-purpose (loopback, private...).
    #[serde(default, deserialize_with = "nets")]
    pub allow: Vec<IpNet>,
    /// Networks denied although public.
    #[serde(default, deserialize_with = "nets")]
    pub deny: Vec<IpNet>,
}

/// `[limits]`: every limit of a session and of the service.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Sessions served at once; more are refused with a message.
    pub max_sessions: usize,
    /// Bytes the prover's client may send to the server in one session.
    pub max_sent_bytes: usize,
    /// Bytes the server may send in one session.
    pub max_recv_bytes: usize,
    /// Records the client may send.
    pub max_sent_records: usize,
    /// Records the server may send.
    pub max_recv_records: usize,
    /// Largest control message from a prover.
    pub max_message_bytes: usize,
    /// MPC mode: the largest request a hello may ask this verifier to
    /// garble for (the tables it garbles before the prover touches any
    /// server grow with it), 1 to 16384.
    pub max_mpc_request_bytes: usize,
    /// Longest a whole session may last.
    #[serde(deserialize_with = "secs")]
    pub session_timeout_secs: Duration,
    /// Time for the prover's hello, and for connecting to the server.
    #[serde(deserialize_with = "secs")]
    pub connect_timeout_secs: Duration,
    /// Longest the relay phase may last.
    #[serde(deserialize_with = "secs")]
    pub relay_timeout_secs: Duration,
    /// Longest the relay may sit idle.
    #[serde(deserialize_with = "secs")]
    pub idle_timeout_secs: Duration,
    /// Time for the proof setup and for the proof.
    #[serde(deserialize_with = "secs")]
    pub proof_timeout_secs: Duration,
    /// On SIGINT/SIGTERM, how long running sessions may go on.
    #[serde(deserialize_with = "secs")]
    pub shutdown_grace_secs: Duration,
    /// On SIGINT/SIGTERM, how long `/ready` fails while the service still
    /// accepts sessions, before its listeners close: a load balancer that
    /// checks readiness every few seconds stops sending it provers first,
    /// so none is refused at the door (0: close at once).
    #[serde(deserialize_with = "secs")]
    pub drain_delay_secs: Duration,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        let v = VerifierConfig::default();
        LimitsConfig {
            max_sessions: 32,
            max_sent_bytes: v.limits.max_sent_bytes,
            max_recv_bytes: v.limits.max_recv_bytes,
            max_sent_records: v.limits.max_sent_records,
            max_recv_records: v.limits.max_recv_records,
            max_message_bytes: v.max_message,
            max_mpc_request_bytes: v.max_mpc_request,
            // The proof of a 16 MiB response with hidden bytes takes minutes.
            session_timeout_secs: Duration::from_secs(900),
            connect_timeout_secs: v.connect_timeout,
            relay_timeout_secs: v.relay_timeout,
            idle_timeout_secs: v.idle_timeout,
            proof_timeout_secs: v.proof_timeout,
            shutdown_grace_secs: Duration::from_secs(30),
            drain_delay_secs: Duration::ZERO,
        }
    }
}

/// `[api_keys]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKeysConfig {
    /// Hex SHA-256 digests (`webproof_net::verifier::api_key_digest`).
    #[serde(default)]
    pub digests: Vec<String>,
    /// A file with one key per line (`#` comments, blank lines ignored).
    pub file: Option<PathBuf>,
    /// An environment variable holding comma-separated keys.
    pub env: Option<String>,
}

/// `[results]`: verified sessions kept in SQLite or PostgreSQL; exactly
/// one of `path`, `database_url` and `database_url_env`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsConfig {
    /// The SQLite file (created if missing): one replica.
    pub path: Option<PathBuf>,
    /// A PostgreSQL URL (`postgres://user:password@host:port/db`): replicas
    /// sharing it form a fleet (one outbox, leases between them).
    pub database_url: Option<String>,
    /// The variable holding the PostgreSQL URL (a secret, kept out of the
    /// file), e.g. `WEBPROOF_DATABASE_URL`.
    pub database_url_env: Option<String>,
    /// How long results are kept: `<n>s`, `m`, `h` or `d` (default `7d`).
    #[serde(default = "default_retention")]
    pub retention: String,
    /// Keys an application's backend presents (`Authorization: Bearer`)
    /// to read results at `/v1/sessions/{id}`. Not the provers' keys: those
    /// ship with provers (in browsers too), and must not open everyone's
    /// results. None: `/v1/sessions` answers 401 to everyone.
    #[serde(default)]
    pub api_keys: ApiKeysConfig,
}

impl Default for ResultsConfig {
    /// No backend yet, the default retention, no results API keys.
    fn default() -> Self {
        ResultsConfig {
            path: None,
            database_url: None,
            database_url_env: None,
            retention: default_retention(),
            api_keys: ApiKeysConfig::default(),
        }
    }
}

/// A PostgreSQL URL, checked for its form (the server is reached at start).
fn check_database_url(url: &str) -> Result<String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(ServiceError::invalid(
            "results.database_url",
            format!(
                "{}: expected postgres://user:password@host:port/database",
                crate::results::postgres::redact(url)
            ),
        ));
    }
    url.parse::<tokio_postgres::Config>().map_err(|e| {
        ServiceError::invalid(
            "results.database_url",
            format!("{}: {e}", crate::results::postgres::redact(url)),
        )
    })?;
    Ok(url.to_string())
}

fn default_retention() -> String {
    "7d".into()
}

/// `[[webhook]]`: one endpoint told of every verified session.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// `https://...`; `http://` only to a loopback host or with `allow_http`.
    pub url: String,
    /// The variable holding the signing secret (or `secret_file`).
    pub secret_env: Option<String>,
    /// A file holding the signing secret (trailing whitespace dropped).
    pub secret_file: Option<PathBuf>,
    /// Allow `http://` to a non-loopback host: the body (the verified
    /// data) then crosses the network in clear; the signature stops
    /// forgery, not reading. For a receiver on a private network only.
    #[serde(default)]
    pub allow_http: bool,
    /// Attempts before a delivery is marked failed (default 8).
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// Time for one attempt (default 10 s).
    #[serde(default = "default_attempt_timeout", deserialize_with = "secs")]
    pub timeout_secs: Duration,
    /// Wait before the first retry, doubled at each (default 1 s).
    #[serde(default = "default_backoff", deserialize_with = "secs")]
    pub backoff_secs: Duration,
    /// Longest wait between attempts (default 600 s).
    #[serde(default = "default_max_backoff", deserialize_with = "secs")]
    pub max_backoff_secs: Duration,
}

fn default_attempts() -> u32 {
    8
}
fn default_attempt_timeout() -> Duration {
    Duration::from_secs(10)
}
fn default_backoff() -> Duration {
    Duration::from_secs(1)
}
fn default_max_backoff() -> Duration {
    Duration::from_secs(600)
}

/// `[log]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// `text` or `json`.
    pub format: LogFormat,
    /// A `tracing` filter (`info`, `webproof_service=debug`...); the
    /// `WEBPROOF_LOG` variable overrides it.
    pub filter: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: LogFormat::Text,
            filter: "info".into(),
        }
    }
}

/// How logs are written (to stderr).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(format!("log format {s:?}: expected text or json")),
        }
    }
}

fn nets<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<IpNet>, D::Error> {
    let v = Vec::<String>::deserialize(d)?;
    v.iter()
        .map(|s| s.parse().map_err(serde::de::Error::custom))
        .collect()
}

/// Seconds as an integer or a float (`0.5`).
fn secs<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Duration, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = Duration;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a positive number of seconds")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Duration, E> {
            self.visit_f64(v as f64)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Duration, E> {
            self.visit_f64(v as f64)
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<Duration, E> {
            if !(v > 0.0 && v <= 86_400.0 * 7.0) {
                return Err(E::custom(format!(
                    "{v} seconds: expected more than 0 and at most a week"
                )));
            }
            Ok(Duration::from_secs_f64(v))
        }
    }
    d.deserialize_any(V)
}

/// What the service runs with: [`FileConfig::build`]'s result.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The per-session verifier configuration.
    pub verifier: VerifierConfig,
    /// Plain TCP listener.
    pub listen: Option<String>,
    /// The service's TLS configuration (certificate), if any.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// TLS listener.
    pub listen_tls: Option<String>,
    /// HTTP/WebSocket listener.
    pub listen_http: Option<String>,
    /// HTTPS/secure WebSocket listener.
    pub listen_https: Option<String>,
    /// Sessions served at once.
    pub max_sessions: usize,
    /// Longest a whole session may last.
    pub session_timeout: Duration,
    /// How long running sessions may go on after a shutdown signal.
    pub shutdown_grace: Duration,
    /// How long readiness fails before the listeners close at a shutdown
    /// signal.
    pub drain_delay: Duration,
    /// Logging.
    pub log: LogConfig,
    /// The key attestations are signed with, if any (never logged: its
    /// `Debug` shows the scheme and key id only).
    pub attestation_key: Option<Arc<SigningKey>>,
    /// Keys attestations were signed with before the current one
    /// (published, never used to sign).
    pub retired_attestation_keys: Vec<webproof_attestation::VerifyingKey>,
    /// Stored results and webhooks, if configured.
    pub results: Option<ResultsSettings>,
}

/// `[results]` and `[[webhook]]`, checked.
#[derive(Clone)]
pub struct ResultsSettings {
    /// The database: an SQLite file or a PostgreSQL URL.
    pub backend: crate::results::Backend,
    /// How long results are kept.
    pub retention: Duration,
    /// SHA-256 digests of the keys that may read results.
    pub api_key_digests: Vec<[u8; 32]>,
    /// The webhook endpoints.
    pub webhooks: Vec<Webhook>,
}

impl std::fmt::Debug for ResultsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultsSettings")
            .field("backend", &self.backend)
            .field("retention", &self.retention)
            .field("api_keys", &self.api_key_digests.len())
            .field("webhooks", &self.webhooks)
            .finish()
    }
}

/// One webhook endpoint, checked.
#[derive(Clone)]
pub struct Webhook {
    /// Where deliveries are posted.
    pub url: hyper::Uri,
    /// The HMAC-SHA256 key of the signatures.
    pub secret: Arc<Vec<u8>>,
    /// Attempts before giving up.
    pub max_attempts: u32,
    /// Time for one attempt.
    pub timeout: Duration,
    /// First retry's wait, doubled at each.
    pub backoff: Duration,
    /// Longest wait between attempts.
    pub max_backoff: Duration,
}

impl std::fmt::Debug for Webhook {
    // Never the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("url", &self.url)
            .field("max_attempts", &self.max_attempts)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// `7d`, `12h`, `30m`, `45s`.
fn parse_retention(s: &str) -> Option<Duration> {
    let s = s.trim();
    let unit = match s.chars().last()? {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    let n: u64 = s[..s.len() - 1].parse().ok()?;
    if n == 0 {
        return None;
    }
    Some(Duration::from_secs(n.checked_mul(unit)?))
}

impl FileConfig {
    /// Read and parse `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| ServiceError::Parse {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Self::parse(&text, &path.display().to_string(), base)
    }

    /// Parse configuration text; `origin` names it in errors, `base_dir`
    /// anchors relative paths.
    pub fn parse(text: &str, origin: &str, base_dir: PathBuf) -> Result<Self> {
        let mut c: FileConfig = toml::from_str(text).map_err(|e| ServiceError::Parse {
            path: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        c.base_dir = base_dir;
        Ok(c)
    }

    fn path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    fn read(&self, field: &str, p: &Path) -> Result<Vec<u8>> {
        let path = self.path(p);
        std::fs::read(&path).map_err(|source| ServiceError::File {
            field: field.into(),
            path,
            source,
        })
    }

    /// Check the values, read the files named, and build the runtime configuration.
    pub fn build(&self) -> Result<ServiceConfig> {
        let l = &self.limits;
        let positive = [
            ("limits.max_sessions", l.max_sessions),
            ("limits.max_sent_bytes", l.max_sent_bytes),
            ("limits.max_recv_bytes", l.max_recv_bytes),
            ("limits.max_sent_records", l.max_sent_records),
            ("limits.max_recv_records", l.max_recv_records),
        ];
        for (field, v) in positive {
            if v == 0 {
                return Err(ServiceError::invalid(field, "must be at least 1"));
            }
        }
        if !(1024..=64 << 20).contains(&l.max_message_bytes) {
            return Err(ServiceError::invalid(
                "limits.max_message_bytes",
                format!("{} bytes: expected 1024 to 64 MiB", l.max_message_bytes),
            ));
        }
        if !(1..=webproof_net::mpc::MAX_REQUEST_LIMIT).contains(&l.max_mpc_request_bytes) {
            return Err(ServiceError::invalid(
                "limits.max_mpc_request_bytes",
                format!(
                    "{} bytes: expected 1 to {}",
                    l.max_mpc_request_bytes,
                    webproof_net::mpc::MAX_REQUEST_LIMIT
                ),
            ));
        }
        if l.max_sessions > 100_000 {
            return Err(ServiceError::invalid(
                "limits.max_sessions",
                "at most 100000",
            ));
        }

        let mut roots = if self.roots.webpki {
            RootStore::webpki_roots()
        } else {
            RootStore::empty()
        };
        for p in &self.roots.ca_certs {
            let pem = self.read("roots.ca_certs", p)?;
            roots.add_pem(&pem).map_err(|e| {
                ServiceError::invalid("roots.ca_certs", format!("{}: {e}", p.display()))
            })?;
        }
        if !self.roots.webpki && self.roots.ca_certs.is_empty() {
            return Err(ServiceError::invalid(
                "roots",
                "webpki = false and no ca_certs: no server could be trusted",
            ));
        }

        let mut verifier = VerifierConfig {
            roots,
            resolve: self
                .resolve
                .iter()
                .map(|(k, v)| (k.trim_end_matches('.').to_ascii_lowercase(), *v))
                .collect(),
            limits: RecorderLimits {
                max_sent_bytes: l.max_sent_bytes,
                max_recv_bytes: l.max_recv_bytes,
                max_sent_records: l.max_sent_records,
                max_recv_records: l.max_recv_records,
            },
            connect_timeout: l.connect_timeout_secs,
            relay_timeout: l.relay_timeout_secs,
            idle_timeout: l.idle_timeout_secs,
            proof_timeout: l.proof_timeout_secs,
            server_policy: ServerPolicy::public_only()
                .allow(self.policy.allow.iter().copied())
                .deny(self.policy.deny.iter().copied()),
            api_key_digests: Vec::new(),
            max_message: l.max_message_bytes,
            attestation_key: None,
            max_mpc_request: l.max_mpc_request_bytes,
        };
        self.api_keys(&mut verifier)?;

        let tls = match &self.listen_tls {
            None => None,
            Some(t) => {
                let cert = self.read("listen_tls.cert", &t.cert)?;
                let key = self.read("listen_tls.key", &t.key)?;
                Some(crate::tls::server_config(&cert, &key)?)
            }
        };
        if self.listen_https.is_some() && tls.is_none() {
            return Err(ServiceError::invalid(
                "listen_https",
                "needs a certificate: set [listen_tls] cert and key",
            ));
        }
        let listen_tls = self.listen_tls.as_ref().and_then(|t| t.addr.clone());
        if self.listen.is_none()
            && listen_tls.is_none()
            && self.listen_http.is_none()
            && self.listen_https.is_none()
        {
            return Err(ServiceError::NoListener);
        }

        let attestation_key = match &self.attestation_key {
            Some(p) => Some(Arc::new(
                webproof_attestation::keyfile::load_signing_key(Some(&self.path(p)))
                    .map_err(|e| ServiceError::invalid("attestation_key", e.to_string()))?,
            )),
            None => match webproof_attestation::keyfile::load_signing_key(None) {
                Ok(k) => Some(Arc::new(k)),
                Err(webproof_attestation::keyfile::KeyFileError::Missing) => None,
                Err(e) => {
                    return Err(ServiceError::invalid(
                        webproof_attestation::keyfile::SIGNING_KEY_ENV,
                        e.to_string(),
                    ))
                }
            },
        };

        verifier.attestation_key = attestation_key.clone();
        let mut retired_attestation_keys = Vec::new();
        for (i, spec) in self.retired_attestation_keys.iter().enumerate() {
            // Never echo the entry: it may be a secret key pasted by mistake.
            let k: webproof_attestation::VerifyingKey = spec.trim().parse().map_err(|e| {
                ServiceError::invalid(
                    "retired_attestation_keys",
                    format!("entry {} is not a public key (scheme:HEX): {e}", i + 1),
                )
            })?;
            if attestation_key
                .as_ref()
                .is_some_and(|a| a.key_id() == k.key_id())
            {
                return Err(ServiceError::invalid(
                    "retired_attestation_keys",
                    format!("entry {} is the current attestation key", i + 1),
                ));
            }
            retired_attestation_keys.push(k);
        }
        let results = self.results_settings()?;
        Ok(ServiceConfig {
            verifier,
            listen: self.listen.clone(),
            tls,
            listen_tls,
            listen_http: self.listen_http.clone(),
            listen_https: self.listen_https.clone(),
            max_sessions: l.max_sessions,
            session_timeout: l.session_timeout_secs,
            shutdown_grace: l.shutdown_grace_secs,
            drain_delay: l.drain_delay_secs,
            log: self.log.clone(),
            attestation_key,
            retired_attestation_keys,
            results,
        })
    }

    fn results_settings(&self) -> Result<Option<ResultsSettings>> {
        let Some(r) = &self.results else {
            if !self.webhook.is_empty() {
                return Err(ServiceError::invalid(
                    "webhook",
                    "needs [results] path: the webhook outbox lives in the results database",
                ));
            }
            return Ok(None);
        };
        let retention = parse_retention(&r.retention).ok_or_else(|| {
            ServiceError::invalid(
                "results.retention",
                format!(
                    "{:?}: expected a positive number and a unit, s, m, h or d (\"7d\")",
                    r.retention
                ),
            )
        })?;
        let mut keys = VerifierConfig::default();
        self.api_keys_into(&r.api_keys, "results.api_keys", &mut keys)?;
        let mut webhooks = Vec::new();
        for (i, w) in self.webhook.iter().enumerate() {
            let field = format!("webhook[{i}]");
            let hook = self.webhook_settings(&field, w)?;
            // Outbox rows name their endpoint by URL.
            if webhooks.iter().any(|h: &Webhook| h.url == hook.url) {
                return Err(ServiceError::invalid(
                    &format!("{field}.url"),
                    format!("{:?} is listed twice: one [[webhook]] per endpoint", w.url),
                ));
            }
            webhooks.push(hook);
        }
        use crate::results::Backend;
        let backend = match (&r.path, &r.database_url, &r.database_url_env) {
            (Some(p), None, None) => Backend::Sqlite(self.path(p)),
            (None, Some(url), None) => Backend::Postgres(check_database_url(url)?),
            (None, None, Some(var)) => {
                let url = std::env::var(var).map_err(|_| {
                    ServiceError::invalid(
                        "results.database_url_env",
                        format!("variable {var} is not set"),
                    )
                })?;
                Backend::Postgres(check_database_url(url.trim())?)
            }
            _ => {
                return Err(ServiceError::invalid(
                    "results",
                    "set exactly one of path (SQLite), database_url and database_url_env \
                     (PostgreSQL)",
                ))
            }
        };
        Ok(Some(ResultsSettings {
            backend,
            retention,
            api_key_digests: keys.api_key_digests,
            webhooks,
        }))
    }

    fn webhook_settings(&self, field: &str, w: &WebhookConfig) -> Result<Webhook> {
        let f = |name: &str| format!("{field}.{name}");
        let url: hyper::Uri = w
            .url
            .parse()
            .map_err(|e| ServiceError::invalid(&f("url"), format!("{:?}: {e}", w.url)))?;
        let host = url
            .host()
            .ok_or_else(|| ServiceError::invalid(&f("url"), format!("{:?}: no host", w.url)))?;
        match url.scheme_str() {
            Some("https") => {}
            Some("http") if w.allow_http || is_loopback(host) => {}
            Some("http") => {
                return Err(ServiceError::invalid(
                    &f("url"),
                    format!(
                        "{:?}: plain http would send verified data in clear; use https, \
                         or set allow_http = true for a receiver on a private network",
                        w.url
                    ),
                ))
            }
            _ => {
                return Err(ServiceError::invalid(
                    &f("url"),
                    format!("{:?}: expected an https:// URL", w.url),
                ))
            }
        }
        let secret = match (&w.secret_env, &w.secret_file) {
            (Some(var), None) => std::env::var(var)
                .map_err(|_| {
                    ServiceError::invalid(&f("secret_env"), format!("variable {var} is not set"))
                })?
                .into_bytes(),
            (None, Some(p)) => {
                let mut b = self.read(&f("secret_file"), p)?;
                while b.last().is_some_and(|c| c.is_ascii_whitespace()) {
                    b.pop();
                }
                b
            }
            _ => {
                return Err(ServiceError::invalid(
                    field,
                    "set one of secret_env and secret_file",
                ))
            }
        };
        if secret.len() < 16 {
            return Err(ServiceError::invalid(
                field,
                "the secret is shorter than 16 bytes: use a long random one",
            ));
        }
        if !(1..=100).contains(&w.max_attempts) {
            return Err(ServiceError::invalid(
                &f("max_attempts"),
                "expected 1 to 100",
            ));
        }
        Ok(Webhook {
            url,
            secret: Arc::new(secret),
            max_attempts: w.max_attempts,
            timeout: w.timeout_secs,
            backoff: w.backoff_secs,
            max_backoff: w.max_backoff_secs.max(w.backoff_secs),
        })
    }

    fn api_keys(&self, v: &mut VerifierConfig) -> Result<()> {
        self.api_keys_into(&self.api_keys, "api_keys", v)
    }

    /// Read an `[api_keys]`-shaped table named `name` into `v`'s digests.
    fn api_keys_into(&self, k: &ApiKeysConfig, name: &str, v: &mut VerifierConfig) -> Result<()> {
        for (i, d) in k.digests.iter().enumerate() {
            let field = format!("{name}.digests[{i}]");
            let bytes = hex_32(d.trim())
                .ok_or_else(|| ServiceError::invalid(&field, "expected 64 hex digits"))?;
            v.api_key_digests.push(bytes);
        }
        if let Some(p) = &k.file {
            let field = format!("{name}.file");
            let text = String::from_utf8(self.read(&field, p)?)
                .map_err(|_| ServiceError::invalid(&field, "not UTF-8"))?;
            let before = v.api_key_digests.len();
            for line in text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
            {
                v.require_api_key(line);
            }
            if v.api_key_digests.len() == before {
                return Err(ServiceError::invalid(
                    &field,
                    format!("{} holds no API key", p.display()),
                ));
            }
        }
        if let Some(var) = &k.env {
            let field = format!("{name}.env");
            let text = std::env::var(var)
                .map_err(|_| ServiceError::invalid(&field, format!("variable {var} is not set")))?;
            let before = v.api_key_digests.len();
            for key in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                v.require_api_key(key);
            }
            if v.api_key_digests.len() == before {
                return Err(ServiceError::invalid(
                    &field,
                    format!("variable {var} holds no API key"),
                ));
            }
        }
        Ok(())
    }
}

/// `localhost` or a loopback address: traffic that never leaves the host.
fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn hex_32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<FileConfig> {
        FileConfig::parse(s, "test.toml", PathBuf::from("."))
    }

    #[test]
    fn the_example_file_parses_and_names_every_field() {
        let text = include_str!("../verifier.example.toml");
        let c = parse(text).unwrap();
        assert_eq!(c.listen.as_deref(), Some("127.0.0.1:7047"));
        assert_eq!(c.limits.max_sessions, 32);
        assert_eq!(c.limits.max_mpc_request_bytes, 4096);
        assert_eq!(c.log.format, LogFormat::Text);
    }

    /// The example's commented `[results]` and `[[webhook]]` tables,
    /// uncommented, are valid configuration.
    #[test]
    fn the_example_results_and_webhook_tables_parse() {
        let text = include_str!("../verifier.example.toml");
        let start = text.find("# [results]").expect("a [results] example");
        let mut tables = String::new();
        for line in text[start..].lines() {
            let Some(l) = line.strip_prefix("# ") else {
                continue;
            };
            let key = l.split(" = ").next().unwrap_or("");
            if l.starts_with('[')
                || (!key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            {
                tables.push_str(l);
                tables.push('\n');
            }
        }
        let c = parse(&format!("listen = \"127.0.0.1:0\"\n{tables}")).unwrap();
        let r = c.results.expect("[results]");
        assert_eq!(r.retention, "7d");
        assert_eq!(r.database_url_env.as_deref(), Some("WEBPROOF_DATABASE_URL"));
        assert!(r.database_url.unwrap().starts_with("postgres://"));
        assert_eq!(r.api_keys.env.as_deref(), Some("WEBPROOF_RESULTS_API_KEYS"));
        assert_eq!(c.webhook.len(), 1);
        assert_eq!(c.webhook[0].max_attempts, 8);
        assert_eq!(c.webhook[0].timeout_secs, Duration::from_secs(10));
    }

    #[test]
    fn unknown_fields_are_named_with_their_line() {
        let e = parse("listen = \"127.0.0.1:1\"\n\n[limits]\nmax_sesions = 3\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_sesions"), "{e}");
        assert!(e.contains("line 4"), "{e}");
        let e = parse("lisen = \"x\"\n").unwrap_err().to_string();
        assert!(e.contains("lisen") && e.contains("line 1"), "{e}");
        let e = parse("[listen_tls]\naddr = \"a:1\"\ncert = \"c\"\nkey = \"k\"\nca = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`ca`") && e.contains("line 5"), "{e}");
    }

    #[test]
    fn ill_typed_and_invalid_values_name_the_field() {
        let e = parse("[limits]\nmax_sessions = \"many\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_sessions") && e.contains("line 2"), "{e}");
        let e = parse("[policy]\nallow = [\"10.0.0.0/33\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("allow"), "{e}");
        let e = parse("[limits]\nidle_timeout_secs = -1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("idle_timeout_secs"), "{e}");
        let e = parse("[log]\nformat = \"xml\"\n").unwrap_err().to_string();
        assert!(e.contains("format") && e.contains("line 2"), "{e}");

        let mut c = parse("listen = \"127.0.0.1:0\"\n[limits]\nmax_sessions = 0\n").unwrap();
        let e = c.build().unwrap_err().to_string();
        assert!(e.contains("limits.max_sessions"), "{e}");
        c.limits.max_sessions = 1;
        c.limits.max_message_bytes = 10;
        let e = c.build().unwrap_err().to_string();
        assert!(e.contains("limits.max_message_bytes"), "{e}");
        c.limits.max_message_bytes = 1 << 20;
        for bad in [0, 16385] {
            c.limits.max_mpc_request_bytes = bad;
            let e = c.build().unwrap_err().to_string();
            assert!(e.contains("limits.max_mpc_request_bytes"), "{e}");
        }
        c.limits.max_mpc_request_bytes = 2048;
        assert_eq!(c.build().unwrap().verifier.max_mpc_request, 2048);
        c.limits.max_mpc_request_bytes = 4096;
        let e = parse("listen = \"127.0.0.1:0\"\n[api_keys]\ndigests = [\"abc\"]\n")
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(e.contains("api_keys.digests[0]"), "{e}");
        let e = parse("listen = \"127.0.0.1:0\"\n[roots]\nca_certs = [\"/nonexistent/ca.pem\"]\n")
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("roots.ca_certs") && e.contains("/nonexistent/ca.pem"),
            "{e}"
        );
        let e = parse("").unwrap().build().unwrap_err();
        assert!(matches!(e, ServiceError::NoListener), "{e}");
    }

    #[test]
    fn values_reach_the_verifier_config() {
        let c = parse(
            "listen = \"127.0.0.1:0\"\n\
             [resolve]\n\"Server.Test.\" = \"127.0.0.1\"\n\
             [policy]\nallow = [\"127.0.0.0/8\"]\ndeny = [\"8.8.8.0/24\"]\n\
             [limits]\nmax_sent_bytes = 100\nidle_timeout_secs = 0.5\nmax_sessions = 3\n\
             [api_keys]\ndigests = [\"\"\"",
        );
        // An unterminated string is a parse error, not a panic.
        assert!(c.is_err());
        let digest = hex_encode(&webproof_net::verifier::api_key_digest("k1"));
        let c = parse(&format!(
            "listen = \"127.0.0.1:0\"\n\
             [resolve]\n\"Server.Test.\" = \"127.0.0.1\"\n\
             [policy]\nallow = [\"127.0.0.0/8\"]\ndeny = [\"8.8.8.0/24\"]\n\
             [limits]\nmax_sent_bytes = 100\nidle_timeout_secs = 0.5\nmax_sessions = 3\n\
             [api_keys]\ndigests = [\"{digest}\"]\n"
        ))
        .unwrap()
        .build()
        .unwrap();
        let v = &c.verifier;
        assert_eq!(
            v.resolve["server.test"],
            "127.0.0.1".parse::<IpAddr>().unwrap()
        );
        assert!(v.server_policy.check("127.0.0.1".parse().unwrap()).is_ok());
        assert!(v.server_policy.check("10.0.0.1".parse().unwrap()).is_err());
        assert!(v.server_policy.check("8.8.8.8".parse().unwrap()).is_err());
        assert!(v.server_policy.check("1.1.1.1".parse().unwrap()).is_ok());
        assert_eq!(v.limits.max_sent_bytes, 100);
        assert_eq!(v.idle_timeout, Duration::from_millis(500));
        assert_eq!(c.max_sessions, 3);
        assert_eq!(
            v.api_key_digests,
            vec![webproof_net::verifier::api_key_digest("k1")]
        );
    }

    #[test]
    fn api_keys_from_a_file_and_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keys.txt"), "# provers\nalpha\n\n beta \n").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "# none\n").unwrap();
        let var = format!("WEBPROOF_TEST_KEYS_{}", std::process::id());
        std::env::set_var(&var, "gamma, delta,");
        let c = FileConfig::parse(
            &format!(
                "listen = \"127.0.0.1:0\"\n[api_keys]\nfile = \"keys.txt\"\nenv = \"{var}\"\n"
            ),
            "t",
            dir.path().to_path_buf(),
        )
        .unwrap()
        .build()
        .unwrap();
        let d = webproof_net::verifier::api_key_digest;
        assert_eq!(
            c.verifier.api_key_digests,
            vec![d("alpha"), d("beta"), d("gamma"), d("delta")]
        );
        let e = FileConfig::parse(
            "listen = \"127.0.0.1:0\"\n[api_keys]\nfile = \"empty.txt\"\n",
            "t",
            dir.path().to_path_buf(),
        )
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("api_keys.file") && e.contains("no API key"),
            "{e}"
        );
        let e =
            parse("listen = \"127.0.0.1:0\"\n[api_keys]\nenv = \"WEBPROOF_SURELY_UNSET_VAR\"\n")
                .unwrap()
                .build()
                .unwrap_err()
                .to_string();
        assert!(e.contains("api_keys.env"), "{e}");
    }

    #[test]
    fn results_and_webhooks_are_checked_field_by_field() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hook.secret"), "0123456789abcdef0123\n").unwrap();
        std::fs::write(dir.path().join("short.secret"), "short\n").unwrap();
        let build = |extra: &str| {
            FileConfig::parse(
                &format!("listen = \"127.0.0.1:0\"\n{extra}"),
                "t",
                dir.path().to_path_buf(),
            )
            .and_then(|c| c.build())
        };
        let hook = |url: &str, more: &str| {
            format!(
                "[results]\npath = \"r.sqlite\"\n\
                 [[webhook]]\nurl = \"{url}\"\nsecret_file = \"hook.secret\"\n{more}"
            )
        };
        let c = build(&format!(
            "{}\n[results.api_keys]\ndigests = [\"{}\"]\n",
            hook(
                "https://app.example/hook",
                "max_attempts = 3\nbackoff_secs = 0.5\n"
            ),
            "ab".repeat(32)
        ))
        .unwrap();
        let r = c.results.unwrap();
        assert_eq!(
            r.backend,
            crate::results::Backend::Sqlite(dir.path().join("r.sqlite"))
        );
        assert_eq!(r.retention, Duration::from_secs(7 * 86_400));
        assert_eq!(r.api_key_digests, vec![[0xab; 32]]);
        let w = &r.webhooks[0];
        assert_eq!(w.secret.as_slice(), b"0123456789abcdef0123");
        assert_eq!((w.max_attempts, w.backoff), (3, Duration::from_millis(500)));
        assert_eq!(w.timeout, Duration::from_secs(10));
        // Loopback may be plain http; elsewhere only when allowed.
        for url in [
            "http://127.0.0.1:9/h",
            "http://localhost/h",
            "http://[::1]:8/h",
        ] {
            build(&hook(url, "")).unwrap_or_else(|e| panic!("{url}: {e}"));
        }
        let e = build(&hook("http://app.example/hook", ""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("webhook[0].url") && e.contains("allow_http"),
            "{e}"
        );
        build(&hook("http://app.example/hook", "allow_http = true\n")).unwrap();
        let e = build(&hook("ftp://app.example/", ""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("webhook[0].url"), "{e}");
        let e = build(&hook("https://a.example/", "max_attempts = 0\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("webhook[0].max_attempts"), "{e}");
        let e = build(
            "[results]\npath = \"r.sqlite\"\n[[webhook]]\nurl = \"https://a.example/\"\n\
             secret_file = \"short.secret\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("webhook[0]") && e.contains("16 bytes"), "{e}");
        let e = build(
            "[results]\npath = \"r.sqlite\"\n[[webhook]]\nurl = \"https://a.example/\"\n\
             secret_env = \"WEBPROOF_SURELY_UNSET_SECRET\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("webhook[0].secret_env"), "{e}");
        let e =
            build("[results]\npath = \"r.sqlite\"\n[[webhook]]\nurl = \"https://a.example/\"\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("secret_env and secret_file"), "{e}");
        let e = build(&format!(
            "{}[[webhook]]\nurl = \"https://app.example/hook\"\nsecret_file = \"hook.secret\"\n",
            hook("https://app.example/hook", "")
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("webhook[1].url") && e.contains("twice"), "{e}");
        let e = build("[[webhook]]\nurl = \"https://a.example/\"\nsecret_file = \"hook.secret\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs [results] path"), "{e}");
        for bad in ["7", "0d", "-1d", "7w", "d", ""] {
            let e = build(&format!("[results]\npath = \"r\"\nretention = \"{bad}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("results.retention"), "{bad}: {e}");
        }
        // PostgreSQL: by URL or from a variable; one backend only.
        let c =
            build("[results]\ndatabase_url = \"postgres://wp:pw@db.internal:5433/wp\"\n").unwrap();
        let r = c.results.unwrap();
        assert_eq!(
            r.backend,
            crate::results::Backend::Postgres("postgres://wp:pw@db.internal:5433/wp".into())
        );
        assert!(!format!("{r:?}").contains("pw@"), "{r:?}");
        let e = build("[results]\ndatabase_url = \"mysql://wp:pw@db/wp\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("results.database_url") && !e.contains("pw@"),
            "{e}"
        );
        let e = build("[results]\npath = \"r\"\ndatabase_url = \"postgres://db/wp\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one of path"), "{e}");
        let e = build("[results]\nretention = \"1d\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one of path"), "{e}");
        let e = build("[results]\ndatabase_url_env = \"WEBPROOF_SURELY_UNSET_DB\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("results.database_url_env") && e.contains("not set"),
            "{e}"
        );
        assert_eq!(parse_retention("12h"), Some(Duration::from_secs(43_200)));
        assert_eq!(parse_retention("30m"), Some(Duration::from_secs(1_800)));
        assert_eq!(parse_retention("45s"), Some(Duration::from_secs(45)));
        let e = build("[results]\npath = \"r\"\n[results.api_keys]\ndigests = [\"x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("results.api_keys.digests[0]"), "{e}");
        let e = parse("[results]\npath = \"r\"\nretain = \"1d\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("retain") && e.contains("line 3"), "{e}");
    }

    fn hex_encode(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn hex_digests_parse_strictly() {
        assert_eq!(hex_32(&"ab".repeat(32)), Some([0xab; 32]));
        assert_eq!(hex_32(&"ab".repeat(31)), None);
        assert_eq!(hex_32(&"zz".repeat(32)), None);
        assert_eq!(hex_32(&"é".repeat(32)), None);
    }
}

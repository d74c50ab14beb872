//! Stored results: every verified session, and the webhook outbox, in one
//! database: an embedded SQLite file (`[results] path`, one replica) or a
//! PostgreSQL server (`[results] database_url`, a fleet of replicas
//! sharing it). [`Store`] is the one interface the rest of the service
//! uses; [`sqlite`] and [`postgres`] each own their schema and migrations
//! (`schema_version`, applied in order at open, never edited once shipped).
//!
//! A session's row and one outbox row per webhook endpoint are written in
//! one transaction, so a result is never announced without being stored
//! nor stored without its announcements queued; the service writes them
//! before it sends the verdict, so a verdict always names a stored result.
//! Rows older than the retention are deleted periodically
//! ([`Store::prune`]).
//!
//! The outbox is exactly once per attempt, at least once overall: a
//! replica claims due rows with a lease (PostgreSQL: `FOR UPDATE SKIP
//! LOCKED`, `claimed_by`, `lease_until`) longer than an attempt may last,
//! so no two replicas post the same delivery at once, and a replica that
//! dies mid-attempt leaves the row to be claimed again when its lease
//! expires. A row is marked delivered only after the endpoint's 2xx, so a
//! crash between the two posts it again: receivers drop duplicates by
//! delivery id.

pub mod postgres;
pub mod sqlite;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use webproof_net::verifier::Verified;

/// A stored result, as `/v1/sessions/{id}` and webhooks show it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredResult {
    /// The session's id.
    pub session_id: String,
    /// When the verdict was reached, Unix milliseconds.
    pub verified_at_ms: i64,
    /// `proxy` or `mpc`.
    pub mode: String,
    /// The server the session was with.
    pub server_name: String,
    /// The verified output (JSON).
    pub output: serde_json::Value,
    /// The signed attestation, binary encoding.
    pub attestation: Option<Vec<u8>>,
}

impl StoredResult {
    /// The JSON document of the result (a webhook's body adds its delivery id).
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        use base64::Engine;
        let mut m = serde_json::Map::new();
        m.insert("session_id".into(), self.session_id.clone().into());
        m.insert("verified_at".into(), self.verified_at_ms.into());
        m.insert("mode".into(), self.mode.clone().into());
        m.insert("server_name".into(), self.server_name.clone().into());
        m.insert("output".into(), self.output.clone());
        // The exchanges (which response answers which request), computed
        // from the stored output as the verifier's own output computes them.
        if let Ok(o) = serde_json::from_value::<webproof_proxy::VerifierOutput>(self.output.clone())
        {
            let exchanges = o.exchanges();
            if exchanges.len() > 1 {
                m.insert(
                    "exchanges".into(),
                    serde_json::to_value(exchanges).expect("exchanges serialize"),
                );
            }
        }
        m.insert(
            "attestation".into(),
            match &self.attestation {
                Some(a) => base64::engine::general_purpose::STANDARD.encode(a).into(),
                None => serde_json::Value::Null,
            },
        );
        m
    }
}

/// An outbox row due for an attempt.
#[derive(Clone, Debug)]
pub struct Delivery {
    /// The delivery's id (the receiver's deduplication key).
    pub delivery_id: String,
    /// The session announced.
    pub session_id: String,
    /// The webhook's URL.
    pub endpoint: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the session's verdict was reached (Unix milliseconds).
    pub created_at_ms: i64,
}

/// A database error, with what the service was doing.
#[derive(Debug, thiserror::Error)]
#[error("results database ({what}): {source}")]
pub struct StoreError {
    what: &'static str,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl StoreError {
    pub(crate) fn new(
        what: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        StoreError {
            what,
            source: source.into(),
        }
    }
}

/// A store result.
pub type Result<T> = std::result::Result<T, StoreError>;

/// Where results are kept.
#[derive(Clone, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file (created if missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection string (`postgres://user:password@host/db`).
    Postgres(String),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for Backend {
    /// The SQLite path, or the PostgreSQL URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Sqlite(p) => write!(f, "sqlite:{}", p.display()),
            Backend::Postgres(url) => f.write_str(&postgres::redact(url)),
        }
    }
}

/// The results database, whichever backend holds it.
pub enum Store {
    /// An embedded SQLite file.
    Sqlite(Arc<sqlite::SqliteStore>),
    /// A PostgreSQL server, shared by replicas.
    Postgres(Box<postgres::PgStore>),
}

/// How long one PostgreSQL call may take before it counts as failed (a
/// database that hangs must not hold sessions forever).
const PG_CALL_TIMEOUT: Duration = Duration::from_secs(20);

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::new("a blocking task", e))?
}

async fn bounded<T>(f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(PG_CALL_TIMEOUT, f)
        .await
        .map_err(|_| {
            StoreError::new(
                "waiting",
                format!("no answer within {} s", PG_CALL_TIMEOUT.as_secs()),
            )
        })?
}

/// Run `$call` on the backend: SQLite on a blocking thread (with `$s` the
/// `Arc` of it), PostgreSQL bounded in time.
macro_rules! on_backend {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            Store::Sqlite($s) => {
                let $s = $s.clone();
                blocking(move || $call).await
            }
            Store::Postgres($s) => bounded(async { $call.await }).await,
        }
    };
}

impl Store {
    /// Open (or create) the database and bring its schema up to date.
    pub async fn open(backend: &Backend) -> Result<Store> {
        match backend {
            Backend::Sqlite(path) => {
                let path = path.clone();
                let s = blocking(move || sqlite::SqliteStore::open(&path)).await?;
                Ok(Store::Sqlite(Arc::new(s)))
            }
            Backend::Postgres(url) => {
                let s = bounded(postgres::PgStore::open(url)).await?;
                Ok(Store::Postgres(Box::new(s)))
            }
        }
    }

    /// Whether the database answers (readiness).
    pub async fn ping(&self) -> Result<()> {
        on_backend!(self, s => s.ping())
    }

    /// The schema version of the open database.
    pub async fn schema_version(&self) -> Result<i64> {
        on_backend!(self, s => s.schema_version())
    }

    /// Store a verified session and queue one delivery per endpoint, in one
    /// transaction; the delivery ids.
    pub async fn insert(
        &self,
        v: &Verified,
        verified_at_ms: i64,
        endpoints: &[String],
    ) -> Result<Vec<String>> {
        match self {
            Store::Sqlite(s) => {
                let (s, v, e) = (s.clone(), v.clone(), endpoints.to_vec());
                blocking(move || s.insert(&v, verified_at_ms, &e)).await
            }
            Store::Postgres(s) => bounded(s.insert(v, verified_at_ms, endpoints)).await,
        }
    }

    /// A stored result by id.
    pub async fn get(&self, session_id: &str) -> Result<Option<StoredResult>> {
        let id = session_id.to_string();
        on_backend!(self, s => s.get(&id))
    }

    /// Claim `endpoint`'s pending deliveries due at `now_ms`, oldest first,
    /// at most `limit`, for `claimer` until `lease_until_ms`: no other
    /// claim takes them before, and a replica that dies mid-attempt leaves
    /// them due again after the lease.
    pub async fn claim_due(
        &self,
        endpoint: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
        claimer: &str,
    ) -> Result<Vec<Delivery>> {
        let (endpoint, claimer) = (endpoint.to_string(), claimer.to_string());
        match self {
            Store::Sqlite(s) => {
                let s = s.clone();
                blocking(move || s.claim_due(&endpoint, now_ms, lease_until_ms, limit)).await
            }
            Store::Postgres(s) => {
                bounded(s.claim_due(&endpoint, now_ms, lease_until_ms, limit, &claimer)).await
            }
        }
    }

    /// When `endpoint`'s next pending delivery is due or its lease ends
    /// (Unix milliseconds), if any.
    pub async fn next_due(&self, endpoint: &str) -> Result<Option<i64>> {
        let e = endpoint.to_string();
        on_backend!(self, s => s.next_due(&e))
    }

    /// Mark failed the pending deliveries to endpoints not in `endpoints`
    /// (removed from the configuration); how many.
    pub async fn fail_unknown_endpoints(&self, endpoints: &[String]) -> Result<usize> {
        let e = endpoints.to_vec();
        on_backend!(self, s => s.fail_unknown_endpoints(&e))
    }

    /// A delivery was answered 2xx (recorded whoever holds its lease now:
    /// the endpoint has it).
    pub async fn delivered(&self, delivery_id: &str, now_ms: i64) -> Result<()> {
        let id = delivery_id.to_string();
        on_backend!(self, s => s.delivered(&id, now_ms))
    }

    /// `claimer`'s attempt failed: try again at `next_ms`, or, with `None`,
    /// give up (the row stays, `failed`, for the operator). Nothing changes
    /// if another replica has claimed the row since (its lease ran out).
    pub async fn attempt_failed(
        &self,
        delivery_id: &str,
        error: &str,
        next_ms: Option<i64>,
        claimer: &str,
    ) -> Result<()> {
        let (id, error, claimer) = (
            delivery_id.to_string(),
            error.to_string(),
            claimer.to_string(),
        );
        match self {
            Store::Sqlite(s) => {
                let s = s.clone();
                blocking(move || s.attempt_failed(&id, &error, next_ms)).await
            }
            Store::Postgres(s) => bounded(s.attempt_failed(&id, &error, next_ms, &claimer)).await,
        }
    }

    /// Outbox rows by state: (pending, failed).
    pub async fn outbox_counts(&self) -> Result<(u64, u64)> {
        on_backend!(self, s => s.outbox_counts())
    }

    /// The state and attempts of one delivery (tests, operators).
    pub async fn delivery_state(&self, delivery_id: &str) -> Result<Option<(String, u32)>> {
        let id = delivery_id.to_string();
        on_backend!(self, s => s.delivery_state(&id))
    }

    /// Delete results verified before `cutoff_ms`, and finished outbox rows
    /// created before it; pending deliveries are kept (their retries are
    /// bounded). The number of results deleted.
    pub async fn prune(&self, cutoff_ms: i64) -> Result<usize> {
        on_backend!(self, s => s.prune(cutoff_ms))
    }
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use webproof_attestation::{Completeness, OrderSpan};
    use webproof_proxy::disclosure::DisclosedData;
    use webproof_proxy::{CipherSuite, Direction, KxGroup, ProofKind, TlsVersion, VerifierOutput};

    /// A stored result of two requests lists its exchanges, each response
    /// with the request it answers; a result of one lists none.
    #[test]
    fn results_list_their_exchanges() {
        let q = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n";
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n";
        let full =
            |d: &[u8]| DisclosedData::from_view(&d.iter().map(|&b| Some(b)).collect::<Vec<_>>());
        let (a, b) = (q.len() / 2, 39);
        let span = |direction, start: usize, end: usize| OrderSpan {
            direction,
            start: start as u32,
            end: end as u32,
        };
        let output = VerifierOutput {
            server_name: "h".into(),
            server_port: 443,
            time: 0,
            tls_version: TlsVersion::Tls13,
            cipher_suite: CipherSuite::TLS13_AES_128_GCM_SHA256,
            key_exchange_group: KxGroup::X25519,
            server_certificate_sha256: String::new(),
            proof: ProofKind::Zk,
            sent: full(q),
            received: full(r),
            server_close_notify: Some(true),
            server_alert: None,
            server_records_after_cut: Some(0),
            response_complete: Completeness::Complete,
            order: vec![
                span(Direction::Sent, 0, a),
                span(Direction::Received, 0, b),
                span(Direction::Sent, a, q.len()),
                span(Direction::Received, b, r.len()),
            ],
            json: Vec::new(),
            sent_crlf_free: Vec::new(),
        };
        let mut stored = StoredResult {
            session_id: "s".into(),
            verified_at_ms: 0,
            mode: "proxy".into(),
            server_name: "h".into(),
            output: serde_json::to_value(&output).unwrap(),
            attestation: None,
        };
        let doc = serde_json::Value::Object(stored.to_json());
        let e = &doc["exchanges"];
        assert_eq!(e.as_array().map(Vec::len), Some(2), "{doc}");
        assert_eq!(e[1]["request_line"], "GET /b HTTP/1.1");
        assert_eq!(e[1]["status"], 404);
        assert_eq!(e[0]["response"]["end"], b);
        let mut one = output;
        one.sent = full(&q[..a]);
        one.order.truncate(2);
        one.received = full(&r[..b]);
        stored.output = serde_json::to_value(&one).unwrap();
        assert!(stored.to_json().get("exchanges").is_none());
    }
}

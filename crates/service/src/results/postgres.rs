//! The PostgreSQL backend of [`super::Store`] (`[results] database_url`),
//! for a fleet of replicas sharing one database: the same logical schema
//! as [`super::sqlite`], with its own migrations (run under an advisory
//! lock, so replicas starting together migrate once), and an outbox
//! claimed with a lease: `UPDATE ... WHERE delivery_id IN (SELECT ... FOR
//! UPDATE SKIP LOCKED)` sets `claimed_by` and `lease_until`, so two
//! replicas never claim the same row, and a row whose claimer died is due
//! again when `lease_until` passes.
//!
//! Connections come from a small pool of its own; one that failed is
//! dropped, and the next call connects anew, so a database that comes back
//! is used again without a restart.

use super::{Delivery, Result, StoreError, StoredResult};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_postgres::{Client, NoTls};
use webproof_net::verifier::{SessionId, Verified};

/// The schema, one migration per version; never edit one that shipped,
/// append the next.
const MIGRATIONS: &[&str] = &[
    // 1: results and the webhook outbox, with its lease.
    "CREATE TABLE sessions (
        session_id   TEXT PRIMARY KEY,
        verified_at  BIGINT NOT NULL,    -- Unix milliseconds
        mode         TEXT NOT NULL,      -- proxy | mpc
        server_name  TEXT NOT NULL,
        output       TEXT NOT NULL,      -- the verified output, JSON
        attestation  BYTEA,              -- the signed attestation, if issued
        metadata     TEXT                -- what the prover attached (none yet)
    );
    CREATE INDEX sessions_verified_at ON sessions (verified_at);
    CREATE TABLE outbox (
        delivery_id  TEXT PRIMARY KEY,
        session_id   TEXT NOT NULL,
        endpoint     TEXT NOT NULL,      -- the webhook's URL
        state        TEXT NOT NULL,      -- pending | delivered | failed
        attempts     INTEGER NOT NULL DEFAULT 0,
        next_attempt BIGINT NOT NULL,    -- Unix milliseconds
        last_error   TEXT,
        created_at   BIGINT NOT NULL,    -- Unix milliseconds
        delivered_at BIGINT,
        claimed_by   TEXT,               -- the replica attempting it
        lease_until  BIGINT              -- Unix milliseconds
    );
    CREATE INDEX outbox_due ON outbox (state, endpoint, next_attempt);",
];

/// The advisory lock migrations run under (any constant of our own).
const MIGRATION_LOCK: i64 = 0x7765_6270_726f_6f66; // "webproof"

/// Connections per replica at most (and one more for health checks).
const POOL: usize = 16;

/// The URL with its password, if any, replaced by `***` (for logs).
pub fn redact(url: &str) -> String {
    // postgres://user:password@host...: the password is between the first
    // ':' after the scheme and the last '@' of the authority.
    let Some((scheme, rest)) = url.split_once("://") else {
        return "postgres://(unparsed)".into();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(end);
    match auth.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((u, _)) => format!("{scheme}://{u}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

fn ctx(what: &'static str) -> impl FnOnce(tokio_postgres::Error) -> StoreError {
    move |e| {
        // The server's message (`ERROR: ...`) is in the source, if any.
        let msg = match e.as_db_error() {
            Some(db) => format!("{e}: {}", db.message()),
            None => match std::error::Error::source(&e) {
                Some(s) => format!("{e}: {s}"),
                None => e.to_string(),
            },
        };
        StoreError::new(what, msg)
    }
}

/// The PostgreSQL results database.
pub struct PgStore {
    config: tokio_postgres::Config,
    idle: Mutex<Vec<Client>>,
    slots: Semaphore,
    /// The health check's own connection: a pool busy with sessions is
    /// not a database that is down.
    health: tokio::sync::Mutex<Option<Client>>,
}

/// A pooled connection: back to the pool only if [`Conn::release`]d (a
/// call that failed or was cancelled drops it).
struct Conn<'a> {
    client: Option<Client>,
    pool: &'a PgStore,
    _slot: SemaphorePermit<'a>,
}

impl Conn<'_> {
    fn release(mut self) {
        if let Some(c) = self.client.take() {
            if !c.is_closed() {
                self.pool.idle().push(c);
            }
        }
    }
}

impl std::ops::Deref for Conn<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client.as_ref().expect("taken only on release")
    }
}

impl std::ops::DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client.as_mut().expect("taken only on release")
    }
}

/// The runtime, on a thread of its own, that drives the database sockets.
fn io_runtime() -> &'static tokio::runtime::Handle {
    static IO: std::sync::OnceLock<tokio::runtime::Handle> = std::sync::OnceLock::new();
    IO.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the database connections");
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name("webproof-pg-io".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("a thread for the database connections");
        handle
    })
}

fn delivery(r: &tokio_postgres::Row) -> Delivery {
    Delivery {
        delivery_id: r.get(0),
        session_id: r.get(1),
        endpoint: r.get(2),
        attempts: r.get::<_, i32>(3).max(0) as u32,
        created_at_ms: r.get(4),
    }
}

impl PgStore {
    /// Connect to `url` and bring the schema up to date.
    pub async fn open(url: &str) -> Result<PgStore> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::new("parsing database_url", format!("{e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        config.application_name("webproof");
        let store = PgStore {
            config,
            idle: Mutex::new(Vec::new()),
            slots: Semaphore::new(POOL),
            health: tokio::sync::Mutex::new(None),
        };
        store.migrate().await?;
        Ok(store)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Client>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn conn(&self) -> Result<Conn<'_>> {
        let slot = self
            .slots
            .acquire()
            .await
            .map_err(|e| StoreError::new("connecting", e))?;
        loop {
            let Some(c) = self.idle().pop() else { break };
            if !c.is_closed() {
                return Ok(Conn {
                    client: Some(c),
                    pool: self,
                    _slot: slot,
                });
            }
        }
        Ok(Conn {
            client: Some(self.connect().await?),
            pool: self,
            _slot: slot,
        })
    }

    /// A new connection, whose socket is driven on [`io_runtime`]'s
    /// thread: sessions verifying proofs keep the service's workers busy,
    /// and a connection polled only between them answers late.
    async fn connect(&self) -> Result<Client> {
        let config = self.config.clone();
        io_runtime()
            .spawn(async move {
                let (client, connection) = config.connect(NoTls).await?;
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!("results database connection closed: {e}");
                    }
                });
                Ok::<_, tokio_postgres::Error>(client)
            })
            .await
            .map_err(|e| StoreError::new("connecting", e))?
            .map_err(ctx("connecting"))
    }

    async fn migrate(&self) -> Result<()> {
        let mut c = self.conn().await?;
        let tx = c.transaction().await.map_err(ctx("migrating"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(ctx("migrating"))?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            .await
            .map_err(ctx("migrating"))?;
        let have: Option<i32> = tx
            .query_one("SELECT max(version) FROM schema_version", &[])
            .await
            .map_err(ctx("reading the schema version"))?
            .get(0);
        let have = have.unwrap_or(0).max(0) as usize;
        if have > MIGRATIONS.len() {
            return Err(StoreError::new(
                "schema",
                "from a newer webproof; use that version or another database",
            ));
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(have) {
            tx.batch_execute(m).await.map_err(ctx("migrating"))?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES ($1)",
                &[&(i as i32 + 1)],
            )
            .await
            .map_err(ctx("migrating"))?;
        }
        tx.commit().await.map_err(ctx("migrating"))?;
        c.release();
        Ok(())
    }

    /// Whether the server answers (on a connection of its own).
    pub async fn ping(&self) -> Result<()> {
        let mut h = self.health.lock().await;
        let client = match h.take() {
            Some(c) if !c.is_closed() => c,
            _ => self.connect().await?,
        };
        client
            .simple_query("SELECT 1")
            .await
            .map_err(ctx("reading"))?;
        *h = Some(client);
        Ok(())
    }

    /// The schema version.
    pub async fn schema_version(&self) -> Result<i64> {
        let c = self.conn().await?;
        let v: Option<i32> = c
            .query_one("SELECT max(version) FROM schema_version", &[])
            .await
            .map_err(ctx("reading the schema version"))?
            .get(0);
        c.release();
        Ok(v.unwrap_or(0) as i64)
    }

    /// See [`super::Store::insert`].
    pub async fn insert(
        &self,
        v: &Verified,
        verified_at_ms: i64,
        endpoints: &[String],
    ) -> Result<Vec<String>> {
        let output = serde_json::to_string(&v.output).expect("verifier outputs serialize");
        let attestation = v.attestation.as_ref().map(|a| a.signed.clone());
        let sid = v.session_id.to_string();
        let mut c = self.conn().await?;
        let tx = c.transaction().await.map_err(ctx("storing a result"))?;
        tx.execute(
            "INSERT INTO sessions (session_id, verified_at, mode, server_name, output, attestation)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &sid,
                &verified_at_ms,
                &v.mode.name(),
                &v.output.server_name,
                &output,
                &attestation,
            ],
        )
        .await
        .map_err(ctx("storing a result"))?;
        let mut ids = Vec::with_capacity(endpoints.len());
        for e in endpoints {
            let id = SessionId::random(&mut rand::rngs::OsRng).to_string();
            tx.execute(
                "INSERT INTO outbox (delivery_id, session_id, endpoint, state, next_attempt, created_at)
                 VALUES ($1, $2, $3, 'pending', $4, $4)",
                &[&id, &sid, e, &verified_at_ms],
            )
            .await
            .map_err(ctx("queueing a webhook"))?;
            ids.push(id);
        }
        tx.commit().await.map_err(ctx("storing a result"))?;
        c.release();
        Ok(ids)
    }

    /// See [`super::Store::get`].
    pub async fn get(&self, session_id: &str) -> Result<Option<StoredResult>> {
        let c = self.conn().await?;
        let row = c
            .query_opt(
                "SELECT session_id, verified_at, mode, server_name, output, attestation
                 FROM sessions WHERE session_id = $1",
                &[&session_id],
            )
            .await
            .map_err(ctx("reading a result"))?;
        c.release();
        Ok(row.map(|r| StoredResult {
            session_id: r.get(0),
            verified_at_ms: r.get(1),
            mode: r.get(2),
            server_name: r.get(3),
            output: serde_json::from_str(r.get(4)).unwrap_or(serde_json::Value::Null),
            attestation: r.get(5),
        }))
    }

    /// See [`super::Store::claim_due`]. One statement: rows another
    /// replica is claiming at this moment are skipped, not waited for, and
    /// rows under a live lease are not due.
    pub async fn claim_due(
        &self,
        endpoint: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
        claimer: &str,
    ) -> Result<Vec<Delivery>> {
        let c = self.conn().await?;
        let rows = c
            .query(
                "UPDATE outbox SET claimed_by = $4, lease_until = $3
                 WHERE delivery_id IN (
                     SELECT delivery_id FROM outbox
                     WHERE state = 'pending' AND endpoint = $1 AND next_attempt <= $2
                       AND (lease_until IS NULL OR lease_until <= $2)
                     ORDER BY next_attempt LIMIT $5
                     FOR UPDATE SKIP LOCKED)
                 RETURNING delivery_id, session_id, endpoint, attempts, created_at",
                &[
                    &endpoint,
                    &now_ms,
                    &lease_until_ms,
                    &claimer,
                    &(limit as i64),
                ],
            )
            .await
            .map_err(ctx("claiming deliveries"))?;
        c.release();
        Ok(rows.iter().map(delivery).collect())
    }

    /// See [`super::Store::next_due`].
    pub async fn next_due(&self, endpoint: &str) -> Result<Option<i64>> {
        let c = self.conn().await?;
        let t: Option<i64> = c
            .query_one(
                "SELECT min(greatest(next_attempt, coalesce(lease_until, 0))) FROM outbox
                 WHERE state = 'pending' AND endpoint = $1",
                &[&endpoint],
            )
            .await
            .map_err(ctx("reading the outbox"))?
            .get(0);
        c.release();
        Ok(t)
    }

    /// See [`super::Store::fail_unknown_endpoints`].
    pub async fn fail_unknown_endpoints(&self, endpoints: &[String]) -> Result<usize> {
        let c = self.conn().await?;
        let n = c
            .execute(
                "UPDATE outbox SET state = 'failed', last_error = 'endpoint no longer configured',
                 claimed_by = NULL, lease_until = NULL
                 WHERE state = 'pending' AND NOT (endpoint = ANY($1))",
                &[&endpoints],
            )
            .await
            .map_err(ctx("updating the outbox"))?;
        c.release();
        Ok(n as usize)
    }

    /// See [`super::Store::delivered`].
    pub async fn delivered(&self, delivery_id: &str, now_ms: i64) -> Result<()> {
        let c = self.conn().await?;
        c.execute(
            "UPDATE outbox SET state = 'delivered', attempts = attempts + 1, delivered_at = $2,
             last_error = NULL, claimed_by = NULL, lease_until = NULL
             WHERE delivery_id = $1 AND state = 'pending'",
            &[&delivery_id, &now_ms],
        )
        .await
        .map_err(ctx("updating the outbox"))?;
        c.release();
        Ok(())
    }

    /// See [`super::Store::attempt_failed`].
    pub async fn attempt_failed(
        &self,
        delivery_id: &str,
        error: &str,
        next_ms: Option<i64>,
        claimer: &str,
    ) -> Result<()> {
        let c = self.conn().await?;
        match next_ms {
            Some(t) => {
                c.execute(
                    "UPDATE outbox SET attempts = attempts + 1, last_error = $2, next_attempt = $3,
                     claimed_by = NULL, lease_until = NULL
                     WHERE delivery_id = $1 AND claimed_by = $4 AND state = 'pending'",
                    &[&delivery_id, &error, &t, &claimer],
                )
                .await
            }
            None => {
                c.execute(
                    "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_error = $2,
                     claimed_by = NULL, lease_until = NULL
                     WHERE delivery_id = $1 AND claimed_by = $3 AND state = 'pending'",
                    &[&delivery_id, &error, &claimer],
                )
                .await
            }
        }
        .map_err(ctx("updating the outbox"))?;
        c.release();
        Ok(())
    }

    /// See [`super::Store::outbox_counts`].
    pub async fn outbox_counts(&self) -> Result<(u64, u64)> {
        let c = self.conn().await?;
        let r = c
            .query_one(
                "SELECT count(*) FILTER (WHERE state = 'pending'),
                        count(*) FILTER (WHERE state = 'failed') FROM outbox",
                &[],
            )
            .await
            .map_err(ctx("counting the outbox"))?;
        c.release();
        Ok((r.get::<_, i64>(0) as u64, r.get::<_, i64>(1) as u64))
    }

    /// See [`super::Store::delivery_state`].
    pub async fn delivery_state(&self, delivery_id: &str) -> Result<Option<(String, u32)>> {
        let c = self.conn().await?;
        let r = c
            .query_opt(
                "SELECT state, attempts FROM outbox WHERE delivery_id = $1",
                &[&delivery_id],
            )
            .await
            .map_err(ctx("reading the outbox"))?;
        c.release();
        Ok(r.map(|r| (r.get(0), r.get::<_, i32>(1).max(0) as u32)))
    }

    /// See [`super::Store::prune`].
    pub async fn prune(&self, cutoff_ms: i64) -> Result<usize> {
        let mut c = self.conn().await?;
        let tx = c.transaction().await.map_err(ctx("pruning"))?;
        let n = tx
            .execute("DELETE FROM sessions WHERE verified_at < $1", &[&cutoff_ms])
            .await
            .map_err(ctx("pruning"))?;
        tx.execute(
            "DELETE FROM outbox WHERE state != 'pending' AND created_at < $1",
            &[&cutoff_ms],
        )
        .await
        .map_err(ctx("pruning"))?;
        tx.commit().await.map_err(ctx("pruning"))?;
        c.release();
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn urls_in_logs_carry_no_password() {
        assert_eq!(
            redact("postgres://wp:s3cret@db.internal:5432/webproof?sslmode=disable"),
            "postgres://wp:***@db.internal:5432/webproof?sslmode=disable"
        );
        assert_eq!(
            redact("postgres://wp@127.0.0.1/x"),
            "postgres://wp@127.0.0.1/x"
        );
        assert_eq!(
            redact("host=/tmp user=wp password=x"),
            "postgres://(unparsed)"
        );
    }
}

//! The SQLite backend of [`super::Store`]: one file (`[results] path`),
//! for a single replica. Every call blocks; [`super::Store`] runs them on
//! blocking threads.

use super::{Delivery, Result, StoreError, StoredResult};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;
use std::sync::Mutex;
use webproof_net::verifier::{SessionId, Verified};

/// The schema, one migration per version; never edit one that shipped,
/// append the next.
const MIGRATIONS: &[&str] = &[
    // 1: results and the webhook outbox.
    "CREATE TABLE sessions (
        session_id   TEXT PRIMARY KEY,
        verified_at  INTEGER NOT NULL,   -- Unix milliseconds
        mode         TEXT NOT NULL,      -- proxy | mpc
        server_name  TEXT NOT NULL,
        output       TEXT NOT NULL,      -- the verified output, JSON
        attestation  BLOB,               -- the signed attestation, if issued
        metadata     TEXT                -- what the prover attached (none yet)
    );
    CREATE INDEX sessions_verified_at ON sessions (verified_at);
    CREATE TABLE outbox (
        delivery_id  TEXT PRIMARY KEY,
        session_id   TEXT NOT NULL,
        endpoint     TEXT NOT NULL,      -- the webhook's URL
        state        TEXT NOT NULL,      -- pending | delivered | failed
        attempts     INTEGER NOT NULL DEFAULT 0,
        next_attempt INTEGER NOT NULL,   -- Unix milliseconds
        last_error   TEXT,
        created_at   INTEGER NOT NULL,   -- Unix milliseconds
        delivered_at INTEGER
    );
    CREATE INDEX outbox_due ON outbox (state, next_attempt);",
];

/// The results database.
pub struct SqliteStore {
    conn: Mutex<Connection>,
}

fn ctx(what: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| StoreError::new(what, source)
}

impl SqliteStore {
    /// Open (or create) the database at `path` and bring its schema up to date.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        let conn = Connection::open(path).map_err(ctx("opening"))?;
        // WAL: readers (`/v1/sessions`) do not wait for the writer.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(ctx("setting WAL"))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(ctx("setting synchronous"))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(ctx("setting the busy timeout"))?;
        let store = SqliteStore {
            conn: Mutex::new(conn),
        };
        store.migrate()?;
        Ok(store)
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic in another call leaves no transaction open (they roll
        // back on drop): the connection is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn migrate(&self) -> Result<()> {
        let mut c = self.conn();
        let tx = c.transaction().map_err(ctx("migrating"))?;
        tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            .map_err(ctx("migrating"))?;
        let have: Option<i64> = tx
            .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
            .map_err(ctx("reading the schema version"))?;
        let have = have.unwrap_or(0) as usize;
        if have > MIGRATIONS.len() {
            // A newer webproof wrote this file: do not guess at its schema.
            return Err(StoreError::new(
                "schema",
                "from a newer webproof; use that version or another file",
            ));
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(have) {
            tx.execute_batch(m).map_err(ctx("migrating"))?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES (?1)",
                [i as i64 + 1],
            )
            .map_err(ctx("migrating"))?;
        }
        tx.commit().map_err(ctx("migrating"))
    }

    /// Whether the file answers.
    pub fn ping(&self) -> Result<()> {
        self.conn()
            .query_row("SELECT 1", [], |_| Ok(()))
            .map_err(ctx("reading"))
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64> {
        self.conn()
            .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
            .map_err(ctx("reading the schema version"))
    }

    /// Store a verified session and queue one delivery per endpoint, in one
    /// transaction; the delivery ids.
    pub fn insert(
        &self,
        v: &Verified,
        verified_at_ms: i64,
        endpoints: &[String],
    ) -> Result<Vec<String>> {
        let output = serde_json::to_string(&v.output).expect("verifier outputs serialize");
        let attestation = v.attestation.as_ref().map(|a| a.signed.clone());
        let mut c = self.conn();
        let tx = c.transaction().map_err(ctx("storing a result"))?;
        tx.execute(
            "INSERT INTO sessions (session_id, verified_at, mode, server_name, output, attestation)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                v.session_id.to_string(),
                verified_at_ms,
                v.mode.name(),
                v.output.server_name,
                output,
                attestation
            ],
        )
        .map_err(ctx("storing a result"))?;
        let mut ids = Vec::with_capacity(endpoints.len());
        for e in endpoints {
            // A delivery id is random, like a session id, and as long.
            let id = SessionId::random(&mut rand::rngs::OsRng).to_string();
            tx.execute(
                "INSERT INTO outbox (delivery_id, session_id, endpoint, state, next_attempt, created_at)
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?4)",
                params![id, v.session_id.to_string(), e, verified_at_ms],
            )
            .map_err(ctx("queueing a webhook"))?;
            ids.push(id);
        }
        tx.commit().map_err(ctx("storing a result"))?;
        Ok(ids)
    }

    /// A stored result by id.
    pub fn get(&self, session_id: &str) -> Result<Option<StoredResult>> {
        self.conn()
            .query_row(
                "SELECT session_id, verified_at, mode, server_name, output, attestation
                 FROM sessions WHERE session_id = ?1",
                [session_id],
                |r| {
                    let output: String = r.get(4)?;
                    Ok(StoredResult {
                        session_id: r.get(0)?,
                        verified_at_ms: r.get(1)?,
                        mode: r.get(2)?,
                        server_name: r.get(3)?,
                        output: serde_json::from_str(&output).unwrap_or(serde_json::Value::Null),
                        attestation: r.get(5)?,
                    })
                },
            )
            .optional()
            .map_err(ctx("reading a result"))
    }

    /// Claim `endpoint`'s pending deliveries due at `now_ms`, oldest first,
    /// at most `limit`: their next attempt moves to `lease_until_ms`, so
    /// that no other pass takes them while they are attempted, and a
    /// process that dies mid-attempt leaves them due again after the lease.
    pub fn claim_due(
        &self,
        endpoint: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        let mut c = self.conn();
        let tx = c.transaction().map_err(ctx("claiming deliveries"))?;
        let rows = {
            let mut st = tx
                .prepare_cached(
                    "SELECT delivery_id, session_id, endpoint, attempts, created_at FROM outbox
                 WHERE state = 'pending' AND endpoint = ?3 AND next_attempt <= ?1
                 ORDER BY next_attempt LIMIT ?2",
                )
                .map_err(ctx("reading the outbox"))?;
            let rows = st
                .query_map(params![now_ms, limit as i64, endpoint], |r| {
                    Ok(Delivery {
                        delivery_id: r.get(0)?,
                        session_id: r.get(1)?,
                        endpoint: r.get(2)?,
                        attempts: r.get(3)?,
                        created_at_ms: r.get(4)?,
                    })
                })
                .map_err(ctx("reading the outbox"))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(ctx("reading the outbox"))?
        };
        for d in &rows {
            tx.execute(
                "UPDATE outbox SET next_attempt = ?2 WHERE delivery_id = ?1",
                params![d.delivery_id, lease_until_ms],
            )
            .map_err(ctx("claiming deliveries"))?;
        }
        tx.commit().map_err(ctx("claiming deliveries"))?;
        Ok(rows)
    }

    /// When `endpoint`'s next pending delivery is due (Unix milliseconds), if any.
    pub fn next_due(&self, endpoint: &str) -> Result<Option<i64>> {
        self.conn()
            .query_row(
                "SELECT min(next_attempt) FROM outbox WHERE state = 'pending' AND endpoint = ?1",
                [endpoint],
                |r| r.get(0),
            )
            .map_err(ctx("reading the outbox"))
    }

    /// Mark failed the pending deliveries to endpoints not in `endpoints`
    /// (removed from the configuration); how many.
    pub fn fail_unknown_endpoints(&self, endpoints: &[String]) -> Result<usize> {
        let c = self.conn();
        let mut st = c
            .prepare("SELECT DISTINCT endpoint FROM outbox WHERE state = 'pending'")
            .map_err(ctx("reading the outbox"))?;
        let pending: Vec<String> = st
            .query_map([], |r| r.get(0))
            .map_err(ctx("reading the outbox"))?
            .collect::<rusqlite::Result<_>>()
            .map_err(ctx("reading the outbox"))?;
        let mut n = 0;
        for e in pending.iter().filter(|e| !endpoints.contains(e)) {
            n += c
                .execute(
                    "UPDATE outbox SET state = 'failed', last_error = 'endpoint no longer configured'
                     WHERE state = 'pending' AND endpoint = ?1",
                    [e],
                )
                .map_err(ctx("updating the outbox"))?;
        }
        Ok(n)
    }

    /// A delivery was answered 2xx.
    pub fn delivered(&self, delivery_id: &str, now_ms: i64) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE outbox SET state = 'delivered', attempts = attempts + 1,
                 delivered_at = ?2, last_error = NULL WHERE delivery_id = ?1",
                params![delivery_id, now_ms],
            )
            .map(drop)
            .map_err(ctx("updating the outbox"))
    }

    /// An attempt failed: try again at `next_ms`, or, with `None`, give up
    /// (the row stays, `failed`, for the operator).
    pub fn attempt_failed(
        &self,
        delivery_id: &str,
        error: &str,
        next_ms: Option<i64>,
    ) -> Result<()> {
        let c = self.conn();
        match next_ms {
            Some(t) => c.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?2, next_attempt = ?3
                 WHERE delivery_id = ?1",
                params![delivery_id, error, t],
            ),
            None => c.execute(
                "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_error = ?2
                 WHERE delivery_id = ?1",
                params![delivery_id, error],
            ),
        }
        .map(drop)
        .map_err(ctx("updating the outbox"))
    }

    /// Outbox rows by state: (pending, failed).
    pub fn outbox_counts(&self) -> Result<(u64, u64)> {
        self.conn()
            .query_row(
                "SELECT coalesce(sum(state = 'pending'), 0), coalesce(sum(state = 'failed'), 0)
                 FROM outbox",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .map_err(ctx("counting the outbox"))
    }

    /// The state and attempts of one delivery (tests, operators).
    pub fn delivery_state(&self, delivery_id: &str) -> Result<Option<(String, u32)>> {
        self.conn()
            .query_row(
                "SELECT state, attempts FROM outbox WHERE delivery_id = ?1",
                [delivery_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(ctx("reading the outbox"))
    }

    /// Delete results verified before `cutoff_ms`, and finished outbox rows
    /// created before it; pending deliveries are kept (their retries are
    /// bounded). The number of results deleted.
    pub fn prune(&self, cutoff_ms: i64) -> Result<usize> {
        let mut c = self.conn();
        let tx = c.transaction().map_err(ctx("pruning"))?;
        let n = tx
            .execute("DELETE FROM sessions WHERE verified_at < ?1", [cutoff_ms])
            .map_err(ctx("pruning"))?;
        tx.execute(
            "DELETE FROM outbox WHERE state != 'pending' AND created_at < ?1",
            [cutoff_ms],
        )
        .map_err(ctx("pruning"))?;
        tx.commit().map_err(ctx("pruning"))?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opening runs each migration once; a file from a newer schema is
    /// refused rather than guessed at.
    #[test]
    fn migrations_run_once_and_newer_schemas_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        let s = SqliteStore::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
        assert_eq!(s.outbox_counts().unwrap(), (0, 0));
        assert!(s.get(&"0".repeat(32)).unwrap().is_none());
        drop(s);
        let s = SqliteStore::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), MIGRATIONS.len() as i64);
        let rows: i64 = s
            .conn()
            .query_row("SELECT count(*) FROM schema_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, MIGRATIONS.len() as i64);
        s.conn()
            .execute("INSERT INTO schema_version (version) VALUES (999)", [])
            .unwrap();
        drop(s);
        let e = SqliteStore::open(&path).err().expect("refused").to_string();
        assert!(e.contains("newer webproof"), "{e}");
    }

    /// Pruning deletes results past the cutoff and finished outbox rows,
    /// never a pending delivery; claimed rows are not claimed twice.
    #[test]
    fn prune_keeps_recent_results_and_pending_deliveries() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open(&dir.path().join("r.sqlite")).unwrap();
        {
            let c = s.conn();
            for (id, at) in [("old", 1_000), ("new", 5_000)] {
                c.execute(
                    "INSERT INTO sessions (session_id, verified_at, mode, server_name, output)
                     VALUES (?1, ?2, 'proxy', 'example.com', '{}')",
                    params![id, at],
                )
                .unwrap();
            }
            for (d, state, at) in [
                ("d-pending", "pending", 1_000),
                ("d-done", "delivered", 1_000),
                ("d-failed", "failed", 1_000),
                ("d-recent", "failed", 5_000),
            ] {
                c.execute(
                    "INSERT INTO outbox (delivery_id, session_id, endpoint, state, next_attempt, created_at)
                     VALUES (?1, 'old', 'https://a.example/', ?2, ?3, ?3)",
                    params![d, state, at],
                )
                .unwrap();
            }
        }
        assert_eq!(s.outbox_counts().unwrap(), (1, 2));
        assert_eq!(s.prune(3_000).unwrap(), 1);
        assert!(s.get("old").unwrap().is_none());
        assert_eq!(s.get("new").unwrap().unwrap().server_name, "example.com");
        assert_eq!(s.outbox_counts().unwrap(), (1, 1));
        assert!(s.delivery_state("d-done").unwrap().is_none());
        assert!(s.delivery_state("d-recent").unwrap().is_some());
        let e = "https://a.example/";
        assert!(s
            .claim_due("https://b.example/", 2_000, 9_000, 10)
            .unwrap()
            .is_empty());
        let due = s.claim_due(e, 2_000, 9_000, 10).unwrap();
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].delivery_id, "d-pending");
        assert!(s.claim_due(e, 2_000, 9_000, 10).unwrap().is_empty());
        assert_eq!(s.next_due(e).unwrap(), Some(9_000));
        assert_eq!(s.claim_due(e, 9_000, 20_000, 10).unwrap().len(), 1);
        // An endpoint dropped from the configuration: its rows fail.
        assert_eq!(s.fail_unknown_endpoints(&[e.to_string()]).unwrap(), 0);
        assert_eq!(s.fail_unknown_endpoints(&[]).unwrap(), 1);
        assert_eq!(s.outbox_counts().unwrap(), (0, 2));
    }
}

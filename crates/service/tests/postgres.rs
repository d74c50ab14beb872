//! The results store and webhook outbox on a real PostgreSQL, shared by
//! replicas: claims are exclusive, each webhook reaches a real HTTP
//! receiver once, a killed replica's delivery is made by another, and a
//! database that goes away stops admissions and readiness, losing nothing.
//!
//! The server comes from `scripts/postgres.sh` (`WEBPROOF_TEST_DATABASE_URL`,
//! set by `scripts/test.sh`); each test makes a database of its own. Without
//! it the tests fail under CI and are skipped, loudly, elsewhere.

mod common;
use common::pg::{self, Receiver};
use common::*;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use webproof_service::config::{ApiKeysConfig, FileConfig, ResultsConfig, WebhookConfig};
use webproof_service::results::{Backend, Store};
use webproof_service::{Addrs, Service};

const WAIT: Duration = Duration::from_secs(60);
const APP_KEY: &str = "app-backend-key";
const SECRET: &str = "a-webhook-secret-of-some-length";

/// A service on `database_url`, with one webhook to `rx` (attempt timeout
/// `timeout_ms`, so a lease of that plus a second; tiny backoffs).
fn fleet_config(env: &Env, database_url: &str, rx: &Receiver, timeout_ms: u64) -> FileConfig {
    let secret_path = env.dir.path().join("webhook.secret");
    std::fs::write(&secret_path, format!("{SECRET}\n")).unwrap();
    let mut cfg = env.config();
    cfg.results = Some(ResultsConfig {
        database_url: Some(database_url.to_string()),
        retention: "7d".into(),
        api_keys: ApiKeysConfig {
            digests: vec![hex::encode(webproof_net::verifier::api_key_digest(APP_KEY))],
            ..ApiKeysConfig::default()
        },
        ..ResultsConfig::default()
    });
    cfg.webhook = vec![WebhookConfig {
        url: rx.url(),
        secret_env: None,
        secret_file: Some(secret_path),
        allow_http: false,
        max_attempts: 100,
        timeout_secs: Duration::from_millis(timeout_ms),
        backoff_secs: Duration::from_millis(10),
        max_backoff_secs: Duration::from_millis(40),
    }];
    cfg
}

/// A replica in a runtime of its own, so that it can be killed: every
/// task it runs is dropped at once, as in a crash (nothing more is
/// written to the database, no attempt is finished).
struct Replica {
    rt: Option<tokio::runtime::Runtime>,
    addrs: Addrs,
}

impl Replica {
    async fn start(cfg: &FileConfig) -> Replica {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let cfg = cfg.build().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        rt.spawn(async move {
            let s = Service::bind(cfg).await.unwrap();
            tx.send(s.addrs()).unwrap();
            s.run(std::future::pending()).await;
        });
        let addrs = rx.await.unwrap();
        Replica {
            rt: Some(rt),
            addrs,
        }
    }

    fn tcp(&self) -> String {
        self.addrs.tcp.unwrap().to_string()
    }

    fn kill(mut self) {
        self.rt.take().unwrap().shutdown_background();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// (state, attempts) of every outbox row.
async fn outbox(url: &str) -> Vec<(String, String, i32)> {
    pg::client(url)
        .await
        .query("SELECT delivery_id, state, attempts FROM outbox", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// Stores sharing one database: migrations run once however many open it
/// at once; a row is claimed by one store only while its lease lasts, by
/// another after; a stale claimer's failure changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_are_exclusive_and_leases_expire() {
    let Some(server) = pg::server_url() else {
        return;
    };
    let url = pg::fresh_database(&server, "claims").await;
    let backend = Backend::Postgres(url.clone());
    let opened = futures::future::join_all((0..4).map(|_| Store::open(&backend))).await;
    let stores: Vec<Arc<Store>> = opened.into_iter().map(|s| Arc::new(s.unwrap())).collect();
    for s in &stores {
        assert_eq!(s.schema_version().await.unwrap(), 1);
    }
    let db = pg::client(&url).await;
    let versions: i64 = db
        .query_one("SELECT count(*) FROM schema_version", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(versions, 1);

    // 300 due rows, claimed by four stores at once in small batches.
    let e = "https://app.example/hook";
    for i in 0..300 {
        db.execute(
            "INSERT INTO outbox (delivery_id, session_id, endpoint, state, next_attempt, created_at)
             VALUES ($1, 's', $2, 'pending', 1000, 1000)",
            &[&format!("d{i:03}"), &e],
        )
        .await
        .unwrap();
    }
    let claims = futures::future::join_all(stores.iter().enumerate().map(|(n, s)| async move {
        let mut mine = Vec::new();
        // 300 rows in batches of 7: far fewer rounds than this, unless
        // claimed rows were claimable again.
        for _ in 0..200 {
            let got = s
                .claim_due(e, 2_000, 1_000_000, 7, &format!("replica-{n}"))
                .await
                .unwrap();
            if got.is_empty() {
                return mine;
            }
            mine.extend(got.into_iter().map(|d| d.delivery_id));
        }
        panic!("store {n} kept claiming: {} rows", mine.len());
    }))
    .await;
    let mut all = HashSet::new();
    for c in &claims {
        for id in c {
            assert!(all.insert(id.clone()), "{id} claimed twice");
        }
    }
    assert_eq!(all.len(), 300);
    assert!(
        claims.iter().filter(|c| !c.is_empty()).count() >= 2,
        "claims spread over the stores: {:?}",
        claims.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let (pending, failed) = stores[0].outbox_counts().await.unwrap();
    assert_eq!((pending, failed), (300, 0));

    // A lease: not due again before it ends, due after, to anyone.
    db.execute(
        "INSERT INTO outbox (delivery_id, session_id, endpoint, state, next_attempt, created_at)
         VALUES ('lease', 's', 'https://b.example/', 'pending', 1000, 1000)",
        &[],
    )
    .await
    .unwrap();
    let b = "https://b.example/";
    let got = stores[0].claim_due(b, 1_000, 5_000, 10, "a").await.unwrap();
    assert_eq!(got.len(), 1);
    assert!(stores[1]
        .claim_due(b, 4_999, 9_000, 10, "b")
        .await
        .unwrap()
        .is_empty());
    assert_eq!(stores[1].next_due(b).await.unwrap(), Some(5_000));
    let got = stores[1].claim_due(b, 5_000, 9_000, 10, "b").await.unwrap();
    assert_eq!(got.len(), 1);
    // "a" comes back late with a failure: the row is "b"'s now.
    stores[0]
        .attempt_failed("lease", "late", Some(6_000), "a")
        .await
        .unwrap();
    assert_eq!(
        stores[1].delivery_state("lease").await.unwrap(),
        Some(("pending".into(), 0))
    );
    stores[1].delivered("lease", 5_500).await.unwrap();
    assert_eq!(
        stores[2].delivery_state("lease").await.unwrap(),
        Some(("delivered".into(), 1))
    );
    assert!(stores[3]
        .claim_due(b, 100_000, 200_000, 10, "c")
        .await
        .unwrap()
        .is_empty());
}

/// Two replicas on one database, a receiver that refuses until it is up:
/// both retry the backlog, and once it is up every session is announced
/// exactly once, never two posts of a delivery at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_deliver_each_webhook_once() {
    let Some(server) = pg::server_url() else {
        return;
    };
    let url = pg::fresh_database(&server, "twice").await;
    let env = env().await;
    let rx = Receiver::start(false, false).await;
    let cfg = fleet_config(&env, &url, &rx, 2_000);
    let a = start(&cfg).await;
    let b = start(&cfg).await;
    let mut sessions = HashSet::new();
    for round in 0..4 {
        let provers = [&a, &b, &a, &b].map(|svc| {
            let o = env.prove_opts(&svc.tcp(), "/json");
            async move { webproof_net::prove(&o).await }
        });
        for out in futures::future::join_all(provers).await {
            let out = out.unwrap_or_else(|e| panic!("round {round}: {e}"));
            sessions.insert(out.session_id.unwrap().to_string());
        }
    }
    assert_eq!(sessions.len(), 16);
    // Both replicas retry against the refusing receiver for a while.
    wait_until("retries", WAIT, || rx.hits().len() >= 64).await;
    rx.up.store(true, Ordering::SeqCst);
    wait_until("every session announced", WAIT, || {
        rx.accepted_sessions().len() == 16
    })
    .await;
    // Past a lease and a poll: nothing else arrives.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let by_session = rx.accepted_sessions();
    assert_eq!(by_session.keys().cloned().collect::<HashSet<_>>(), sessions);
    assert!(by_session.values().all(|&n| n == 1), "{by_session:?}");
    let by_delivery = rx.accepted();
    assert_eq!(by_delivery.len(), 16);
    assert!(by_delivery.values().all(|&n| n == 1), "{by_delivery:?}");
    assert_eq!(rx.max_in_flight_per_delivery.load(Ordering::SeqCst), 1);
    let rows = outbox(&url).await;
    assert_eq!(rows.len(), 16);
    assert!(rows.iter().all(|(_, s, _)| s == "delivered"), "{rows:?}");
    // Both replicas did deliveries of the other's sessions or their own:
    // the refused attempts came from both.
    let (ma, mb) = (a.metrics.clone(), b.metrics.clone());
    assert!(ma.webhook_deliveries("retry") > 0 && mb.webhook_deliveries("retry") > 0);
    assert_eq!(
        ma.webhook_deliveries("delivered") + mb.webhook_deliveries("delivered"),
        16
    );
    a.stop().await;
    b.stop().await;
}

/// A replica killed mid-delivery (its post never answered): after its
/// lease, another replica delivers the webhook, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replicas_delivery_is_made_by_another_once() {
    let Some(server) = pg::server_url() else {
        return;
    };
    let url = pg::fresh_database(&server, "killed").await;
    let env = env().await;
    let rx = Receiver::start(true, true).await;
    let cfg = fleet_config(&env, &url, &rx, 2_000);
    let a = Replica::start(&cfg).await;
    let out = webproof_net::prove(&env.prove_opts(&a.tcp(), "/json"))
        .await
        .unwrap();
    let id = out.session_id.unwrap().to_string();
    // Stored, claimed, posted: the receiver holds the post; kill the replica.
    wait_until("the first post", WAIT, || rx.hits().len() == 1).await;
    a.kill();
    let rows = outbox(&url).await;
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].1.as_str(), rows[0].2), ("pending", 0));

    let b = start(&cfg).await;
    wait_until("delivered by the other replica", WAIT, || {
        rx.accepted().len() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(7)).await;
    let hits = rx.hits();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits.iter().all(|h| h.session_id == id), "{hits:?}");
    assert_eq!(hits[0].delivery_id, hits[1].delivery_id);
    assert_eq!((hits[0].status, hits[1].status), (0, 200));
    let rows = outbox(&url).await;
    assert_eq!((rows[0].1.as_str(), rows[0].2), ("delivered", 1));
    // The other replica serves the result the killed one stored.
    let (status, body) = http_request(
        b.addrs.http.unwrap(),
        &format!(
            "GET /v1/sessions/{id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {APP_KEY}\r\n\
             Connection: close\r\n\r\n"
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    b.stop().await;
}

/// The database stops: `/ready` fails saying why, new sessions are refused
/// saying why; it comes back: ready again, the stored result intact, and
/// sessions verified and stored again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_away_stops_admissions_and_loses_nothing() {
    if pg::server_url().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let own = Arc::new(
        tokio::task::spawn_blocking({
            let d = dir.path().join("pg");
            move || pg::OwnServer::start(&d)
        })
        .await
        .unwrap(),
    );
    let env = env().await;
    let rx = Receiver::start(true, false).await;
    let svc = start(&fleet_config(&env, &own.url, &rx, 2_000)).await;
    let http = svc.addrs.http.unwrap();
    assert_eq!(http_get(http, "/ready").await.0, 200);
    let out = webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap();
    let id = out.session_id.unwrap().to_string();
    wait_until("announced", WAIT, || rx.accepted().len() == 1).await;

    let o = own.clone();
    tokio::task::spawn_blocking(move || o.stop()).await.unwrap();
    let mut ready = (0, String::new());
    for _ in 0..100 {
        ready = http_get(http, "/ready").await;
        if ready.0 == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ready.0, 503, "{}", ready.1);
    assert!(
        ready.1.contains("results database unavailable"),
        "{}",
        ready.1
    );
    let e = webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("results database is unavailable"), "{e}");
    assert!(svc.metrics.failures("results_database") >= 1);

    let o = own.clone();
    tokio::task::spawn_blocking(move || o.start_again())
        .await
        .unwrap();
    let mut ready = (0, String::new());
    for _ in 0..100 {
        ready = http_get(http, "/ready").await;
        if ready.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ready.0, 200, "{}", ready.1);
    let (status, body) = http_request(
        http,
        &format!(
            "GET /v1/sessions/{id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {APP_KEY}\r\n\
             Connection: close\r\n\r\n"
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["session_id"], id);
    let out = webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap();
    let id2 = out.session_id.unwrap().to_string();
    wait_until("the new session announced", WAIT, || {
        rx.accepted_sessions().contains_key(&id2)
    })
    .await;
    svc.stop().await;
    drop(own);
    drop(dir);
}

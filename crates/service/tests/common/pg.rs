//! PostgreSQL for the fleet tests: a database of its own per test on the
//! server `scripts/postgres.sh` started (`WEBPROOF_TEST_DATABASE_URL`), or
//! a server of the test's own (to stop and start it), and a webhook
//! receiver that counts what it is sent.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The server's URL, or `None` (with a loud note) when the tests are to
/// be skipped; under CI a missing server fails the test.
pub fn server_url() -> Option<String> {
    match std::env::var("WEBPROOF_TEST_DATABASE_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "WEBPROOF_TEST_DATABASE_URL is not set, and CI is: scripts/test.sh starts \
                 PostgreSQL with scripts/postgres.sh and sets it"
            );
            eprintln!(
                "\n*** SKIPPED: no PostgreSQL (set WEBPROOF_TEST_DATABASE_URL, e.g. \
                 eval \"$(scripts/postgres.sh start)\") ***\n"
            );
            None
        }
    }
}

/// `url` naming database `db` instead.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("postgres://host/db");
    format!("{base}/{db}")
}

/// A new, empty database on the test server, for one test: its URL.
pub async fn fresh_database(server: &str, hint: &str) -> String {
    let db = format!("wp_{hint}_{:08x}", rand::random::<u32>());
    let (client, conn) = tokio_postgres::connect(server, tokio_postgres::NoTls)
        .await
        .expect("the test PostgreSQL answers");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await
        .unwrap();
    with_database(server, &db)
}

/// A client on `url` (the test's own look at the tables).
pub async fn client(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

/// `scripts/postgres.sh`.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh")
}

/// A PostgreSQL server of the test's own, in `dir`: started, stopped,
/// started again on the same port.
pub struct OwnServer {
    pub dir: PathBuf,
    pub url: String,
}

impl OwnServer {
    fn run(cmd: &str, dir: &Path) -> String {
        let out = std::process::Command::new("bash")
            .arg(script())
            .arg(cmd)
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "postgres.sh {cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A new server in `dir` (deleted when this is dropped).
    pub fn start(dir: &Path) -> OwnServer {
        let text = Self::run("start", dir);
        let url = text
            .lines()
            .find_map(|l| l.strip_prefix("export WEBPROOF_TEST_DATABASE_URL="))
            .expect("a URL")
            .to_string();
        OwnServer {
            dir: dir.to_path_buf(),
            url,
        }
    }

    /// Stop it (fast shutdown: connections are cut).
    pub fn stop(&self) {
        Self::run("stop", &self.dir);
    }

    /// Start it again, same data, same port.
    pub fn start_again(&self) {
        Self::run("start", &self.dir);
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash")
            .arg(script())
            .arg("destroy")
            .arg(&self.dir)
            .output();
    }
}

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Hit {
    pub delivery_id: String,
    pub session_id: String,
    /// The status answered; 0 while (or if never) answered.
    pub status: u16,
    /// From the verdict (`verified_at`) to this post's arrival, ms.
    pub latency_ms: i64,
    /// When it arrived.
    pub at: std::time::Instant,
}

/// An application's webhook endpoint: 503 while `up` is false, 200 once
/// it is; with `hold_first`, the first request is never answered (its
/// sender dies waiting).
#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    pub up: Arc<AtomicBool>,
    hold_first: Arc<AtomicBool>,
    /// Requests per delivery id being answered now, and the most ever at once.
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    pub max_in_flight_per_delivery: Arc<AtomicUsize>,
}

impl Receiver {
    pub async fn start(up: bool, hold_first: bool) -> Receiver {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let r = Receiver {
            addr: l.local_addr().unwrap(),
            hits: Arc::default(),
            up: Arc::new(AtomicBool::new(up)),
            hold_first: Arc::new(AtomicBool::new(hold_first)),
            in_flight: Arc::default(),
            max_in_flight_per_delivery: Arc::default(),
        };
        let r2 = r.clone();
        super::serve_http(l, move |req| {
            let r = r2.clone();
            async move { r.answer(req).await }
        });
        r
    }

    async fn answer(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let delivery_id = req
            .headers()
            .get("webproof-delivery-id")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let body = req.into_body().collect().await.unwrap().to_bytes();
        let doc: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let session_id = doc["session_id"].as_str().unwrap_or_default().to_string();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let latency_ms = now - doc["verified_at"].as_i64().unwrap_or(now);
        let i = {
            let mut hits = self.hits.lock().unwrap();
            hits.push(Hit {
                delivery_id: delivery_id.clone(),
                session_id,
                status: 0,
                latency_ms,
                at: std::time::Instant::now(),
            });
            hits.len() - 1
        };
        if self.hold_first.swap(false, Ordering::SeqCst) {
            return std::future::pending().await;
        }
        {
            let mut f = self.in_flight.lock().unwrap();
            let n = f.entry(delivery_id.clone()).or_default();
            *n += 1;
            self.max_in_flight_per_delivery
                .fetch_max(*n, Ordering::SeqCst);
        }
        // A little work, so that two posts of one delivery would overlap.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let status = if self.up.load(Ordering::SeqCst) {
            200
        } else {
            503
        };
        *self
            .in_flight
            .lock()
            .unwrap()
            .get_mut(&delivery_id)
            .unwrap() -= 1;
        self.hits.lock().unwrap()[i].status = status;
        let mut resp = Response::new(Full::new(Bytes::from_static(b"ok")));
        *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
        resp
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// Deliveries answered 2xx, by delivery id: how many times each.
    pub fn accepted(&self) -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for h in self.hits().iter().filter(|h| h.status == 200) {
            *m.entry(h.delivery_id.clone()).or_default() += 1;
        }
        m
    }

    /// Sessions announced with a 2xx, by session id: how many times each.
    pub fn accepted_sessions(&self) -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for h in self.hits().iter().filter(|h| h.status == 200) {
            *m.entry(h.session_id.clone()).or_default() += 1;
        }
        m
    }
}

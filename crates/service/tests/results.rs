//! Stored results, `/v1/sessions/{id}`, `/v1/info` and signed webhooks,
//! over real sockets: real provers against the service and the HTTPS
//! fixture, a SQLite file in a temporary directory, and a hyper HTTP
//! receiver standing in for the application.

mod common;
use common::*;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use webproof_service::config::{ApiKeysConfig, FileConfig, ResultsConfig, WebhookConfig};
use webproof_service::Outcome;

const WAIT: Duration = Duration::from_secs(30);
const APP_KEY: &str = "app-backend-key";
const SECRET: &str = "a-webhook-secret-of-some-length";

/// How a test receiver answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// 200.
    Ok,
    /// 500 to a delivery's first attempt, 200 after.
    FailFirst,
    /// 500 always.
    Fail,
    /// Never answers.
    Hang,
    /// 302 to elsewhere.
    Redirect,
    /// 503 while `up` is false, then 200.
    WhenUp,
}

/// One request the receiver got.
#[derive(Clone, Debug)]
struct Hit {
    delivery_id: String,
    signature: String,
    body: Vec<u8>,
    /// The status answered; 0 while (or if never) answered.
    status: u16,
}

#[derive(Clone)]
struct Receiver {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    up: Arc<AtomicBool>,
    /// Requests held open now (`Hang`): dropped when the service gives up.
    held: Arc<AtomicUsize>,
}

struct Held(Arc<AtomicUsize>);
impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Receiver {
    async fn start(answer: Answer) -> Receiver {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let r = Receiver {
            addr: l.local_addr().unwrap(),
            hits: Arc::default(),
            up: Arc::new(AtomicBool::new(false)),
            held: Arc::default(),
        };
        let r2 = r.clone();
        serve_http(l, move |req| {
            let r = r2.clone();
            async move { r.answer(answer, req).await }
        });
        r
    }

    async fn answer(&self, answer: Answer, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let h = |n: &str| {
            req.headers()
                .get(n)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default()
        };
        let (delivery_id, signature) = (h("webproof-delivery-id"), h("webproof-signature"));
        let body = req.into_body().collect().await.unwrap().to_bytes().to_vec();
        let i = {
            let mut hits = self.hits.lock().unwrap();
            hits.push(Hit {
                delivery_id: delivery_id.clone(),
                signature,
                body,
                status: 0,
            });
            hits.len() - 1
        };
        let earlier = self.attempts(&delivery_id) - 1;
        let status = match answer {
            Answer::Ok => 200,
            Answer::FailFirst if earlier == 0 => 500,
            Answer::FailFirst => 200,
            Answer::Fail => 500,
            Answer::Hang => {
                self.held.fetch_add(1, Ordering::SeqCst);
                let _held = Held(self.held.clone());
                std::future::pending().await
            }
            Answer::Redirect => 302,
            Answer::WhenUp if self.up.load(Ordering::SeqCst) => 200,
            Answer::WhenUp => 503,
        };
        self.hits.lock().unwrap()[i].status = status;
        let mut resp = Response::new(Full::new(Bytes::from_static(b"ok")));
        *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
        if status == 302 {
            resp.headers_mut().insert(
                hyper::header::LOCATION,
                hyper::header::HeaderValue::from_static("http://127.0.0.1:9/elsewhere"),
            );
        }
        resp
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    fn attempts(&self, delivery_id: &str) -> usize {
        self.hits()
            .iter()
            .filter(|h| h.delivery_id == delivery_id)
            .count()
    }

    /// Deliveries answered 2xx, by delivery id: how many times each.
    fn accepted(&self) -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for h in self.hits().iter().filter(|h| h.status == 200) {
            *m.entry(h.delivery_id.clone()).or_default() += 1;
        }
        m
    }
}

/// What an application's receiver does: recompute the HMAC of "<t>.<body>".
fn signature_valid(hit: &Hit, secret: &[u8]) -> bool {
    use hmac::{Hmac, Mac};
    let Some((t, v1)) = hit
        .signature
        .strip_prefix("t=")
        .and_then(|s| s.split_once(",v1="))
    else {
        return false;
    };
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(&hit.body);
    hex::decode(v1).is_ok_and(|v| mac.verify_slice(&v).is_ok())
}

/// A service storing results, with webhooks to `hooks`: (receiver,
/// attempts, attempt timeout in ms); tiny backoffs.
fn results_config(env: &Env, hooks: &[(&Receiver, u32, u64)]) -> FileConfig {
    let secret_path = env.dir.path().join("webhook.secret");
    std::fs::write(&secret_path, format!("{SECRET}\n")).unwrap();
    let mut cfg = env.config();
    let digest = hex::encode(webproof_net::verifier::api_key_digest(APP_KEY));
    cfg.results = Some(ResultsConfig {
        path: Some(PathBuf::from("results.sqlite")),
        retention: "7d".into(),
        api_keys: ApiKeysConfig {
            digests: vec![digest],
            ..ApiKeysConfig::default()
        },
        ..ResultsConfig::default()
    });
    cfg.webhook = hooks
        .iter()
        .map(|(r, attempts, timeout_ms)| WebhookConfig {
            url: r.url(),
            secret_env: None,
            secret_file: Some(secret_path.clone()),
            allow_http: false,
            max_attempts: *attempts,
            timeout_secs: Duration::from_millis(*timeout_ms),
            backoff_secs: Duration::from_millis(10),
            max_backoff_secs: Duration::from_millis(50),
        })
        .collect();
    cfg
}

async fn get_session(svc: &Running, id: &str, key: Option<&str>) -> (u16, String) {
    let auth = key
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    http_request(
        svc.addrs.http.unwrap(),
        &format!("GET /v1/sessions/{id} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"),
    )
    .await
}

/// The stored result: there as soon as the prover has its verdict (the
/// service stores it before sending the verdict).
async fn stored(svc: &Running, id: &str) -> serde_json::Value {
    let (status, body) = get_session(svc, id, Some(APP_KEY)).await;
    assert_eq!(status, 200, "session {id}: {body}");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_sessions_are_stored_served_and_announced() {
    let env = env().await;
    let rx = Receiver::start(Answer::FailFirst).await;
    let svc = start(&results_config(&env, &[(&rx, 8, 2000)])).await;
    let mut ids = Vec::new();
    for (v, mode) in [
        (svc.tcp(), webproof_net::Mode::Proxy),
        (svc.ws(), webproof_net::Mode::Mpc),
    ] {
        let mut o = env.prove_opts(&v, "/json");
        o.mode = mode;
        let out = webproof_net::prove(&o).await.unwrap();
        let id = out.session_id.expect("the service names its sessions");
        let id = id.to_string();
        assert_eq!(id.len(), 32);
        let doc = stored(&svc, &id).await;
        assert_eq!(doc["session_id"], id);
        assert_eq!(doc["mode"], mode.name());
        assert_eq!(doc["server_name"], "localhost");
        assert_eq!(doc["attestation"], serde_json::Value::Null);
        // The stored output is the one the prover rebuilt from the verdict.
        assert_eq!(doc["output"], serde_json::to_value(&out.output).unwrap());
        assert!(doc["verified_at"].as_i64().unwrap() > 1_700_000_000_000);
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);

    // Only results keys read results.
    for key in [None, Some("wrong"), Some("")] {
        let (status, body) = get_session(&svc, &ids[0], key).await;
        assert_eq!(status, 401, "{key:?}: {body}");
    }
    let (status, _) = get_session(&svc, &"0".repeat(32), Some(APP_KEY)).await;
    assert_eq!(status, 404);
    let (status, _) = get_session(&svc, &ids[0].to_uppercase(), Some(APP_KEY)).await;
    assert_eq!(status, 404);

    // Each session's webhook: a 500 first, then delivered, once, signed.
    wait_until("both deliveries accepted", WAIT, || {
        rx.accepted().len() == 2
    })
    .await;
    let m = &svc.metrics;
    wait_until("deliveries booked", WAIT, || {
        m.webhook_deliveries("delivered") == 2 && m.webhook_outbox() == (0, 0)
    })
    .await;
    let accepted = rx.accepted();
    assert!(accepted.values().all(|&n| n == 1), "{accepted:?}");
    assert_eq!(m.webhook_deliveries("retry"), 2);
    let mut announced = Vec::new();
    for hit in rx.hits() {
        assert!(
            signature_valid(&hit, SECRET.as_bytes()),
            "bad signature on {}",
            hit.delivery_id
        );
        assert!(!signature_valid(&hit, b"another-secret-of-some-length"));
        let body: serde_json::Value = serde_json::from_slice(&hit.body).unwrap();
        assert_eq!(body["delivery_id"], hit.delivery_id);
        if hit.status == 200 {
            let id = body["session_id"].as_str().unwrap().to_string();
            // The body is the stored result plus its delivery id.
            let mut doc = stored(&svc, &id).await;
            doc["delivery_id"] = hit.delivery_id.clone().into();
            assert_eq!(body, doc);
            announced.push(id);
        }
    }
    announced.sort();
    ids.sort();
    assert_eq!(announced, ids);
    let (_, metrics) = http_get(svc.addrs.http.unwrap(), "/metrics").await;
    assert!(
        metrics.contains("webproof_webhook_deliveries_total{result=\"delivered\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("webproof_webhook_delivery_latency_seconds_count 2"),
        "{metrics}"
    );
    svc.stop().await;
}

/// Endpoints that hang, fail or redirect hold up neither the next
/// session's verdict nor the other endpoints, and end failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_endpoints_hold_up_nothing_and_end_failed() {
    let env = env().await;
    let good = Receiver::start(Answer::Ok).await;
    let hang = Receiver::start(Answer::Hang).await;
    let fail = Receiver::start(Answer::Fail).await;
    let redirect = Receiver::start(Answer::Redirect).await;
    // The hanging endpoint's attempt outlasts two sessions; one attempt.
    let cfg = results_config(
        &env,
        &[
            (&hang, 1, 8000),
            (&fail, 3, 2000),
            (&redirect, 3, 2000),
            (&good, 3, 2000),
        ],
    );
    let svc = start(&cfg).await;
    let first = webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap();
    // The first session's deliveries are under way: the hanging endpoint
    // holds one open...
    wait_until("the hanging endpoint is holding a delivery", WAIT, || {
        !hang.hits().is_empty()
    })
    .await;
    // ...while the next session gets its verdict, and the good endpoint
    // hears of both.
    let second = webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap();
    // Still held: the second verdict did not wait for it.
    assert!(hang.held.load(Ordering::SeqCst) >= 1);
    wait_until("the good endpoint got both", WAIT, || {
        good.accepted().len() == 2
    })
    .await;
    // ...before the hanging endpoint's first attempt ran out of time.
    assert!(hang.held.load(Ordering::SeqCst) >= 1);
    let ids: Vec<String> = [first, second]
        .iter()
        .map(|o| o.session_id.unwrap().to_string())
        .collect();
    for hit in good.hits() {
        let body: serde_json::Value = serde_json::from_slice(&hit.body).unwrap();
        assert!(ids.contains(&body["session_id"].as_str().unwrap().to_string()));
    }
    // The bad ones: out of attempts, failed, kept in the outbox.
    let m = &svc.metrics;
    wait_until("6 deliveries failed", WAIT, || m.webhook_outbox() == (0, 6)).await;
    assert_eq!(m.webhook_deliveries("failed"), 6);
    assert_eq!(m.webhook_deliveries("retry"), 8);
    assert_eq!(m.webhook_deliveries("delivered"), 2);
    for (r, attempts) in [(&hang, 2), (&fail, 6), (&redirect, 6)] {
        assert_eq!(r.hits().len(), attempts, "{:?}", r.url());
        assert!(r.accepted().is_empty());
    }
    assert_eq!(hang.held.load(Ordering::SeqCst), 0);
    let (_, metrics) = http_get(svc.addrs.http.unwrap(), "/metrics").await;
    assert!(metrics.contains("webproof_webhook_failed 6"), "{metrics}");
    assert!(metrics.contains("webproof_webhook_pending 0"), "{metrics}");
    assert_eq!(m.sessions(Outcome::Verified), 2);
    svc.stop().await;
}

/// Stored while the receiver was down, delivered once by the next start
/// of the service on the same database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_deliveries_survive_a_restart() {
    let env = env().await;
    let rx = Receiver::start(Answer::WhenUp).await;
    let cfg = results_config(&env, &[(&rx, 100, 2000)]);
    let svc = start(&cfg).await;
    let out = webproof_net::prove(&env.prove_opts(&svc.tcp(), "/json"))
        .await
        .unwrap();
    let id = out.session_id.unwrap().to_string();
    wait_until("a refused attempt", WAIT, || !rx.hits().is_empty()).await;
    svc.stop().await;
    assert!(rx.accepted().is_empty());

    rx.up.store(true, Ordering::SeqCst);
    let svc = start(&cfg).await;
    wait_until("delivered after the restart", WAIT, || {
        rx.accepted().len() == 1
    })
    .await;
    let m = &svc.metrics;
    wait_until("booked", WAIT, || m.webhook_outbox() == (0, 0)).await;
    let (delivery, n) = rx.accepted().into_iter().next().unwrap();
    assert_eq!(n, 1);
    let hit = rx
        .hits()
        .into_iter()
        .find(|h| h.delivery_id == delivery && h.status == 200)
        .unwrap();
    assert!(signature_valid(&hit, SECRET.as_bytes()));
    let body: serde_json::Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(body["session_id"], id);
    // The result itself is still served by the new process.
    assert_eq!(stored(&svc, &id).await["session_id"], id);
    svc.stop().await;
    assert_eq!(rx.accepted().len(), 1);
}

/// `/v1/info` publishes the configured key, modes, suites and limits; an
/// attested session's stored result carries its attestation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_lists_what_the_config_allows() {
    let env = env().await;
    let key =
        webproof_attestation::keyfile::generate_signing_key(webproof_attestation::Scheme::Ed25519);
    let key_path = env.dir.path().join("verifier.key");
    webproof_attestation::keyfile::write_signing_key(&key_path, &key).unwrap();
    // The key it replaced, published as retired (a rotation).
    let old = webproof_attestation::keyfile::generate_signing_key(
        webproof_attestation::Scheme::Secp256k1,
    );
    let old_spec = format!(
        "{}:{}",
        old.verifying_key().scheme(),
        hex::encode(old.verifying_key().to_bytes())
    );
    let mut cfg = results_config(&env, &[]);
    cfg.attestation_key = Some(key_path);
    cfg.retired_attestation_keys = vec![old_spec];
    cfg.limits.max_sessions = 7;
    cfg.limits.max_sent_bytes = 12_345;
    cfg.limits.max_mpc_request_bytes = 2_000;
    let svc = start(&cfg).await;
    let (status, body) = http_get(svc.addrs.http.unwrap(), "/v1/info").await;
    assert_eq!(status, 200);
    let info: serde_json::Value = serde_json::from_str(&body).unwrap();
    let keys = info["attestation_keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0]["key_id"], key.key_id().to_string());
    assert_eq!(keys[0]["scheme"], "ed25519");
    assert_eq!(keys[0]["status"], "active");
    assert_eq!(
        keys[0]["public_key"],
        hex::encode(key.verifying_key().to_bytes())
    );
    assert_eq!(keys[1]["key_id"], old.key_id().to_string());
    assert_eq!(keys[1]["status"], "retired");
    // Each listed key parses as a trusted key for `webproof verify`.
    for k in keys {
        let spec = format!(
            "{}:{}",
            k["scheme"].as_str().unwrap(),
            k["public_key"].as_str().unwrap()
        );
        let vk: webproof_attestation::VerifyingKey = spec.parse().unwrap();
        assert_eq!(vk.key_id().to_string(), k["key_id"]);
    }
    assert_eq!(info["modes"], serde_json::json!(["proxy", "mpc"]));
    assert_eq!(info["limits"]["max_sessions"], 7);
    assert_eq!(info["limits"]["max_sent_bytes"], 12_345);
    assert_eq!(info["limits"]["max_mpc_request_bytes"], 2_000);
    assert_eq!(
        info["protocol_version"],
        webproof_proxy::protocol::PROTOCOL_VERSION
    );
    let proxy: Vec<&str> = info["suites"]["proxy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(proxy.len(), webproof_proxy::CipherSuite::ALL.len());
    assert!(proxy.contains(&"TLS13_AES_128_GCM_SHA256"), "{proxy:?}");
    let mpc = info["suites"]["mpc"].as_array().unwrap();
    assert_eq!(mpc.len(), webproof_mpc_tls::hello::SUITES.len());
    assert!(mpc
        .iter()
        .all(|s| !s.as_str().unwrap().starts_with("TLS13")));

    // An attested session: the stored result holds the signed attestation.
    let mut o = env.prove_opts(&svc.tcp(), "/json");
    o.attest = Some(Default::default());
    let out = webproof_net::prove(&o).await.unwrap();
    assert!(out.attestation.is_some());
    let doc = stored(&svc, &out.session_id.unwrap().to_string()).await;
    let a = doc["attestation"].as_str().expect("attestation stored");
    assert!(a.len() > 40, "{a}");
    svc.stop().await;

    // Without a key and with other limits, the document follows.
    let mut cfg = env.config();
    cfg.limits.max_sessions = 3;
    let svc = start(&cfg).await;
    let (_, body) = http_get(svc.addrs.http.unwrap(), "/v1/info").await;
    let info: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["attestation_keys"], serde_json::json!([]));
    assert_eq!(info["limits"]["max_sessions"], 3);
    assert_eq!(info["results_stored"], false);
    let (status, _) = get_session(&svc, &"0".repeat(32), Some(APP_KEY)).await;
    assert_eq!(status, 404);
    svc.stop().await;
}

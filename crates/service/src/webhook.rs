//! Webhook delivery: posts each outbox row ([`crate::results`]) to its
//! endpoint, signed, until a 2xx answer or the retries run out.
//!
//! At least once: a row is marked delivered only after its 2xx, so a crash
//! in between delivers it again; receivers drop duplicates by
//! `Webproof-Delivery-Id`. The signature is
//! `Webproof-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`
//! (the time in the signed text lets receivers refuse old replays).
//!
//! One dispatcher loop claims due rows per endpoint with a lease longer
//! than the attempt's timeout (so a row is never posted twice at once, by
//! this replica or another sharing the database, and a crash mid-attempt
//! retries it, here after a restart or at once elsewhere, when the lease
//! ends) and runs each
//! attempt in a task of its own, at most [`MAX_IN_FLIGHT`] per endpoint: an
//! endpoint that hangs or fails holds up only its own deliveries, never
//! sessions (which only write the outbox) nor other endpoints. Redirects
//! are not followed: a 3xx is a failed attempt.

use crate::config::Webhook;
use crate::metrics::Metrics;
use crate::results::{now_ms, Delivery, Store};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rand::Rng;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Attempts in flight per endpoint: a hanging endpoint holds this many
/// tasks and connections at most.
pub const MAX_IN_FLIGHT: usize = 16;
/// The dispatcher looks at the outbox at least this often (rows written by
/// another process, clock jumps).
const POLL: Duration = Duration::from_secs(5);

/// The signature header's value for `body` at Unix time `t`.
pub fn signature(secret: &[u8], t: u64, body: &[u8]) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// The delivery side of the outbox.
pub(crate) struct Outbox {
    store: Arc<Store>,
    metrics: Arc<Metrics>,
    /// By URL, as outbox rows name them; each with its in-flight permits.
    endpoints: HashMap<String, (Webhook, Arc<Semaphore>)>,
    client: HttpsClient,
    wake: Notify,
    /// This replica's name in the leases it takes.
    claimer: String,
}

impl Outbox {
    pub(crate) fn new(store: Arc<Store>, metrics: Arc<Metrics>, webhooks: &[Webhook]) -> Self {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            // Plain http only reaches URLs the config allowed (loopback or
            // `allow_http`).
            .https_or_http()
            .enable_http1()
            .build();
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(https);
        Outbox {
            store,
            metrics,
            endpoints: webhooks
                .iter()
                .map(|w| {
                    let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
                    (w.url.to_string(), (w.clone(), permits))
                })
                .collect(),
            client,
            wake: Notify::new(),
            claimer: claimer_name(),
        }
    }

    /// The endpoints' URLs, as outbox rows name them.
    pub(crate) fn endpoint_urls(&self) -> Vec<String> {
        self.endpoints.keys().cloned().collect()
    }

    /// New rows were written: look now.
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }

    /// The longest attempt timeout: how long a claimed row is left alone.
    fn lease(&self) -> Duration {
        self.endpoints
            .values()
            .map(|(w, _)| w.timeout)
            .max()
            .unwrap_or(Duration::from_secs(10))
            + Duration::from_secs(1)
    }

    /// Deliver until `stop`; attempts in flight then run to their end
    /// (bounded by their timeout) and are booked, so a graceful stop never
    /// leaves a delivery to be posted twice.
    pub(crate) async fn run(self: Arc<Self>, stop: CancellationToken) {
        let attempts = TaskTracker::new();
        let lease = self.lease().as_millis() as i64;
        // Rows for endpoints no longer configured would wait forever.
        match self
            .store
            .fail_unknown_endpoints(&self.endpoint_urls())
            .await
        {
            Ok(0) => {}
            Ok(n) => tracing::warn!(
                deliveries = n,
                "pending webhook deliveries to endpoints no longer configured marked failed"
            ),
            Err(e) => tracing::warn!("webhook outbox: {e}"),
        }
        loop {
            // Claim what each endpoint has room for; the next wake-up is
            // the earliest row due at an endpoint with room (a full one
            // wakes the loop as its attempts end).
            let room: Vec<(String, usize)> = self
                .endpoints
                .iter()
                .map(|(url, (_, p))| (url.clone(), p.available_permits()))
                .filter(|(_, n)| *n > 0)
                .collect();
            let claimed = async {
                let now = now_ms();
                let mut due = Vec::new();
                let mut next: Option<i64> = None;
                for (url, n) in room {
                    let got = self
                        .store
                        .claim_due(&url, now, now + lease, n, &self.claimer)
                        .await?;
                    // Filled, the endpoint has no room until an attempt
                    // ends, which wakes this loop.
                    if got.len() < n {
                        if let Some(t) = self.store.next_due(&url).await? {
                            next = Some(next.map_or(t, |x| x.min(t)));
                        }
                    }
                    due.extend(got);
                }
                let (pending, failed) = self.store.outbox_counts().await?;
                self.metrics.set_webhook_outbox(pending, failed);
                Ok::<_, crate::results::StoreError>((due, next))
            }
            .await;
            let (due, next) = match claimed {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("webhook outbox: {e}");
                    (Vec::new(), None)
                }
            };
            for d in due {
                let Some((_, permits)) = self.endpoints.get(&d.endpoint) else {
                    continue;
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    // Cannot happen (claims are sized by the free permits);
                    // the row is retried after its lease.
                    continue;
                };
                let me = self.clone();
                // Not cut short at a stop: an attempt ends within its
                // timeout, and one cut after the endpoint's 2xx but before
                // its bookkeeping would be posted again by another replica.
                attempts.spawn(async move {
                    let _permit = permit;
                    me.attempt(d).await;
                    me.wake();
                });
            }
            let wait = match next {
                Some(t) => Duration::from_millis(
                    (t.saturating_sub(now_ms())).clamp(0, POLL.as_millis() as i64) as u64,
                ),
                None => POLL,
            };
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
        attempts.close();
        attempts.wait().await;
    }

    /// One attempt at one delivery, and its bookkeeping.
    async fn attempt(&self, d: Delivery) {
        let Some((w, _)) = self.endpoints.get(&d.endpoint) else {
            // The endpoint left the configuration: nothing to post to.
            self.finish(&d, Err("endpoint no longer configured".into()), None, true)
                .await;
            return;
        };
        let result = match self.store.get(&d.session_id).await {
            Ok(Some(r)) => r,
            Ok(None) => {
                self.finish(&d, Err("result expired before delivery".into()), None, true)
                    .await;
                return;
            }
            Err(e) => {
                self.finish(&d, Err(e.to_string()), Some(w), false).await;
                return;
            }
        };
        let mut doc = result.to_json();
        doc.insert("delivery_id".into(), d.delivery_id.clone().into());
        let body = serde_json::Value::Object(doc).to_string();
        let t = now_ms() as u64 / 1000;
        let req = hyper::Request::post(w.url.clone())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(
                hyper::header::USER_AGENT,
                concat!("webproof/", env!("CARGO_PKG_VERSION")),
            )
            .header(
                "Webproof-Signature",
                signature(&w.secret, t, body.as_bytes()),
            )
            .header("Webproof-Delivery-Id", &d.delivery_id)
            .body(Full::new(Bytes::from(body)))
            .expect("a valid request");
        let outcome = tokio::time::timeout(w.timeout, async {
            let resp = self.client.request(req).await.map_err(|e| {
                // The connector's error is in the source chain.
                let mut s = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(c) = src {
                    s = format!("{s}: {c}");
                    src = c.source();
                }
                s
            })?;
            let status = resp.status();
            // Read (a bounded part of) the answer so the connection can be reused.
            let _ = http_body_util::Limited::new(resp.into_body(), 64 << 10)
                .collect()
                .await;
            if status.is_success() {
                Ok(())
            } else if status.is_redirection() {
                Err(format!("answered {status}: redirects are not followed"))
            } else {
                Err(format!("answered {status}"))
            }
        })
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {} ms", w.timeout.as_millis())));
        self.finish(&d, outcome, Some(w), false).await;
    }

    /// Record an attempt's outcome; `give_up`: fail the row whatever its count.
    async fn finish(
        &self,
        d: &Delivery,
        outcome: Result<(), String>,
        w: Option<&Webhook>,
        give_up: bool,
    ) {
        let now = now_ms();
        let (label, latency) = match &outcome {
            Ok(()) => (
                "delivered",
                Some(Duration::from_millis((now - d.created_at_ms).max(0) as u64)),
            ),
            Err(_) => {
                let last = give_up || w.is_none_or(|w| d.attempts + 1 >= w.max_attempts);
                (if last { "failed" } else { "retry" }, None)
            }
        };
        let next = match (&outcome, w) {
            (Err(_), Some(w)) if label == "retry" => {
                Some(now + backoff(w, d.attempts).as_millis() as i64)
            }
            _ => None,
        };
        match &outcome {
            Ok(()) => tracing::info!(
                delivery_id = %d.delivery_id,
                session_id = %d.session_id,
                endpoint = %d.endpoint,
                attempt = d.attempts + 1,
                "webhook delivered"
            ),
            Err(e) => tracing::warn!(
                delivery_id = %d.delivery_id,
                session_id = %d.session_id,
                endpoint = %d.endpoint,
                attempt = d.attempts + 1,
                result = label,
                "webhook attempt failed: {e}"
            ),
        }
        self.metrics.webhook_attempt(label, latency);
        let id = &d.delivery_id;
        let r = async {
            match outcome {
                Ok(()) => self.store.delivered(id, now).await?,
                Err(e) => {
                    self.store
                        .attempt_failed(id, &e, next, &self.claimer)
                        .await?
                }
            }
            self.store.outbox_counts().await
        }
        .await;
        match r {
            Ok((pending, failed)) => self.metrics.set_webhook_outbox(pending, failed),
            // The row stays claimed until its lease ends, then is retried.
            Err(e) => tracing::warn!("webhook outbox: {e}"),
        }
    }
}

/// A name for this replica's leases: host, process and a random part (two
/// services in one process are two claimers).
fn claimer_name() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".into());
    format!(
        "{host}/{}/{:08x}",
        std::process::id(),
        rand::thread_rng().gen::<u32>()
    )
}

/// The wait before retry `attempts + 1`: the base doubled per attempt made,
/// capped, with jitter (half to all of it) so that endpoints coming back
/// are not hit by every delivery at once.
fn backoff(w: &Webhook, attempts: u32) -> Duration {
    let d = w
        .backoff
        .saturating_mul(1u32 << attempts.min(20))
        .min(w.max_backoff);
    d.mul_f64(rand::thread_rng().gen_range(0.5..=1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_is_hmac_sha256_of_time_dot_body() {
        // What a receiver computes: the MAC of "<t>.<body>" with the secret.
        use hmac::{Hmac, Mac};
        let s = signature(b"0123456789abcdef", 1700000000, b"{\"a\":1}");
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(b"0123456789abcdef").unwrap();
        mac.update(b"1700000000.{\"a\":1}");
        let want = hex::encode(mac.finalize().into_bytes());
        assert_eq!(s, format!("t=1700000000,v1={want}"));
        assert_ne!(signature(b"0123456789abcdeX", 1700000000, b"{\"a\":1}"), s);
        assert_ne!(signature(b"0123456789abcdef", 1700000001, b"{\"a\":1}"), s);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let w = Webhook {
            url: "https://x.test/".parse().unwrap(),
            secret: Arc::new(vec![0; 16]),
            max_attempts: 8,
            timeout: Duration::from_secs(10),
            backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        };
        for (n, full) in [(0, 1), (1, 2), (3, 8), (5, 32), (6, 60), (30, 60)] {
            let d = backoff(&w, n);
            let full = Duration::from_secs(full);
            assert!(d <= full && d >= full / 2, "{n}: {d:?}");
        }
    }
}

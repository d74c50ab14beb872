//! The prover's options and its entry point: [`prove`] runs
//! `webproof_session`'s run for the mode on tokio ([`crate::runtime`]).
//! Every protocol decision is the session's; this module turns the
//! command line's options into the session's.

use crate::runtime::{TokioLink, TokioRuntime};
use crate::transport::{connect_verifier, TransportOptions};
use crate::Result;
use std::time::Duration;
use webproof_disclosure::attest::AttestOptions;
pub use webproof_disclosure::exchange::MAX_EXCHANGES;
pub use webproof_disclosure::http::HttpRequest;
use webproof_disclosure::http::{HttpsUrl, RevealItem};
use webproof_proxy::session::prover::ProverConfig;
use webproof_proxy::{CipherSuite, KxGroup, TlsVersion};
pub use webproof_session::prover::{Progress, ProveOutcome, ProveStats, Stage};
use webproof_session::proxy::prover::TlsOptions;

/// What to fetch and how.
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Verifier address (`host:port`).
    pub verifier: String,
    /// Server host name (or IP) for SNI, certificate and the verifier's connection.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Request target (path and query).
    pub path: String,
    /// Request method (`GET` by default).
    pub method: String,
    /// Request body (empty: none).
    pub body: Vec<u8>,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// Requests after the first (`path`, `method`, `body`, `headers`),
    /// sent in order on the same TLS connection (`--next`): in proxy mode
    /// each once the response before it is complete; in MPC mode, where
    /// the prover cannot read a response before the session ends, all in
    /// one flight (HTTP/1.1 pipelining), the responses read until the
    /// server closes after the last (`Connection: close`); at most
    /// [`MAX_EXCHANGES`] in all. Reveal items apply to every exchange
    /// unless prefixed `N/` ([`RevealItem::In`]).
    pub next: Vec<HttpRequest>,
    /// Bytes of `X-Padding` header value to add (0: none).
    pub padding: usize,
    /// Extra trusted roots (PEM) for the prover's own TLS check; webpki roots are always trusted.
    pub ca_pems: Vec<Vec<u8>>,
    /// Restrict to one TLS version.
    pub version: Option<TlsVersion>,
    /// Suites to offer (empty: all supported).
    pub suites: Vec<CipherSuite>,
    /// Groups to offer (empty: X25519, P-256).
    pub groups: Vec<KxGroup>,
    /// What to reveal (parsed where the user typed it); empty: the
    /// default, the request without its credentials and the whole response.
    pub reveal: Vec<RevealItem>,
    /// Overall timeout.
    pub timeout: Duration,
    /// API key for verifiers that require one.
    pub api_key: Option<String>,
    /// How to reach the verifier (roots for a TLS connection to it).
    pub transport: TransportOptions,
    /// Ask the verifier for a signed attestation over a commitment to the
    /// whole transcript (the verifier must have an attestation key).
    pub attest: Option<AttestOptions>,
    /// Response size (bytes) the prover expects: with the request's size
    /// it sizes the proof's preprocessing (see
    /// [`webproof_tlsproof::session::expected_cots`]). A larger response
    /// still proves, with more preprocessing during the proof.
    pub expect_response: usize,
    /// Proxy mode (the verifier relays) or MPC mode (the prover connects
    /// to the server and both parties act as the TLS client).
    pub mode: Mode,
    /// MPC mode: connect to this address instead of resolving `host`
    /// (the name is still the one sent and checked).
    pub server_addr: Option<std::net::SocketAddr>,
    /// MPC mode: the record of verifiers that cheated
    /// ([`crate::flagged`]): a verifier in it is refused, one that
    /// cheats is added. `None`: no record is kept or read.
    pub flagged_verifiers: Option<std::path::PathBuf>,
    /// MPC mode: run the session even with a verifier in the record.
    pub allow_flagged_verifier: bool,
    /// Told of each phase as it begins (none: nothing is reported).
    pub progress: Option<Progress>,
}

pub use webproof_session::Mode;

/// Default of [`ProveOptions::expect_response`].
pub use webproof_proxy::session::prover::DEFAULT_EXPECT_RESPONSE;

impl ProveOptions {
    /// Options for `url` (`https://host[:port]/path`) through `verifier`.
    pub fn new(verifier: &str, url: &str) -> Result<Self> {
        let HttpsUrl { host, port, path } = url.parse()?;
        Ok(ProveOptions {
            verifier: verifier.to_string(),
            host,
            port,
            path,
            method: "GET".into(),
            body: Vec::new(),
            headers: Vec::new(),
            next: Vec::new(),
            padding: 0,
            ca_pems: Vec::new(),
            version: None,
            suites: Vec::new(),
            groups: Vec::new(),
            reveal: Vec::new(),
            timeout: Duration::from_secs(60),
            api_key: None,
            transport: TransportOptions::default(),
            attest: None,
            expect_response: DEFAULT_EXPECT_RESPONSE,
            mode: Mode::Proxy,
            server_addr: None,
            flagged_verifiers: None,
            allow_flagged_verifier: false,
            progress: None,
        })
    }

    /// COTs the proof of this session is expected to draw (stated in the
    /// hello; see [`webproof_proxy::session::prover::expected_cots`]).
    pub fn expected_cots(&self) -> u64 {
        webproof_proxy::session::prover::expected_cots(
            self.request().len(),
            self.expect_response,
            self.version,
            &self.suites,
        )
    }

    /// Every request of the session in order: the first (`path`,
    /// `method`, `body`, `headers`), then `next`.
    pub fn requests(&self) -> Vec<HttpRequest> {
        let first = HttpRequest {
            method: self.method.clone(),
            path: self.path.clone(),
            headers: self.headers.clone(),
            body: self.body.clone(),
        };
        std::iter::once(first)
            .chain(self.next.iter().cloned())
            .collect()
    }

    /// The HTTP requests this will send, one after the other (only the
    /// last asks for `Connection: close`).
    pub fn request(&self) -> Vec<u8> {
        HttpRequest::encode_all(&self.requests(), &self.host, self.port, self.padding)
    }

    /// Refuse, before any network work, more requests than a session
    /// carries and reveal items naming an exchange past the last.
    pub fn check_requests(&self) -> Result<()> {
        let n = 1 + self.next.len();
        if n > MAX_EXCHANGES {
            return Err(webproof_session::Error::Setup(format!(
                "{n} requests: a session carries at most {MAX_EXCHANGES}"
            )));
        }
        webproof_disclosure::http::check_exchange_targets(&self.reveal, n)
            .map_err(|e| webproof_session::Error::Setup(e.to_string()))?;
        Ok(())
    }

    /// The session's configuration.
    fn session_config(&self) -> Result<ProverConfig> {
        let mut roots = webproof_proxy::RootStore::webpki_roots();
        for pem in &self.ca_pems {
            roots.add_pem(pem)?;
        }
        Ok(ProverConfig {
            host: self.host.clone(),
            port: self.port,
            api_key: self.api_key.clone(),
            request: self.request(),
            expect_response: self.expect_response,
            version: self.version,
            suites: self.suites.clone(),
            reveal: self.reveal.clone(),
            attest: self.attest.clone(),
            roots,
        })
    }
}

/// Fetch the URL through the verifier and prove the response: the run of
/// [`webproof_session`] for the mode, on tokio.
pub async fn prove(opts: &ProveOptions) -> Result<ProveOutcome> {
    opts.check_requests()?;
    match opts.mode {
        Mode::Proxy => {
            let prover = webproof_session::proxy::prover::Prover::new(
                opts.session_config()?,
                TlsOptions {
                    version: opts.version,
                    suites: opts.suites.clone(),
                    groups: opts.groups.clone(),
                    ca_pems: opts.ca_pems.clone(),
                },
                opts.progress.clone(),
            );
            let connect = async {
                let stream = connect_verifier(&opts.verifier, &opts.transport).await?;
                Ok(TokioLink::new(stream))
            };
            let rt = TokioRuntime::new();
            // Boxed as `Send` here, where every lifetime is concrete:
            // callers spawn provers on tokio's pool, and the compiler
            // cannot prove the generic run `Send` for all lifetimes of its
            // borrowed arguments.
            let run: futures::future::BoxFuture<'_, Result<ProveOutcome>> =
                Box::pin(prover.prove(&rt, &opts.verifier, connect, opts.timeout));
            run.await
        }
        // The whole-session timeout is inside: where it fires decides
        // whether the verifier is to blame.
        Mode::Mpc => crate::mpc::prove(opts).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expectation follows the first suite offered: all suites by
    /// default (AES-128-GCM first), or the caller's choice.
    #[test]
    fn expected_cots_follow_the_first_offered_suite() {
        let mut o = ProveOptions::new("127.0.0.1:1", "https://example.com/x").unwrap();
        o.expect_response = 51 << 10;
        let len = o.request().len();
        use webproof_tlsproof::{session::expected_cots, Aead};
        assert_eq!(
            o.expected_cots(),
            expected_cots(len, 51 << 10, Some(Aead::Aes128Gcm))
        );
        o.suites = vec![CipherSuite::TLS13_CHACHA20_POLY1305_SHA256];
        assert_eq!(
            o.expected_cots(),
            expected_cots(len, 51 << 10, Some(Aead::ChaCha20Poly1305))
        );
        o.suites = vec![
            CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        ];
        o.version = Some(TlsVersion::Tls13);
        assert_eq!(
            o.expected_cots(),
            expected_cots(len, 51 << 10, Some(Aead::ChaCha20Poly1305))
        );
    }
}

//! The verifier's run, shared by both modes up to admission: its settings
//! ([`VerifierConfig`]), the prover's hello and the admission decision
//! (`webproof_proxy::session::verifier`'s), the refusals, and what a
//! verified session established ([`Verified`]). After admission the
//! modes' runs take over ([`crate::proxy::verifier`],
//! [`crate::mpc::verifier`]).
//!
//! What the verifier takes from the prover here: the hello, which the
//! admission checks (version, server name, sizes, API key) before any
//! work is done or any server contacted.

use crate::frame::{recv_msg_limited, send_msg};
use crate::policy::ServerPolicy;
use crate::runtime::{timeout, Connector, Link, Runtime};
use crate::{Error, Mode, Result};
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use webproof_disclosure::VerifierOutput;
pub use webproof_proxy::protocol::SessionId;
use webproof_proxy::protocol::{
    AttestationReply, RejectKind, Rejection, VerifierMsg, MAX_CONTROL_MSG,
};
pub use webproof_proxy::session::verifier::api_key_digest;
use webproof_proxy::session::verifier::{AdmissionPolicy, VerifierSession};
use webproof_proxy::{RecorderLimits, RootStore};

/// How the verifier runs.
#[derive(Clone, Debug)]
pub struct VerifierConfig {
    /// Trusted roots for server certificates.
    pub roots: RootStore,
    /// Host names connected to a fixed address instead of resolving them.
    pub resolve: HashMap<String, IpAddr>,
    /// Relay limits.
    pub limits: RecorderLimits,
    /// Time allowed for the prover's hello and for connecting to the server.
    pub connect_timeout: Duration,
    /// Longest the relay phase may last.
    pub relay_timeout: Duration,
    /// Longest the relay may sit idle (no byte either way).
    pub idle_timeout: Duration,
    /// Time allowed for the proof phase.
    pub proof_timeout: Duration,
    /// Which server addresses may be contacted (default: public addresses
    /// only); the runtime's connector applies it to every address.
    pub server_policy: ServerPolicy,
    /// SHA-256 digests of the API keys provers must present; empty: no key needed.
    pub api_key_digests: Vec<[u8; 32]>,
    /// Largest control message accepted from a prover (bytes).
    pub max_message: usize,
    /// The key that signs attestations; `None`: this verifier attests nothing.
    pub attestation_key: Option<Arc<webproof_attestation::SigningKey>>,
    /// MPC mode: the largest request (bytes) a hello may ask this verifier
    /// to garble for. It bounds the work a prover gets for free before
    /// touching any server (about 7 MB of tables per KB of request with
    /// AES-128, more with AES-256); at most [`crate::mpc::MAX_REQUEST_LIMIT`].
    pub max_mpc_request: usize,
}

impl Default for VerifierConfig {
    fn default() -> Self {
        VerifierConfig {
            roots: RootStore::webpki_roots(),
            resolve: HashMap::new(),
            limits: RecorderLimits::default(),
            connect_timeout: Duration::from_secs(10),
            relay_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(15),
            // A 16 MiB response with hidden bytes takes about 3 minutes of
            // one core per party (measured on a shared 2-core machine, see
            // `webproof-net`'s tests/large.rs); small sessions take well
            // under a second.
            proof_timeout: Duration::from_secs(600),
            server_policy: ServerPolicy::public_only(),
            api_key_digests: Vec::new(),
            max_message: MAX_CONTROL_MSG,
            attestation_key: None,
            max_mpc_request: crate::mpc::DEFAULT_MAX_REQUEST,
        }
    }
}

impl VerifierConfig {
    /// Require provers to present `key` (may be called for several keys).
    pub fn require_api_key(&mut self, key: &str) {
        self.api_key_digests.push(api_key_digest(key));
    }
}

/// What runs with a verified session before its verdict is sent (a service
/// stores the result there, so that the id the prover receives already
/// names a stored result). It delays the verdict: keep it short.
pub type BeforeVerdict<'a> =
    Box<dyn FnOnce(Verified) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> + Send + 'a>;

/// What a verified session established, as a service keeps it.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The id the verdict gave the prover.
    pub session_id: SessionId,
    /// How the session ran.
    pub mode: Mode,
    /// The verified output (with the disclosed bytes).
    pub output: VerifierOutput,
    /// The attestation sent with the verdict, if the prover asked for one.
    pub attestation: Option<AttestationReply>,
}

/// One session with a connected prover, under `session_id` (the caller
/// draws it, so that it can log and keep the session under the id the
/// prover receives): the hello and its admission, then the mode's run.
/// `server` reaches the server the prover names (under
/// [`VerifierConfig::server_policy`] and [`VerifierConfig::resolve`]);
/// `before_verdict` runs with a verified session before its verdict goes
/// out.
pub async fn verify<R: Runtime, L: Link, C: Connector>(
    rt: &R,
    mut link: L,
    server: &C,
    cfg: &VerifierConfig,
    session_id: SessionId,
    before_verdict: Option<BeforeVerdict<'_>>,
) -> Result<Verified> {
    let mut session = VerifierSession::new();
    let hello = timeout(
        rt,
        cfg.connect_timeout,
        "waiting for the prover's hello",
        recv_msg_limited(&mut link, "hello", cfg.max_message),
    )
    .await?;
    let policy = AdmissionPolicy {
        api_key_digests: cfg.api_key_digests.clone(),
    };
    let admitted = match session.on_hello(hello, &policy) {
        Ok(a) => a,
        Err(r) => return Err(refuse(rt, &mut link, r).await),
    };
    let (run, mode) = match admitted.mpc {
        Some(terms) => (
            crate::mpc::verifier::run(rt, link, server, cfg, admitted, terms).await,
            Mode::Mpc,
        ),
        None => (
            crate::proxy::verifier::run(rt, link, server, cfg, session, admitted).await,
            Mode::Proxy,
        ),
    };
    let concluded = run?;
    conclude(concluded, mode, session_id, before_verdict).await
}

/// A mode's run up to its verdict: the verdict to send and the link to
/// send it on (unless the link itself failed), the outcome and the
/// attestation.
pub(crate) struct Concluded<L> {
    pub verdict: VerifierMsg,
    pub link: Result<L>,
    pub output: Result<VerifierOutput>,
}

/// Name the verdict with the session's id, run `before_verdict` with a
/// verified session, send the verdict and close the link.
async fn conclude<L: AsyncWrite + Unpin>(
    c: Concluded<L>,
    mode: Mode,
    session_id: SessionId,
    before_verdict: Option<BeforeVerdict<'_>>,
) -> Result<Verified> {
    let Concluded {
        mut verdict,
        link,
        output,
    } = c;
    let attestation = match &mut verdict {
        VerifierMsg::Verdict {
            attestation,
            session_id: id,
            ..
        } => {
            *id = Some(session_id);
            attestation.clone()
        }
        _ => None,
    };
    match link {
        Ok(mut link) => {
            let verified = output.map(|output| Verified {
                session_id,
                mode,
                output,
                attestation,
            });
            if let (Ok(v), Some(f)) = (&verified, before_verdict) {
                f(v.clone()).await;
            }
            // The prover may already be gone; the verdict stands either way.
            let _ = send_msg(&mut link, &verdict).await;
            let _ = link.close().await;
            verified
        }
        // The link is done (lost, or the engine failed on it): the
        // outcome stands.
        Err(lost) => Err(output.err().unwrap_or(lost)),
    }
}

/// Put the session's id on a verdict sent before the proof concluded.
pub(crate) fn name_session(verdict: &mut VerifierMsg, id: Option<SessionId>) {
    if let VerifierMsg::Verdict { session_id, .. } = verdict {
        *session_id = id;
    }
}

/// Refuse the session with `why`; the error the verifier reports.
pub(crate) async fn refuse<R: Runtime, S: AsyncRead + AsyncWrite + Unpin>(
    rt: &R,
    prover: &mut S,
    why: Rejection,
) -> Error {
    refuse_session(prover, why.clone()).await;
    // Read away what the prover sent with its hello (its first
    // preprocessing message) until it hangs up, briefly, so that closing
    // with unread input does not reset the connection before the prover
    // has read why.
    drain(rt, prover, Duration::from_millis(500)).await;
    match why.kind {
        RejectKind::Unauthorized => Error::Unauthorized(why.detail),
        _ => Error::Refused(why),
    }
}

/// Tell a prover that its session is refused (a service uses this when it
/// is at capacity or shutting down). Best effort: the prover may be gone.
pub async fn refuse_session<S: AsyncWrite + Unpin>(prover: &mut S, why: Rejection) {
    let _ = send_msg(prover, &VerifierMsg::Refused(why)).await;
    let _ = prover.flush().await;
}

/// Read and discard what the prover still sends, up to its close, a time
/// limit, or 256 MiB; then close this side.
pub(crate) async fn drain<R: Runtime, S: AsyncRead + AsyncWrite + Unpin>(
    rt: &R,
    prover: &mut S,
    limit: Duration,
) {
    let mut buf = vec![0u8; 64 << 10];
    let _ = timeout(rt, limit, "draining the prover's link", async {
        let mut total = 0usize;
        while total < 256 << 20 {
            match prover.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
        Ok(())
    })
    .await;
    let _ = prover.close().await;
}

/// The server connection failed: the refusal to send on the relay stream.
pub(crate) fn unreachable(host: &str, port: u16, e: &Error) -> Rejection {
    let kind = match e {
        Error::Forbidden(_) => RejectKind::Forbidden,
        Error::Timeout(_) => RejectKind::Timeout,
        _ => RejectKind::Unreachable,
    };
    Rejection::new(kind, format!("cannot reach {host}:{port}: {e}"))
}

//! MPC mode on tokio: the prover's entry point and the plans a verifier
//! builds ahead. Both parties' runs (hello, preprocessing, the 2PC
//! session, the proof, the verdict, who is to blame) are
//! `webproof_session::mpc`'s, the same code a page runs; here the prover
//! gets tokio, TCP to the server and the record of flagged verifiers
//! ([`crate::flagged`]), and the verifier's run is reached through
//! [`crate::verifier::verify_session`] (a hello with `mpc` set takes it).
//! The link, phase by phase, is in `webproof_session::mpc`'s docs and
//! `docs/protocol/mpc.md`.

use crate::prover::{ProveOptions, ProveOutcome};
use crate::runtime::{TcpConnector, TokioLink, TokioRuntime};
use crate::transport::connect_verifier;
use crate::{NetError, Result};
use webproof_mpc_tls as mpc;
use webproof_session::mpc::prover::{Prover, Request};

pub use webproof_session::mpc::{DEFAULT_MAX_REQUEST, MAX_REQUEST_LIMIT};

/// Build the MPC key derivation's garbling plans for this process (see
/// [`webproof_mpc_tls::warm_plans`]); a verifier service runs this once when
/// it binds (`webproof_service::Service::bind`), so no session waits for them.
pub fn warm_plans() {
    if let Err(e) = mpc::warm_plans() {
        tracing::warn!(error = %e, "building the MPC plans ahead failed; sessions build them");
    }
}

pub use webproof_session::mpc::prover::{blame, Stage};

/// The prover's MPC session: [`crate::prove`] with `opts.mode` MPC, run by
/// [`webproof_session::mpc::prover`] on tokio. Refuses a verifier in the
/// flagged-verifier record (unless allowed); records one that stops
/// before the audit or fails it ([`blame`]).
pub(crate) async fn prove(opts: &ProveOptions) -> Result<ProveOutcome> {
    let record = opts
        .flagged_verifiers
        .as_ref()
        .map(crate::flagged::FlaggedVerifiers::at);
    if let Some(r) = &record {
        if let Some(f) = r.find(&opts.verifier, None)? {
            if !opts.allow_flagged_verifier {
                return Err(NetError::FlaggedVerifier {
                    verifier: opts.verifier.clone(),
                    reason: f.reason,
                    path: r.path().display().to_string(),
                });
            }
            tracing::warn!(verifier = %opts.verifier, reason = %f.reason,
                "running an MPC session with a verifier recorded as cheating, as asked");
        }
    }
    let prover = Prover::new(
        Request {
            host: opts.host.clone(),
            port: opts.port,
            request: opts.request(),
            version: opts.version,
            suites: opts.suites.clone(),
            groups: opts.groups.clone(),
            api_key: opts.api_key.clone(),
            reveal: opts.reveal.clone(),
            attest: opts.attest.clone(),
        },
        opts.progress.clone(),
    )?;
    let connect = async {
        let stream = connect_verifier(&opts.verifier, &opts.transport).await?;
        Ok(TokioLink::new(stream))
    };
    let record_it = |reason: &str| match &record {
        Some(r) => match r.record(&opts.verifier, None, reason) {
            Ok(_) => format!(
                "it is recorded in {} and refused from now on",
                r.path().display()
            ),
            Err(re) => format!("recording it failed ({re}): do not use it again"),
        },
        None => "no flagged-verifier record is kept here: do not use it again".into(),
    };
    let rt = TokioRuntime::new();
    let server = TcpConnector {
        at: opts.server_addr,
    };
    // Boxed as `Send` here, where every lifetime is concrete: callers
    // spawn provers on tokio's pool, and the compiler cannot prove the
    // generic run `Send` for all lifetimes of its borrowed arguments.
    let run: futures::future::BoxFuture<'_, Result<ProveOutcome>> = Box::pin(prover.prove(
        &rt,
        &opts.verifier,
        connect,
        &server,
        opts.timeout,
        record_it,
    ));
    run.await
}

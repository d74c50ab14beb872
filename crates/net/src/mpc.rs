//! MPC mode on tokio: the verifier's driver, and the prover's entry
//! point. The prover's run itself (hello, preprocessing, the 2PC session
//! with the server, the proof, the verdict, who is to blame) is
//! `webproof_session::mpc::prover`'s, the same code a page runs; here it
//! gets tokio, TCP to the server and the record of flagged verifiers
//! ([`crate::flagged`]). Same link, same hello, same verdict as proxy
//! mode: a hello with `mpc` set takes this path
//! ([`crate::verifier::handle_prover_io`] dispatches). The link, phase by
//! phase, is in `webproof_session::mpc`'s docs and `docs/protocol/mpc.md`.
//!
//! The verifier's side: the hello's request length capped
//! ([`VerifierConfig::max_mpc_request`]); SoftSpokenOT with this party as
//! the COT sender (its `Δ` is the garbler's, the OLEs' and the proof's);
//! the session's messages on the mux's relay stream, full duplex (the
//! prover's garbling of the request's keystream comes up while this
//! party's tables go down; the record circuits' schedules built on a
//! blocking thread meanwhile), the proof's Ferret setup on its
//! preprocessing stream; the proof of the response; the verdict and, with
//! a key, the attestation over what the proof established. Every protocol
//! decision is `webproof_mpc_tls`'s; this module moves frames, keeps time
//! and enforces timeouts and sizes.

use crate::frame::{send_msg, write_frame, FrameReader};
use crate::prover::{ProveOptions, ProveOutcome};
use crate::runtime::{TcpConnector, TokioLink, TokioRuntime};
use crate::transport::connect_verifier;
use crate::verifier::{BeforeVerdict, SessionId, Verified, VerifierConfig};
use crate::{timeout, NetError, Result};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::compat::TokioAsyncReadCompatExt;
use webproof_core::cot::RandomCotSender;
use webproof_core::Channel;
use webproof_mpc_tls as mpc;
use webproof_mpc_tls::{cots_needed, CotPool};
use webproof_ot::SoftSpokenSender;
use webproof_proxy::protocol::{MpcHello, RejectKind, Rejection, VerifierMsg};
use webproof_proxy::VerifyConfig;
use webproof_session::mpc::prover::{Prover, Request, DUPLEX_QUEUE};
use webproof_session::mpc::{channel_back, engine_error, proof_config, proof_cots, warm_up_draw};

/// Default of [`VerifierConfig::max_mpc_request`]: a request of 4 KiB
/// (headers with a few cookies or tokens) and no more tables than that.
pub const DEFAULT_MAX_REQUEST: usize = 4 << 10;
/// The most [`VerifierConfig::max_mpc_request`] may be: the largest
/// request the session's COT budget covers.
pub const MAX_REQUEST_LIMIT: usize = mpc::cots::MAX_REQUEST;

/// Largest session message the verifier accepts: a server flight the
/// prover forwards, bounded by the recorder's limits, or a step's flips.
const MAX_FROM_PROVER: usize = 32 << 20;

/// Build the MPC key derivation's garbling plans for this process (see
/// [`webproof_mpc_tls::warm_plans`]); a verifier service runs this once when
/// it binds (`webproof_service::Service::bind`), so no session waits for them.
pub fn warm_plans() {
    if let Err(e) = mpc::warm_plans() {
        tracing::warn!(error = %e, "building the MPC plans ahead failed; sessions build them");
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

// ---------------------------------------------------------------- verifier

/// The verifier's MPC session with an admitted prover (the hello's
/// `Accepted` not sent yet): preprocessing, the 2PC session, the proof of
/// the response, the verdict.
pub(crate) async fn verify<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    mut prover: S,
    host: String,
    port: u16,
    terms: MpcHello,
    cfg: &VerifierConfig,
    session_id: SessionId,
    before_verdict: Option<BeforeVerdict<'_>>,
) -> Result<Verified> {
    // The hello's request length decides every table garbled before the
    // prover touches a server (the COTs, and so the record circuits, are
    // sized from it): capped by this verifier's setting.
    let limit = cfg.max_mpc_request.min(MAX_REQUEST_LIMIT);
    let request_len = match usize::try_from(terms.request_len) {
        Ok(n) if (1..=limit).contains(&n) => n,
        _ => {
            let why = Rejection::new(
                RejectKind::SessionSize,
                format!(
                    "this verifier takes MPC requests of 1 to {limit} bytes, not {}: send a \
                     shorter request, or ask its operator to raise the limit (limits.\
                     max_mpc_request_bytes in verifier.toml, webproof serve \
                     --max-mpc-request-bytes; at most {MAX_REQUEST_LIMIT})",
                    terms.request_len
                ),
            );
            // After the hello came SoftSpokenOT's first message: read it
            // away, so the refusal is not lost to a reset.
            return Err(crate::verifier::refuse(&mut prover, why).await);
        }
    };
    send_msg(&mut prover, &VerifierMsg::Accepted).await?;
    // Preprocessing: this party is the COT sender.
    let mut ch = Channel::new(prover.compat());
    let (sender, keys) = timeout(cfg.connect_timeout, "the MPC preprocessing", async {
        let mut s = SoftSpokenSender::setup(&mut ch, &mut rand::rngs::OsRng)
            .await
            .map_err(|e| engine_error("the MPC preprocessing", e))?;
        let mut keys = Vec::new();
        s.extend(&mut ch, cots_needed(request_len), &mut keys)
            .await
            .map_err(|e| engine_error("the MPC preprocessing", e))?;
        Ok((s, keys))
    })
    .await?;
    let prover = channel_back(ch.into_inner().await, "the MPC preprocessing")?.into_inner();

    let time = unix_now();
    let session_cfg = mpc::VerifierConfig {
        verify: VerifyConfig {
            roots: cfg.roots.clone(),
            server_name: host.clone(),
            port,
            time,
        },
        limits: cfg.limits,
    };
    let mut session = mpc::VerifierSession::new(
        session_cfg,
        sender.delta(),
        CotPool::new(keys),
        &mut rand::rngs::OsRng,
    );
    // The proof's COTs share the garbler's `Δ` (the same SoftSpokenOT
    // sender); their setup runs beside the session, on the link's second
    // stream, so the proof after it starts with them ready.
    let cot = webproof_ferret::FerretSender::new(proof_cots(), sender, &mut rand::rngs::OsRng)
        .map_err(|e| engine_error("the proof setup", e))?;
    let (cot, mut prover) = crate::mux::run(prover, |s| {
        let session = &mut session;
        async move {
            let crate::mux::Streams {
                relay,
                preprocessing,
            } = s;
            // A task of its own: Ferret computes in long stretches, which
            // must not hold up the session's round trips.
            let warm = tokio::spawn(timeout(
                cfg.proof_timeout,
                "the proof setup",
                warm_up_sender(cot, preprocessing),
            ));
            // Dropped (the session failed first), the task ends too.
            let warm = crate::AbortOnDrop(warm).join("the proof setup task");
            let run = timeout(
                cfg.relay_timeout,
                "the MPC session",
                run_verifier_session(session, relay, cfg),
            );
            let ((), cot) = tokio::try_join!(run, warm)?;
            Ok(cot)
        }
    })
    .await?;
    let outcome = session.finish()?;

    // The proof of the response, on a channel that borrows the link: the
    // verdict follows on the link itself.
    let ch = Channel::new((&mut prover).compat());
    let proved = timeout(cfg.proof_timeout, "the proof of the response", async {
        let can_attest = cfg.attestation_key.is_some();
        mpc::verify_response(
            cot,
            ch,
            proof_config(),
            &outcome,
            can_attest,
            &mut rand::rngs::OsRng,
        )
        .await
        .map_err(NetError::Mpc)
    })
    .await;
    let concluded = proved.and_then(|verified| {
        let out = mpc::verifier_output(&outcome, &verified, &host, time).map_err(NetError::Mpc)?;
        // A claim with leaves reached the proof only if this verifier
        // holds a key (`verify_response` refused it otherwise).
        let signed = match &cfg.attestation_key {
            Some(key) if !verified.leaves.is_empty() => {
                Some(mpc::attestation(key, &outcome, &verified, &out).map_err(NetError::Mpc)?)
            }
            _ => None,
        };
        Ok((out, signed))
    });
    let (result, attestation) = match concluded {
        Ok((out, signed)) => (Ok(out), signed),
        Err(e) => (Err(e), None),
    };
    let verdict = VerifierMsg::Verdict {
        result: match &result {
            Ok(out) => Ok(out.digested()),
            Err(NetError::Mpc(e)) => Err(mpc::output::rejection(e)),
            Err(e) => Err(Rejection::new(RejectKind::Protocol, e.to_string())),
        },
        attestation: attestation.clone(),
        session_id: Some(session_id),
    };
    let verified = result.map(|output| Verified {
        session_id,
        mode: crate::Mode::Mpc,
        output,
        attestation,
    });
    if let (Ok(v), Some(f)) = (&verified, before_verdict) {
        f(v.clone()).await;
    }
    // The prover may already be gone; the outcome stands either way.
    let _ = send_msg(&mut prover, &verdict).await;
    let _ = prover.shutdown().await;
    verified
}

/// The session's messages on the mux's relay stream until it is closed,
/// the garbled tables streamed after the `Hello`; the stream is shut down
/// at the end so the multiplexed section can close.
///
/// Full duplex: the prover's garbling of the request's keystream (dual
/// execution) streams up while this party's tables stream down, so frames
/// are written by a writer of their own ([`duplex_writer`]) and the
/// prover's frames are read between the tables, never after them.
async fn run_verifier_session<L: AsyncRead + AsyncWrite + Unpin>(
    session: &mut mpc::VerifierSession,
    prover: L,
    cfg: &VerifierConfig,
) -> Result<()> {
    let (mut rd, wr) = tokio::io::split(prover);
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(DUPLEX_QUEUE);
    let logic = async move {
        let r = verifier_session_logic(session, &mut rd, &tx, cfg).await;
        // The writer ends once its queue is dropped and drained.
        drop(tx);
        r
    };
    let (r, w) = tokio::join!(logic, duplex_writer(wr, rx));
    // Shut down however the session ended, so the mux's section closes.
    let w = match w {
        Ok(mut wr) => {
            let _ = wr.shutdown().await;
            Ok(())
        }
        Err(e) => Err(e),
    };
    r.and(w)
}

/// Write every frame of `rx` in order, until every sender is gone; the
/// stream comes back for the caller to go on with or shut down.
async fn duplex_writer<W: AsyncWrite + Unpin>(
    mut wr: W,
    mut rx: tokio::sync::mpsc::Receiver<Vec<u8>>,
) -> Result<W> {
    while let Some(f) = rx.recv().await {
        write_frame(&mut wr, &f).await?;
    }
    Ok(wr)
}

/// Queue one frame for the writer.
async fn queue(tx: &tokio::sync::mpsc::Sender<Vec<u8>>, frame: Vec<u8>) -> Result<()> {
    tx.send(frame)
        .await
        .map_err(|_| NetError::Disconnected("the link closed while writing".into()))
}

async fn verifier_session_logic<R: AsyncRead + Unpin>(
    session: &mut mpc::VerifierSession,
    rd: &mut R,
    tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
    cfg: &VerifierConfig,
) -> Result<()> {
    // The record circuits' schedules, built on a blocking thread while
    // the key derivation's tables are garbled and sent.
    let mut record_plans: Option<tokio::task::JoinHandle<mpc::Result<Vec<mpc::RecordPlan>>>> = None;
    let mut frames = FrameReader::new(MAX_FROM_PROVER);
    // Whether the session may have tables to stream (after each prover
    // message, until `next_tables` says none).
    let mut tables = false;
    while !session.is_closed() {
        let step = tokio::select! {
            // The prover's next message; its idle timeout restarts with
            // every event, so streaming tables is not idleness.
            f = timeout(
                cfg.idle_timeout,
                "waiting for the prover's next MPC message",
                frames.next(rd),
            ) => {
                let frame = f?.ok_or_else(|| NetError::Disconnected("the prover hung up mid-session".into()))?;
                let t = Instant::now();
                let step = session.on_bytes(&frame);
                tracing::debug!(
                    bytes = frame.len(),
                    cpu_us = t.elapsed().as_micros() as u64,
                    "mpc: prover message in"
                );
                tables = true;
                step
            }
            // After the `Setup`, the garbled tables chunk by chunk: each
            // is garbled while the ones before are on the wire.
            permit = tx.reserve(), if tables => {
                let permit = permit
                    .map_err(|_| NetError::Disconnected("the link closed while writing".into()))?;
                if record_plans.is_none() {
                    let jobs = session.record_plan_jobs();
                    if !jobs.is_empty() {
                        record_plans = Some(tokio::task::spawn_blocking(move || {
                            jobs.into_iter().map(mpc::RecordPlanJob::build).collect()
                        }));
                    }
                }
                if session.wants_record_plan() {
                    if let Some(build) = record_plans.as_mut() {
                        let built = build.await.map_err(|e| NetError::Io {
                            context: "building the record circuits' schedules".into(),
                            source: std::io::Error::other(e),
                        })?;
                        record_plans = None;
                        for plan in built.map_err(NetError::Mpc)? {
                            session.provide_record_plan(plan).map_err(NetError::Mpc)?;
                        }
                    }
                }
                match session.next_tables() {
                    Ok(Some(m)) => {
                        tracing::trace!(message = m.name(), "mpc: to the prover");
                        permit.send(m.encode());
                        Ok(vec![])
                    }
                    Ok(None) => {
                        tables = false;
                        Ok(vec![])
                    }
                    Err(e) => Err(e),
                }
            }
        };
        match step {
            Ok(out) => {
                for m in &out {
                    tracing::trace!(message = m.name(), "mpc: to the prover");
                    queue(tx, m.encode()).await?;
                }
            }
            Err(e) => {
                let why = mpc::output::rejection(&e);
                // Best effort: the prover may be gone (or the one who aborted).
                if !matches!(e, mpc::Error::Aborted(_)) {
                    let _ = tx.try_send(mpc::VerifierMsg::Abort(why.to_string()).encode());
                }
                return Err(NetError::Mpc(e));
            }
        }
    }
    Ok(())
}

/// Ferret's setup iteration and first main iteration for the proof, on
/// the mux's preprocessing stream (the same draw as proxy mode's warm-up,
/// [`warm_up_draw`]); the stream is shut down at the end.
async fn warm_up_sender(
    mut cot: webproof_ferret::FerretSender<SoftSpokenSender>,
    io: tokio::io::DuplexStream,
) -> Result<webproof_ferret::FerretSender<SoftSpokenSender>> {
    let mut ch = Channel::new(io.compat());
    RandomCotSender::extend(&mut cot, &mut ch, warm_up_draw(), &mut Vec::new())
        .await
        .map_err(|e| engine_error("the proof setup", e))?;
    crate::mux::close_channel(ch).await?;
    Ok(cot)
}

// ------------------------------------------------------------------ prover

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

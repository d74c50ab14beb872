//! MPC mode's drivers: the prover connects to the server itself and, with
//! the verifier, acts as the TLS 1.2 client in two-party computation
//! (`webproof_mpc_tls`); then it proves the response. Same link, same
//! hello, same verdict as proxy mode: a hello with `mpc` set takes this
//! path ([`crate::verifier::handle_prover_io`] dispatches).
//!
//! # The link, phase by phase
//! 1. **Hello** (JSON, proxy mode's `ProverMsg::Hello` with
//!    [`MpcHello`]: the request's length) → `Accepted` or `Refused`.
//!    SoftSpokenOT's first message (the base-OT sender's) follows the
//!    hello in the same flight, unasked, as in proxy mode.
//! 2. **Preprocessing**: SoftSpokenOT setup and the session's correlated
//!    OTs ([`cots_needed`] of the request's length), the verifier being
//!    the COT sender: its `Δ` is the garbler's, the OLEs' and the proof's.
//! 3. **Session**, in a multiplexed section of the link (proxy mode's
//!    [`crate::mux`]) with two streams:
//!    - the *relay* stream: `webproof_mpc_tls` messages, one per frame,
//!      until the verifier's `CloseAck`. Its first flight is still
//!      preprocessing: the session's `Hello` names the terms, the
//!      verifier answers with `Setup` and every garbled table (the
//!      record circuits' schedules built on a blocking thread meanwhile),
//!      and only then does the prover connect to the server and send the
//!      ClientHello the session gives it; from there the prover moves the
//!      server's bytes. A party whose session fails sends `Abort` with
//!      the reason and hangs up.
//!    - the *preprocessing* stream: the proof's Ferret, on the same
//!      SoftSpokenOT correlation (so the same `Δ`), runs its setup
//!      iteration with its check and its first main iteration. The mux
//!      sends relay bytes first, so this stream fills the link's idle
//!      moments (mostly the online phase's waits on the server) and the
//!      proof no longer starts with that work. Nothing of it is used
//!      before the proof, which comes after the session is closed.
//! 4. **Proof of the response** (`webproof_mpc_tls::response`) on a
//!    `Channel` over the link, the COT extensions going on.
//! 5. **Verdict** (JSON, proxy mode's `VerifierMsg::Verdict`): the output
//!    ([`webproof_mpc_tls::verifier_output`], every field from the
//!    verifier's own recording) or the rejection; with `--attest`, the
//!    attestation over the leaves the proof established
//!    ([`webproof_mpc_tls::attestation`]), which the prover checks against
//!    its own commitment and keeps as proxy mode's bundle.
//!
//! Every protocol decision is `webproof_mpc_tls`'s; this module moves
//! frames and the server's bytes, keeps time and enforces timeouts and
//! sizes (the verifier's cap on the request a hello may ask tables for,
//! the prover's bound on frames queued early). It also decides whom a
//! prover-side failure blames ([`blame`]): a verifier that stops after
//! the prover's `Close` and before the audit, or fails the audit, is
//! reported as cheating and kept in [`crate::flagged`]'s record.

use crate::frame::{recv_msg, recv_msg_limited, send_msg, write_frame, Counted, FrameReader};
use crate::prover::{ProveOptions, ProveOutcome, ProveStats};
use crate::transport::connect_verifier;
use crate::verifier::{BeforeVerdict, SessionId, Verified, VerifierConfig};
use crate::{timeout, NetError, Result};
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::compat::TokioAsyncReadCompatExt;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::Channel;
use webproof_mpc_tls as mpc;
use webproof_mpc_tls::{cots_needed, CotPool, ResponseClaim};
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};
use webproof_proxy::protocol::{
    MpcHello, ProverMsg, RejectKind, Rejection, VerifierMsg, MAX_VERDICT_MSG, PROTOCOL_VERSION,
};
use webproof_proxy::{Direction, RecorderLimits, VerifyConfig};

/// Default of [`VerifierConfig::max_mpc_request`]: a request of 4 KiB
/// (headers with a few cookies or tokens) and no more tables than that.
pub const DEFAULT_MAX_REQUEST: usize = 4 << 10;
/// The most [`VerifierConfig::max_mpc_request`] may be: the largest
/// request the session's COT budget covers.
pub const MAX_REQUEST_LIMIT: usize = mpc::cots::MAX_REQUEST;

/// Largest session message the prover accepts (the garbled tables come
/// in chunks; the OLE answers of a 16 KB request record are the largest).
const MAX_FROM_VERIFIER: usize = mpc::msg::MAX_MESSAGE;
/// Largest session message the verifier accepts: a server flight the
/// prover forwards, bounded by the recorder's limits, or a step's flips.
const MAX_FROM_PROVER: usize = 32 << 20;

/// The proof engine's settings, the same on both sides (the COT batch
/// size decides when both extend).
fn proof_config() -> webproof_zk::Config {
    webproof_zk::Config {
        cot_batch: 1 << 18,
        ..webproof_zk::Config::default()
    }
}

/// Build the MPC key derivation's garbling plans for this process (see
/// [`webproof_mpc_tls::warm_plans`]); a verifier service runs this once when
/// it binds (`webproof_service::Service::bind`), so no session waits for them.
pub fn warm_plans() {
    if let Err(e) = mpc::warm_plans() {
        tracing::warn!(error = %e, "building the MPC plans ahead failed; sessions build them");
    }
}

/// COTs the proof of the response is sized for; more run further Ferret
/// iterations, each a whole one (about 0.5 s on Cable). A 1 KB request and
/// a 2 KB response revealed but for a byte need between 2^18 and 2^19 with
/// Ferret's reserve since no circuit is proven again; 2^19 measured 20 ms
/// faster on Cable, but a fixed budget that small would cost a further
/// iteration for responses a few KB larger. Sizing it per session from the
/// recording, the same on both sides, would take that gain.
const PROOF_COTS: u64 = 1 << 20;

/// The silent COT extension of the proof, the same on both sides: Ferret
/// on the session's SoftSpokenOT, so `Δ` stays the garbler's and the
/// prover uploads a fraction of a bit per COT instead of SoftSpokenOT's
/// tens.
fn proof_cots() -> webproof_ferret::FerretConfig {
    webproof_tlsproof::SessionConfig::sized(PROOF_COTS).ferret
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn engine_error(phase: &str, e: webproof_core::Error) -> NetError {
    crate::proof_step_error("the peer", phase, e, |e| NetError::Engine {
        phase: phase.to_string(),
        source: e,
    })
}

fn channel_back<T>(
    r: core::result::Result<T, webproof_core::ChannelError>,
    after: &str,
) -> Result<T> {
    r.map_err(|e| NetError::Disconnected(format!("after {after}: {e}")))
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

/// Frames queued for [`duplex_writer`]: a few chunks of tables, so a peer
/// that stops reading stops the garbling too, not only the socket.
const DUPLEX_QUEUE: usize = 4;

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

/// The prover's side of [`warm_up_sender`].
async fn warm_up_receiver(
    mut cot: webproof_ferret::FerretReceiver<SoftSpokenReceiver>,
    io: tokio::io::DuplexStream,
) -> Result<webproof_ferret::FerretReceiver<SoftSpokenReceiver>> {
    let mut ch = Channel::new(io.compat());
    RandomCotReceiver::extend(&mut cot, &mut ch, warm_up_draw(), &mut Vec::new())
        .await
        .map_err(|e| engine_error("the proof setup", e))?;
    crate::mux::close_channel(ch).await?;
    Ok(cot)
}

/// COTs both sides draw, and drop, beside the session: one past the setup
/// iteration's surplus, so Ferret runs its setup iteration (with its
/// check) and its first main iteration there, not in the proof.
fn warm_up_draw() -> usize {
    let config = proof_cots();
    if config.setup.is_some() {
        config.setup_surplus() + 1
    } else {
        0
    }
}

// ------------------------------------------------------------------ prover

/// How far the prover's session got, to tell who is to blame for a
/// failure ([`blame`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Before the prover sent its `Close`: a failure is the network's,
    /// the server's or a refusal, as the error says.
    BeforeClose,
    /// The prover sent `Close` and waits for the `CloseAck`, the `Δ`
    /// reveal and its audit: a verifier that stops here escapes the audit.
    AwaitingAudit,
    /// The audit passed and the proof was opened.
    Audited,
}

/// [`Stage`] shared with the session's tasks.
#[derive(Default)]
struct StageCell(std::sync::atomic::AtomicU8);

impl StageCell {
    fn set(&self, s: Stage) {
        self.0.store(s as u8, std::sync::atomic::Ordering::SeqCst);
    }

    fn get(&self) -> Stage {
        match self.0.load(std::sync::atomic::Ordering::SeqCst) {
            0 => Stage::BeforeClose,
            1 => Stage::AwaitingAudit,
            _ => Stage::Audited,
        }
    }
}

/// What the verifier did, if the prover's failure `e` at `stage` is the
/// verifier's doing: a failed audit at any stage; after the prover's
/// `Close` and before the audit, any stop that is not this party's own
/// check (the server's flight, its own settings) or a refusal. A verifier
/// that stops there escapes the audit of its garbling (`SECURITY.md`, MPC
/// mode point 4), so an honest verifier's crash looks the same and is
/// recorded too; the user can override the record.
pub fn blame(stage: Stage, e: &NetError) -> Option<&'static str> {
    use mpc::Error as E;
    if let NetError::Mpc(E::VerifierCheated(_)) = e {
        return Some("failed the audit of its garbling");
    }
    // The dual execution's check (or another check of the 2PC core) caught
    // it during the session: the request never left.
    if let NetError::Mpc(E::Mpc(webproof_mpc::Error::VerifierCheated(_))) = e {
        return Some(
            "cheated in the 2PC (its garbling of the request's keystream failed the check)",
        );
    }
    if stage != Stage::AwaitingAudit {
        return None;
    }
    match e {
        NetError::Mpc(
            E::Tls(_)
            | E::Unsupported(_)
            | E::ServerAlert { .. }
            | E::ServerEncrypted(_)
            | E::ServerClosed
            | E::ClientRecord(_)
            | E::ClientHello(_)
            | E::CotsExhausted { .. }
            | E::OutOfOrder(_)
            | E::Usage(_),
        )
        | NetError::Proxy(_)
        | NetError::Setup(_)
        | NetError::Tls(_)
        | NetError::Refused(_)
        | NetError::Rejected(_)
        | NetError::Unauthorized(_)
        | NetError::Forbidden(_)
        | NetError::FlaggedVerifier { .. }
        | NetError::AfterResponse(_)
        | NetError::VerifierCheated { .. } => None,
        NetError::Mpc(E::Aborted(_)) => Some("aborted after the prover's Close, before the audit"),
        NetError::Timeout(_) | NetError::VerifierSilent { .. } => {
            Some("went silent after the prover's Close, before the audit")
        }
        NetError::Disconnected(_) | NetError::Channel(_) | NetError::Io { .. } => {
            Some("hung up after the prover's Close, before the audit")
        }
        NetError::Mpc(_) | NetError::Engine { .. } => {
            Some("broke off the protocol after the prover's Close, before the audit")
        }
    }
}

/// The prover's MPC session: [`crate::prove`] with `opts.mode` MPC.
/// Refuses a verifier in the flagged-verifier record (unless allowed);
/// reports and records one that stops before the audit or fails it
/// ([`blame`]). Never retries: a retry would hand a cheating verifier
/// another session over the same credentials.
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
    let stage = StageCell::default();
    let ran = timeout(
        opts.timeout,
        "the whole proving session",
        prove_session(opts, &stage),
    )
    .await;
    let e = match ran {
        Ok(out) => return Ok(out),
        Err(e) => e,
    };
    let Some(what) = blame(stage.get(), &e) else {
        return Err(e);
    };
    tracing::warn!(verifier = %opts.verifier, error = %e, "the MPC verifier {what}");
    let reason = format!("{what}: {e}");
    let recorded = match &record {
        Some(r) => match r.record(&opts.verifier, None, &reason) {
            Ok(_) => format!(
                "it is recorded in {} and refused from now on",
                r.path().display()
            ),
            Err(re) => format!("recording it failed ({re}): do not use it again"),
        },
        None => "no flagged-verifier record is kept here: do not use it again".into(),
    };
    Err(NetError::VerifierCheated {
        verifier: opts.verifier.clone(),
        what: format!("{what} ({e})"),
        recorded,
    })
}

/// [`prove`]'s session, noting its [`Stage`] in `stage`.
async fn prove_session(opts: &ProveOptions, stage: &StageCell) -> Result<ProveOutcome> {
    let t0 = Instant::now();
    if matches!(opts.version, Some(v) if v != webproof_proxy::TlsVersion::Tls12) {
        return Err(NetError::Setup(
            "MPC mode runs TLS 1.2 only (TLS 1.3 is proxy mode's)".into(),
        ));
    }
    let request = opts.request();
    let session_cfg = mpc::ProverConfig {
        server_name: opts.host.clone(),
        suites: opts
            .suites
            .iter()
            .map(|s| s.code())
            .filter(|&c| mpc::cots::runs_suite(c))
            .collect(),
        groups: opts.groups.iter().map(|g| g.code()).collect(),
        ems: true,
        request: request.clone(),
        limits: RecorderLimits::default(),
    };
    if !opts.suites.is_empty() && session_cfg.suites.is_empty() {
        return Err(NetError::Setup(
            "none of the chosen suites runs in MPC mode (TLS 1.2 ECDHE with AES-GCM)".into(),
        ));
    }
    let stream = connect_verifier(&opts.verifier, &opts.transport).await?;
    opts.report(crate::prover::Stage::Connected);
    let mut link = Counted::new(stream);
    let counters = link.counters();
    let hello = ProverMsg::Hello {
        version: PROTOCOL_VERSION,
        host: opts.host.clone(),
        port: opts.port,
        api_key: opts.api_key.clone(),
        // Proxy mode's preprocessing size; unused by MPC mode, which sizes
        // its COTs from the request, but admission bounds it.
        expected_cots: 1,
        mpc: Some(MpcHello {
            request_len: request.len() as u64,
        }),
    };
    // The hello and SoftSpokenOT's first message (the base-OT sender's,
    // which needs nothing from the verifier) in one flight, as proxy mode
    // sends them: the verifier's part of the base OT follows its answer.
    let opening = SoftSpokenReceiver::begin(webproof_ot::DEFAULT_K, &mut rand::rngs::OsRng)
        .map_err(|e| engine_error("the MPC preprocessing", e))?;
    send_msg(&mut link, &hello).await?;
    write_frame(&mut link, &opening.first_message()).await?;
    match recv_msg::<_, VerifierMsg>(&mut link, "the verifier's answer to the hello").await? {
        VerifierMsg::Accepted => {}
        VerifierMsg::Refused(r) if r.kind == RejectKind::Unauthorized => {
            return Err(NetError::Unauthorized(r.detail))
        }
        VerifierMsg::Refused(r) => return Err(NetError::Refused(r)),
        other => {
            return Err(NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                format!("expected the hello's answer, got {other:?}"),
            )))
        }
    }
    opts.report(crate::prover::Stage::Admitted);
    // Preprocessing: this party is the COT receiver.
    let mut ch = Channel::new(link.compat());
    let mut receiver = opening
        .finish(&mut ch, &mut rand::rngs::OsRng)
        .await
        .map_err(|e| engine_error("the MPC preprocessing", e))?;
    let mut macs = Vec::new();
    receiver
        .extend(&mut ch, cots_needed(request.len()), &mut macs)
        .await
        .map_err(|e| engine_error("the MPC preprocessing", e))?;
    let link = channel_back(ch.into_inner().await, "the MPC preprocessing")?.into_inner();

    // The verifier garbles every circuit of the session for the hello's
    // terms and streams the tables before the server connection opens:
    // the session's first output for the server (its ClientHello, after
    // the last circuit's tables) marks the end of preprocessing.
    let (session, first) =
        mpc::ProverSession::new(session_cfg, CotPool::new(macs), &mut rand::rngs::OsRng)?;
    // The proof's COTs: their setup runs beside the session, on the link's
    // second stream (the verifier's side: `warm_up_sender`).
    let cot = webproof_ferret::FerretReceiver::new(proof_cots(), receiver, &mut rand::rngs::OsRng)
        .map_err(|e| engine_error("the proof setup", e))?;
    let ((cot, (outcome, t1, t2, up0, down0)), mut link) = crate::mux::run(link, |s| {
        let counters = &counters;
        async move {
            let crate::mux::Streams {
                relay,
                preprocessing,
            } = s;
            let warm = tokio::spawn(warm_up_receiver(cot, preprocessing));
            // Dropped (the session failed first), the task ends too.
            let warm = crate::AbortOnDrop(warm).join("the proof setup task");
            let run = prover_session(session, first, relay, opts, counters, stage);
            tokio::pin!(run, warm);
            tokio::select! {
                // A failed session ends the setup with it.
                ran = &mut run => {
                    let ran = ran?;
                    Ok((warm.await?, ran))
                }
                // A failed setup is reported after the session's end: the
                // session's own error (the verifier gone, an abort)
                // explains it better.
                cot = &mut warm => {
                    let ran = run.await?;
                    Ok((cot?, ran))
                }
            }
        }
    })
    .await?;
    // The proof of the response.
    let response = outcome.response.clone();
    opts.report(crate::prover::Stage::Response(response.len()));
    // The plan: what to reveal and commit to. Its errors (a JSON path the
    // response lacks, say) come after the request reached the server, and
    // say so, as in proxy mode.
    let after_response = |e: NetError| NetError::AfterResponse(Box::new(e));
    let disclosure =
        webproof_disclosure::http::disclosure_from_items(&opts.reveal, &request, &response)
            .map_err(|e| after_response(e.into()))?;
    let ranges = |d: Direction| -> Vec<core::ops::Range<usize>> {
        disclosure
            .ranges(d)
            .iter()
            .map(|r| r.start..r.end)
            .collect()
    };
    let mut claim = ResponseClaim::new(&outcome, &ranges(Direction::Received))
        .and_then(|c| c.with_request(&outcome, &request, &ranges(Direction::Sent)))
        .map_err(|e| after_response(e.into()))?;
    // An attestation: the proof shows the commitment's leaf hashes are
    // over the session's request and response.
    let committed = match &opts.attest {
        Some(a) => {
            let (transcript, commitment) =
                webproof_disclosure::attest::commit(a, &request, &response, &mut rand::rngs::OsRng)
                    .map_err(|e| after_response(e.into()))?;
            claim = claim.with_commitment(&outcome, &commitment);
            Some((transcript, commitment))
        }
        None => None,
    };
    let blinders = committed
        .as_ref()
        .map(|(_, c)| webproof_disclosure::attest::blinders(c))
        .unwrap_or_default();
    let ch = Channel::new((&mut link).compat());
    opts.report(crate::prover::Stage::Proving);
    mpc::prove_response(
        cot,
        ch,
        proof_config(),
        &outcome,
        &claim,
        &blinders,
        &mut rand::rngs::OsRng,
    )
    .await?;
    stage.set(Stage::Audited);
    let verdict: VerifierMsg = recv_msg_limited(&mut link, "the verdict", MAX_VERDICT_MSG).await?;
    opts.report(crate::prover::Stage::Verdict);
    let (output, attestation, session_id) = match verdict {
        VerifierMsg::Verdict {
            result: Ok(d),
            attestation,
            session_id,
        } => {
            let output = d.expand(&request, &response, &disclosure)?;
            let bundle = match (committed, attestation) {
                (Some((transcript, commitment)), Some(reply)) => {
                    Some(webproof_disclosure::attest::AttestationBundle::accept(
                        &reply,
                        transcript,
                        commitment,
                        outcome.certificates.clone(),
                    )?)
                }
                (Some(_), None) => {
                    return Err(NetError::Proxy(webproof_proxy::ProxyError::Attestation(
                        "the verifier verified the session but sent no attestation".into(),
                    )))
                }
                (None, Some(_)) => {
                    return Err(NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                        "the verifier sent an attestation no one asked for".into(),
                    )))
                }
                (None, None) => None,
            };
            (output, bundle, session_id)
        }
        VerifierMsg::Verdict { result: Err(r), .. } => return Err(NetError::Rejected(r)),
        other => {
            return Err(NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                format!("expected the verdict, got {other:?}"),
            )))
        }
    };
    let t3 = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
    Ok(ProveOutcome {
        output,
        stats: ProveStats {
            time_preprocess_ms: ms(t0, t1),
            time_online_ms: ms(t1, t3),
            time_total_ms: ms(t0, t3),
            uploaded_preprocess: up0,
            downloaded_preprocess: down0,
            uploaded_online: counters.sent() - up0,
            downloaded_online: counters.received() - down0,
            time_tls_ms: ms(t1, t2),
            time_proof_ms: ms(t2, t3),
        },
        response,
        attestation,
        session_id,
    })
}

/// The prover's session on the mux's relay stream: the verifier's tables
/// (the circuits' schedules built meanwhile), the server connection, the
/// session to the verifier's `CloseAck`; the stream is shut down at the
/// end. Returns the outcome, when preprocessing and the TLS session ended,
/// and the link's byte counts at the end of preprocessing.
async fn prover_session(
    session: mpc::ProverSession,
    first: mpc::ProverMsg,
    link: tokio::io::DuplexStream,
    opts: &ProveOptions,
    counters: &crate::frame::Counters,
    stage: &StageCell,
) -> Result<(mpc::ProverOutcome, Instant, Instant, u64, u64)> {
    // Preprocessing is full duplex: this party's garbling of the
    // request's keystream (dual execution) goes up while the verifier's
    // tables come down, so frames are written by a writer of their own.
    let (mut rd, wr) = tokio::io::split(link);
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(DUPLEX_QUEUE);
    let mut frames = FrameReader::new(MAX_FROM_VERIFIER);
    let logic = async {
        let tx = tx;
        queue(&tx, first.encode()).await?;
        preprocess(session, &mut rd, &mut frames, &tx).await
    };
    let (pre, w) = tokio::join!(logic, duplex_writer(wr, rx));
    let (session, opening) = pre?;
    let mut link = rd.unsplit(w?);

    let t1 = Instant::now();
    let (up0, down0) = (counters.sent(), counters.received());

    let server = timeout(
        Duration::from_secs(10),
        "connecting to the server",
        connect_server(&opts.host, opts.port, opts.server_addr),
    )
    .await?;
    opts.report(crate::prover::Stage::ServerReached);
    let (srv_rd, mut srv_wr) = server.into_split();
    srv_wr
        .write_all(&opening.to_server)
        .await
        .map_err(NetError::io("writing to the server"))?;
    for m in opening.to_verifier {
        write_frame(&mut link, &m.encode()).await?;
    }
    let (outcome, t2) = run_session(session, &mut link, frames, srv_rd, srv_wr, stage).await?;
    let _ = link.shutdown().await;
    Ok((outcome, t1, t2, up0, down0))
}

/// The prover's preprocessing: the verifier's tables in (the circuits'
/// schedules built meanwhile), its own keystream garbling out, until the
/// session gives the ClientHello and every upload is out. Returns the
/// session and the output that opens the server connection.
async fn preprocess<R: AsyncRead + Unpin>(
    session: mpc::ProverSession,
    rd: &mut R,
    frames: &mut FrameReader,
    tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
) -> Result<(mpc::ProverSession, mpc::ProverOutput)> {
    let hung_up = || NetError::Disconnected("the verifier hung up during preprocessing".into());
    // The circuits' schedules (a few hundred ms of CPU), built on a
    // blocking thread while the verifier garbles; the link keeps being
    // read meanwhile, into a queue the session takes afterwards, so the
    // tables keep flowing instead of stalling on a full socket buffer.
    // Bounded in bytes: when it is full the link is no longer read until
    // the schedules are built, and TCP back-pressure holds the verifier.
    let mut early = EarlyQueue::new(MAX_EARLY_BYTES);
    let (mut session, prepared) = {
        let build = tokio::task::spawn_blocking(move || {
            let mut session = session;
            let r = session.prepare();
            (session, r)
        });
        tokio::pin!(build);
        loop {
            tokio::select! {
                built = &mut build => break built.map_err(|e| NetError::Io {
                    context: "building the MPC circuits' schedules".into(),
                    source: std::io::Error::other(e),
                })?,
                f = timeout(
                    Duration::from_secs(60),
                    "waiting for the verifier's garbled tables",
                    frames.next(rd),
                ), if early.has_room() => early.push(f?.ok_or_else(hung_up)?),
            }
        }
    };
    let early = early.into_frames();
    queue_step(tx, prepared.map(|()| Default::default())).await?;
    let mut opening = mpc::ProverOutput::default();
    let mut early = early.into_iter();
    while opening.to_server.is_empty() || session.upload_ready() {
        let step = tokio::select! {
            // The verifier's frames first: queued ones, then the link's.
            f = async {
                match early.next() {
                    Some(f) => Ok(Some(f)),
                    None => timeout(
                        Duration::from_secs(60),
                        "waiting for the verifier's garbled tables",
                        frames.next(rd),
                    ).await,
                }
            }, if opening.to_server.is_empty() => {
                let f = f?.ok_or_else(hung_up)?;
                session.on_verifier_bytes(&f)
            }
            permit = tx.reserve(), if session.upload_ready() => {
                let permit = permit
                    .map_err(|_| NetError::Disconnected("the link closed while writing".into()))?;
                match session.next_upload() {
                    Ok(Some(m)) => {
                        permit.send(m.encode());
                        Ok(Default::default())
                    }
                    Ok(None) => Ok(Default::default()),
                    Err(e) => Err(e),
                }
            }
        };
        let out = queue_step(tx, step).await?;
        opening.to_verifier.extend(out.to_verifier);
        opening.to_server.extend(out.to_server);
    }
    if early.next().is_some() {
        return Err(NetError::Mpc(mpc::Error::Unexpected {
            expected: "nothing after the last table before the ClientHello",
            got: "a message",
        }));
    }
    Ok((session, opening))
}

/// [`session_step`] with the abort queued for the writer.
async fn queue_step(
    tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
    step: core::result::Result<mpc::ProverOutput, mpc::Error>,
) -> Result<mpc::ProverOutput> {
    step.map_err(|e| {
        if let Some(abort) = abort_frame(&e) {
            let _ = tx.try_send(abort);
        }
        NetError::Mpc(e)
    })
}

/// The `Abort` telling the verifier why this party stopped, unless the
/// verifier is the one who aborted.
fn abort_frame(e: &mpc::Error) -> Option<Vec<u8>> {
    (!matches!(e, mpc::Error::Aborted(_)))
        .then(|| mpc::ProverMsg::Abort(mpc::output::rejection(e).to_string()).encode())
}

/// Most bytes of verifier frames the prover queues while its schedules
/// build (one more frame, up to [`MAX_FROM_VERIFIER`], may go over).
/// About a second of tables on a fast link; the rest waits in the socket.
const MAX_EARLY_BYTES: usize = 32 << 20;

/// The verifier's frames that arrive while the prover's schedules build,
/// kept in order up to a byte bound.
struct EarlyQueue {
    frames: Vec<Vec<u8>>,
    bytes: usize,
    max: usize,
}

impl EarlyQueue {
    fn new(max: usize) -> Self {
        EarlyQueue {
            frames: Vec::new(),
            bytes: 0,
            max,
        }
    }

    /// Whether another frame may be read into the queue.
    fn has_room(&self) -> bool {
        self.bytes < self.max
    }

    fn push(&mut self, frame: Vec<u8>) {
        self.bytes += frame.len();
        self.frames.push(frame);
    }

    fn into_frames(self) -> Vec<Vec<u8>> {
        self.frames
    }
}

async fn connect_server(host: &str, port: u16, at: Option<SocketAddr>) -> Result<TcpStream> {
    let s = match at {
        Some(a) => TcpStream::connect(a).await,
        None => TcpStream::connect((host, port)).await,
    }
    .map_err(NetError::io(format!(
        "connecting to the server {host}:{port}"
    )))?;
    let _ = s.set_nodelay(true);
    Ok(s)
}

/// A session step's result: its output, or the error after telling the
/// verifier why (unless the verifier is the one who aborted).
async fn session_step<L: AsyncWrite + Unpin>(
    link: &mut L,
    step: core::result::Result<mpc::ProverOutput, mpc::Error>,
) -> Result<mpc::ProverOutput> {
    match step {
        Ok(out) => Ok(out),
        Err(e) => {
            if let Some(abort) = abort_frame(&e) {
                let _ = write_frame(link, &abort).await;
            }
            Err(NetError::Mpc(e))
        }
    }
}

/// Run the prover's session to its outcome: verifier frames in, the
/// server's bytes in, whatever the session says out; `Close` once the
/// server is done and the request is out.
async fn run_session<L: AsyncRead + AsyncWrite + Unpin>(
    mut session: mpc::ProverSession,
    link: &mut L,
    mut frames: FrameReader,
    srv_rd: tokio::net::tcp::OwnedReadHalf,
    srv_wr: tokio::net::tcp::OwnedWriteHalf,
    stage: &StageCell,
) -> Result<(mpc::ProverOutcome, Instant)> {
    let mut buf = vec![0u8; 32 << 10];
    let mut server_open = true;
    let mut srv_wr = Some(srv_wr);
    let mut srv_rd = Some(srv_rd);
    // When the server's part ended: the `Close` (the verifier's
    // `CloseAck` that completes the session needs no server).
    let mut closed_at = None;
    let idle = Duration::from_secs(30);
    loop {
        if session.outcome().is_some() {
            if frames.buffered() != 0 {
                return Err(NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                    "the verifier sent more after its CloseAck".into(),
                )));
            }
            // The session's tables and step state go; the outcome stays.
            let outcome = session.into_outcome().ok_or_else(|| {
                NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                    "the session ended without its outcome".into(),
                ))
            })?;
            return Ok((outcome, closed_at.unwrap_or_else(Instant::now)));
        }
        let step = tokio::select! {
            f = frames.next(link) => {
                let f = f?.ok_or_else(|| NetError::Disconnected("the verifier hung up mid-session".into()))?;
                let t = Instant::now();
                let step = session.on_verifier_bytes(&f);
                tracing::debug!(bytes = f.len(), cpu_us = t.elapsed().as_micros() as u64, "mpc: verifier message in");
                step
            }
            n = async {
                match srv_rd.as_mut() {
                    Some(r) => r.read(&mut buf).await,
                    None => Ok(0),
                }
            }, if server_open => match n {
                Ok(0) | Err(_) => {
                    server_open = false;
                    session.on_server_closed()
                }
                Ok(n) => {
                    let t = Instant::now();
                    let step = session.on_server_bytes(&buf[..n]);
                    tracing::debug!(bytes = n, cpu_us = t.elapsed().as_micros() as u64, "mpc: server bytes in");
                    step
                }
            },
            _ = tokio::time::sleep(idle) => {
                return Err(NetError::Timeout(format!("the MPC session idle for {} s", idle.as_secs())));
            }
        };
        let out = session_step(link, step).await?;
        if !out.to_server.is_empty() {
            srv_wr
                .as_mut()
                .ok_or_else(|| {
                    NetError::Proxy(webproof_proxy::ProxyError::Protocol(
                        "the session wrote to the server after its Close".into(),
                    ))
                })?
                .write_all(&out.to_server)
                .await
                .map_err(NetError::io("writing to the server"))?;
        }
        for m in out.to_verifier {
            tracing::trace!(message = m.name(), "mpc: to the verifier");
            write_frame(link, &m.encode()).await?;
        }
        if closed_at.is_none() && session.server_done() && session.records_done() {
            // The transcript ends here: what the server does after (its
            // TCP close after close_notify) is no longer the session's,
            // and the connection is let go now, not after the `CloseAck`.
            server_open = false;
            srv_rd = None;
            if let Some(mut w) = srv_wr.take() {
                let _ = w.shutdown().await;
            }
            closed_at = Some(Instant::now());
            let m = session.close()?;
            write_frame(link, &m.encode()).await?;
            // From here until the audit, a verifier that stops escapes it.
            stage.set(Stage::AwaitingAudit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue of early frames stops taking frames at its byte bound
    /// (going over by at most the frame that crossed it) and keeps their
    /// order.
    #[test]
    fn early_queue_is_bounded_in_bytes() {
        let mut q = EarlyQueue::new(100);
        let mut pushed = 0;
        while q.has_room() {
            q.push(vec![pushed as u8; 30]);
            pushed += 1;
        }
        assert_eq!(pushed, 4, "30, 60, 90 leave room; 120 does not");
        assert!(q.bytes < 100 + 30);
        let frames = q.into_frames();
        assert!(frames.iter().enumerate().all(|(i, f)| f[0] == i as u8));
        const { assert!(MAX_EARLY_BYTES >= 16 << 20 && MAX_EARLY_BYTES < 64 << 20) };
    }
}

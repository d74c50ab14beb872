//! MPC mode's verifier run after admission, written once for every
//! runtime: the hello's request length capped
//! ([`VerifierConfig::max_mpc_request`]); SoftSpokenOT with this party as
//! the COT sender (its `Δ` is the garbler's, the OLEs' and the proof's);
//! the session's messages on the mux's relay stream, full duplex (the
//! prover's garbling of the request's keystream comes up while this
//! party's tables go down; the record circuits' schedules built off the
//! session's task meanwhile), the proof's Ferret setup on its
//! preprocessing stream; the proof of the response; the verdict and, with
//! a key, the attestation over what the proof established.
//!
//! Every decision about a message is `webproof_mpc_tls`'s: each message
//! the prover sends is checked by the session before anything depends on
//! it, and the output is built from what the proof established, never
//! from the prover's claims. This run moves frames, keeps time and
//! enforces sizes.

use super::{
    channel_back, duplex_writer, engine_error, link_closed, proof_config, proof_cots, warm_up_draw,
    MAX_REQUEST_LIMIT,
};
use crate::frame::{send_msg, FrameReader};
use crate::runtime::{compute, spawn, timeout, Connector, Link, Runtime, Section};
use crate::verifier::{refuse, Concluded, VerifierConfig};
use crate::{Error, Result};
use futures::future::{poll_fn, select, Either};
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use std::pin::pin;
use webproof_core::cot::RandomCotSender;
use webproof_core::Channel;
use webproof_mpc_tls as mpc;
use webproof_mpc_tls::{cots_needed, CotPool};
use webproof_ot::SoftSpokenSender;
use webproof_proxy::protocol::{MpcHello, RejectKind, Rejection, VerifierMsg};
use webproof_proxy::session::verifier::Admitted;
use webproof_proxy::VerifyConfig;

use super::side::VerifierSide;
use webproof_mpc_tls::tls13::response::verify_response13;
use webproof_mpc_tls::tls13::{attestation13, verifier_output13, Tls13VerifierSession};

use super::prover::DUPLEX_QUEUE;

/// Largest session message the verifier accepts: a server flight the
/// prover forwards, bounded by the recorder's limits, or a step's flips.
const MAX_FROM_PROVER: usize = 32 << 20;

/// The run after admission (the hello's `Accepted` not sent yet), to the
/// verdict (sent by the caller). `_server` is unused: in MPC mode the
/// prover connects to the server.
pub(crate) async fn run<R: Runtime, L: Link, C: Connector>(
    rt: &R,
    mut link: L,
    _server: &C,
    cfg: &VerifierConfig,
    admitted: Admitted,
    terms: MpcHello,
) -> Result<Concluded<L>> {
    let Admitted { host, port, .. } = admitted;
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
            return Err(refuse(rt, &mut link, why).await);
        }
    };
    send_msg(&mut link, &VerifierMsg::Accepted).await?;
    // Preprocessing: this party is the COT sender.
    let mut rng = rt.rng();
    let mut ch = Channel::new(link);
    let (sender, keys) = timeout(rt, cfg.connect_timeout, "the MPC preprocessing", async {
        let mut s = SoftSpokenSender::setup(&mut ch, &mut rng)
            .await
            .map_err(|e| engine_error("the MPC preprocessing", e))?;
        let mut keys = Vec::new();
        s.extend(&mut ch, cots_needed(request_len), &mut keys)
            .await
            .map_err(|e| engine_error("the MPC preprocessing", e))?;
        Ok((s, keys))
    })
    .await?;
    let link = channel_back(ch.into_inner().await, "the MPC preprocessing")?;

    let time = rt.unix_time();
    let session_cfg = mpc::VerifierConfig {
        verify: VerifyConfig {
            roots: cfg.roots.clone(),
            server_name: host.clone(),
            port,
            time,
        },
        limits: cfg.limits,
    };
    // The session's version is the suite of the prover's `Hello` terms,
    // its first message: the session is made when that message comes.
    let delta = sender.delta();
    let mut session_rng = rt.rng();
    let make = move |first: &[u8]| -> Result<Session> {
        let tls13 = match mpc::ProverMsg::decode(first) {
            Ok(mpc::ProverMsg::Hello { terms, .. }) => mpc::tls13::SUITES.contains(&terms.suite),
            // Anything else is refused by the TLS 1.2 session, as before.
            _ => false,
        };
        let cots = CotPool::new(keys);
        Ok(if tls13 {
            Session::V13(Box::new(Tls13VerifierSession::new(
                session_cfg,
                delta,
                cots,
                &mut session_rng,
            )))
        } else {
            Session::V12(Box::new(mpc::VerifierSession::new(
                session_cfg,
                delta,
                cots,
                &mut session_rng,
            )))
        })
    };
    // The proof's COTs share the garbler's `Δ` (the same SoftSpokenOT
    // sender); their setup runs beside the session, on the link's second
    // stream, so the proof after it starts with them ready.
    let cot = webproof_ferret::FerretSender::new(proof_cots(), sender, &mut rng)
        .map_err(|e| engine_error("the proof setup", e))?;
    let (relay, preprocessing, section) = link.start_mux();
    // A task of its own: Ferret computes in long stretches, which must not
    // hold up the session's round trips. Dropped (the session failed
    // first), the task stops too.
    let warm = timeout(
        rt,
        cfg.proof_timeout,
        "the proof setup",
        spawn(rt, warm_up_sender(cot, preprocessing)),
    );
    let online = timeout(
        rt,
        cfg.relay_timeout,
        "the MPC session",
        session_run(rt, make, relay, cfg),
    );
    let (session, cot) = match futures::future::try_join(online, warm).await {
        Ok(v) => v,
        Err(e) => {
            section.abandon().await;
            return Err(e);
        }
    };
    let mut link = section.finish().await?;

    // The proof of the response, on a channel that borrows the link: the
    // verdict follows on the link itself.
    let can_attest = cfg.attestation_key.is_some();
    let concluded = match session {
        Session::V12(session) => {
            let outcome = session.finish()?;
            let proved = timeout(rt, cfg.proof_timeout, "the proof of the response", async {
                mpc::verify_response(
                    cot,
                    Channel::new(&mut link),
                    proof_config(),
                    &outcome,
                    can_attest,
                    &mut rng,
                )
                .await
                .map_err(Error::Mpc)
            })
            .await;
            conclude(
                cfg,
                proved,
                |v| v.leaves.is_empty(),
                |v| mpc::verifier_output(&outcome, v, &host, time),
                |key, v, out| mpc::attestation(key, &outcome, v, out),
            )
        }
        Session::V13(session) => {
            if !session.closed() {
                return Err(Error::Mpc(mpc::Error::OutOfOrder(
                    "the proof before the close",
                )));
            }
            let proved = timeout(rt, cfg.proof_timeout, "the proof of the response", async {
                verify_response13(
                    cot,
                    Channel::new(&mut link),
                    proof_config(),
                    &session,
                    can_attest,
                    &mut rng,
                )
                .await
                .map_err(Error::Mpc)
            })
            .await;
            conclude(
                cfg,
                proved,
                |v| v.leaves.is_empty(),
                |v| verifier_output13(&session, v, &host, time),
                |key, v, out| attestation13(key, &session, v, out),
            )
        }
    };
    let (output, attestation) = match concluded {
        Ok((out, signed)) => (Ok(out), signed),
        Err(e) => (Err(e), None),
    };
    let verdict = VerifierMsg::Verdict {
        result: match &output {
            Ok(out) => Ok(out.digested()),
            Err(Error::Mpc(e)) => Err(super::rejection(e)),
            Err(e) => Err(Rejection::new(RejectKind::Protocol, e.to_string())),
        },
        attestation,
        session_id: None,
    };
    Ok(Concluded {
        verdict,
        link: Ok(link),
        output,
    })
}

/// The output from what the proof established (`proved`) and, with a key,
/// the attestation: a claim with leaves reached the proof only if this
/// verifier holds a key (the proof refused it otherwise).
fn conclude<V>(
    cfg: &VerifierConfig,
    proved: Result<V>,
    no_leaves: impl FnOnce(&V) -> bool,
    output: impl FnOnce(&V) -> mpc::Result<webproof_disclosure::VerifierOutput>,
    sign: impl FnOnce(
        &webproof_attestation::SigningKey,
        &V,
        &webproof_disclosure::VerifierOutput,
    ) -> mpc::Result<webproof_disclosure::attest::AttestationReply>,
) -> Result<(
    webproof_disclosure::VerifierOutput,
    Option<webproof_disclosure::attest::AttestationReply>,
)> {
    let verified = proved?;
    let out = output(&verified).map_err(Error::Mpc)?;
    let signed = match &cfg.attestation_key {
        Some(key) if !no_leaves(&verified) => Some(sign(key, &verified, &out).map_err(Error::Mpc)?),
        _ => None,
    };
    Ok((out, signed))
}

/// The session's messages on the mux's relay stream until it is closed,
/// the garbled tables streamed after the `Hello`; the stream is closed at
/// the end so the multiplexed section can close.
///
/// Full duplex: the prover's garbling of the request's keystream (dual
/// execution) streams up while this party's tables stream down, so frames
/// are written by a writer of their own ([`duplex_writer`]) and the
/// prover's frames are read between the tables, never after them.
async fn session_run<R: Runtime, S: AsyncRead + AsyncWrite + Unpin>(
    rt: &R,
    make: impl FnOnce(&[u8]) -> Result<Session>,
    prover: S,
    cfg: &VerifierConfig,
) -> Result<Session> {
    let (mut rd, wr) = prover.split();
    let (tx, rx) = futures::channel::mpsc::channel::<Vec<u8>>(DUPLEX_QUEUE);
    let logic = async move {
        let mut tx = tx;
        let mut frames = FrameReader::new(MAX_FROM_PROVER);
        let first = timeout(
            rt,
            cfg.idle_timeout,
            "waiting for the prover's next MPC message",
            frames.next(&mut rd),
        )
        .await?
        .ok_or_else(|| Error::Disconnected("the prover hung up mid-session".into()))?;
        // The writer ends once its queue is dropped and drained.
        let mut session = make(&first)?;
        match &mut session {
            Session::V12(s) => {
                session_logic(rt, s.as_mut(), first, frames, &mut rd, &mut tx, cfg).await?
            }
            Session::V13(s) => {
                session_logic(rt, s.as_mut(), first, frames, &mut rd, &mut tx, cfg).await?
            }
        }
        Ok(session)
    };
    let (r, w) = futures::join!(logic, duplex_writer(wr, rx));
    // Close however the session ended, so the mux's section closes.
    let w = match w {
        Ok(mut wr) => {
            let _ = wr.close().await;
            Ok(())
        }
        Err(e) => Err(e),
    };
    match (r, w) {
        (Err(e), _) => Err(e),
        (Ok(session), w) => w.map(|()| session),
    }
}

/// The verifier's session of the version the prover's `Hello` announced.
enum Session {
    V12(Box<mpc::VerifierSession>),
    V13(Box<Tls13VerifierSession>),
}

/// What woke the session.
enum Event {
    /// The prover's next message (or its idle timeout).
    Prover(Result<Option<Vec<u8>>>),
    /// Room in the writer's queue for the next table.
    Room(core::result::Result<(), futures::channel::mpsc::SendError>),
}

async fn session_logic<R: Runtime, V: VerifierSide, Rd: AsyncRead + Unpin>(
    rt: &R,
    session: &mut V,
    first: Vec<u8>,
    mut frames: FrameReader,
    rd: &mut Rd,
    tx: &mut futures::channel::mpsc::Sender<Vec<u8>>,
    cfg: &VerifierConfig,
) -> Result<()> {
    let mut first = Some(first);
    // The record circuits' schedules, built off the session's task while
    // the key derivation's tables are garbled and sent.
    let mut record_plans = None;
    // Whether the session may have tables to stream (after each prover
    // message, until `next_tables` says none).
    let mut tables = false;
    while !session.is_closed() {
        let event = {
            // The prover's next message; its idle timeout restarts with
            // every event, so streaming tables is not idleness.
            let first = first.take();
            let read = pin!(async {
                if let Some(f) = first {
                    return Ok(Some(f));
                }
                timeout(
                    rt,
                    cfg.idle_timeout,
                    "waiting for the prover's next MPC message",
                    frames.next(rd),
                )
                .await
            });
            // After the `Setup`, the garbled tables chunk by chunk: each
            // is garbled while the ones before are on the wire.
            let room = pin!(async {
                if !tables {
                    return futures::future::pending().await;
                }
                poll_fn(|cx| tx.poll_ready(cx)).await
            });
            match select(read, room).await {
                Either::Left((f, _)) => Event::Prover(f),
                Either::Right((r, _)) => Event::Room(r),
            }
        };
        let step = match event {
            Event::Prover(f) => {
                let frame =
                    f?.ok_or_else(|| Error::Disconnected("the prover hung up mid-session".into()))?;
                let t = rt.now_ms();
                let step = session.on_bytes(&frame);
                tracing::debug!(
                    bytes = frame.len(),
                    cpu_us = ((rt.now_ms() - t) * 1000.0) as u64,
                    "mpc: prover message in"
                );
                tables = true;
                step
            }
            Event::Room(ready) => {
                ready.map_err(|_| link_closed())?;
                if record_plans.is_none() {
                    let jobs = session.record_plan_jobs();
                    if !jobs.is_empty() {
                        record_plans = Some(Box::pin(compute(
                            rt,
                            "building the record circuits' schedules",
                            move || {
                                jobs.into_iter()
                                    .map(mpc::RecordPlanJob::build)
                                    .collect::<mpc::Result<Vec<_>>>()
                            },
                        )));
                    }
                }
                if session.wants_record_plan() {
                    if let Some(build) = record_plans.take() {
                        for plan in build.await?.map_err(Error::Mpc)? {
                            session.provide_record_plan(plan).map_err(Error::Mpc)?;
                        }
                    }
                }
                match session.next_tables() {
                    Ok(Some(m)) => {
                        tracing::trace!(message = m.name(), "mpc: to the prover");
                        tx.start_send(m.encode()).map_err(|_| link_closed())?;
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
                    futures::SinkExt::send(tx, m.encode())
                        .await
                        .map_err(|_| link_closed())?;
                }
            }
            Err(e) => {
                let why = super::rejection(&e);
                // Best effort: the prover may be gone (or the one who aborted).
                if !matches!(e, mpc::Error::Aborted(_)) {
                    let _ = tx.try_send(mpc::VerifierMsg::Abort(why.to_string()).encode());
                }
                return Err(Error::Mpc(e));
            }
        }
    }
    Ok(())
}

/// Ferret's setup iteration and first main iteration for the proof, on
/// the mux's preprocessing stream (the same draw as proxy mode's warm-up,
/// [`warm_up_draw`]); the stream is closed at the end.
async fn warm_up_sender<S: AsyncRead + AsyncWrite + Unpin + Send>(
    mut cot: webproof_ferret::FerretSender<SoftSpokenSender>,
    io: S,
) -> Result<webproof_ferret::FerretSender<SoftSpokenSender>> {
    let mut ch = Channel::new(io);
    RandomCotSender::extend(&mut cot, &mut ch, warm_up_draw(), &mut Vec::new())
        .await
        .map_err(|e| engine_error("the proof setup", e))?;
    let mut io = channel_back(ch.into_inner().await, "the proof setup")?;
    let _ = io.close().await;
    Ok(cot)
}

//! Proxy mode's verifier run after admission, written once for every
//! runtime: `Accepted` and the proof's opening; a multiplexed section with
//! the server connection, `Ready` and the relay (every record recorded,
//! within limits and timeouts) beside the proof's preprocessing; the cut
//! at the prover's `Close`; the proof; the verdict.
//!
//! Every decision about a message is `webproof_proxy::session::verifier`'s
//! ([`VerifierSession`]); this run orders the flights and keeps the clocks.
//! What it takes from the prover: the opening (checked by the engine),
//! the client's records (recorded as relayed, so the transcript is this
//! side's own), the `Close`'s record counts (the session refuses a cut
//! past what it relayed), the proof's announcement (checked against the
//! recorded transcript before the proof runs) and the proof itself (the
//! engine's checks); the server's bytes come from the server.

use crate::frame::{
    read_raw_frame, recv_msg_limited, send_msg, write_frame, FrameReader, Prefixed,
};
use crate::mpc::{channel_back, engine_error};
use crate::runtime::{compute, spawn, timeout, Connector, Link, Runtime, Section};
use crate::verifier::{drain, name_session, unreachable, Concluded, VerifierConfig};
use crate::{Error, Result};
use futures::future::{Fuse, FutureExt};
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use futures::{SinkExt, StreamExt};
use std::pin::pin;
use webproof_core::Channel;
use webproof_disclosure::VerifierOutput;
use webproof_proxy::protocol::{
    ProverMsg, RejectKind, Rejection, RelayFrame, VerifierMsg, MAX_RELAY_DATA,
};
use webproof_proxy::session::relay_failed;
use webproof_proxy::session::verifier::{verdict, Admitted, OnProof, VerifierSession};
use webproof_proxy::{Direction, ProxyError, Recorder};
use webproof_tlsproof::session::VerifierPreprocessed;

/// Largest first preprocessing message a prover may send with its hello
/// (the engine checks its exact size: the base OT sender's point).
const MAX_OPENING: usize = 1024;

/// The run after admission, to the verdict (sent by the caller).
pub(crate) async fn run<R: Runtime, L: Link, C: Connector>(
    rt: &R,
    mut link: L,
    server: &C,
    cfg: &VerifierConfig,
    mut session: VerifierSession,
    admitted: Admitted,
) -> Result<Concluded<L>> {
    let Admitted {
        host, port, engine, ..
    } = admitted;
    // Accepted. The prover's first preprocessing message came with its
    // hello, ahead of the multiplexed section: take it off the link now
    // and give it back to the engine in front of the preprocessing stream.
    send_msg(&mut link, &session.accepted()).await?;
    let opening = timeout(
        rt,
        cfg.connect_timeout,
        "waiting for the prover's first preprocessing message",
        read_raw_frame(&mut link, MAX_OPENING),
    )
    .await?
    .ok_or_else(|| Error::Disconnected("before the proof setup".into()))?;

    // From here the link carries two streams at once. Preprocessing (the
    // whole of it: base OT, SoftSpokenOT, Ferret's setup iteration and its
    // first main one) starts at once, while the server's address is
    // resolved and its connection opened; the relay stream carries `Ready`
    // (or the refusal) as soon as the server is reachable, and then the
    // TLS session, which runs beside the rest of the preprocessing: the
    // TLS session mostly waits on round trips, the preprocessing mostly
    // computes, and neither waits for the other.
    let (relay_stream, preprocessing, section) = link.start_mux();
    let mut rng = rt.rng();
    // A task of its own: the preprocessing computes in long stretches,
    // which must not hold up the relay. Dropped (the relay failed first),
    // the task stops too.
    let warm = timeout(
        rt,
        cfg.proof_timeout,
        "the proof setup",
        spawn(rt, async move {
            let mut ch = Channel::new(Prefixed::new(opening, preprocessing));
            let mut pre = VerifierPreprocessed::bootstrap(&mut ch, engine, &mut rng)
                .await
                .map_err(|e| engine_error("the proof setup", e))?;
            pre.warm_up(&mut ch)
                .await
                .map_err(|e| engine_error("the proof setup", e))?;
            let mut io = channel_back(ch.into_inner().await, "the proof setup")?;
            let _ = io.close().await;
            Ok::<_, Error>(pre)
        }),
    );
    let tls = async {
        let mut relay_stream = relay_stream;
        let conn = timeout(
            rt,
            cfg.connect_timeout,
            "connecting to the server",
            server.connect(&host, port),
        )
        .await;
        let conn = match conn {
            Ok(c) => c,
            Err(e) => {
                let why = unreachable(&host, port, &e);
                let _ = send_msg(&mut relay_stream, &VerifierMsg::Refused(why.clone())).await;
                return Err(Error::Refused(why));
            }
        };
        let ready = session.ready(rt.unix_time(), cfg.limits);
        send_msg(&mut relay_stream, &ready).await?;
        relay(rt, relay_stream, conn, cfg, &mut session).await
    };
    // A relay that fails (the server unreachable, limits) ends the
    // preprocessing too: the prover's stream then ends, and it reports
    // the relay's reason.
    let pre = match futures::future::try_join(tls, warm).await {
        Ok(((), pre)) => pre,
        Err(e) => {
            section.abandon().await;
            return Err(e);
        }
    };
    let mut link = section.finish().await?;

    // Proof.
    let msg: ProverMsg = timeout(
        rt,
        cfg.proof_timeout,
        "waiting for the proof",
        recv_msg_limited(&mut link, "proof", cfg.max_message),
    )
    .await?;
    match session.on_proof(msg, &cfg.roots, cfg.attestation_key.is_some())? {
        OnProof::Verify => {}
        OnProof::Refuse(mut verdict, e) => {
            // The prover is already streaming its proof: send the verdict
            // now (it reads it where it expects the proof's verdict), then
            // read the proof away so that closing does not reset the link
            // before the verdict is read. No session id: nothing was
            // verified.
            name_session(&mut verdict, None);
            let _ = send_msg(&mut link, &verdict).await;
            drain(rt, &mut link, cfg.proof_timeout).await;
            return Err(e.into());
        }
    }
    Ok(verify_zk(rt, pre, link, session, cfg).await)
}

/// Relay between the prover (framed, on the mux's relay stream) and the
/// server (raw), recording records, until the prover sends `Close`; the
/// session cuts the transcript there and answers with `CloseAck`; the
/// relay stream is closed at the end.
pub async fn relay<R: Runtime, S, C>(
    rt: &R,
    prover: S,
    server: C,
    cfg: &VerifierConfig,
    session: &mut VerifierSession,
) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    C: AsyncRead + AsyncWrite + Unpin,
{
    let (pr, mut pw) = prover.split();
    let (mut sr, mut sw) = server.split();
    // The prover's frames are read by a task of their own: a frame read
    // must not be dropped halfway by the select below.
    let (tx, mut rx) = futures::channel::mpsc::channel::<Result<RelayFrame>>(16);
    let _reader = spawn(rt, read_frames(pr, tx));
    let mut rec = Recorder::new(cfg.limits);
    let mut deadline = pin!(rt.sleep(cfg.relay_timeout).fuse());
    let mut buf = vec![0u8; MAX_RELAY_DATA];
    let mut server_open = true;
    let mut failure: Option<ProxyError> = None;
    let (sent_records, received_records) = loop {
        let event = {
            let mut idle = pin!(rt.sleep(cfg.idle_timeout).fuse());
            let mut read = if server_open {
                sr.read(&mut buf).fuse()
            } else {
                Fuse::terminated()
            };
            futures::select! {
                f = rx.next() => Event::Prover(f),
                n = read => Event::Server(n),
                () = idle => Event::Idle,
                () = deadline => Event::Deadline,
            }
        };
        match event {
            Event::Prover(Some(Ok(RelayFrame::Data(d)))) => {
                if failure.is_some() {
                    continue;
                }
                if let Err(e) = rec.feed(Direction::Sent, &d) {
                    // Say so now: nothing more reaches the server, so no
                    // answer would come and the prover would wait for the
                    // idle timeout, which names no limit.
                    let e = ProxyError::from(e);
                    let _ = write_frame(&mut pw, &relay_failed((&e).into()).encode()).await;
                    return Err(Error::Proxy(e));
                }
                // Once the server side is closed nothing more is
                // forwarded: the records stay in the transcript (both
                // parties must hold the same one) but count as not
                // delivered, and may carry no application data.
                if server_open {
                    let wrote = async {
                        sw.write_all(&d).await?;
                        sw.flush().await
                    };
                    if wrote.await.is_err() {
                        server_open = false;
                        let why = "server connection failed while writing";
                        write_frame(&mut pw, &RelayFrame::ServerClosed(why.into()).encode())
                            .await?;
                    } else {
                        rec.mark_sent_delivered();
                    }
                }
            }
            Event::Prover(Some(Ok(RelayFrame::Close { sent, received }))) => {
                break (sent, received)
            }
            Event::Prover(Some(Ok(other))) => {
                return Err(Error::Proxy(ProxyError::Protocol(format!(
                    "unexpected relay frame from the prover: {other:?}"
                ))))
            }
            Event::Prover(Some(Err(e))) => return Err(e),
            Event::Prover(None) => return Err(Error::Disconnected("prover reader ended".into())),
            Event::Server(Ok(0)) | Event::Server(Err(_)) => {
                server_open = false;
                let why = match event {
                    Event::Server(Ok(0)) => "server closed the connection",
                    _ => "server connection failed",
                };
                write_frame(&mut pw, &RelayFrame::ServerClosed(why.into()).encode()).await?;
            }
            Event::Server(Ok(n)) => {
                if let Err(e) = rec.feed(Direction::Received, &buf[..n]) {
                    server_open = false;
                    let why = format!("relay stopped: {e}");
                    write_frame(&mut pw, &RelayFrame::ServerClosed(why).encode()).await?;
                    failure = Some(e.into());
                    continue;
                }
                write_frame(&mut pw, &RelayFrame::Data(buf[..n].to_vec()).encode()).await?;
            }
            Event::Idle => {
                let why = Rejection::new(RejectKind::Timeout, "relay idle timeout");
                let _ = write_frame(&mut pw, &relay_failed(why).encode()).await;
                return Err(Error::Timeout(format!(
                    "relay idle for {} ms",
                    cfg.idle_timeout.as_millis()
                )));
            }
            Event::Deadline => {
                let why = Rejection::new(RejectKind::Timeout, "relay took too long");
                let _ = write_frame(&mut pw, &relay_failed(why).encode()).await;
                return Err(Error::Timeout(format!(
                    "relay longer than {} ms",
                    cfg.relay_timeout.as_millis()
                )));
            }
        }
    };
    drop((sr, sw));
    if let Some(f) = failure {
        let _ = write_frame(&mut pw, &relay_failed((&f).into()).encode()).await;
        return Err(Error::Proxy(f));
    }
    let (ack, cut) = session.on_close(rec.finish(), sent_records, received_records);
    write_frame(&mut pw, &ack.encode()).await?;
    cut.map_err(Error::Proxy)?;
    let _ = pw.close().await;
    Ok(())
}

/// What woke the relay.
enum Event {
    Prover(Option<Result<RelayFrame>>),
    Server(std::io::Result<usize>),
    Idle,
    Deadline,
}

/// The prover's relay frames as they come, into `tx`, up to its last
/// (`Close`, anything but data, or the end of the stream).
async fn read_frames<Rd: AsyncRead + Unpin>(
    mut rd: Rd,
    mut tx: futures::channel::mpsc::Sender<Result<RelayFrame>>,
) {
    let mut frames = FrameReader::new(MAX_RELAY_DATA + 1);
    loop {
        let f = match frames.next(&mut rd).await {
            Ok(Some(b)) => RelayFrame::decode(&b).map_err(Error::from),
            Ok(None) => Err(Error::Disconnected("prover closed during the relay".into())),
            Err(e) => Err(e),
        };
        let last = !matches!(f, Ok(RelayFrame::Data(_)));
        if tx.send(f).await.is_err() || last {
            return;
        }
    }
}

/// The proof: run the engine on the session's statement and context over
/// the link, and let the session conclude from its result (off the
/// session's task, within the proof deadline). The verdict to send, the
/// outcome, and the link (unless the link itself failed).
async fn verify_zk<R: Runtime, L: Link>(
    rt: &R,
    pre: VerifierPreprocessed,
    link: L,
    mut session: VerifierSession,
    cfg: &VerifierConfig,
) -> Concluded<L> {
    let start = rt.now_ms();
    let (Some(statement), Some(context)) = (session.zk_statement(), session.proof_context()) else {
        let (verdict, out) = session.conclude(Err("no proof to run".into()), None);
        return concluded(verdict, out, Ok(link));
    };
    let mut rng = rt.rng();
    let run = timeout(
        rt,
        cfg.proof_timeout,
        "the proof (limit proof_timeout)",
        async {
            Ok(pre
                .verify(Channel::new(link), statement, &context, &mut rng)
                .await)
        },
    )
    .await;
    match run {
        Ok(Ok((proven, ch))) => {
            let key = cfg.attestation_key.clone();
            let spent = std::time::Duration::from_millis((rt.now_ms() - start).max(0.0) as u64);
            let left = cfg.proof_timeout.saturating_sub(spent);
            let conclude = timeout(
                rt,
                left,
                "concluding the proof",
                compute(rt, "concluding the proof", move || {
                    session.conclude(Ok(&proven), key.as_deref())
                }),
            )
            .await;
            let (verdict, out) = match conclude {
                Ok(r) => r,
                Err(Error::Timeout(_)) => failed(ProxyError::Limit(format!(
                    "the proof phase took longer than {} ms",
                    cfg.proof_timeout.as_millis()
                ))),
                Err(e) => failed(ProxyError::Protocol(format!(
                    "concluding the proof failed: {e}"
                ))),
            };
            let link = ch
                .into_inner()
                .await
                .map_err(|e| Error::Disconnected(format!("after the proof: {e}")));
            concluded(verdict, out, link)
        }
        Ok(Err(e)) => {
            let (verdict, out) = session.conclude(Err(e.to_string()), None);
            concluded(
                verdict,
                out,
                Err(Error::Disconnected("proof rejected".into())),
            )
        }
        Err(e) => {
            let out = Err(ProxyError::Protocol(e.to_string()));
            concluded(verdict(&out, None), out, Err(e))
        }
    }
}

fn concluded<L>(
    verdict: VerifierMsg,
    out: webproof_proxy::error::Result<VerifierOutput>,
    link: Result<L>,
) -> Concluded<L> {
    Concluded {
        verdict,
        link,
        output: out.map_err(Error::Proxy),
    }
}

/// A verdict and outcome for a failure outside the session's conclusion.
fn failed(e: ProxyError) -> (VerifierMsg, webproof_proxy::error::Result<VerifierOutput>) {
    let out = Err(e);
    (verdict(&out, None), out)
}

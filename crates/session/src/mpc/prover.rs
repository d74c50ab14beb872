//! The prover's MPC run, written once for every runtime: the hello, the
//! session's COTs, the 2PC session with the server beside the proof's
//! Ferret setup, the proof of the response, the verdict and the
//! attestation; and who is to blame when it fails ([`blame`]).
//!
//! Every value used online is authentic where `webproof_mpc_tls` says so;
//! this run decides only the order of flights, the timeouts and the blame.
//! What it takes from the verifier: the hello's answer (checked against
//! the two answers a hello has), the session's messages (each checked by
//! the session), the proof's messages (checked by the sealed proof) and
//! the verdict, whose output is expanded from this side's own request and
//! response, and whose attestation is checked against this side's own
//! commitment.

use super::probe::Picked;
use super::side::ProverSide;
use super::{
    channel_back, duplex_writer, engine_error, link_closed, proof_config, proof_cots, warm_up_draw,
};
use crate::frame::{recv_msg, recv_msg_limited, send_msg, write_frame, FrameReader};
use crate::prover::{Progress, ProveOutcome, ProveStats, Stage as Phase};
use crate::runtime::{compute, spawn, timeout, Connector, Counters, Link, Runtime, Section};
use crate::{Error, Result};
use futures::future::{pending, poll_fn, select, Either};
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use futures::SinkExt;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;
use webproof_core::cot::RandomCotReceiver;
use webproof_core::Channel;
use webproof_disclosure::attest::AttestOptions;
use webproof_disclosure::http::RevealItem;
use webproof_mpc_tls as mpc;
use webproof_mpc_tls::tls13::response::{prove_response13, Claim13};
use webproof_mpc_tls::tls13::Tls13ProverSession;
use webproof_mpc_tls::{cots_needed, CotPool, ResponseClaim};
use webproof_ot::SoftSpokenReceiver;
use webproof_proxy::protocol::{
    MpcHello, ProverMsg, VerifierMsg, MAX_VERDICT_MSG, PROTOCOL_VERSION,
};
use webproof_proxy::session::prover::{accept_hello_answer, accept_verdict, Pending};
use webproof_proxy::{CipherSuite, Direction, KxGroup, RecorderLimits, TlsVersion};

/// Largest session message the prover accepts (the garbled tables come
/// in chunks; the OLE answers of a 16 KB request record are the largest).
pub const MAX_FROM_VERIFIER: usize = mpc::msg::MAX_MESSAGE;

/// Frames queued for the writer: a few chunks, so a peer that stops
/// reading stops this side too, not only the socket.
pub const DUPLEX_QUEUE: usize = 4;

/// Most bytes of verifier frames the prover queues while its schedules
/// build (one more frame, up to [`MAX_FROM_VERIFIER`], may go over).
/// About a second of tables on a fast link; the rest waits in the link.
const MAX_EARLY_BYTES: usize = 32 << 20;

/// How long the prover waits for the verifier's next table.
const TABLE_WAIT: Duration = Duration::from_secs(60);
/// How long the session may be idle once the server is reached.
const IDLE: Duration = Duration::from_secs(30);
/// How long connecting to the server may take.
const CONNECT: Duration = Duration::from_secs(10);

/// What the prover asks for.
#[derive(Clone, Debug)]
pub struct Request {
    /// The server's name (SNI and certificate) and port.
    pub host: String,
    /// The server's port.
    pub port: u16,
    /// The HTTP request, as sent.
    pub request: Vec<u8>,
    /// Restrict to one TLS version (none: the server's pick, asked by
    /// `mpc::probe`).
    pub version: Option<TlsVersion>,
    /// Suites to offer (empty: every suite MPC mode runs).
    pub suites: Vec<CipherSuite>,
    /// Groups to offer (empty: X25519, P-256).
    pub groups: Vec<KxGroup>,
    /// API key for verifiers that require one.
    pub api_key: Option<String>,
    /// What to reveal (empty: the default).
    pub reveal: Vec<RevealItem>,
    /// Ask for an attestation over a commitment to the transcript.
    pub attest: Option<AttestOptions>,
}

/// How far the run got, to tell who is to blame for a failure ([`blame`]).
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

/// [`Stage`] shared with the run's tasks.
#[derive(Debug, Default)]
pub struct StageCell(AtomicU8);

impl StageCell {
    fn set(&self, s: Stage) {
        self.0.store(s as u8, Ordering::SeqCst);
    }

    /// Where the run is.
    pub fn get(&self) -> Stage {
        match self.0.load(Ordering::SeqCst) {
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
pub fn blame(stage: Stage, e: &Error) -> Option<&'static str> {
    use mpc::Error as E;
    if let Error::Mpc(E::VerifierCheated(_)) = e {
        return Some("failed the audit of its garbling");
    }
    // The dual execution's check (or another check of the 2PC core) caught
    // it during the session: the request never left.
    if let Error::Mpc(E::Mpc(webproof_mpc::Error::VerifierCheated(_))) = e {
        return Some(
            "cheated in the 2PC (its garbling of the request's keystream failed the check)",
        );
    }
    if stage != Stage::AwaitingAudit {
        return None;
    }
    match e {
        Error::Mpc(
            E::Tls(_)
            | E::Disclosure(_)
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
        | Error::Proxy(_)
        | Error::Setup(_)
        | Error::Tls(_)
        | Error::Refused(_)
        | Error::Rejected(_)
        | Error::Unauthorized(_)
        | Error::Forbidden(_)
        | Error::FlaggedVerifier { .. }
        | Error::AfterResponse(_)
        | Error::VerifierCheated { .. } => None,
        Error::Mpc(E::Aborted(_)) => Some("aborted after the prover's Close, before the audit"),
        Error::Timeout(_) | Error::VerifierSilent { .. } => {
            Some("went silent after the prover's Close, before the audit")
        }
        Error::Disconnected(_) | Error::Channel(_) | Error::Io { .. } => {
            Some("hung up after the prover's Close, before the audit")
        }
        Error::Mpc(_) | Error::Engine { .. } => {
            Some("broke off the protocol after the prover's Close, before the audit")
        }
    }
}

/// The prover's MPC run for one request.
pub struct Prover {
    req: Request,
    config: mpc::ProverConfig,
    progress: Option<Progress>,
}

impl Prover {
    /// Check the request for MPC mode: TLS 1.2 with a suite it runs,
    /// TLS 1.3 with one of `webproof_mpc_tls::tls13::SUITES`, or either
    /// (no version: the server's pick, see `mpc::probe`).
    pub fn new(req: Request, progress: Option<Progress>) -> Result<Self> {
        let config = mpc::ProverConfig {
            server_name: req.host.clone(),
            suites: req
                .suites
                .iter()
                .copied()
                .filter(|&s| mpc::cots::runs_suite(s))
                .collect(),
            groups: req.groups.clone(),
            ems: true,
            request: req.request.clone(),
            limits: RecorderLimits::default(),
        };
        let suites13: Vec<CipherSuite> = req
            .suites
            .iter()
            .copied()
            .filter(|s| mpc::tls13::SUITES.contains(s))
            .collect();
        let none = match req.version {
            Some(TlsVersion::Tls12) => config.suites.is_empty(),
            Some(TlsVersion::Tls13) => suites13.is_empty(),
            _ => config.suites.is_empty() && suites13.is_empty(),
        };
        if !req.suites.is_empty() && none {
            return Err(Error::Setup(
                "none of the chosen suites runs in MPC mode (TLS 1.2 ECDHE with AES-GCM or \
                 ChaCha20-Poly1305, TLS 1.3 AES-GCM or ChaCha20-Poly1305)"
                    .into(),
            ));
        }
        Ok(Prover {
            req,
            config,
            progress,
        })
    }

    /// The TLS 1.3 session's settings for `suite`.
    fn config13(&self, suite: CipherSuite) -> mpc::ProverConfig {
        mpc::ProverConfig {
            suites: vec![suite],
            ems: false,
            ..self.config.clone()
        }
    }

    /// The TLS 1.3 suites this request offers, in order of preference.
    fn suites13(&self) -> Vec<CipherSuite> {
        if self.req.suites.is_empty() {
            return mpc::tls13::SUITES.to_vec();
        }
        self.req
            .suites
            .iter()
            .copied()
            .filter(|s| mpc::tls13::SUITES.contains(s))
            .collect()
    }

    /// The TLS 1.2 session's settings: the probe's pick first (the hello
    /// offers its family, and the SHA-384 key derivation is garbled for
    /// the server's extended-master-secret choice); without a probe, the
    /// request's.
    fn config12(&self, picked: Option<Picked>) -> mpc::ProverConfig {
        let Some(picked) = picked else {
            return self.config.clone();
        };
        let mut suites = vec![picked.suite];
        suites.extend(self.config.suites.iter().filter(|&&s| s != picked.suite));
        mpc::ProverConfig {
            suites,
            ems: picked.ems,
            ..self.config.clone()
        }
    }

    /// The version and suite of the session (`mpc::probe`): an explicit
    /// version is honoured, asking the server which suite it picks (the
    /// circuits are garbled for one suite family, and TLS 1.2's SHA-384
    /// key derivation for one EMS choice, ahead) unless one TLS 1.3 suite
    /// is named; without one, TLS 1.2 if the server runs it, else TLS 1.3.
    async fn choose<R: Runtime, C: Connector>(&self, rt: &R, server: &C) -> Result<Chosen> {
        let suites13 = self.suites13();
        match self.req.version {
            Some(TlsVersion::Tls13) if suites13.len() == 1 => {
                return Ok(Chosen::Tls13(suites13[0]))
            }
            _ => {}
        }
        let offer12 = match (self.req.version, self.config.suites.is_empty()) {
            (Some(TlsVersion::Tls13), _) => Vec::new(),
            (_, true) => super::probe::SUITES12.to_vec(),
            (_, false) => self.config.suites.clone(),
        };
        let ask = |suites13: &[CipherSuite], suites12: &[CipherSuite]| {
            let (suites13, suites12) = (suites13.to_vec(), suites12.to_vec());
            async move {
                timeout(
                    rt,
                    CONNECT,
                    "asking the server which TLS version and suite it runs",
                    super::probe::probe(
                        server,
                        &self.req.host,
                        self.req.port,
                        &suites13,
                        &suites12,
                        &mut rt.rng(),
                    ),
                )
                .await
            }
        };
        // TLS 1.2 first where the server runs it: its session is the one
        // measured against the targets, and proves the garbling
        // consistent in ZK (TLS 1.3's does not yet, see
        // docs/protocol/mpc-tls13.md); a server that refuses it is asked
        // for TLS 1.3, one more round trip to the server only.
        let first = if offer12.is_empty() {
            None
        } else {
            match ask(&[], &offer12).await {
                Ok(p) if offer12.contains(&p.suite) => return Ok(Chosen::Tls12(Some(p))),
                Ok(p) => Some(Ok(p)),
                Err(e) => Some(Err(e)),
            }
        };
        if self.req.version == Some(TlsVersion::Tls12) {
            return Err(first
                .and_then(|f| f.err())
                .unwrap_or_else(|| Error::Tls("the server picked no TLS 1.2 suite".into())));
        }
        let picked = if suites13.is_empty() {
            first.unwrap_or_else(|| Err(Error::Setup("no suite to offer".into())))?
        } else {
            ask(&suites13, &[]).await?
        };
        if suites13.contains(&picked.suite) {
            Ok(Chosen::Tls13(picked.suite))
        } else if offer12.contains(&picked.suite) {
            Ok(Chosen::Tls12(Some(picked)))
        } else {
            Err(Error::Tls(format!(
                "the server picked {}, which MPC mode does not run (it runs TLS 1.3 \
                 with {}, TLS 1.2 ECDHE with AES-GCM or ChaCha20-Poly1305)",
                picked.suite,
                mpc::tls13::SUITES
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            )))
        }
    }

    fn report(&self, stage: Phase) {
        crate::prover::report(&self.progress, stage)
    }

    /// The whole run within `limit`: connect to the verifier (`connect`),
    /// run the session and the proof. A failure the verifier is to blame
    /// for ([`blame`]) becomes [`Error::VerifierCheated`], after `record`
    /// (given what it did) has kept it and said where. Never retries: a
    /// retry would hand a cheating verifier another session over the same
    /// credentials.
    pub async fn prove<R: Runtime, L: Link, C: Connector>(
        &self,
        rt: &R,
        verifier: &str,
        connect: impl std::future::Future<Output = Result<L>>,
        server: &C,
        limit: Duration,
        record: impl FnOnce(&str) -> String,
    ) -> Result<ProveOutcome> {
        let stage = StageCell::default();
        let ran = timeout(
            rt,
            limit,
            "the whole proving session",
            self.run(rt, connect, server, &stage),
        )
        .await;
        let e = match ran {
            Ok(out) => return Ok(out),
            Err(e) => e,
        };
        let Some(what) = blame(stage.get(), &e) else {
            return Err(e);
        };
        tracing::warn!(verifier, error = %e, "the MPC verifier {what}");
        let recorded = record(&format!("{what}: {e}"));
        Err(Error::VerifierCheated {
            verifier: verifier.to_string(),
            what: format!("{what} ({e})"),
            recorded,
        })
    }

    /// The run, noting its [`Stage`] in `stage`.
    pub async fn run<R: Runtime, L: Link, C: Connector>(
        &self,
        rt: &R,
        connect: impl std::future::Future<Output = Result<L>>,
        server: &C,
        stage: &StageCell,
    ) -> Result<ProveOutcome> {
        let t0 = rt.now_ms();
        let mut rng = rt.rng();
        let request = &self.req.request;
        // The server is asked for its version and suite (`choose`: a
        // round trip or two to the server) while the verifier is reached
        // and the COTs are extended, which need neither: the session's
        // terms are the first thing that does.
        let admitted = self.admitted(connect, request.len(), &mut rng);
        let (version, (link, counters, receiver, macs)) =
            futures::try_join!(self.choose(rt, server), admitted)?;

        // The verifier garbles every circuit of the session for the
        // hello's terms and streams the tables before the server
        // connection opens: the session's first output for the server
        // (its ClientHello, after the last circuit's tables) marks the end
        // of preprocessing. The version's session is announced by the
        // suite of its `Hello` terms.
        let cots = CotPool::new(macs);
        match version {
            Chosen::Tls13(suite) => {
                let (session, first) =
                    Tls13ProverSession::new(self.config13(suite), cots, &mut rng)?;
                let (cot, link, ran) = self
                    .section(rt, link, receiver, session, first, server, stage, &counters)
                    .await?;
                let times = ([t0, ran.t1, ran.t2], (ran.up0, ran.down0));
                let done = Done::V13(Box::new(ran.outcome));
                self.conclude(rt, link, cot, done, times, stage, &counters)
                    .await
            }
            Chosen::Tls12(picked) => {
                let (session, first) =
                    mpc::ProverSession::new(self.config12(picked), cots, &mut rng)?;
                let (cot, link, ran) = self
                    .section(rt, link, receiver, session, first, server, stage, &counters)
                    .await?;
                let times = ([t0, ran.t1, ran.t2], (ran.up0, ran.down0));
                let done = Done::V12(Box::new(ran.outcome));
                self.conclude(rt, link, cot, done, times, stage, &counters)
                    .await
            }
        }
    }

    /// The verifier reached and admitting the session, and the session's
    /// COTs (this party the receiver): the link, its counters, the
    /// SoftSpokenOT receiver to extend later and the COTs' MACs.
    async fn admitted<L: Link>(
        &self,
        connect: impl std::future::Future<Output = Result<L>>,
        request_len: usize,
        rng: &mut (impl rand_core::RngCore + rand_core::CryptoRng),
    ) -> Result<(L, Counters, SoftSpokenReceiver, Vec<webproof_core::Block>)> {
        let mut link = connect.await?;
        let counters = link.counters();
        self.report(Phase::Connected);
        let hello = ProverMsg::Hello {
            version: PROTOCOL_VERSION,
            host: self.req.host.clone(),
            port: self.req.port,
            api_key: self.req.api_key.clone(),
            // Proxy mode's preprocessing size; unused by MPC mode, which
            // sizes its COTs from the request, but admission bounds it.
            expected_cots: 1,
            mpc: Some(MpcHello {
                request_len: request_len as u64,
            }),
        };
        // The hello and SoftSpokenOT's first message (the base-OT
        // sender's, which needs nothing from the verifier) in one flight,
        // as proxy mode sends them.
        let opening = SoftSpokenReceiver::begin(webproof_ot::DEFAULT_K, rng)
            .map_err(|e| engine_error("the MPC preprocessing", e))?;
        send_msg(&mut link, &hello).await?;
        write_frame(&mut link, &opening.first_message()).await?;
        // The same answer as proxy mode's, read by the same code.
        accept_hello_answer(
            recv_msg::<_, VerifierMsg>(&mut link, "the verifier's answer to the hello").await?,
        )?;
        self.report(Phase::Admitted);
        // Preprocessing: this party is the COT receiver.
        let mut ch = Channel::new(link);
        let mut receiver = opening
            .finish(&mut ch, rng)
            .await
            .map_err(|e| engine_error("the MPC preprocessing", e))?;
        let mut macs = Vec::new();
        receiver
            .extend(&mut ch, cots_needed(request_len), &mut macs)
            .await
            .map_err(|e| engine_error("the MPC preprocessing", e))?;
        let link = channel_back(ch.into_inner().await, "the MPC preprocessing")?;
        Ok((link, counters, receiver, macs))
    }

    /// The multiplexed section: the session on the relay stream and the
    /// proof's Ferret setup on the preprocessing stream.
    #[allow(clippy::too_many_arguments)]
    async fn section<R: Runtime, L: Link, P: ProverSide, C: Connector>(
        &self,
        rt: &R,
        link: L,
        receiver: SoftSpokenReceiver,
        session: P,
        first: mpc::ProverMsg,
        server: &C,
        stage: &StageCell,
        counters: &Counters,
    ) -> Result<(
        webproof_ferret::FerretReceiver<SoftSpokenReceiver>,
        L,
        Online<P::Outcome>,
    )> {
        let mut rng = rt.rng();
        // The proof's COTs: their setup runs beside the session, on the
        // link's second stream.
        let cot = webproof_ferret::FerretReceiver::new(proof_cots(), receiver, &mut rng)
            .map_err(|e| engine_error("the proof setup", e))?;
        let (relay, preprocessing, section) = link.start_mux();
        let section_ran = async {
            let warm = spawn(rt, warm_up_receiver(cot, preprocessing));
            let run = pin!(self.session(rt, session, first, relay, server, stage, counters));
            match select(run, warm).await {
                // A failed session ends the setup with it.
                Either::Left((ran, warm)) => {
                    let ran = ran?;
                    Ok((warm.await?, ran))
                }
                // A failed setup is reported after the session's end: the
                // session's own error (the verifier gone, an abort)
                // explains it better.
                Either::Right((cot, run)) => {
                    let ran = run.await?;
                    Ok((cot?, ran))
                }
            }
        };
        let (cot, ran) = match section_ran.await {
            Ok(v) => v,
            Err(e) => {
                section.abandon().await;
                return Err(e);
            }
        };
        let link = section.finish().await?;
        Ok((cot, link, ran))
    }

    /// The proof of the response and the verdict, for either version.
    #[allow(clippy::too_many_arguments)]
    async fn conclude<R: Runtime, L: Link>(
        &self,
        rt: &R,
        mut link: L,
        cot: webproof_ferret::FerretReceiver<SoftSpokenReceiver>,
        done: Done,
        ([t0, t1, t2], (up0, down0)): ([f64; 3], (u64, u64)),
        stage: &StageCell,
        counters: &Counters,
    ) -> Result<ProveOutcome> {
        let mut rng = rt.rng();
        let request = &self.req.request;
        // The proof of the response.
        let response = done.response().to_vec();
        self.report(Phase::Response(response.len()));
        // The plan: what to reveal and commit to. Its errors (a JSON path
        // the response lacks, say) come after the request reached the
        // server, and say so, as in proxy mode.
        let after_response = |e: Error| Error::AfterResponse(Box::new(e));
        // Pipelined requests (all sent at once): a server that closed
        // early answered only the first ones.
        let (answered, sent) =
            webproof_disclosure::exchange::responses_answered(request, &response)
                .map_err(|e| after_response(e.into()))?;
        if sent > 1 && answered < sent {
            return Err(Error::Tls(format!(
                "the server closed the connection after request {answered} of {sent}; it may \
                 not allow several requests per connection (Connection: close)"
            )));
        }
        let disclosure =
            webproof_disclosure::http::disclosure_from_items(&self.req.reveal, request, &response)
                .map_err(|e| after_response(e.into()))?;
        let ranges = |d: Direction| -> Vec<core::ops::Range<usize>> {
            disclosure
                .ranges(d)
                .iter()
                .map(|r| r.start..r.end)
                .collect()
        };
        // The hidden bytes of the request heads, proven free of line ends
        // (both versions' claims) so the verifier can fix where each
        // request ends.
        let crlf_free = webproof_disclosure::exchange::hidden_head_bytes(
            request,
            disclosure.ranges(Direction::Sent),
        );
        let crlf_free_ranges: Vec<core::ops::Range<usize>> =
            crlf_free.iter().map(|r| r.start..r.end).collect();
        // An attestation: the proof shows the commitment's leaf hashes are
        // over the session's request and response.
        let committed = match &self.req.attest {
            Some(a) => Some(
                webproof_disclosure::attest::commit(a, request, &response, &mut rng)
                    .map_err(|e| after_response(e.into()))?,
            ),
            None => None,
        };
        let blinders = committed
            .as_ref()
            .map(|(_, c)| webproof_disclosure::attest::blinders(c))
            .unwrap_or_default();
        let (sent, received) = (ranges(Direction::Sent), ranges(Direction::Received));
        match &done {
            Done::V12(outcome) => {
                let mut claim = ResponseClaim::new(outcome, &received)
                    .and_then(|c| c.with_request(outcome, request, &sent))
                    .and_then(|c| c.with_request_crlf_free(outcome, &crlf_free_ranges))
                    .map_err(|e| after_response(e.into()))?;
                if let Some((_, commitment)) = &committed {
                    claim = claim.with_commitment(outcome, commitment);
                }
                self.report(Phase::Proving);
                mpc::prove_response(
                    cot,
                    Channel::new(&mut link),
                    proof_config(),
                    outcome,
                    &claim,
                    &blinders,
                    &mut rng,
                )
                .await?;
            }
            Done::V13(session) => {
                let mut claim = Claim13::new(session, &received)
                    .and_then(|c| c.with_request(session, &sent))
                    .map(|c| c.with_request_crlf_free(&crlf_free_ranges))
                    .map_err(|e| after_response(e.into()))?;
                if let Some((_, commitment)) = &committed {
                    claim = claim.with_commitment(commitment);
                }
                self.report(Phase::Proving);
                prove_response13(
                    cot,
                    Channel::new(&mut link),
                    proof_config(),
                    session,
                    &claim,
                    &blinders,
                    &mut rng,
                )
                .await?;
            }
        }
        stage.set(Stage::Audited);
        let verdict: VerifierMsg =
            recv_msg_limited(&mut link, "the verdict", MAX_VERDICT_MSG).await?;
        self.report(Phase::Verdict);
        // Accepted as proxy mode's: the output rebuilt from this side's
        // own request and response, the attestation checked against this
        // side's own commitment.
        let outcome_of_verdict = accept_verdict(
            verdict,
            Pending {
                app_sent: request.clone(),
                app_received: response.clone(),
                disclosed: disclosure,
                crlf_free,
                committed,
                certificates: done.certificates().to_vec(),
            },
        )?;
        let t3 = rt.now_ms();
        Ok(ProveOutcome {
            output: outcome_of_verdict.output,
            stats: ProveStats::of_run([t0, t1, t2, t3], (up0, down0), counters.get()),
            response,
            attestation: outcome_of_verdict.attestation,
            session_id: outcome_of_verdict.session_id,
        })
    }

    /// The session on the mux's relay stream: the verifier's tables (the
    /// circuits' schedules built meanwhile), the server connection, the
    /// session to the verifier's `CloseAck`; the stream is closed at the
    /// end. `counters` are the whole link's.
    #[allow(clippy::too_many_arguments)]
    async fn session<R: Runtime, P: ProverSide, S, C: Connector>(
        &self,
        rt: &R,
        session: P,
        first: mpc::ProverMsg,
        relay: S,
        server: &C,
        stage: &StageCell,
        counters: &Counters,
    ) -> Result<Online<P::Outcome>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        // Preprocessing is full duplex: this party's garbling of the
        // request's keystream (dual execution) goes up while the
        // verifier's tables come down, so frames are written by a writer
        // of their own.
        let (mut rd, wr) = relay.split();
        let (tx, rx) = futures::channel::mpsc::channel::<Vec<u8>>(DUPLEX_QUEUE);
        let mut frames = FrameReader::new(MAX_FROM_VERIFIER);
        let logic = async {
            let mut tx = tx;
            tx.send(first.encode()).await.map_err(|_| link_closed())?;
            preprocess(rt, session, &mut rd, &mut frames, &mut tx).await
        };
        let (pre, w) = futures::join!(logic, duplex_writer(wr, rx));
        let (session, opening) = pre?;
        let mut link = rd
            .reunite(w?)
            .map_err(|_| Error::Disconnected("the relay stream came apart".into()))?;

        let t1 = rt.now_ms();
        let (up0, down0) = counters.get();
        let conn = timeout(
            rt,
            CONNECT,
            "connecting to the server",
            server.connect(&self.req.host, self.req.port),
        )
        .await?;
        self.report(Phase::ServerReached);
        let (srv_rd, mut srv_wr) = conn.split();
        srv_wr
            .write_all(&opening.to_server)
            .await
            .map_err(Error::io("writing to the server"))?;
        for m in opening.to_verifier {
            write_frame(&mut link, &m.encode()).await?;
        }
        let (outcome, t2) =
            run_session(rt, session, &mut link, frames, srv_rd, srv_wr, stage).await?;
        let _ = link.close().await;
        Ok(Online {
            outcome,
            t1,
            t2,
            up0,
            down0,
        })
    }
}

/// The version and suite the run's session takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chosen {
    /// TLS 1.2, with what the probe learned if the server was asked.
    Tls12(Option<Picked>),
    Tls13(CipherSuite),
}

/// A session's outcome, for the proof.
enum Done {
    V12(Box<mpc::ProverOutcome>),
    V13(Box<Tls13ProverSession>),
}

impl Done {
    fn response(&self) -> &[u8] {
        match self {
            Done::V12(o) => &o.response,
            Done::V13(p) => p.response().map(|r| &r.response[..]).unwrap_or_default(),
        }
    }

    fn certificates(&self) -> &[Vec<u8>] {
        match self {
            Done::V12(o) => &o.certificates,
            Done::V13(p) => p.certificates(),
        }
    }
}

/// The session's result and its clock: when the server was reached
/// (`t1`) and let go (`t2`), and the link's counts at `t1`.
struct Online<O> {
    outcome: O,
    t1: f64,
    t2: f64,
    up0: u64,
    down0: u64,
}

/// Ferret's setup iteration and first main iteration for the proof, on
/// the mux's preprocessing stream; the stream is closed at the end.
async fn warm_up_receiver<S: AsyncRead + AsyncWrite + Unpin + Send>(
    mut cot: webproof_ferret::FerretReceiver<SoftSpokenReceiver>,
    io: S,
) -> Result<webproof_ferret::FerretReceiver<SoftSpokenReceiver>> {
    let mut ch = Channel::new(io);
    RandomCotReceiver::extend(&mut cot, &mut ch, warm_up_draw(), &mut Vec::new())
        .await
        .map_err(|e| engine_error("the proof setup", e))?;
    let mut io = channel_back(ch.into_inner().await, "the proof setup")?;
    let _ = io.close().await;
    Ok(cot)
}

/// The prover's preprocessing: the verifier's tables in (the circuits'
/// schedules built meanwhile), its own keystream garbling out, until the
/// session gives the ClientHello and every upload is out. Returns the
/// session and the output that opens the server connection.
async fn preprocess<R: Runtime, P: ProverSide, Rd: AsyncRead + Unpin>(
    rt: &R,
    session: P,
    rd: &mut Rd,
    frames: &mut FrameReader,
    tx: &mut futures::channel::mpsc::Sender<Vec<u8>>,
) -> Result<(P, mpc::ProverOutput)> {
    let hung_up = || Error::Disconnected("the verifier hung up during preprocessing".into());
    // The circuits' schedules (a few hundred ms of CPU), built off the
    // session's task while the verifier garbles; the link keeps being read
    // meanwhile, into a queue the session takes afterwards, so the tables
    // keep flowing instead of stalling on a full socket buffer. Bounded in
    // bytes: when it is full the link is no longer read until the
    // schedules are built, and back-pressure holds the verifier.
    let mut early = EarlyQueue::new(MAX_EARLY_BYTES);
    let mut build = pin!(compute(
        rt,
        "building the MPC circuits' schedules",
        move || {
            let mut session = session;
            let r = session.prepare();
            (session, r)
        }
    ));
    let (mut session, prepared) = loop {
        if !early.has_room() {
            break build.as_mut().await?;
        }
        let next = pin!(timeout(
            rt,
            TABLE_WAIT,
            "waiting for the verifier's garbled tables",
            frames.next(rd),
        ));
        match select(build.as_mut(), next).await {
            Either::Left((built, _)) => break built?,
            Either::Right((f, _)) => early.push(f?.ok_or_else(hung_up)?),
        }
    };
    queue_step(tx, prepared.map(|()| Default::default()))?;
    let mut opening = mpc::ProverOutput::default();
    let mut early = early.into_frames().into_iter();
    while opening.to_server.is_empty() || session.upload_ready() {
        let (reading, uploading) = (opening.to_server.is_empty(), session.upload_ready());
        // The verifier's frames first: queued ones, then the link's.
        let event = {
            let read = pin!(async {
                if !reading {
                    return pending().await;
                }
                match early.next() {
                    Some(f) => Ok(Some(f)),
                    None => {
                        timeout(
                            rt,
                            TABLE_WAIT,
                            "waiting for the verifier's garbled tables",
                            frames.next(rd),
                        )
                        .await
                    }
                }
            });
            let ready = pin!(async {
                if !uploading {
                    return pending().await;
                }
                poll_fn(|cx| tx.poll_ready(cx)).await
            });
            match select(read, ready).await {
                Either::Left((f, _)) => Either::Left(f),
                Either::Right((r, _)) => Either::Right(r),
            }
        };
        let step = match event {
            Either::Left(f) => {
                let f = f?.ok_or_else(hung_up)?;
                session.on_verifier_bytes(&f)
            }
            Either::Right(ready) => {
                ready.map_err(|_| link_closed())?;
                match session.next_upload() {
                    Ok(Some(m)) => {
                        tx.start_send(m.encode()).map_err(|_| link_closed())?;
                        Ok(Default::default())
                    }
                    Ok(None) => Ok(Default::default()),
                    Err(e) => Err(e),
                }
            }
        };
        let out = queue_step(tx, step)?;
        opening.to_verifier.extend(out.to_verifier);
        opening.to_server.extend(out.to_server);
    }
    if early.next().is_some() {
        return Err(Error::Mpc(mpc::Error::Unexpected {
            expected: "nothing after the last table before the ClientHello",
            got: "a message",
        }));
    }
    Ok((session, opening))
}

/// A session step's result; on an error, the abort is queued for the
/// writer first.
fn queue_step(
    tx: &mut futures::channel::mpsc::Sender<Vec<u8>>,
    step: core::result::Result<mpc::ProverOutput, mpc::Error>,
) -> Result<mpc::ProverOutput> {
    step.map_err(|e| {
        if let Some(abort) = abort_frame(&e) {
            let _ = tx.try_send(abort);
        }
        Error::Mpc(e)
    })
}

/// The `Abort` telling the verifier why this party stopped, unless the
/// verifier is the one who aborted.
fn abort_frame(e: &mpc::Error) -> Option<Vec<u8>> {
    (!matches!(e, mpc::Error::Aborted(_)))
        .then(|| mpc::ProverMsg::Abort(super::rejection(e).to_string()).encode())
}

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
            Err(Error::Mpc(e))
        }
    }
}

/// What woke the session.
enum Event {
    Verifier(Result<Option<Vec<u8>>>),
    Server(std::io::Result<usize>),
    Idle,
}

/// Run the prover's session to its outcome: verifier frames in, the
/// server's bytes in, whatever the session says out; `Close` once the
/// server is done and the request is out. Returns the outcome and when the
/// server's part ended.
async fn run_session<R: Runtime, P: ProverSide, L, Sr, Sw>(
    rt: &R,
    mut session: P,
    link: &mut L,
    mut frames: FrameReader,
    srv_rd: Sr,
    srv_wr: Sw,
    stage: &StageCell,
) -> Result<(P::Outcome, f64)>
where
    L: AsyncRead + AsyncWrite + Unpin,
    Sr: AsyncRead + Unpin,
    Sw: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; 32 << 10];
    let mut srv_wr = Some(srv_wr);
    let mut srv_rd = Some(srv_rd);
    // When the server's part ended: the `Close` (the verifier's
    // `CloseAck` that completes the session needs no server).
    let mut closed_at = None;
    loop {
        if session.finished() {
            if frames.buffered() != 0 {
                return Err(Error::Proxy(webproof_proxy::ProxyError::Protocol(
                    "the verifier sent more after its CloseAck".into(),
                )));
            }
            // The session's tables and step state go; the outcome stays.
            let outcome = session.into_outcome().ok_or_else(|| {
                Error::Proxy(webproof_proxy::ProxyError::Protocol(
                    "the session ended without its outcome".into(),
                ))
            })?;
            return Ok((outcome, closed_at.unwrap_or_else(|| rt.now_ms())));
        }
        let event = {
            let verifier = pin!(frames.next(link));
            let server = pin!(async {
                match srv_rd.as_mut() {
                    Some(r) => r.read(&mut buf).await,
                    None => pending().await,
                }
            });
            let idle = pin!(rt.sleep(IDLE));
            match select(select(verifier, server), idle).await {
                Either::Left((Either::Left((f, _)), _)) => Event::Verifier(f),
                Either::Left((Either::Right((n, _)), _)) => Event::Server(n),
                Either::Right(_) => Event::Idle,
            }
        };
        let step = match event {
            Event::Verifier(f) => {
                let f = f?.ok_or_else(|| {
                    Error::Disconnected("the verifier hung up mid-session".into())
                })?;
                let t = rt.now_ms();
                let step = session.on_verifier_bytes(&f);
                tracing::debug!(
                    bytes = f.len(),
                    cpu_ms = rt.now_ms() - t,
                    "mpc: verifier message in"
                );
                step
            }
            Event::Server(Ok(0) | Err(_)) => {
                srv_rd = None;
                session.on_server_closed()
            }
            Event::Server(Ok(n)) => {
                let t = rt.now_ms();
                let step = session.on_server_bytes(&buf[..n]);
                tracing::debug!(bytes = n, cpu_ms = rt.now_ms() - t, "mpc: server bytes in");
                step
            }
            Event::Idle => {
                return Err(Error::Timeout(format!(
                    "the MPC session idle for {} s",
                    IDLE.as_secs()
                )))
            }
        };
        let out = session_step(link, step).await?;
        if !out.to_server.is_empty() {
            srv_wr
                .as_mut()
                .ok_or_else(|| {
                    Error::Proxy(webproof_proxy::ProxyError::Protocol(
                        "the session wrote to the server after its Close".into(),
                    ))
                })?
                .write_all(&out.to_server)
                .await
                .map_err(Error::io("writing to the server"))?;
        }
        for m in out.to_verifier {
            tracing::trace!(message = m.name(), "mpc: to the verifier");
            write_frame(link, &m.encode()).await?;
        }
        if closed_at.is_none() && session.ready_to_close() {
            // The transcript ends here: what the server does after (its
            // TCP close after close_notify) is no longer the session's,
            // and the connection is let go now, not after the `CloseAck`.
            srv_rd = None;
            if let Some(mut w) = srv_wr.take() {
                let _ = w.close().await;
            }
            closed_at = Some(rt.now_ms());
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

//! The prover's session: the hello, the cut at `Close`, the proof's
//! statement and witness, and the acceptance of the verdict.
//!
//! Where each value comes from: the server name, port, request and reveal
//! selection from the caller's [`ProverConfig`]; the transcript from the
//! prover's own recording of the relay; the session secret from the
//! (EC)DHE shared secret its TLS stack computed ([`TlsSecrets`]),
//! cross-checked against the stack's key log; the time of its own
//! certificate check from the caller. The verifier contributes only its
//! answers, and the verdict is accepted only if its lengths, ranges and
//! digests are those of the prover's own data.

use super::{out_of_order, unexpected, Result, SessionError};
use crate::attest::{self, AttestOptions, AttestationBundle};
use crate::disclosure::Disclosure;
use crate::error::ProxyError;
use crate::http::{disclosure_from_items, RevealItem};
use crate::output::VerifierOutput;
use crate::protocol::{ProofPayload, ProverMsg, RelayFrame, VerifierMsg, PROTOCOL_VERSION};
use crate::record::{content_type, Direction, Recorder, RecorderLimits, Recording};
use crate::statement::PublicInputs;
use crate::suite::{CipherSuite, TlsVersion};
use crate::verify::{self, HandshakeSecrets, RootStore, SecretsSource, VerifyConfig};
use crate::zk;
use rand_core::{CryptoRng, RngCore};
use webproof_tlsproof as tp;
use webproof_tlsproof::session::SessionConfig;

/// What the prover asks for and how it proves it.
#[derive(Clone, Debug)]
pub struct ProverConfig {
    /// Server host name (or IP) for SNI, the certificate and the
    /// verifier's connection.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// API key for verifiers that require one.
    pub api_key: Option<String>,
    /// The request the prover will send (sizes the preprocessing).
    pub request: Vec<u8>,
    /// Response size (bytes) the prover expects (sizes the preprocessing).
    pub expect_response: usize,
    /// The TLS version offered, if restricted.
    pub version: Option<TlsVersion>,
    /// Suites offered, in order (empty: all supported).
    pub suites: Vec<CipherSuite>,
    /// What to reveal (empty: everything).
    pub reveal: Vec<RevealItem>,
    /// Ask for a signed attestation over a commitment to the transcript.
    pub attest: Option<AttestOptions>,
    /// Roots for the prover's own check of the server's handshake.
    pub roots: RootStore,
}

/// Response size a prover expects unless told otherwise (8 KiB): the
/// preprocessing it sizes ([`expected_cots`]) then stays within the
/// small LPN set (`webproof_tlsproof::session::SMALL_SESSION_COTS`) with a request
/// of up to about 2 KiB, as most API responses do. A larger response
/// still proves: past about 10 KiB it runs one more Ferret iteration
/// during the proof (about 1.5 round trips). A default of 16 KiB put
/// every session on the large set, which cost the verifier 1.7 times the
/// CPU for the small responses most sessions fetch (117 ms against 67
/// ms per session on the fleet's machine).
pub const DEFAULT_EXPECT_RESPONSE: usize = 8 << 10;

/// COTs a proof is expected to draw (stated in the hello): from the
/// request's size, the expected response size and the record protection of
/// the first suite offered (servers mostly follow the client's order; any
/// other outcome costs at most an extra Ferret iteration during the proof).
pub fn expected_cots(
    request_len: usize,
    expect_response: usize,
    version: Option<TlsVersion>,
    suites: &[CipherSuite],
) -> u64 {
    // No suites chosen: every suite is offered, in `CipherSuite::ALL` order.
    let offered: &[CipherSuite] = if suites.is_empty() {
        &CipherSuite::ALL
    } else {
        suites
    };
    let aead = offered
        .iter()
        .find(|s| version.is_none_or(|v| s.version() == v))
        .map(|&s| crate::zk::aead(s));
    tp::session::expected_cots(request_len, expect_response, aead)
}

/// What the prover's TLS stack knows about the session: the (EC)DHE shared
/// secret it computed for one of its key shares, and its key log.
pub trait TlsSecrets {
    /// The shared secret computed with the client key share `public_key`.
    fn shared_secret(&self, public_key: &[u8]) -> Option<Vec<u8>>;
    /// The secret logged under `label` for `client_random`.
    fn logged(&self, label: &str, client_random: &[u8; 32]) -> Option<Vec<u8>>;
}

/// The proof the driver runs with the engine
/// (`ProverPreprocessed::prove(channel, &statement, &witness, &context)`).
pub struct ProveStep {
    /// The statement, as the verifier will compute it.
    pub statement: tp::Statement,
    /// The session secret and commitment blinders.
    pub witness: tp::Witness,
    /// The transcript digest and plan the proof is bound to.
    pub context: [u8; 32],
}

/// A verified session, as the prover holds it.
#[derive(Clone, Debug)]
pub struct ProverOutcome {
    /// What the verifier attests, rebuilt from the prover's own data.
    pub output: VerifierOutput,
    /// The attestation and the secrets to present it, if one was asked for.
    pub attestation: Option<AttestationBundle>,
    /// The verifier's id for the session, for the prover's application to
    /// look the result up by (none from a verifier that keeps nothing).
    pub session_id: Option<crate::protocol::SessionId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    HelloSent,
    Accepted,
    Relay,
    Closed,
    Proving,
    Done,
}

/// What the prover keeps between the proof and the verdict.
/// What the prover holds when the verdict comes: its own data, what it
/// disclosed, its commitment, the server's certificates. Both modes accept
/// a verdict against it ([`accept_verdict`]).
pub struct Pending {
    /// The request as sent.
    pub app_sent: Vec<u8>,
    /// The response as received.
    pub app_received: Vec<u8>,
    /// What the proof disclosed.
    pub disclosed: Disclosure,
    /// The hidden sent ranges the proof showed free of CR and LF (both
    /// modes prove the hidden bytes of the request heads).
    pub crlf_free: Vec<crate::Range>,
    /// The commitment to the transcript and its secrets, if an attestation
    /// was asked for.
    pub committed: Option<(
        webproof_attestation::Transcript,
        webproof_attestation::TranscriptCommitment,
    )>,
    /// The server's certificate chain (for the attestation bundle).
    pub certificates: Vec<Vec<u8>>,
}

/// The verifier's answer to a hello, the same in both modes: `Accepted`,
/// or its refusal with the reason code (an API key refused is kind
/// `unauthorized`, decided by the verifier).
pub fn accept_hello_answer(msg: VerifierMsg) -> Result<()> {
    match msg {
        VerifierMsg::Accepted => Ok(()),
        VerifierMsg::Refused(r) => Err(SessionError::Refused(r)),
        other => Err(unexpected("Accepted or Refused", &other).into()),
    }
}

/// The verdict, accepted the same way in both modes. It carries no data:
/// the output is rebuilt from `pending` (the prover's own), and refused
/// unless the verifier's lengths, ranges and digests are ours; an
/// attestation must be over our commitment, and one that nobody asked for
/// is refused (the verifier is not following the protocol).
pub fn accept_verdict(msg: VerifierMsg, pending: Pending) -> Result<ProverOutcome> {
    let (digested, attestation, session_id) = match msg {
        VerifierMsg::Verdict {
            result: Ok(o),
            attestation,
            session_id,
        } => (o, attestation, session_id),
        VerifierMsg::Verdict { result: Err(r), .. } => {
            return Err(SessionError::Rejected(r));
        }
        other => return Err(unexpected("a verdict", &other).into()),
    };
    // The verdict's line-end-free ranges are those this side proved: a
    // verifier that claims others would pair the exchanges differently
    // from what was established.
    if digested.sent_crlf_free != pending.crlf_free {
        return Err(
            ProxyError::from(webproof_disclosure::DisclosureError::Verdict {
                direction: Direction::Sent,
                detail: "it lists other bytes as free of line ends than the proof showed".into(),
            })
            .into(),
        );
    }
    let output = digested.expand(&pending.app_sent, &pending.app_received, &pending.disclosed)?;
    let attestation = match (pending.committed, attestation) {
        (Some((t, commitment)), Some(reply)) => Some(AttestationBundle::accept(
            &reply,
            t,
            commitment,
            pending.certificates,
        )?),
        (Some(_), None) => {
            return Err(ProxyError::Attestation(
                "the verifier verified the session but sent no attestation".into(),
            )
            .into())
        }
        (None, Some(_)) => {
            return Err(ProxyError::Protocol(
                "the verifier sent an attestation no one asked for".into(),
            )
            .into())
        }
        (None, None) => None,
    };
    Ok(ProverOutcome {
        output,
        attestation,
        session_id,
    })
}

/// The prover's side of one proxy-mode session.
pub struct ProverSession {
    cfg: ProverConfig,
    expected_cots: u64,
    stage: Stage,
    transcript: Option<Recording>,
    digest: Option<[u8; 32]>,
    ack_checked: bool,
    pending: Option<Pending>,
}

impl ProverSession {
    /// A session for `cfg`.
    pub fn new(cfg: ProverConfig) -> Self {
        let expected_cots = expected_cots(
            cfg.request.len(),
            cfg.expect_response,
            cfg.version,
            &cfg.suites,
        );
        ProverSession {
            cfg,
            expected_cots,
            stage: Stage::Start,
            transcript: None,
            digest: None,
            ack_checked: false,
            pending: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ProverConfig {
        &self.cfg
    }

    /// COTs stated in the hello.
    pub fn expected_cots(&self) -> u64 {
        self.expected_cots
    }

    /// The engine's preprocessing size, as the verifier will size it.
    pub fn engine_config(&self) -> SessionConfig {
        SessionConfig::sized(self.expected_cots)
    }

    /// Setup, first flight: the hello. The engine's opening message
    /// (`ProverOpening::message`) follows in the same flight.
    pub fn hello(&mut self) -> ProverMsg {
        self.stage = Stage::HelloSent;
        ProverMsg::Hello {
            version: PROTOCOL_VERSION,
            host: self.cfg.host.clone(),
            port: self.cfg.port,
            api_key: self.cfg.api_key.clone(),
            expected_cots: self.expected_cots,
            mpc: None,
        }
    }

    /// The verifier's answer to the hello: `Accepted`, then the engine's
    /// bootstrap runs.
    pub fn on_hello_answer(&mut self, msg: VerifierMsg) -> Result<()> {
        if self.stage != Stage::HelloSent {
            return Err(out_of_order("the hello's answer").into());
        }
        accept_hello_answer(msg)?;
        self.stage = Stage::Accepted;
        Ok(())
    }

    /// `Ready`: the verifier reached the server; the relay starts.
    pub fn on_ready(&mut self, msg: VerifierMsg) -> Result<()> {
        if self.stage != Stage::Accepted {
            return Err(out_of_order("Ready").into());
        }
        match msg {
            VerifierMsg::Ready { .. } => {
                self.stage = Stage::Relay;
                Ok(())
            }
            VerifierMsg::Refused(r) => Err(SessionError::Refused(r)),
            other => Err(unexpected("Ready or Refused", &other).into()),
        }
    }

    /// The prover's recorder for the relay. It records generously: the
    /// verifier's limits are what count.
    pub fn recorder() -> Recorder {
        Recorder::new(RecorderLimits {
            max_sent_bytes: usize::MAX / 2,
            max_recv_bytes: usize::MAX / 2,
            max_sent_records: usize::MAX / 2,
            max_recv_records: usize::MAX / 2,
        })
    }

    /// A relay frame from the verifier before our `Close`: server bytes
    /// (`Some`, to pass to the TLS client and record), the end of the
    /// server's stream (`None`), or a failed relay.
    pub fn on_relay_frame(frame: RelayFrame) -> Result<Option<Vec<u8>>> {
        match frame {
            RelayFrame::Data(d) => Ok(Some(d)),
            RelayFrame::ServerClosed(_) => Ok(None),
            RelayFrame::CloseAck(Err(r)) => Err(SessionError::Rejected(r)),
            other => Err(unexpected("a relay frame before Close", &other).into()),
        }
    }

    /// Relay, last flight: the prover is done with the TLS session (its
    /// client's view is `transcript`). The `Close` names the record counts
    /// the verifier cuts its recording at; the proof may follow at once.
    pub fn close(&mut self, transcript: Recording) -> Result<RelayFrame> {
        if self.stage != Stage::Relay {
            return Err(out_of_order("Close").into());
        }
        let count = |n: usize| {
            u32::try_from(n).map_err(|_| ProxyError::Limit("more than 2^32 records".into()))
        };
        let close = RelayFrame::Close {
            sent: count(transcript.sent.len())?,
            received: count(transcript.received.len())?,
        };
        // The digest waits for the proof's preparation: hashing a large
        // transcript here would hold the `Close` back.
        self.transcript = Some(transcript);
        self.stage = Stage::Closed;
        Ok(close)
    }

    /// A relay frame after our `Close`: server bytes the verifier relayed
    /// before it saw the `Close` are outside the cut and dropped (`None`);
    /// the `CloseAck` gives the verifier's digest.
    pub fn on_late_relay_frame(frame: RelayFrame) -> Result<Option<[u8; 32]>> {
        match frame {
            RelayFrame::Data(_) | RelayFrame::ServerClosed(_) => Ok(None),
            RelayFrame::CloseAck(Ok(d)) => Ok(Some(d)),
            RelayFrame::CloseAck(Err(r)) => Err(SessionError::Rejected(r)),
            other => Err(unexpected("CloseAck", &other).into()),
        }
    }

    /// Proof, first flight: derive the session secret and cross-check it
    /// against the TLS stack's key log, check the handshake as the verifier
    /// will (at `time`, Unix seconds), choose what to disclose from
    /// `response` (the HTTP response as the client read it), commit to the
    /// transcript for an attestation (seed from `rng`), and build the plan.
    /// Send the `Proof` message, then run the [`ProveStep`] at once.
    pub fn prepare_proof(
        &mut self,
        response: &[u8],
        secrets: &impl TlsSecrets,
        time: u64,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<(ProverMsg, ProveStep)> {
        if self.stage != Stage::Closed {
            return Err(out_of_order("the proof").into());
        }
        let transcript = self
            .transcript
            .take()
            .ok_or_else(|| out_of_order("the proof"))?;
        let request = &self.cfg.request;
        self.digest = Some(transcript.digest());
        let ecdhe = verify::client_public_keys(&transcript)?
            .iter()
            .find_map(|pk| secrets.shared_secret(pk))
            .ok_or_else(|| {
                ProxyError::SecretMismatch("no captured key exchange for this session".into())
            })?;
        let derived = verify::derive_witness(&transcript, &ecdhe)?;
        let (label, value) = &derived.keylog_check;
        match secrets.logged(label, &derived.client_random) {
            Some(logged) if &logged == value => {}
            Some(_) => {
                return Err(ProxyError::SecretMismatch(format!(
                    "derived {label} differs from the TLS stack's"
                ))
                .into())
            }
            None => {
                return Err(
                    ProxyError::SecretMismatch(format!("the TLS stack logged no {label}")).into(),
                )
            }
        }
        let disclosure = disclosure_from_items(&self.cfg.reveal, request, response)?;
        // Our own view of the statement: the same handshake checks the verifier runs.
        let vcfg = VerifyConfig {
            roots: self.cfg.roots.clone(),
            server_name: self.cfg.host.clone(),
            port: self.cfg.port,
            time,
        };
        let (info, statement) = verify::check_handshake(
            &transcript,
            &vcfg,
            SecretsSource::FromWitness(&derived.witness),
        )?;
        // Memory: a large response is held once as the response, once as
        // each direction's data, and once as ciphertext in the proof's
        // statement; the rest goes as soon as it is used.
        drop(transcript);
        let opened = statement.evaluate(&derived.witness)?;
        let mut plan = zk::plan(&statement, &opened, &disclosure, &derived.witness)?;
        // `json:PATH` items become proven path claims (checked here as the verifier will).
        plan.json =
            crate::json::claims_from_items(&self.cfg.reveal, request, response, &plan.disclosure)?;
        // The hidden bytes of the request heads, proven free of line ends,
        // so the verifier can fix each request's extent and pair responses.
        plan.sent_crlf_free =
            webproof_disclosure::exchange::hidden_head_bytes(request, &plan.disclosure.sent);
        // Each direction's application data: what the verdict's ranges and
        // digests are checked against, and what an attestation commits to.
        let app = |d: Direction| -> Vec<u8> {
            opened
                .iter()
                .filter(|r| r.direction == d && r.content_type == content_type::APPLICATION_DATA)
                .flat_map(|r| r.data.iter().copied())
                .collect()
        };
        let (app_sent, app_received) = (app(Direction::Sent), app(Direction::Received));
        drop(opened);
        let mut witness = zk::witness(&derived.witness);
        let committed = match &self.cfg.attest {
            Some(a) => {
                let (t, commitment) = attest::commit(a, &app_sent, &app_received, rng)?;
                plan.commitments = commitment.leaves().to_vec();
                witness = zk::witness_with_blinders(
                    &derived.witness,
                    &plan,
                    &attest::blinders(&commitment),
                )?;
                Some((t, commitment))
            }
            None => None,
        };
        let zk_statement = zk::zk_statement(&statement, &plan)?;
        // TLS 1.3: the verifier checks the server's handshake flight with
        // these; the proof derives them from the witness.
        let handshake_secrets = match &statement.public {
            PublicInputs::Tls13 {
                client_hs_traffic,
                server_hs_traffic,
                ..
            } => Some(HandshakeSecrets {
                client: client_hs_traffic.clone(),
                server: server_hs_traffic.clone(),
            }),
            _ => None,
        };
        let digest = self.digest.ok_or_else(|| out_of_order("the proof"))?;
        let context = zk::proof_context(&digest, &plan);
        self.pending = Some(Pending {
            app_sent,
            app_received,
            disclosed: plan.disclosure.clone(),
            crlf_free: plan.sent_crlf_free.clone(),
            committed,
            certificates: info.certificates,
        });
        self.stage = Stage::Proving;
        let msg = ProverMsg::Proof {
            payload: ProofPayload::Zk {
                plan,
                handshake_secrets,
            },
        };
        Ok((
            msg,
            ProveStep {
                statement: zk_statement,
                witness,
                context,
            },
        ))
    }

    /// The verifier's `CloseAck` digest: the verdict is about our
    /// transcript only if the verifier recorded the same one.
    pub fn on_close_ack(&mut self, digest: [u8; 32]) -> Result<()> {
        if self.digest.is_none() {
            self.digest = self.transcript.as_ref().map(Recording::digest);
        }
        match self.digest {
            Some(d) if d == digest => {
                self.ack_checked = true;
                Ok(())
            }
            Some(_) => Err(ProxyError::Protocol(
                "the verifier recorded a different transcript".into(),
            )
            .into()),
            None => Err(out_of_order("CloseAck").into()),
        }
    }

    /// An error of the proof engine: a verifier that refused the plan sends
    /// its verdict in the proof's place, which the engine hands up as an
    /// abort. `None`: not the verifier's message (the driver reports the
    /// engine's error itself).
    pub fn on_proof_abort(e: &webproof_core::Error) -> Option<SessionError> {
        let webproof_core::Error::PeerAbort(msg) = e else {
            return None;
        };
        Some(match crate::protocol::decode::<VerifierMsg>(msg) {
            Ok(VerifierMsg::Verdict { result: Err(r), .. }) => SessionError::Rejected(r),
            Ok(VerifierMsg::Refused(r)) => SessionError::Refused(r),
            Ok(other) => unexpected("a verdict", &other).into(),
            Err(e) => e.into(),
        })
    }

    /// Proof, last flight: the verdict. It carries no data: the output is
    /// rebuilt from ours, and refused unless the verifier's lengths, ranges
    /// and digests are ours; an attestation must be over our commitment.
    pub fn on_verdict(&mut self, msg: VerifierMsg) -> Result<ProverOutcome> {
        if self.stage != Stage::Proving || !self.ack_checked {
            return Err(out_of_order("the verdict").into());
        }
        let pending = self
            .pending
            .take()
            .ok_or_else(|| out_of_order("the verdict"))?;
        let outcome = accept_verdict(msg, pending)?;
        self.stage = Stage::Done;
        Ok(outcome)
    }
}

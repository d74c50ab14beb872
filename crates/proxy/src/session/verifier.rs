//! The verifier's session: admission of the hello, the cut at `Close`,
//! the checks before the proof and the conclusion after it.
//!
//! Where each value comes from: the server name and port from the admitted
//! hello (the driver connects there and checks the address it reached); the
//! time from the driver's clock, stated to the prover in `Ready`; the
//! transcript from the verifier's own recording, cut at the prover's
//! `Close`; the plan from the prover, never trusted (see [`crate::zk`] for
//! the table of the statement's public values). The decisions before and
//! after the proof are [`crate::verifier`]'s `prepare_zk` and `conclude_zk`.

use super::{out_of_order, unexpected};
use crate::error::{ProxyError, Result};
use crate::output::VerifierOutput;
use crate::protocol::{
    AttestationReply, ProofPayload, ProverMsg, RejectKind, Rejection, RelayFrame, VerifierMsg,
    PROTOCOL_VERSION,
};
use crate::record::{RecorderLimits, Recording};
use crate::verifier::{conclude_zk, prepare_zk, Prepared};
use crate::verify::{RootStore, VerifyConfig};
use crate::zk::{self, ZkPlan};
use webproof_attestation::SigningKey;
use webproof_tlsproof as tp;
use webproof_tlsproof::session::{SessionConfig, MAX_EXPECTED_COTS};

/// Who may open a session.
#[derive(Clone, Debug, Default)]
pub struct AdmissionPolicy {
    /// SHA-256 digests ([`api_key_digest`]) of the API keys provers must
    /// present; empty: no key needed.
    pub api_key_digests: Vec<[u8; 32]>,
}

/// The digest under which an API key is stored and compared.
pub fn api_key_digest(key: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::new()
        .chain_update(b"webproof api key v1\0")
        .chain_update(key.as_bytes())
        .finalize()
        .into()
}

impl AdmissionPolicy {
    /// Whether `presented` is one of the accepted keys (digests compared in
    /// constant time, so timing tells nothing about how close a guess was).
    pub fn key_accepted(&self, presented: Option<&str>) -> bool {
        if self.api_key_digests.is_empty() {
            return true;
        }
        let Some(key) = presented else { return false };
        let d = api_key_digest(key);
        self.api_key_digests.iter().fold(false, |found, k| {
            let diff = k.iter().zip(&d).fold(0u8, |acc, (a, b)| acc | (a ^ b));
            found | (diff == 0)
        })
    }
}

/// The engine's preprocessing size for the number a prover stated in its
/// hello, or `None` if the number is out of bounds (`SessionConfig::sized`
/// caps it at one full iteration anyway).
pub fn engine_config(expected_cots: u64) -> Option<SessionConfig> {
    (1..=MAX_EXPECTED_COTS)
        .contains(&expected_cots)
        .then(|| SessionConfig::sized(expected_cots))
}

/// A server name as the verifier connects to it and checks the certificate
/// against: without a trailing dot, lower case, a valid DNS name or IP.
pub fn normalize_server_name(host: &str) -> core::result::Result<String, Rejection> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if rustls_pki_types::ServerName::try_from(host.as_str()).is_err() {
        return Err(Rejection::new(
            RejectKind::ServerName,
            format!("{host:?} is not a valid server name"),
        ));
    }
    Ok(host)
}

/// An admitted hello: where to connect and how to size the preprocessing.
#[derive(Clone, Debug)]
pub struct Admitted {
    /// The normalised server name.
    pub host: String,
    /// The server port.
    pub port: u16,
    /// The engine's preprocessing size.
    pub engine: SessionConfig,
    /// An MPC-mode session's terms (the driver runs `webproof_mpc_tls`
    /// instead of the relay); `None`: proxy mode.
    pub mpc: Option<crate::protocol::MpcHello>,
}

/// What the verifier does after the prover's `Proof` message.
// Returned once per session and matched at once.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum OnProof {
    /// Run the proof: [`VerifierSession::zk_statement`] bound to
    /// [`VerifierSession::proof_context`], then [`VerifierSession::conclude`].
    Verify,
    /// The plan is refused before the proof: send this verdict in the
    /// proof's place and read the proof away.
    Refuse(VerifierMsg, ProxyError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Admitted,
    Relay,
    Closed,
    Proving,
    Done,
}

/// The verifier's side of one proxy-mode session.
pub struct VerifierSession {
    stage: Stage,
    host: String,
    port: u16,
    time: u64,
    transcript: Option<Recording>,
    proof: Option<(ZkPlan, Prepared, [u8; 32])>,
}

impl Default for VerifierSession {
    fn default() -> Self {
        Self::new()
    }
}

impl VerifierSession {
    /// A session waiting for a hello.
    pub fn new() -> Self {
        VerifierSession {
            stage: Stage::Start,
            host: String::new(),
            port: 0,
            time: 0,
            transcript: None,
            proof: None,
        }
    }

    /// Setup: the prover's hello. `Ok`: answer `Accepted`
    /// ([`Self::accepted`]), start the engine's bootstrap and connect to
    /// the server; `Err`: answer `Refused` with the rejection.
    pub fn on_hello(
        &mut self,
        msg: ProverMsg,
        policy: &AdmissionPolicy,
    ) -> core::result::Result<Admitted, Rejection> {
        if self.stage != Stage::Start {
            return Err(Rejection::from(&out_of_order("the hello")));
        }
        let ProverMsg::Hello {
            version,
            host,
            port,
            api_key,
            expected_cots,
            mpc,
        } = msg
        else {
            return Err(Rejection::new(RejectKind::Protocol, "expected hello"));
        };
        if version != PROTOCOL_VERSION {
            return Err(Rejection::new(
                RejectKind::Version,
                format!(
                    "protocol version {version} not supported (this verifier speaks {PROTOCOL_VERSION})"
                ),
            ));
        }
        // The prover's number sizes both parties' preprocessing: bounded here.
        let Some(engine) = engine_config(expected_cots) else {
            return Err(Rejection::new(
                RejectKind::SessionSize,
                format!("expected_cots {expected_cots} outside 1..={MAX_EXPECTED_COTS}"),
            ));
        };
        if !policy.key_accepted(api_key.as_deref()) {
            let why = if api_key.is_some() {
                "the API key is not valid for this verifier"
            } else {
                "this verifier requires an API key (prove --api-key)"
            };
            return Err(Rejection::new(RejectKind::Unauthorized, why));
        }
        let host = normalize_server_name(&host)?;
        self.host = host.clone();
        self.port = port;
        self.stage = Stage::Admitted;
        Ok(Admitted {
            host,
            port,
            engine,
            mpc,
        })
    }

    /// The answer to an admitted hello.
    pub fn accepted(&self) -> VerifierMsg {
        VerifierMsg::Accepted
    }

    /// Setup, last flight: the server is connected; `time` (Unix seconds)
    /// is the session's time, at which the certificate is checked.
    pub fn ready(&mut self, time: u64, limits: RecorderLimits) -> VerifierMsg {
        self.time = time;
        self.stage = Stage::Relay;
        VerifierMsg::Ready { time, limits }
    }

    /// The session's time (stated in `Ready`).
    pub fn time(&self) -> u64 {
        self.time
    }

    /// The relay ends at the prover's `Close`: the recording is cut at its
    /// counts (server records relayed after that are dropped; a `Close`
    /// naming records never relayed is refused). Returns the `CloseAck`
    /// to send, and whether the session goes on.
    pub fn on_close(
        &mut self,
        recorded: Recording,
        sent: u32,
        received: u32,
    ) -> (RelayFrame, Result<()>) {
        if self.stage != Stage::Relay {
            let e = out_of_order("Close");
            return (RelayFrame::CloseAck(Err((&e).into())), Err(e));
        }
        match recorded.cut(sent as usize, received as usize) {
            Ok(t) => {
                let ack = RelayFrame::CloseAck(Ok(t.digest()));
                self.transcript = Some(t);
                self.stage = Stage::Closed;
                (ack, Ok(()))
            }
            Err(e) => {
                let e = ProxyError::from(e);
                (RelayFrame::CloseAck(Err((&e).into())), Err(e))
            }
        }
    }

    /// The transcript after the cut.
    pub fn transcript(&self) -> Option<&Recording> {
        self.transcript.as_ref()
    }

    /// Proof, first flight: the prover's plan. The handshake is checked
    /// with the revealed secrets and the ZK statement built over our
    /// recording (`roots` for the certificate; `can_attest`: whether we hold
    /// an attestation key). `Err`: not a proof message at all.
    pub fn on_proof(
        &mut self,
        msg: ProverMsg,
        roots: &RootStore,
        can_attest: bool,
    ) -> Result<OnProof> {
        if self.stage != Stage::Closed {
            return Err(out_of_order("the proof"));
        }
        let ProverMsg::Proof { payload } = msg else {
            return Err(unexpected("a proof", &msg));
        };
        let ProofPayload::Zk {
            plan,
            handshake_secrets,
        } = payload;
        let transcript = self
            .transcript
            .as_ref()
            .ok_or_else(|| out_of_order("the proof"))?;
        let vcfg = VerifyConfig {
            roots: roots.clone(),
            server_name: self.host.clone(),
            port: self.port,
            time: self.time,
        };
        match prepare_zk(
            transcript,
            &vcfg,
            &plan,
            handshake_secrets.as_ref(),
            can_attest,
        ) {
            Ok(prepared) => {
                // The proof's challenges are bound to our own transcript
                // and the plan as received (see `zk::proof_context`).
                let context = zk::proof_context(&transcript.digest(), &plan);
                self.proof = Some((plan, prepared, context));
                self.stage = Stage::Proving;
                Ok(OnProof::Verify)
            }
            Err(e) => {
                self.stage = Stage::Done;
                Ok(OnProof::Refuse(verdict(&Err(e.clone()), None), e))
            }
        }
    }

    /// The statement the proof runs on (after [`OnProof::Verify`]).
    pub fn zk_statement(&self) -> Option<&tp::Statement> {
        self.proof.as_ref().map(|(_, p, _)| &p.zk)
    }

    /// The plan and what the verifier established before the proof (after
    /// [`OnProof::Verify`]).
    pub fn proof(&self) -> Option<(&ZkPlan, &Prepared)> {
        self.proof.as_ref().map(|(plan, p, _)| (plan, p))
    }

    /// The context the proof is bound to (after [`OnProof::Verify`]).
    pub fn proof_context(&self) -> Option<[u8; 32]> {
        self.proof.as_ref().map(|(_, _, c)| *c)
    }

    /// Proof, last flight: conclude from the engine's result (`Err`: the
    /// proof did not verify, with the engine's reason) and, when the plan
    /// committed to the transcript, sign the attestation with
    /// `attestation_key`. Returns the verdict to send and the outcome.
    pub fn conclude(
        &mut self,
        proven: core::result::Result<&tp::Proven, String>,
        attestation_key: Option<&SigningKey>,
    ) -> (VerifierMsg, Result<VerifierOutput>) {
        let result = self.conclude_inner(proven, attestation_key);
        self.stage = Stage::Done;
        match result {
            Ok((out, signed)) => {
                let msg = verdict(&Ok(out.clone()), signed);
                (msg, Ok(out))
            }
            Err(e) => (verdict(&Err(e.clone()), None), Err(e)),
        }
    }

    fn conclude_inner(
        &mut self,
        proven: core::result::Result<&tp::Proven, String>,
        attestation_key: Option<&SigningKey>,
    ) -> Result<(VerifierOutput, Option<AttestationReply>)> {
        if self.stage != Stage::Proving {
            return Err(out_of_order("the conclusion"));
        }
        let proven = proven.map_err(|e| ProxyError::Protocol(format!("proof rejected: {e}")))?;
        let (plan, prepared, _) = self
            .proof
            .as_ref()
            .ok_or_else(|| out_of_order("the conclusion"))?;
        let transcript = self
            .transcript
            .as_ref()
            .ok_or_else(|| out_of_order("the conclusion"))?;
        conclude_zk(prepared, transcript, plan, proven, attestation_key)
    }
}

/// The verdict message for an outcome: without the data (the prover
/// rebuilds it from its own and checks the digests).
/// The driver names the session ([`VerifierMsg::Verdict`]'s `session_id`)
/// before it sends the message.
pub fn verdict(
    result: &Result<VerifierOutput>,
    attestation: Option<AttestationReply>,
) -> VerifierMsg {
    VerifierMsg::Verdict {
        result: match result {
            Ok(out) => Ok(out.digested()),
            Err(e) => Err(e.into()),
        },
        attestation,
        session_id: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_sizes_are_bounded() {
        assert!(engine_config(0).is_none());
        assert!(engine_config(MAX_EXPECTED_COTS + 1).is_none());
        assert!(engine_config(u64::MAX).is_none());
        for n in [1, 1_000_000, MAX_EXPECTED_COTS] {
            let c = engine_config(n).unwrap();
            assert_eq!(c.ferret, SessionConfig::sized(n).ferret);
            c.ferret.validate().unwrap();
        }
    }

    /// Flights out of order are protocol errors, not panics.
    #[test]
    fn flights_out_of_order_are_refused() {
        let mut v = VerifierSession::new();
        let (ack, cut) = v.on_close(Recording::default(), 0, 0);
        assert!(cut.is_err());
        assert!(matches!(ack, RelayFrame::CloseAck(Err(_))));
        let (msg, out) = v.conclude(Err("none".into()), None);
        assert!(out.is_err());
        assert!(matches!(msg, VerifierMsg::Verdict { result: Err(_), .. }));
    }

    #[test]
    fn api_keys_compare_by_digest() {
        let p = AdmissionPolicy {
            api_key_digests: vec![api_key_digest("k1"), api_key_digest("k2")],
        };
        assert!(p.key_accepted(Some("k2")));
        assert!(!p.key_accepted(Some("k3")));
        assert!(!p.key_accepted(None));
        assert!(AdmissionPolicy::default().key_accepted(None));
    }
}

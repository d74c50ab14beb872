//! The verifier under test: its own code path after the relay, as one
//! function driving `webproof_proxy::session::verifier::VerifierSession`,
//! the session `webproof_net::verifier` drives.

use webproof_attestation::SigningKey;
use webproof_proxy::output::VerifierOutput;
use webproof_proxy::protocol::{self, AttestationReply, ProverMsg, RelayFrame};
use webproof_proxy::session::verifier::{AdmissionPolicy, OnProof, VerifierSession};
use webproof_proxy::verify::SessionInfo;
use webproof_proxy::zk::{self, PartialAppData, ZkPlan};
use webproof_proxy::{Recording, VerifyConfig};
use webproof_tlsproof as tp;

/// Which proof engine runs between the cheating prover and the verifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The ideal functionality (`webproof_tlsproof::testing::IdealZk`): the
    /// verifier gets what a sound proof gives it.
    Ideal,
    /// QuickSilver (`webproof_zk`) over an in-memory duplex, with ideal COTs.
    QuickSilver,
    /// The production stack: base OT, SoftSpokenOT, Ferret and QuickSilver,
    /// preprocessed in memory as `webproof_tlsproof::session` runs it.
    Production,
}

/// The prover side of the proof: the witness the (cheating) prover commits
/// to. It proves the verifier's statement, which it can compute itself (it
/// is public), so a statement the verifier accepts is really accepted.
pub struct ProverSide<'a> {
    pub witness: &'a tp::Witness,
    pub backend: Backend,
    /// Seeds the engine's randomness (real backends).
    pub seed: u64,
}

/// What the verifier produced for an accepted session.
#[derive(Clone, Debug)]
pub struct Accepted {
    /// The transcript after the `Close` cut.
    pub transcript: Recording,
    pub info: SessionInfo,
    pub plan: ZkPlan,
    pub proven: tp::Proven,
    pub view: PartialAppData,
    pub output: VerifierOutput,
    pub attestation: Option<AttestationReply>,
}

/// A refusal: the step and the verifier's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub stage: &'static str,
    pub error: String,
}

fn at<E: std::fmt::Display>(stage: &'static str) -> impl FnOnce(E) -> Refused {
    move |e| Refused {
        stage,
        error: e.to_string(),
    }
}

/// The verifier's sequence after the relay (`webproof_net::verifier`'s
/// session: the cut at `Close`, then `on_proof` and `conclude` around the
/// proof), on the prover's messages as bytes: the `Close` relay frame and
/// the `Proof` control message.
pub fn verify_after_relay(
    recorded: &Recording,
    close: &[u8],
    proof: &[u8],
    vcfg: &VerifyConfig,
    attestation_key: Option<&SigningKey>,
    prover: &ProverSide<'_>,
) -> Result<Accepted, Refused> {
    // The session up to the relay: the hello names the server, `Ready`
    // states the time.
    let mut session = VerifierSession::new();
    let hello = ProverMsg::Hello {
        version: protocol::PROTOCOL_VERSION,
        host: vcfg.server_name.clone(),
        port: vcfg.port,
        api_key: None,
        expected_cots: 1,
        mpc: None,
    };
    session
        .on_hello(hello, &AdmissionPolicy::default())
        .map_err(at("hello"))?;
    session.ready(vcfg.time, Default::default());
    // relay: the prover's Close cuts the transcript.
    let (sent, received) = match RelayFrame::decode(close).map_err(at("close"))? {
        RelayFrame::Close { sent, received } => (sent, received),
        other => return Err(at("close")(format!("expected Close, got {other:?}"))),
    };
    let (_, cut) = session.on_close(recorded.clone(), sent, received);
    cut.map_err(at("close"))?;
    // The proof message, and the verifier's decisions before the proof.
    let msg: ProverMsg = protocol::decode(proof).map_err(at("message"))?;
    match session
        .on_proof(msg, &vcfg.roots, attestation_key.is_some())
        .map_err(at("message"))?
    {
        OnProof::Verify => {}
        OnProof::Refuse(_, e) => return Err(at("plan")(e)),
    }
    let statement = session.zk_statement().expect("a proof to run");
    let proven = prove(statement, prover).map_err(at("proof"))?;
    let (plan, prepared) = session.proof().expect("a proof to run");
    let (plan, info) = (plan.clone(), prepared.info.clone());
    let view = zk::assemble_proven(&prepared.statement, &plan, &proven).map_err(at("assemble"))?;
    let transcript = session.transcript().expect("cut").clone();
    let (verdict, out) = session.conclude(Ok(&proven), attestation_key);
    let output = out.map_err(at("conclude"))?;
    let protocol::VerifierMsg::Verdict { attestation, .. } = verdict else {
        unreachable!("conclude answers with a verdict")
    };
    Ok(Accepted {
        transcript,
        info,
        plan,
        proven,
        view,
        output,
        attestation,
    })
}

/// Run the proof of `statement`: the prover with its witness, the verifier
/// with the statement; the verifier's result.
fn prove(statement: &tp::Statement, prover: &ProverSide<'_>) -> tp::Result<tp::Proven> {
    use webproof_tlsproof::testing;
    let witness = prover.witness;
    match prover.backend {
        Backend::Ideal => testing::prove_ideal(statement, witness),
        Backend::QuickSilver => testing::prove_quicksilver(statement, witness, prover.seed).1,
        Backend::Production => {
            let size =
                |d: &tp::DirectionStatement| d.records.iter().map(|r| r.ciphertext.len()).sum();
            let expected = webproof_tlsproof::session::expected_cots(
                size(&statement.sent),
                size(&statement.recv),
                Some(statement.aead),
            );
            testing::prove_production(statement, witness, expected, prover.seed).1
        }
    }
}

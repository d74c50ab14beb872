//! The prover's audit of a TLS 1.3 session's garbling, after the proof of
//! the response: the verifier reveals its input bits of every garbled
//! circuit (the key schedule's four steps, every record) and then `Δ`
//! (checked against fresh COTs of the session's correlation, as TLS 1.2's
//! `consistency::receive_delta` does); the prover garbles every circuit
//! again from its labels and those inputs (tables digest, decoding, output
//! labels: `webproof_mpc::consistency::EvaluatedCircuit::audit`) and
//! checks the inputs against what the protocol makes them: the key
//! schedule's inner digests of the values it revealed and the transcript
//! hashes the prover computed itself, the masks reused across steps, the
//! curve (`webproof_mpc::tls13::check_verifier_inputs`), each record's
//! key ‖ IV share the key schedule's mask and its public input the
//! record's sequence number (`webproof_mpc::record::check_verifier_inputs`),
//! and the key shares the verifier revealed in `CloseAck` its masks.
//!
//! It runs after the proof, which was plain: it catches a verifier that
//! garbled other functions (one that would, say, reveal an application
//! secret where an inner state is due) after the fact, and the prover's
//! `Δ` check refuses a proof's worth of COTs under another `Δ`. The OLE
//! batches (the ECtF's, the records' M2A) are not audited here yet.

use super::{Tls13ProverSession, Tls13VerifierSession};
use crate::error::{Error, Result};
use crate::response::mpc_err;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Block, Channel, Io};
use webproof_mpc::consistency::{
    check_delta, decode_bits, encode_bits, EvaluatedRun, DELTA_CHECK_COTS, DELTA_REVEAL_LEN,
};

/// The verifier's side: its input bits of every circuit, then `Δ` and the
/// keys of fresh COTs.
pub async fn reveal13<C: RandomCotSender, T: Io>(
    cot: &mut C,
    ch: &mut Channel<T>,
    v: &Tls13VerifierSession,
) -> Result<()> {
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    let groups: Vec<Vec<bool>> = v.garbled_runs()?.into_iter().flat_map(|r| r.own).collect();
    ch.send(&encode_bits(&groups)).await.map_err(io)?;
    let (_, _, delta) = v.key_block()?;
    let mut keys = Vec::with_capacity(DELTA_CHECK_COTS);
    cot.extend(ch, DELTA_CHECK_COTS, &mut keys)
        .await
        .map_err(|e| Error::Proof(e.to_string()))?;
    let mut msg = delta.to_bytes().to_vec();
    for k in &keys {
        msg.extend_from_slice(&k.to_bytes());
    }
    ch.send(&msg).await.map_err(io)?;
    ch.flush().await.map_err(io)
}

/// The prover's side: the reveal received and checked, every circuit
/// garbled again; an error is [`Error::VerifierCheated`] when the verifier
/// cheated.
pub async fn audit13<C: RandomCotReceiver, T: Io>(
    cot: &mut C,
    ch: &mut Channel<T>,
    p: &Tls13ProverSession,
) -> Result<()> {
    let io = |e: webproof_core::ChannelError| Error::Proof(e.to_string());
    let runs: Vec<EvaluatedRun> = p.evaluated_runs()?;
    let lens: Vec<usize> = runs.iter().flat_map(|r| r.revealed_lens()).collect();
    let max = 4 + lens.iter().map(|l| 4 + l.div_ceil(8)).sum::<usize>();
    let msg = ch.recv(max).await.map_err(io)?;
    let mut groups = decode_bits(&msg, &lens).map_err(mpc_err)?.into_iter();
    let revealed: Vec<Vec<Vec<bool>>> = runs
        .iter()
        .map(|r| groups.by_ref().take(r.revealed_lens().len()).collect())
        .collect();
    let mut macs: Vec<Block> = Vec::with_capacity(DELTA_CHECK_COTS);
    cot.extend(ch, DELTA_CHECK_COTS, &mut macs)
        .await
        .map_err(|e| Error::Proof(e.to_string()))?;
    let reveal = ch.recv(DELTA_REVEAL_LEN).await.map_err(io)?;
    let delta = check_delta(&reveal, &macs).map_err(mpc_err)?;
    for (run, own) in runs.iter().zip(&revealed) {
        let inputs = run.input_values(own.clone()).map_err(mpc_err)?;
        run.circuit.audit(delta, &inputs).map_err(mpc_err)?;
    }
    p.check_revealed_inputs(&revealed)
}

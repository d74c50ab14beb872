//! The prover's audit of a TLS 1.3 session's garbling, inside the sealed
//! proof of the response ([`super::response`]): the verifier reveals its
//! input bits of every garbled circuit (the key schedule's four steps,
//! every record) first and, once the prover sealed, `Δ` (checked against
//! fresh COTs of the session's correlation,
//! `webproof_mpc::consistency::receive_delta`); the prover garbles every circuit
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
//! It runs before the prover discloses the revealed bytes and opens the
//! proof, as TLS 1.2's does; it catches a verifier that garbled other
//! functions (one that would, say, reveal an application secret where an
//! inner state is due), though only after the session, when what such a
//! garbling leaked is leaked. The OLE batches (the ECtF's, the records'
//! M2A) are not audited here yet.

use super::{Tls13ProverSession, Tls13VerifierSession};
use crate::error::Result;
use crate::response::mpc_err;
use webproof_core::Block;
use webproof_mpc::consistency::{decode_bits, encode_bits, EvaluatedRun};

/// The verifier's input bits of every circuit it garbled, in order (the
/// key schedule's steps, then the records by id).
pub fn reveal_bits(v: &Tls13VerifierSession) -> Result<Vec<u8>> {
    let groups: Vec<Vec<bool>> = v.garbled_runs()?.into_iter().flat_map(|r| r.own).collect();
    Ok(encode_bits(&groups))
}

/// Bytes of [`reveal_bits`]' message for the prover's session.
pub fn reveal_len(p: &Tls13ProverSession) -> Result<usize> {
    let runs = p.evaluated_runs()?;
    Ok(4 + runs
        .iter()
        .flat_map(|r| r.revealed_lens())
        .map(|l| 4 + l.div_ceil(8))
        .sum::<usize>())
}

/// The prover's audit with the verifier's `reveal` ([`reveal_bits`]) and
/// `Δ` (already checked against fresh COTs,
/// `webproof_mpc::consistency::receive_delta`): every circuit garbled
/// again, the inputs checked; an error is [`crate::Error::VerifierCheated`] when
/// the verifier cheated.
pub fn audit13(p: &Tls13ProverSession, reveal: &[u8], delta: Block) -> Result<()> {
    let runs: Vec<EvaluatedRun> = p.evaluated_runs()?;
    let lens: Vec<usize> = runs.iter().flat_map(|r| r.revealed_lens()).collect();
    let mut groups = decode_bits(reveal, &lens).map_err(mpc_err)?.into_iter();
    let revealed: Vec<Vec<Vec<bool>>> = runs
        .iter()
        .map(|r| groups.by_ref().take(r.revealed_lens().len()).collect())
        .collect();
    for (run, own) in runs.iter().zip(&revealed) {
        let inputs = run.input_values(own.clone()).map_err(mpc_err)?;
        run.circuit.audit(delta, &inputs).map_err(mpc_err)?;
    }
    p.check_revealed_inputs(&revealed)
}

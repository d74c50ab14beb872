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
//! Every OLE batch (the request records' hidden M2A, the GHASH record's
//! powers, the ECtF) is answered again for the verifier's revealed inputs
//! (`webproof_mpc::consistency::audit_ole_transcripts`), the ECtF's
//! checked to be what the protocol makes them.
//!
//! It runs before the prover discloses the revealed bytes and opens the
//! proof, as TLS 1.2's does; it catches a verifier that garbled other
//! functions (one that would, say, reveal an application secret where an
//! inner state is due), though only after the session, when what such a
//! garbling leaked is leaked.

use super::{Tls13ProverSession, Tls13VerifierSession};
use crate::error::{Error, Result};
use crate::response::mpc_err;
use webproof_core::Block;
use webproof_mpc::consistency::{
    audit_ole_transcripts, decode_bits, encode_bits, EvaluatedRun, OleTranscript,
};
use webproof_mpc::field::{Curve25519Base, Gf128, P256Base};
use webproof_mpc::ole::OleField;
use webproof_mpc::tls12::Curve;

/// The verifier's input bits of every circuit it garbled, in order (the
/// key schedule's steps, then the records by id), then its inputs of
/// every OLE batch (the request records' hidden M2A, the GHASH record's
/// powers, the ECtF's), each batch's elements encoded.
pub fn reveal_bits(v: &Tls13VerifierSession) -> Result<Vec<u8>> {
    let groups: Vec<Vec<bool>> = v.garbled_runs()?.into_iter().flat_map(|r| r.own).collect();
    Ok([encode_bits(&groups), v.ole_inputs()].concat())
}

/// Bytes of the bits part of [`reveal_bits`]' message.
fn bits_len(runs: &[EvaluatedRun]) -> usize {
    4 + runs
        .iter()
        .flat_map(|r| r.revealed_lens())
        .map(|l| 4 + l.div_ceil(8))
        .sum::<usize>()
}

/// The field's bits and bytes of OLE stream `stream`: the ECtF's is the
/// curve's base field, the records' GF(2^128).
fn field_of(stream: u64, curve: Curve) -> (usize, usize) {
    match (stream == crate::keyx::ECTF_STREAM, curve) {
        (true, Curve::P256) => (P256Base::BITS, P256Base::BYTES),
        (true, Curve::X25519) => (Curve25519Base::BITS, Curve25519Base::BYTES),
        _ => (Gf128::BITS, Gf128::BYTES),
    }
}

/// Bytes of the verifier's inputs of each logged OLE batch, per stream.
fn ole_lens(p: &Tls13ProverSession) -> Vec<Vec<usize>> {
    let (log, curve) = p.ole_log();
    log.streams
        .iter()
        .map(|(stream, batches)| {
            let (bits, bytes) = field_of(*stream, curve);
            batches
                .iter()
                .map(|b| b.macs.len() / bits * bytes)
                .collect()
        })
        .collect()
}

/// Bytes of [`reveal_bits`]' message for the prover's session.
pub fn reveal_len(p: &Tls13ProverSession) -> Result<usize> {
    let ole: usize = ole_lens(p).concat().iter().sum();
    Ok(bits_len(&p.evaluated_runs()?) + ole)
}

/// One OLE stream answered again in its field for the revealed inputs;
/// on the ECtF's, also that they are the `(r, s, (r/s)^2)` the protocol
/// makes them.
fn audit_stream<F: OleField>(
    delta: Block,
    stream: u64,
    batches: &[OleTranscript],
    inputs: &[&[u8]],
) -> Result<()> {
    let inputs = inputs
        .iter()
        .map(|b| {
            b.chunks(F::BYTES)
                .map(|c| F::decode(c).ok_or(Error::Malformed("a revealed OLE input not canonical")))
                .collect::<Result<Vec<F>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    audit_ole_transcripts(delta, stream, batches, &inputs).map_err(mpc_err)?;
    if stream == crate::keyx::ECTF_STREAM {
        for batch in &inputs {
            webproof_mpc::ectf::check_verifier_inputs(batch).map_err(mpc_err)?;
        }
    }
    Ok(())
}

/// Every logged OLE batch answered again for the revealed inputs `rest`.
fn audit_oles(p: &Tls13ProverSession, delta: Block, mut rest: &[u8]) -> Result<()> {
    let (log, curve) = p.ole_log();
    for ((stream, batches), lens) in log.streams.iter().zip(ole_lens(p)) {
        let mut inputs = Vec::with_capacity(lens.len());
        for l in lens {
            let (a, b) = rest
                .split_at_checked(l)
                .ok_or(Error::Malformed("revealed OLE inputs"))?;
            inputs.push(a);
            rest = b;
        }
        match (*stream == crate::keyx::ECTF_STREAM, curve) {
            (true, Curve::P256) => audit_stream::<P256Base>(delta, *stream, batches, &inputs)?,
            (true, Curve::X25519) => {
                audit_stream::<Curve25519Base>(delta, *stream, batches, &inputs)?
            }
            (false, _) => audit_stream::<Gf128>(delta, *stream, batches, &inputs)?,
        }
    }
    if !rest.is_empty() {
        return Err(Error::Malformed("revealed OLE inputs"));
    }
    Ok(())
}

/// The prover's audit with the verifier's `reveal` ([`reveal_bits`]) and
/// `Δ` (already checked against fresh COTs,
/// `webproof_mpc::consistency::receive_delta`): every circuit garbled
/// again, the inputs checked; an error is [`crate::Error::VerifierCheated`] when
/// the verifier cheated.
pub fn audit13(p: &Tls13ProverSession, reveal: &[u8], delta: Block) -> Result<()> {
    let runs: Vec<EvaluatedRun> = p.evaluated_runs()?;
    let lens: Vec<usize> = runs.iter().flat_map(|r| r.revealed_lens()).collect();
    let (bits, oles) = reveal
        .split_at_checked(bits_len(&runs))
        .ok_or(Error::Malformed("revealed inputs"))?;
    audit_oles(p, delta, oles)?;
    let mut groups = decode_bits(bits, &lens).map_err(mpc_err)?.into_iter();
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

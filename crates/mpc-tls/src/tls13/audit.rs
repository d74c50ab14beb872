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
//! curve (`crate::kdf::tls13::check_verifier_inputs`), each record's
//! key ‖ IV share the key schedule's mask and its public input the
//! record's sequence number (`crate::rec::gcm::check_verifier_inputs`),
//! and the key shares the verifier revealed in `CloseAck` its masks.
//! Every OLE batch (the request records' hidden M2A, the GHASH record's
//! powers, the ECtF) is answered again for the verifier's revealed inputs
//! (`webproof_mpc::consistency::audit_ole_transcripts`), the ECtF's
//! checked to be what the protocol makes them. Under ChaCha20-Poly1305
//! each record's two circuits are audited as every circuit (the record
//! circuit's inputs by `crate::rec::chacha::check_verifier_inputs`, the
//! tag circuit's pad by `check_tag_inputs`), and its bitwise OLEs (its
//! powers of `r`, its hidden ciphertext's) reveal no input: the prover
//! answers them again on the elements it computes from the record
//! circuit's revealed `t` (`crate::rec::chacha::audit_oles`), as TLS
//! 1.2's audit does.
//!
//! It runs before the prover discloses the revealed bytes and opens the
//! proof, as TLS 1.2's does; it catches a verifier that garbled other
//! functions (one that would, say, reveal an application secret where an
//! inner state is due), though only after the session, when what such a
//! garbling leaked is leaked.

use super::{Tls13ProverSession, Tls13VerifierSession};
use crate::error::{Error, Result};
use crate::kdf::tls12::Curve;
use crate::response::mpc_err;
use webproof_core::Block;
use webproof_mpc::consistency::{
    audit_ole_transcripts, decode_bits, encode_bits, EvaluatedRun, OleTranscript,
};
use webproof_mpc::field::{Curve25519Base, Gf128, P256Base};
use webproof_mpc::ole::OleField;

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
/// curve's base field, the records' GF(2^128); a ChaCha20-Poly1305
/// record's bitwise OLEs reveal no input (one COT an input bit, no byte).
fn field_of(stream: u64, curve: Curve, chacha: bool) -> (usize, usize) {
    match (stream == crate::keyx::ECTF_STREAM, curve) {
        (true, Curve::P256) => (P256Base::BITS, P256Base::BYTES),
        (true, Curve::X25519) => (Curve25519Base::BITS, Curve25519Base::BYTES),
        _ if chacha => (1, 0),
        _ => (Gf128::BITS, Gf128::BYTES),
    }
}

/// Bytes of the verifier's inputs of each logged OLE batch, per stream.
fn ole_lens(p: &Tls13ProverSession) -> Vec<Vec<usize>> {
    let (log, curve) = p.ole_log();
    let chacha = super::is_chacha(p.suite());
    log.streams
        .iter()
        .map(|(stream, batches)| {
            let (bits, bytes) = field_of(*stream, curve, chacha);
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
            crate::keyx::ectf::check_verifier_inputs(batch).map_err(mpc_err)?;
        }
    }
    Ok(())
}

/// Every logged OLE batch answered again for the revealed inputs `rest`;
/// a ChaCha20-Poly1305 record's on the elements computed from its record
/// circuit's revealed inputs (`revealed`: per run of
/// `Tls13ProverSession::evaluated_runs`, the verifier's groups).
fn audit_oles(
    p: &Tls13ProverSession,
    delta: Block,
    mut rest: &[u8],
    revealed: &[Vec<Vec<bool>>],
) -> Result<()> {
    let (log, curve) = p.ole_log();
    if super::is_chacha(p.suite()) {
        for (stream, batches) in &log.streams {
            if *stream != crate::keyx::ECTF_STREAM {
                audit_chacha_stream(p, delta, *stream, batches, revealed)?;
            }
        }
    }
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
            // Audited above, on no revealed input.
            (false, _) if super::is_chacha(p.suite()) => {}
            (false, _) => audit_stream::<Gf128>(delta, *stream, batches, &inputs)?,
        }
    }
    if !rest.is_empty() {
        return Err(Error::Malformed("revealed OLE inputs"));
    }
    Ok(())
}

/// The audit of a ChaCha20-Poly1305 request record's OLE stream: its
/// powers' batch and its hidden ciphertext's, replayed on the elements an
/// honest verifier had (`crate::rec::chacha::audit_oles`, from the `t`
/// of the record circuit's revealed inputs, which
/// `Tls13ProverSession::check_revealed_inputs` checks too).
fn audit_chacha_stream(
    p: &Tls13ProverSession,
    delta: Block,
    stream: u64,
    batches: &[OleTranscript],
    revealed: &[Vec<Vec<bool>>],
) -> Result<()> {
    let (run, len) = p
        .chacha_stream(stream)
        .ok_or(Error::Malformed("an OLE stream of no record"))?;
    let [powers, hidden] = batches else {
        return Err(Error::Malformed("a record's OLE batches of another number"));
    };
    let bits = |t: &OleTranscript| webproof_mpc::consistency::OleBitsTranscript {
        macs: t.macs.clone(),
        response: t.response.clone(),
    };
    crate::rec::chacha::audit_oles(
        &mut webproof_mpc::consistency::OleReplay::new(delta, stream),
        revealed
            .get(run)
            .ok_or(Error::Malformed("revealed inputs"))?,
        super::rec::AAD_LEN,
        len,
        &bits(powers),
        Some(&bits(hidden)),
    )
    .map_err(mpc_err)
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
    let mut groups = decode_bits(bits, &lens).map_err(mpc_err)?.into_iter();
    let revealed: Vec<Vec<Vec<bool>>> = runs
        .iter()
        .map(|r| groups.by_ref().take(r.revealed_lens().len()).collect())
        .collect();
    audit_oles(p, delta, oles, &revealed)?;
    for (run, own) in runs.iter().zip(&revealed) {
        let inputs = run.input_values(own.clone()).map_err(mpc_err)?;
        run.circuit.audit(delta, &inputs).map_err(mpc_err)?;
    }
    p.check_revealed_inputs(&revealed)
}

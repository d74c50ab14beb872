//! Malicious security for the 2PC core (garble-then-prove): after the TLS
//! session the prover imports the labels it holds into the QuickSilver
//! engine of `webproof-zk` as authenticated bits (the garbled outputs are
//! IT-MACs under the garbler's `Δ`, which is the proof's) and shows that
//! the circuits were fed consistent inputs and that its statements hold
//! on their outputs, and then, once the verifier has revealed `Δ`, the
//! prover audits in the clear everything the verifier (garbler, OLE
//! sender) sent.
//!
//! Owns: importing garbled labels and OLE inputs as authenticated bits, the
//! per-circuit statement (for garblings that need it; see "Why no circuit
//! is proven again"), equality across circuits, the messages of the
//! reveal (the verifier's inputs, `Δ`), and the prover's audit. It does not
//! own the session: which circuits, in which order, and which wires must be
//! equal is the caller's (`mpc-tls`) business, and it must never reveal
//! `Δ` before the proof is sealed. The audit replays OLE streams batch by
//! batch ([`OleReplay`]), element-wise and bitwise batches alike.
//!
//! The protocol after the session, the security argument (why no circuit
//! is proven again, what the audit catches), the arithmetic parts and
//! deferred decryption: `docs/protocol/consistency.md`.

use crate::error::{Error, Result};
use crate::ole::{OleField, OleSender};
use crate::plan::Plan;
use crate::{transfer, Garbler};
use std::sync::Arc;
use webproof_circuits::Circuit;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Block, Io, Prg};
use webproof_zk::{Prover, ProverBit, SealedProver, SealedVerifier, Verifier, VerifierBit};

/// Fresh COTs the verifier opens with `Δ`: a `Δ` other than the COT's
/// survives the check with probability `2^-DELTA_CHECK_COTS`.
pub const DELTA_CHECK_COTS: usize = 128;

/// Bytes of the `Δ` reveal: `Δ` and the check keys.
pub const DELTA_REVEAL_LEN: usize = 16 * (1 + DELTA_CHECK_COTS);

/// The authenticated wires of one circuit on the prover's side.
#[derive(Clone, Debug)]
pub struct ProverWires {
    /// Input groups, in the circuit's order.
    pub inputs: Vec<Vec<ProverBit>>,
    /// Output groups, in the circuit's order.
    pub outputs: Vec<Vec<ProverBit>>,
}

/// The authenticated wires of one circuit on the verifier's side.
#[derive(Clone, Debug)]
pub struct VerifierWires {
    /// Input groups, in the circuit's order.
    pub inputs: Vec<Vec<VerifierBit>>,
    /// Output groups, in the circuit's order.
    pub outputs: Vec<Vec<VerifierBit>>,
}

/// What the prover keeps of one evaluated circuit for the proof and the
/// audit: the plan and instance, its active input and output labels, the
/// digest of the tables and the decoding information it received.
#[derive(Clone)]
pub struct EvaluatedCircuit {
    plan: Arc<Plan>,
    instance: u64,
    inputs: Vec<Vec<Block>>,
    outputs: Vec<Vec<Block>>,
    tables_digest: [u8; 32],
    decoding: Option<Vec<u8>>,
}

impl EvaluatedCircuit {
    /// Take what is needed from a finished evaluator; `decoding` is the
    /// decoding information it was given (`None` if it decoded nothing).
    pub fn from_evaluator(e: &crate::Evaluator, decoding: Option<&[u8]>) -> Result<Self> {
        let plan = Arc::clone(e.plan());
        let inputs = (0..plan.inputs().len())
            .map(|g| e.input_labels(g).map(<[Block]>::to_vec))
            .collect::<Result<_>>()?;
        let outputs = (0..plan.outputs().len())
            .map(|g| e.output_labels(g).map(<[Block]>::to_vec))
            .collect::<Result<_>>()?;
        Ok(EvaluatedCircuit {
            plan,
            instance: e.instance(),
            inputs,
            outputs,
            tables_digest: e.tables_digest(),
            decoding: decoding.map(<[u8]>::to_vec),
        })
    }

    /// AND gates of the circuit: what garbling it again in the audit
    /// costs, so a caller can share the audits of a session out evenly.
    pub fn and_count(&self) -> u64 {
        self.plan.and_count()
    }

    /// Bits per input group (to parse the verifier's revealed inputs).
    pub fn input_lens(&self) -> Vec<usize> {
        self.inputs.iter().map(Vec::len).collect()
    }

    /// Import every label as an authenticated bit: `inputs` are the values
    /// of every input group (the prover's own, the verifier's revealed
    /// ones, public ones), `outputs` the decoded outputs.
    pub fn import<C: RandomCotReceiver, T: Io>(
        &self,
        zk: &Prover<C, T>,
        inputs: &[Vec<bool>],
        outputs: &[Vec<bool>],
    ) -> Result<ProverWires> {
        let inputs = import_groups(zk, &self.inputs, inputs)?;
        let outputs = import_groups(zk, &self.outputs, outputs)?;
        Ok(ProverWires { inputs, outputs })
    }

    /// The audit, once `Δ` is revealed and checked: garble the circuit
    /// again from the 0-labels `L ⊕ x·Δ` the prover now knows (its labels
    /// and the input values) and compare the tables and the decoding
    /// information with what the verifier sent. Any deviation of the
    /// garbler in this circuit (tables, the labels of either party's
    /// inputs, the decoding) is [`Error::VerifierCheated`].
    pub fn audit(&self, delta: Block, inputs: &[Vec<bool>]) -> Result<()> {
        if inputs.len() != self.inputs.len() {
            return Err(Error::Malformed("input values for another circuit"));
        }
        let mut rng = Prg::new(Block::ZERO); // every input label is replaced
        let mut g = Garbler::from_plan(Arc::clone(&self.plan), delta, self.instance, &mut rng)?;
        for (group, (labels, values)) in self.inputs.iter().zip(inputs).enumerate() {
            if labels.len() != values.len() {
                return Err(Error::Length {
                    group,
                    expected: labels.len(),
                    got: values.len(),
                });
            }
            let zero: Vec<Block> = labels
                .iter()
                .zip(values)
                .map(|(&l, &x)| l ^ Block::select(x, delta))
                .collect();
            g.set_input_zero_labels(group, &zero)?;
        }
        let mut buf = Vec::new();
        while g.next_chunk(&mut buf) {}
        if !g.is_finished() {
            // A circuit without AND gates finishes on its first call.
            return Err(Error::NotFinished);
        }
        if g.tables_digest() != self.tables_digest {
            return Err(Error::VerifierCheated(
                "the garbled tables differ from an honest garbling",
            ));
        }
        if let Some(d) = &self.decoding {
            if g.decoding()?.to_bytes() != *d {
                return Err(Error::VerifierCheated(
                    "the decoding information differs from an honest garbling's",
                ));
            }
        }
        // With honest tables and inputs the outputs are honest; checking
        // them costs nothing and names the fault if the evaluator's own
        // state was corrupted.
        for (group, labels) in self.outputs.iter().enumerate() {
            let zero = g.output_zero_labels(group)?;
            if labels
                .iter()
                .zip(zero)
                .any(|(&l, &z)| l != z && l != z ^ delta)
            {
                return Err(Error::VerifierCheated(
                    "an output label is not one of the honest garbling's",
                ));
            }
        }
        Ok(())
    }
}

/// What the verifier keeps of one garbled circuit for the proof: `Δ` and
/// the 0-labels of every input and output wire.
#[derive(Clone)]
pub struct GarbledCircuit {
    delta: Block,
    inputs: Vec<Vec<Block>>,
    outputs: Vec<Vec<Block>>,
}

impl GarbledCircuit {
    /// Take the 0-labels from a finished garbler.
    pub fn from_garbler(g: &Garbler) -> Result<Self> {
        let plan = g.plan();
        let inputs = (0..plan.inputs().len())
            .map(|i| g.input_zero_labels(i).map(<[Block]>::to_vec))
            .collect::<Result<_>>()?;
        let outputs = (0..plan.outputs().len())
            .map(|i| g.output_zero_labels(i).map(<[Block]>::to_vec))
            .collect::<Result<_>>()?;
        Ok(GarbledCircuit {
            delta: g.delta(),
            inputs,
            outputs,
        })
    }

    /// Import every 0-label as a key; refuses if the proof's `Δ` is not the
    /// garbler's.
    pub fn import<C: RandomCotSender, T: Io>(&self, zk: &Verifier<C, T>) -> Result<VerifierWires> {
        if zk.delta() != self.delta {
            return Err(Error::DeltaMismatch);
        }
        let imp = |gs: &[Vec<Block>]| -> Vec<Vec<VerifierBit>> {
            gs.iter().map(|g| zk.import_labels(g)).collect()
        };
        Ok(VerifierWires {
            inputs: imp(&self.inputs),
            outputs: imp(&self.outputs),
        })
    }
}

/// The prover's record of one execution ([`crate::exec::ProverCircuit::retain`]):
/// the circuit's labels, which input group was its own and its bits
/// there, and the outputs it decoded. Every other group is the verifier's,
/// revealed after the session.
#[derive(Clone)]
pub struct EvaluatedRun {
    /// Labels, table digest and decoding.
    pub circuit: EvaluatedCircuit,
    /// The prover's input group.
    pub prover_group: usize,
    /// The prover's bits in that group.
    pub own: Vec<bool>,
    /// Every output group, decoded.
    pub outputs: Vec<Vec<bool>>,
}

impl EvaluatedRun {
    /// Bits of each group the verifier reveals, in group order.
    pub fn revealed_lens(&self) -> Vec<usize> {
        let mut lens = self.circuit.input_lens();
        lens.remove(self.prover_group);
        lens
    }

    /// Every input group's values: the prover's own and the verifier's
    /// `revealed` groups (as [`decode_bits`] parsed them) in their places.
    pub fn input_values(&self, mut revealed: Vec<Vec<bool>>) -> Result<Vec<Vec<bool>>> {
        if revealed.len() + 1 != self.circuit.inputs.len() {
            return Err(Error::Malformed("revealed inputs for another circuit"));
        }
        revealed.insert(self.prover_group, self.own.clone());
        Ok(revealed)
    }
}

/// The verifier's record of one execution ([`crate::exec::VerifierCircuit::retain`]):
/// the 0-labels and the bits of its own input groups (every group but the
/// prover's, in group order), which it reveals after the session.
#[derive(Clone)]
pub struct GarbledRun {
    /// `Δ` and the 0-labels.
    pub circuit: GarbledCircuit,
    /// The prover's input group.
    pub prover_group: usize,
    /// The verifier's input bits.
    pub own: Vec<Vec<bool>>,
}

fn import_groups<C: RandomCotReceiver, T: Io>(
    zk: &Prover<C, T>,
    labels: &[Vec<Block>],
    values: &[Vec<bool>],
) -> Result<Vec<Vec<ProverBit>>> {
    if labels.len() != values.len() {
        return Err(Error::Malformed("values for another circuit"));
    }
    labels
        .iter()
        .zip(values)
        .enumerate()
        .map(|(group, (l, v))| {
            if l.len() != v.len() {
                return Err(Error::Length {
                    group,
                    expected: l.len(),
                    got: v.len(),
                });
            }
            zk.import_labels(l, v).map_err(Error::from_zk)
        })
        .collect()
}

fn group_sizes_match<A, B>(circuit: &Circuit, inputs: &[Vec<A>], outputs: &[Vec<B>]) -> Result<()> {
    let ok = circuit.inputs.len() == inputs.len()
        && circuit.outputs.len() == outputs.len()
        && circuit
            .inputs
            .iter()
            .zip(inputs)
            .all(|(c, w)| c.len() == w.len())
        && circuit
            .outputs
            .iter()
            .zip(outputs)
            .all(|(c, w)| c.len() == w.len());
    if ok {
        Ok(())
    } else {
        Err(Error::Malformed("wires of another circuit"))
    }
}

/// Prove that `circuit` maps the imported inputs to the imported outputs
/// (sealed mode only). `circuit` is the one that was garbled, or any
/// circuit computing the same function with the same groups (the unlowered
/// one with byte inversions is cheaper in the proof).
pub async fn prove_circuit<C: RandomCotReceiver, T: Io>(
    zk: &mut Prover<C, T>,
    circuit: &Circuit,
    wires: &ProverWires,
) -> Result<()> {
    if !zk.is_deferred() {
        return Err(Error::NotSealed);
    }
    group_sizes_match(circuit, &wires.inputs, &wires.outputs)?;
    let inputs: Vec<&[ProverBit]> = wires.inputs.iter().map(Vec::as_slice).collect();
    let out = zk.eval(circuit, &inputs).await.map_err(Error::from_zk)?;
    let diff: Vec<ProverBit> = out
        .iter()
        .flatten()
        .zip(wires.outputs.iter().flatten())
        .map(|(&a, &b)| zk.xor(a, b))
        .collect();
    zk.assert_zero(&diff).await.map_err(Error::from_zk)
}

/// The verifier's side of [`prove_circuit`]. In sealed mode a false claim
/// surfaces when the opening is verified, as [`Error::ConsistencyFailed`].
pub async fn verify_circuit<C: RandomCotSender, T: Io>(
    zk: &mut Verifier<C, T>,
    circuit: &Circuit,
    wires: &VerifierWires,
) -> Result<()> {
    if !zk.is_deferred() {
        return Err(Error::NotSealed);
    }
    group_sizes_match(circuit, &wires.inputs, &wires.outputs)?;
    let inputs: Vec<&[VerifierBit]> = wires.inputs.iter().map(Vec::as_slice).collect();
    let out = zk.eval(circuit, &inputs).await.map_err(Error::from_zk)?;
    let diff: Vec<VerifierBit> = out
        .iter()
        .flatten()
        .zip(wires.outputs.iter().flatten())
        .map(|(&a, &b)| zk.xor(a, b))
        .collect();
    zk.assert_zero(&diff).await.map_err(Error::from_zk)
}

/// Prove that two runs of authenticated bits are equal (an output of one
/// circuit that is an input of another, an OLE input and its source).
pub async fn prove_equal<C: RandomCotReceiver, T: Io>(
    zk: &mut Prover<C, T>,
    a: &[ProverBit],
    b: &[ProverBit],
) -> Result<()> {
    if !zk.is_deferred() {
        return Err(Error::NotSealed);
    }
    if a.len() != b.len() {
        return Err(Error::Malformed("equality of runs of different lengths"));
    }
    let diff: Vec<ProverBit> = a.iter().zip(b).map(|(&x, &y)| zk.xor(x, y)).collect();
    zk.assert_zero(&diff).await.map_err(Error::from_zk)
}

/// The verifier's side of [`prove_equal`].
pub async fn verify_equal<C: RandomCotSender, T: Io>(
    zk: &mut Verifier<C, T>,
    a: &[VerifierBit],
    b: &[VerifierBit],
) -> Result<()> {
    if !zk.is_deferred() {
        return Err(Error::NotSealed);
    }
    if a.len() != b.len() {
        return Err(Error::Malformed("equality of runs of different lengths"));
    }
    let diff: Vec<VerifierBit> = a.iter().zip(b).map(|(&x, &y)| zk.xor(x, y)).collect();
    zk.assert_zero(&diff).await.map_err(Error::from_zk)
}

/// `bits ⊕ public` (free): the prover's key-share outputs plus the
/// verifier's revealed masks give the authenticated key, a committed input
/// for the deferred-decryption proof.
pub fn xor_public_prover<C: RandomCotReceiver, T: Io>(
    zk: &Prover<C, T>,
    bits: &[ProverBit],
    public: &[bool],
) -> Result<Vec<ProverBit>> {
    if bits.len() != public.len() {
        return Err(Error::Malformed("public mask of the wrong length"));
    }
    Ok(bits
        .iter()
        .zip(public)
        .map(|(&b, &p)| zk.xor(b, zk.constant(p)))
        .collect())
}

/// The verifier's side of [`xor_public_prover`].
pub fn xor_public_verifier<C: RandomCotSender, T: Io>(
    zk: &Verifier<C, T>,
    bits: &[VerifierBit],
    public: &[bool],
) -> Result<Vec<VerifierBit>> {
    if bits.len() != public.len() {
        return Err(Error::Malformed("public mask of the wrong length"));
    }
    Ok(bits
        .iter()
        .zip(public)
        .map(|(&b, &p)| zk.xor(b, zk.constant(p)))
        .collect())
}

/// The prover's OLE inputs as authenticated bits: an OLE receiver's COT
/// MAC with its flip is a label of its input bit (basis coefficients,
/// [`OleField::decompose`]), so `macs` (those given to
/// [`crate::ole::OleReceiver::choose`]) and the inputs import directly.
pub fn import_ole_inputs<F: OleField, C: RandomCotReceiver, T: Io>(
    zk: &Prover<C, T>,
    macs: &[Block],
    inputs: &[F],
) -> Result<Vec<ProverBit>> {
    let bits: Vec<bool> = inputs.iter().flat_map(|x| x.decompose()).collect();
    if macs.len() != bits.len() {
        return Err(Error::Length {
            group: 0,
            expected: bits.len(),
            got: macs.len(),
        });
    }
    zk.import_labels(macs, &bits).map_err(Error::from_zk)
}

/// The verifier's side of [`import_ole_inputs`]: the keys given to
/// [`OleSender::respond`] and the receiver's flips.
pub fn import_ole_keys<C: RandomCotSender, T: Io>(
    zk: &Verifier<C, T>,
    keys: &[Block],
    flips: &[u8],
) -> Result<Vec<VerifierBit>> {
    let zero = transfer::zero_labels_from_cot(keys, zk.delta(), flips)?;
    Ok(zk.import_labels(&zero))
}

/// One OLE batch as the prover saw it, for the audit: the COT MACs and
/// inputs it chose with, and the verifier's answer.
#[derive(Clone, Debug)]
pub struct OleBatch<F: OleField> {
    /// The MACs given to [`crate::ole::OleReceiver::choose`].
    pub macs: Vec<Block>,
    /// The prover's inputs.
    pub inputs: Vec<F>,
    /// The verifier's answer, as received.
    pub response: Vec<u8>,
}

/// The audit of one OLE stream once `Δ` is known: the prover knows both of
/// the verifier's keys for each COT (`M ⊕ lsb(M)·Δ` and that `⊕ Δ`), so it
/// recomputes the honest answer for the verifier's revealed inputs
/// (`sender_inputs[j]` for batch `j`, batches in the order they ran on
/// `stream`) and compares bytes. Returns the verifier's shares, for the
/// caller's checks in the clear (e.g. that the ECtF or GHASH shares the
/// verifier used are the ones its revealed values imply).
pub fn audit_ole<F: OleField>(
    delta: Block,
    stream: u64,
    batches: &[OleBatch<F>],
    sender_inputs: &[Vec<F>],
) -> Result<Vec<Vec<F>>> {
    let transcripts = batches
        .iter()
        .map(|b| {
            let bits: Vec<bool> = b.inputs.iter().flat_map(|x| x.decompose()).collect();
            Ok(OleTranscript {
                macs: b.macs.clone(),
                flips: transfer::flips(&b.macs, &bits)?,
                response: b.response.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    audit_ole_transcripts(delta, stream, &transcripts, sender_inputs)
}

/// One OLE batch as the receiver's messages show it: the COT MACs it
/// chose with, the flips it sent (its input bits are `flip ⊕ lsb(MAC)`
/// per [`crate::transfer`]), and the sender's answer as received (only
/// its first [`crate::ole::response_len`] bytes are the OLE's: an A2M
/// answer carries more after them).
#[derive(Clone, Debug, Default)]
pub struct OleTranscript {
    /// The MACs given to [`crate::ole::OleReceiver::choose`].
    pub macs: Vec<Block>,
    /// The flips sent.
    pub flips: Vec<u8>,
    /// The sender's message.
    pub response: Vec<u8>,
}

/// [`audit_ole`] from the receiver's messages: the same check, for a
/// caller that logged messages rather than inputs.
pub fn audit_ole_transcripts<F: OleField>(
    delta: Block,
    stream: u64,
    batches: &[OleTranscript],
    sender_inputs: &[Vec<F>],
) -> Result<Vec<Vec<F>>> {
    if batches.len() != sender_inputs.len() {
        return Err(Error::Malformed("OLE inputs for another number of batches"));
    }
    let mut replay = OleReplay::new(delta, stream);
    batches
        .iter()
        .zip(sender_inputs)
        .map(|(b, a)| replay.elements(b, a))
        .collect()
}

/// A batch of bitwise OLEs as the receiver saw it
/// ([`crate::ole::OleReceiver::choose_bits_ahead`]): one OLE a COT, its
/// input the COT's choice bit, so it sent nothing; the COT MACs and the
/// sender's answer as received.
#[derive(Clone, Debug, Default)]
pub struct OleBitsTranscript {
    /// The MACs given to [`crate::ole::OleReceiver::choose_bits_ahead`].
    pub macs: Vec<Block>,
    /// The sender's message ([`OleSender::respond_bits_ahead`]).
    pub response: Vec<u8>,
}

/// One batch of an OLE stream, of either kind a stream may run.
#[derive(Clone, Debug)]
pub enum OleStreamBatch {
    /// Gilboa's OLEs, [`OleField::BITS`] COTs an element; the sender's
    /// inputs are one element per OLE.
    Elements(OleTranscript),
    /// Bitwise OLEs, one a COT; the sender's inputs are one element per
    /// COT (the multiples [`OleSender::respond_bits_ahead`] took).
    Bits(OleBitsTranscript),
}

/// The prover's replay of one OLE stream once `Δ` is known, batch by
/// batch in the order they ran (each takes the stream's next COT indices,
/// so its hash tweaks, as the sender's did). A caller whose honest sender
/// inputs depend on earlier batches' sender shares (the ChaCha20 record's
/// hidden ciphertext, `webproof_mpc_tls::rec::chacha::audit_oles`) computes them between
/// the batches.
pub struct OleReplay {
    delta: Block,
    sender: OleSender,
}

impl OleReplay {
    /// The replay of stream `stream` under the revealed `Δ`, from its
    /// first batch.
    pub fn new(delta: Block, stream: u64) -> Self {
        OleReplay {
            delta,
            sender: OleSender::new(delta, stream),
        }
    }

    /// The sender's keys of the COTs whose MACs are `macs`: the prover
    /// knows both once `Δ` is (`K = M ⊕ lsb(M)·Δ`).
    fn keys(&self, macs: &[Block]) -> Vec<Block> {
        macs.iter()
            .map(|&m| m ^ Block::select(m.lsb(), self.delta))
            .collect()
    }

    /// The next batch, Gilboa's OLEs on the sender's inputs `inputs`: the
    /// honest answer for them must begin the answer received (an A2M
    /// answer carries more after it). Returns the sender's shares, one an
    /// OLE.
    pub fn elements<F: OleField>(&mut self, batch: &OleTranscript, inputs: &[F]) -> Result<Vec<F>> {
        if batch.macs.len() != inputs.len() * F::BITS {
            return Err(Error::Malformed("OLE inputs of the wrong length"));
        }
        let keys = self.keys(&batch.macs);
        let (u, msg) = self.sender.respond(&keys, inputs, &batch.flips)?;
        if batch.response.get(..msg.len()) != Some(&msg[..]) {
            return Err(Error::VerifierCheated(
                "an OLE answer differs from the honest one for the revealed inputs",
            ));
        }
        Ok(u)
    }

    /// The next batch, bitwise OLEs on the sender's per-COT elements
    /// `multiples`: the answer received must be the honest one exactly
    /// (the receiver refuses any other length). Returns the sender's
    /// shares, one a COT. A bitwise answer that deviates in one element
    /// counts only when that COT's choice bit is 1, which makes it a
    /// selective failure on the receiver's input: this replay is what
    /// catches it.
    pub fn bits<F: OleField>(
        &mut self,
        batch: &OleBitsTranscript,
        multiples: &[F],
    ) -> Result<Vec<F>> {
        if batch.macs.len() != multiples.len() {
            return Err(Error::Malformed("bitwise OLE inputs of the wrong length"));
        }
        let keys = self.keys(&batch.macs);
        let (u, msg) = self.sender.respond_bits_ahead(&keys, multiples)?;
        if batch.response != msg {
            return Err(Error::VerifierCheated(
                "a bitwise OLE answer differs from the honest one for the sender's inputs",
            ));
        }
        Ok(u)
    }

    /// The next batch of either kind ([`Self::elements`], [`Self::bits`]).
    pub fn batch<F: OleField>(&mut self, batch: &OleStreamBatch, inputs: &[F]) -> Result<Vec<F>> {
        match batch {
            OleStreamBatch::Elements(b) => self.elements(b, inputs),
            OleStreamBatch::Bits(b) => self.bits(b, inputs),
        }
    }
}

/// [`audit_ole_transcripts`] for a stream that also ran bitwise batches:
/// `sender_inputs[j]` are the verifier's revealed inputs of batch `j`
/// (as [`OleSender::inputs`] logs them: an element per OLE, or per COT
/// for a bitwise batch). Returns the verifier's shares of each batch.
pub fn audit_ole_stream<F: OleField>(
    delta: Block,
    stream: u64,
    batches: &[OleStreamBatch],
    sender_inputs: &[Vec<F>],
) -> Result<Vec<Vec<F>>> {
    if batches.len() != sender_inputs.len() {
        return Err(Error::Malformed("OLE inputs for another number of batches"));
    }
    let mut replay = OleReplay::new(delta, stream);
    batches
        .iter()
        .zip(sender_inputs)
        .map(|(b, a)| replay.batch(b, a))
        .collect()
}

/// The verifier's reveal of bits (its inputs to circuits): `u32` group
/// count, then per group a `u32` bit count and the bits packed LSB first;
/// integers little-endian.
pub fn encode_bits(groups: &[Vec<bool>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(groups.len() as u32).to_le_bytes());
    for g in groups {
        out.extend_from_slice(&(g.len() as u32).to_le_bytes());
        let mut packed = vec![0u8; g.len().div_ceil(8)];
        for (i, &b) in g.iter().enumerate() {
            packed[i / 8] |= (b as u8) << (i % 8);
        }
        out.extend_from_slice(&packed);
    }
    out
}

/// Parse [`encode_bits`] where the groups must have exactly `lens` bits;
/// anything else (short, long, other counts, padding bits set) is refused.
pub fn decode_bits(msg: &[u8], lens: &[usize]) -> Result<Vec<Vec<bool>>> {
    const WHAT: &str = "revealed bits";
    let mut r = msg;
    let mut take = |n: usize| -> Result<&[u8]> {
        if r.len() < n {
            return Err(Error::Malformed(WHAT));
        }
        let (a, b) = r.split_at(n);
        r = b;
        Ok(a)
    };
    let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize;
    if u32_at(take(4)?) != lens.len() {
        return Err(Error::Malformed(WHAT));
    }
    let mut out = Vec::with_capacity(lens.len());
    for &len in lens {
        if u32_at(take(4)?) != len {
            return Err(Error::Malformed(WHAT));
        }
        let packed = take(len.div_ceil(8))?;
        if len % 8 != 0 && packed[len / 8] >> (len % 8) != 0 {
            return Err(Error::Malformed(WHAT));
        }
        out.push(
            (0..len)
                .map(|i| (packed[i / 8] >> (i % 8)) & 1 == 1)
                .collect(),
        );
    }
    if !r.is_empty() {
        return Err(Error::Malformed(WHAT));
    }
    Ok(out)
}

/// Verifier, after the prover sealed: reveal `Δ` and the keys of
/// [`DELTA_CHECK_COTS`] fresh COTs (drawn from the session's sender, which
/// the prover's receiver mirrors in [`receive_delta`]).
pub async fn reveal_delta<C: RandomCotSender, T: Io>(
    sealed: &mut SealedVerifier<C, T>,
) -> Result<()> {
    let delta = sealed.delta();
    let (cot, ch) = sealed.parts();
    let mut keys = Vec::with_capacity(DELTA_CHECK_COTS);
    cot.extend(ch, DELTA_CHECK_COTS, &mut keys)
        .await
        .map_err(Error::from_zk)?;
    let mut msg = Vec::with_capacity(DELTA_REVEAL_LEN);
    msg.extend_from_slice(&delta.to_bytes());
    for k in &keys {
        msg.extend_from_slice(&k.to_bytes());
    }
    ch.send(&msg)
        .await
        .map_err(|e| Error::Proof(e.to_string()))?;
    ch.flush().await.map_err(|e| Error::Proof(e.to_string()))?;
    Ok(())
}

/// Prover, after sealing: receive and check the revealed `Δ` (see
/// [`check_delta`]). Returns `Δ` for the audits.
pub async fn receive_delta<C: RandomCotReceiver, T: Io>(
    sealed: &mut SealedProver<C, T>,
) -> Result<Block> {
    let (cot, ch) = sealed.parts();
    let mut macs = Vec::with_capacity(DELTA_CHECK_COTS);
    cot.extend(ch, DELTA_CHECK_COTS, &mut macs)
        .await
        .map_err(Error::from_zk)?;
    let msg = ch
        .recv(DELTA_REVEAL_LEN)
        .await
        .map_err(|e| Error::Proof(e.to_string()))?;
    check_delta(&msg, &macs)
}

/// Check a `Δ` reveal against the prover's MACs of the same fresh COTs:
/// `lsb(Δ) = 1`, `lsb(K_i) = 0` and `M_i = K_i ⊕ lsb(M_i)·Δ` for each. A
/// verifier that revealed another `Δ'` must guess, per COT, whether to
/// send `K_i` or `K_i ⊕ Δ ⊕ Δ'`, i.e. the prover's hidden choice bit.
pub fn check_delta(msg: &[u8], macs: &[Block]) -> Result<Block> {
    if msg.len() != DELTA_REVEAL_LEN || macs.len() != DELTA_CHECK_COTS {
        return Err(Error::Malformed("Delta reveal"));
    }
    let block =
        |i: usize| Block::from_bytes(msg[16 * i..16 * i + 16].try_into().expect("16 bytes"));
    let delta = block(0);
    if !delta.lsb() {
        return Err(Error::VerifierCheated("the revealed Delta has lsb 0"));
    }
    for (i, &m) in macs.iter().enumerate() {
        let k = block(i + 1);
        if k.lsb() || m != k ^ Block::select(m.lsb(), delta) {
            return Err(Error::VerifierCheated(
                "the revealed Delta is not the COT sender's",
            ));
        }
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Poly1305Field as F;
    use crate::ole::OleReceiver;
    use rand::SeedableRng;
    use webproof_core::cot::ideal::cots;

    /// A stream of element-wise, bitwise and element-wise batches, as the
    /// sender ran it, and the sender's inputs it revealed and its shares.
    struct Stream {
        delta: Block,
        batches: Vec<OleStreamBatch>,
        revealed: Vec<Vec<F>>,
        shares: Vec<Vec<F>>,
    }

    fn stream(spoil_bits: Option<usize>) -> Stream {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(21);
        let (delta, keys, macs) = cots(22, 2 * 130 + 60 + 130);
        let (mut s, mut r) = (OleSender::new(delta, 5), OleReceiver::new(5));
        let mut out = Stream {
            delta,
            batches: Vec::new(),
            revealed: Vec::new(),
            shares: Vec::new(),
        };
        let m: Vec<F> = (0..60).map(|_| F::random(&mut rng)).collect();
        // Gilboa's OLEs on COTs `lo..lo + 130·n`.
        let mut elements = |s: &mut OleSender, r: &mut OleReceiver, lo: usize, n: usize| {
            let a: Vec<F> = (0..n).map(|_| F::random(&mut rng)).collect();
            let b: Vec<F> = (0..n).map(|_| F::random(&mut rng)).collect();
            let m = &macs[lo..lo + 130 * n];
            let (pending, flips) = r.choose(m, &b).unwrap();
            let (u, response) = s.respond(&keys[lo..lo + 130 * n], &a, &flips).unwrap();
            pending.finish(&response).unwrap();
            let t = OleTranscript {
                macs: m.to_vec(),
                flips,
                response,
            };
            (OleStreamBatch::Elements(t), a, u)
        };
        let push = |out: &mut Stream, (b, a, u): (OleStreamBatch, Vec<F>, Vec<F>)| {
            out.batches.push(b);
            out.revealed.push(a);
            out.shares.push(u);
        };
        push(&mut out, elements(&mut s, &mut r, 0, 2));
        let pending = r.choose_bits_ahead::<F>(&macs[260..320]).unwrap();
        let (u, mut response) = s.respond_bits_ahead(&keys[260..320], &m).unwrap();
        if let Some(j) = spoil_bits {
            response[F::BYTES * j] ^= 1;
        }
        pending.finish(&response).unwrap();
        let t = OleBitsTranscript {
            macs: macs[260..320].to_vec(),
            response,
        };
        push(&mut out, (OleStreamBatch::Bits(t), m, u));
        push(&mut out, elements(&mut s, &mut r, 320, 1));
        out
    }

    /// The replay follows the stream through batches of both kinds: the
    /// verifier's shares come out as it had them, and the batch after a
    /// bitwise one is replayed under the right tweaks.
    #[test]
    fn mixed_stream_replays() {
        let s = stream(None);
        let shares = audit_ole_stream(s.delta, 5, &s.batches, &s.revealed).unwrap();
        assert_eq!(shares, s.shares);
        // Another stream, a batch left out, the wrong kind of inputs.
        assert!(audit_ole_stream(s.delta, 6, &s.batches, &s.revealed).is_err());
        assert!(audit_ole_stream(s.delta, 5, &s.batches[1..], &s.revealed[1..]).is_err());
        assert!(audit_ole_stream(s.delta, 5, &s.batches[..1], &s.revealed[1..2]).is_err());
    }

    /// A bitwise answer off in one element, or a reveal off in one, is
    /// the verifier's cheat.
    #[test]
    fn deviating_bitwise_answer_or_reveal_is_caught() {
        for j in [0, 59] {
            let s = stream(Some(j));
            let r = audit_ole_stream(s.delta, 5, &s.batches, &s.revealed);
            assert!(matches!(r, Err(Error::VerifierCheated(_))), "{j}: {r:?}");
        }
        let mut s = stream(None);
        s.revealed[1][7] = s.revealed[1][7] + F::ONE;
        let r = audit_ole_stream(s.delta, 5, &s.batches, &s.revealed);
        assert!(matches!(r, Err(Error::VerifierCheated(_))), "{r:?}");
    }
}

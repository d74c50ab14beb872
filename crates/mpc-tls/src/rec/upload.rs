//! The prover's side of dual execution in a session, written once for
//! both TLS versions: its upload in preprocessing (`DualLabels`, then per
//! request record its keystream garbling as `DualTables` chunks and a
//! `DualEnd`) and, per request record, what the check of the verifier's
//! answer needs. The protocol and why it makes the keystream the prover
//! uses online authentic are [`super::dual`]'s.

use super::dual::{DualProver, KeystreamCheck, RecordGarbling};
use crate::error::{Error, Result};
use crate::msg::ProverMsg;
use rand_core::{CryptoRng, RngCore};
use std::sync::Arc;
use webproof_circuits::bytes_to_bits;
use webproof_core::Block;
use webproof_mpc::Plan;

/// A request record's dual execution on the prover's side.
pub(crate) struct DualRecord {
    id: u32,
    instance: u64,
    seq: u64,
    /// The keystream circuit's schedule: built ahead (the session's
    /// `prepare`) or when the record's garbling starts.
    pub(crate) plan: Option<Arc<Plan>>,
    /// The keystream pads' COT MACs.
    pads: Vec<Block>,
    /// What the check needs, once the record's garbling is out.
    check: Option<KeystreamCheck>,
    /// The keystream and its labels as decoded from the verifier's
    /// garbling: unused until the check passes.
    ks_bits: Vec<bool>,
    gv_labels: Vec<Block>,
}

impl DualRecord {
    /// The record `id` (its circuit instance and sequence number), whose
    /// keystream pads take the COTs with MACs `pads`.
    pub(crate) fn new(id: u32, instance: u64, seq: u64, pads: Vec<Block>) -> Self {
        DualRecord {
            id,
            instance,
            seq,
            plan: None,
            pads,
            check: None,
            ks_bits: Vec::new(),
            gv_labels: Vec::new(),
        }
    }

    /// Its keystream garbling is all out: the record may run in 2PC.
    pub(crate) fn garbled(&self) -> bool {
        self.check.is_some()
    }

    /// The keystream the record's circuit output and its labels there
    /// (the verifier's garbling), kept for the check. Refused before the
    /// record's own garbling is out: the verifier's answer must not be
    /// able to depend on the keystream.
    pub(crate) fn decoded(&mut self, keystream: &[u8], labels: Vec<Block>) -> Result<()> {
        if !self.garbled() {
            return Err(Error::OutOfOrder(
                "a request record before its keystream garbling is out",
            ));
        }
        self.ks_bits = bytes_to_bits(keystream);
        self.gv_labels = labels;
        Ok(())
    }

    /// The verifier's answer `y` to the record's check: both garblings
    /// agree on the keystream. Nothing computed from the keystream leaves
    /// for the server before this passes; `early` names what came before
    /// the record's garbling was out.
    pub(crate) fn check(&self, y: &[u8], early: &'static str) -> Result<()> {
        let check = self.check.as_ref().ok_or(Error::OutOfOrder(early))?;
        Ok(check.check(&self.ks_bits, &self.gv_labels, &self.pads, y)?)
    }
}

/// The prover's upload of dual execution: the labels of the verifier's
/// key ‖ IV wires first, then each request record's keystream garbling in
/// record order, garbled as it goes.
#[derive(Default)]
pub(crate) struct DualUpload {
    labels: Option<Vec<u8>>,
    garbling: Option<(usize, RecordGarbling)>,
}

impl DualUpload {
    /// The labels of the verifier's key ‖ IV wires (from its `Setup`),
    /// to go up next.
    pub(crate) fn set_labels(&mut self, labels: Vec<u8>) {
        self.labels = Some(labels);
    }

    /// Whether a message is due: the labels, a garbling under way, or (if
    /// `may_start`) a request record whose garbling has not started.
    pub(crate) fn ready<'a>(
        &self,
        mut records: impl Iterator<Item = &'a DualRecord>,
        may_start: bool,
    ) -> bool {
        self.labels.is_some()
            || self.garbling.is_some()
            || (may_start && records.any(|d| !d.garbled()))
    }

    /// The next message of the upload, `None` once all is out. `dual`
    /// gives a record's dual execution (`None` for the record that
    /// computes the GHASH key, outside it); `plan` builds a record's
    /// keystream schedule if it was not built ahead.
    pub(crate) fn next<R>(
        &mut self,
        prover: &mut DualProver,
        records: &mut [R],
        dual: impl Fn(&mut R) -> Option<&mut DualRecord>,
        plan: impl FnOnce(&R) -> Result<Arc<Plan>>,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Option<ProverMsg>> {
        if let Some(labels) = self.labels.take() {
            return Ok(Some(ProverMsg::DualLabels(labels)));
        }
        if self.garbling.is_none() {
            let Some(i) = records
                .iter_mut()
                .position(|r| dual(r).is_some_and(|d| !d.garbled()))
            else {
                return Ok(None);
            };
            let built = match dual(&mut records[i]).and_then(|d| d.plan.take()) {
                Some(built) => built,
                None => plan(&records[i])?,
            };
            let d = dual(&mut records[i]).expect("found above");
            let g = prover.record(built, d.instance, d.seq.to_be_bytes(), rng)?;
            self.garbling = Some((i, g));
        }
        let (i, g) = self.garbling.as_mut().expect("set above");
        let id = dual(&mut records[*i]).expect("found above").id;
        let mut chunk = Vec::new();
        if g.next_chunk(&mut chunk) {
            return Ok(Some(ProverMsg::DualTables { id, chunk }));
        }
        let (i, g) = self.garbling.take().expect("set above");
        let d = dual(&mut records[i]).expect("found above");
        let (end, check) = g.finish(&d.pads)?;
        d.check = Some(check);
        Ok(Some(ProverMsg::DualEnd { id, end }))
    }
}

//! The verifier's side of dual execution in a session, written once for
//! both TLS versions and both record ciphers: a request record's check
//! value, the answer the prover must see before anything computed from
//! the record's keystream leaves for the server. The protocol and why
//! the check makes that keystream authentic are [`super::dual`]'s; the
//! prover's side is [`super::upload`].

use super::dual::{DualVerifier, RecordEvaluation, CHECK_LEN};
use crate::error::{Error, Result};
use std::sync::Arc;
use webproof_core::Block;
use webproof_mpc::Plan;

/// The check value of a request record about to run in 2PC: the
/// verifier's evaluation `ev` of the prover's garbling of its keystream
/// (refused until the tables and their end are all in, so the value
/// cannot be asked for early), run on the prover's labels `labels` and
/// its own (`dual`, refused until they came), against its own garbling
/// of the same keystream (the record circuit's output 0-labels
/// `gv_zero`, the pads' COT keys `pad_keys`, `delta`). `plan` gives the
/// keystream circuit's schedule if none was set ahead.
pub(crate) fn check_value(
    ev: Option<&mut RecordEvaluation>,
    dual: Option<&DualVerifier>,
    plan: impl FnOnce() -> Result<Arc<Plan>>,
    labels: &[u8],
    gv_zero: &[Block],
    pad_keys: &[Block],
    delta: Block,
) -> Result<[u8; CHECK_LEN]> {
    let dual = dual.ok_or(Error::OutOfOrder(
        "a request record before its keystream labels",
    ))?;
    let ev = ev.filter(|e| e.is_complete()).ok_or(Error::OutOfOrder(
        "a request record before the prover's garbling of its keystream",
    ))?;
    if !ev.has_plan() {
        ev.set_plan(plan()?)?;
    }
    Ok(ev.check_value(dual, labels, gv_zero, pad_keys, delta)?)
}

//! The two TLS versions' sessions as the runs drive them: one trait per
//! party over `webproof_mpc_tls`'s TLS 1.2 and TLS 1.3 sessions, so the
//! flights, timeouts and blame are written once ([`super::prover`],
//! [`super::verifier`]). Both versions stream preprocessing (the
//! verifier's tables down, the prover's keystream garbling up); the TLS
//! 1.3 verifier builds its record schedules on the session's task (they
//! are cached per process), so that step defaults to nothing there.
//! Every message is still checked by the session itself.

use webproof_mpc_tls as mpc;
use webproof_mpc_tls::tls13::{Tls13ProverSession, Tls13VerifierSession};

/// The prover's session of either version.
pub(crate) trait ProverSide: Send + 'static {
    /// What the session leaves for the proof.
    type Outcome;
    /// The circuits' schedules (CPU only, off the session's task).
    fn prepare(&mut self) -> mpc::Result<()> {
        Ok(())
    }
    /// An upload of the prover's own garbling is ready.
    fn upload_ready(&self) -> bool {
        false
    }
    /// The next upload of the prover's own garbling.
    fn next_upload(&mut self) -> mpc::Result<Option<mpc::ProverMsg>> {
        Ok(None)
    }
    fn on_verifier_bytes(&mut self, b: &[u8]) -> mpc::Result<mpc::ProverOutput>;
    fn on_server_bytes(&mut self, b: &[u8]) -> mpc::Result<mpc::ProverOutput>;
    fn on_server_closed(&mut self) -> mpc::Result<mpc::ProverOutput>;
    /// The transcript is complete on this side: time for `Close`.
    fn ready_to_close(&self) -> bool;
    fn close(&mut self) -> mpc::Result<mpc::ProverMsg>;
    /// The verifier's `CloseAck` came and was accepted.
    fn finished(&self) -> bool;
    fn into_outcome(self) -> Option<Self::Outcome>;
}

impl ProverSide for mpc::ProverSession {
    type Outcome = mpc::ProverOutcome;
    fn prepare(&mut self) -> mpc::Result<()> {
        mpc::ProverSession::prepare(self)
    }
    fn upload_ready(&self) -> bool {
        mpc::ProverSession::upload_ready(self)
    }
    fn next_upload(&mut self) -> mpc::Result<Option<mpc::ProverMsg>> {
        mpc::ProverSession::next_upload(self)
    }
    fn on_verifier_bytes(&mut self, b: &[u8]) -> mpc::Result<mpc::ProverOutput> {
        mpc::ProverSession::on_verifier_bytes(self, b)
    }
    fn on_server_bytes(&mut self, b: &[u8]) -> mpc::Result<mpc::ProverOutput> {
        mpc::ProverSession::on_server_bytes(self, b)
    }
    fn on_server_closed(&mut self) -> mpc::Result<mpc::ProverOutput> {
        mpc::ProverSession::on_server_closed(self)
    }
    fn ready_to_close(&self) -> bool {
        self.server_done() && self.records_done()
    }
    fn close(&mut self) -> mpc::Result<mpc::ProverMsg> {
        mpc::ProverSession::close(self)
    }
    fn finished(&self) -> bool {
        self.outcome().is_some()
    }
    fn into_outcome(self) -> Option<mpc::ProverOutcome> {
        mpc::ProverSession::into_outcome(self)
    }
}

/// TLS 1.3 hides the record types under the application key, which only
/// the 2PC holds until `CloseAck`: the prover cannot see the server's
/// close_notify, so the transcript ends when the server closes the
/// connection (after its close_notify, as servers do on `Connection:
/// close`).
impl ProverSide for Tls13ProverSession {
    type Outcome = Tls13ProverSession;
    fn prepare(&mut self) -> mpc::Result<()> {
        Tls13ProverSession::prepare(self)
    }
    fn upload_ready(&self) -> bool {
        Tls13ProverSession::upload_ready(self)
    }
    fn next_upload(&mut self) -> mpc::Result<Option<mpc::ProverMsg>> {
        Tls13ProverSession::next_upload(self)
    }
    fn on_verifier_bytes(&mut self, b: &[u8]) -> mpc::Result<mpc::ProverOutput> {
        Tls13ProverSession::on_verifier_bytes(self, b)
    }
    fn on_server_bytes(&mut self, b: &[u8]) -> mpc::Result<mpc::ProverOutput> {
        Tls13ProverSession::on_server_bytes(self, b)
    }
    fn on_server_closed(&mut self) -> mpc::Result<mpc::ProverOutput> {
        if !self.handshake_done() {
            return Err(mpc::Error::ServerClosed);
        }
        Tls13ProverSession::on_server_closed(self)
    }
    fn ready_to_close(&self) -> bool {
        self.server_done() && self.request_sent()
    }
    fn close(&mut self) -> mpc::Result<mpc::ProverMsg> {
        Tls13ProverSession::close(self)
    }
    fn finished(&self) -> bool {
        self.response().is_some()
    }
    fn into_outcome(self) -> Option<Tls13ProverSession> {
        Some(self)
    }
}

/// The verifier's session of either version.
pub(crate) trait VerifierSide {
    fn on_bytes(&mut self, b: &[u8]) -> mpc::Result<Vec<mpc::VerifierMsg>>;
    fn is_closed(&self) -> bool;
    /// The record circuits' schedules to build off the session's task.
    fn record_plan_jobs(&self) -> Vec<mpc::RecordPlanJob> {
        Vec::new()
    }
    fn wants_record_plan(&self) -> bool {
        false
    }
    fn provide_record_plan(&mut self, _plan: mpc::RecordPlan) -> mpc::Result<()> {
        Err(mpc::Error::Usage("no record schedule is built here".into()))
    }
    /// The next chunk of tables to stream.
    fn next_tables(&mut self) -> mpc::Result<Option<mpc::VerifierMsg>> {
        Ok(None)
    }
}

impl VerifierSide for mpc::VerifierSession {
    fn on_bytes(&mut self, b: &[u8]) -> mpc::Result<Vec<mpc::VerifierMsg>> {
        mpc::VerifierSession::on_bytes(self, b)
    }
    fn is_closed(&self) -> bool {
        mpc::VerifierSession::is_closed(self)
    }
    fn record_plan_jobs(&self) -> Vec<mpc::RecordPlanJob> {
        mpc::VerifierSession::record_plan_jobs(self)
    }
    fn wants_record_plan(&self) -> bool {
        mpc::VerifierSession::wants_record_plan(self)
    }
    fn provide_record_plan(&mut self, plan: mpc::RecordPlan) -> mpc::Result<()> {
        mpc::VerifierSession::provide_record_plan(self, plan)
    }
    fn next_tables(&mut self) -> mpc::Result<Option<mpc::VerifierMsg>> {
        mpc::VerifierSession::next_tables(self)
    }
}

impl VerifierSide for Tls13VerifierSession {
    fn on_bytes(&mut self, b: &[u8]) -> mpc::Result<Vec<mpc::VerifierMsg>> {
        Tls13VerifierSession::on_bytes(self, b)
    }
    fn is_closed(&self) -> bool {
        self.closed()
    }
    fn next_tables(&mut self) -> mpc::Result<Option<mpc::VerifierMsg>> {
        Tls13VerifierSession::next_tables(self)
    }
}

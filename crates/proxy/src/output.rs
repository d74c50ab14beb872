//! What the verifier attests to after a successful proof.

use crate::disclosure::{check_openings, DisclosedData, DisclosedDigest, Disclosure, Opening};
use crate::error::{ProxyError, Result};
use crate::record::{Direction, Recording};
use crate::statement::SessionSecret;
use crate::suite::{CipherSuite, KxGroup, TlsVersion};
use crate::verify::{assemble, check_handshake, SecretsSource, SessionInfo, VerifyConfig};
use serde::{Deserialize, Serialize};
use webproof_attestation::{Completeness, OrderSpan, ProofMode, SessionFacts};

/// How the statement was established.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProofKind {
    /// The prover handed over the session secret; the verifier derived the
    /// keys and decrypted every record itself. Sound, but not private: the
    /// verifier could read hidden bytes too. No longer on the wire (protocol
    /// version 7): [`verify_full_reveal`] is the clear oracle tests use.
    FullReveal,
    /// A zero-knowledge proof of the statement: key derivation bound to the
    /// handshake, every disclosed byte decrypted under the derived keys.
    Zk,
    /// MPC mode: the verifier took part in the TLS client as one party of
    /// a two-party computation (it never relayed the connection), then a
    /// zero-knowledge proof showed the disclosed bytes decrypt under the
    /// key the 2PC derived.
    Mpc,
}

impl ProofKind {
    /// The mode an attestation of such a proof names.
    pub fn mode(self) -> ProofMode {
        match self {
            ProofKind::FullReveal | ProofKind::Zk => ProofMode::Proxy,
            ProofKind::Mpc => ProofMode::Mpc,
        }
    }
}

/// The verified result of one session, proxy or MPC mode ([`ProofKind`]
/// says which, and so what each fact means: `SECURITY.md`, "What an
/// attestation states"). A fact the verifier could not establish is
/// `None` (or port `0`), never a value that reads as established.
///
/// `D` is how each direction's disclosure is held: the data itself
/// ([`DisclosedData`], what the verifier attests and the prover shows), or
/// in the verifier's verdict only its ranges and a digest
/// ([`DisclosedDigest`], see [`VerifierOutput::digested`] and
/// [`VerifierOutput::expand`]): the prover holds the data already.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifierOutput<D = DisclosedData> {
    /// The server name the certificate was checked against.
    pub server_name: String,
    /// The TCP port the verifier connected to (`0`: not recorded, as in
    /// MPC mode, where the verifier connects to no server).
    pub server_port: u16,
    /// Session time (Unix seconds, the verifier's clock at connection).
    pub time: u64,
    /// TLS version.
    pub tls_version: TlsVersion,
    /// Cipher suite.
    pub cipher_suite: CipherSuite,
    /// Key-exchange group.
    pub key_exchange_group: KxGroup,
    /// SHA-256 of the server's end-entity certificate (hex).
    pub server_certificate_sha256: String,
    /// How the statement was established.
    pub proof: ProofKind,
    /// What the client sent.
    pub sent: D,
    /// What the server sent.
    pub received: D,
    /// Whether the server closed with close_notify; `None`: not
    /// established (MPC mode: the closing alert is not proven).
    pub server_close_notify: Option<bool>,
    /// A fatal alert the server sent after the handshake, if any.
    pub server_alert: Option<u8>,
    /// Server records the verifier relayed after the point where the
    /// prover cut the transcript (not part of `received`). Non-zero means
    /// the server said more than `received` shows. `None`: not
    /// established (MPC mode: the verifier sees only what the prover
    /// forwards, so it cannot tell whether the prover stopped early).
    pub server_records_after_cut: Option<usize>,
    /// Whether `received` holds complete HTTP responses, judged on the
    /// bytes the verifier saw ([`crate::http::response_completeness`]).
    pub response_complete: Completeness,
    /// Application data of both directions in the order the verifier
    /// recorded it. A received span listed before a sent span reached the
    /// verifier before that sent data was forwarded, so it does not answer it.
    pub order: Vec<OrderSpan>,
    /// JSON paths the verifier checked ([`crate::json`]): each value sits at
    /// its path of the message body, with no duplicate key along the way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json: Vec<crate::json::VerifiedJson>,
}

impl VerifierOutput {
    /// The facts an attestation carries besides the transcript commitment.
    pub fn facts(&self) -> SessionFacts {
        SessionFacts {
            mode: self.proof.mode(),
            server_port: self.server_port,
            server_close_notify: self.server_close_notify,
            // u32::MAX encodes "not established": a count that large
            // (beyond the recorder's limits anyway) saturates below it.
            server_records_after_cut: self
                .server_records_after_cut
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX).min(u32::MAX - 1)),
            response_complete: self.response_complete,
            order: self.order.clone(),
        }
    }
}

/// Application-data bytes of every application-phase record, by direction
/// and transcript index, with the transcript they belong to: what the
/// verifier knows after the proof, whichever kind it was.
pub(crate) struct RecordData<'a> {
    /// The verifier's recording.
    pub transcript: &'a Recording,
    /// Per direction, application-data bytes of each transcript record
    /// (0 for handshake records, alerts, tickets).
    pub bytes: [Vec<usize>; 2],
}

impl<'a> RecordData<'a> {
    /// No application data yet, for `transcript`.
    pub fn new(transcript: &'a Recording) -> Self {
        RecordData {
            transcript,
            bytes: [
                vec![0; transcript.sent.len()],
                vec![0; transcript.received.len()],
            ],
        }
    }

    /// Record `index` of `direction` carries `n` bytes of application data.
    pub fn set(&mut self, direction: Direction, index: usize, n: usize) -> Result<()> {
        let slot = self.bytes[direction as usize]
            .get_mut(index)
            .ok_or_else(|| ProxyError::Protocol(format!("no {direction} record {index}")))?;
        *slot = n;
        Ok(())
    }

    /// Client records after those the verifier delivered may not carry
    /// application data: "sent" means forwarded to the server.
    pub fn check_delivered(&self) -> Result<()> {
        let delivered = self.transcript.sent_delivered;
        match self.bytes[0].iter().skip(delivered).position(|&n| n > 0) {
            Some(k) => Err(ProxyError::Undelivered {
                index: delivered + k,
            }),
            None => Ok(()),
        }
    }

    /// The order of application data across directions, as runs.
    pub fn order(&self) -> Vec<OrderSpan> {
        let mut out: Vec<OrderSpan> = Vec::new();
        let mut next = [0usize; 2];
        let mut offset = [0u32; 2];
        for &d in &self.transcript.order {
            let i = d as usize;
            let n = self.bytes[i].get(next[i]).copied().unwrap_or(0);
            next[i] += 1;
            if n == 0 {
                continue;
            }
            // Bounded by the recorder's limits, far below 4 GiB.
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            let direction = match d {
                Direction::Sent => webproof_attestation::Direction::Sent,
                Direction::Received => webproof_attestation::Direction::Received,
            };
            match out.last_mut() {
                Some(last) if last.direction == direction => last.end += n,
                _ => out.push(OrderSpan {
                    direction,
                    start: offset[i],
                    end: offset[i] + n,
                }),
            }
            offset[i] += n;
        }
        out
    }
}

/// The verifier's verdict on a session: its output with each direction's
/// data replaced by a digest.
pub type DigestedOutput = VerifierOutput<DisclosedDigest>;

impl<D> VerifierOutput<D> {
    /// The same output with each direction's disclosure mapped by `f`.
    pub fn try_map<E>(
        self,
        mut f: impl FnMut(Direction, D) -> Result<E>,
    ) -> Result<VerifierOutput<E>> {
        // Exhaustive on purpose: a new field must be carried here.
        let VerifierOutput {
            server_name,
            server_port,
            time,
            tls_version,
            cipher_suite,
            key_exchange_group,
            server_certificate_sha256,
            proof,
            sent,
            received,
            server_close_notify,
            server_alert,
            server_records_after_cut,
            response_complete,
            order,
            json,
        } = self;
        Ok(VerifierOutput {
            server_name,
            server_port,
            time,
            tls_version,
            cipher_suite,
            key_exchange_group,
            server_certificate_sha256,
            proof,
            sent: f(Direction::Sent, sent)?,
            received: f(Direction::Received, received)?,
            server_close_notify,
            server_alert,
            server_records_after_cut,
            response_complete,
            order,
            json,
        })
    }

    /// The output borrowing its disclosures (the rest is copied).
    pub fn as_ref(&self) -> VerifierOutput<&D> {
        // Exhaustive on purpose: a new field must be carried here.
        let VerifierOutput {
            server_name,
            server_port,
            time,
            tls_version,
            cipher_suite,
            key_exchange_group,
            server_certificate_sha256,
            proof,
            sent,
            received,
            server_close_notify,
            server_alert,
            server_records_after_cut,
            response_complete,
            order,
            json,
        } = self;
        VerifierOutput {
            server_name: server_name.clone(),
            server_port: *server_port,
            time: *time,
            tls_version: *tls_version,
            cipher_suite: *cipher_suite,
            key_exchange_group: *key_exchange_group,
            server_certificate_sha256: server_certificate_sha256.clone(),
            proof: *proof,
            sent,
            received,
            server_close_notify: *server_close_notify,
            server_alert: *server_alert,
            server_records_after_cut: *server_records_after_cut,
            response_complete: *response_complete,
            order: order.clone(),
            json: json.clone(),
        }
    }
}

impl VerifierOutput {
    /// The verdict the verifier sends: this output without the data, each
    /// direction's revealed bytes bound by
    /// [`crate::disclosure::disclosure_digest`].
    pub fn digested(&self) -> DigestedOutput {
        self.as_ref()
            .try_map(|d, data| Ok(data.digested(d)))
            .expect("digesting does not fail")
    }
}

impl DigestedOutput {
    /// The prover's side of the verdict: the full output, rebuilt from the
    /// prover's own application data of each direction (`sent`,
    /// `received`), after checking that the verdict's lengths and ranges
    /// are those of `disclosure` (what the prover disclosed) and that its
    /// digests are those of the prover's bytes
    /// ([`crate::ProxyError::Verdict`] otherwise).
    pub fn expand(
        self,
        sent: &[u8],
        received: &[u8],
        disclosure: &Disclosure,
    ) -> Result<VerifierOutput> {
        self.try_map(|d, digested| {
            let data = match d {
                Direction::Sent => sent,
                Direction::Received => received,
            };
            digested.expand(d, data, disclosure.ranges(d))
        })
    }
}

/// The full-reveal verification: check the handshake with the secrets
/// derived from the witness, evaluate the relation in the clear (every record
/// decrypts under the one key of its direction at its sequence number), then
/// check the openings.
pub fn verify_full_reveal(
    t: &Recording,
    cfg: &VerifyConfig,
    witness: &SessionSecret,
    openings: &[Opening],
) -> Result<VerifierOutput> {
    let (info, statement) = check_handshake(t, cfg, SecretsSource::FromWitness(witness))?;
    let opened = statement.evaluate(witness)?;
    let app = assemble(info.version, &opened)?;
    let mut data = RecordData::new(t);
    for o in &opened {
        if o.content_type == crate::record::content_type::APPLICATION_DATA {
            data.set(o.direction, o.index, o.data.len())?;
        }
    }
    let (sent, received) = check_openings(&app.sent, &app.received, openings)?;
    let view: Vec<Option<u8>> = received_view(&received);
    output(
        &info,
        ProofKind::FullReveal,
        sent,
        received,
        app.server_close_notify,
        app.server_alert,
        &data,
        &view,
    )
}

/// A direction's data with hidden bytes as `None`.
fn received_view(d: &DisclosedData) -> Vec<Option<u8>> {
    let mut v = vec![None; d.len];
    for r in &d.revealed {
        for (slot, &b) in v[r.start..r.end].iter_mut().zip(&d.bytes[r.start..r.end]) {
            *slot = Some(b);
        }
    }
    v
}

/// The output, with the facts every proof kind shares: the delivered
/// check, the order, truncation and completeness.
#[allow(clippy::too_many_arguments)]
pub(crate) fn output(
    info: &SessionInfo,
    proof: ProofKind,
    sent: DisclosedData,
    received: DisclosedData,
    close_notify: bool,
    alert: Option<u8>,
    data: &RecordData<'_>,
    received_view: &[Option<u8>],
) -> Result<VerifierOutput> {
    use sha2::Digest;
    data.check_delivered()?;
    Ok(VerifierOutput {
        server_name: info.server_name.clone(),
        server_port: info.port,
        time: info.time,
        tls_version: info.version,
        cipher_suite: info.suite,
        key_exchange_group: info.group,
        server_certificate_sha256: hex::encode(sha2::Sha256::digest(&info.certificates[0])),
        proof,
        sent,
        received,
        server_close_notify: Some(close_notify),
        server_alert: alert,
        server_records_after_cut: Some(data.transcript.received_after_cut),
        response_complete: crate::http::response_completeness(received_view, close_notify),
        order: data.order(),
        json: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;
    use webproof_attestation::Direction as A;

    fn transcript(order: &[Direction], sent_delivered: usize) -> Recording {
        let rec = |direction| Record {
            direction,
            content_type: 23,
            version: 0x0303,
            payload: vec![0; 20],
        };
        Recording {
            sent: order
                .iter()
                .filter(|&&d| d == Direction::Sent)
                .map(|&d| rec(d))
                .collect(),
            received: order
                .iter()
                .filter(|&&d| d == Direction::Received)
                .map(|&d| rec(d))
                .collect(),
            order: order.to_vec(),
            sent_delivered,
            received_after_cut: 0,
        }
    }

    /// Runs of application data in recorded order; handshake records (no
    /// application data) vanish and neighbours of one direction merge.
    #[test]
    fn order_is_runs_of_application_data() {
        use Direction::{Received as R, Sent as S};
        let t = transcript(&[S, R, S, R, S, R, R, S, R], 4);
        let mut data = RecordData::new(&t);
        // Records 0..=1 of each direction are the handshake.
        data.set(S, 2, 100).unwrap();
        data.set(R, 2, 30).unwrap();
        data.set(R, 3, 40).unwrap();
        data.set(S, 3, 10).unwrap();
        data.set(R, 4, 5).unwrap();
        let span = |direction, start, end| OrderSpan {
            direction,
            start,
            end,
        };
        assert_eq!(
            data.order(),
            vec![
                span(A::Sent, 0, 100),
                span(A::Received, 0, 70),
                span(A::Sent, 100, 110),
                span(A::Received, 70, 75),
            ]
        );
        data.check_delivered().unwrap();
        assert!(data.set(S, 9, 1).is_err());
    }

    /// A client record with application data that was never forwarded
    /// (the server had closed) is refused; an empty one is not.
    #[test]
    fn undelivered_application_data_is_refused() {
        use Direction::{Received as R, Sent as S};
        let t = transcript(&[S, R, S, R, S], 2);
        let mut data = RecordData::new(&t);
        data.set(S, 2, 0).unwrap();
        data.check_delivered().unwrap();
        data.set(S, 2, 7).unwrap();
        assert_eq!(
            data.check_delivered(),
            Err(ProxyError::Undelivered { index: 2 })
        );
    }
}

//! Proxy mode's verifier output: the facts of the recorded transcript
//! (application data per record, delivery, order) and the output built
//! from a checked session. The output types themselves, the verdict and
//! the facts an attestation takes are the disclosure layer's
//! (`webproof_disclosure::output`), re-exported here under their old paths.

pub use webproof_disclosure::output::*;

use crate::disclosure::{check_openings, DisclosedData, Opening};
use crate::error::{ProxyError, Result};
use crate::record::{Direction, Recording};
use crate::statement::SessionSecret;
use crate::verify::{assemble, check_handshake, SecretsSource, SessionInfo, VerifyConfig};
use webproof_attestation::OrderSpan;

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
        sent_crlf_free: Vec::new(),
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

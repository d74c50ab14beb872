//! What the verifier attests to after a successful proof, in either mode:
//! the [`VerifierOutput`] types, the facts an attestation takes from them,
//! and the verdict ([`DigestedOutput`]) the prover expands against its own
//! data. How a mode builds an output from what it verified is the mode's
//! (`webproof_proxy::output`, `webproof_mpc_tls::output`).

use crate::disclosure::{DisclosedData, DisclosedDigest, Disclosure, Range};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use webproof_attestation::{Completeness, OrderSpan, ProofMode, SessionFacts};
use webproof_tls::{CipherSuite, Direction, KxGroup, TlsVersion};

/// How the statement was established.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProofKind {
    /// The prover handed over the session secret; the verifier derived the
    /// keys and decrypted every record itself. Sound, but not private: the
    /// verifier could read hidden bytes too. No longer on the wire (protocol
    /// version 7): `webproof_proxy::output::verify_full_reveal` is the clear
    /// oracle tests use.
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
    /// Hidden ranges of the sent data the proof showed to hold no CR or LF
    /// (the prover's hidden request-head bytes, a cookie's value say): what
    /// lets [`Self::exchanges`] fix where each request ends without seeing
    /// them ([`crate::exchange::framed_request_ends`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sent_crlf_free: Vec<Range>,
}

impl VerifierOutput {
    /// The session's exchanges (request and response of each request on
    /// the connection), as [`crate::exchange::exchanges`] finds them in
    /// this output's own disclosed data and recorded order: computed, never
    /// sent, so no party's claim about the split enters it.
    pub fn exchanges(&self) -> Vec<crate::exchange::Exchange> {
        crate::exchange::exchanges(
            &self.sent.view(),
            &self.received.view(),
            &self.order,
            &self.sent_crlf_free,
        )
    }

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
            // What the verifier knows of line ends in the sent data, so a
            // presentation pairs as this output does. (Sent data is bounded
            // far below 4 GiB, the verifier's limit.)
            sent_crlf_free: crate::exchange::known_crlf_free(
                &self.sent.view(),
                &self.sent_crlf_free,
                webproof_attestation::MAX_CRLF_FREE_SPANS,
            )
            .into_iter()
            .map(|r| r.start as u32..r.end as u32)
            .collect(),
        }
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
            sent_crlf_free,
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
            sent_crlf_free,
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
            sent_crlf_free,
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
            sent_crlf_free: sent_crlf_free.clone(),
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
    /// ([`crate::DisclosureError::Verdict`] otherwise).
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

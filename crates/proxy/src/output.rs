//! What the verifier attests to after a successful proof.

use crate::disclosure::{check_openings, DisclosedData, DisclosedDigest, Disclosure, Opening};
use crate::error::Result;
use crate::record::{Direction, Transcript};
use crate::statement::Witness;
use crate::suite::{CipherSuite, KxGroup, TlsVersion};
use crate::verify::{assemble, check_handshake, SecretsSource, SessionInfo, VerifyConfig};
use serde::{Deserialize, Serialize};

/// How the statement was established.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProofKind {
    /// The prover handed over the session secret; the verifier derived the
    /// keys and decrypted every record itself. Sound, but not private: the
    /// verifier could read hidden bytes too. Kept in the protocol for
    /// debugging; the prover uses the ZK path.
    FullReveal,
    /// A zero-knowledge proof of the statement: key derivation bound to the
    /// handshake, every disclosed byte decrypted under the derived keys.
    Zk,
}

/// The verified result of one proxy-mode session.
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
    /// Whether the server closed with close_notify.
    pub server_close_notify: bool,
    /// A fatal alert the server sent after the handshake, if any.
    pub server_alert: Option<u8>,
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
        } = self;
        Ok(VerifierOutput {
            server_name,
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
        })
    }

    /// The output borrowing its disclosures (the rest is copied).
    pub fn as_ref(&self) -> VerifierOutput<&D> {
        // Exhaustive on purpose: a new field must be carried here.
        let VerifierOutput {
            server_name,
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
        } = self;
        VerifierOutput {
            server_name: server_name.clone(),
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
    t: &Transcript,
    cfg: &VerifyConfig,
    witness: &Witness,
    openings: &[Opening],
) -> Result<VerifierOutput> {
    let (info, statement) = check_handshake(t, cfg, SecretsSource::FromWitness(witness))?;
    let opened = statement.evaluate(witness)?;
    let app = assemble(info.version, &opened)?;
    let (sent, received) = check_openings(&app.sent, &app.received, openings)?;
    Ok(output(
        &info,
        ProofKind::FullReveal,
        sent,
        received,
        app.server_close_notify,
        app.server_alert,
    ))
}

pub(crate) fn output(
    info: &SessionInfo,
    proof: ProofKind,
    sent: DisclosedData,
    received: DisclosedData,
    close_notify: bool,
    alert: Option<u8>,
) -> VerifierOutput {
    use sha2::Digest;
    VerifierOutput {
        server_name: info.server_name.clone(),
        time: info.time,
        tls_version: info.version,
        cipher_suite: info.suite,
        key_exchange_group: info.group,
        server_certificate_sha256: hex::encode(sha2::Sha256::digest(&info.certificates[0])),
        proof,
        sent,
        received,
        server_close_notify: close_notify,
        server_alert: alert,
    }
}

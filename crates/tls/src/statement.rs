//! The statement the ZK proof establishes, and the same relation evaluated
//! in the clear.
//!
//! After the handshake checks ([`crate::verify`]) the verifier knows the
//! public inputs; the prover knows the witness. The relation is:
//!
//! - TLS 1.3: the handshake secret `HS` yields, by the key schedule and the
//!   public transcript hashes, the revealed client and server handshake
//!   traffic secrets, and the client/server application traffic keys;
//! - TLS 1.2: the master secret `MS` yields, by the PRF, the key block, and
//!   the client and server Finished records decrypt (under that key block) to
//!   the Finished verify_data over the public handshake hashes;
//! - every application record of a direction decrypts under that
//!   direction's one key, with nonce from the IV and its sequence number, to
//!   the committed plaintext.
//!
//! [`SessionStatement::evaluate`] is that relation in the clear: the full-reveal
//! oracle of the tests (`webproof_proxy::output::verify_full_reveal`,
//! handed the witness) and the reference the ZK circuits are tested
//! against. The ZK path proves the same relation without revealing the
//! witness (proxy mode's `protocol::ProofPayload`; MPC mode's TLS 1.3
//! verifier takes the public inputs of a checked handshake from here).

use crate::aead::{OpenError, RecordCipher};
use crate::error::{Result, TlsError};
use crate::keys;
use crate::record::{content_type, hex_bytes, Direction, Record};
use crate::suite::{CipherSuite, TlsVersion};
use serde::{Deserialize, Serialize};

/// Public inputs specific to the TLS version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "version")]
pub enum PublicInputs {
    /// TLS 1.3.
    #[serde(rename = "1.3")]
    Tls13 {
        /// Hash of ClientHello..ServerHello.
        #[serde(with = "hex_bytes")]
        th_hello: Vec<u8>,
        /// Hash of ClientHello..server Finished.
        #[serde(with = "hex_bytes")]
        th_server_finished: Vec<u8>,
        /// The revealed client handshake traffic secret.
        #[serde(with = "hex_bytes")]
        client_hs_traffic: Vec<u8>,
        /// The revealed server handshake traffic secret.
        #[serde(with = "hex_bytes")]
        server_hs_traffic: Vec<u8>,
    },
    /// TLS 1.2.
    #[serde(rename = "1.2")]
    Tls12 {
        /// client_random.
        #[serde(with = "hex_bytes")]
        client_random: Vec<u8>,
        /// server_random.
        #[serde(with = "hex_bytes")]
        server_random: Vec<u8>,
        /// The handshake messages ClientHello..ClientKeyExchange (all in the
        /// clear in TLS 1.2); the client Finished covers their hash.
        #[serde(with = "hex_bytes")]
        handshake_messages: Vec<u8>,
        /// NewSessionTicket messages between the client and server Finished.
        /// The server Finished covers `handshake_messages || client Finished
        /// || tickets`, where the client Finished follows from the master secret.
        #[serde(with = "hex_bytes")]
        tickets: Vec<u8>,
        /// The client's encrypted Finished record (sequence number 0).
        client_finished: Record,
        /// The server's encrypted Finished record (sequence number 0).
        server_finished: Record,
    },
}

/// One protected application-phase record with its position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementRecord {
    /// The record as recorded.
    pub record: Record,
    /// Its TLS sequence number under the application key.
    pub seq: u64,
    /// Its index among its direction's records in the transcript.
    pub index: usize,
}

/// Everything public the proof is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStatement {
    /// The negotiated suite (fixes version, hash and AEAD).
    pub suite: CipherSuite,
    /// Version-specific public inputs.
    pub public: PublicInputs,
    /// Every application-phase record, both directions, in transcript order per direction.
    pub records: Vec<StatementRecord>,
}

/// The prover's secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "version")]
pub enum SessionSecret {
    /// TLS 1.3 handshake secret.
    #[serde(rename = "1.3")]
    Tls13 {
        /// HS.
        #[serde(with = "hex_bytes")]
        handshake_secret: Vec<u8>,
    },
    /// TLS 1.2 master secret.
    #[serde(rename = "1.2")]
    Tls12 {
        /// The 48-byte master secret.
        #[serde(with = "hex_bytes")]
        master_secret: Vec<u8>,
    },
}

impl core::fmt::Debug for SessionSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SessionSecret(..)")
    }
}

/// A decrypted record of the application phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenedRecord {
    /// Direction.
    pub direction: Direction,
    /// Index among that direction's transcript records.
    pub index: usize,
    /// Sequence number.
    pub seq: u64,
    /// Real content type.
    pub content_type: u8,
    /// Content.
    pub data: Vec<u8>,
}

/// The application traffic keys of both directions.
#[derive(Clone, Debug)]
pub struct AppKeys {
    /// Client write keys.
    pub client: keys::TrafficKeys,
    /// Server write keys.
    pub server: keys::TrafficKeys,
}

impl SessionStatement {
    /// Check the key-derivation part of the relation and return the
    /// application keys (what the full-reveal path hands to the verifier).
    pub fn derive_keys(&self, w: &SessionSecret) -> Result<AppKeys> {
        let suite = self.suite;
        let h = suite.hash();
        match (&self.public, w) {
            (
                PublicInputs::Tls13 {
                    th_hello,
                    th_server_finished,
                    client_hs_traffic,
                    server_hs_traffic,
                },
                SessionSecret::Tls13 { handshake_secret },
            ) => {
                if handshake_secret.len() != h.output_len() {
                    return Err(TlsError::SecretMismatch(
                        "handshake secret has the wrong length".into(),
                    ));
                }
                let (c, s) = keys::tls13_handshake_traffic(h, handshake_secret, th_hello);
                if &c != client_hs_traffic || &s != server_hs_traffic {
                    return Err(TlsError::SecretMismatch(
                        "the handshake secret does not yield the handshake traffic secrets".into(),
                    ));
                }
                let (ca, sa) =
                    keys::tls13_application_traffic(h, handshake_secret, th_server_finished);
                Ok(AppKeys {
                    client: keys::tls13_traffic_keys(suite, &ca),
                    server: keys::tls13_traffic_keys(suite, &sa),
                })
            }
            (
                PublicInputs::Tls12 {
                    client_random,
                    server_random,
                    handshake_messages,
                    tickets,
                    client_finished,
                    server_finished,
                },
                SessionSecret::Tls12 { master_secret },
            ) => {
                if master_secret.len() != 48 {
                    return Err(TlsError::SecretMismatch(
                        "master secret must be 48 bytes".into(),
                    ));
                }
                let cr: [u8; 32] = client_random
                    .as_slice()
                    .try_into()
                    .map_err(|_| TlsError::SecretMismatch("client random".into()))?;
                let sr: [u8; 32] = server_random
                    .as_slice()
                    .try_into()
                    .map_err(|_| TlsError::SecretMismatch("server random".into()))?;
                let (ck, sk) = keys::tls12_key_block(suite, master_secret, &cr, &sr);
                let finished_msg = |label: &str, msgs: &[u8]| {
                    let mut m = vec![crate::handshake::msg_type::FINISHED, 0, 0, 12];
                    m.extend_from_slice(&keys::tls12_finished(
                        h,
                        master_secret,
                        label,
                        &h.hash(msgs),
                    ));
                    m
                };
                let client_msg = finished_msg("client finished", handshake_messages);
                let mut server_covers = handshake_messages.clone();
                server_covers.extend_from_slice(&client_msg);
                server_covers.extend_from_slice(tickets);
                let server_msg = finished_msg("server finished", &server_covers);
                for (dir, keys_, rec, expect) in [
                    (Direction::Sent, &ck, client_finished, client_msg),
                    (Direction::Received, &sk, server_finished, server_msg),
                ] {
                    let c = RecordCipher::new(suite, keys_.clone())?;
                    let opened = c.open(0, rec).map_err(|_| TlsError::Finished(dir))?;
                    if opened.content_type != content_type::HANDSHAKE || opened.data != expect {
                        return Err(TlsError::Finished(dir));
                    }
                }
                Ok(AppKeys {
                    client: ck,
                    server: sk,
                })
            }
            _ => Err(TlsError::SecretMismatch(
                "witness is for another TLS version".into(),
            )),
        }
    }

    /// Evaluate the whole relation in the clear: derive the keys and open
    /// every record at its sequence number.
    pub fn evaluate(&self, w: &SessionSecret) -> Result<Vec<OpenedRecord>> {
        let keys = self.derive_keys(w)?;
        self.open_records(&keys)
    }

    /// Open every application record under the given keys.
    pub fn open_records(&self, keys: &AppKeys) -> Result<Vec<OpenedRecord>> {
        let client = RecordCipher::new(self.suite, keys.client.clone())?;
        let server = RecordCipher::new(self.suite, keys.server.clone())?;
        self.records
            .iter()
            .map(|r| {
                let c = match r.record.direction {
                    Direction::Sent => &client,
                    Direction::Received => &server,
                };
                match c.open(r.seq, &r.record) {
                    Ok(o) => Ok(OpenedRecord {
                        direction: r.record.direction,
                        index: r.index,
                        seq: r.seq,
                        content_type: o.content_type,
                        data: o.data,
                    }),
                    Err(OpenError::Auth) => Err(TlsError::Decrypt {
                        direction: r.record.direction,
                        index: r.index,
                        seq: r.seq,
                    }),
                    Err(OpenError::Malformed(m)) => Err(TlsError::Malformed {
                        what: "record plaintext",
                        detail: m,
                    }),
                }
            })
            .collect()
    }

    /// The TLS version.
    pub fn version(&self) -> TlsVersion {
        self.suite.version()
    }
}

//! The records the session runs in 2PC, numbered by id: `0` the client
//! Finished, `1` the server Finished, `2..` the request's records in
//! order; they start in the order of `run_order`. Owns what both parties
//! derive from an id (length, sequence number, content type, which write
//! key, the circuit plan), so they cannot disagree on it; the protocol
//! steps are `webproof_mpc::record`'s.

use crate::error::{Error, Result};
use std::sync::Arc;
use webproof_mpc::record;
use webproof_mpc::Plan;
use webproof_proxy::record::{content_type, Record};

/// Bytes of the server Finished record's payload: explicit nonce (8),
/// encrypted Finished message (16), tag (16).
const SERVER_FINISHED_RECORD: usize = 40;

/// The server's encrypted Finished record, as both parties first check it
/// before the 2PC check of its contents.
pub(crate) fn check_server_finished(rec: &Record) -> Result<()> {
    if rec.content_type != content_type::HANDSHAKE {
        return Err(Error::ServerEncrypted(rec.content_type));
    }
    if rec.payload.len() != SERVER_FINISHED_RECORD {
        return Err(Error::ServerFinished);
    }
    Ok(())
}

/// A server alert during the handshake, as the error that ends the session.
pub(crate) fn server_alert(payload: &[u8]) -> Error {
    match *payload {
        [level, description] => Error::ServerAlert { level, description },
        _ => Error::Malformed("a server alert that is not two bytes"),
    }
}

/// Id of the client Finished record.
pub(crate) const CLIENT_FINISHED: u32 = 0;
/// Id of the server Finished record.
pub(crate) const SERVER_FINISHED: u32 = 1;

/// The ids of a session's records in the order both parties run them in
/// 2PC (and draw their COTs): the client Finished, the request's records,
/// then the server Finished once its record has arrived. The request goes
/// out right after the client Finished, without waiting for the server's
/// (TLS False Start, RFC 7918: ECDHE with an AEAD suite, the server's key
/// share already authenticated by its signature over the verifier's
/// random), so its 2PC and the server's round trip overlap, and the
/// server Finished's check overlaps the response.
pub(crate) fn run_order(request_records: usize) -> Vec<u32> {
    core::iter::once(CLIENT_FINISHED)
        .chain((0..request_records as u32).map(|i| 2 + i))
        .chain(core::iter::once(SERVER_FINISHED))
        .collect()
}

/// What an id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecSpec {
    pub id: u32,
    /// Plaintext length.
    pub len: usize,
}

impl RecSpec {
    /// Records of a session whose request records have `request_lens`.
    pub(crate) fn all(request_lens: &[usize]) -> Vec<RecSpec> {
        let mut v = vec![
            RecSpec {
                id: CLIENT_FINISHED,
                len: 16,
            },
            RecSpec {
                id: SERVER_FINISHED,
                len: 16,
            },
        ];
        v.extend(request_lens.iter().enumerate().map(|(i, &len)| RecSpec {
            id: 2 + i as u32,
            len,
        }));
        v
    }

    /// Sent by the server (decrypted and checked) or by the client
    /// (encrypted).
    pub(crate) fn is_server(&self) -> bool {
        self.id == SERVER_FINISHED
    }

    /// The record's TLS sequence number in its direction.
    pub(crate) fn seq(&self) -> u64 {
        match self.id {
            CLIENT_FINISHED | SERVER_FINISHED => 0,
            i => u64::from(i) - 1,
        }
    }

    /// The record's content type.
    pub(crate) fn content_type(&self) -> u8 {
        match self.id {
            CLIENT_FINISHED | SERVER_FINISHED => 22,
            _ => 23,
        }
    }

    /// The AEAD additional data.
    pub(crate) fn aad(&self) -> [u8; 13] {
        record::tls12_aad(self.seq(), self.content_type(), self.len)
    }

    /// Garbling instance.
    pub(crate) fn instance(&self) -> u64 {
        crate::kdf::RECORD_INSTANCE + u64::from(self.id)
    }

    /// OLE stream (the ECtF has stream 0).
    pub(crate) fn stream(&self) -> u64 {
        1 + u64::from(self.id)
    }

    /// The planned circuit for a `key_len`-byte key.
    pub(crate) fn plan(&self, key_len: usize) -> Result<Arc<Plan>> {
        Ok(Arc::new(Plan::from_circuit(record::gcm_circuit(
            key_len, self.len,
        ))?))
    }

    /// COTs: (label transfer, A2M, M2A).
    pub(crate) fn cots(&self, key_len: usize) -> (usize, usize, usize) {
        record::cots_needed(key_len, self.len)
    }
}

/// Key ‖ IV share of one direction.
pub(crate) fn key_iv(keys: &webproof_mpc::tls12::KeyShares, server: bool) -> Vec<u8> {
    if server {
        [&keys.server_key[..], &keys.server_iv].concat()
    } else {
        [&keys.client_key[..], &keys.client_iv].concat()
    }
}

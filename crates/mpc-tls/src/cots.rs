//! The correlated OTs a session consumes, supplied by the caller.
//!
//! The verifier is the COT sender (global `Δ`, the garbler's offset), the
//! prover the receiver; they come from the workspace's OT extensions
//! (SoftSpokenOT, Ferret), run by the driver before or beside the session.
//! Both sessions draw from their pool in the same order (the order of the
//! protocol's steps), so the `i`-th key and the `i`-th MAC are one COT;
//! each COT serves exactly one input or OLE bit.

use crate::error::{Error, Result};
use crate::hello::suite_params;
use crate::keyx::ectf;
use crate::rec::chacha;
use crate::rec::gcm;
use crate::rec::AAD_LEN;
use webproof_core::Block;
use webproof_mpc::field::P256Base;
use webproof_tls::CipherSuite;

/// Largest plaintext of one request record (its garbled circuit is
/// ~6,300 AND per 16 bytes of AES-256: 2 KiB make ~20 MB of tables).
pub const MAX_RECORD: usize = 2048;
/// Largest request.
pub const MAX_REQUEST: usize = 16 << 10;

/// COTs a whole session may consume with a request of `request_len` bytes,
/// for whichever suite and group the server picks (an upper bound).
pub fn cots_needed(request_len: usize) -> usize {
    // The key derivation: at most 320 bytes of prover shares (the reduced
    // PRF's seven steps take less), more than the full PRF for SHA-384
    // (256 + 2 x 8 x 128 COTs).
    let kdf = 8 * 320;
    // The records: the M2A of the powers of the client's GHASH key, as
    // many as the longest record's tag takes (the client Finished
    // answers it for all; the server's Finished is checked in the proof).
    let powers = request_records(request_len)
        .into_iter()
        .chain([16])
        .map(gcm::powers_needed)
        .max()
        .unwrap_or(0);
    // Each request record's M2A that keeps its ciphertext from the
    // verifier: one OLE per block.
    let hidden: usize = request_records(request_len)
        .into_iter()
        .map(gcm::hide_cots)
        .sum();
    let gcm = gcm::cots_needed(powers) + hidden;
    // ChaCha20-Poly1305 (`crate::rec::chacha`): every record pays for
    // its own powers of its own `r` and its tag circuit's input, a request
    // record for the bitwise OLEs that hide its ciphertext too.
    let chacha: usize = request_records(request_len)
        .into_iter()
        .map(|len| chacha::cots_needed(AAD_LEN, len) + chacha::TAG_COTS + chacha::hide_cots(len))
        .sum::<usize>()
        + chacha::cots_needed(AAD_LEN, 16)
        + chacha::TAG_COTS;
    // TLS 1.3's ChaCha20-Poly1305 (`crate::tls13`): a record encrypts
    // its content and the inner content type, under a 5-byte AAD, and
    // there is no client Finished in 2PC.
    let chacha13: usize = request_records(request_len)
        .into_iter()
        .map(|len| {
            let len = len + 1;
            chacha::cots_needed(5, len) + chacha::TAG_COTS + chacha::hide_cots(len)
        })
        .sum();
    // Each request record's keystream pads of the dual execution
    // (`crate::rec::dual`): one COT per bit, taken first (TLS 1.3's
    // with the inner content type).
    let pads = 8 * (request_len + request_records(request_len).len());
    ectf::cots_needed::<P256Base>() + kdf + gcm.max(chacha).max(chacha13) + pads
}

/// How a request of `len` bytes is cut into records.
pub fn request_records(len: usize) -> Vec<usize> {
    let mut v = vec![MAX_RECORD; len / MAX_RECORD];
    if !len.is_multiple_of(MAX_RECORD) || len == 0 {
        v.push(len % MAX_RECORD);
    }
    v
}

/// The COTs of one party: keys (verifier) or MACs (prover), used in order.
#[derive(Clone)]
pub struct CotPool {
    blocks: Vec<Block>,
    used: usize,
}

impl core::fmt::Debug for CotPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "CotPool({} of {} left)", self.left(), self.blocks.len())
    }
}

impl CotPool {
    /// A pool of COT keys or MACs.
    pub fn new(blocks: Vec<Block>) -> Self {
        CotPool { blocks, used: 0 }
    }

    /// COTs not used yet.
    pub fn left(&self) -> usize {
        self.blocks.len() - self.used
    }

    /// The next `n` COTs.
    pub(crate) fn take(&mut self, n: usize) -> Result<Vec<Block>> {
        if n > self.left() {
            return Err(Error::CotsExhausted {
                needed: n,
                left: self.left(),
            });
        }
        let v = self.blocks[self.used..self.used + n].to_vec();
        self.used += n;
        Ok(v)
    }
}

/// Whether `suite` is one this mode runs (for callers sizing pools and
/// filtering the suites they were asked for).
pub fn runs_suite(suite: CipherSuite) -> bool {
    suite_params(suite).is_some()
}

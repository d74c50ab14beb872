//! The plaintext application data of a TLS session, one byte stream per
//! direction. Offsets everywhere in this crate are positions in these streams
//! (record boundaries play no part).

use std::fmt;

pub use webproof_tls::suite::Direction;

/// A session's application data. Secret: `Debug` shows only the lengths.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Transcript {
    sent: Vec<u8>,
    received: Vec<u8>,
}

impl Transcript {
    pub fn new(sent: impl Into<Vec<u8>>, received: impl Into<Vec<u8>>) -> Self {
        Self {
            sent: sent.into(),
            received: received.into(),
        }
    }

    pub fn get(&self, direction: Direction) -> &[u8] {
        match direction {
            Direction::Sent => &self.sent,
            Direction::Received => &self.received,
        }
    }

    pub fn sent(&self) -> &[u8] {
        &self.sent
    }

    pub fn received(&self) -> &[u8] {
        &self.received
    }
}

impl fmt::Debug for Transcript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transcript")
            .field("sent_len", &self.sent.len())
            .field("received_len", &self.received.len())
            .finish_non_exhaustive()
    }
}

//! The plaintext application data of a TLS session, one byte stream per
//! direction. Offsets everywhere in this crate are positions in these streams
//! (record boundaries play no part).

use std::fmt;

/// Which way the bytes went.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client to server (the request).
    Sent,
    /// Server to client (the response).
    Received,
}

impl Direction {
    /// The byte that stands for this direction in leaf preimages and encodings.
    pub const fn to_byte(self) -> u8 {
        match self {
            Direction::Sent => 0,
            Direction::Received => 1,
        }
    }

    pub const fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Direction::Sent),
            1 => Some(Direction::Received),
            _ => None,
        }
    }

    pub const BOTH: [Direction; 2] = [Direction::Sent, Direction::Received];
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Sent => "sent",
            Direction::Received => "received",
        })
    }
}

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

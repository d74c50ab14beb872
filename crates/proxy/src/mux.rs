//! The framing of the link's multiplexed section, sans I/O: the TLS relay
//! and the proof's preprocessing share the prover/verifier link for a
//! while (see `webproof_session::mux` for why and for the driver; the
//! browser prover drives the same format over a WebSocket).
//!
//! Each side sends chunks `stream id (u8) ‖ length (u16 LE, 1..=MAX_CHUNK)
//! ‖ bytes`; when both of its local streams are done it sends the end
//! marker `0xff 0 0`. The bytes after the peer's marker belong to the link
//! again. This module owns the format: the header codec and [`Demux`], an
//! incremental parser for drivers that receive the link in arbitrary
//! pieces.

use crate::error::ProxyError;

/// Stream id of the TLS relay.
pub const RELAY: u8 = 0;
/// Stream id of the proof preprocessing.
pub const PREPROCESSING: u8 = 1;
/// Stream id of the end marker.
pub const END: u8 = 0xff;
/// Largest chunk payload.
pub const MAX_CHUNK: usize = 16 << 10;
/// The end marker a side sends once both its streams are done.
pub const END_MARKER: [u8; 3] = [END, 0, 0];

/// A parsed chunk header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// `len` bytes of stream `stream` follow.
    Chunk {
        /// [`RELAY`] or [`PREPROCESSING`].
        stream: u8,
        /// 1..=[`MAX_CHUNK`].
        len: usize,
    },
    /// The peer's end marker.
    End,
}

/// The header of a chunk of `len` bytes (1..=[`MAX_CHUNK`]) on `stream`.
pub fn chunk_header(stream: u8, len: usize) -> [u8; 3] {
    debug_assert!(stream != END && (1..=MAX_CHUNK).contains(&len));
    let l = (len as u16).to_le_bytes();
    [stream, l[0], l[1]]
}

/// Check a header the peer sent.
pub fn parse_header(head: [u8; 3]) -> Result<Header, ProxyError> {
    let len = u16::from_le_bytes([head[1], head[2]]) as usize;
    match head[0] {
        END if len == 0 => return Ok(Header::End),
        RELAY | PREPROCESSING => {}
        other => {
            return Err(ProxyError::Protocol(format!(
                "multiplexed chunk for unknown stream {other}"
            )))
        }
    }
    if len == 0 || len > MAX_CHUNK {
        return Err(ProxyError::Protocol(format!(
            "multiplexed chunk of {len} bytes"
        )));
    }
    Ok(Header::Chunk {
        stream: head[0],
        len,
    })
}

/// Append `data` to `out` as chunks of `stream`.
pub fn encode_chunks(stream: u8, data: &[u8], out: &mut Vec<u8>) {
    for piece in data.chunks(MAX_CHUNK) {
        out.extend_from_slice(&chunk_header(stream, piece.len()));
        out.extend_from_slice(piece);
    }
}

/// An incremental parser of the peer's side of the section.
#[derive(Debug, Default)]
pub struct Demux {
    head: [u8; 3],
    have: usize,
    /// Stream and bytes left of the chunk being read.
    body: Option<(u8, usize)>,
    ended: bool,
}

impl Demux {
    /// A parser at the start of the section.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the peer's end marker has been read.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Parse `input`, handing each payload piece to `sink(stream, bytes)`.
    /// Returns how many bytes were consumed: all of them, or fewer when the
    /// end marker came first (the rest belongs to the link).
    pub fn feed(
        &mut self,
        input: &[u8],
        mut sink: impl FnMut(u8, &[u8]),
    ) -> Result<usize, ProxyError> {
        let mut i = 0;
        while i < input.len() && !self.ended {
            if let Some((stream, left)) = self.body {
                let n = left.min(input.len() - i);
                sink(stream, &input[i..i + n]);
                i += n;
                self.body = (left > n).then_some((stream, left - n));
                continue;
            }
            self.head[self.have] = input[i];
            self.have += 1;
            i += 1;
            if self.have == 3 {
                self.have = 0;
                match parse_header(self.head)? {
                    Header::End => self.ended = true,
                    Header::Chunk { stream, len } => self.body = Some((stream, len)),
                }
            }
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks split at every byte boundary parse to the same streams, and
    /// the bytes after the end marker are left to the link.
    #[test]
    fn demux_in_pieces() {
        let mut wire = Vec::new();
        encode_chunks(RELAY, b"hello", &mut wire);
        encode_chunks(PREPROCESSING, &vec![7u8; MAX_CHUNK + 10], &mut wire);
        wire.extend_from_slice(&END_MARKER);
        wire.extend_from_slice(b"after");
        for step in [1, 2, 3, 7, 1000, wire.len()] {
            let mut d = Demux::new();
            let (mut relay, mut pre) = (Vec::new(), Vec::new());
            let mut at = 0;
            while !d.ended() {
                let end = (at + step).min(wire.len());
                at += d
                    .feed(&wire[at..end], |s, b| match s {
                        RELAY => relay.extend_from_slice(b),
                        _ => pre.extend_from_slice(b),
                    })
                    .unwrap();
            }
            assert_eq!(relay, b"hello");
            assert_eq!(pre, vec![7u8; MAX_CHUNK + 10]);
            assert_eq!(&wire[at..], b"after");
        }
    }

    /// Headers the format forbids.
    #[test]
    fn bad_headers() {
        for h in [
            [7u8, 1, 0],
            [0, 0, 0],
            [1, 0xff, 0xff],
            [0, 1, 0x40],
            [END, 1, 0],
        ] {
            assert!(parse_header(h).is_err(), "{h:?}");
            assert!(Demux::new().feed(&h, |_, _| {}).is_err());
        }
    }
}

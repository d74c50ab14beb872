//! Bounded, strict byte reader and writer for the binary encodings.
//!
//! Every multi-byte integer is big-endian and fixed-width, so each value has
//! exactly one encoding. The reader never allocates more than the input it
//! was given: lengths and counts are checked against the bytes that remain
//! before anything is reserved.

use crate::error::DecodeError;

/// Cursor over untrusted input.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|&end| end <= self.buf.len());
        let Some(end) = end else {
            return Err(DecodeError::Truncated { what });
        };
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    pub(crate) fn array<const N: usize>(
        &mut self,
        what: &'static str,
    ) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    /// A boolean byte: exactly 0 or 1.
    pub(crate) fn bool(&mut self, what: &'static str) -> Result<bool, DecodeError> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(DecodeError::InvalidFlag { what, value }),
        }
    }

    /// A count of items that each take at least `min_item_len` bytes: bounded
    /// by `max` and by what the remaining input could possibly hold.
    pub(crate) fn check_count(
        &self,
        count: usize,
        min_item_len: usize,
        max: usize,
        what: &'static str,
    ) -> Result<usize, DecodeError> {
        if count > max {
            return Err(DecodeError::TooLarge {
                what,
                len: count,
                max,
            });
        }
        if count.saturating_mul(min_item_len) > self.remaining() {
            return Err(DecodeError::Truncated { what });
        }
        Ok(count)
    }

    /// Fails unless the whole input was consumed.
    pub(crate) fn finish(self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(DecodeError::TrailingBytes { count }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extreme_lengths_and_counts_are_errors() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u8("a").unwrap(), 1);
        assert!(r.take(usize::MAX, "b").is_err());
        assert!(r.take(usize::MAX - 1, "b").is_err());
        assert_eq!(r.remaining(), 2);
        assert!(r.u32("c").is_err());
        assert!(r.check_count(usize::MAX, 1, usize::MAX, "d").is_err());
        assert!(r
            .check_count(u32::MAX as usize, 32, usize::MAX, "d")
            .is_err());
        assert!(r.check_count(3, 1, 2, "d").is_err());
        assert_eq!(r.check_count(2, 1, 2, "d").unwrap(), 2);
        assert!(r.check_count(1, usize::MAX, 2, "d").is_err());
        assert_eq!(r.u16("e").unwrap(), 0x0203);
        assert!(r.finish().is_ok());
        let r = Reader::new(&[0]);
        assert!(matches!(
            r.finish(),
            Err(DecodeError::TrailingBytes { count: 1 })
        ));
    }
}

/// Append-only output buffer.
#[derive(Default)]
pub(crate) struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes(&v.to_be_bytes());
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// Serde helpers: byte strings as lowercase hex in the JSON form.
pub(crate) mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer, T: AsRef<[u8]>>(v: T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        decode_strict(&s).map_err(serde::de::Error::custom)
    }

    /// Lowercase hex only, so the JSON form is canonical too.
    pub fn decode_strict(s: &str) -> Result<Vec<u8>, &'static str> {
        if s.bytes().any(|c| c.is_ascii_uppercase()) {
            return Err("hex must be lowercase");
        }
        hex::decode(s).map_err(|_| "invalid hex")
    }
}

/// Serde helpers: fixed-size arrays as lowercase hex.
pub(crate) mod hex_array {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer, const N: usize>(v: &[u8; N], s: S) -> Result<S::Ok, S::Error> {
        super::hex_bytes::serialize(v, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<[u8; N], D::Error> {
        let v = super::hex_bytes::deserialize(d)?;
        v.try_into()
            .map_err(|_| serde::de::Error::custom(format_args!("expected {N} bytes of hex")))
    }
}

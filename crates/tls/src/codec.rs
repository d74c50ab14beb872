//! A bounds-checked reader for TLS wire structures.
//!
//! Every read states what it parses, so a truncated or oversized field
//! becomes a precise [`TlsError::Malformed`] and never a panic.

use crate::error::{malformed, Result, TlsError};

/// Reads TLS vectors and integers from a byte slice.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// Read `buf`, naming the structure in errors.
    pub fn new(buf: &'a [u8], what: &'static str) -> Self {
        Reader { buf, pos: 0, what }
    }

    /// Bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// Fail unless everything was read.
    pub fn finish(&self) -> Result<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(malformed(
                self.what,
                format!("{} trailing bytes", self.buf.len().saturating_sub(self.pos)),
            ))
        }
    }

    /// Take exactly `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&end| end <= self.buf.len());
        let Some(end) = end else {
            return Err(malformed(
                self.what,
                format!(
                    "truncated: needs {n} bytes at offset {}, {} left",
                    self.pos,
                    self.buf.len().saturating_sub(self.pos)
                ),
            ));
        };
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// A big-endian u16.
    pub fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    /// A big-endian u24.
    pub fn u24(&mut self) -> Result<usize> {
        let b = self.take(3)?;
        Ok(((b[0] as usize) << 16) | ((b[1] as usize) << 8) | b[2] as usize)
    }

    /// A vector with a 1-byte length.
    pub fn vec8(&mut self) -> Result<&'a [u8]> {
        let n = self.u8()? as usize;
        self.take(n)
    }

    /// A vector with a 2-byte length.
    pub fn vec16(&mut self) -> Result<&'a [u8]> {
        let n = self.u16()? as usize;
        self.take(n)
    }

    /// A vector with a 3-byte length.
    pub fn vec24(&mut self) -> Result<&'a [u8]> {
        let n = self.u24()?;
        self.take(n)
    }

    /// A sub-reader over a 2-byte-length vector.
    pub fn sub16(&mut self, what: &'static str) -> Result<Reader<'a>> {
        Ok(Reader::new(self.vec16()?, what))
    }

    /// A sub-reader over a 3-byte-length vector.
    pub fn sub24(&mut self, what: &'static str) -> Result<Reader<'a>> {
        Ok(Reader::new(self.vec24()?, what))
    }

    /// An error naming this structure.
    pub fn error(&self, detail: impl Into<String>) -> TlsError {
        malformed(self.what, detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_an_error() {
        let mut r = Reader::new(&[0, 5, 1, 2], "thing");
        assert!(matches!(
            r.vec16(),
            Err(TlsError::Malformed { what: "thing", .. })
        ));
        let mut r = Reader::new(&[1, 9, 7], "thing");
        assert_eq!(r.vec8().unwrap(), &[9]);
        assert!(r.finish().is_err());
        assert_eq!(r.u8().unwrap(), 7);
        assert!(r.finish().is_ok());
        assert!(r.u24().is_err());
    }

    /// Length fields at their maximum over short input, and absurd takes:
    /// errors, never a panic or an overflow.
    #[test]
    fn maximal_lengths_are_truncation_errors() {
        let mut r = Reader::new(&[0xff, 0xff, 1, 2], "thing");
        assert!(r.vec16().is_err());
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 1], "thing");
        assert!(r.vec24().is_err());
        let mut r = Reader::new(&[0xff, 1], "thing");
        assert!(r.vec8().is_err());
        let mut r = Reader::new(&[1, 2, 3], "thing");
        assert_eq!(r.u8().unwrap(), 1);
        assert!(r.take(usize::MAX).is_err());
        assert!(r.take(usize::MAX - 1).is_err());
        assert_eq!(r.rest(), &[2, 3]);
        assert_eq!(r.take(2).unwrap(), &[2, 3]);
        assert!(r.take(1).is_err());
        assert!(r.finish().is_ok());
        // A u16-length vector of exactly 65535 bytes is fine.
        let mut buf = vec![0xff, 0xff];
        buf.extend(vec![7u8; 0xffff]);
        let mut r = Reader::new(&buf, "thing");
        assert_eq!(r.vec16().unwrap().len(), 0xffff);
        assert!(r.finish().is_ok());
    }
}

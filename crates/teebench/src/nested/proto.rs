//! The transfer the bench times, over any byte stream (the outer TLS
//! stream for single TLS, the inner one for nested TLS).
//!
//! Client: a 16-byte header (payload length, pattern seed, both u64 big
//! endian), the payload in `chunk_bytes` writes, flush; then it waits for a
//! 9-byte ack (bytes received u64, verdict u8). Server: reads the header,
//! refuses lengths above its limit, reads exactly that many bytes comparing
//! each against the pattern the seed defines, and acks with the count and
//! whether every byte matched. The client accepts only an ack that reports
//! its full length with verdict 1, so "moved exactly the bytes it says" is
//! checked on the receiver for every connection.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Length of the pattern the payload repeats: a prime, so no chunk size or
/// TLS record size is a multiple of it and a dropped or repeated record
/// shifts the comparison.
pub const PATTERN_LEN: usize = 65_521;
pub const HEADER_LEN: usize = 16;
pub const ACK_LEN: usize = 9;

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("peer announced {0} bytes, above the limit of {1}")]
    TooLarge(u64, u64),
    #[error("payload differs from the expected pattern at byte {0}")]
    Corrupt(u64),
    #[error("receiver acknowledged {got} bytes (verdict {verdict}), {sent} were sent")]
    BadAck { sent: u64, got: u64, verdict: u8 },
}

/// The repeating pattern of a seed (xorshift64*; only needs to be cheap
/// and seed-dependent).
pub fn pattern(seed: u64) -> Vec<u8> {
    let mut x = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(PATTERN_LEN + 8);
    while out.len() < PATTERN_LEN {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(PATTERN_LEN);
    out
}

/// The payload of `len` bytes for `seed` (the pattern repeated).
pub fn payload(seed: u64, len: usize) -> Vec<u8> {
    let p = pattern(seed);
    p.iter().copied().cycle().take(len).collect()
}

/// Send `payload` in `chunk` writes and wait for the receiver's ack.
pub async fn send<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    seed: u64,
    payload: &[u8],
    chunk: usize,
) -> Result<(), TransferError> {
    let mut hdr = [0u8; HEADER_LEN];
    hdr[..8].copy_from_slice(&(payload.len() as u64).to_be_bytes());
    hdr[8..].copy_from_slice(&seed.to_be_bytes());
    s.write_all(&hdr).await?;
    for c in payload.chunks(chunk.max(1)) {
        s.write_all(c).await?;
    }
    s.flush().await?;
    let mut ack = [0u8; ACK_LEN];
    s.read_exact(&mut ack).await?;
    let got = u64::from_be_bytes(ack[..8].try_into().expect("8 bytes"));
    let verdict = ack[8];
    if got != payload.len() as u64 || verdict != 1 {
        return Err(TransferError::BadAck {
            sent: payload.len() as u64,
            got,
            verdict,
        });
    }
    Ok(())
}

/// A misbehaving receiver, for tests of the sender's failure handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close the connection after this many payload bytes.
    DropAfter(u64),
    /// Stop reading (and never ack) after this many payload bytes.
    StallAfter(u64),
}

impl Fault {
    fn at(self) -> u64 {
        match self {
            Fault::DropAfter(n) | Fault::StallAfter(n) => n,
        }
    }
}

/// Receive one payload, check it against its pattern, ack. Returns the
/// number of bytes received. `fault` (tests) makes the receiver misbehave
/// after that many payload bytes: a peer that dies or hangs mid-transfer.
pub async fn receive<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    max_len: u64,
    fault: Option<Fault>,
) -> Result<u64, TransferError> {
    let mut hdr = [0u8; HEADER_LEN];
    s.read_exact(&mut hdr).await?;
    let len = u64::from_be_bytes(hdr[..8].try_into().expect("8 bytes"));
    let seed = u64::from_be_bytes(hdr[8..].try_into().expect("8 bytes"));
    if len > max_len {
        return Err(TransferError::TooLarge(len, max_len));
    }
    let pat = pattern(seed);
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0u64;
    let mut first_bad: Option<u64> = None;
    while got < len {
        match fault {
            Some(Fault::DropAfter(d)) if got >= d => {
                return Err(TransferError::Io(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "receiver dropped mid-transfer (test)",
                )));
            }
            Some(Fault::StallAfter(d)) if got >= d => std::future::pending::<()>().await,
            _ => {}
        }
        let mut want = ((len - got) as usize).min(buf.len());
        if let Some(f) = fault {
            // Stop exactly at the fault point (one read can return many records).
            want = want.min((f.at().saturating_sub(got)).max(1) as usize);
        }
        let n = s.read(&mut buf[..want]).await?;
        if n == 0 {
            return Err(TransferError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        if first_bad.is_none() {
            first_bad = mismatch(&pat, got, &buf[..n]).map(|i| got + i as u64);
        }
        got += n as u64;
    }
    let mut ack = [0u8; ACK_LEN];
    ack[..8].copy_from_slice(&got.to_be_bytes());
    ack[8] = u8::from(first_bad.is_none());
    s.write_all(&ack).await?;
    s.flush().await?;
    match first_bad {
        Some(at) => Err(TransferError::Corrupt(at)),
        None => Ok(got),
    }
}

/// Index of the first byte of `data` (which starts at payload offset `off`)
/// that differs from the pattern.
fn mismatch(pat: &[u8], off: u64, data: &[u8]) -> Option<usize> {
    let mut pos = (off % PATTERN_LEN as u64) as usize;
    let mut i = 0;
    while i < data.len() {
        let n = (PATTERN_LEN - pos).min(data.len() - i);
        if data[i..i + n] != pat[pos..pos + n] {
            let j = (0..n).find(|&k| data[i + k] != pat[pos + k]).unwrap_or(0);
            return Some(i + j);
        }
        i += n;
        pos = 0;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn exact_bytes_are_checked_on_the_receiver() {
        let data = payload(7, 200_000);
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        let rx = tokio::spawn(async move { receive(&mut b, 1 << 20, None).await });
        send(&mut a, 7, &data, 3000).await.unwrap();
        assert_eq!(rx.await.unwrap().unwrap(), 200_000);
    }

    #[tokio::test]
    async fn corruption_is_detected_and_reported_to_the_sender() {
        let mut data = payload(7, 100_000);
        data[70_000] ^= 1;
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        let rx = tokio::spawn(async move { receive(&mut b, 1 << 20, None).await });
        let err = send(&mut a, 7, &data, 4096).await.unwrap_err();
        assert!(
            matches!(err, TransferError::BadAck { verdict: 0, .. }),
            "{err}"
        );
        assert!(matches!(
            rx.await.unwrap(),
            Err(TransferError::Corrupt(70_000))
        ));
        // A payload made for another seed fails too.
        let other = payload(8, 1000);
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        let rx = tokio::spawn(async move { receive(&mut b, 1 << 20, None).await });
        assert!(send(&mut a, 7, &other, 100).await.is_err());
        assert!(rx.await.unwrap().is_err());
    }

    #[tokio::test]
    async fn oversized_and_truncated_input_is_refused() {
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        let mut hdr = [0u8; HEADER_LEN];
        hdr[..8].copy_from_slice(&u64::MAX.to_be_bytes());
        a.write_all(&hdr).await.unwrap();
        assert!(matches!(
            receive(&mut b, 1 << 20, None).await,
            Err(TransferError::TooLarge(u64::MAX, _))
        ));
        // Header announces 1000 bytes, sender closes after 10.
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        let mut hdr = [0u8; HEADER_LEN];
        hdr[..8].copy_from_slice(&1000u64.to_be_bytes());
        a.write_all(&hdr).await.unwrap();
        a.write_all(&payload(0, 10)).await.unwrap();
        drop(a);
        assert!(receive(&mut b, 1 << 20, None).await.is_err());
        // Half a header.
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        a.write_all(&[1, 2, 3]).await.unwrap();
        drop(a);
        assert!(receive(&mut b, 1 << 20, None).await.is_err());
    }

    #[test]
    fn mismatch_handles_pattern_wrap() {
        let pat = pattern(1);
        let data = payload(1, 3 * PATTERN_LEN);
        assert_eq!(mismatch(&pat, 0, &data), None);
        assert_eq!(mismatch(&pat, 5, &data[5..]), None);
        assert!(mismatch(&pat, 4, &data[5..]).is_some());
    }
}

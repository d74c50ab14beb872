//! The verifier's record `Recorder`: bytes of both directions in arbitrary
//! pieces. Never a panic; the records it keeps re-serialise to exactly the
//! bytes it consumed.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webproof_proxy::record::{Direction, Recorder, RecorderLimits};

fuzz_target!(|data: &[u8]| {
    // Small limits so that they are reached too.
    let limits = RecorderLimits {
        max_sent_bytes: 4096,
        max_recv_bytes: 1 << 16,
        max_sent_records: 8,
        max_recv_records: 64,
    };
    let mut rec = Recorder::new(limits);
    let mut fed: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut rest = data;
    // Each piece: one control byte (direction in the top bit, length in
    // the rest), then that many bytes.
    while let Some((&c, tail)) = rest.split_first() {
        let d = if c & 0x80 == 0 {
            Direction::Sent
        } else {
            Direction::Received
        };
        let n = ((c & 0x7f) as usize * 37).min(tail.len());
        let (piece, tail) = tail.split_at(n);
        rest = tail;
        match rec.feed(d, piece) {
            Ok(count) => {
                fed[d as usize].extend_from_slice(piece);
                assert_eq!(count, rec.transcript().records(d).len());
            }
            Err(_) => return,
        }
    }
    let t = rec.transcript().clone();
    for (i, d) in [Direction::Sent, Direction::Received].into_iter().enumerate() {
        let mut again = Vec::new();
        for r in t.records(d) {
            again.extend_from_slice(&r.header());
            again.extend_from_slice(&r.payload);
        }
        assert_eq!(again.len() + rec.pending(d), fed[i].len());
        assert_eq!(&fed[i][..again.len()], &again[..]);
    }
    let _ = t.digest();
    let n = t.sent.len();
    let m = t.received.len();
    assert!(t.clone().cut(n, m).is_ok());
    assert!(t.clone().cut(n, m + 1).is_err());
});

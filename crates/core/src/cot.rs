//! Random correlated OT (COT) with a global correlation: the interface between
//! the OT crate (which produces COTs) and the ZK engine (which consumes them).
//!
//! Convention, fixed for every implementation:
//! - the **sender** (the ZK verifier) holds a global `Delta` with `lsb(Delta) = 1`
//!   and, per COT, a key `K_i` with `lsb(K_i) = 0`;
//! - the **receiver** (the ZK prover) holds `M_i = K_i ^ b_i * Delta`; its
//!   random choice bit is `b_i = lsb(M_i)`.
//!
//! Any COT can be brought to this form locally: the sender replaces `K` by
//! `K ^ lsb(K) * Delta` and the receiver reads its bit from `lsb(M)`.
//!
//! [`ideal`] is a trusted-dealer stand-in for unit tests of consumers only.

use crate::block::Block;
use crate::channel::Channel;
use crate::error::Result;
use crate::Io;
use core::future::Future;

/// Produces random COTs as the sender (holder of `Delta`).
pub trait RandomCotSender: Send {
    /// The global correlation; `lsb(delta) == 1`.
    fn delta(&self) -> Block;

    /// Append `n` fresh keys `K_i` (with `lsb == 0`) to `out`.
    fn extend<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// Produces random COTs as the receiver.
pub trait RandomCotReceiver: Send {
    /// Append `n` fresh MACs `M_i = K_i ^ b_i * Delta` to `out`; `b_i = lsb(M_i)`.
    fn extend<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// A trusted dealer: both sides expand one shared seed. **Insecure**; it
/// exists so that consumers of COTs can be tested without the OT protocols.
pub mod ideal {
    use super::*;
    use crate::prg::Prg;

    /// Sender half of the ideal COT.
    pub struct IdealCotSender {
        prg: Prg,
        delta: Block,
    }

    /// Receiver half of the ideal COT.
    pub struct IdealCotReceiver {
        prg: Prg,
        delta: Block,
    }

    /// A correlated pair derived from `seed`.
    pub fn pair(seed: u64) -> (IdealCotSender, IdealCotReceiver) {
        let mut p = Prg::new(Block(seed as u128 | (0x1dea1u128 << 64)));
        let delta = p.next_block().with_lsb(true);
        let s = p.next_block();
        (
            IdealCotSender {
                prg: Prg::new(s),
                delta,
            },
            IdealCotReceiver {
                prg: Prg::new(s),
                delta,
            },
        )
    }

    /// `n` correlations of [`pair`]`(seed)` at once, without a channel:
    /// (`Δ`, the sender's keys, the receiver's MACs).
    pub fn cots(seed: u64, n: usize) -> (Block, Vec<Block>, Vec<Block>) {
        let (mut s, _) = pair(seed);
        let delta = s.delta;
        let drawn = draw(&mut s.prg, n);
        let keys = drawn.iter().map(|&(k, _)| k).collect();
        let macs = drawn
            .iter()
            .map(|&(k, b)| k ^ Block::select(b, delta))
            .collect();
        (delta, keys, macs)
    }

    /// Expand `n` (key, bit) pairs from the shared stream.
    fn draw(prg: &mut Prg, n: usize) -> Vec<(Block, bool)> {
        let mut raw = vec![Block::ZERO; n];
        prg.fill_blocks(&mut raw);
        raw.into_iter()
            .map(|r| (r.with_lsb(false), (r.0 >> 127) & 1 == 1))
            .collect()
    }

    impl RandomCotSender for IdealCotSender {
        fn delta(&self) -> Block {
            self.delta
        }
        async fn extend<T: Io>(
            &mut self,
            _channel: &mut Channel<T>,
            n: usize,
            out: &mut Vec<Block>,
        ) -> Result<()> {
            out.extend(draw(&mut self.prg, n).into_iter().map(|(k, _)| k));
            Ok(())
        }
    }

    impl RandomCotReceiver for IdealCotReceiver {
        async fn extend<T: Io>(
            &mut self,
            _channel: &mut Channel<T>,
            n: usize,
            out: &mut Vec<Block>,
        ) -> Result<()> {
            let delta = self.delta;
            out.extend(
                draw(&mut self.prg, n)
                    .into_iter()
                    .map(|(k, b)| k ^ Block::select(b, delta)),
            );
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::memory_duplex;
        use futures::executor::block_on;

        #[test]
        fn ideal_pair_is_correlated() {
            block_on(async {
                let (a, b) = memory_duplex();
                let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
                let (mut s, mut r) = pair(7);
                let (mut k, mut m) = (Vec::new(), Vec::new());
                s.extend(&mut ca, 1000, &mut k).await.unwrap();
                r.extend(&mut cb, 1000, &mut m).await.unwrap();
                let d = s.delta();
                assert!(d.lsb());
                let mut ones = 0;
                for (k, m) in k.iter().zip(&m) {
                    assert!(!k.lsb());
                    let b = m.lsb();
                    ones += b as usize;
                    assert_eq!(*m, *k ^ Block::select(b, d));
                }
                assert!(ones > 400 && ones < 600);
            });
        }
    }
}

//! COTs on *chosen* receiver bits from random COTs (derandomisation).
//!
//! This module owns one step: given random COTs `M_i = K_i ^ b_i*Delta`
//! (`b_i = lsb(M_i)`), the receiver announces `d_i = b_i ^ c_i` for its
//! chosen bits `c_i` (one bit per COT, packed), and the sender replaces
//! `K_i` by `K_i ^ d_i*Delta`. Then `M_i = K_i' ^ c_i*Delta`.
//!
//! `d_i` is a one-time pad of `c_i` under the random `b_i`, so the sender
//! learns nothing; a malicious receiver gains nothing either (it could have
//! chosen any `c_i` anyway). After this step the lsb convention of
//! [`webproof_core::cot`] no longer holds: `lsb(K_i') = d_i` and the
//! receiver's bit is `c_i`, not `lsb(M_i)`. Callers (e.g. the GGM trees of a
//! silent COT) keep the chosen bits themselves.

use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::error::Result;
use webproof_core::{Block, Channel, Error, Io};

/// Receiver: the packed flip bits `d_i = lsb(M_i) ^ c_i` (bit `i % 8` of byte `i / 8`).
pub fn flips(macs: &[Block], choices: &[bool]) -> Result<Vec<u8>> {
    if macs.len() != choices.len() {
        return Err(Error::Usage(format!(
            "{} COTs for {} choice bits",
            macs.len(),
            choices.len()
        )));
    }
    let mut out = vec![0u8; macs.len().div_ceil(8)];
    for (i, (m, &c)) in macs.iter().zip(choices).enumerate() {
        out[i / 8] |= ((m.lsb() ^ c) as u8) << (i % 8);
    }
    Ok(out)
}

/// Sender: apply the receiver's packed flips to its keys. Rejects a message
/// of the wrong length or with padding bits set.
pub fn apply_flips(keys: &mut [Block], delta: Block, flips: &[u8]) -> Result<()> {
    if flips.len() != keys.len().div_ceil(8) {
        return Err(Error::Malformed(format!(
            "derandomisation: {} flip bytes for {} COTs",
            flips.len(),
            keys.len()
        )));
    }
    if keys.len() & 7 != 0 && flips[keys.len() / 8] >> (keys.len() % 8) != 0 {
        return Err(Error::Malformed(
            "derandomisation: padding bits of the flip message are set".into(),
        ));
    }
    for (i, k) in keys.iter_mut().enumerate() {
        let d = (flips[i / 8] >> (i % 8)) & 1 == 1;
        *k ^= Block::select(d, delta);
    }
    Ok(())
}

/// Sender: `n` fresh COTs whose receiver bits the receiver chooses; appends
/// keys `K_i'` with `M_i = K_i' ^ c_i*Delta` to `out`.
pub async fn send_chosen<T: Io, S: RandomCotSender>(
    cot: &mut S,
    channel: &mut Channel<T>,
    n: usize,
    out: &mut Vec<Block>,
) -> Result<()> {
    let start = out.len();
    cot.extend(channel, n, out).await?;
    let msg = channel.recv_exact(n.div_ceil(8)).await?;
    let delta = cot.delta();
    if let Err(e) = apply_flips(&mut out[start..], delta, &msg) {
        out.truncate(start);
        return Err(e);
    }
    Ok(())
}

/// Receiver: one fresh COT per chosen bit; appends `M_i` to `out`.
pub async fn receive_chosen<T: Io, R: RandomCotReceiver>(
    cot: &mut R,
    channel: &mut Channel<T>,
    choices: &[bool],
    out: &mut Vec<Block>,
) -> Result<()> {
    let start = out.len();
    cot.extend(channel, choices.len(), out).await?;
    let msg = flips(&out[start..], choices)?;
    channel.send(&msg).await?;
    channel.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use rand::{Rng, SeedableRng};
    use webproof_core::cot::ideal;
    use webproof_core::memory_duplex;

    #[test]
    fn chosen_bits_hold() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        for n in [1usize, 7, 8, 9, 1000] {
            let choices: Vec<bool> = (0..n).map(|_| rng.gen()).collect();
            let (a, b) = memory_duplex();
            let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
            let (mut s, mut r) = ideal::pair(n as u64);
            let delta = s.delta();
            let (mut k, mut m) = (vec![], vec![]);
            let (x, y) = block_on(async {
                futures::join!(
                    send_chosen(&mut s, &mut ca, n, &mut k),
                    receive_chosen(&mut r, &mut cb, &choices, &mut m)
                )
            });
            x.unwrap();
            y.unwrap();
            for i in 0..n {
                assert_eq!(m[i], k[i] ^ Block::select(choices[i], delta));
            }
        }
    }

    #[test]
    fn malformed_flips_rejected() {
        let mut keys = vec![Block::ZERO; 9];
        let d = Block(3);
        assert!(matches!(
            apply_flips(&mut keys, d, &[0]),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            apply_flips(&mut keys, d, &[0, 0, 0]),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            apply_flips(&mut keys, d, &[0, 2]),
            Err(Error::Malformed(_))
        ));
        apply_flips(&mut keys, d, &[0, 1]).unwrap();
        assert_eq!(keys[8], d);
        assert!(matches!(flips(&keys, &[true]), Err(Error::Usage(_))));
    }
}

//! Base oblivious transfer: Masny–Rindal "endemic" OT on the Ristretto group.
//!
//! This module owns the public-key OTs that bootstrap everything else (128
//! of them for the SoftSpokenOT extension). It produces *random* OTs: the
//! sender gets `n` pairs of 128-bit keys `(k0, k1)`, the receiver gets
//! `k_{c_i}` for its choice bits `c_i`. It never handles chosen messages;
//! callers use the keys as one-time pads or seeds.
//!
//! # Protocol (Masny–Rindal, CCS 2019, "Endemic OT", Diffie–Hellman instance)
//!
//! `G` is the Ristretto group (prime order `l`, generator `B`), `H_i : G -> G`
//! a hash onto the group (SHA-512 then the Ristretto `from_uniform_bytes`
//! map, domain-separated by the session's `A` and the OT index `i`), and
//! `KDF` SHA-256 over the whole per-OT transcript, truncated to 128 bits.
//!
//! 1. Sender: `a <- Z_l`, sends `A = a*B`.
//! 2. Receiver, for each OT `i` with choice `c`: `s <- Z_l`, `M = s*B`;
//!    `r_{1-c} <- G` uniform; `r_c = M - H_i(r_{1-c})`; sends `(r_0, r_1)`.
//!    Output `KDF(i, c, A, r_0, r_1, s*A)`.
//! 3. Sender, for each `i`: `m_0 = r_0 + H_i(r_1)`, `m_1 = r_1 + H_i(r_0)`;
//!    output `k_j = KDF(i, j, A, r_0, r_1, a*m_j)` for `j = 0, 1`.
//!
//! Correctness: `m_c = M`, so `a*m_c = a*s*B = s*A`.
//!
//! One message each way, 32 + 64 n bytes in total (8.2 KB for 128 OTs).
//!
//! # Why it is secure against malicious parties
//!
//! Assumptions: CDH in Ristretto (prime order, so no small-subgroup or
//! cofactor games), `H` and `KDF` modelled as random oracles.
//! - *Receiver privacy* (against any sender): `r_{1-c}` is uniform and
//!   `r_c = s*B - H(r_{1-c})` is uniform too because `s*B` is, so `(r_0, r_1)`
//!   is a pair of independent uniform points whatever `c` is. The sender's
//!   view is independent of the choice bits (statistically).
//! - *Sender privacy* (against any receiver): the sender computes `m_0, m_1`
//!   itself through the random oracle, a two-round Feistel network on the
//!   receiver's pair. To know discrete logs of both `m_0` and `m_1` the
//!   receiver would have to fix `r_1` before querying `H(r_1)` and vice versa,
//!   which it cannot do for both; so for at least one `j` the point `m_j` is a
//!   fresh random group element and `a*m_j` is a CDH value it cannot compute.
//!   That key is uniform in its view (the KDF is a random oracle).
//! - The security notion is *endemic* OT: a malicious party may bias or fix
//!   its *own* outputs (e.g. a receiver may choose `s`), but learns nothing
//!   about the other side's. This is exactly what OT extension needs from its
//!   base OTs (Masny–Rindal, Section 5; SoftSpokenOT uses random base OTs).
//! - Every key is bound to `A`, the OT index and the full point pair, so keys
//!   from different sessions or positions are unrelated and a receiver cannot
//!   replay pairs across indices to get related keys.
//!
//! Input validation: every point from the peer must be a canonical
//! Ristretto encoding (`CompressedRistretto::decompress` rejects everything
//! else); the sender's `A` must not be the identity. Violations end the run
//! with [`Error::Malformed`].
//!
//! Secrets (`a`, `s`, choice bits) are handled with constant-time group
//! arithmetic and `subtle` selection; nothing branches on a choice bit.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256, Sha512};
use subtle::{Choice, ConditionallySelectable};
use webproof_core::error::Result;
use webproof_core::{Block, Channel, Error, Io};

/// Largest number of base OTs one run may ask for (bounds the receiver's
/// message, 64 bytes per OT).
pub const MAX_BASE_OTS: usize = 1 << 16;

const POINT_LEN: usize = 32;
/// Bytes of the sender's message (one compressed point).
pub const SENDER_MESSAGE_LEN: usize = POINT_LEN;
/// OTs the sender computes between two pauses (`webproof_core::pause`).
const PAUSE_EVERY: usize = 16;
const H2G_DOMAIN: &[u8] = b"webproof-ot/mr19/hash-to-group/v1";
const KDF_DOMAIN: &[u8] = b"webproof-ot/mr19/kdf/v1";

/// Run `n` random OTs as the sender; returns `n` key pairs `[k0, k1]`.
pub async fn send<T: Io, R: RngCore + CryptoRng>(
    channel: &mut Channel<T>,
    n: usize,
    rng: &mut R,
) -> Result<Vec<[Block; 2]>> {
    check_count(n)?;
    let sender = Sender::new(rng);
    channel.send(&sender.message()).await?;
    channel.flush().await?;
    sender.finish(channel, n).await
}

/// The sender between its message and the receiver's: [`send`] in two
/// steps, so that a caller can put the sender's message (which depends on
/// nothing the peer says) into a flight it sends anyway.
pub struct Sender {
    a: Scalar,
    big_a: CompressedRistretto,
}

impl Sender {
    /// Pick the sender's secret.
    pub fn new<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        let a = Scalar::random(rng);
        let big_a = (&a * RISTRETTO_BASEPOINT_TABLE).compress();
        Sender { a, big_a }
    }

    /// The sender's message `A` ([`SENDER_MESSAGE_LEN`] bytes, one frame
    /// of a [`Channel`]).
    pub fn message(&self) -> [u8; SENDER_MESSAGE_LEN] {
        self.big_a.to_bytes()
    }

    /// Once the message went out: read the receiver's answer for `n` OTs
    /// and return the key pairs.
    pub async fn finish<T: Io>(
        self,
        channel: &mut Channel<T>,
        n: usize,
    ) -> Result<Vec<[Block; 2]>> {
        check_count(n)?;
        let msg = channel.recv_exact(n * 2 * POINT_LEN).await?;
        // Shared points are needed only encoded; computing half of each and
        // using the batched double-and-compress saves one inversion per point.
        let a_half = self.a * half();
        let mut halves = Vec::with_capacity(2 * n);
        for (i, pair) in msg.chunks_exact(2 * POINT_LEN).enumerate() {
            halves.extend(self.shared_halves(a_half, i, pair)?);
            // Two variable-base multiplications per OT: a driver that
            // shares its thread (a browser relaying a TLS session beside
            // the preprocessing) gets a word in between stretches.
            if i % PAUSE_EVERY == PAUSE_EVERY - 1 {
                webproof_core::pause::pause().await;
            }
        }
        Ok(self.keys_of(&msg, &halves))
    }

    /// [`Self::finish`] without I/O, for a caller whose messages go in
    /// flights of its own: the key pairs of the `n` OTs the receiver's
    /// answer `msg` ([`receiver_message`]) is for.
    pub fn keys(&self, msg: &[u8], n: usize) -> Result<Vec<[Block; 2]>> {
        check_count(n)?;
        if msg.len() != n * 2 * POINT_LEN {
            return Err(Error::Malformed(format!(
                "base OT: an answer of {} bytes for {n} OTs",
                msg.len()
            )));
        }
        let a_half = self.a * half();
        let mut halves = Vec::with_capacity(2 * n);
        for (i, pair) in msg.chunks_exact(2 * POINT_LEN).enumerate() {
            halves.extend(self.shared_halves(a_half, i, pair)?);
        }
        Ok(self.keys_of(msg, &halves))
    }

    /// Half of each shared point `a·m_0`, `a·m_1` of OT `i` (`pair`: the
    /// receiver's `r_0 ‖ r_1`).
    fn shared_halves(&self, a_half: Scalar, i: usize, pair: &[u8]) -> Result<[RistrettoPoint; 2]> {
        let enc0: &[u8; 32] = pair[..32].try_into().expect("32-byte half");
        let enc1: &[u8; 32] = pair[32..].try_into().expect("32-byte half");
        let r0 = decode_point(enc0, "receiver point r0")?;
        let r1 = decode_point(enc1, "receiver point r1")?;
        let m0 = r0 + hash_to_group(&self.big_a, i, enc1);
        let m1 = r1 + hash_to_group(&self.big_a, i, enc0);
        Ok([a_half * m0, a_half * m1])
    }

    /// The key pairs from the receiver's answer and the halves of the
    /// shared points ([`Self::shared_halves`], two per OT).
    fn keys_of(&self, msg: &[u8], halves: &[RistrettoPoint]) -> Vec<[Block; 2]> {
        let shared = RistrettoPoint::double_and_compress_batch(halves);
        msg.chunks_exact(2 * POINT_LEN)
            .zip(shared.chunks_exact(2))
            .enumerate()
            .map(|(i, (pair, sh))| {
                let enc0 = pair[..32].try_into().expect("32 bytes");
                let enc1 = pair[32..].try_into().expect("32 bytes");
                [
                    kdf(&self.big_a, i, 0, enc0, enc1, &sh[0]),
                    kdf(&self.big_a, i, 1, enc0, enc1, &sh[1]),
                ]
            })
            .collect()
    }
}

/// The scalar 1/2 mod l.
fn half() -> Scalar {
    Scalar::from(2u8).invert()
}

/// Run one random OT per entry of `choices` as the receiver; returns `k_{c_i}`.
pub async fn receive<T: Io, R: RngCore + CryptoRng>(
    channel: &mut Channel<T>,
    choices: &[bool],
    rng: &mut R,
) -> Result<Vec<Block>> {
    check_count(choices.len())?;
    let enc_a: [u8; 32] = channel
        .recv_exact(POINT_LEN)
        .await?
        .try_into()
        .expect("exact length");
    let (msg, keys) = receiver_message(&enc_a, choices, rng)?;
    channel.send(&msg).await?;
    channel.flush().await?;
    Ok(keys)
}

/// [`receive`] without I/O: from the sender's message `A`
/// ([`Sender::message`]), the receiver's answer (64 bytes per OT, for
/// [`Sender::keys`]) and its keys `k_{c_i}`, which depend on nothing the
/// sender says later.
pub fn receiver_message<R: RngCore + CryptoRng>(
    enc_a: &[u8; SENDER_MESSAGE_LEN],
    choices: &[bool],
    rng: &mut R,
) -> Result<(Vec<u8>, Vec<Block>)> {
    let n = choices.len();
    check_count(n)?;
    let big_a = decode_point(enc_a, "sender point A")?;
    if big_a == RistrettoPoint::identity() {
        return Err(Error::Malformed(
            "base OT: sender point A is the identity".into(),
        ));
    }
    let big_a_c = CompressedRistretto(*enc_a);

    // The unchosen point r_{1-c} is uniform: sample q and use 2q (doubling is
    // a bijection of the prime-order group), so all of them are encoded with
    // one batched inversion.
    let mut qs = Vec::with_capacity(n);
    for _ in 0..n {
        let mut uniform = [0u8; 64];
        rng.fill_bytes(&mut uniform);
        qs.push(RistrettoPoint::from_uniform_bytes(&uniform));
    }
    let others = RistrettoPoint::double_and_compress_batch(&qs);
    let mut msg = Vec::with_capacity(n * 2 * POINT_LEN);
    let mut secrets = Vec::with_capacity(n);
    for (i, (&c, other)) in choices.iter().zip(&others).enumerate() {
        let s = Scalar::random(rng);
        let big_m = &s * RISTRETTO_BASEPOINT_TABLE;
        let chosen = (big_m - hash_to_group(&big_a_c, i, other.as_bytes())).compress();
        // (r0, r1) = c ? (other, chosen) : (chosen, other), without branching on c.
        let c = Choice::from(c as u8);
        let mut r0 = chosen.0;
        let mut r1 = other.0;
        for (x, y) in r0.iter_mut().zip(r1.iter_mut()) {
            u8::conditional_swap(x, y, c);
        }
        msg.extend_from_slice(&r0);
        msg.extend_from_slice(&r1);
        secrets.push(s);
    }

    // The shared points s*A, computed as 2*((s/2)*A) for batched encoding.
    // Every OT multiplies the same A: one table for it turns n
    // variable-base multiplications into fixed-base ones (about a third of
    // the time each; the table costs about two multiplications).
    let s_half = half();
    let table_a = RistrettoBasepointTable::create(&big_a);
    let secret_halves: Vec<RistrettoPoint> =
        secrets.iter().map(|s| &(s * s_half) * &table_a).collect();

    let shared = RistrettoPoint::double_and_compress_batch(&secret_halves);
    let mut out = Vec::with_capacity(n);
    for (i, (sh, &c)) in shared.iter().zip(choices).enumerate() {
        let pair = &msg[i * 2 * POINT_LEN..(i + 1) * 2 * POINT_LEN];
        out.push(kdf(
            &big_a_c,
            i,
            c as u8,
            pair[..32].try_into().expect("32 bytes"),
            pair[32..].try_into().expect("32 bytes"),
            sh,
        ));
    }
    Ok((msg, out))
}

fn check_count(n: usize) -> Result<()> {
    if n == 0 || n > MAX_BASE_OTS {
        return Err(Error::Usage(format!(
            "base OT count {n} outside 1..={MAX_BASE_OTS}"
        )));
    }
    Ok(())
}

/// Decode a peer's point, accepting only canonical Ristretto encodings.
fn decode_point(enc: &[u8; 32], what: &str) -> Result<RistrettoPoint> {
    CompressedRistretto(*enc).decompress().ok_or_else(|| {
        Error::Malformed(format!(
            "base OT: {what} is not a canonical Ristretto point"
        ))
    })
}

/// `H_i(P)`: a random-oracle hash onto the group, bound to the session and index.
fn hash_to_group(session: &CompressedRistretto, index: usize, point: &[u8; 32]) -> RistrettoPoint {
    let mut h = Sha512::new();
    h.update(H2G_DOMAIN);
    h.update(session.as_bytes());
    h.update((index as u64).to_le_bytes());
    h.update(point);
    let digest: [u8; 64] = h.finalize().into();
    RistrettoPoint::from_uniform_bytes(&digest)
}

/// The output key of OT `index`, slot `j`, over the whole per-OT transcript.
fn kdf(
    session: &CompressedRistretto,
    index: usize,
    j: u8,
    r0: &[u8; 32],
    r1: &[u8; 32],
    shared: &CompressedRistretto,
) -> Block {
    let mut h = Sha256::new();
    h.update(KDF_DOMAIN);
    h.update(session.as_bytes());
    h.update((index as u64).to_le_bytes());
    h.update([j]);
    h.update(r0);
    h.update(r1);
    h.update(shared.as_bytes());
    let digest: [u8; 32] = h.finalize().into();
    Block::from_bytes(digest[..16].try_into().expect("16 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::AsyncWriteExt;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;
    use webproof_core::memory_duplex;

    fn run(n: usize, seed: u64) -> (Vec<[Block; 2]>, Vec<bool>, Vec<Block>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let choices: Vec<bool> = (0..n).map(|_| rng.gen()).collect();
        let (a, b) = memory_duplex();
        let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
        let mut rs = ChaCha20Rng::seed_from_u64(seed ^ 1);
        let mut rr = ChaCha20Rng::seed_from_u64(seed ^ 2);
        let (s, r) = block_on(async {
            futures::join!(
                send(&mut ca, n, &mut rs),
                receive(&mut cb, &choices, &mut rr)
            )
        });
        (s.unwrap(), choices, r.unwrap())
    }

    #[test]
    fn receiver_gets_chosen_key_only() {
        let (pairs, choices, keys) = run(128, 5);
        for ((p, c), k) in pairs.iter().zip(&choices).zip(&keys) {
            assert_eq!(*k, p[*c as usize]);
            assert_ne!(*k, p[!*c as usize]);
        }
        // All keys distinct (no reuse across indices or slots).
        let mut all: Vec<u128> = pairs.iter().flat_map(|p| [p[0].0, p[1].0]).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 256);
    }

    /// The steps without I/O give the keys the channel runs give.
    #[test]
    fn steps_without_io_agree() {
        let mut rng = ChaCha20Rng::seed_from_u64(21);
        let choices: Vec<bool> = (0..40).map(|_| rng.gen()).collect();
        let sender = Sender::new(&mut rng);
        let (msg, keys) = receiver_message(&sender.message(), &choices, &mut rng).unwrap();
        let pairs = sender.keys(&msg, 40).unwrap();
        for ((p, &c), k) in pairs.iter().zip(&choices).zip(&keys) {
            assert_eq!(*k, p[c as usize]);
            assert_ne!(*k, p[!c as usize]);
        }
        assert!(sender.keys(&msg[..64 * 39], 40).is_err());
        let mut bad = msg.clone();
        bad[0] ^= 0x80;
        assert!(sender.keys(&bad, 40).is_err());
        assert!(receiver_message(&[0; 32], &choices, &mut rng).is_err());
    }

    #[test]
    fn message_sizes() {
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let choices = vec![true; 128];
        let (a, b) = memory_duplex();
        let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
        let (sa, sb) = (ca.stats(), cb.stats());
        let mut r2 = ChaCha20Rng::seed_from_u64(10);
        let (s, r) = block_on(async {
            futures::join!(
                send(&mut ca, 128, &mut rng),
                receive(&mut cb, &choices, &mut r2)
            )
        });
        s.unwrap();
        r.unwrap();
        assert_eq!(sa.sent(), 4 + 32);
        assert_eq!(sb.sent(), 4 + 128 * 64);
    }

    /// A sender that sends a non-canonical or identity `A` is rejected.
    #[test]
    fn receiver_rejects_invalid_sender_point() {
        let mut bad_points: Vec<[u8; 32]> = vec![[0xff; 32], [0u8; 32]];
        // A canonical-looking but off-curve encoding (low bit set = negative: invalid).
        let mut neg = [0u8; 32];
        neg[0] = 1;
        bad_points.push(neg);
        for bad in bad_points {
            let (a, b) = memory_duplex();
            let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            let res = block_on(async {
                let (_, r) = futures::join!(
                    async {
                        ca.send(&bad).await.unwrap();
                        ca.flush().await.unwrap();
                    },
                    receive(&mut cb, &[true, false], &mut rng)
                );
                r
            });
            assert!(matches!(res, Err(Error::Malformed(_))), "{res:?}");
        }
    }

    /// A receiver that sends a non-canonical point is rejected by the sender.
    #[test]
    fn sender_rejects_invalid_receiver_point() {
        let (a, b) = memory_duplex();
        let (mut ca, mut cb) = (Channel::new(a), Channel::new(b));
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let res = block_on(async {
            let (s, _) = futures::join!(send(&mut ca, 2, &mut rng), async {
                let _a = cb.recv_exact(32).await.unwrap();
                // Valid first point (the basepoint), then 0xff.. (non-canonical).
                let mut msg = Vec::new();
                let g = RISTRETTO_BASEPOINT_TABLE.basepoint().compress();
                msg.extend_from_slice(g.as_bytes());
                msg.extend_from_slice(g.as_bytes());
                msg.extend_from_slice(g.as_bytes());
                msg.extend_from_slice(&[0xff; 32]);
                cb.send(&msg).await.unwrap();
                cb.flush().await.unwrap();
            });
            s
        });
        assert!(matches!(res, Err(Error::Malformed(_))), "{res:?}");
    }

    #[test]
    fn truncated_oversized_and_closed() {
        // Receiver's message one byte short, one byte long, or cut mid-frame.
        for variant in 0..3 {
            let (a, b) = memory_duplex();
            let mut ca = Channel::new(a);
            let mut rng = ChaCha20Rng::seed_from_u64(3);
            let res = block_on(async {
                let (s, _) = futures::join!(send(&mut ca, 4, &mut rng), async move {
                    let mut raw = b;
                    let mut hdr = [0u8; 4 + 32];
                    futures::AsyncReadExt::read_exact(&mut raw, &mut hdr)
                        .await
                        .unwrap();
                    let len: u32 = match variant {
                        0 => 4 * 64 - 1,
                        1 => 4 * 64 + 1,
                        _ => 4 * 64,
                    };
                    raw.write_all(&len.to_le_bytes()).await.unwrap();
                    raw.write_all(&[7u8; 10]).await.unwrap();
                    drop(raw);
                });
                s
            });
            assert!(matches!(res, Err(Error::Channel(_))), "{res:?}");
        }
    }

    #[test]
    fn count_limits() {
        let (a, _b) = memory_duplex();
        let mut ca = Channel::new(a);
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let r = block_on(send(&mut ca, 0, &mut rng));
        assert!(matches!(r, Err(Error::Usage(_))));
        let r = block_on(send(&mut ca, MAX_BASE_OTS + 1, &mut rng));
        assert!(matches!(r, Err(Error::Usage(_))));
    }
}

//! One pass over a direction's records: disclosure and hash commitments.
//!
//! Keystream blocks are computed in record order, each at most once, and
//! consumed at once by the disclosure (opened in batches) and by the running
//! SHA-256 of the current commitment, so memory stays bounded by one
//! keystream block, one hash block and one batch of openings whatever the
//! transcript size.

use crate::kdf::{self, MBit};
use crate::party::ZkParty;
use crate::statement::{Direction, DirectionOutput, DirectionProof, Disclosure};
use crate::{DirectionKey, Error, Result};
use webproof_circuits::bits::{bits_to_bytes, bytes_to_bits};
use webproof_circuits::sha2::{padding, HashAlg};

/// Bits opened per opening message.
const OPEN_BATCH_BITS: usize = 1 << 16;
/// Keystream blocks evaluated in one pass over the cipher circuit: the
/// per-gate work is shared by the batch, and the wire table (about
/// 15,000 AES wires x 16 bytes per block) stays within the L2 cache.
const KEYSTREAM_BATCH: usize = 8;

/// A SHA-256 of a commitment being absorbed.
struct Absorber<B> {
    state: Vec<B>,
    pending: Vec<MBit<B>>,
    len_bytes: usize,
}

impl<B: Copy> Absorber<B> {
    async fn new<P: ZkParty<Bit = B>>(party: &mut P) -> Self {
        let iv = bytes_to_bits(&HashAlg::Sha256.iv())
            .into_iter()
            .map(|b| party.constant(b))
            .collect();
        Absorber {
            state: iv,
            pending: Vec::with_capacity(512),
            len_bytes: 0,
        }
    }

    async fn absorb<P: ZkParty<Bit = B>>(
        &mut self,
        party: &mut P,
        bits: impl IntoIterator<Item = MBit<B>>,
    ) -> Result<()> {
        for b in bits {
            self.pending.push(b);
            if self.pending.len() == 512 {
                self.state =
                    kdf::compress(party, HashAlg::Sha256, &self.state, &self.pending).await?;
                self.pending.clear();
            }
        }
        Ok(())
    }

    async fn finish<P: ZkParty<Bit = B>>(mut self, party: &mut P) -> Result<Vec<B>> {
        let pad = padding(HashAlg::Sha256, self.len_bytes);
        self.absorb(party, kdf::public(&pad)).await?;
        debug_assert!(self.pending.is_empty());
        Ok(self.state)
    }
}

/// Prove a direction's disclosure and commitments. `blinders` is the
/// prover's (one per commitment); the verifier passes `None`.
pub(crate) async fn prove_direction<P: ZkParty>(
    party: &mut P,
    key: &mut DirectionKey<P::Bit>,
    direction: &Direction,
    blinders: Option<&[Vec<u8>]>,
) -> Result<DirectionProof> {
    let block_len = key.aead.keystream_block_len();
    let records = &direction.records;

    // Which bytes are disclosed, per record: sorted, disjoint ranges (not
    // one entry per byte, which would cost 8 bytes of memory per disclosed
    // byte of a large response).
    let mut disclosed: Vec<Vec<core::ops::Range<usize>>> = vec![Vec::new(); records.len()];
    if let Disclosure::Ranges(ranges) = &direction.disclosure {
        for (i, r) in ranges {
            if !r.is_empty() {
                disclosed[*i].push(r.clone());
            }
        }
        for d in &mut disclosed {
            d.sort_unstable_by_key(|r| (r.start, r.end));
            let mut merged: Vec<core::ops::Range<usize>> = Vec::with_capacity(d.len());
            for r in d.drain(..) {
                match merged.last_mut() {
                    Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                    _ => merged.push(r),
                }
            }
            *d = merged;
        }
    }
    // Committed spans in order, tagged with their commitment.
    let spans: Vec<(usize, usize, usize, usize)> = direction
        .commitments
        .iter()
        .enumerate()
        .flat_map(|(c, com)| {
            com.spans
                .iter()
                .map(move |(r, range)| (*r, range.start, range.end, c))
        })
        .collect();
    // Blinders, committed as one batch.
    let blinder_bits: Vec<Vec<P::Bit>> = {
        let lens: Vec<usize> = direction
            .commitments
            .iter()
            .map(|c| c.blinder_len)
            .collect();
        let total: usize = lens.iter().sum();
        let all: Option<Vec<u8>> = blinders.map(|b| b.concat());
        let bits = if total > 0 {
            party.commit_secret(all.as_deref(), total).await?
        } else {
            Vec::new()
        };
        let mut out = Vec::with_capacity(lens.len());
        let mut at = 0;
        for l in lens {
            out.push(bits[8 * at..8 * (at + l)].to_vec());
            at += l;
        }
        out
    };

    let mut plaintexts: Vec<Vec<Option<u8>>> = records
        .iter()
        .map(|r| vec![None; r.ciphertext.len()])
        .collect();
    let mut open_bits: Vec<P::Bit> = Vec::new();
    let mut open_places: Vec<(usize, usize)> = Vec::new();
    let mut digests: Vec<[u8; 32]> = Vec::with_capacity(direction.commitments.len());
    let mut digest_bits: Vec<P::Bit> = Vec::new();

    let mut span_at = 0usize;
    let mut current: Option<(usize, Absorber<P::Bit>)> = None;

    for (ri, record) in records.iter().enumerate() {
        // Blocks this record needs, ascending.
        let mut blocks: Vec<usize> = disclosed[ri]
            .iter()
            .flat_map(|r| r.start / block_len..r.end.div_ceil(block_len))
            .collect();
        for &(_, start, end, _) in spans.iter().filter(|s| s.0 == ri) {
            blocks.extend(start / block_len..end.div_ceil(block_len));
        }
        blocks.sort_unstable();
        blocks.dedup();
        let mut d_at = 0usize;
        let mut batch = Vec::new();
        for (bi, &block) in blocks.iter().enumerate() {
            if bi % KEYSTREAM_BATCH == 0 {
                let end = (bi + KEYSTREAM_BATCH).min(blocks.len());
                batch = key.keystream(party, record, &blocks[bi..end]).await?;
                batch.reverse();
            }
            let ks = batch.pop().expect("one keystream block per index");
            let lo = block * block_len;
            let hi = (lo + block_len).min(record.ciphertext.len());
            for pos in lo..hi {
                let k = &ks[8 * (pos - lo)..8 * (pos - lo + 1)];
                // Positions only grow within a record: skip ranges that ended.
                while disclosed[ri].get(d_at).is_some_and(|r| r.end <= pos) {
                    d_at += 1;
                }
                if disclosed[ri].get(d_at).is_some_and(|r| r.start <= pos) {
                    open_bits.extend_from_slice(k);
                    open_places.push((ri, pos));
                }
                // Skip spans that ended; start the commitment of a span that begins here.
                while let Some(&(r, _, end, _)) = spans.get(span_at) {
                    if (r, end) <= (ri, pos) {
                        span_at += 1;
                    } else {
                        break;
                    }
                }
                let Some(&(r, start, end, c)) = spans.get(span_at) else {
                    continue;
                };
                if r != ri || pos < start || pos >= end {
                    continue;
                }
                if current.as_ref().map(|(cc, _)| *cc) != Some(c) {
                    if let Some((_, absorber)) = current.take() {
                        digest_bits.extend(absorber.finish(party).await?);
                    }
                    let com = &direction.commitments[c];
                    let mut a = Absorber::new(party).await;
                    a.len_bytes = com.prefix.len() + com.blinder_len;
                    a.absorb(party, kdf::public(&com.prefix)).await?;
                    a.absorb(party, kdf::secret(&blinder_bits[c])).await?;
                    current = Some((c, a));
                }
                let (_, a) = current.as_mut().expect("set above");
                let c_bits = bytes_to_bits(&[record.ciphertext[pos]]);
                let pt: Vec<MBit<P::Bit>> = k
                    .iter()
                    .zip(c_bits)
                    .map(|(&kb, cb)| MBit::Sec(party.xor(kb, party.constant(cb))))
                    .collect();
                a.absorb(party, pt).await?;
                a.len_bytes += 1;
            }
            if open_bits.len() >= OPEN_BATCH_BITS {
                flush_openings(
                    party,
                    &mut open_bits,
                    &mut open_places,
                    records,
                    &mut plaintexts,
                )
                .await?;
            }
        }
    }
    if let Some((_, absorber)) = current.take() {
        digest_bits.extend(absorber.finish(party).await?);
    }
    flush_openings(
        party,
        &mut open_bits,
        &mut open_places,
        records,
        &mut plaintexts,
    )
    .await?;
    if !digest_bits.is_empty() {
        let opened = bits_to_bytes(&party.open(&digest_bits).await?);
        for d in opened.chunks(32) {
            digests.push(d.try_into().expect("32-byte digests"));
        }
    }
    if digests.len() != direction.commitments.len() {
        return Err(Error::Malformed(
            "a commitment's spans were not all reached".into(),
        ));
    }

    let disclosed = match &direction.disclosure {
        Disclosure::Key => {
            let bits = party.open(&key.key).await?;
            DirectionOutput::Key {
                key: bits_to_bytes(&bits),
                iv: key.iv.clone(),
            }
        }
        Disclosure::Ranges(_) => DirectionOutput::Bytes(plaintexts),
    };
    Ok(DirectionProof {
        disclosed,
        commitments: digests,
    })
}

async fn flush_openings<P: ZkParty>(
    party: &mut P,
    bits: &mut Vec<P::Bit>,
    places: &mut Vec<(usize, usize)>,
    records: &[crate::Record],
    plaintexts: &mut [Vec<Option<u8>>],
) -> Result<()> {
    if bits.is_empty() {
        return Ok(());
    }
    let ks = bits_to_bytes(&party.open(bits).await?);
    for ((r, pos), k) in places.drain(..).zip(ks) {
        plaintexts[r][pos] = Some(records[r].ciphertext[pos] ^ k);
    }
    bits.clear();
    Ok(())
}

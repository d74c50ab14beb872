//! One pass over a direction's records: disclosure and hash commitments.
//!
//! Keystream blocks are computed in record order, each at most once, and
//! consumed at once by the disclosure (opened in batches) and by the running
//! SHA-256 of the current commitment, so memory stays bounded by one
//! keystream block, one hash block and one batch of openings whatever the
//! transcript size.
//!
//! The same pass proves the direction's byte-class constraints
//! ([`crate::ByteClass`]): the plaintext bits of each constrained byte
//! (keystream XOR the public ciphertext) go through the class's small
//! equality circuit, evaluated in batches of [`CLASS_BATCH`] bytes, and
//! every output (one "equals a forbidden value" bit per value and byte) is
//! asserted zero. An honest prover's outputs are all zero; a byte equal to
//! a forbidden value makes one output 1, and the assertion fails at the
//! verifier (except with the engine's soundness error).

use crate::kdf::{self, MBit};
use crate::party::ZkParty;
use crate::statement::{
    DirectionOutput, DirectionProof, DirectionStatement, Disclosure, TagMaterial,
};
use crate::{DirectionKey, Error, Result};
use webproof_circuits::bits::{bits_to_bytes, bytes_to_bits};
use webproof_circuits::sha2::{padding, HashAlg};

/// Bits opened per opening message.
const OPEN_BATCH_BITS: usize = 1 << 16;
/// Keystream blocks evaluated in one pass over the cipher circuit: the
/// per-gate work is shared by the batch, and the wire table (about
/// 15,000 AES wires x 16 bytes per block) stays within the L2 cache.
const KEYSTREAM_BATCH: usize = 8;
/// Constrained bytes evaluated in one batch of a byte-class circuit.
const CLASS_BATCH: usize = 4096;

/// A byte class being proven: its circuit and the plaintext bits of the
/// bytes not yet evaluated.
struct ClassProof<B> {
    circuit: webproof_circuits::Circuit,
    pending: Vec<B>,
}

impl<B: Copy> ClassProof<B> {
    /// Evaluate the pending bytes and assert that none equals a forbidden value.
    async fn flush<P: ZkParty<Bit = B>>(&mut self, party: &mut P) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        // The engine evaluates at most `MAX_BATCH` instances at once; the
        // outputs of the whole pending batch are asserted together.
        let mut hits = Vec::new();
        for chunk in self.pending.chunks(8 * webproof_zk::MAX_BATCH) {
            let out = party
                .eval_batch(&self.circuit, chunk.len() / 8, &[chunk])
                .await?;
            hits.extend_from_slice(&out[0]);
        }
        party.assert_public(&hits, &vec![false; hits.len()]).await?;
        self.pending.clear();
        Ok(())
    }
}

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
/// prover's (one per commitment); the verifier passes `None`. With
/// `claimed` (one digest per commitment, sent in the clear beforehand) the
/// digests are asserted equal to the claimed ones instead of opened, so
/// the proof can be sealed; it opens nothing else when the direction
/// discloses no range and opens no tag material.
pub(crate) async fn prove_direction<P: ZkParty>(
    party: &mut P,
    key: &mut DirectionKey<P::Bit>,
    direction: &DirectionStatement,
    blinders: Option<&[Vec<u8>]>,
    claimed: Option<&[[u8; 32]]>,
) -> Result<DirectionProof> {
    if claimed.is_some_and(|c| c.len() != direction.commitments.len()) {
        return Err(Error::Malformed(
            "one claimed digest per commitment is needed".into(),
        ));
    }
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

    // Constrained bytes per record, as (position, class), sorted.
    let mut constrained: Vec<Vec<(usize, usize)>> = vec![Vec::new(); records.len()];
    for (c, class) in direction.byte_classes.iter().enumerate() {
        for (r, range) in &class.spans {
            constrained[*r].extend(range.clone().map(|p| (p, c)));
        }
    }
    for v in &mut constrained {
        v.sort_unstable();
        v.dedup();
    }
    let mut classes: Vec<ClassProof<P::Bit>> = direction
        .byte_classes
        .iter()
        .map(|c| ClassProof {
            circuit: crate::circuits::byte_class(&c.forbidden),
            pending: Vec::new(),
        })
        .collect();

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
        blocks.extend(constrained[ri].iter().map(|(p, _)| p / block_len));
        blocks.sort_unstable();
        blocks.dedup();
        let mut d_at = 0usize;
        let mut c_at = 0usize;
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
                while let Some(&(p, c)) = constrained[ri].get(c_at) {
                    if p != pos {
                        break;
                    }
                    c_at += 1;
                    let c_bits = bytes_to_bits(&[record.ciphertext[pos]]);
                    let class = &mut classes[c];
                    for (&kb, cb) in k.iter().zip(c_bits) {
                        class.pending.push(party.xor(kb, party.constant(cb)));
                    }
                    if class.pending.len() >= 8 * CLASS_BATCH {
                        class.flush(party).await?;
                    }
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
    for class in &mut classes {
        class.flush(party).await?;
    }
    flush_openings(
        party,
        &mut open_bits,
        &mut open_places,
        records,
        &mut plaintexts,
    )
    .await?;
    if let Some(claimed) = claimed {
        if !digest_bits.is_empty() {
            let values = bytes_to_bits(&claimed.concat());
            if values.len() != digest_bits.len() {
                return Err(Error::Malformed(
                    "a commitment's spans were not all reached".into(),
                ));
            }
            party.assert_public(&digest_bits, &values).await?;
        }
        digests.extend_from_slice(claimed);
    } else if !digest_bits.is_empty() {
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
    let tag_material = if direction.open_tag_material {
        Some(open_tag_material(party, key, records).await?)
    } else {
        None
    };
    Ok(DirectionProof {
        disclosed,
        commitments: digests,
        tag_material,
    })
}

/// Open the one-time MAC material of every record of a direction (see
/// [`TagMaterial`]): a few cipher blocks per record, evaluated in batches
/// and opened in batches, so memory stays bounded whatever the transcript.
async fn open_tag_material<P: ZkParty>(
    party: &mut P,
    key: &mut DirectionKey<P::Bit>,
    records: &[crate::SealedRecord],
) -> Result<TagMaterial> {
    let gcm = key.aead != crate::Aead::ChaCha20Poly1305;
    // Bits opened per record: E_K(J0), or the 256-bit Poly1305 key.
    let per_record = if gcm { 128 } else { 256 };
    let mut opened: Vec<u8> = Vec::with_capacity(16 + records.len() * per_record / 8);
    let mut pending: Vec<P::Bit> = Vec::new();
    // AES-GCM: H = E_K(0^128) rides in the first batch, even with no records.
    let mut with_hash_key = gcm;
    let mut at = 0;
    while at < records.len() || with_hash_key {
        let end = (at + KEYSTREAM_BATCH).min(records.len());
        let blocks = key
            .tag_blocks(party, &records[at..end], with_hash_key)
            .await?;
        for (i, b) in blocks.into_iter().enumerate() {
            let bits = if with_hash_key && i == 0 {
                128
            } else {
                per_record
            };
            pending.extend_from_slice(&b[..bits]);
        }
        with_hash_key = false;
        at = end;
        if pending.len() >= OPEN_BATCH_BITS {
            opened.extend(bits_to_bytes(&party.open(&pending).await?));
            pending.clear();
        }
    }
    if !pending.is_empty() {
        opened.extend(bits_to_bytes(&party.open(&pending).await?));
    }
    Ok(if gcm {
        let (h, masks) = opened.split_at(16);
        TagMaterial::Gcm {
            hash_key: h.try_into().expect("16 bytes"),
            masks: masks
                .chunks_exact(16)
                .map(|m| m.try_into().expect("16 bytes"))
                .collect(),
        }
    } else {
        TagMaterial::Poly1305 {
            keys: opened
                .chunks_exact(32)
                .map(|k| k.try_into().expect("32 bytes"))
                .collect(),
        }
    })
}

async fn flush_openings<P: ZkParty>(
    party: &mut P,
    bits: &mut Vec<P::Bit>,
    places: &mut Vec<(usize, usize)>,
    records: &[crate::SealedRecord],
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

/// A claim about the plaintext of one record: its bytes from `offset` on
/// are `bytes` (see [`crate::assert_plaintext`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaintextClaim {
    /// Index of the record in the slice of records proven.
    pub record: usize,
    /// First byte of the claim within the record's plaintext.
    pub offset: usize,
    /// The claimed plaintext bytes.
    pub bytes: Vec<u8>,
}

/// Claimed bytes per record: `(position, value)`, sorted, each once; the
/// order in which [`assert_plaintext`] claims them.
fn wanted_bytes(
    records: &[crate::SealedRecord],
    claims: &[PlaintextClaim],
) -> Result<Vec<Vec<(usize, u8)>>> {
    let mut wanted: Vec<Vec<(usize, u8)>> = vec![Vec::new(); records.len()];
    for c in claims {
        let rec = records
            .get(c.record)
            .ok_or_else(|| Error::Malformed("a claim names a record not proven".into()))?;
        let end = c
            .offset
            .checked_add(c.bytes.len())
            .filter(|&e| e <= rec.ciphertext.len())
            .ok_or_else(|| Error::Malformed("a claim runs past its record".into()))?;
        wanted[c.record].extend((c.offset..end).zip(c.bytes.iter().copied()));
    }
    for w in &mut wanted {
        w.sort_unstable();
        let before = w.len();
        w.dedup_by_key(|(p, _)| *p);
        if w.len() != before {
            // Two claims on one byte: equal values would be harmless, but
            // a statement is simpler to read when each byte is claimed once.
            return Err(Error::Malformed("two claims cover the same byte".into()));
        }
    }
    Ok(wanted)
}

/// The claimed bits of `claims` in the order [`crate::assert_plaintext`] claims
/// them (by record, then by position; each byte least significant bit
/// first): what a verifier of a proof with deferred claims gives
/// `SealedVerifier::verify_claimed` once the prover disclosed the bytes.
pub fn claimed_bits(
    records: &[crate::SealedRecord],
    claims: &[PlaintextClaim],
) -> Result<Vec<bool>> {
    let wanted = wanted_bytes(records, claims)?;
    let bytes: Vec<u8> = wanted.iter().flatten().map(|&(_, v)| v).collect();
    Ok(bytes_to_bits(&bytes))
}

/// Prove, with a key authenticated elsewhere, that the claimed plaintext
/// is the keystream XOR the public ciphertext: per claimed byte the
/// keystream bits XOR the ciphertext bits are claimed equal to the claim
/// ([`ZkParty::assert_claimed`]: in a sealed proof with deferred claims,
/// the verifier learns the bytes only at the opening, in the order of
/// [`claimed_bits`]). Uses no opening, so it runs in a sealed proof.
pub(crate) async fn assert_plaintext<P: ZkParty>(
    party: &mut P,
    key: &mut DirectionKey<P::Bit>,
    records: &[crate::SealedRecord],
    claims: &[PlaintextClaim],
) -> Result<()> {
    let block_len = key.aead.keystream_block_len();
    let wanted = wanted_bytes(records, claims)?;
    let mut bits: Vec<P::Bit> = Vec::new();
    let mut values: Vec<bool> = Vec::new();
    for (record, want) in records.iter().zip(&wanted) {
        let mut blocks: Vec<usize> = want.iter().map(|(p, _)| p / block_len).collect();
        blocks.dedup();
        let mut at = 0usize;
        for chunk in blocks.chunks(KEYSTREAM_BATCH) {
            let ks = key.keystream(party, record, chunk).await?;
            for (&block, ks) in chunk.iter().zip(&ks) {
                while let Some(&(pos, value)) = want.get(at) {
                    if pos / block_len != block {
                        break;
                    }
                    at += 1;
                    let k = &ks[8 * (pos % block_len)..8 * (pos % block_len + 1)];
                    let c_bits = bytes_to_bits(&[record.ciphertext[pos]]);
                    let v_bits = bytes_to_bits(&[value]);
                    for i in 0..8 {
                        bits.push(party.xor(k[i], party.constant(c_bits[i])));
                        values.push(v_bits[i]);
                    }
                }
            }
            if bits.len() >= OPEN_BATCH_BITS {
                party.assert_claimed(&bits, &values).await?;
                bits.clear();
                values.clear();
            }
        }
    }
    if !bits.is_empty() {
        party.assert_claimed(&bits, &values).await?;
    }
    Ok(())
}

/// The element of a block's authenticated bits ([`bytes_to_bits`]'s order:
/// least significant bit of each byte first), in GCM's convention.
fn gcm_elem<P: ZkParty>(party: &P, bits: &[P::Bit]) -> Result<P::Elem> {
    let gcm: Vec<P::Bit> = bits
        .chunks(8)
        .flat_map(|byte| byte.iter().rev())
        .copied()
        .collect();
    party.pack(&gcm)
}

/// See [`crate::assert_tags`]: `H` and every record's `E_K(J0)` computed
/// from the direction's key (never opened), GHASH by Horner's rule with
/// one multiplication per block, every tag asserted at once.
pub(crate) async fn assert_tags<P: ZkParty>(
    party: &mut P,
    key: &mut DirectionKey<P::Bit>,
    records: &[crate::SealedRecord],
    tags: &[crate::RecordTag],
) -> Result<()> {
    if key.aead == crate::Aead::ChaCha20Poly1305 {
        return assert_poly1305_tags(party, key, records, tags).await;
    }
    let mut hash_key = None;
    let mut masks = Vec::with_capacity(records.len());
    let mut at = 0;
    while at < records.len() || hash_key.is_none() {
        let end = (at + KEYSTREAM_BATCH).min(records.len());
        let first = hash_key.is_none();
        let blocks = key.tag_blocks(party, &records[at..end], first).await?;
        for (i, b) in blocks.iter().enumerate() {
            let e = gcm_elem(party, &b[..128])?;
            if first && i == 0 {
                hash_key = Some(e);
            } else {
                masks.push(e);
            }
        }
        at = end;
    }
    let h = hash_key.expect("computed in the first batch");
    let mut computed = Vec::with_capacity(records.len());
    let mut recorded = Vec::with_capacity(records.len());
    for ((record, tag), mask) in records.iter().zip(tags).zip(masks) {
        let mut y = party.elem_constant(webproof_core::Block::ZERO);
        for x in webproof_core::block::ghash_blocks(&tag.aad, &record.ciphertext) {
            let sum = party.elem_add(y, party.elem_constant(x));
            y = party.mul(sum, h).await?;
        }
        computed.push(party.elem_add(y, mask));
        recorded.push(webproof_core::Block::from_gcm(&tag.tag));
    }
    party.assert_elems_public(&computed, &recorded).await?;
    Ok(())
}

/// The ChaCha20-Poly1305 tags of `records` (RFC 8439 §2.8): per record its
/// one-time key, the first 32 bytes of ChaCha20 block 0 under the
/// record's nonce (computed from the key, never opened), then Poly1305 over
/// the public AAD and ciphertext as a circuit
/// (`webproof_circuits::poly1305::poly1305_tag_circuit`: one product mod
/// `2^130 − 5` a block), the tags asserted equal to the recorded ones.
async fn assert_poly1305_tags<P: ZkParty>(
    party: &mut P,
    key: &mut DirectionKey<P::Bit>,
    records: &[crate::SealedRecord],
    tags: &[crate::RecordTag],
) -> Result<()> {
    use webproof_circuits::poly1305;
    let mut computed = Vec::new();
    let mut recorded = Vec::new();
    for (batch, batch_tags) in records
        .chunks(KEYSTREAM_BATCH)
        .zip(tags.chunks(KEYSTREAM_BATCH))
    {
        let otks = key.tag_blocks(party, batch, false).await?;
        for ((record, tag), otk) in batch.iter().zip(batch_tags).zip(otks) {
            let blocks = poly1305::aead_blocks(&tag.aad, &record.ciphertext);
            let circuit = poly1305::poly1305_tag_circuit(blocks.len() / 17);
            let blocks: Vec<P::Bit> = bytes_to_bits(&blocks)
                .into_iter()
                .map(|b| party.constant(b))
                .collect();
            let out = party.eval(&circuit, &[&otk[..256], &blocks]).await?;
            computed.extend_from_slice(&out[0]);
            recorded.extend(bytes_to_bits(&tag.tag));
        }
    }
    party.assert_public(&computed, &recorded).await
}

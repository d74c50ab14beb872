//! The verifying side: holds `Delta` and the COT keys, reads corrections,
//! draws the challenges and runs the batched check.

use crate::byteinv;
use crate::check::{pack, Acc, ChiStream};
use crate::claims::ClaimSum;
use crate::elem::VerifierElem;
use crate::proto;
use crate::prover::{
    check_batch, first_room, gather4, load_group, mac_hash, mac_hash_bits, row, rows, xor_rows,
    ValidatedCircuit,
};
use crate::{Config, Stats};
use rand_core::{CryptoRng, RngCore};
use webproof_circuits::{Circuit, Gate};
use webproof_core::cot::RandomCotSender;
use webproof_core::error::Result;
use webproof_core::{Block, Channel, Error, Io};

/// An authenticated bit held by the verifier: its key `K` (`lsb(K) = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifierBit(pub(crate) Block);

impl VerifierBit {
    /// The key `K = M ^ value * Delta`.
    #[inline(always)]
    pub fn key(self) -> Block {
        self.0
    }
}

/// The verifier of a QuickSilver proof over COT sender `C` and transport `T`.
pub struct Verifier<C, T> {
    cot: C,
    ch: Channel<T>,
    cfg: Config,
    delta: Block,
    keys: Vec<Block>,
    key_pos: usize,
    /// Correction bits of the segment being consumed.
    frame_words: Vec<u64>,
    frame_bits: usize,
    frame_pos: usize,
    /// Challenges of the segment being consumed.
    chi: ChiStream,
    /// `sum chi_i K_a K_b` and `sum chi_i K_c` since the last check.
    acc0: Acc,
    acc1: Acc,
    /// Derives each segment's challenge from the prover's messages.
    chain: proto::ChallengeChain,
    wires: Vec<Block>,
    validated: ValidatedCircuit,
    stats: Stats,
    /// Sealed mode ([`Verifier::defer`]): what the held-back messages must be.
    expected: Option<Vec<Expected>>,
    /// Claimed bits ([`Verifier::defer_claims`]): their weighted keys.
    claims: Option<ClaimSum>,
}

/// One held-back message of a sealed proof, as the verifier expects it.
#[derive(Clone, Copy, Debug)]
enum Expected {
    /// An assertion: the hash of the MACs the asserted values imply.
    Hash([u8; 32]),
    /// A check: `B`, to be compared with `U ^ V * Delta`.
    Check(Block),
    /// The claimed bits' weighted MAC sum, to be compared with their
    /// weighted keys plus the claimed values' weight times `Delta`.
    Claims,
}

impl Expected {
    fn len(&self) -> usize {
        match self {
            Expected::Hash(_) => proto::HASH_LEN,
            Expected::Check(_) => proto::CHECK_LEN,
            Expected::Claims => Block::LEN,
        }
    }
}

impl<C: RandomCotSender, T: Io> Verifier<C, T> {
    /// Accept a proof session bound to no context (all-zero context; see
    /// [`Self::with_context`]): reads the prover's hello and checks that it
    /// uses the same parameters. Challenges are derived from the prover's
    /// messages (see the crate docs), so `rng` is not drawn from today; it
    /// stays in the signature for verifier-side randomness of later checks.
    pub async fn new(
        cot: C,
        ch: Channel<T>,
        cfg: Config,
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        Self::with_context(cot, ch, cfg, &[0; proto::CONTEXT_LEN], rng).await
    }

    /// [`Self::new`] for a proof bound to `context` (see
    /// [`crate::Prover::with_context`]): the challenges are derived from
    /// our own `context`, so a proof made under any other context fails
    /// the check.
    pub async fn with_context(
        cot: C,
        mut ch: Channel<T>,
        cfg: Config,
        context: &[u8; 32],
        rng: &mut (impl RngCore + CryptoRng),
    ) -> Result<Self> {
        cfg.validate()?;
        let hello = ch.recv(proto::HELLO_LEN).await?;
        proto::check_hello(&hello, &cfg)?;
        let _ = rng;
        let delta = cot.delta();
        if !delta.lsb() {
            return Err(Error::Usage("COT sender's Delta must have lsb 1".into()));
        }
        Ok(Verifier {
            cot,
            ch,
            cfg,
            delta,
            keys: Vec::new(),
            key_pos: 0,
            frame_words: Vec::with_capacity(cfg.segment_bits / 64),
            frame_bits: 0,
            frame_pos: 0,
            chi: ChiStream::new(Block::ZERO),
            acc0: Acc::default(),
            acc1: Acc::default(),
            chain: proto::ChallengeChain::new(context, &hello),
            wires: Vec::new(),
            validated: ValidatedCircuit::default(),
            stats: Stats::default(),
            expected: None,
            claims: None,
        })
    }

    /// Work counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The channel's byte counters.
    pub fn channel_stats(&self) -> webproof_core::ChannelStats {
        self.ch.stats()
    }

    /// A public constant.
    #[inline(always)]
    pub fn constant(&self, value: bool) -> VerifierBit {
        VerifierBit(Block(value as u128) ^ Block::select(value, self.delta))
    }

    /// `a ^ b` (free).
    #[inline(always)]
    pub fn xor(&self, a: VerifierBit, b: VerifierBit) -> VerifierBit {
        VerifierBit(a.0 ^ b.0)
    }

    /// `!a` (free).
    #[inline(always)]
    pub fn not(&self, a: VerifierBit) -> VerifierBit {
        VerifierBit(a.0 ^ Block::ONE ^ self.delta)
    }

    /// The global `Delta` of this proof (the COT sender's). A garbler that
    /// shares the COT sender compares it with its own offset before
    /// importing labels; it is revealed to the prover only after a sealed
    /// proof is sealed ([`Self::seal`]).
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// The key of a bit imported from a garbled circuit whose wire has
    /// 0-label `zero_label` under this proof's `Delta` (the prover's side
    /// and the argument: [`Prover::import_label`](crate::Prover::import_label)):
    /// `L0 ^ p * Delta` for the bit `lsb(L)`, plus the public constant
    /// `p = lsb(L0)`, which is `L0 ^ p`: `L0` with its lsb cleared.
    #[inline(always)]
    pub fn import_label(&self, zero_label: Block) -> VerifierBit {
        VerifierBit(zero_label.with_lsb(false))
    }

    /// [`Self::import_label`] for many 0-labels.
    pub fn import_labels(&self, zero_labels: &[Block]) -> Vec<VerifierBit> {
        zero_labels.iter().map(|&z| self.import_label(z)).collect()
    }

    /// Receive commitments to `n` private bits of the prover.
    pub async fn commit(&mut self, n: usize) -> Result<Vec<VerifierBit>> {
        let mut out = Vec::with_capacity(n.min(1 << 20));
        for _ in 0..n {
            out.push(self.commit_bit().await?);
        }
        Ok(out)
    }

    /// Receive commitments to `n` private bytes (8 bits each, lsb first).
    pub async fn commit_bytes(&mut self, n: usize) -> Result<Vec<VerifierBit>> {
        let bits = n
            .checked_mul(8)
            .ok_or_else(|| Error::Usage("too many bytes".into()))?;
        self.commit(bits).await
    }

    async fn commit_bit(&mut self) -> Result<VerifierBit> {
        self.ensure_slot().await?;
        let k = self.keys[self.key_pos];
        self.key_pos += 1;
        let d = self.next_bit();
        self.stats.committed_bits += 1;
        self.stats.cots_used += 1;
        Ok(VerifierBit(self.add_correction(k, d)))
    }

    /// `a & b`, as the prover computes it; checked at the next [`check`](Self::check).
    pub async fn and(&mut self, a: VerifierBit, b: VerifierBit) -> Result<VerifierBit> {
        self.ensure_slot().await?;
        let k = self.keys[self.key_pos];
        self.key_pos += 1;
        let d = self.next_bit();
        let kc = self.add_correction(k, d);
        let chi = self.chi.next_chi();
        self.acc0.add_mul(chi, a.0.gf_mul(b.0));
        self.acc1.add_mul(chi, kc);
        self.stats.and_gates += 1;
        self.stats.cots_used += 1;
        Ok(VerifierBit(kc))
    }

    /// Evaluate `circuit` on authenticated inputs, mirroring the prover.
    pub async fn eval(
        &mut self,
        circuit: &Circuit,
        inputs: &[&[VerifierBit]],
    ) -> Result<Vec<Vec<VerifierBit>>> {
        self.eval_batch(circuit, 1, inputs).await
    }

    /// Evaluate `n` instances at once, mirroring the prover's
    /// [`eval_batch`](crate::Prover::eval_batch) (same input and output layout).
    pub async fn eval_batch(
        &mut self,
        circuit: &Circuit,
        n: usize,
        inputs: &[&[VerifierBit]],
    ) -> Result<Vec<Vec<VerifierBit>>> {
        let n = check_batch(circuit, n, inputs.iter().map(|i| i.len()))?;
        self.validated.check(circuit)?;
        // The table is reused without clearing: every wire is written before
        // it is read, and a stale entry would still be a valid authenticated bit.
        let mut w = std::mem::take(&mut self.wires);
        let rows = circuit.num_wires as usize * n;
        if w.len() < rows {
            w.resize(rows, Block::ZERO);
        }
        for (group, bits) in circuit.inputs.iter().zip(inputs) {
            load_group(&mut w, n, group, bits.iter().map(|b| b.0));
        }
        let mut at = (0, 0);
        let mut room = first_room(circuit);
        while at.0 < circuit.gates.len() {
            self.ensure_room(room).await?;
            (at, room) = self.eval_run(circuit, n, at, &mut w);
        }
        let out = circuit
            .outputs
            .iter()
            .map(|g| {
                (0..n)
                    .flat_map(|i| g.iter().map(move |&id| id as usize * n + i))
                    .map(|k| VerifierBit(w[k]))
                    .collect()
            })
            .collect();
        self.wires = w;
        Ok(out)
    }

    /// Evaluate gates from `at` = (gate, instance) while keys and received
    /// corrections last; returns where it stopped and the room the next
    /// gate needs.
    fn eval_run(
        &mut self,
        circuit: &Circuit,
        n: usize,
        at: (usize, usize),
        w: &mut [Block],
    ) -> ((usize, usize), usize) {
        let gates = &circuit.gates;
        let budget = (self.keys.len() - self.key_pos).min(self.frame_bits - self.frame_pos);
        let keys = &self.keys[self.key_pos..self.key_pos + budget];
        let delta = self.delta;
        let not_mask = Block::ONE ^ delta;
        let (mut acc0, mut acc1) = (self.acc0, self.acc1);
        let mut pos = self.frame_pos;
        let mut used = 0;
        let mut ands = 0;
        let mut room = 1;
        let (mut i, mut inst) = at;
        'gates: while i < gates.len() {
            match gates[i] {
                Gate::Xor { a, b, out } => xor_rows(w, n, a, b, out),
                Gate::Inv { a, out } => {
                    let (src, dst) = rows(w, n, out);
                    for (o, x) in dst.iter_mut().zip(row(src, n, a)) {
                        *o = *x ^ not_mask;
                    }
                }
                Gate::Const { value, out } => {
                    rows(w, n, out)
                        .1
                        .fill(Block(value as u128) ^ Block::select(value, delta));
                }
                Gate::And { a, b, out } => {
                    let (a, b, out) = (a as usize * n, b as usize * n, out as usize * n);
                    while inst < n {
                        if used == budget {
                            break 'gates;
                        }
                        let d = (self.frame_words[pos >> 6] >> (pos & 63)) & 1 == 1;
                        pos += 1;
                        let kc = corrected_key(keys[used], d, delta);
                        let chi = self.chi.next_chi();
                        acc0.add_mul(chi, w[a + inst].gf_mul(w[b + inst]));
                        acc1.add_mul(chi, kc);
                        w[out + inst] = kc;
                        used += 1;
                        ands += 1;
                        inst += 1;
                    }
                    inst = 0;
                }
                Gate::ByteInv { inputs, out } => {
                    let ids = circuit.byte_inv_inputs[inputs as usize];
                    let out = out as usize * n;
                    while inst < n {
                        if n - inst >= 4 && budget - used >= 32 {
                            // Four instances in lanes, as the prover may do.
                            let k = gather4(w, n, &ids, inst);
                            let mut l = [[Block::ZERO; 4]; 8];
                            for lane in 0..4 {
                                for (j, row) in l.iter_mut().enumerate() {
                                    let d = (self.frame_words[pos >> 6] >> (pos & 63)) & 1 == 1;
                                    pos += 1;
                                    row[lane] = corrected_key(keys[used + 8 * lane + j], d, delta);
                                }
                            }
                            for (j, row) in l.iter().enumerate() {
                                let at = out + j * n + inst;
                                w[at..at + 4].copy_from_slice(row);
                            }
                            for [ab, c] in byteinv::verifier_terms_x4(&k, &l) {
                                let chi = self.chi.next_chi();
                                acc0.add_mul(chi, ab);
                                acc1.add_mul(chi, c);
                            }
                            used += 32;
                            self.stats.byte_invs += 4;
                            inst += 4;
                            continue;
                        }
                        if budget - used < 8 {
                            room = 8;
                            break 'gates;
                        }
                        let k = ids.map(|id| w[id as usize * n + inst]);
                        let mut l = [Block::ZERO; 8];
                        for (j, slot) in l.iter_mut().enumerate() {
                            let d = (self.frame_words[pos >> 6] >> (pos & 63)) & 1 == 1;
                            pos += 1;
                            *slot = corrected_key(keys[used + j], d, delta);
                            w[out + j * n + inst] = *slot;
                        }
                        for [ab, c] in byteinv::verifier_terms(&k, &l) {
                            let chi = self.chi.next_chi();
                            acc0.add_mul(chi, ab);
                            acc1.add_mul(chi, c);
                        }
                        used += 8;
                        self.stats.byte_invs += 1;
                        inst += 1;
                    }
                    inst = 0;
                }
            }
            i += 1;
        }
        self.acc0 = acc0;
        self.acc1 = acc1;
        self.frame_pos = pos;
        self.key_pos += used;
        self.stats.and_gates += ands as u64;
        self.stats.cots_used += used as u64;
        ((i, inst), room)
    }

    /// Pack up to 128 bits into a field element (free).
    pub fn pack(&self, bits: &[VerifierBit]) -> Result<VerifierElem> {
        if bits.len() > 128 {
            return Err(Error::Usage("at most 128 bits pack into an element".into()));
        }
        Ok(VerifierElem {
            key: pack(bits.iter().map(|b| b.0)),
        })
    }

    /// A public field constant.
    pub fn elem_constant(&self, c: Block) -> VerifierElem {
        VerifierElem {
            key: c ^ c.gf_mul(self.delta),
        }
    }

    /// The product of two elements, as committed by the prover; checked at
    /// the next [`check`](Self::check).
    pub async fn mul(&mut self, x: VerifierElem, y: VerifierElem) -> Result<VerifierElem> {
        let mut zbits = [VerifierBit(Block::ZERO); 128];
        for slot in zbits.iter_mut() {
            *slot = self.commit_bit().await?;
        }
        let z = self.pack(&zbits)?;
        let chi = self.chi.next_chi();
        self.acc0.add_mul(chi, x.key.gf_mul(y.key));
        self.acc1.add_mul(chi, z.key);
        self.stats.committed_bits -= 128;
        self.stats.elem_muls += 1;
        Ok(z)
    }

    /// Receive the values of opened bits; fails if any value does not match its MAC.
    pub async fn open(&mut self, bits: &[VerifierBit]) -> Result<Vec<bool>> {
        self.refuse_when_sealed("open")?;
        self.expect_boundary()?;
        let nbytes = bits.len().div_ceil(8);
        let msg = self.ch.recv_exact(nbytes + proto::HASH_LEN).await?;
        let values = proto::unpack_bools(&msg[..nbytes], bits.len())?;
        let expected = mac_hash_bits(
            bits.iter()
                .zip(&values)
                .map(|(k, &x)| k.0 ^ Block::select(x, self.delta)),
        );
        if expected[..] != msg[nbytes..] {
            return Err(Error::CheckFailed(
                "opened values do not match their MACs".into(),
            ));
        }
        Ok(values)
    }

    /// Check the prover's claim that `bits` equal the public `values`.
    pub async fn assert_public(&mut self, bits: &[VerifierBit], values: &[bool]) -> Result<()> {
        if bits.len() != values.len() {
            return Err(Error::Usage("assert_public: lengths differ".into()));
        }
        self.expect_boundary()?;
        let expected = mac_hash_bits(
            bits.iter()
                .zip(values)
                .map(|(k, &x)| k.0 ^ Block::select(x, self.delta)),
        );
        if let Some(exp) = self.expected.as_mut() {
            exp.push(Expected::Hash(expected));
            return Ok(());
        }
        let msg = self.ch.recv_exact(proto::HASH_LEN).await?;
        if expected[..] != msg[..] {
            return Err(Error::CheckFailed(
                "asserted bits do not equal the public values".into(),
            ));
        }
        Ok(())
    }

    /// Check the prover's claim that every bit in `bits` is zero.
    pub async fn assert_zero(&mut self, bits: &[VerifierBit]) -> Result<()> {
        self.assert_public(bits, &vec![false; bits.len()]).await
    }

    /// The counterpart of [`Prover::assert_claimed`](crate::Prover::assert_claimed).
    /// With [`Self::defer_claims`] the values are the prover's, not yet
    /// known: `values` is not read (pass any of the right length) and the
    /// real ones, in claim order, go to [`SealedVerifier::verify_claimed`].
    /// Without it, [`Self::assert_public`] of `values`.
    pub async fn assert_claimed(&mut self, bits: &[VerifierBit], values: &[bool]) -> Result<()> {
        let Some(claims) = self.claims.as_mut() else {
            return self.assert_public(bits, values).await;
        };
        if bits.len() != values.len() {
            return Err(Error::Usage("assert_claimed: lengths differ".into()));
        }
        for k in bits {
            claims.add(k.0);
        }
        Ok(())
    }

    /// Receive the values of opened elements; fails on a MAC mismatch.
    pub async fn open_elems(&mut self, elems: &[VerifierElem]) -> Result<Vec<Block>> {
        self.refuse_when_sealed("open_elems")?;
        self.expect_boundary()?;
        let n = elems.len();
        let len = n
            .checked_mul(16)
            .and_then(|l| l.checked_add(proto::HASH_LEN))
            .ok_or_else(|| Error::Usage("too many elements".into()))?;
        let msg = self.ch.recv_exact(len).await?;
        let values: Vec<Block> = msg[..n * 16]
            .chunks_exact(16)
            .map(|c| Block::from_bytes(c.try_into().expect("16 bytes")))
            .collect();
        let expected = mac_hash(
            elems
                .iter()
                .zip(&values)
                .map(|(e, v)| e.key ^ v.gf_mul(self.delta)),
        );
        if expected[..] != msg[n * 16..] {
            return Err(Error::CheckFailed(
                "opened elements do not match their MACs".into(),
            ));
        }
        Ok(values)
    }

    /// Check the prover's claim that elements equal public `values`.
    pub async fn assert_elems_public(
        &mut self,
        elems: &[VerifierElem],
        values: &[Block],
    ) -> Result<()> {
        if elems.len() != values.len() {
            return Err(Error::Usage("assert_elems_public: lengths differ".into()));
        }
        self.expect_boundary()?;
        let expected = mac_hash(
            elems
                .iter()
                .zip(values)
                .map(|(e, v)| e.key ^ v.gf_mul(self.delta)),
        );
        if let Some(exp) = self.expected.as_mut() {
            exp.push(Expected::Hash(expected));
            return Ok(());
        }
        let msg = self.ch.recv_exact(proto::HASH_LEN).await?;
        if expected[..] != msg[..] {
            return Err(Error::CheckFailed(
                "asserted elements do not equal the public values".into(),
            ));
        }
        Ok(())
    }

    /// Run the batched check of every multiplication since the last check.
    /// Tells the prover the verdict; returns `CheckFailed` if it cheated.
    pub async fn check(&mut self) -> Result<()> {
        self.expect_boundary()?;
        let mut mask_keys = [Block::ZERO; 128];
        for k in mask_keys.iter_mut() {
            self.ensure_key().await?;
            *k = self.keys[self.key_pos];
            self.key_pos += 1;
        }
        self.stats.cots_used += 128;
        let b_star = pack(mask_keys.iter().copied());
        let b = std::mem::take(&mut self.acc0).value()
            ^ std::mem::take(&mut self.acc1).value().gf_mul(self.delta)
            ^ b_star;
        if let Some(exp) = self.expected.as_mut() {
            exp.push(Expected::Check(b));
            self.stats.checks += 1;
            return Ok(());
        }
        let msg = self.ch.recv_exact(proto::CHECK_LEN).await?;
        let (u, v) = proto::decode_pair(&msg);
        let ok = b == u ^ v.gf_mul(self.delta);
        let verdict = if ok {
            proto::VERDICT_ACCEPT
        } else {
            proto::VERDICT_REJECT
        };
        self.ch.send(&[verdict]).await?;
        self.ch.flush().await?;
        if !ok {
            return Err(Error::CheckFailed(
                "multiplication check failed: the prover's gates are inconsistent".into(),
            ));
        }
        self.stats.checks += 1;
        Ok(())
    }

    /// Check everything and end the session, giving back the COT source and
    /// the channel.
    pub async fn finish(mut self) -> Result<(C, Channel<T>)> {
        self.refuse_when_sealed("finish (use seal)")?;
        self.check().await?;
        Ok((self.cot, self.ch))
    }

    /// Enter sealed mode, at the same point as the prover's
    /// [`Prover::defer`](crate::Prover::defer): assertions and checks are
    /// recorded and verified against the prover's opening at
    /// [`SealedVerifier::verify`]. `open` and `open_elems` are refused.
    pub fn defer(&mut self) {
        if self.expected.is_none() {
            self.expected = Some(Vec::new());
        }
    }

    /// Whether [`Self::defer`] is in force.
    pub fn is_deferred(&self) -> bool {
        self.expected.is_some()
    }

    /// The counterpart of [`Prover::defer_claims`](crate::Prover::defer_claims),
    /// with the same `binding`.
    pub fn defer_claims(&mut self, binding: [u8; 32]) -> Result<()> {
        if self.expected.is_none() {
            return Err(Error::Usage("defer_claims needs defer".into()));
        }
        if self.claims.is_none() {
            self.claims = Some(ClaimSum::new(binding));
        }
        Ok(())
    }

    /// The counterpart of [`Prover::seal`](crate::Prover::seal): record the
    /// final check and receive the prover's commitment. Only after this may
    /// `Delta` be revealed to the prover ([`SealedVerifier::delta`]).
    pub async fn seal(mut self) -> Result<SealedVerifier<C, T>> {
        if self.expected.is_none() {
            return Err(Error::Usage("seal without defer".into()));
        }
        self.check().await?;
        let mut expected = self.expected.take().expect("checked");
        let claims = self.claims.take();
        if claims.is_some() {
            expected.push(Expected::Claims);
        }
        let msg = self.ch.recv_exact(proto::HASH_LEN).await?;
        let commitment: [u8; 32] = msg[..].try_into().expect("32 bytes");
        Ok(SealedVerifier {
            cot: self.cot,
            ch: self.ch,
            delta: self.delta,
            expected,
            claims,
            commitment,
        })
    }

    fn refuse_when_sealed(&self, what: &str) -> Result<()> {
        if self.expected.is_some() {
            return Err(Error::Usage(format!(
                "{what} is not available in sealed mode"
            )));
        }
        Ok(())
    }

    /// The counterpart of the prover's `sync`: lends the channel at a
    /// message boundary.
    pub async fn sync(&mut self) -> Result<&mut Channel<T>> {
        self.expect_boundary()?;
        Ok(&mut self.ch)
    }

    /// At an opening, assertion or check every received correction must
    /// have been used: otherwise prover and verifier disagree on the statement.
    fn expect_boundary(&self) -> Result<()> {
        if self.frame_pos != self.frame_bits {
            return Err(Error::Malformed(format!(
                "the prover sent {} correction bits beyond the statement",
                self.frame_bits - self.frame_pos
            )));
        }
        Ok(())
    }

    async fn ensure_slot(&mut self) -> Result<()> {
        self.ensure_room(1).await
    }

    /// The counterpart of the prover's `ensure_room`: `n` keys of one batch
    /// (dropping the rest of a batch that is too short) and `n` corrections
    /// of one segment. A prover that split a byte inversion's corrections
    /// across segments is out of step.
    async fn ensure_room(&mut self, n: usize) -> Result<()> {
        if self.keys.len() - self.key_pos < n {
            self.key_pos = self.keys.len();
        }
        self.ensure_key().await?;
        if self.frame_pos == self.frame_bits {
            self.recv_segment().await?;
        }
        if self.frame_bits - self.frame_pos < n {
            return Err(Error::Malformed(format!(
                "a segment ends {} corrections into a {n}-bit gadget",
                self.frame_bits - self.frame_pos
            )));
        }
        Ok(())
    }

    async fn ensure_key(&mut self) -> Result<()> {
        if self.key_pos < self.keys.len() {
            return Ok(());
        }
        // The prover closes its segment before extending; a segment that runs
        // past a COT batch means the transcripts are out of step.
        self.expect_boundary()?;
        self.keys.clear();
        let n = self.cfg.cot_batch;
        self.cot.extend(&mut self.ch, n, &mut self.keys).await?;
        if self.keys.len() != n {
            return Err(Error::Usage(format!(
                "COT source gave {} COTs where {n} were asked",
                self.keys.len()
            )));
        }
        self.key_pos = 0;
        Ok(())
    }

    /// Read the next segment of corrections; its challenge is derived from it.
    async fn recv_segment(&mut self) -> Result<()> {
        let max_bits = self.cfg.segment_bits.min(self.keys.len() - self.key_pos);
        let msg = self.ch.recv(proto::max_segment_len(&self.cfg)).await?;
        let n = proto::decode_segment(&msg, max_bits, &mut self.frame_words)?;
        self.frame_bits = n;
        self.frame_pos = 0;
        self.chi = ChiStream::new(self.chain.next_seed(&msg));
        Ok(())
    }

    #[inline(always)]
    fn next_bit(&mut self) -> bool {
        let p = self.frame_pos;
        self.frame_pos += 1;
        (self.frame_words[p >> 6] >> (p & 63)) & 1 == 1
    }

    /// The key of `x = r ^ d` from the key of `r`: adds the public constant `d`.
    #[inline(always)]
    fn add_correction(&self, k: Block, d: bool) -> Block {
        corrected_key(k, d, self.delta)
    }
}

/// A sealed proof on the verifier's side: the prover is committed to its
/// held-back messages, so `Delta` may now be revealed; [`Self::verify`]
/// reads the opening.
pub struct SealedVerifier<C, T> {
    cot: C,
    ch: Channel<T>,
    delta: Block,
    expected: Vec<Expected>,
    claims: Option<ClaimSum>,
    commitment: [u8; 32],
}

impl<C: RandomCotSender, T: Io> SealedVerifier<C, T> {
    /// `Delta`, to reveal to the prover now that it is committed.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// The COT source and the channel, to reveal `Delta` and what the
    /// prover's audit needs.
    pub fn parts(&mut self) -> (&mut C, &mut Channel<T>) {
        (&mut self.cot, &mut self.ch)
    }

    /// Bytes the opening must have.
    pub fn opening_len(&self) -> usize {
        32 + self.expected.iter().map(Expected::len).sum::<usize>()
    }

    /// Claimed bits ([`Verifier::assert_claimed`]) whose values
    /// [`Self::verify_claimed`] must be given.
    pub fn claimed_len(&self) -> usize {
        self.claims.as_ref().map_or(0, ClaimSum::count)
    }

    /// Read the prover's opening and check it: the commitment, then every
    /// held assertion and check in order. Returns the COT source and the
    /// channel; `CheckFailed` if the prover cheated. A proof with claims
    /// takes [`Self::verify_claimed`].
    pub async fn verify(self) -> Result<(C, Channel<T>)> {
        self.verify_claimed(&[]).await
    }

    /// [`Self::verify`] of a proof with claims: `claimed` are the values
    /// the prover disclosed (and the caller checked against its binding),
    /// in the order of the [`Verifier::assert_claimed`] calls.
    pub async fn verify_claimed(mut self, claimed: &[bool]) -> Result<(C, Channel<T>)> {
        if claimed.len() != self.claimed_len() {
            return Err(Error::CheckFailed(format!(
                "{} claimed values disclosed for {} claimed bits",
                claimed.len(),
                self.claimed_len()
            )));
        }
        let n = self.opening_len();
        let msg = self.ch.recv_exact(n).await?;
        let salt: [u8; 32] = msg[..32].try_into().expect("32 bytes");
        if proto::seal_commitment(&salt, &msg[32..]) != self.commitment {
            return Err(Error::CheckFailed(
                "the opening does not match the prover's commitment".into(),
            ));
        }
        let mut at = 32;
        for e in &self.expected {
            let part = &msg[at..at + e.len()];
            at += e.len();
            match e {
                Expected::Hash(h) => {
                    if h[..] != part[..] {
                        return Err(Error::CheckFailed(
                            "asserted bits do not equal the public values".into(),
                        ));
                    }
                }
                Expected::Check(b) => {
                    let (u, v) = proto::decode_pair(part);
                    if *b != u ^ v.gf_mul(self.delta) {
                        return Err(Error::CheckFailed(
                            "multiplication check failed: the prover's gates are inconsistent"
                                .into(),
                        ));
                    }
                }
                Expected::Claims => {
                    let c = self.claims.as_ref().expect("pushed with the claims");
                    let held = Block::from_bytes(part.try_into().expect("16 bytes"));
                    if held != c.value() ^ c.weigh(claimed).gf_mul(self.delta) {
                        return Err(Error::CheckFailed(
                            "the claimed values are not the ones the proof asserted".into(),
                        ));
                    }
                }
            }
        }
        Ok((self.cot, self.ch))
    }
}

/// The key of `x = r ^ d` from the key `k` of `r`: adds the public constant `d`.
#[inline(always)]
fn corrected_key(k: Block, d: bool, delta: Block) -> Block {
    Block(k.0 ^ d as u128) ^ Block::select(d, delta)
}

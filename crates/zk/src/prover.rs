//! The proving side: holds the COT receiver's MACs, sends corrections and
//! answers the batched check.

use crate::byteinv;
use crate::check::{pack, Acc, ChiStream, CHI_CHUNK};
use crate::claims::ClaimSum;
use crate::elem::ProverElem;
use crate::proto;
use crate::{Config, Stats};
use sha2::{Digest, Sha256};
use webproof_circuits::{Circuit, Gate};
use webproof_core::cot::RandomCotReceiver;
use webproof_core::error::Result;
use webproof_core::lanes::X4;
use webproof_core::{Block, Channel, Error, Io};

/// An authenticated bit held by the prover: its MAC, whose lsb is the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProverBit(pub(crate) Block);

impl ProverBit {
    /// The bit's value.
    #[inline(always)]
    pub fn value(self) -> bool {
        self.0.lsb()
    }
    /// The MAC `M = K ^ value * Delta`.
    #[inline(always)]
    pub fn mac(self) -> Block {
        self.0
    }
}

/// Check terms `(A0, A1)` of one multiplication: `A0 = M_a M_b`,
/// `A1 = a M_b + b M_a + M_c`.
type Term = [Block; 2];

/// The prover of a QuickSilver proof over COT receiver `C` and transport `T`.
pub struct Prover<C, T> {
    cot: C,
    ch: Channel<T>,
    cfg: Config,
    /// Current COT batch and how much of it is used.
    cots: Vec<Block>,
    cot_pos: usize,
    /// Correction bits of the open segment, packed.
    seg_words: Vec<u64>,
    seg_bits: usize,
    /// Check terms of the open segment.
    pub(crate) seg_terms: Vec<Term>,
    /// Derives each segment's challenge from what was sent.
    chain: proto::ChallengeChain,
    /// Folded check sums of all sent segments.
    acc0: Acc,
    acc1: Acc,
    frame: Vec<u8>,
    wires: Vec<Block>,
    validated: ValidatedCircuit,
    stats: Stats,
    /// Sealed mode ([`Prover::defer`]): the MAC-dependent messages held back
    /// until [`SealedProver::open`].
    held: Option<Vec<u8>>,
    /// Claimed bits ([`Prover::defer_claims`]): their weighted MACs.
    claims: Option<ClaimSum>,
    #[cfg(test)]
    pub(crate) cheat: crate::tests::Cheat,
}

impl<C: RandomCotReceiver, T: Io> Prover<C, T> {
    /// Start a proof session bound to no context (all-zero context): sends
    /// the hello with our parameters. For tests and benchmarks; sessions
    /// that carry a statement use [`Self::with_context`].
    pub async fn new(cot: C, ch: Channel<T>, cfg: Config) -> Result<Self> {
        Self::with_context(cot, ch, cfg, &[0; proto::CONTEXT_LEN]).await
    }

    /// Start a proof session whose Fiat–Shamir challenges are bound to
    /// `context`, 32 bytes both parties compute from what they already
    /// agree on (typically a digest of the session's transcript and of the
    /// statement): the verifier must pass the same `context` to
    /// [`crate::Verifier::with_context`], or the proof fails its check.
    /// Sends the hello with our parameters.
    pub async fn with_context(
        cot: C,
        mut ch: Channel<T>,
        cfg: Config,
        context: &[u8; 32],
    ) -> Result<Self> {
        cfg.validate()?;
        let hello = proto::encode_hello(&cfg);
        ch.send(&hello).await?;
        ch.flush().await?;
        Ok(Prover {
            cot,
            ch,
            cfg,
            cots: Vec::new(),
            cot_pos: 0,
            seg_words: vec![0; cfg.segment_bits / 64],
            seg_bits: 0,
            seg_terms: Vec::new(),
            chain: proto::ChallengeChain::new(context, &hello),
            acc0: Acc::default(),
            acc1: Acc::default(),
            frame: Vec::new(),
            wires: Vec::new(),
            validated: ValidatedCircuit::default(),
            stats: Stats::default(),
            held: None,
            claims: None,
            #[cfg(test)]
            cheat: Default::default(),
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
    pub fn constant(&self, value: bool) -> ProverBit {
        ProverBit(Block(value as u128))
    }

    /// `a ^ b` (free).
    #[inline(always)]
    pub fn xor(&self, a: ProverBit, b: ProverBit) -> ProverBit {
        ProverBit(a.0 ^ b.0)
    }

    /// `!a` (free).
    #[inline(always)]
    pub fn not(&self, a: ProverBit) -> ProverBit {
        ProverBit(a.0 ^ Block::ONE)
    }

    /// Import a bit authenticated outside this engine under the same `Delta`:
    /// a garbled-circuit label `L = L0 ^ value * Delta` whose 0-label `L0`
    /// the verifier holds (free-XOR with the verifier's COT `Delta`), or a
    /// COT MAC that carries a chosen bit (see `webproof-mpc`'s `transfer`).
    ///
    /// The label's lsb is the point-and-permute bit `value ^ lsb(L0)`, not
    /// the value; the engine's convention is `lsb(MAC) = value` and
    /// `lsb(key) = 0`. So the bit enters as the authenticated bit `lsb(L)`
    /// with MAC `L` and key `L0 ^ lsb(L0) * Delta`, plus the constant
    /// `p = lsb(L0)`: MAC `L ^ p`, key `L0 ^ p` (see
    /// [`Verifier::import_label`](crate::Verifier::import_label)), that is
    /// `L` with its lsb replaced by `value`. `p` need not be sent: the
    /// prover knows `value` and hence `p = lsb(L) ^ value`.
    ///
    /// Nothing is sent. A wrong `value` gives a MAC that differs from the
    /// valid one by `Delta ^ 1`, which the prover cannot correct without
    /// `Delta`: every later opening, assertion or check that depends on the
    /// bit fails except with probability about `2^-127`.
    #[inline(always)]
    pub fn import_label(&self, label: Block, value: bool) -> ProverBit {
        ProverBit(label.with_lsb(value))
    }

    /// [`Self::import_label`] for many labels.
    pub fn import_labels(&self, labels: &[Block], values: &[bool]) -> Result<Vec<ProverBit>> {
        if labels.len() != values.len() {
            return Err(Error::Usage(format!(
                "import_labels: {} labels for {} values",
                labels.len(),
                values.len()
            )));
        }
        Ok(labels
            .iter()
            .zip(values)
            .map(|(&l, &v)| self.import_label(l, v))
            .collect())
    }

    /// Commit private bits (one COT and one sent bit each).
    pub async fn commit(&mut self, bits: &[bool]) -> Result<Vec<ProverBit>> {
        let mut out = Vec::with_capacity(bits.len());
        for &x in bits {
            out.push(self.commit_bit(x).await?);
        }
        Ok(out)
    }

    /// Commit private bytes, least significant bit of each byte first.
    pub async fn commit_bytes(&mut self, bytes: &[u8]) -> Result<Vec<ProverBit>> {
        let bits: Vec<bool> = bytes
            .iter()
            .flat_map(|b| (0..8).map(move |i| (b >> i) & 1 == 1))
            .collect();
        self.commit(&bits).await
    }

    async fn commit_bit(&mut self, x: bool) -> Result<ProverBit> {
        self.ensure_slot().await?;
        let r = self.cots[self.cot_pos];
        self.cot_pos += 1;
        let d = x ^ r.lsb();
        self.push_bit(d);
        self.stats.committed_bits += 1;
        self.stats.cots_used += 1;
        Ok(ProverBit(Block(r.0 ^ d as u128)))
    }

    /// `a & b` (one COT and one sent bit; checked at the next [`check`](Self::check)).
    pub async fn and(&mut self, a: ProverBit, b: ProverBit) -> Result<ProverBit> {
        self.ensure_slot().await?;
        let r = self.cots[self.cot_pos];
        self.cot_pos += 1;
        #[allow(unused_mut)]
        let mut c = a.value() & b.value();
        #[cfg(test)]
        {
            c ^= self.cheat.flips(self.stats.and_gates);
        }
        let d = c ^ r.lsb();
        self.push_bit(d);
        let mc = Block(r.0 ^ d as u128);
        self.seg_terms.push(and_term(a.0, b.0, mc));
        self.stats.and_gates += 1;
        self.stats.cots_used += 1;
        Ok(ProverBit(mc))
    }

    /// Evaluate `circuit` on authenticated inputs (one slice per input group)
    /// and return its authenticated outputs (one vector per output group).
    pub async fn eval(
        &mut self,
        circuit: &Circuit,
        inputs: &[&[ProverBit]],
    ) -> Result<Vec<Vec<ProverBit>>> {
        self.eval_batch(circuit, 1, inputs).await
    }

    /// Evaluate `circuit` on `n` instances at once (gate by gate, each gate
    /// for every instance: one pass over the circuit instead of `n`).
    ///
    /// Input group `g` of `s` bits is given either as `s` bits, shared by
    /// every instance (round keys), or as `n * s` bits, instance `i` at
    /// `i * s..(i + 1) * s`. Output groups come back the second way.
    pub async fn eval_batch(
        &mut self,
        circuit: &Circuit,
        n: usize,
        inputs: &[&[ProverBit]],
    ) -> Result<Vec<Vec<ProverBit>>> {
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
                    .map(|k| ProverBit(w[k]))
                    .collect()
            })
            .collect();
        self.wires = w;
        Ok(out)
    }

    /// Evaluate gates from `at` = (gate, instance) until the COT batch or
    /// the segment is full; returns where it stopped and the room (COTs and
    /// segment bits) that the next gate needs. Row `id` of the table holds
    /// wire `id` of all `n` instances.
    fn eval_run(
        &mut self,
        circuit: &Circuit,
        n: usize,
        at: (usize, usize),
        w: &mut [Block],
    ) -> ((usize, usize), usize) {
        let gates = &circuit.gates;
        let budget = (self.cots.len() - self.cot_pos).min(self.cfg.segment_bits - self.seg_bits);
        let cots = &self.cots[self.cot_pos..self.cot_pos + budget];
        let mut used = 0;
        let mut ands = 0;
        let mut nbits = self.seg_bits;
        let mut room = 1;
        let (mut i, mut inst) = at;
        'gates: while i < gates.len() {
            match gates[i] {
                Gate::Xor { a, b, out } => xor_rows(w, n, a, b, out),
                Gate::Inv { a, out } => {
                    let (src, dst) = rows(w, n, out);
                    for (o, x) in dst.iter_mut().zip(row(src, n, a)) {
                        *o = *x ^ Block::ONE;
                    }
                }
                Gate::Const { value, out } => {
                    rows(w, n, out).1.fill(Block(value as u128));
                }
                Gate::And { a, b, out } => {
                    let (a, b, out) = (a as usize * n, b as usize * n, out as usize * n);
                    while inst < n {
                        if used == budget {
                            break 'gates;
                        }
                        let (ma, mb) = (w[a + inst], w[b + inst]);
                        let r = cots[used];
                        #[allow(unused_mut)]
                        let mut c = ma.0 & mb.0 & 1;
                        #[cfg(test)]
                        {
                            c ^= self.cheat.flips(self.stats.and_gates + ands as u64) as u128;
                        }
                        let d = c ^ (r.0 & 1);
                        self.seg_words[nbits >> 6] |= (d as u64) << (nbits & 63);
                        nbits += 1;
                        let mc = Block(r.0 ^ d);
                        self.seg_terms.push(and_term(ma, mb, mc));
                        w[out + inst] = mc;
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
                            // Four instances in the lanes of one kernel; the
                            // same bits and terms, in the same order, as four
                            // single steps.
                            let m = gather4(w, n, &ids, inst);
                            let y: [u8; 4] = core::array::from_fn(|l| {
                                byteinv::byte_of(&core::array::from_fn(|j| m[j][l]))
                            });
                            #[allow(unused_mut)]
                            let mut t = y.map(webproof_circuits::gf256::inv);
                            #[cfg(test)]
                            for (l, tl) in t.iter_mut().enumerate() {
                                *tl ^= self.cheat.byte_inv_mask(self.stats.byte_invs + l as u64);
                            }
                            let mut mt = [[Block::ZERO; 4]; 8];
                            for (l, &tl) in t.iter().enumerate() {
                                for (k, row) in mt.iter_mut().enumerate() {
                                    let r = cots[used + 8 * l + k];
                                    let d = ((tl >> k) & 1) as u128 ^ (r.0 & 1);
                                    self.seg_words[nbits >> 6] |= (d as u64) << (nbits & 63);
                                    nbits += 1;
                                    row[l] = Block(r.0 ^ d);
                                }
                            }
                            for (k, row) in mt.iter().enumerate() {
                                let at = out + k * n + inst;
                                w[at..at + 4].copy_from_slice(row);
                            }
                            self.seg_terms
                                .extend(byteinv::prover_terms_x4(&m, &mt, y, t));
                            used += 32;
                            self.stats.byte_invs += 4;
                            inst += 4;
                            continue;
                        }
                        if budget - used < 8 {
                            room = 8;
                            break 'gates;
                        }
                        let m = ids.map(|id| w[id as usize * n + inst]);
                        let y = byteinv::byte_of(&m);
                        #[allow(unused_mut)]
                        let mut t = webproof_circuits::gf256::inv(y);
                        #[cfg(test)]
                        {
                            t ^= self.cheat.byte_inv_mask(self.stats.byte_invs);
                        }
                        let mut mt = [Block::ZERO; 8];
                        for (k, slot) in mt.iter_mut().enumerate() {
                            let r = cots[used + k];
                            let d = ((t >> k) & 1) as u128 ^ (r.0 & 1);
                            self.seg_words[nbits >> 6] |= (d as u64) << (nbits & 63);
                            nbits += 1;
                            *slot = Block(r.0 ^ d);
                            // Output bit k of every instance is row `out + k`.
                            w[out + k * n + inst] = *slot;
                        }
                        self.seg_terms.extend(byteinv::prover_terms(&m, &mt, y, t));
                        used += 8;
                        self.stats.byte_invs += 1;
                        inst += 1;
                    }
                    inst = 0;
                }
            }
            i += 1;
        }
        self.seg_bits = nbits;
        self.cot_pos += used;
        self.stats.and_gates += ands as u64;
        self.stats.cots_used += used as u64;
        ((i, inst), room)
    }

    /// Pack up to 128 bits into a field element `sum x^i bit_i` (free).
    pub fn pack(&self, bits: &[ProverBit]) -> Result<ProverElem> {
        if bits.len() > 128 {
            return Err(Error::Usage("at most 128 bits pack into an element".into()));
        }
        Ok(ProverElem {
            value: pack(bits.iter().map(|b| Block(b.value() as u128))),
            mac: pack(bits.iter().map(|b| b.0)),
        })
    }

    /// A public field constant.
    pub fn elem_constant(&self, c: Block) -> ProverElem {
        ProverElem { value: c, mac: c }
    }

    /// `x * y` in GF(2^128): commits the 128 bits of the product (128 COTs and
    /// bits) and adds one term to the batched check.
    pub async fn mul(&mut self, x: ProverElem, y: ProverElem) -> Result<ProverElem> {
        let z = x.value.gf_mul(y.value);
        let mut zbits = [ProverBit(Block::ZERO); 128];
        for (i, slot) in zbits.iter_mut().enumerate() {
            *slot = self.commit_bit((z.0 >> i) & 1 == 1).await?;
        }
        let z = self.pack(&zbits)?;
        // The last bit is in the open segment, so this term gets that segment's challenge.
        self.seg_terms.push([
            x.mac.gf_mul(y.mac),
            x.value.gf_mul(y.mac) ^ y.value.gf_mul(x.mac) ^ z.mac,
        ]);
        self.stats.committed_bits -= 128;
        self.stats.elem_muls += 1;
        Ok(z)
    }

    /// Reveal bits to the verifier; returns their values.
    pub async fn open(&mut self, bits: &[ProverBit]) -> Result<Vec<bool>> {
        self.refuse_when_sealed("open")?;
        self.close_segment().await?;
        let mut msg = Vec::with_capacity(bits.len().div_ceil(8) + proto::HASH_LEN);
        proto::pack_bools(bits.iter().map(|b| b.value()), &mut msg);
        msg.extend_from_slice(&mac_hash_bits(bits.iter().map(|b| b.0)));
        self.ch.send(&msg).await?;
        self.ch.flush().await?;
        Ok(bits.iter().map(|b| b.value()).collect())
    }

    /// Prove that `bits` equal the public `values` (sends one hash).
    pub async fn assert_public(&mut self, bits: &[ProverBit], values: &[bool]) -> Result<()> {
        if bits.len() != values.len() {
            return Err(Error::Usage("assert_public: lengths differ".into()));
        }
        self.close_segment().await?;
        self.send_or_hold(&mac_hash_bits(bits.iter().map(|b| b.0)))
            .await
    }

    /// Prove that every bit in `bits` is zero.
    pub async fn assert_zero(&mut self, bits: &[ProverBit]) -> Result<()> {
        self.assert_public(bits, &vec![false; bits.len()]).await
    }

    /// Prove that `bits` equal `values`, which the verifier learns only
    /// at the opening of a proof with [`Self::defer_claims`] (see
    /// `claims`); without it, [`Self::assert_public`]. Sends nothing:
    /// the bits' MACs join a weighted sum that [`Self::seal`] holds back,
    /// and `values` are what the caller discloses after the audit: values
    /// other than the bits' own fail the verifier's check then.
    pub async fn assert_claimed(&mut self, bits: &[ProverBit], values: &[bool]) -> Result<()> {
        let Some(claims) = self.claims.as_mut() else {
            return self.assert_public(bits, values).await;
        };
        if bits.len() != values.len() {
            return Err(Error::Usage("assert_claimed: lengths differ".into()));
        }
        for b in bits {
            claims.add(b.0);
        }
        Ok(())
    }

    /// Reveal field elements to the verifier.
    pub async fn open_elems(&mut self, elems: &[ProverElem]) -> Result<Vec<Block>> {
        self.refuse_when_sealed("open_elems")?;
        self.close_segment().await?;
        let mut msg = Vec::with_capacity(elems.len() * 16 + proto::HASH_LEN);
        for e in elems {
            msg.extend_from_slice(&e.value.to_bytes());
        }
        msg.extend_from_slice(&mac_hash(elems.iter().map(|e| e.mac)));
        self.ch.send(&msg).await?;
        self.ch.flush().await?;
        Ok(elems.iter().map(|e| e.value).collect())
    }

    /// Prove that field elements equal public values.
    pub async fn assert_elems_public(&mut self, elems: &[ProverElem]) -> Result<()> {
        self.close_segment().await?;
        self.send_or_hold(&mac_hash(elems.iter().map(|e| e.mac)))
            .await
    }

    /// Run the batched check of every multiplication since the last check.
    /// Returns an error if the verifier rejected.
    pub async fn check(&mut self) -> Result<()> {
        self.drain().await?;
        // A random VOLE (A0*, A1*) from 128 COTs masks the answer.
        let mut mask_macs = [Block::ZERO; 128];
        for m in mask_macs.iter_mut() {
            self.ensure_cot().await?;
            *m = self.cots[self.cot_pos];
            self.cot_pos += 1;
        }
        self.stats.cots_used += 128;
        let a0_star = pack(mask_macs.iter().copied());
        let a1_star = pack(mask_macs.iter().map(|m| Block(m.lsb() as u128)));
        let u = std::mem::take(&mut self.acc0).value() ^ a0_star;
        let v = std::mem::take(&mut self.acc1).value() ^ a1_star;
        if let Some(held) = self.held.as_mut() {
            // Sealed: the answer is kept for the opening, no verdict now.
            held.extend_from_slice(&proto::encode_pair(u, v));
            self.stats.checks += 1;
            return Ok(());
        }
        self.ch.send(&proto::encode_pair(u, v)).await?;
        // The verifier may end the session with its own message instead.
        let verdict = self.ch.recv(proto::MAX_ABORT_LEN).await?;
        if verdict.len() != 1 {
            return Err(Error::PeerAbort(verdict));
        }
        match verdict[0] {
            proto::VERDICT_ACCEPT => {
                self.stats.checks += 1;
                Ok(())
            }
            proto::VERDICT_REJECT => Err(Error::CheckFailed(
                "the verifier rejected the multiplication check".into(),
            )),
            other => Err(Error::Malformed(format!("verdict byte {other}"))),
        }
    }

    /// Check everything and end the session, giving back the COT source and
    /// the channel (at a clean message boundary).
    pub async fn finish(mut self) -> Result<(C, Channel<T>)> {
        self.refuse_when_sealed("finish (use seal)")?;
        self.check().await?;
        self.ch.flush().await?;
        Ok((self.cot, self.ch))
    }

    /// Bring the transcript to a message boundary and lend the channel, so
    /// the caller can exchange its own messages between proof steps (the
    /// verifier must call its `sync` at the same point).
    pub async fn sync(&mut self) -> Result<&mut Channel<T>> {
        self.close_segment().await?;
        Ok(&mut self.ch)
    }

    /// Enter sealed mode: from now on the messages that depend on MACs
    /// (assertion hashes and the check answer) are held back instead of
    /// sent, and [`Self::seal`] commits to them. Corrections are still
    /// streamed (they are one-time padded by the COT bits whatever the
    /// verifier's keys are).
    ///
    /// This is for statements on bits whose keys the verifier chose itself
    /// ([`Self::import_label`]): a verifier that gave inconsistent keys
    /// could otherwise test hypotheses about the prover's values against
    /// those hashes. Sealed, the prover first learns `Delta` (the verifier
    /// reveals it after [`Self::seal`]), audits the verifier's past
    /// messages in the clear, and only then opens; the commitment is made
    /// before `Delta` is known, so knowing it afterwards does not help a
    /// cheating prover. `open` and `open_elems` are refused in this mode
    /// (disclose values in the clear and [`Self::assert_public`] them).
    pub fn defer(&mut self) {
        if self.held.is_none() {
            self.held = Some(Vec::new());
        }
    }

    /// Whether [`Self::defer`] is in force.
    pub fn is_deferred(&self) -> bool {
        self.held.is_some()
    }

    /// In sealed mode, make [`Self::assert_claimed`] disclose its values
    /// only at the opening. `binding` must be the prover's commitment to
    /// every value it will claim, fixed before this proof started and
    /// known to the verifier (which calls
    /// [`Verifier::defer_claims`](crate::Verifier::defer_claims) with the
    /// same bytes): the check's weights are derived from it, so a binding
    /// that did not fix the values would let the prover pick values that
    /// cancel the weights.
    pub fn defer_claims(&mut self, binding: [u8; 32]) -> Result<()> {
        if self.held.is_none() {
            return Err(Error::Usage("defer_claims needs defer".into()));
        }
        if self.claims.is_none() {
            self.claims = Some(ClaimSum::new(binding));
        }
        Ok(())
    }

    /// End a sealed proof: run the final check (held back too) and send a
    /// commitment `SHA-256(label, salt, held)` to everything held back.
    /// `salt` must be 32 fresh random bytes (the commitment hides the held
    /// messages from a verifier whose keys may be inconsistent).
    pub async fn seal(mut self, salt: [u8; 32]) -> Result<SealedProver<C, T>> {
        if self.held.is_none() {
            return Err(Error::Usage("seal without defer".into()));
        }
        self.check().await?;
        let mut held = self.held.take().expect("checked");
        if let Some(claims) = self.claims.take() {
            // After the last check, as the verifier expects it.
            held.extend_from_slice(&claims.value().to_bytes());
        }
        self.ch.send(&proto::seal_commitment(&salt, &held)).await?;
        self.ch.flush().await?;
        Ok(SealedProver {
            cot: self.cot,
            ch: self.ch,
            salt,
            held,
        })
    }

    fn refuse_when_sealed(&self, what: &str) -> Result<()> {
        if self.held.is_some() {
            return Err(Error::Usage(format!(
                "{what} is not available in sealed mode"
            )));
        }
        Ok(())
    }

    /// Send a MAC-dependent message, or hold it back in sealed mode.
    async fn send_or_hold(&mut self, msg: &[u8]) -> Result<()> {
        match self.held.as_mut() {
            Some(held) => held.extend_from_slice(msg),
            None => {
                self.ch.send(msg).await?;
                self.ch.flush().await?;
            }
        }
        Ok(())
    }

    /// Make sure one COT and one segment slot are available.
    async fn ensure_slot(&mut self) -> Result<()> {
        self.ensure_room(1).await
    }

    /// Make sure `n` COTs of one batch and `n` slots of one segment are
    /// available: the bits of a byte inversion never straddle two batches
    /// or two segments. The rest of a batch too short for them is dropped
    /// (the verifier drops the same keys) and a segment too full for them
    /// is sent early (the verifier then finds its frame used up exactly there).
    async fn ensure_room(&mut self, n: usize) -> Result<()> {
        if self.cots.len() - self.cot_pos < n {
            self.cot_pos = self.cots.len();
        }
        self.ensure_cot().await?;
        if self.cfg.segment_bits - self.seg_bits < n {
            self.close_segment().await?;
        }
        Ok(())
    }

    async fn ensure_cot(&mut self) -> Result<()> {
        if self.cot_pos < self.cots.len() {
            return Ok(());
        }
        // COT extension talks on the channel: first settle every message of ours
        // and every challenge of the verifier, so the streams stay in order.
        self.drain().await?;
        self.cots.clear();
        let n = self.cfg.cot_batch;
        self.cot.extend(&mut self.ch, n, &mut self.cots).await?;
        if self.cots.len() != n {
            return Err(Error::Usage(format!(
                "COT source gave {} COTs where {n} were asked",
                self.cots.len()
            )));
        }
        self.cot_pos = 0;
        Ok(())
    }

    #[inline(always)]
    fn push_bit(&mut self, d: bool) {
        self.seg_words[self.seg_bits >> 6] |= (d as u64) << (self.seg_bits & 63);
        self.seg_bits += 1;
    }

    /// Send the open segment and fold its terms with the challenge derived from it.
    async fn close_segment(&mut self) -> Result<()> {
        if self.seg_bits == 0 {
            debug_assert!(self.seg_terms.is_empty());
            return Ok(());
        }
        proto::encode_segment(&self.seg_words, self.seg_bits, &mut self.frame);
        self.ch.send(&self.frame).await?;
        let seed = self.chain.next_seed(&self.frame);
        self.seg_words.iter_mut().for_each(|w| *w = 0);
        self.seg_bits = 0;
        // The weights a chunk at a time: inner products with one reduction
        // per chunk, or Horner's rule where there is no carry-less multiply
        // instruction (`ChiStream::fold_chunk`).
        let mut chi = ChiStream::new(seed);
        let mut split = [[Block::ZERO; CHI_CHUNK]; 2];
        for terms in self.seg_terms.chunks(CHI_CHUNK) {
            for (i, t) in terms.iter().enumerate() {
                split[0][i] = t[0];
                split[1][i] = t[1];
            }
            let n = terms.len();
            let (s0, s1) = chi.fold_chunk(&split[0][..n], &split[1][..n]);
            self.acc0.add_block(s0);
            self.acc1.add_block(s1);
        }
        self.seg_terms.clear();
        Ok(())
    }

    /// Close the open segment and push everything sent so far to the peer.
    async fn drain(&mut self) -> Result<()> {
        self.close_segment().await?;
        self.ch.flush().await?;
        Ok(())
    }
}

/// A sealed proof ([`Prover::seal`]): the commitment is sent; the held
/// messages go out with [`Self::open`] once the caller has audited what the
/// verifier revealed.
pub struct SealedProver<C, T> {
    cot: C,
    ch: Channel<T>,
    salt: [u8; 32],
    held: Vec<u8>,
}

impl<C: RandomCotReceiver, T: Io> SealedProver<C, T> {
    /// The COT source and the channel, to receive what the verifier
    /// reveals (and draw COTs for checking it) before opening.
    pub fn parts(&mut self) -> (&mut C, &mut Channel<T>) {
        (&mut self.cot, &mut self.ch)
    }

    /// Bytes the opening will carry (salt and held messages).
    pub fn opening_len(&self) -> usize {
        32 + self.held.len()
    }

    /// Open the commitment: send the salt and every held message. Returns
    /// the COT source and the channel; the verifier's verdict is its own
    /// (its [`SealedVerifier::verify`](crate::SealedVerifier::verify)).
    pub async fn open(mut self) -> Result<(C, Channel<T>)> {
        let mut msg = Vec::with_capacity(self.opening_len());
        msg.extend_from_slice(&self.salt);
        msg.extend_from_slice(&self.held);
        self.ch.send(&msg).await?;
        self.ch.flush().await?;
        Ok((self.cot, self.ch))
    }
}

/// Check terms of an AND gate with input MACs `ma`, `mb` and output MAC `mc`.
#[inline(always)]
fn and_term(ma: Block, mb: Block, mc: Block) -> Term {
    [
        ma.gf_mul(mb),
        Block::select(ma.lsb(), mb) ^ Block::select(mb.lsb(), ma) ^ mc,
    ]
}

/// Hash of the MACs of opened or asserted elements.
pub(crate) fn mac_hash(macs: impl Iterator<Item = Block>) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof-zk/open/v1");
    for m in macs {
        h.update(m.to_bytes());
    }
    h.finalize().into()
}

/// Hash of the MACs of opened or asserted bits, each run of 128 packed
/// into one element first (`sum x^j M_j`, as [`pack`] packs bits): 128
/// times less to hash. Packing keeps the check: claimed values off by a
/// nonzero bit vector `e` move the packed MAC by `pack(e) Delta` with
/// `pack(e) != 0` (bits are coefficients of a polynomial of degree < 128),
/// so forging it still means guessing `Delta`. Not for elements: a
/// combination of element errors can pack to zero.
pub(crate) fn mac_hash_bits(macs: impl Iterator<Item = Block>) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webproof-zk/open-bits/v1");
    let mut run = [Block::ZERO; 128];
    let mut n = 0;
    for m in macs {
        run[n] = m;
        n += 1;
        if n == run.len() {
            h.update(pack(run.iter().copied()).to_bytes());
            n = 0;
        }
    }
    if n > 0 {
        h.update(pack(run[..n].iter().copied()).to_bytes());
    }
    h.finalize().into()
}

/// The room (COTs of one batch, bits of one segment) that the first gate
/// of `circuit` that draws COTs needs: 8 for a byte inversion, else 1.
///
/// Both parties start an evaluation with `ensure_room` of this, not of 1:
/// a byte inversion never straddles two batches, so when fewer than 8
/// COTs are left the prover drops them and starts a new batch (and a new
/// segment). A verifier that asked for 1 there, with its segment read to
/// the end, would read the next segment as the rest of the old batch and
/// refuse it as too long (seen with `cot_batch` equal to `segment_bits`).
pub(crate) fn first_room(circuit: &Circuit) -> usize {
    circuit
        .gates
        .iter()
        .find_map(|g| match g {
            Gate::And { .. } => Some(1),
            Gate::ByteInv { .. } => Some(8),
            _ => None,
        })
        .unwrap_or(1)
}

/// Check the instance count and input group sizes of a batch evaluation;
/// returns `n`.
pub(crate) fn check_batch(
    c: &Circuit,
    n: usize,
    sizes: impl ExactSizeIterator<Item = usize>,
) -> Result<usize> {
    if n == 0 || n > MAX_BATCH {
        return Err(Error::Usage(format!(
            "a batch has 1..={MAX_BATCH} instances, not {n}"
        )));
    }
    if sizes.len() != c.inputs.len() {
        return Err(Error::Usage(format!(
            "circuit has {} input groups, {} given",
            c.inputs.len(),
            sizes.len()
        )));
    }
    for (i, (g, len)) in c.inputs.iter().zip(sizes).enumerate() {
        if len != g.len() && len != g.len() * n {
            return Err(Error::Usage(format!(
                "input group {i} has {} wires: give {} (shared) or {} ({n} instances), not {len}",
                g.len(),
                g.len(),
                g.len() * n
            )));
        }
    }
    Ok(n)
}

/// Most instances of one batch evaluation (the wire table holds
/// `n * num_wires` entries).
pub const MAX_BATCH: usize = 64;

/// Write an input group into the table: shared (one value per wire, copied
/// to every instance) or per instance.
pub(crate) fn load_group(
    w: &mut [Block],
    n: usize,
    group: &[webproof_circuits::WireId],
    values: impl ExactSizeIterator<Item = Block>,
) {
    let shared = values.len() == group.len();
    for (k, v) in values.enumerate() {
        let (id, inst) = if shared {
            (group[k], None)
        } else {
            (group[k % group.len()], Some(k / group.len()))
        };
        let base = id as usize * n;
        match inst {
            None => w[base..base + n].fill(v),
            Some(i) => w[base + i] = v,
        }
    }
}

/// The rows below `out` (sources) and the row of `out` (destination).
#[inline(always)]
pub(crate) fn rows(w: &mut [Block], n: usize, out: u32) -> (&[Block], &mut [Block]) {
    let (src, dst) = w.split_at_mut(out as usize * n);
    (src, &mut dst[..n])
}

/// `out = a ^ b` for every instance (the same on both sides: MACs and keys
/// are both linear).
#[inline(always)]
pub(crate) fn xor_rows(w: &mut [Block], n: usize, a: u32, b: u32, out: u32) {
    let (src, dst) = rows(w, n, out);
    for ((o, x), y) in dst.iter_mut().zip(row(src, n, a)).zip(row(src, n, b)) {
        *o = *x ^ *y;
    }
}

/// Wires `ids` of instances `inst..inst + 4`, one row of lanes per wire.
#[inline(always)]
pub(crate) fn gather4(w: &[Block], n: usize, ids: &[u32; 8], inst: usize) -> [X4; 8] {
    ids.map(|id| {
        let r = id as usize * n + inst;
        [w[r], w[r + 1], w[r + 2], w[r + 3]]
    })
}

/// Row `id` of the sources.
#[inline(always)]
pub(crate) fn row(src: &[Block], n: usize, id: u32) -> &[Block] {
    &src[id as usize * n..id as usize * n + n]
}

/// Remembers the last circuit whose wire numbers were checked, so a circuit
/// evaluated many times (AES per block) is scanned once, not per call.
#[derive(Default)]
pub(crate) struct ValidatedCircuit {
    last: Option<[usize; 6]>,
}

impl ValidatedCircuit {
    /// Reject circuits whose wire numbers are out of range or not in
    /// topological order (every gate writes a wire above those it reads),
    /// before any message is sent for them.
    pub(crate) fn check(&mut self, c: &Circuit) -> Result<()> {
        let id = [
            c as *const Circuit as usize,
            c.gates.as_ptr() as usize,
            c.gates.len(),
            c.num_wires as usize,
            c.outputs.as_ptr() as usize,
            c.byte_inv_inputs.as_ptr() as usize,
        ];
        if self.last == Some(id) {
            return Ok(());
        }
        let nw = c.num_wires;
        let bad = |id: u32| id >= nw;
        // `a < out` for every input `a`: the batch evaluator reads rows
        // below the one it writes.
        let gate_bad = c.gates.iter().any(|g| match *g {
            Gate::Xor { a, b, out } | Gate::And { a, b, out } => bad(out) || a >= out || b >= out,
            Gate::Inv { a, out } => bad(out) || a >= out,
            Gate::Const { out, .. } => bad(out),
            Gate::ByteInv { inputs, out } => match c.byte_inv_inputs.get(inputs as usize) {
                None => true,
                Some(ids) => ids.iter().any(|&id| id >= out) || out as u64 + 8 > nw as u64,
            },
        });
        if gate_bad
            || c.inputs
                .iter()
                .chain(&c.outputs)
                .flatten()
                .any(|&id| bad(id))
        {
            return Err(Error::Usage(
                "circuit refers to a wire beyond num_wires or out of topological order".into(),
            ));
        }
        self.last = Some(id);
        Ok(())
    }
}

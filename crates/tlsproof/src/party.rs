//! One statement, two roles: the operations that the prover and the verifier
//! of [`webproof_zk`] both perform, so the statement is written once.

use webproof_circuits::Circuit;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{Block, Error, Io, Result};
use webproof_zk::{Prover, ProverBit, ProverElem, Verifier, VerifierBit, VerifierElem};

/// A party of a QuickSilver proof. Both parties call the same methods in the
/// same order; only the prover's `commit_secret` receives the witness.
#[allow(async_fn_in_trait)]
pub trait ZkParty {
    /// An authenticated bit (a MAC for the prover, a key for the verifier).
    type Bit: Copy;
    /// A public constant.
    fn constant(&self, value: bool) -> Self::Bit;
    /// XOR (free).
    fn xor(&self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
    /// Commit `len` private bytes: the prover's `witness`, which the verifier does not get.
    async fn commit_secret(&mut self, witness: Option<&[u8]>, len: usize)
        -> Result<Vec<Self::Bit>>;
    /// Evaluate a circuit on authenticated inputs.
    async fn eval(
        &mut self,
        circuit: &Circuit,
        inputs: &[&[Self::Bit]],
    ) -> Result<Vec<Vec<Self::Bit>>>;
    /// Evaluate a circuit on `n` instances at once (see
    /// [`Prover::eval_batch`] for the input and output layout).
    async fn eval_batch(
        &mut self,
        circuit: &Circuit,
        n: usize,
        inputs: &[&[Self::Bit]],
    ) -> Result<Vec<Vec<Self::Bit>>>;
    /// Open bits to the verifier.
    async fn open(&mut self, bits: &[Self::Bit]) -> Result<Vec<bool>>;
    /// Prove that `bits` equal the public `values`.
    async fn assert_public(&mut self, bits: &[Self::Bit], values: &[bool]) -> Result<()>;
    /// Prove that `bits` equal the prover's claimed `values`: in a sealed
    /// proof with claims (`Prover::defer_claims`) the verifier learns them
    /// only at the opening, so its `values` are not read (any of the right
    /// length); otherwise the same as [`Self::assert_public`].
    async fn assert_claimed(&mut self, bits: &[Self::Bit], values: &[bool]) -> Result<()>;
    /// Run the pending AND-gate check.
    async fn check(&mut self) -> Result<()>;
    /// An authenticated GF(2^128) element.
    type Elem: Copy;
    /// Pack up to 128 bits into the element `sum x^i bits[i]` (free).
    fn pack(&self, bits: &[Self::Bit]) -> Result<Self::Elem>;
    /// A public element.
    fn elem_constant(&self, c: Block) -> Self::Elem;
    /// `a + b` (free).
    fn elem_add(&self, a: Self::Elem, b: Self::Elem) -> Self::Elem;
    /// `a * b` in GF(2^128) (the product's 128 bits are committed and
    /// the product joins the batched check).
    async fn mul(&mut self, a: Self::Elem, b: Self::Elem) -> Result<Self::Elem>;
    /// Prove that `elems` equal the public `values`.
    async fn assert_elems_public(&mut self, elems: &[Self::Elem], values: &[Block]) -> Result<()>;
}

impl<C: RandomCotReceiver, T: Io> ZkParty for Prover<C, T> {
    type Bit = ProverBit;
    fn constant(&self, value: bool) -> ProverBit {
        Prover::constant(self, value)
    }
    fn xor(&self, a: ProverBit, b: ProverBit) -> ProverBit {
        Prover::xor(self, a, b)
    }
    async fn commit_secret(
        &mut self,
        witness: Option<&[u8]>,
        len: usize,
    ) -> Result<Vec<ProverBit>> {
        let w = witness.ok_or_else(|| Error::Usage("the prover needs the witness".into()))?;
        if w.len() != len {
            return Err(Error::Usage(format!(
                "the witness is {} bytes, the statement needs {len}",
                w.len()
            )));
        }
        self.commit_bytes(w).await
    }
    async fn eval(
        &mut self,
        circuit: &Circuit,
        inputs: &[&[ProverBit]],
    ) -> Result<Vec<Vec<ProverBit>>> {
        Prover::eval(self, circuit, inputs).await
    }
    async fn eval_batch(
        &mut self,
        circuit: &Circuit,
        n: usize,
        inputs: &[&[ProverBit]],
    ) -> Result<Vec<Vec<ProverBit>>> {
        Prover::eval_batch(self, circuit, n, inputs).await
    }
    async fn open(&mut self, bits: &[ProverBit]) -> Result<Vec<bool>> {
        Prover::open(self, bits).await
    }
    async fn assert_public(&mut self, bits: &[ProverBit], values: &[bool]) -> Result<()> {
        Prover::assert_public(self, bits, values).await
    }
    async fn assert_claimed(&mut self, bits: &[ProverBit], values: &[bool]) -> Result<()> {
        Prover::assert_claimed(self, bits, values).await
    }
    async fn check(&mut self) -> Result<()> {
        Prover::check(self).await
    }
    type Elem = ProverElem;
    fn pack(&self, bits: &[ProverBit]) -> Result<ProverElem> {
        Prover::pack(self, bits)
    }
    fn elem_constant(&self, c: Block) -> ProverElem {
        Prover::elem_constant(self, c)
    }
    fn elem_add(&self, a: ProverElem, b: ProverElem) -> ProverElem {
        a + b
    }
    async fn mul(&mut self, a: ProverElem, b: ProverElem) -> Result<ProverElem> {
        Prover::mul(self, a, b).await
    }
    async fn assert_elems_public(&mut self, elems: &[ProverElem], _values: &[Block]) -> Result<()> {
        Prover::assert_elems_public(self, elems).await
    }
}

impl<C: RandomCotSender, T: Io> ZkParty for Verifier<C, T> {
    type Bit = VerifierBit;
    fn constant(&self, value: bool) -> VerifierBit {
        Verifier::constant(self, value)
    }
    fn xor(&self, a: VerifierBit, b: VerifierBit) -> VerifierBit {
        Verifier::xor(self, a, b)
    }
    async fn commit_secret(
        &mut self,
        _witness: Option<&[u8]>,
        len: usize,
    ) -> Result<Vec<VerifierBit>> {
        self.commit_bytes(len).await
    }
    async fn eval(
        &mut self,
        circuit: &Circuit,
        inputs: &[&[VerifierBit]],
    ) -> Result<Vec<Vec<VerifierBit>>> {
        Verifier::eval(self, circuit, inputs).await
    }
    async fn eval_batch(
        &mut self,
        circuit: &Circuit,
        n: usize,
        inputs: &[&[VerifierBit]],
    ) -> Result<Vec<Vec<VerifierBit>>> {
        Verifier::eval_batch(self, circuit, n, inputs).await
    }
    async fn open(&mut self, bits: &[VerifierBit]) -> Result<Vec<bool>> {
        Verifier::open(self, bits).await
    }
    async fn assert_public(&mut self, bits: &[VerifierBit], values: &[bool]) -> Result<()> {
        Verifier::assert_public(self, bits, values).await
    }
    async fn assert_claimed(&mut self, bits: &[VerifierBit], values: &[bool]) -> Result<()> {
        Verifier::assert_claimed(self, bits, values).await
    }
    async fn check(&mut self) -> Result<()> {
        Verifier::check(self).await
    }
    type Elem = VerifierElem;
    fn pack(&self, bits: &[VerifierBit]) -> Result<VerifierElem> {
        Verifier::pack(self, bits)
    }
    fn elem_constant(&self, c: Block) -> VerifierElem {
        Verifier::elem_constant(self, c)
    }
    fn elem_add(&self, a: VerifierElem, b: VerifierElem) -> VerifierElem {
        a + b
    }
    async fn mul(&mut self, a: VerifierElem, b: VerifierElem) -> Result<VerifierElem> {
        Verifier::mul(self, a, b).await
    }
    async fn assert_elems_public(
        &mut self,
        elems: &[VerifierElem],
        values: &[Block],
    ) -> Result<()> {
        Verifier::assert_elems_public(self, elems, values).await
    }
}

//! Gate counts of the AES block circuits, by kind.
use webproof_circuits::aes::{encrypt_block_with, SboxKind};
use webproof_circuits::{Builder, Gate};
fn main() {
    for kind in [SboxKind::Boolean, SboxKind::Inversion] {
        let mut b = Builder::new();
        let rk = b.input(128 * 11);
        let block = b.input(128);
        let rks: Vec<Vec<_>> = rk.chunks(128).map(|c| c.to_vec()).collect();
        let out = encrypt_block_with(&mut b, &rks, &block, kind);
        b.output(&out);
        let c = b.finish();
        let (mut x, mut a, mut i, mut k, mut v) = (0, 0, 0, 0, 0);
        for g in &c.gates {
            match g {
                Gate::Xor { .. } => x += 1,
                Gate::And { .. } => a += 1,
                Gate::Inv { .. } => i += 1,
                Gate::Const { .. } => k += 1,
                Gate::ByteInv { .. } => v += 1,
            }
        }
        println!(
            "{kind:?}: xor {x} and {a} inv {i} const {k} byteinv {v} wires {}",
            c.num_wires
        );
    }
}

//! Estimated bit security of every named LPN set, attack by attack.
//!
//! ```text
//! cargo run --release -p webproof-ferret --example lpn_security
//! ```
//!
//! For each set of `webproof_ferret::params::NAMED_SETS`: its full length,
//! then the worst case over every prefix a session can cut from it (from
//! the fewest noise blocks that refill a reserve up to all of them, which
//! covers every length `SessionConfig::sized` chooses). Then, for
//! comparison, the sets webproof ran until protocol version 26. Figures are
//! log2 of bit operations from `webproof_ferret::security`.

use webproof_ferret::params::NAMED_SETS;
use webproof_ferret::security::{Estimate, TARGET_BITS};
use webproof_ferret::LpnParams;

fn row(name: &str, p: &LpnParams, e: &Estimate) {
    println!(
        "| {name} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | **{:.1}** |",
        p.n,
        p.k,
        p.t,
        p.bin_size(),
        e.gauss,
        e.sd_isd,
        e.bjmm,
        e.agb,
        e.hybrid,
        e.min()
    );
}

fn header() {
    println!("| set | n | k | t | 2^h | Gauss | SD-ISD | BJMM | AGB | HYB | min |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
}

fn main() {
    println!("Named sets (target {TARGET_BITS} bits):\n");
    header();
    let mut worst = f64::INFINITY;
    for (name, p) in NAMED_SETS {
        row(name, &p, &Estimate::of(&p));
        let fewest = (p.reserve() / p.bin_size() + 1).min(p.t);
        let e = Estimate::of_prefixes(&p, fewest..=p.t);
        row(&format!("{name}[{fewest}..={}]", p.t), &p, &e);
        worst = worst.min(e.min());
    }
    println!("\nWorst named set over all prefixes: {worst:.1} bits\n");

    println!("Retired sets (protocol version 26 and before):\n");
    header();
    for (name, p) in [
        ("b11 main", LpnParams::new(10_180_608, 124_000, 4_971, 11)),
        (
            "b11 main[2648]",
            LpnParams::new(2_648 << 11, 124_000, 2_648, 11),
        ),
        ("b11 setup", LpnParams::new(178_944, 17_384, 699, 8)),
        ("b12 main", LpnParams::new(10_268_672, 238_000, 2_507, 12)),
        ("b12 setup", LpnParams::new(268_800, 17_384, 1_050, 8)),
        ("b13 main", LpnParams::new(10_485_760, 452_000, 1_280, 13)),
        ("b13 main[640]", LpnParams::new(640 << 13, 452_000, 640, 13)),
        ("b13 setup", LpnParams::new(470_016, 32_768, 918, 9)),
        ("Ferret 2020", LpnParams::new(649_728, 36_288, 1_269, 9)),
    ] {
        row(name, &p, &Estimate::of(&p));
    }
}

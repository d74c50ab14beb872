//! Where the time of a proof session's preprocessing goes, party by party:
//! sender and receiver on two threads over an in-memory duplex (no network
//! latency), each timing its own steps.
//!
//! ```text
//! cargo run --release -p webproof-ferret --example session_phases -- [FIRST_TREES] [DRAW]
//! ```
//!
//! Runs the session layout of `webproof-tlsproof` for large sessions
//! (`S40_SETUP`, then `K19_MAIN` cut to 640 noise blocks, optionally a first main iteration cut to
//! FIRST_TREES blocks) and prints, per party: base OT + SoftSpokenOT setup,
//! SoftSpokenOT extension and the setup iteration's exchange, the setup
//! iteration's LPN, the first main iteration's exchange (with the LPN of
//! the next reserve) and the LPN of DRAW further outputs (default 1 M).

use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;
use std::time::Instant;
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Channel};
use webproof_ferret::params::{K19_MAIN, S40_SETUP};
use webproof_ferret::{FerretConfig, FerretReceiver, FerretSender};
use webproof_ot::{SoftSpokenReceiver, SoftSpokenSender};

fn main() {
    let mut args = std::env::args().skip(1);
    let first: Option<usize> = args.next().map(|a| a.parse().expect("FIRST_TREES"));
    let draw: usize = args
        .next()
        .map(|a| a.parse().expect("DRAW"))
        .unwrap_or(1 << 20);
    let config = FerretConfig {
        main: K19_MAIN.prefix(640),
        setup: Some(S40_SETUP),
        first_main_trees: first,
    };
    config.validate().expect("configuration");
    let surplus = config.setup_surplus();
    let (a, b) = memory_duplex();
    let sender = std::thread::spawn(move || {
        block_on(async {
            let mut ch = Channel::new(a);
            let mut rng = ChaCha12Rng::seed_from_u64(1);
            let mut t = Vec::new();
            let mut at = Instant::now();
            let mut lap = |name: &'static str, t: &mut Vec<(&str, f64)>| {
                t.push((name, at.elapsed().as_secs_f64() * 1e3));
                at = Instant::now();
            };
            let ss = SoftSpokenSender::setup(&mut ch, &mut rng).await.unwrap();
            lap("base OT + SoftSpokenOT setup", &mut t);
            let mut s = FerretSender::new(config, ss, &mut rng).unwrap();
            s.setup(&mut ch).await.unwrap();
            lap("SoftSpokenOT extension + setup iteration exchange", &mut t);
            let mut out = Vec::new();
            s.extend(&mut ch, surplus, &mut out).await.unwrap();
            lap("setup iteration LPN", &mut t);
            s.extend(&mut ch, 1, &mut out).await.unwrap();
            lap("first main iteration exchange + reserve LPN", &mut t);
            out.clear();
            s.extend(&mut ch, draw, &mut out).await.unwrap();
            lap("LPN of the drawn outputs", &mut t);
            t
        })
    });
    let receiver = std::thread::spawn(move || {
        block_on(async {
            let mut ch = Channel::new(b);
            let mut rng = ChaCha12Rng::seed_from_u64(2);
            let mut t = Vec::new();
            let mut at = Instant::now();
            let mut lap = |name: &'static str, t: &mut Vec<(&str, f64)>| {
                t.push((name, at.elapsed().as_secs_f64() * 1e3));
                at = Instant::now();
            };
            let ss = SoftSpokenReceiver::setup(&mut ch, &mut rng).await.unwrap();
            lap("base OT + SoftSpokenOT setup", &mut t);
            let mut r = FerretReceiver::new(config, ss, &mut rng).unwrap();
            r.setup(&mut ch).await.unwrap();
            lap("SoftSpokenOT extension + setup iteration exchange", &mut t);
            let mut out = Vec::new();
            r.extend(&mut ch, surplus, &mut out).await.unwrap();
            lap("setup iteration LPN", &mut t);
            r.extend(&mut ch, 1, &mut out).await.unwrap();
            lap("first main iteration exchange + reserve LPN", &mut t);
            out.clear();
            r.extend(&mut ch, draw, &mut out).await.unwrap();
            lap("LPN of the drawn outputs", &mut t);
            t
        })
    });
    let (s, r) = (sender.join().unwrap(), receiver.join().unwrap());
    println!(
        "first main iteration: {} noise blocks, {} outputs; then {draw} drawn",
        config.first_main().t,
        config.first_main().n
    );
    println!(
        "{:<52} {:>12} {:>12}",
        "step (wall ms)", "sender", "receiver"
    );
    for ((name, ts), (_, tr)) in s.iter().zip(&r) {
        println!("{name:<52} {ts:>12.1} {tr:>12.1}");
    }
}

//! Benchmark of base OT and the SoftSpokenOT extension, two threads (one per
//! party) over an in-memory duplex.
//!
//! `cargo run --release -p webproof-ot --example ot_bench [-- N_COTS [K,K,..]]`

use futures::executor::block_on;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::time::{Duration, Instant};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Channel, ChannelStats};
use webproof_ot::{base, SoftSpokenReceiver, SoftSpokenSender};

/// Run two parties on two threads; returns their results, the wall time and
/// the byte counters of each side.
fn two_party<A, B, RA, RB>(a: A, b: B) -> (RA, RB, Duration, ChannelStats, ChannelStats)
where
    A: FnOnce(Channel<webproof_core::MemoryIo>) -> RA + Send + 'static,
    B: FnOnce(Channel<webproof_core::MemoryIo>) -> RB + Send + 'static,
    RA: Send + 'static,
    RB: Send + 'static,
{
    let (x, y) = memory_duplex();
    let (cx, cy) = (Channel::new(x), Channel::new(y));
    let (sx, sy) = (cx.stats(), cy.stats());
    let t = Instant::now();
    let hb = std::thread::spawn(move || b(cy));
    let ra = a(cx);
    let rb = hb.join().expect("party thread");
    (ra, rb, t.elapsed(), sx, sy)
}

/// CPU time consumed by the calling thread so far.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer we pass.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall time and calling-thread CPU time of `f`.
fn timed<R>(f: impl FnOnce() -> R) -> (R, Duration, Duration) {
    let (w, c) = (Instant::now(), thread_cpu());
    let r = f();
    (r, w.elapsed(), thread_cpu() - c)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("number of COTs"))
        .unwrap_or(1 << 22);
    let ks: Vec<usize> = std::env::args()
        .nth(2)
        .map(|s| s.split(',').map(|k| k.parse().expect("k")).collect())
        .unwrap_or(vec![8, 4, 2, 1]);
    println!("(wall = elapsed time; cpu = CPU time of each party's thread, which is what counts on a loaded machine)");

    // Base OT: 128 random OTs, best of 5 by the sender's CPU time.
    let mut best: Option<(Duration, Duration, Duration, u64, u64)> = None;
    for i in 0..5u64 {
        let ((_, wall, cpu_s), (_, _, cpu_r), _, ss, rs) = two_party(
            move |mut c| {
                let mut rng = ChaCha20Rng::seed_from_u64(i);
                timed(|| block_on(base::send(&mut c, 128, &mut rng)).unwrap())
            },
            move |mut c| {
                let mut rng = ChaCha20Rng::seed_from_u64(i + 100);
                timed(|| block_on(base::receive(&mut c, &[true; 128], &mut rng)).unwrap())
            },
        );
        if best.is_none_or(|b| cpu_s < b.1) {
            best = Some((wall, cpu_s, cpu_r, ss.sent(), rs.sent()));
        }
    }
    let (wall, cpu_s, cpu_r, b_s, b_r) = best.expect("ran");
    println!(
        "base OT x128 (Masny-Rindal, Ristretto): wall {:.2} ms, cpu sender {:.2} ms, receiver {:.2} ms; \
         bytes sender->receiver {b_s}, receiver->sender {b_r}, total {}",
        ms(wall),
        ms(cpu_s),
        ms(cpu_r),
        b_s + b_r
    );

    for k in ks {
        let (sender, receiver, _, ss, rs) = two_party(
            move |mut c| {
                let mut rng = ChaCha20Rng::seed_from_u64(1);
                let (mut s, sw, sc) = timed(|| {
                    block_on(SoftSpokenSender::setup_with_k(&mut c, k, &mut rng)).unwrap()
                });
                let setup_bytes = (c.stats().sent(), c.stats().received());
                let mut out = Vec::with_capacity(n);
                let (_, ew, ec) = timed(|| block_on(s.extend(&mut c, n, &mut out)).unwrap());
                assert_eq!(out.len(), n);
                (sw, sc, setup_bytes, ew, ec)
            },
            move |mut c| {
                let mut rng = ChaCha20Rng::seed_from_u64(2);
                let (mut r, _, sc) = timed(|| {
                    block_on(SoftSpokenReceiver::setup_with_k(&mut c, k, &mut rng)).unwrap()
                });
                let mut out = Vec::with_capacity(n);
                let (_, ew, ec) = timed(|| block_on(r.extend(&mut c, n, &mut out)).unwrap());
                assert_eq!(out.len(), n);
                (sc, ew, ec)
            },
        );
        let (s_setup_wall, s_setup_cpu, (setup_sent, setup_recv), s_ext_wall, s_ext_cpu) = sender;
        let (r_setup_cpu, r_ext_wall, r_ext_cpu) = receiver;
        let ext_wall = s_ext_wall.max(r_ext_wall);
        let up = (rs.sent() - setup_recv) as f64 * 8.0 / n as f64;
        let down = (ss.sent() - setup_sent) as f64 * 8.0 / n as f64;
        println!(
            "SoftSpokenOT k={k}: setup wall {:.1} ms (cpu sender {:.1}, receiver {:.1}), \
             {} B receiver->sender, {} B sender->receiver",
            ms(s_setup_wall),
            ms(s_setup_cpu),
            ms(r_setup_cpu),
            setup_recv,
            setup_sent
        );
        println!(
            "  extend {n} COTs: wall {:.1} ms = {:.1} M COT/s; cpu sender {:.1} ms ({:.1} M COT/s), \
             receiver {:.1} ms ({:.1} M COT/s); bits/COT receiver->sender {up:.2}, sender->receiver {down:.4}",
            ms(ext_wall),
            n as f64 / ext_wall.as_secs_f64() / 1e6,
            ms(s_ext_cpu),
            n as f64 / s_ext_cpu.as_secs_f64() / 1e6,
            ms(r_ext_cpu),
            n as f64 / r_ext_cpu.as_secs_f64() / 1e6,
        );
    }
}

//! Userspace link emulation: a pair of TUN devices joined by a delay line.
//!
//! For hosts without `netem`. Each emulated link is two TUN devices, one per
//! end, each moved into its namespace. One thread per direction reads IP
//! packets the sending kernel routes into its TUN, runs them through the
//! [`shaper::Shaper`] (bottleneck rate, bounded queue, delay, jitter, loss)
//! and writes them into the other TUN at their delivery time. Packets stay
//! whole IP packets, so TCP on both ends behaves as on a real link.
//!
//! Precision: the delivery queue is FIFO (the shaper never reorders), so one
//! absolute deadline is pending at a time; threads wait for it with `ppoll`
//! (nanosecond timeout), with timer slack set to 1 ns and `SCHED_FIFO`
//! priority so the CPU-heavy prover and verifier cannot delay a delivery by
//! a scheduler tick. Timer wake-ups still come late on a VM, so each thread
//! learns its wake-up lateness and wakes that much early; whatever is due
//! within that learned lateness is written at once rather than waited for
//! (a shorter sleep would, on average, overshoot further). The threads never
//! spin: at 100 Mbit/s a deadline falls every 120 us, so spinning up to each
//! would keep a real-time thread per busy direction on a core and starve the
//! parties being measured on a 2-core machine. Measured lateness and
//! earliness are reported in [`DirectionStats`].
//!
//! TUN devices are not persistent: they vanish when the process exits, even
//! on SIGKILL.

pub mod shaper;

use shaper::{DirectionParams, Shaper, Verdict};
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Counters of one direction, readable while the link runs.
#[derive(Default, Debug)]
pub struct DirectionStats {
    pub packets: AtomicU64,
    pub bytes: AtomicU64,
    pub dropped: AtomicU64,
    /// Sum and maximum of (actual write time - scheduled time), ns.
    pub late_sum_ns: AtomicU64,
    pub late_max_ns: AtomicU64,
    /// Sum and maximum of (scheduled time - actual write time) for packets
    /// written early, ns.
    pub early_sum_ns: AtomicU64,
    pub early_max_ns: AtomicU64,
}

impl DirectionStats {
    /// Mean delivery lateness in microseconds.
    pub fn mean_late_us(&self) -> f64 {
        self.per_packet_us(&self.late_sum_ns)
    }

    /// Mean earliness in microseconds (packets written before their time).
    pub fn mean_early_us(&self) -> f64 {
        self.per_packet_us(&self.early_sum_ns)
    }

    fn per_packet_us(&self, sum_ns: &AtomicU64) -> f64 {
        match self.packets.load(Ordering::Relaxed) {
            0 => 0.0,
            n => sum_ns.load(Ordering::Relaxed) as f64 / n as f64 / 1e3,
        }
    }
}

/// Open a non-persistent TUN device (IFF_TUN | IFF_NO_PI) named `name`.
pub fn open_tun(name: &str) -> std::io::Result<OwnedFd> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("interface name `{name}` longer than 15 bytes"),
        ));
    }
    // SAFETY: plain open(2) of a constant path; the fd is owned below.
    let fd = unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by open and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    #[repr(C)]
    struct IfReq {
        name: [u8; libc::IFNAMSIZ],
        flags: libc::c_short,
        _pad: [u8; 22],
    }
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
    // SAFETY: TUNSETIFF reads a struct ifreq (40 bytes) that we own.
    let r = unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req as *mut IfReq) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(owned)
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Make the calling thread's timers exact and give it real-time priority.
/// Failing to get `SCHED_FIFO` only costs precision, so it is not an error.
fn make_thread_precise() -> bool {
    // SAFETY: prctl/sched_setscheduler on the calling thread with valid args.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        let param = libc::sched_param { sched_priority: 20 };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0
    }
}

/// A packet waiting for its delivery time.
struct InFlight {
    at: u64,
    data: Vec<u8>,
}

/// Bounds of the learned wake-up lateness: a thread sleeps until this long
/// before a deadline, and writes whatever is due within it. The upper bound
/// keeps a packet from ever leaving more than 0.2 ms early (4% of a 5 ms
/// one-way delay at worst; on average the error is near zero, as the
/// lateness is learned).
const MIN_MARGIN_NS: u64 = 10_000;
const MAX_MARGIN_NS: u64 = 200_000;

fn direction_loop(
    input: RawFd,
    output: RawFd,
    params: DirectionParams,
    stop: Arc<AtomicBool>,
    stats: Arc<DirectionStats>,
    seed: u64,
) {
    use rand::SeedableRng;
    if !make_thread_precise() {
        tracing::warn!("link emulator: no SCHED_FIFO priority; timing may be less precise");
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut shaper = Shaper::new(params);
    let mut queue: VecDeque<InFlight> = VecDeque::new();
    let mut buf = vec![0u8; 65_536];
    let mut margin: u64 = 50_000;
    while !stop.load(Ordering::Relaxed) {
        let now = now_ns();
        while let Some(front) = queue.front() {
            if front.at > now + margin {
                break;
            }
            let p = queue.pop_front().expect("front exists");
            // SAFETY: writing an owned buffer to a valid fd.
            let w = unsafe { libc::write(output, p.data.as_ptr().cast(), p.data.len()) };
            let written = now_ns();
            if w < 0 {
                stats.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            stats.packets.fetch_add(1, Ordering::Relaxed);
            stats
                .bytes
                .fetch_add(p.data.len() as u64, Ordering::Relaxed);
            if written >= p.at {
                let late = written - p.at;
                stats.late_sum_ns.fetch_add(late, Ordering::Relaxed);
                stats.late_max_ns.fetch_max(late, Ordering::Relaxed);
            } else {
                let early = p.at - written;
                stats.early_sum_ns.fetch_add(early, Ordering::Relaxed);
                stats.early_max_ns.fetch_max(early, Ordering::Relaxed);
            }
        }
        // Wait for input or until `margin` before the next deadline (at
        // most 50 ms, to notice stop); the timer's lateness brings the
        // wake-up close to the deadline itself.
        let deadline = queue.front().map(|f| f.at);
        let sleep = match deadline {
            Some(at) => at.saturating_sub(now_ns()).saturating_sub(margin),
            None => 50_000_000,
        }
        .min(50_000_000);
        if sleep > 0 {
            let mut pfd = libc::pollfd {
                fd: input,
                events: libc::POLLIN,
                revents: 0,
            };
            let ts = libc::timespec {
                tv_sec: (sleep / 1_000_000_000) as _,
                tv_nsec: (sleep % 1_000_000_000) as _,
            };
            let target = now_ns() + sleep;
            // SAFETY: one valid pollfd, a valid timespec, no signal mask.
            let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if r == 0 && deadline.is_some() {
                // Woken by the timer: learn how late that was.
                let late = now_ns().saturating_sub(target);
                margin = ((margin * 7 + late) / 8).clamp(MIN_MARGIN_NS, MAX_MARGIN_NS);
            }
        }
        loop {
            // SAFETY: reading into our own buffer from a valid fd.
            let n = unsafe { libc::read(input, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            let n = n as usize;
            match shaper.admit(now_ns(), n, &mut rng) {
                Verdict::Deliver(at) => queue.push_back(InFlight {
                    at,
                    data: buf[..n].to_vec(),
                }),
                Verdict::Lost | Verdict::QueueFull => {
                    stats.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// One running emulated link: two TUN fds and two direction threads.
pub struct TunLink {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// a -> b and b -> a.
    pub stats: [Arc<DirectionStats>; 2],
    _fds: [Arc<OwnedFd>; 2],
}

impl TunLink {
    /// Start shaping between already opened TUN devices `a` and `b`.
    pub fn start(a: OwnedFd, b: OwnedFd, params: DirectionParams, seed: u64) -> TunLink {
        let stop = Arc::new(AtomicBool::new(false));
        let a = Arc::new(a);
        let b = Arc::new(b);
        let stats = [
            Arc::new(DirectionStats::default()),
            Arc::new(DirectionStats::default()),
        ];
        let mut threads = Vec::new();
        for (i, (from, to)) in [(a.clone(), b.clone()), (b.clone(), a.clone())]
            .into_iter()
            .enumerate()
        {
            let stop = stop.clone();
            let st = stats[i].clone();
            let s = seed.wrapping_mul(2).wrapping_add(i as u64);
            threads.push(
                std::thread::Builder::new()
                    .name(format!("wpb-link-{i}"))
                    .spawn(move || {
                        direction_loop(from.as_raw_fd(), to.as_raw_fd(), params, stop, st, s)
                    })
                    .expect("spawn link thread"),
            );
        }
        TunLink {
            stop,
            threads,
            stats,
            _fds: [a, b],
        }
    }
}

impl Drop for TunLink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

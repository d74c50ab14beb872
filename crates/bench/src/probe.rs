//! Measuring an emulated link before trusting it: round-trip time with a
//! TCP echo, throughput with a bulk TCP transfer.
//!
//! Both run on threads that entered the link's namespaces, over the link's
//! own addresses, so they cross exactly the path the parties will use.

use crate::topology::{Link, Topology};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Port the probes use on the `b` end of a link.
const PROBE_PORT: u16 = 9099;
/// Parallel TCP streams of the throughput check.
const STREAMS: usize = 4;

/// Bytes received so far on `dev` in the calling thread's namespace.
fn rx_bytes(dev: &str) -> std::io::Result<u64> {
    webproof_zk_bench::sys::interface_bytes(dev)
        .map(|(rx, _)| rx)
        .ok_or_else(|| std::io::Error::other(format!("no counters for {dev}")))
}

/// Result of measuring one link.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LinkMeasurement {
    pub link: String,
    pub backend: String,
    pub set_rtt_ms: f64,
    pub set_mbps: f64,
    /// Median of the echo round trips.
    pub rtt_ms: f64,
    pub rtt_min_ms: f64,
    /// IP-level rate a -> b during the steady part of a bulk transfer, from
    /// the receiving interface's counter.
    pub mbps: f64,
    /// TCP payload rate over the whole transfer, slow start included.
    pub goodput_mbps: f64,
    /// False on links with loss, where a TCP transfer cannot show the rate.
    pub rate_checked: bool,
}

impl LinkMeasurement {
    /// Relative errors of RTT and rate against the settings.
    pub fn errors(&self) -> (f64, f64) {
        let rtt_err = if self.set_rtt_ms > 0.0 {
            (self.rtt_ms - self.set_rtt_ms).abs() / self.set_rtt_ms
        } else {
            0.0
        };
        let bw_err = (self.mbps - self.set_mbps).abs() / self.set_mbps;
        (rtt_err, bw_err)
    }

    /// Whether both are within `tol` (relative); RTTs below 2 ms are also
    /// accepted within 0.2 ms absolute, as host noise dominates there. On a
    /// lossy link TCP cannot fill the pipe, so only the RTT is checked.
    pub fn within(&self, tol: f64) -> bool {
        let (rtt_err, bw_err) = self.errors();
        let rtt_ok = rtt_err <= tol || (self.rtt_ms - self.set_rtt_ms).abs() <= 0.2;
        rtt_ok && (!self.rate_checked || bw_err <= tol)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("link {link}: {what}: {source}")]
    Io {
        link: String,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("link {0}: probe thread failed")]
    Thread(String),
    #[error(transparent)]
    Net(#[from] crate::netns::NetError),
}

/// Median and minimum of 15 TCP echo round trips a -> b -> a, ms.
pub fn echo_rtt(topo: &Topology, link: &Link) -> Result<(f64, f64), ProbeError> {
    let name = link.id.short().to_string();
    let io = |what: &'static str| {
        let name = name.clone();
        move |source| ProbeError::Io {
            link: name.clone(),
            what,
            source,
        }
    };
    let addr = SocketAddr::from((link.b.addr, PROBE_PORT));
    let a_ns = topo.namespace(&link.a.ns);
    let b_ns = topo.namespace(&link.b.ns);
    // Echo server on b, client on a.
    let (tx, rx) = std::sync::mpsc::channel();
    let server = b_ns.run_in(move || -> std::io::Result<()> {
        let l = TcpListener::bind(addr)?;
        let _ = tx.send(());
        let (mut s, _) = l.accept()?;
        s.set_nodelay(true)?;
        let mut buf = [0u8; 64];
        loop {
            match s.read(&mut buf)? {
                0 => return Ok(()),
                n => s.write_all(&buf[..n])?,
            }
        }
    })?;
    rx.recv_timeout(Duration::from_secs(5))
        .map_err(|_| ProbeError::Thread(name.clone()))?;
    let rounds = 15;
    let client = a_ns.run_in(move || -> std::io::Result<Vec<f64>> {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut out = Vec::new();
        let mut buf = [0u8; 32];
        for i in 0..rounds + 1 {
            let t = Instant::now();
            s.write_all(&[i as u8; 32])?;
            s.read_exact(&mut buf)?;
            // The first exchange also warms up ARP-free routes and caches.
            if i > 0 {
                out.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        Ok(out)
    })?;
    let mut rtts = client
        .join()
        .map_err(|_| ProbeError::Thread(name.clone()))?
        .map_err(io("echo"))?;
    server
        .join()
        .map_err(|_| ProbeError::Thread(name.clone()))?
        .map_err(io("echo server"))?;
    rtts.sort_by(|a, b| a.total_cmp(b));
    Ok((rtts[rtts.len() / 2], rtts[0]))
}

/// The fixed cost of the userspace path (TUN hops, thread wake-ups) per
/// direction, in ns: half the echo RTT of a link with no delay and a very
/// high rate. The userspace backend subtracts it from each direction's
/// delay, so the RTT seen end to end is the configured one.
pub fn calibrate_userspace(tag: &str) -> Result<u64, ProbeError> {
    use crate::config::LinkSpec;
    use crate::topology::{Backend, LinkId};
    let spec = LinkSpec {
        rtt_ms: 0.0,
        bandwidth_mbps: 10_000.0,
        jitter_ms: 0.0,
        loss_percent: 0.0,
    };
    let topo = Topology::build(tag, Backend::Userspace, spec, spec, 0, 0)?;
    let (median, _) = echo_rtt(&topo, topo.link(LinkId::ProverVerifier))?;
    Ok((median * 1e6 / 2.0) as u64)
}

/// Measure RTT and a -> b throughput of `link`.
pub fn measure(
    topo: &Topology,
    link: &Link,
    bulk: Duration,
) -> Result<LinkMeasurement, ProbeError> {
    let name = link.id.short().to_string();
    let io = |what: &'static str| {
        let name = name.clone();
        move |source| ProbeError::Io {
            link: name.clone(),
            what,
            source,
        }
    };
    let addr = SocketAddr::from((link.b.addr, PROBE_PORT));
    let a_ns = topo.namespace(&link.a.ns);
    let b_ns = topo.namespace(&link.b.ns);

    let (rtt_ms, rtt_min_ms) = echo_rtt(topo, link)?;

    // Bulk a -> b. The rate is read from the receiving interface's byte
    // counter (what crossed the emulated link), between 30% and 90% of the
    // transfer: after slow start, before the tail. Application-level byte
    // counts would be skewed by loss recovery (bytes held back behind a hole
    // arrive in a burst).
    // At least 40 round trips and 0.6 s, so the ramp-up is a small part.
    let secs = bulk
        .as_secs_f64()
        .max(link.spec.rtt_ms * 40.0 / 1e3)
        .max(0.6);
    let target_bytes = ((link.spec.bandwidth_mbps * 1e6 / 8.0) * secs)
        .clamp(256.0 * 1024.0, 256.0 * 1024.0 * 1024.0) as u64;
    let dev = link.b.dev.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let receiver = b_ns.run_in(move || -> std::io::Result<Vec<(Instant, u64, u64)>> {
        use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
        use std::sync::Arc;
        let l = TcpListener::bind(addr)?;
        let _ = tx.send(());
        let total = Arc::new(AtomicU64::new(0));
        let open = Arc::new(AtomicUsize::new(STREAMS));
        let mut readers = Vec::new();
        for _ in 0..STREAMS {
            let (mut s, _) = l.accept()?;
            s.set_read_timeout(Some(Duration::from_secs(120)))?;
            let (total, open) = (total.clone(), open.clone());
            readers.push(std::thread::spawn(move || {
                let mut buf = vec![0u8; 256 * 1024];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    total.fetch_add(n as u64, Ordering::Relaxed);
                }
                open.fetch_sub(1, Ordering::Relaxed);
            }));
        }
        // This thread is in the namespace; the readers need not be.
        let mut marks = vec![(Instant::now(), 0, rx_bytes(&dev)?)];
        while open.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(Duration::from_millis(2));
            marks.push((
                Instant::now(),
                total.load(Ordering::Relaxed),
                rx_bytes(&dev)?,
            ));
        }
        for r in readers {
            let _ = r.join();
        }
        marks.push((
            Instant::now(),
            total.load(Ordering::Relaxed),
            rx_bytes(&dev)?,
        ));
        Ok(marks)
    })?;
    rx.recv_timeout(Duration::from_secs(5))
        .map_err(|_| ProbeError::Thread(name.clone()))?;
    // Several streams, as iperf -P does: the pipe fills within a few round
    // trips and one stream's loss recovery does not leave it idle.
    let per_stream = target_bytes / STREAMS as u64;
    let mut senders = Vec::new();
    for _ in 0..STREAMS {
        senders.push(a_ns.run_in(move || -> std::io::Result<()> {
            let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
            let chunk = vec![0x5au8; 64 * 1024];
            let mut left = per_stream;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                s.write_all(&chunk[..n])?;
                left -= n as u64;
            }
            s.shutdown(std::net::Shutdown::Write)?;
            Ok(())
        })?);
    }
    for sender in senders {
        sender
            .join()
            .map_err(|_| ProbeError::Thread(name.clone()))?
            .map_err(io("bulk send"))?;
    }
    let marks = receiver
        .join()
        .map_err(|_| ProbeError::Thread(name.clone()))?
        .map_err(io("bulk receive"))?;
    let total = marks.last().map(|m| m.1).unwrap_or(0);
    let at = |frac: f64| {
        *marks
            .iter()
            .find(|m| m.1 as f64 >= total as f64 * frac)
            .unwrap_or(marks.last().expect("marks"))
    };
    let (t1, _, w1) = at(0.30);
    let (t2, _, w2) = at(0.90);
    let secs = (t2 - t1).as_secs_f64().max(1e-9);
    let mbps = (w2 - w1) as f64 * 8.0 / secs / 1e6;
    // Goodput over the whole transfer, slow start included.
    let (first, last) = (marks[0], *marks.last().expect("marks"));
    let goodput_mbps = last.1 as f64 * 8.0 / (last.0 - first.0).as_secs_f64().max(1e-9) / 1e6;
    Ok(LinkMeasurement {
        link: name,
        backend: topo.backend.as_str().to_string(),
        set_rtt_ms: link.spec.rtt_ms,
        set_mbps: link.spec.bandwidth_mbps,
        rtt_ms,
        rtt_min_ms,
        mbps,
        goodput_mbps,
        rate_checked: link.spec.loss_percent == 0.0,
    })
}

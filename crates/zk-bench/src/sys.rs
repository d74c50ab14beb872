//! System probes every benchmark here shares: memory of a process (peak and
//! current resident set), CPU time of the calling thread, and interface byte
//! counters as the calling thread's network namespace sees them. All read
//! Linux's `/proc`; elsewhere they report nothing (`None`, zero) rather than
//! fail, so a benchmark still runs and says what it could not measure.
//!
//! One home for these, so the harness (`webproof-bench`'s `proc` and
//! `probe`), the ZK engine benchmark ([`crate::zkbench`]) and the
//! attested-TLS benchmarks (`webproof-teebench`) read them the same way.
//! They live in this crate, the smallest one every benchmark can depend on
//! without a circle (the ZK benchmark need not depend on the harness, with
//! its namespaces, processes and TLS), and a hundred lines of `/proc`
//! readers did not earn a crate of their own.

/// Which process a status figure is about.
#[derive(Clone, Copy, Debug)]
pub enum Pid {
    /// The calling process.
    This,
    /// Another process.
    Other(i32),
}

/// A `kB` field of `/proc/PID/status` (`"VmHWM:"` peak resident set,
/// `"VmRSS:"` current), in kB.
pub fn status_kb(pid: Pid, field: &str) -> Option<u64> {
    let path = match pid {
        Pid::This => "/proc/self/status".to_string(),
        Pid::Other(p) => format!("/proc/{p}/status"),
    };
    parse_status_kb(&std::fs::read_to_string(path).ok()?, field)
}

/// The `kB` value of `field` in `/proc/PID/status` text.
pub fn parse_status_kb(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The calling process's peak (`"VmHWM:"`) or current (`"VmRSS:"`) resident
/// set in bytes; 0 where unknown.
pub fn own_rss_bytes(field: &str) -> u64 {
    status_kb(Pid::This, field).map_or(0, |kb| kb * 1024)
}

/// Reset the calling process's peak-RSS mark, so the next `VmHWM` is the
/// peak of what follows (Linux: writing 5 to `clear_refs`).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// CPU time consumed by the calling thread so far, in ms (Linux schedstat;
/// 0 elsewhere).
pub fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e6)
}

/// `(rx_bytes, tx_bytes)` of `ifname` in the calling thread's namespace
/// (`/proc/thread-self/net` follows the thread's namespace; sysfs would
/// show the namespace that mounted it).
pub fn interface_bytes(ifname: &str) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev").ok()?;
    parse_net_dev(&text, ifname)
}

/// Parse `(rx_bytes, tx_bytes)` of `ifname` from `/proc/net/dev` text.
pub fn parse_net_dev(text: &str, ifname: &str) -> Option<(u64, u64)> {
    for line in text.lines().skip(2) {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        if name.trim() == ifname {
            let f: Vec<u64> = rest
                .split_whitespace()
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?;
            // rx: bytes packets errs drop fifo frame compressed multicast;
            // then tx bytes ...
            return Some((*f.first()?, *f.get(8)?));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status_and_net_dev() {
        let status = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t 1024 kB\n";
        assert_eq!(parse_status_kb(status, "VmHWM:"), Some(2048));
        assert_eq!(parse_status_kb(status, "VmRSS:"), Some(1024));
        assert_eq!(parse_status_kb(status, "VmSwap:"), None);
        let dev = "Inter-|   Receive\n face |bytes packets\n  lo: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0\nwpb-a: 5 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n";
        assert_eq!(parse_net_dev(dev, "lo"), Some((10, 20)));
        assert_eq!(parse_net_dev(dev, "wpb-a"), Some((5, 7)));
        assert_eq!(parse_net_dev(dev, "eth0"), None);
        assert_eq!(parse_net_dev("garbage", "lo"), None);
    }

    #[test]
    fn own_process_is_measured_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(own_rss_bytes("VmRSS:") > 0);
            assert!(own_rss_bytes("VmHWM:") >= own_rss_bytes("VmRSS:") / 2);
        }
    }
}

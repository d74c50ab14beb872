//! The few Linux system calls the nested-TLS bench needs: per-thread CPU
//! clocks (so client and server CPU are measured separately while running in
//! one process), and a private network namespace whose loopback interface
//! carries only the bench's traffic (so its interface counters are exact).
//!
//! All `unsafe` of this crate lives here.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A handle on one thread's CPU-time clock, readable from any thread.
#[derive(Debug, Clone, Copy)]
pub struct ThreadCpuClock(libc::clockid_t);

impl ThreadCpuClock {
    /// The calling thread's clock.
    pub fn current() -> std::io::Result<Self> {
        let mut id: libc::clockid_t = 0;
        // SAFETY: pthread_self() is always valid for the calling thread and
        // `id` is a valid out-pointer.
        let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        Ok(Self(id))
    }

    /// CPU time consumed so far by the thread, in seconds. The thread must
    /// still be alive (the bench keeps its threads alive while reading).
    pub fn seconds(&self) -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out-pointer; an invalid clock id only makes
        // the call fail, which we report as NaN.
        let rc = unsafe { libc::clock_gettime(self.0, &mut ts) };
        if rc != 0 {
            return f64::NAN;
        }
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }
}

/// A private network namespace, kept alive by an open descriptor.
#[derive(Debug)]
pub struct NetNs {
    fd: OwnedFd,
}

/// `struct ifreq` prefix for SIOC[GS]IFFLAGS: name, then flags (the kernel
/// struct is 40 bytes; the tail is padding for our use).
#[repr(C)]
struct IfReqFlags {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

const SIOCGIFFLAGS: libc::c_ulong = 0x8913;
const SIOCSIFFLAGS: libc::c_ulong = 0x8914;

impl NetNs {
    /// Create a namespace with its loopback up. Needs CAP_SYS_ADMIN. The
    /// work is done on a throw-away thread so no caller thread changes
    /// namespace.
    pub fn create() -> std::io::Result<Self> {
        std::thread::spawn(|| -> std::io::Result<Self> {
            // SAFETY: plain system calls on the current thread; unshare only
            // affects this short-lived thread.
            unsafe {
                if libc::unshare(libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            set_loopback_up()?;
            let f = std::fs::File::open("/proc/thread-self/ns/net")?;
            Ok(Self { fd: f.into() })
        })
        .join()
        .map_err(|_| std::io::Error::other("namespace thread panicked"))?
    }

    /// Move the calling thread into this namespace.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: `fd` is an open namespace descriptor owned by self.
        if unsafe { libc::setns(self.fd.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

fn set_loopback_up() -> std::io::Result<()> {
    // SAFETY: socket() returns a new descriptor we immediately own.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid descriptor.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut req = IfReqFlags {
        name: [0; 16],
        flags: 0,
        _pad: [0; 22],
    };
    req.name[..2].copy_from_slice(b"lo");
    // SAFETY: `req` is a properly sized, initialised ifreq for these ioctls.
    unsafe {
        if libc::ioctl(sock.as_raw_fd(), SIOCGIFFLAGS as _, &mut req) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        req.flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(sock.as_raw_fd(), SIOCSIFFLAGS as _, &mut req) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Byte counters of one interface as the calling thread's namespace sees
/// it: the harness's probe, one implementation for every benchmark.
pub use webproof_zk_bench::sys::interface_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_clock_advances_with_work() {
        let c = ThreadCpuClock::current().unwrap();
        let t0 = c.seconds();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(c.seconds() > t0);
    }
}

//! Network namespaces, `ip`/`tc` invocations, and clean-up of everything the
//! harness creates.
//!
//! Every namespace and root-namespace device the harness makes is named with
//! the prefix [`PREFIX`], so `webproof bench clean` can find leftovers of a
//! run that was killed. A process-wide registry remembers what the current
//! run created, so the signal handler can remove it on Ctrl-C.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Mutex;

/// Prefix of every namespace and device the harness creates.
pub const PREFIX: &str = "wpb-";

#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("`{cmd}` failed: {stderr}")]
    Command { cmd: String, stderr: String },
    #[error("cannot run `{cmd}`: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("namespace {name}: {source}")]
    Namespace {
        name: String,
        source: std::io::Error,
    },
    #[error("network emulation needs root (CAP_NET_ADMIN); run as root or with sudo")]
    NotRoot,
}

/// Run a command, returning stdout, failing with its stderr.
pub fn run(program: &str, args: &[&str]) -> Result<String, NetError> {
    let cmd = format!("{program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|source| NetError::Spawn {
            cmd: cmd.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(NetError::Command {
            cmd,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `ip ARGS...`
pub fn ip(args: &[&str]) -> Result<String, NetError> {
    run("ip", args)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[derive(Default)]
struct Registry {
    namespaces: Vec<String>,
    pids: Vec<i32>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    namespaces: Vec::new(),
    pids: Vec::new(),
});

/// Every namespace this process has created, deleted or not: another
/// harness may run beside this one (a benchmark beside the tests), so a
/// leftover check must look only at its own.
static CREATED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The namespaces this process created that still exist.
pub fn leftovers_of_this_process() -> Result<Vec<String>, NetError> {
    let created = CREATED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(ip(&["netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| created.iter().any(|c| c == n))
        .map(str::to_string)
        .collect())
}

/// Remember a child so an interrupt can kill it (a negative id: the
/// process group it leads, killed whole).
pub fn register_pid(pid: i32) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pids
        .push(pid);
}

pub fn unregister_pid(pid: i32) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pids
        .retain(|p| *p != pid);
}

/// Kill registered children and delete registered namespaces. Called from the
/// interrupt path; safe to call more than once.
pub fn emergency_cleanup() {
    let (pids, names) = {
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        (
            std::mem::take(&mut r.pids),
            std::mem::take(&mut r.namespaces),
        )
    };
    for pid in pids {
        // SAFETY: sending a signal to a pid we spawned and have not reaped
        // (or to the group such a child leads).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    for n in names {
        let _ = delete_namespace(&n);
    }
}

/// A named network namespace, deleted (with its processes) on drop.
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// Create `name` (which must start with [`PREFIX`]) with loopback up.
    pub fn create(name: &str) -> Result<Namespace, NetError> {
        assert!(name.starts_with(PREFIX), "namespace names carry the prefix");
        if !is_root() {
            return Err(NetError::NotRoot);
        }
        // A leftover of the same name (killed run) is replaced.
        if ip(&["netns", "list"])?
            .lines()
            .any(|l| l.split_whitespace().next() == Some(name))
        {
            delete_namespace(name)?;
        }
        ip(&["netns", "add", name])?;
        CREATED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(name.to_string());
        REGISTRY
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .namespaces
            .push(name.to_string());
        let ns = Namespace {
            name: name.to_string(),
        };
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Open the namespace file (for `setns`).
    pub fn open(&self) -> Result<OwnedFd, NetError> {
        open_ns(&self.name)
    }

    /// A command that runs `program` inside this namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Result<Command, NetError> {
        let fd = self.open()?;
        let mut cmd = Command::new(program);
        let raw = fd.as_raw_fd();
        // SAFETY: the closure runs between fork and exec and calls only
        // async-signal-safe functions (setns, prctl). The fd stays open
        // because `fd` is moved into the closure, which the Command keeps.
        unsafe {
            cmd.pre_exec(move || {
                let _keep = &fd;
                if libc::setns(raw, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Children die with the thread that spawned them, so a killed
                // harness leaves no process behind.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        Ok(cmd)
    }

    /// Run `f` on a new thread that has entered this namespace (sockets it
    /// opens live in the namespace).
    pub fn run_in<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<std::thread::JoinHandle<T>, NetError> {
        let fd = self.open()?;
        let name = self.name.clone();
        std::thread::Builder::new()
            .name(format!("in-{name}"))
            .spawn(move || {
                // SAFETY: setns on the calling thread with a namespace fd.
                let r = unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(
                    r,
                    0,
                    "setns into {name}: {}",
                    std::io::Error::last_os_error()
                );
                f()
            })
            .map_err(|source| NetError::Namespace {
                name: self.name.clone(),
                source,
            })
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Err(e) = delete_namespace(&self.name) {
            tracing::warn!("cleaning up namespace {}: {e}", self.name);
        }
        REGISTRY
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .namespaces
            .retain(|n| *n != self.name);
    }
}

fn open_ns(name: &str) -> Result<OwnedFd, NetError> {
    let path = std::ffi::CString::new(format!("/run/netns/{name}")).expect("no NUL in name");
    // SAFETY: open(2) of a path we own; the fd is owned below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(NetError::Namespace {
            name: name.to_string(),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: fd was just returned by open.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Kill every process in a namespace, then delete it.
pub fn delete_namespace(name: &str) -> Result<(), NetError> {
    if let Ok(pids) = ip(&["netns", "pids", name]) {
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            // SAFETY: signalling a process found in our own namespace.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    ip(&["netns", "delete", name]).map(|_| ())
}

/// What `clean` found and removed.
#[derive(Debug, Default)]
pub struct CleanReport {
    pub namespaces: Vec<String>,
    pub links: Vec<String>,
}

/// Remove every namespace and root-namespace link with the harness prefix.
pub fn clean_all() -> Result<CleanReport, NetError> {
    if !is_root() {
        return Err(NetError::NotRoot);
    }
    let mut report = CleanReport::default();
    for line in ip(&["netns", "list"])?.lines() {
        if let Some(name) = line.split_whitespace().next() {
            if name.starts_with(PREFIX) {
                delete_namespace(name)?;
                report.namespaces.push(name.to_string());
            }
        }
    }
    for line in ip(&["-o", "link", "show"])?.lines() {
        // "12: wpb-xxx@if11: <...>"
        if let Some(name) = line.split(':').nth(1) {
            let name = name.trim().split('@').next().unwrap_or("");
            if name.starts_with(PREFIX) {
                // Deleting one end of a veth pair removes the other too.
                match ip(&["link", "delete", name]) {
                    Ok(_) => report.links.push(name.to_string()),
                    Err(NetError::Command { stderr, .. })
                        if stderr.contains("Cannot find device") => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(report)
}

/// Install SIGINT/SIGTERM handling: the first signal sets the returned flag
/// (the runner stops at the next check and its guards tear everything down);
/// if the run has not stopped 5 s later, or on a second signal, registered
/// processes and namespaces are removed and the process exits with 130.
pub fn install_interrupt_handler() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, OnceLock};
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let mut signals = match signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ]) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot install signal handler: {e}");
                return flag;
            }
        };
        std::thread::spawn(move || {
            for _ in signals.forever() {
                if f.swap(true, Ordering::SeqCst) {
                    emergency_cleanup();
                    std::process::exit(130);
                }
                eprintln!("\ninterrupted: stopping and cleaning up (press Ctrl-C again to force)");
                std::thread::spawn(|| {
                    std::thread::sleep(std::time::Duration::from_secs(5));
                    emergency_cleanup();
                    std::process::exit(130);
                });
            }
        });
        flag
    })
    .clone()
}

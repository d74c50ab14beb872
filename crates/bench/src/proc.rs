//! Child processes measured from outside: wall time, CPU time and peak
//! memory (from `wait4`'s rusage and VmHWM polled from /proc, or read from
//! /proc at a given moment while they run), their stdout lines with the time
//! each was read, and the tail of their stderr for error messages.
//!
//! Children are spawned with `PR_SET_PDEATHSIG`, so they must be spawned from
//! a thread that lives as long as they do (the runner's thread). A child
//! that starts processes of its own (the browser prover's driver and its
//! chromium) is spawned as the leader of a process group
//! ([`Proc::spawn_group`]), and the whole group is killed with it.

use crate::netns;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use webproof_zk_bench::sys;

#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("cannot start {role} (`{cmd}`): {source}")]
    Spawn {
        role: String,
        cmd: String,
        source: std::io::Error,
    },
    #[error("{role} did not become ready within {secs} s{tail}")]
    NotReady {
        role: String,
        secs: u64,
        tail: String,
    },
    #[error("{role} exited before it was ready ({status}){tail}")]
    DiedEarly {
        role: String,
        status: String,
        tail: String,
    },
    #[error("{role} did not finish within {secs} s{tail}")]
    Timeout {
        role: String,
        secs: u64,
        tail: String,
    },
    #[error("interrupted")]
    Interrupted,
}

/// What a finished process cost.
#[derive(Clone, Debug, Default)]
pub struct Usage {
    /// Exit code, or 128+signal.
    pub code: i32,
    pub wall: Duration,
    pub cpu_user: Duration,
    pub cpu_sys: Duration,
    /// Peak resident set, bytes (see [`child_peak_kb`]).
    pub peak_rss: u64,
}

impl Usage {
    pub fn cpu_ms(&self) -> f64 {
        (self.cpu_user + self.cpu_sys).as_secs_f64() * 1e3
    }
}

/// A running child.
pub struct Proc {
    pub role: String,
    pid: i32,
    started: Instant,
    lines: Receiver<(Instant, String)>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    hwm_kb: Arc<std::sync::atomic::AtomicU64>,
    stop_poll: Arc<AtomicBool>,
    /// The harness's resident set when it forked this child (see `try_reap`).
    parent_rss_kb: u64,
    reaped: Option<Usage>,
    /// The child leads a process group of its own, killed with it.
    group: bool,
    /// Stdout lines read so far that were not the ready line, with the
    /// moment each was read.
    pub stdout: Vec<(Instant, String)>,
}

fn tail_text(t: &Mutex<VecDeque<String>>) -> String {
    let t = t.lock().unwrap_or_else(|e| e.into_inner());
    if t.is_empty() {
        String::new()
    } else {
        let lines: Vec<&str> = t.iter().map(|s| s.as_str()).collect();
        format!("; its stderr ended with:\n  {}", lines.join("\n  "))
    }
}

fn read_hwm_kb(pid: i32) -> Option<u64> {
    sys::status_kb(sys::Pid::Other(pid), "VmHWM:")
}

/// The peak of a child from `wait4`'s ru_maxrss and the polled VmHWM.
/// Linux folds the forked copy of the parent's memory into ru_maxrss at
/// `exec`, so ru_maxrss is max(parent's RSS at fork, child's peak): it is
/// the child's own only when clearly above the parent's RSS; otherwise the
/// polled VmHWM (per address space, so the child's alone) is used.
pub fn child_peak_kb(ru_maxrss_kb: u64, polled_hwm_kb: u64, parent_rss_kb: u64) -> u64 {
    if ru_maxrss_kb > parent_rss_kb + parent_rss_kb / 20 + 4096 {
        ru_maxrss_kb.max(polled_hwm_kb)
    } else {
        polled_hwm_kb
    }
}

impl Proc {
    /// Start `cmd` with piped stdout/stderr.
    pub fn spawn(role: &str, cmd: Command) -> Result<Proc, ProcError> {
        Proc::start(role, cmd, false)
    }

    /// Start `cmd` as the leader of a new process group, which is killed
    /// whole: by [`Proc::kill`] and on drop, as soon as the leader has
    /// exited (before it is reaped), and by the interrupt path
    /// ([`netns::emergency_cleanup`]). For children with children of their
    /// own, which would otherwise outlive them (chromium under its driver).
    pub fn spawn_group(role: &str, mut cmd: Command) -> Result<Proc, ProcError> {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        Proc::start(role, cmd, true)
    }

    fn start(role: &str, mut cmd: Command, group: bool) -> Result<Proc, ProcError> {
        let shown = format!("{cmd:?}");
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let parent_rss_kb = sys::status_kb(sys::Pid::This, "VmRSS:").unwrap_or(0);
        let mut child = cmd.spawn().map_err(|source| ProcError::Spawn {
            role: role.to_string(),
            cmd: shown,
            source,
        })?;
        let pid = child.id() as i32;
        // A negative id names the group (as for kill(2)).
        netns::register_pid(if group { -pid } else { pid });
        let started = Instant::now();
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let st = stderr_tail.clone();
        let stderr = child.stderr.take().expect("piped");
        let r = role.to_string();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                tracing::debug!("[{r}] {line}");
                let mut t = st.lock().unwrap_or_else(|e| e.into_inner());
                t.push_back(line);
                if t.len() > 20 {
                    t.pop_front();
                }
            }
        });
        // Peak memory is also polled: ru_maxrss is exact but only known at
        // exit, and a killed verifier's rusage is still reported by wait4.
        let hwm_kb = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let stop_poll = Arc::new(AtomicBool::new(false));
        {
            let hwm = hwm_kb.clone();
            let stop = stop_poll.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match read_hwm_kb(pid) {
                        Some(kb) => {
                            hwm.fetch_max(kb, Ordering::Relaxed);
                        }
                        None => break,
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
        }
        // The Child handle is dropped: we reap with wait4 ourselves.
        drop(child);
        Ok(Proc {
            role: role.to_string(),
            pid,
            started,
            lines,
            stderr_tail,
            hwm_kb,
            stop_poll,
            parent_rss_kb,
            reaped: None,
            group,
            stdout: Vec::new(),
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    pub fn stderr_tail(&self) -> String {
        tail_text(&self.stderr_tail)
    }

    /// When the process was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Stdout lines that arrived since the last call (also kept in
    /// `stdout`).
    pub fn new_lines(&mut self) -> Vec<(Instant, String)> {
        let mut out = Vec::new();
        while let Ok(l) = self.lines.try_recv() {
            self.stdout.push(l.clone());
            out.push(l);
        }
        out
    }

    /// After exit: the lines the reader thread still holds.
    pub fn drain_lines(&mut self) -> Vec<(Instant, String)> {
        let mut out = self.new_lines();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(100)) {
            self.stdout.push(l.clone());
            out.push(l);
        }
        out
    }

    /// Usage so far of a running process (CPU of it and of its waited-for
    /// children, peak memory), read from /proc; `None` once it has exited.
    pub fn usage_now(&self) -> Option<Usage> {
        if self.reaped.is_some() {
            return None;
        }
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).ok()?;
        // Fields after the command name, which may contain spaces.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<u64> = rest.split(' ').map(|x| x.parse().unwrap_or(0)).collect();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        let ticks =
            |i: usize| Duration::from_micros(f.get(i).copied().unwrap_or(0) * 1_000_000 / hz);
        // utime, stime, cutime, cstime are fields 14-17 (1-based), i.e.
        // 11-14 after the state field.
        let hwm = read_hwm_kb(self.pid)
            .unwrap_or(0)
            .max(self.hwm_kb.load(Ordering::Relaxed));
        Some(Usage {
            code: 0,
            wall: self.started.elapsed(),
            cpu_user: ticks(11) + ticks(13),
            cpu_sys: ticks(12) + ticks(14),
            peak_rss: hwm * 1024,
        })
    }

    /// Reap without blocking; Some(usage) once exited.
    pub fn try_reap(&mut self) -> Option<Usage> {
        if let Some(u) = &self.reaped {
            return Some(u.clone());
        }
        if self.group {
            // Whatever of the group the leader left behind dies with it.
            // Checked without reaping: the zombie leader keeps its pid, so
            // the group id cannot have been reused.
            // SAFETY: siginfo_t is plain data that waitid fills.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: waiting (without reaping) on our own child.
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                )
            };
            // SAFETY: waitid filled `info` (si_pid stays 0 if nothing exited).
            if r != 0 || unsafe { info.si_pid() } != self.pid {
                return None;
            }
            // SAFETY: signalling the group our unreaped child leads.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
        let mut status = 0;
        // SAFETY: rusage is plain data that wait4 fills.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waiting on our own child with valid out-pointers.
        let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut ru) };
        if r != self.pid {
            return None;
        }
        let wall = self.started.elapsed();
        self.stop_poll.store(true, Ordering::Relaxed);
        netns::unregister_pid(if self.group { -self.pid } else { self.pid });
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        let peak_kb = child_peak_kb(
            ru.ru_maxrss as u64,
            self.hwm_kb.load(Ordering::Relaxed),
            self.parent_rss_kb,
        );
        let u = Usage {
            code,
            wall,
            cpu_user: tv(ru.ru_utime),
            cpu_sys: tv(ru.ru_stime),
            peak_rss: peak_kb * 1024,
        };
        self.reaped = Some(u.clone());
        Some(u)
    }

    /// Wait for the first stdout line that is a JSON object with
    /// `"event":"listening"`; other lines are kept in `stdout`.
    pub fn wait_ready(
        &mut self,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<serde_json::Value, ProcError> {
        let deadline = Instant::now() + timeout;
        loop {
            if interrupt.load(Ordering::Relaxed) {
                return Err(ProcError::Interrupted);
            }
            match self.lines.recv_timeout(Duration::from_millis(20)) {
                Ok((at, line)) => {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                        if v["event"] == "listening" {
                            return Ok(v);
                        }
                    }
                    self.stdout.push((at, line));
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(50));
                    let status = self
                        .try_reap()
                        .map(|u| format!("exit code {}", u.code))
                        .unwrap_or_else(|| "closed stdout".into());
                    return Err(ProcError::DiedEarly {
                        role: self.role.clone(),
                        status,
                        tail: self.stderr_tail(),
                    });
                }
            }
            if Instant::now() > deadline {
                return Err(ProcError::NotReady {
                    role: self.role.clone(),
                    secs: timeout.as_secs(),
                    tail: self.stderr_tail(),
                });
            }
        }
    }

    /// Wait for exit; returns usage and every stdout line.
    pub fn wait(
        &mut self,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<(Usage, Vec<String>), ProcError> {
        let deadline = Instant::now() + timeout;
        loop {
            self.new_lines();
            if let Some(u) = self.try_reap() {
                self.drain_lines();
                let lines = std::mem::take(&mut self.stdout);
                return Ok((u, lines.into_iter().map(|(_, l)| l).collect()));
            }
            if interrupt.load(Ordering::Relaxed) {
                self.kill();
                return Err(ProcError::Interrupted);
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(ProcError::Timeout {
                    role: self.role.clone(),
                    secs: timeout.as_secs(),
                    tail: self.stderr_tail(),
                });
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// SIGTERM, then SIGKILL after `grace`; returns usage.
    pub fn terminate(&mut self, grace: Duration) -> Usage {
        if let Some(u) = self.try_reap() {
            return u;
        }
        // SAFETY: signalling our own unreaped child.
        unsafe { libc::kill(self.pid, libc::SIGTERM) };
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Some(u) = self.try_reap() {
                return u;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.kill();
        self.reaped.clone().unwrap_or_default()
    }

    /// SIGKILL and reap (no-op once exited).
    pub fn kill(&mut self) {
        if self.reaped.is_some() {
            return;
        }
        if self.group {
            // SAFETY: signalling the group our unreaped child leads.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
        // SAFETY: signalling our own unreaped child.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        for _ in 0..500 {
            if self.try_reap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
        self.stop_poll.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_peak_is_not_the_parents() {
        // ru_maxrss no higher than the harness was at fork: not the child's.
        assert_eq!(child_peak_kb(75_000, 3_000, 74_000), 3_000);
        assert_eq!(child_peak_kb(74_000, 3_000, 74_000), 3_000);
        // Clearly above it: the child's own peak, exact.
        assert_eq!(child_peak_kb(200_000, 150_000, 74_000), 200_000);
    }

    #[test]
    fn a_short_child_is_measured_on_its_own() {
        // The test process holds more memory than `true` ever will.
        let ballast = vec![1u8; 64 << 20];
        let mut p = Proc::spawn("true", Command::new("true")).unwrap();
        let (u, _) = p
            .wait(Duration::from_secs(10), &AtomicBool::new(false))
            .unwrap();
        assert_eq!(u.code, 0);
        assert!(u.peak_rss < 32 << 20, "{} bytes", u.peak_rss);
        assert_eq!(ballast.iter().map(|x| *x as usize).sum::<usize>(), 64 << 20);
    }

    fn alive(pid: i32) -> bool {
        // A zombie is dead (its state is `Z`), as is a pid that is gone.
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
            st.rsplit_once(") ")
                .is_some_and(|(_, r)| !r.starts_with('Z'))
        })
    }

    /// Whether `pid` is dead within a moment (a signal is not instant).
    fn gone(pid: i32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// The pid a group leader printed of the child it started.
    fn grandchild(p: &mut Proc) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some((_, l)) = p.new_lines().first() {
                return l.trim().parse().expect("a pid");
            }
            assert!(Instant::now() < deadline, "no pid printed");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_group_dies_with_its_leader() {
        let sh = |script: &str| {
            let mut c = Command::new("sh");
            c.args(["-c", script]);
            c
        };
        // Killed: the leader's child goes too.
        let mut p = Proc::spawn_group("g", sh("sleep 60 & echo $!; wait")).unwrap();
        let child = grandchild(&mut p);
        assert!(alive(child));
        p.kill();
        assert!(gone(child), "{child} survived its group's kill");
        // Exited on its own, leaving a child behind: killed when reaped.
        let mut p = Proc::spawn_group("g", sh("sleep 60 & echo $!")).unwrap();
        let child = grandchild(&mut p);
        let (u, _) = p
            .wait(Duration::from_secs(10), &AtomicBool::new(false))
            .unwrap();
        assert_eq!(u.code, 0);
        assert!(gone(child), "{child} outlived its group's leader");
    }
}

//! The `webproof` command: one binary, one subcommand per job.
//!
//! Each subcommand's arguments and behaviour live in `cmd/<area>.rs`, which
//! only parses and calls into the library crates; the protocol lives there.

/// `println!` for the command's output: a reader that stopped reading
/// (`webproof keygen --json | head -3`) ends the process quietly, as
/// `SIGPIPE` ends other Unix tools, instead of the panic `println!` gives.
/// (The signal itself stays ignored: it would also kill the process on a
/// write to a closed socket or child pipe.)
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::stdout_or_exit(|w| {
            use std::io::Write;
            writeln!(w, $($arg)*)
        })
    };
}

/// `print!` for the command's output, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout_or_exit(|w| {
            use std::io::Write;
            write!(w, $($arg)*)
        })
    };
}

mod cmd;
mod failure;
mod utc;

/// Write to stdout with `f`; on a closed pipe exit with the status a
/// shell reports for `SIGPIPE` (128 + 13).
pub(crate) fn stdout_or_exit(f: impl FnOnce(&mut std::io::StdoutLock<'_>) -> std::io::Result<()>) {
    let mut w = std::io::stdout().lock();
    if let Err(e) = f(&mut w) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        panic!("failed printing to stdout: {e}");
    }
}

use clap::{Parser, Subcommand};

/// Exit statuses, for `--help` (the values are [`failure`]'s).
const EXIT_STATUSES: &str = "Exit status: 0 success, 2 usage (a bad command line, or a request \
refused before any network work), 3 the verifier refused or rejected, 4 network (a link failed \
or timed out), 5 the server's TLS or certificate, 6 a proof or verification failed. With \
--json a failure prints one object on stdout: {\"error\": {\"kind\", \"decided_by\": \
usage|prover|verifier|server|network, \"detail\", \"request_reached_server\": true|false|null}}.";

/// Prove to a verifier what an HTTPS server sent you, revealing only what you choose.
#[derive(Parser)]
#[command(name = "webproof", version, about, long_about = None, propagate_version = true,
    after_help = EXIT_STATUSES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Proxy(cmd::proxy::ProxyCmd),
    #[command(flatten)]
    Attestation(cmd::attestation::AttestationCmd),
    /// Benchmarks: the network harness (default), the ZK engine, attested TLS.
    Bench(cmd::bench::BenchArgs),
    /// Probe a running service's /health (or /ready) over HTTP: exit 0
    /// when it answers 2xx, 1 otherwise (for container health checks).
    Health(cmd::health::HealthArgs),
}

/// Large buffers go straight to the kernel and back. glibc raises its
/// mmap threshold each time a mapped buffer is freed, so the large
/// buffers a session builds and drops in turn (circuits, schedules, proof
/// buffers of tens of MB) end up in the heap, which keeps its peak
/// resident. A fixed 16 MiB threshold returns them when freed. Measured
/// on MPC mode's 1 KB / 2 KB session on loopback, 3 runs each: peak RSS
/// verifier 130-136 -> 92-98 MB, prover 163-166 -> 135 MB, for about
/// 0.1 s more CPU time (pages faulted afresh). A 1 MiB threshold saved no
/// more and cost twice that.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_large_buffers() {
    // SAFETY: `mallopt` sets one allocator parameter; called first thing
    // in `main`, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 16 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_buffers() {}

fn main() -> std::process::ExitCode {
    return_large_buffers();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("WEBPROOF_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    // `--json` anywhere asks for failures as JSON too, even a command
    // line clap cannot parse.
    let json = std::env::args_os().any(|a| a == "--json");
    // `prove ... --next ...`: clap parses the first request's command
    // line, `prove` the groups after each `--next`.
    let (args, next) = cmd::proxy::split_next(std::env::args_os().collect());
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if json && e.use_stderr() => {
            let f = failure::Failure {
                kind: "usage".into(),
                decided_by: "usage",
                detail: first_line(&e.to_string()).to_string(),
                request_reached_server: Some(false),
            };
            outln!("{}", f.to_json());
            return std::process::ExitCode::from(failure::EXIT_USAGE);
        }
        Err(e) => e.exit(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("start the async runtime");
    let mut cli = cli;
    if let Command::Proxy(cmd::proxy::ProxyCmd::Prove(a)) = &mut cli.command {
        a.set_next(next);
    }
    // `health` ends with its own statuses (0/1, what a health check
    // reads), not the failure classes below.
    let command = match cli.command {
        Command::Health(c) => return runtime.block_on(cmd::health::run(c)),
        command => command,
    };
    let result = runtime.block_on(async move {
        match command {
            Command::Proxy(c) => cmd::proxy::run(c).await,
            Command::Attestation(c) => cmd::attestation::run(c).await,
            Command::Bench(c) => cmd::bench::run(c).await,
            Command::Health(_) => unreachable!("handled above"),
        }
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let f = failure::Failure::of(&e);
            if json {
                outln!("{}", f.to_json());
            } else {
                eprintln!("error: {}", f.detail);
            }
            std::process::ExitCode::from(f.exit_code())
        }
    }
}

/// Clap's message without its usage lines and hints.
pub(crate) fn first_line(s: &str) -> &str {
    let s = s.trim_start_matches("error: ");
    s.lines().next().unwrap_or(s)
}

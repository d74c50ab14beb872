//! `webproof bench zk`: throughput, traffic, setup and memory of the COT
//! source and of the QuickSilver engine on AES-128 and SHA-256 circuits.
//!
//! Each party runs on its own OS thread (one thread per party), over an
//! in-memory duplex or loopback TCP. The circuits are evaluated as chains
//! (AES: each ciphertext is the next plaintext under the committed key;
//! SHA-256: each output state is the next input state), the last output is
//! opened and compared with a clear evaluation, so a wrong engine cannot
//! report a figure.

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use rand::RngCore;
use serde::Serialize;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::Instant;
use webproof_circuits::{cache, Circuit};
use webproof_core::cot::ideal::{self, IdealCotReceiver, IdealCotSender};
use webproof_core::cot::{RandomCotReceiver, RandomCotSender};
use webproof_core::{memory_duplex, Block, Channel, Io};
use webproof_ferret::{FerretConfig, SilentCotReceiver, SilentCotSender};
use webproof_zk::{Config, Prover, Verifier};

use crate::sys::{own_rss_bytes as rss_bytes, reset_peak_rss, thread_cpu_ms};

#[derive(Args)]
pub struct ZkBenchArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// AND gates per ZK run (the circuit is evaluated until this many are proven).
    #[arg(long, default_value_t = 10_000_000)]
    pub and_gates: u64,
    /// Circuit(s) to prove.
    #[arg(long, value_enum, default_value_t = CircuitChoice::Both)]
    pub circuit: CircuitChoice,
    /// Transport(s) between the parties.
    #[arg(long, value_enum, default_value_t = TransportChoice::Both)]
    pub transport: TransportChoice,
    /// Threads per party: 1, or 2 (silent COT generation on a second thread
    /// and connection, feeding the proof thread through a bounded queue).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// COT source feeding the engine.
    #[arg(long, value_enum, default_value_t = CotChoice::Ferret)]
    pub cot: CotChoice,
    /// Ferret parameter preset (with --cot ferret).
    #[arg(long, value_enum, default_value_t = FerretPreset::Throughput)]
    pub ferret: FerretPreset,
    /// COTs drawn per batch.
    #[arg(long, default_value_t = Config::default().cot_batch)]
    pub cot_batch: usize,
    /// Correction bits per segment (one challenge each).
    #[arg(long, default_value_t = Config::default().segment_bits)]
    pub segment_bits: usize,
    /// COTs generated in the COT-only measurement.
    #[arg(long, default_value_t = 10_000_000)]
    pub cots: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CircuitChoice {
    Aes128,
    Sha256,
    Both,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportChoice {
    Memory,
    Tcp,
    Both,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CotChoice {
    /// Silent COT (webproof-ferret, bootstrapped by base OT + SoftSpokenOT).
    Ferret,
    /// Trusted-dealer COTs (insecure; isolates the engine's own cost).
    Ideal,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FerretPreset {
    Throughput,
    Balanced,
    Compact,
}

impl FerretPreset {
    fn config(self) -> FerretConfig {
        match self {
            FerretPreset::Throughput => FerretConfig::throughput(),
            FerretPreset::Balanced => FerretConfig::balanced(),
            FerretPreset::Compact => FerretConfig::compact(),
        }
    }
}

/// The COT source both parties build.
#[derive(Clone, Copy)]
struct CotSpec {
    choice: CotChoice,
    ferret: FerretPreset,
}

impl CotSpec {
    fn describe(self) -> String {
        match self.choice {
            CotChoice::Ferret => format!(
                "ferret ({}; base OT + SoftSpokenOT bootstrap, setup included in setup figures)",
                match self.ferret {
                    FerretPreset::Throughput => "throughput preset",
                    FerretPreset::Balanced => "balanced preset",
                    FerretPreset::Compact => "compact preset",
                }
            ),
            CotChoice::Ideal => "ideal (INSECURE trusted dealer, no traffic): figures measure \
                                 the ZK engine alone"
                .to_string(),
        }
    }

    /// Per-party COT halves: the ideal dealer's are made here; Ferret's are
    /// made by the parties over their channel.
    fn halves(self) -> (Option<IdealCotReceiver>, Option<IdealCotSender>) {
        match self.choice {
            CotChoice::Ideal => {
                let (s, r) = ideal::pair(rand::thread_rng().next_u64());
                (Some(r), Some(s))
            }
            CotChoice::Ferret => (None, None),
        }
    }
}

/// Figures of one party's run.
#[derive(Default)]
struct Party {
    setup_ms: f64,
    setup_sent: u64,
    run_ms: f64,
    /// CPU time of the party's thread during the run.
    cpu_ms: f64,
    sent: u64,
    and_gates: u64,
    opened: Vec<bool>,
}

#[derive(Serialize)]
struct CotRow {
    kind: &'static str,
    cot: CotChoice,
    transport: TransportChoice,
    cots: usize,
    mcot_per_s: f64,
    /// COTs per second of the busier party's CPU time (what an idle machine would give).
    mcot_per_cpu_s: f64,
    bits_per_cot_p_to_v: f64,
    bits_per_cot_v_to_p: f64,
    setup_ms: f64,
    setup_bytes: u64,
}

#[derive(Serialize)]
struct ZkRow {
    kind: &'static str,
    cot: CotChoice,
    circuit: &'static str,
    transport: TransportChoice,
    threads_per_party: u32,
    and_gates: u64,
    seconds: f64,
    mand_per_s: f64,
    /// AND gates per second of the busier party's CPU time.
    mand_per_cpu_s: f64,
    prover_cpu_s: f64,
    verifier_cpu_s: f64,
    bits_per_and_p_to_v: f64,
    bits_per_and_v_to_p: f64,
    setup_ms: f64,
    setup_bytes: u64,
    peak_rss_mb: f64,
    /// Resident memory when the run started (circuits, allocator caches).
    rss_before_mb: f64,
    output_verified: bool,
}

#[derive(Clone, Copy)]
enum Workload {
    Aes128,
    Sha256,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Aes128 => "aes128",
            Workload::Sha256 => "sha256",
        }
    }
    fn circuit(self) -> &'static Circuit {
        match self {
            Workload::Aes128 => cache::aes128(),
            Workload::Sha256 => cache::sha256_compress(),
        }
    }
    /// Which input group is chained from the output (the other is fixed).
    fn chained_input(self) -> usize {
        match self {
            Workload::Aes128 => 1,
            Workload::Sha256 => 0,
        }
    }
}

pub async fn run(args: ZkBenchArgs) -> anyhow::Result<()> {
    if !(1..=2).contains(&args.threads) {
        bail!(
            "--threads {}: 1 (engine and COT generation on one thread per party) or 2 \
             (COT generation on a second thread and connection per party)",
            args.threads
        );
    }
    let threads = args.threads;
    let cfg = Config {
        cot_batch: args.cot_batch,
        segment_bits: args.segment_bits,
    };
    let transports: &[TransportChoice] = match args.transport {
        TransportChoice::Both => &[TransportChoice::Memory, TransportChoice::Tcp],
        TransportChoice::Memory => &[TransportChoice::Memory],
        TransportChoice::Tcp => &[TransportChoice::Tcp],
    };
    let workloads: &[Workload] = match args.circuit {
        CircuitChoice::Both => &[Workload::Aes128, Workload::Sha256],
        CircuitChoice::Aes128 => &[Workload::Aes128],
        CircuitChoice::Sha256 => &[Workload::Sha256],
    };
    let (and_gates, cots) = (args.and_gates, args.cots);
    let cot = CotSpec {
        choice: args.cot,
        ferret: args.ferret,
    };
    // The measurements run on their own threads; keep them off the runtime.
    let (cot_rows, zk_rows) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        let mut cot_rows = Vec::new();
        for &t in transports {
            cot_rows.push(bench_cot(cot, t, cfg, cots)?);
        }
        let mut zk_rows = Vec::new();
        for &w in workloads {
            for &t in transports {
                zk_rows.push(bench_zk(cot, w, t, cfg, and_gates, threads)?);
            }
        }
        Ok((cot_rows, zk_rows))
    })
    .await??;

    if args.json {
        let v = serde_json::json!({
            "cot_source": cot.describe(),
            "cot": cot_rows,
            "zk": zk_rows,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("COT source: {}", cot.describe());
    println!(
        "\n{:<10} {:>12} {:>9} {:>9} {:>11} {:>11} {:>9} {:>11}",
        "cot", "COTs", "M COT/s", "M/cpu-s", "P->V b/COT", "V->P b/COT", "setup ms", "setup B"
    );
    for r in &cot_rows {
        println!(
            "{:<10} {:>12} {:>9.1} {:>9.1} {:>11.3} {:>11.3} {:>9.1} {:>11}",
            transport_name(r.transport),
            r.cots,
            r.mcot_per_s,
            r.mcot_per_cpu_s,
            r.bits_per_cot_p_to_v,
            r.bits_per_cot_v_to_p,
            r.setup_ms,
            r.setup_bytes
        );
    }
    println!(
        "\n{:<8} {:<7} {:>11} {:>7} {:>8} {:>8} {:>11} {:>11} {:>9} {:>8} {:>8} {:>8} {:>6}",
        "circuit",
        "link",
        "AND",
        "s",
        "M AND/s",
        "M/cpu-s",
        "P->V b/AND",
        "V->P b/AND",
        "setup ms",
        "setup B",
        "peak MB",
        "from MB",
        "output"
    );
    for r in &zk_rows {
        println!(
            "{:<8} {:<7} {:>11} {:>7.2} {:>8.2} {:>8.2} {:>11.3} {:>11.3} {:>9.1} {:>8} {:>8.1} {:>8.1} {:>6}",
            r.circuit,
            transport_name(r.transport),
            r.and_gates,
            r.seconds,
            r.mand_per_s,
            r.mand_per_cpu_s,
            r.bits_per_and_p_to_v,
            r.bits_per_and_v_to_p,
            r.setup_ms,
            r.setup_bytes,
            r.peak_rss_mb,
            r.rss_before_mb,
            if r.output_verified { "ok" } else { "WRONG" }
        );
    }
    println!(
        "\nThreads per party: {threads}. M AND/s is wall clock; M/cpu-s divides by the busiest \
         thread's CPU time (the wall-clock figure on an otherwise idle machine with a core per \
         thread, since the threads overlap). Peak MB is the process high-water mark (both \
         parties) during the run, from MB the resident memory when it started."
    );
    Ok(())
}

fn transport_name(t: TransportChoice) -> &'static str {
    match t {
        TransportChoice::Memory => "memory",
        TransportChoice::Tcp => "tcp",
        TransportChoice::Both => "both",
    }
}

/// One end of a connection between the parties, not yet bound to a thread.
enum Link {
    Memory(webproof_core::MemoryIo),
    Tcp(std::net::TcpStream),
}

/// A connected pair of links over the chosen transport.
fn links(transport: TransportChoice) -> anyhow::Result<(Link, Link)> {
    Ok(match transport {
        TransportChoice::Memory => {
            let (a, b) = memory_duplex();
            (Link::Memory(a), Link::Memory(b))
        }
        TransportChoice::Tcp | TransportChoice::Both => {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            let a = std::net::TcpStream::connect(listener.local_addr()?)?;
            let (b, _) = listener.accept()?;
            (Link::Tcp(a), Link::Tcp(b))
        }
    })
}

/// Run one party on the calling thread (a current-thread runtime for TCP).
fn run_on<R, F: AsyncParty<R>>(link: Link, party: F) -> anyhow::Result<R> {
    match link {
        Link::Memory(io) => futures::executor::block_on(party.run(io)),
        Link::Tcp(s) => {
            use tokio_util::compat::TokioAsyncReadCompatExt;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async move {
                s.set_nonblocking(true)?;
                let s = tokio::net::TcpStream::from_std(s)?;
                s.set_nodelay(true)?;
                party.run(s.compat()).await
            })
        }
    }
}

fn join<R>(h: std::thread::JoinHandle<anyhow::Result<R>>, who: &str) -> anyhow::Result<R> {
    h.join()
        .map_err(|_| anyhow::anyhow!("{who} panicked"))?
        .with_context(|| who.to_string())
}

/// Run the two parties on two threads over the chosen transport.
fn run_pair<RP, RV, FP, FV>(
    transport: TransportChoice,
    prover: FP,
    verifier: FV,
) -> anyhow::Result<(RP, RV)>
where
    RP: Send + 'static,
    RV: Send + 'static,
    FP: AsyncParty<RP>,
    FV: AsyncParty<RV>,
{
    let (a, b) = links(transport)?;
    let v = std::thread::spawn(move || run_on(b, verifier));
    let p = std::thread::spawn(move || run_on(a, prover));
    let rv = join(v, "verifier");
    let rp = join(p, "prover");
    Ok((rp?, rv?))
}

/// One party's work, generic over the transport.
trait AsyncParty<R>: Send + 'static {
    fn run<T: Io + 'static>(self, io: T) -> impl std::future::Future<Output = anyhow::Result<R>>;
}

/// A fresh CSPRNG for one party.
fn party_rng() -> rand::rngs::StdRng {
    rand::SeedableRng::from_rng(rand::rngs::OsRng).expect("OS randomness")
}

/// The prover-side COT source of `spec`, set up over `ch`.
async fn receiver<T: Io>(
    spec: CotSpec,
    ideal: Option<IdealCotReceiver>,
    ch: &mut Channel<T>,
) -> anyhow::Result<Either<IdealCotReceiver, SilentCotReceiver>> {
    Ok(match (spec.choice, ideal) {
        (CotChoice::Ideal, Some(r)) => Either::A(r),
        (CotChoice::Ideal, None) => bail!("ideal COT half missing"),
        (CotChoice::Ferret, _) => {
            Either::B(SilentCotReceiver::connect(spec.ferret.config(), ch, &mut party_rng()).await?)
        }
    })
}

/// The verifier-side COT source of `spec`, set up over `ch`.
async fn sender<T: Io>(
    spec: CotSpec,
    ideal: Option<IdealCotSender>,
    ch: &mut Channel<T>,
) -> anyhow::Result<Either<IdealCotSender, SilentCotSender>> {
    Ok(match (spec.choice, ideal) {
        (CotChoice::Ideal, Some(s)) => Either::A(s),
        (CotChoice::Ideal, None) => bail!("ideal COT half missing"),
        (CotChoice::Ferret, _) => {
            Either::B(SilentCotSender::connect(spec.ferret.config(), ch, &mut party_rng()).await?)
        }
    })
}

/// One of two COT sources, dispatched statically per call.
enum Either<A, B> {
    A(A),
    B(B),
}

impl<A: RandomCotReceiver, B: RandomCotReceiver> RandomCotReceiver for Either<A, B> {
    async fn extend<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<webproof_core::Block>,
    ) -> webproof_core::error::Result<()> {
        match self {
            Either::A(a) => a.extend(channel, n, out).await,
            Either::B(b) => b.extend(channel, n, out).await,
        }
    }
}

impl<A: RandomCotSender, B: RandomCotSender> RandomCotSender for Either<A, B> {
    fn delta(&self) -> webproof_core::Block {
        match self {
            Either::A(a) => a.delta(),
            Either::B(b) => b.delta(),
        }
    }
    async fn extend<T: Io>(
        &mut self,
        channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<webproof_core::Block>,
    ) -> webproof_core::error::Result<()> {
        match self {
            Either::A(a) => a.extend(channel, n, out).await,
            Either::B(b) => b.extend(channel, n, out).await,
        }
    }
}

struct CotRecvParty {
    spec: CotSpec,
    ideal: Option<IdealCotReceiver>,
    n: usize,
    batch: usize,
}
struct CotSendParty {
    spec: CotSpec,
    ideal: Option<IdealCotSender>,
    n: usize,
    batch: usize,
}

impl AsyncParty<Party> for CotRecvParty {
    async fn run<T: Io + 'static>(self, io: T) -> anyhow::Result<Party> {
        let mut ch = Channel::new(io);
        let t0 = Instant::now();
        let mut cot = receiver(self.spec, self.ideal, &mut ch).await?;
        draw_timed(ch, t0, self.n, self.batch, async |ch, k, out| {
            cot.extend(ch, k, out).await
        })
        .await
    }
}

impl AsyncParty<Party> for CotSendParty {
    async fn run<T: Io + 'static>(self, io: T) -> anyhow::Result<Party> {
        let mut ch = Channel::new(io);
        let t0 = Instant::now();
        let mut cot = sender(self.spec, self.ideal, &mut ch).await?;
        draw_timed(ch, t0, self.n, self.batch, async |ch, k, out| {
            cot.extend(ch, k, out).await
        })
        .await
    }
}

/// One COT party after its setup (begun at `t0`): draw `n` COTs in batches
/// with `extend`, timing setup and extension apart.
async fn draw_timed<T: Io>(
    mut ch: Channel<T>,
    t0: Instant,
    n: usize,
    batch: usize,
    mut extend: impl AsyncFnMut(&mut Channel<T>, usize, &mut Vec<Block>) -> webproof_core::Result<()>,
) -> anyhow::Result<Party> {
    ch.flush().await?;
    let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
    let setup_sent = ch.stats().sent();
    let mut out = Vec::with_capacity(batch);
    let t = Instant::now();
    let cpu = thread_cpu_ms();
    let mut done = 0;
    while done < n {
        let k = batch.min(n - done);
        out.clear();
        extend(&mut ch, k, &mut out).await?;
        done += k;
    }
    ch.flush().await?;
    Ok(Party {
        setup_ms,
        setup_sent,
        run_ms: t.elapsed().as_secs_f64() * 1e3,
        cpu_ms: thread_cpu_ms() - cpu,
        sent: ch.stats().sent() - setup_sent,
        ..Default::default()
    })
}

fn bench_cot(
    spec: CotSpec,
    transport: TransportChoice,
    cfg: Config,
    n: usize,
) -> anyhow::Result<CotRow> {
    let (r, s) = spec.halves();
    let (p, v) = run_pair(
        transport,
        CotRecvParty {
            spec,
            ideal: r,
            n,
            batch: cfg.cot_batch,
        },
        CotSendParty {
            spec,
            ideal: s,
            n,
            batch: cfg.cot_batch,
        },
    )?;
    let secs = p.run_ms.max(v.run_ms) / 1e3;
    Ok(CotRow {
        kind: "cot",
        cot: spec.choice,
        transport,
        cots: n,
        mcot_per_s: n as f64 / secs / 1e6,
        mcot_per_cpu_s: n as f64 / (p.cpu_ms.max(v.cpu_ms) / 1e3) / 1e6,
        bits_per_cot_p_to_v: p.sent as f64 * 8.0 / n as f64,
        bits_per_cot_v_to_p: v.sent as f64 * 8.0 / n as f64,
        setup_ms: p.setup_ms.max(v.setup_ms),
        setup_bytes: p.setup_sent + v.setup_sent,
    })
}

/// The ZK workload shared by both parties.
#[derive(Clone, Copy)]
struct ZkSpec {
    workload: Workload,
    cfg: Config,
    iterations: u64,
}

struct ProverParty {
    source: RecvSource,
    spec: ZkSpec,
    inputs: Vec<Vec<bool>>,
}
struct VerifierParty {
    source: SendSource,
    spec: ZkSpec,
}

/// Where an engine thread gets its COTs: set up on its own connection, or
/// from a producer thread (two threads per party).
#[allow(clippy::large_enum_variant)] // one per run; boxing buys nothing
enum RecvSource {
    Direct(CotSpec, Option<IdealCotReceiver>),
    Prefetch(Receiver<Vec<Block>>),
}
#[allow(clippy::large_enum_variant)]
enum SendSource {
    Direct(CotSpec, Option<IdealCotSender>),
    Prefetch(Receiver<Vec<Block>>, Receiver<Block>),
}

/// COTs made by another thread (over its own connection) and handed over in
/// batches through a bounded queue, so memory stays bounded.
struct Prefetched {
    rx: Receiver<Vec<Block>>,
    buf: Vec<Block>,
    pos: usize,
    delta: Block,
}

impl Prefetched {
    fn new(rx: Receiver<Vec<Block>>, delta: Block) -> Self {
        Prefetched {
            rx,
            buf: Vec::new(),
            pos: 0,
            delta,
        }
    }

    fn take(&mut self, n: usize, out: &mut Vec<Block>) -> webproof_core::error::Result<()> {
        let mut need = n;
        while need > 0 {
            if self.pos == self.buf.len() {
                // Blocking is fine: this thread runs nothing but this party.
                self.buf = self.rx.recv().map_err(|_| {
                    webproof_core::Error::Aborted("the COT producer thread stopped".into())
                })?;
                self.pos = 0;
            }
            let k = need.min(self.buf.len() - self.pos);
            out.extend_from_slice(&self.buf[self.pos..self.pos + k]);
            self.pos += k;
            need -= k;
        }
        Ok(())
    }
}

impl RandomCotReceiver for Prefetched {
    async fn extend<T: Io>(
        &mut self,
        _channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> webproof_core::error::Result<()> {
        self.take(n, out)
    }
}

impl RandomCotSender for Prefetched {
    fn delta(&self) -> Block {
        self.delta
    }
    async fn extend<T: Io>(
        &mut self,
        _channel: &mut Channel<T>,
        n: usize,
        out: &mut Vec<Block>,
    ) -> webproof_core::error::Result<()> {
        self.take(n, out)
    }
}

/// The producer thread of a party with two threads: sets up the COT source
/// on its own connection and hands batches to the engine until it hangs up.
struct Pump<H> {
    spec: CotSpec,
    ideal: Option<H>,
    batch: usize,
    tx: SyncSender<Vec<Block>>,
    delta_tx: Option<SyncSender<Block>>,
}

macro_rules! pump_impl {
    ($half:ty, $setup:ident, $delta:expr) => {
        impl AsyncParty<Party> for Pump<$half> {
            async fn run<T: Io + 'static>(self, io: T) -> anyhow::Result<Party> {
                let mut ch = Channel::new(io);
                let t0 = Instant::now();
                let mut cot = $setup(self.spec, self.ideal, &mut ch).await?;
                ch.flush().await?;
                let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
                let setup_sent = ch.stats().sent();
                if let Some(tx) = self.delta_tx {
                    let _ = tx.send($delta(&cot));
                }
                let cpu = thread_cpu_ms();
                loop {
                    let mut v = Vec::with_capacity(self.batch);
                    // Either side stopping ends the pump: the engines are done
                    // (or failed, which they report themselves).
                    if cot.extend(&mut ch, self.batch, &mut v).await.is_err() {
                        break;
                    }
                    if self.tx.send(v).is_err() {
                        break;
                    }
                }
                let _ = ch.flush().await;
                Ok(Party {
                    setup_ms,
                    setup_sent,
                    cpu_ms: thread_cpu_ms() - cpu,
                    sent: ch.stats().sent() - setup_sent,
                    ..Default::default()
                })
            }
        }
    };
}
pump_impl!(IdealCotReceiver, receiver, |_: &_| Block::ZERO);
pump_impl!(IdealCotSender, sender, |c: &Either<_, _>| c.delta());

impl AsyncParty<Party> for ProverParty {
    async fn run<T: Io + 'static>(self, io: T) -> anyhow::Result<Party> {
        let t0 = Instant::now();
        let mut ch = Channel::new(io);
        let cot = match self.source {
            RecvSource::Direct(spec, ideal) => Either::A(receiver(spec, ideal, &mut ch).await?),
            RecvSource::Prefetch(rx) => Either::B(Prefetched::new(rx, Block::ZERO)),
        };
        let mut p = Prover::new(cot, ch, self.spec.cfg).await?;
        let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
        let setup_sent = p.channel_stats().sent();
        let c = self.spec.workload.circuit();
        let chained = self.spec.workload.chained_input();
        let t = Instant::now();
        let cpu = thread_cpu_ms();
        let mut groups = Vec::new();
        for g in &self.inputs {
            groups.push(p.commit(g).await?);
        }
        for _ in 0..self.spec.iterations {
            let refs: Vec<&[_]> = groups.iter().map(|g| g.as_slice()).collect();
            let out = p.eval(c, &refs).await?;
            groups[chained] = out.into_iter().next().context("circuit has no output")?;
        }
        let opened = p.open(&groups[chained]).await?;
        let and_gates = p.stats().and_gates;
        let stats = p.channel_stats();
        p.finish().await?;
        Ok(Party {
            setup_ms,
            setup_sent,
            run_ms: t.elapsed().as_secs_f64() * 1e3,
            cpu_ms: thread_cpu_ms() - cpu,
            sent: stats.sent() - setup_sent,
            and_gates,
            opened,
        })
    }
}

impl AsyncParty<Party> for VerifierParty {
    async fn run<T: Io + 'static>(self, io: T) -> anyhow::Result<Party> {
        let t0 = Instant::now();
        let mut ch = Channel::new(io);
        let cot = match self.source {
            SendSource::Direct(spec, ideal) => Either::A(sender(spec, ideal, &mut ch).await?),
            SendSource::Prefetch(rx, delta) => {
                let d = delta.recv().context("the COT producer thread stopped")?;
                Either::B(Prefetched::new(rx, d))
            }
        };
        let mut v = Verifier::new(cot, ch, self.spec.cfg, &mut party_rng()).await?;
        let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
        let setup_sent = v.channel_stats().sent();
        let c = self.spec.workload.circuit();
        let chained = self.spec.workload.chained_input();
        let t = Instant::now();
        let cpu = thread_cpu_ms();
        let mut groups = Vec::new();
        for g in &c.inputs {
            groups.push(v.commit(g.len()).await?);
        }
        for _ in 0..self.spec.iterations {
            let refs: Vec<&[_]> = groups.iter().map(|g| g.as_slice()).collect();
            let out = v.eval(c, &refs).await?;
            groups[chained] = out.into_iter().next().context("circuit has no output")?;
        }
        let opened = v.open(&groups[chained]).await?;
        let and_gates = v.stats().and_gates;
        let stats = v.channel_stats();
        v.finish().await?;
        Ok(Party {
            setup_ms,
            setup_sent,
            run_ms: t.elapsed().as_secs_f64() * 1e3,
            cpu_ms: thread_cpu_ms() - cpu,
            sent: stats.sent() - setup_sent,
            and_gates,
            opened,
        })
    }
}

fn bench_zk(
    cot: CotSpec,
    workload: Workload,
    transport: TransportChoice,
    cfg: Config,
    and_target: u64,
    threads: u32,
) -> anyhow::Result<ZkRow> {
    let c = workload.circuit();
    let per = c.and_count() as u64;
    let iterations = and_target.div_ceil(per).max(1);
    let mut rng = rand::thread_rng();
    let inputs: Vec<Vec<bool>> = c
        .inputs
        .iter()
        .map(|g| (0..g.len()).map(|_| rng.next_u32() & 1 == 1).collect())
        .collect();
    // The expected final output, in the clear and outside the timed part.
    let chained = workload.chained_input();
    let mut clear = inputs.clone();
    for _ in 0..iterations {
        clear[chained] = c.eval(&clear).swap_remove(0);
    }
    let spec = ZkSpec {
        workload,
        cfg,
        iterations,
    };
    let (r, s) = cot.halves();
    reset_peak_rss();
    let base = rss_bytes("VmRSS:");
    // (prover engine, verifier engine, COT producers' figures if two threads)
    let (p, v, pumps) = if threads == 1 {
        let (p, v) = run_pair(
            transport,
            ProverParty {
                source: RecvSource::Direct(cot, r),
                spec,
                inputs,
            },
            VerifierParty {
                source: SendSource::Direct(cot, s),
                spec,
            },
        )?;
        (p, v, Vec::new())
    } else {
        let (pe, ve) = links(transport)?;
        let (pc, vc) = links(transport)?;
        let (ptx, prx) = sync_channel(2);
        let (vtx, vrx) = sync_channel(2);
        let (dtx, drx) = sync_channel(1);
        let batch = cfg.cot_batch;
        let pump_v = std::thread::spawn(move || {
            run_on(
                vc,
                Pump {
                    spec: cot,
                    ideal: s,
                    batch,
                    tx: vtx,
                    delta_tx: Some(dtx),
                },
            )
        });
        let pump_p = std::thread::spawn(move || {
            run_on(
                pc,
                Pump {
                    spec: cot,
                    ideal: r,
                    batch,
                    tx: ptx,
                    delta_tx: None,
                },
            )
        });
        let ev = std::thread::spawn(move || {
            run_on(
                ve,
                VerifierParty {
                    source: SendSource::Prefetch(vrx, drx),
                    spec,
                },
            )
        });
        let ep = std::thread::spawn(move || {
            run_on(
                pe,
                ProverParty {
                    source: RecvSource::Prefetch(prx),
                    spec,
                    inputs,
                },
            )
        });
        let v = join(ev, "verifier");
        let p = join(ep, "prover");
        let pv = join(pump_v, "verifier COT thread");
        let pp = join(pump_p, "prover COT thread");
        (p?, v?, vec![pp?, pv?])
    };
    let peak = rss_bytes("VmHWM:");
    let ands = v.and_gates;
    let secs = p.run_ms.max(v.run_ms) / 1e3;
    // With two threads per party the COT producers' work and traffic count too.
    let (pp, pv) = match pumps.as_slice() {
        [pp, pv] => (pp, pv),
        _ => (&Party::default(), &Party::default()),
    };
    let busiest_cpu_ms = [p.cpu_ms, v.cpu_ms, pp.cpu_ms, pv.cpu_ms]
        .into_iter()
        .fold(0.0, f64::max);
    Ok(ZkRow {
        kind: "zk",
        cot: cot.choice,
        circuit: workload.name(),
        transport,
        threads_per_party: threads,
        and_gates: ands,
        seconds: secs,
        mand_per_s: ands as f64 / secs / 1e6,
        mand_per_cpu_s: ands as f64 / (busiest_cpu_ms / 1e3) / 1e6,
        prover_cpu_s: (p.cpu_ms + pp.cpu_ms) / 1e3,
        verifier_cpu_s: (v.cpu_ms + pv.cpu_ms) / 1e3,
        bits_per_and_p_to_v: (p.sent + pp.sent) as f64 * 8.0 / ands as f64,
        bits_per_and_v_to_p: (v.sent + pv.sent) as f64 * 8.0 / ands as f64,
        setup_ms: p.setup_ms.max(v.setup_ms).max(pp.setup_ms).max(pv.setup_ms),
        setup_bytes: p.setup_sent + v.setup_sent + pp.setup_sent + pv.setup_sent,
        peak_rss_mb: peak as f64 / (1 << 20) as f64,
        rss_before_mb: base as f64 / (1 << 20) as f64,
        output_verified: p.opened == clear[chained] && v.opened == clear[chained],
    })
}

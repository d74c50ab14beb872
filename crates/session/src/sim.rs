//! A simulated runtime for tests: one thread, virtual time, seeded
//! randomness, and in-memory links with a one-way delay and fault hooks.
//!
//! [`Sim::block_on`] runs a future and every task it spawns until the
//! future is done. When no task can make progress, the clock jumps to the
//! next timer, so a 60-second timeout takes no wall-clock time and a run
//! takes the same virtual time whatever the machine's load; computation
//! ([`Runtime::compute_boxed`]) runs at once and takes none. With nothing
//! left to wake, the run is a deadlock and [`Sim::block_on`] panics saying
//! so, instead of hanging.
//!
//! [`Sim::link`] makes a prover-verifier link: a byte stream each way with
//! a one-way delay, and [`Faults`] to cut it after some bytes, flip one
//! byte, edit its bytes in flight (an [`Edit`]: a tampering relay), or
//! hold it from an event on (a [`Hold`] the test sets), per direction. What is not simulated: the TLS stacks draw their
//! own randomness (rustls' provider), so only this runtime's draws are
//! seeded.

use crate::pipe::{duplex, PipeEnd};
use crate::runtime::{Counters, Link, Runtime};
use futures::future::BoxFuture;
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use futures::task::{ArcWake, LocalSpawnExt};
use futures::StreamExt;
use rand_core::SeedableRng;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The simulated runtime (cheap to clone: clones share the clock).
#[derive(Clone)]
pub struct Sim {
    state: Arc<Mutex<State>>,
}

struct State {
    now: Duration,
    /// Pending timers by deadline (and a sequence number, for order).
    timers: BTreeMap<(Duration, u64), Waker>,
    next_timer: u64,
    /// Tasks spawned since the executor last looked.
    spawned: Vec<BoxFuture<'static, ()>>,
    seed: u64,
    rngs: u64,
    unix_start: u64,
}

impl Sim {
    /// A runtime whose randomness derives from `seed`, whose clock starts
    /// at zero, and whose Unix time starts at `unix_start` seconds.
    pub fn new(seed: u64, unix_start: u64) -> Self {
        Sim {
            state: Arc::new(Mutex::new(State {
                now: Duration::ZERO,
                timers: BTreeMap::new(),
                next_timer: 0,
                spawned: Vec::new(),
                seed,
                rngs: 0,
                unix_start,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Virtual time since the start.
    pub fn now(&self) -> Duration {
        self.lock().now
    }

    /// Run `f`, and every task spawned meanwhile, until `f` is done.
    ///
    /// # Panics
    /// If every task waits and no timer is set (a deadlock).
    pub fn block_on<T>(&self, f: impl Future<Output = T>) -> T {
        let mut pool = futures::executor::LocalPool::new();
        let spawner = pool.spawner();
        let woken = Arc::new(Flag(AtomicBool::new(true)));
        let waker = futures::task::waker(woken.clone());
        let mut cx = Context::from_waker(&waker);
        let mut f = pin!(f);
        loop {
            if woken.0.swap(false, Ordering::AcqRel) {
                if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                    return v;
                }
            }
            let spawned = std::mem::take(&mut self.lock().spawned);
            for task in spawned {
                spawner
                    .spawn_local(task)
                    .expect("the simulation's executor is running");
            }
            pool.run_until_stalled();
            if woken.0.load(Ordering::Acquire) || !self.lock().spawned.is_empty() {
                continue;
            }
            // Nothing can move: the clock jumps to the next timer.
            let mut s = self.lock();
            let Some((&(deadline, _), _)) = s.timers.first_key_value() else {
                panic!(
                    "the simulation stalled at {:?}: every task waits and no timer is set",
                    s.now
                );
            };
            s.now = s.now.max(deadline);
            let now = s.now;
            let due: Vec<Waker> = {
                let later = s.timers.split_off(&(now, u64::MAX));
                std::mem::replace(&mut s.timers, later)
                    .into_values()
                    .collect()
            };
            drop(s);
            due.into_iter().for_each(Waker::wake);
        }
    }

    /// A prover-verifier link: `(prover's end, verifier's end)`, each way
    /// delayed by `delay` and faulted as `faults` say (`to_verifier`: the
    /// prover's bytes, `to_prover`: the verifier's).
    pub fn link(&self, delay: Duration, faults: LinkFaults) -> (SimLink, SimLink) {
        let (p, p_far) = duplex(LINK_BUFFER);
        let (v, v_far) = duplex(LINK_BUFFER);
        let (p_rd, p_wr) = p_far.split();
        let (v_rd, v_wr) = v_far.split();
        self.carry(p_rd, v_wr, delay, faults.to_verifier);
        self.carry(v_rd, p_wr, delay, faults.to_prover);
        (SimLink::new(self, p), SimLink::new(self, v))
    }

    /// Move bytes from `from` to `to`, each chunk `delay` after it was
    /// written, through `faults`.
    fn carry<Rd, W>(&self, mut from: Rd, mut to: W, delay: Duration, mut faults: Faults)
    where
        Rd: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = futures::channel::mpsc::unbounded::<(Duration, Option<Vec<u8>>)>();
        let sim = self.clone();
        // Stamp chunks as they are written...
        self.lock().spawned.push(Box::pin(async move {
            let mut buf = vec![0u8; 64 << 10];
            let mut offset = 0u64;
            let mut cut = false;
            loop {
                let n = match from.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if cut || faults.hold.as_ref().is_some_and(Hold::is_set) {
                    // Past the cut, or held: read and dropped, so writers
                    // never block.
                    continue;
                }
                let mut chunk = buf[..n].to_vec();
                let keep = faults.apply(offset, &mut chunk);
                offset += n as u64;
                cut = keep < chunk.len() || faults.cut_after == Some(offset);
                chunk.truncate(keep);
                let _ = tx.unbounded_send((sim.now(), Some(chunk)));
                if cut {
                    // The end arrives after the delay too.
                    let _ = tx.unbounded_send((sim.now(), None));
                }
            }
            let _ = tx.unbounded_send((sim.now(), None));
        }));
        // ...and hand each over once its delay has passed.
        let sim = self.clone();
        self.lock().spawned.push(Box::pin(async move {
            while let Some((written, chunk)) = rx.next().await {
                let due = written + delay;
                let now = sim.now();
                if due > now {
                    sim.sleep(due - now).await;
                }
                match chunk {
                    Some(c) if !c.is_empty() => {
                        if to.write_all(&c).await.is_err() {
                            break;
                        }
                    }
                    Some(_) => {}
                    None => break,
                }
            }
            let _ = to.close().await;
        }));
    }
}

/// Bytes a simulated link buffers at each end.
const LINK_BUFFER: usize = 1 << 20;

struct Flag(AtomicBool);

impl ArcWake for Flag {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        arc_self.0.store(true, Ordering::Release);
    }
}

/// A timer of the simulation.
pub struct SimSleep {
    sim: Sim,
    deadline: Duration,
    id: Option<u64>,
}

impl Future for SimSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = self.sim.lock();
        if s.now >= self.deadline {
            if let Some(id) = self.id {
                s.timers.remove(&(self.deadline, id));
            }
            drop(s);
            self.id = None;
            return Poll::Ready(());
        }
        let id = match self.id {
            Some(id) => id,
            None => {
                s.next_timer += 1;
                s.next_timer
            }
        };
        s.timers.insert((self.deadline, id), cx.waker().clone());
        drop(s);
        self.id = Some(id);
        Poll::Pending
    }
}

impl Drop for SimSleep {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.sim.lock().timers.remove(&(self.deadline, id));
        }
    }
}

impl Runtime for Sim {
    type Sleep = SimSleep;
    type Rng = rand_chacha::ChaCha20Rng;

    fn rng(&self) -> Self::Rng {
        let mut s = self.lock();
        s.rngs += 1;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(s.seed);
        rng.set_stream(s.rngs);
        rng
    }

    fn now_ms(&self) -> f64 {
        self.now().as_secs_f64() * 1000.0
    }

    fn unix_time(&self) -> u64 {
        let s = self.lock();
        s.unix_start + s.now.as_secs()
    }

    fn sleep(&self, d: Duration) -> SimSleep {
        SimSleep {
            sim: self.clone(),
            deadline: self.now() + d,
            id: None,
        }
    }

    fn spawn_boxed(&self, f: BoxFuture<'static, ()>) {
        self.lock().spawned.push(f);
    }

    fn compute_boxed(&self, f: Box<dyn FnOnce() + Send>) {
        // Computation takes no virtual time.
        f()
    }
}

/// A switch that holds a direction of a link from when it is set: the
/// bytes written after that are dropped and the direction stays open, as
/// with a peer gone silent (not gone). Clones share the switch, so a test
/// can set it on an event elsewhere (the server's close, say).
#[derive(Clone, Debug, Default)]
pub struct Hold(Arc<AtomicBool>);

impl Hold {
    /// Hold the direction from now on.
    pub fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the direction is held.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// A test's edit of one direction's bytes in flight, as a tampering relay
/// would make: called with each chunk and its offset in the direction,
/// before the flip and the cut. Chunks are as the writer wrote them, so an
/// edit that looks for a pattern keeps its own state across chunks.
#[derive(Clone)]
pub struct Edit(Arc<Mutex<EditFn>>);

/// What an [`Edit`] calls: `(offset, chunk)`.
type EditFn = dyn FnMut(u64, &mut [u8]) + Send;

impl Edit {
    /// An edit that calls `f(offset, chunk)` on each chunk.
    pub fn new(f: impl FnMut(u64, &mut [u8]) + Send + 'static) -> Self {
        Edit(Arc::new(Mutex::new(f)))
    }
}

impl std::fmt::Debug for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Edit(..)")
    }
}

/// Faults of one direction of a simulated link.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// End the direction after this many bytes: the peer reads the end of
    /// the stream; the writer's later bytes are dropped.
    pub cut_after: Option<u64>,
    /// XOR the byte at this offset of the direction with a mask.
    pub flip: Option<(u64, u8)>,
    /// Drop the direction's bytes once this is set.
    pub hold: Option<Hold>,
    /// Change the direction's bytes in flight.
    pub edit: Option<Edit>,
}

impl Faults {
    /// Apply the faults to the chunk at `offset`; the number of its bytes
    /// that pass the cut.
    fn apply(&mut self, offset: u64, chunk: &mut [u8]) -> usize {
        let end = offset + chunk.len() as u64;
        if let Some(Edit(edit)) = &self.edit {
            (edit.lock().unwrap_or_else(|e| e.into_inner()))(offset, chunk);
        }
        if let Some((at, mask)) = self.flip {
            if (offset..end).contains(&at) {
                chunk[(at - offset) as usize] ^= mask;
            }
        }
        match self.cut_after {
            Some(c) if c < end => c.saturating_sub(offset) as usize,
            _ => chunk.len(),
        }
    }
}

/// Faults of both directions of a simulated link.
#[derive(Clone, Debug, Default)]
pub struct LinkFaults {
    /// On the prover's bytes to the verifier.
    pub to_verifier: Faults,
    /// On the verifier's bytes to the prover.
    pub to_prover: Faults,
}

impl LinkFaults {
    /// `faults` on the prover's bytes (`to_verifier`) or the verifier's.
    pub fn one_way(to_verifier: bool, faults: Faults) -> Self {
        if to_verifier {
            LinkFaults {
                to_verifier: faults,
                ..Self::default()
            }
        } else {
            LinkFaults {
                to_prover: faults,
                ..Self::default()
            }
        }
    }
}

/// One end of a simulated link: a [`Link`] with byte counts and the
/// section pump of [`crate::mux`] on the simulation.
pub struct SimLink {
    sim: Sim,
    io: PipeEnd,
    sent: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
}

impl SimLink {
    fn new(sim: &Sim, io: PipeEnd) -> Self {
        SimLink {
            sim: sim.clone(),
            io,
            sent: Arc::default(),
            received: Arc::default(),
        }
    }
}

impl AsyncRead for SimLink {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.received.fetch_add(n as u64, Ordering::Relaxed);
        }
        r
    }
}

impl AsyncWrite for SimLink {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.sent.fetch_add(n as u64, Ordering::Relaxed);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}

/// A simulated link's multiplexed section.
pub struct SimSection(crate::mux::Section<Sim, SimLink>);

impl Link for SimLink {
    type Stream = PipeEnd;
    type Section = SimSection;
    type Early = crate::mux::EarlyLink<SimLink>;

    fn counters(&self) -> Counters {
        let (sent, received) = (self.sent.clone(), self.received.clone());
        Counters::new(move || {
            (
                sent.load(Ordering::Relaxed),
                received.load(Ordering::Relaxed),
            )
        })
    }

    fn start_mux(self) -> (PipeEnd, PipeEnd, SimSection) {
        let sim = self.sim.clone();
        let (relay, pre, section) = crate::mux::start(&sim, self);
        (relay, pre, SimSection(section))
    }
}

impl crate::runtime::Section<SimLink> for SimSection {
    async fn finish(self) -> crate::Result<SimLink> {
        self.0.finish().await
    }

    async fn early(self) -> crate::Result<crate::mux::EarlyLink<SimLink>> {
        self.0.early().await
    }

    async fn abandon(self) {
        self.0.abandon().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minute of timers passes at once, in order.
    #[test]
    fn timers_jump_to_their_deadlines() {
        let sim = Sim::new(0, 1_700_000_000);
        let wall = std::time::Instant::now();
        let order = sim.block_on({
            let sim = sim.clone();
            async move {
                let a = async {
                    sim.sleep(Duration::from_secs(60)).await;
                    sim.now()
                };
                let b = async {
                    sim.sleep(Duration::from_secs(1)).await;
                    sim.now()
                };
                futures::join!(a, b)
            }
        });
        assert_eq!(order, (Duration::from_secs(60), Duration::from_secs(1)));
        assert_eq!(sim.unix_time(), 1_700_000_060);
        assert!(wall.elapsed() < Duration::from_secs(5));
    }

    /// Nothing left to wake is a deadlock, said as such.
    #[test]
    #[should_panic(expected = "stalled")]
    fn a_deadlock_panics() {
        Sim::new(0, 0).block_on(futures::future::pending::<()>());
    }

    /// A byte takes the delay each way; a cut ends the direction after
    /// its bytes; a flip changes one byte.
    #[test]
    fn links_delay_cut_and_flip() {
        let sim = Sim::new(0, 0);
        let faults = LinkFaults {
            to_verifier: Faults {
                cut_after: Some(6),
                flip: Some((1, 0x20)),
                ..Faults::default()
            },
            ..LinkFaults::default()
        };
        let (mut p, mut v) = sim.link(Duration::from_millis(25), faults);
        let (got, rtt) = sim.block_on({
            let sim = sim.clone();
            async move {
                p.write_all(b"pInG").await.unwrap();
                let mut four = [0u8; 4];
                v.read_exact(&mut four).await.unwrap();
                assert_eq!(&four, b"pinG", "the flip");
                v.write_all(b"pong").await.unwrap();
                p.read_exact(&mut four).await.unwrap();
                let rtt = sim.now();
                p.write_all(b"and more").await.unwrap();
                let mut rest = Vec::new();
                v.read_to_end(&mut rest).await.unwrap();
                (rest, rtt)
            }
        });
        assert_eq!(rtt, Duration::from_millis(50));
        assert_eq!(got, b"an");
    }

    /// An edit sees each chunk at its offset and changes it in flight.
    #[test]
    fn an_edit_changes_bytes_in_flight() {
        let sim = Sim::new(0, 0);
        let edit = Edit::new(|offset, chunk: &mut [u8]| {
            for (i, b) in chunk.iter_mut().enumerate() {
                if (offset + i as u64) % 2 == 1 {
                    b.make_ascii_uppercase();
                }
            }
        });
        let faults = LinkFaults::one_way(
            false,
            Faults {
                edit: Some(edit),
                ..Faults::default()
            },
        );
        let (mut p, mut v) = sim.link(Duration::from_millis(5), faults);
        let got = sim.block_on(async move {
            v.write_all(b"abc").await.unwrap();
            v.write_all(b"def").await.unwrap();
            drop(v);
            let mut all = Vec::new();
            p.read_to_end(&mut all).await.unwrap();
            all
        });
        assert_eq!(got, b"aBcDeF");
    }

    /// A held direction drops what is written after the hold and stays
    /// open: the reader sees the bytes before it, then waits.
    #[test]
    fn a_held_direction_drops_later_bytes_and_stays_open() {
        let sim = Sim::new(0, 0);
        let hold = Hold::default();
        let faults = LinkFaults::one_way(
            true,
            Faults {
                hold: Some(hold.clone()),
                ..Faults::default()
            },
        );
        let (mut p, mut v) = sim.link(Duration::from_millis(25), faults);
        let got = sim.block_on({
            let sim = sim.clone();
            async move {
                p.write_all(b"before").await.unwrap();
                let mut six = [0u8; 6];
                v.read_exact(&mut six).await.unwrap();
                hold.set();
                p.write_all(b"after").await.unwrap();
                let mut one = [0u8; 1];
                let read = v.read(&mut one);
                let late = sim.sleep(Duration::from_secs(60));
                futures::pin_mut!(read, late);
                let waited = matches!(
                    futures::future::select(read, late).await,
                    futures::future::Either::Right(_)
                );
                (six, waited)
            }
        });
        assert_eq!(got, (*b"before", true));
    }

    /// The same seed gives the same draws; streams differ.
    #[test]
    fn randomness_is_seeded() {
        use rand_core::RngCore;
        let (a, b) = (Sim::new(7, 0), Sim::new(7, 0));
        assert_eq!(a.rng().next_u64(), b.rng().next_u64());
        assert_ne!(a.rng().next_u64(), a.rng().next_u64());
    }
}

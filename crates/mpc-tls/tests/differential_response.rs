//! The differential harness of the response proof (the run after `Close`:
//! the verifier's input reveal, the claim's shape and its answer, the
//! sealed proof, `Δ`, the audit, the disclosure and the opening), frame by
//! frame in both directions: each frame flipped, cut short, lengthened,
//! dropped, replayed, or swapped with the next one.
//!
//! The session before it runs once per world (its messages have their own
//! harness, `differential.rs`); the proof runs again for every mutant over
//! a tapped in-memory link, from COTs rebuilt from the same seed (one `Δ`).
//!
//! - A frame of the prover's mutated: the verifier refuses, or outputs only
//!   bytes the server sent, at their true offsets, and the leaf hashes of
//!   the true transcript.
//! - A frame of the verifier's mutated: the prover's outcome (finished,
//!   the kind of its error, or stalled) and the frames it sent are the
//!   same in two worlds that differ only in the bytes the prover hides (a
//!   cookie in the request, the body's tail in the response): what a
//!   cheating verifier sees of the prover does not depend on its secrets.
//!   A prover that finds the verifier cheating has not disclosed its
//!   revealed bytes.
//!
//! Both versions: TLS 1.2's proof (`prove_response`, `ResponseClaim`) and
//! TLS 1.3's (`prove_response13`, `Claim13`: the claim's shape, the
//! sealed proof, `Δ`, the disclosure and the opening), each with the
//! hidden cookie proven free of line ends. For TLS 1.3 the prover also
//! lies in its claim, field by field (`claim13_mutants`: every field of
//! the claim's shape, list fields on their first and last element, a
//! number off by one, bytes flipped, shorter, longer), proving the lie
//! consistently: the verifier refuses, or outputs only true bytes.

mod common;
use common::tls13::{run13, server13, Done13, Hooks13};
use common::*;
use futures::task::ArcWake;
use futures::{AsyncRead, AsyncWrite};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use webproof_attestation::{CommitPlan, CommitmentSeed, Transcript, TranscriptCommitment};
use webproof_core::Channel;
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::tls13::response::{prove_response13, verify_response13, Claim13, Verified13};
use webproof_mpc_tls::tls13::{Tls13ProverSession, Tls13VerifierSession};
use webproof_mpc_tls::{
    cots_needed, prove_response, verify_response, CotPool, Error, ResponseClaim, VerifiedResponse,
};
use webproof_tls::CipherSuite;
use webproof_zk::Config;

const SEED: u64 = 5;
const BODY: usize = 200;
/// Bytes of the body the prover reveals; the rest is hidden.
const BODY_REVEALED: usize = 40;

/// One world: the prover's request and the server's response, which
/// differ between worlds only where the prover hides them.
struct World {
    request: Vec<u8>,
    response: Vec<u8>,
}

fn world(secret: u8) -> World {
    let mut body: Vec<u8> = (0..BODY).map(|i| b'a' + (i * 7 % 26) as u8).collect();
    for b in &mut body[BODY_REVEALED..] {
        *b ^= secret & 0x1f;
    }
    let mut response = format!("HTTP/1.1 200 OK\r\nContent-Length: {BODY}\r\n\r\n").into_bytes();
    response.extend(body);
    let cookie: String = (0..12)
        .map(|i| (b'A' + (secret + i) % 26) as char)
        .collect();
    let request = format!(
        "GET /known HTTP/1.1\r\nHost: webproof.test\r\nCookie: s={cookie}\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    World { request, response }
}

/// What the prover reveals: the request but the cookie's value, the
/// response's head and the first bytes of its body.
fn reveals(w: &World) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    let at = w
        .request
        .windows(9)
        .position(|x| x == b"Cookie: s")
        .expect("the cookie")
        + 10;
    let request = vec![0..at, at + 12..w.request.len()];
    let head = w.response.len() - BODY;
    #[allow(clippy::single_range_in_vec_init)] // one revealed range
    let response = vec![0..head + BODY_REVEALED];
    (request, response)
}

/// How a frame is mutated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Flip,
    Cut,
    Lengthen,
    Drop,
    Replay,
    Swap,
}

const KINDS: [Kind; 6] = [
    Kind::Flip,
    Kind::Cut,
    Kind::Lengthen,
    Kind::Drop,
    Kind::Replay,
    Kind::Swap,
];

/// One direction of the tapped link: the frames the writer wrote (before
/// the tap), the bytes the reader gets (after it).
#[derive(Default)]
struct Pipe {
    partial: Vec<u8>,
    frames: Vec<Vec<u8>>,
    buf: VecDeque<u8>,
    held: Option<Vec<u8>>,
    mutation: Option<(usize, Kind)>,
    applied: bool,
    closed: bool,
    reader: Option<Waker>,
}

impl Pipe {
    fn emit(&mut self, frame: &[u8]) {
        self.buf
            .extend((frame.len() as u32).to_le_bytes().iter().chain(frame));
    }

    /// Take whole frames out of what the writer wrote, mutating the target.
    fn tap(&mut self) {
        while self.partial.len() >= 4 {
            let len = u32::from_le_bytes(self.partial[..4].try_into().unwrap()) as usize;
            if self.partial.len() < 4 + len {
                break;
            }
            let mut frame: Vec<u8> = self.partial.drain(..4 + len).skip(4).collect();
            let i = self.frames.len();
            self.frames.push(frame.clone());
            match self.mutation {
                Some((at, kind)) if at == i => {
                    self.applied = true;
                    match kind {
                        Kind::Flip if !frame.is_empty() => {
                            let mid = frame.len() / 2;
                            frame[mid] ^= 1;
                            self.emit(&frame);
                        }
                        Kind::Cut if !frame.is_empty() => {
                            frame.pop();
                            self.emit(&frame);
                        }
                        Kind::Lengthen => {
                            frame.push(0);
                            self.emit(&frame);
                        }
                        Kind::Drop => {}
                        Kind::Replay => {
                            self.emit(&frame);
                            self.emit(&frame);
                        }
                        Kind::Swap => {
                            // Applied only if the next frame comes before
                            // the reader starves (see `poll_read`).
                            self.applied = false;
                            self.held = Some(frame);
                        }
                        _ => {
                            self.applied = false;
                            self.emit(&frame);
                        }
                    }
                }
                _ => {
                    self.emit(&frame);
                    if let Some(h) = self.held.take() {
                        self.emit(&h);
                        self.applied = true;
                    }
                }
            }
        }
        if let Some(w) = self.reader.take() {
            w.wake();
        }
    }
}

/// One end of a tapped duplex link.
struct TapIo {
    rx: Arc<Mutex<Pipe>>,
    tx: Arc<Mutex<Pipe>>,
}

/// A link whose prover → verifier and verifier → prover frames are
/// recorded and may be mutated: (prover's end, verifier's end, the two
/// directions).
fn tapped(
    to_verifier: Option<(usize, Kind)>,
    to_prover: Option<(usize, Kind)>,
) -> (TapIo, TapIo, Arc<Mutex<Pipe>>, Arc<Mutex<Pipe>>) {
    let pv = Arc::new(Mutex::new(Pipe {
        mutation: to_verifier,
        ..Pipe::default()
    }));
    let vp = Arc::new(Mutex::new(Pipe {
        mutation: to_prover,
        ..Pipe::default()
    }));
    (
        TapIo {
            rx: vp.clone(),
            tx: pv.clone(),
        },
        TapIo {
            rx: pv.clone(),
            tx: vp.clone(),
        },
        pv,
        vp,
    )
}

impl AsyncRead for TapIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut p = self.rx.lock().unwrap();
        if p.buf.is_empty() {
            // A frame held back for a swap goes once nothing follows it
            // (the writer waits for an answer): in order, not a mutation.
            if let Some(h) = p.held.take() {
                p.emit(&h);
            } else if p.closed {
                return Poll::Ready(Ok(0));
            } else {
                p.reader = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
        let n = out.len().min(p.buf.len());
        for (o, b) in out.iter_mut().zip(p.buf.drain(..n)) {
            *o = b;
        }
        Poll::Ready(Ok(n))
    }
}

impl AsyncWrite for TapIo {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut p = self.tx.lock().unwrap();
        if p.closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        p.partial.extend_from_slice(data);
        p.tap();
        Poll::Ready(Ok(data.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        close(&self.tx);
        Poll::Ready(Ok(()))
    }
}

fn close(pipe: &Arc<Mutex<Pipe>>) {
    let mut p = pipe.lock().unwrap();
    p.closed = true;
    if let Some(w) = p.reader.take() {
        w.wake();
    }
}

impl Drop for TapIo {
    fn drop(&mut self) {
        close(&self.tx);
        close(&self.rx);
    }
}

/// Polls `f` to completion, or until no party can move (a dropped frame
/// leaves both waiting on each other): everything is in memory on this
/// thread, so a poll that wakes nobody means nobody ever will.
fn drive<F: Future>(f: F) {
    struct Flag(AtomicBool);
    impl ArcWake for Flag {
        fn wake_by_ref(a: &Arc<Self>) {
            a.0.store(true, Ordering::SeqCst);
        }
    }
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = futures::task::waker(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        flag.0.store(false, Ordering::SeqCst);
        if f.as_mut().poll(&mut cx).is_ready() || !flag.0.load(Ordering::SeqCst) {
            return;
        }
    }
}

/// How a party's run of the response proof ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    Done,
    /// The error's kind (its variant), not its text.
    Failed(&'static str),
    Stalled,
}

fn kind(e: &Error) -> &'static str {
    match e {
        Error::VerifierCheated(_) => "verifier cheated",
        Error::Proof(_) => "proof",
        Error::Malformed(_) => "malformed",
        Error::Oversized { .. } => "oversized",
        Error::Unexpected { .. } => "unexpected",
        Error::Mpc(_) => "2pc",
        _ => "other",
    }
}

/// The TLS version of the sessions under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    Tls12,
    Tls13,
}

/// A session of one world, run once; the response proof then runs from it
/// as often as needed.
struct Session {
    world: World,
    party: Party,
    blinders: Vec<[u8; 16]>,
    cots: usize,
}

/// The finished session and the prover's honest claim, per version.
enum Party {
    V12 {
        done: Box<Done>,
        claim: ResponseClaim,
    },
    V13 {
        done: Box<Done13>,
        claim: Claim13,
    },
}

/// The hidden bytes of the request heads the prover proves free of line
/// ends, as the session crate takes them.
fn crlf_free(w: &World, req_ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    let shown: Vec<_> = req_ranges
        .iter()
        .map(|r| webproof_disclosure::disclosure::Range::new(r.start, r.end))
        .collect();
    let free: Vec<Range<usize>> =
        webproof_disclosure::exchange::hidden_head_bytes(&w.request, &shown)
            .iter()
            .map(|r| r.start..r.end)
            .collect();
    assert!(!free.is_empty(), "the cookie is a hidden head byte run");
    free
}

fn session(version: Version, secret: u8) -> Session {
    let world = world(secret);
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let cots = cots_needed(world.request.len());
    let commitment = commitment(&world).expect("commitment");
    let blinders = webproof_disclosure::attest::blinders(&commitment);
    let (req_ranges, resp_ranges) = reveals(&world);
    // The hidden cookie proven free of line ends, as the real prover does,
    // so its frames carry those ranges too.
    let free = crlf_free(&world, &req_ranges);
    let party = match version {
        Version::Tls12 => {
            let pcfg = prover_config(
                NAME,
                ECDHE_ECDSA_AES128_GCM_SHA256,
                GROUP_P256,
                true,
                &world.request,
            );
            let (p, hello, v, _, _) = sessions_ext(SEED, pcfg, verifier_config(&c.ca_der, NAME));
            let done = run(p, hello, v, server(&c), &world.response, Hooks::default())
                .expect("the honest session completes");
            assert_eq!(done.prover.response, world.response);
            let claim = ResponseClaim::new(&done.prover, &resp_ranges)
                .and_then(|c| c.with_request(&done.prover, &world.request, &req_ranges))
                .and_then(|c| c.with_request_crlf_free(&done.prover, &free))
                .map(|c| c.with_commitment(&done.prover, &commitment))
                .expect("the claim");
            Party::V12 {
                done: Box::new(done),
                claim,
            }
        }
        Version::Tls13 => {
            // The same COTs as `sessions_ext` draws (one `Δ`), so `prove`
            // rebuilds the proof's extensions alike for both versions.
            let (delta, keys, macs, _, _) = cots_ext(SEED, cots);
            let mut rng = ChaCha20Rng::seed_from_u64(SEED + 10);
            let (p, hello) = Tls13ProverSession::new(
                prover_config(
                    NAME,
                    CipherSuite::TLS13_AES_128_GCM_SHA256,
                    GROUP_X25519,
                    false,
                    &world.request,
                ),
                CotPool::new(macs),
                &mut rng,
            )
            .expect("the prover's session");
            let v = Tls13VerifierSession::new(
                verifier_config(&c.ca_der, NAME),
                delta,
                CotPool::new(keys),
                &mut rng,
            );
            let done = run13(
                p,
                hello,
                v,
                server13(&c, false),
                Hooks13::default(),
                Some(&world.response),
            )
            .expect("the honest session completes");
            assert_eq!(
                done.p.response().map(|r| &r.response[..]),
                Some(&world.response[..])
            );
            let claim = Claim13::new(&done.p, &resp_ranges)
                .and_then(|c| c.with_request(&done.p, &req_ranges))
                .map(|c| c.with_request_crlf_free(&free))
                .map(|c| c.with_commitment(&commitment))
                .expect("the claim");
            Party::V13 {
                done: Box::new(done),
                claim,
            }
        }
    };
    Session {
        world,
        party,
        blinders,
        cots,
    }
}

fn commitment(w: &World) -> webproof_attestation::Result<TranscriptCommitment> {
    let t = Transcript::new(w.request.clone(), w.response.clone());
    let plan = CommitPlan::new().with_chunk_len(64)?;
    TranscriptCommitment::new(&t, &plan, CommitmentSeed::from_bytes([7; 32]))
}

/// What one run of the response proof showed.
struct Proof {
    prover: End,
    verifier: End,
    verified: Option<Verified>,
    /// Frames each party wrote (before the tap).
    prover_frames: Vec<Vec<u8>>,
    verifier_frames: Vec<Vec<u8>>,
    applied: bool,
}

/// What the verifier established, in either version's form.
enum Verified {
    V12(VerifiedResponse),
    V13(Verified13),
}

fn prove(
    s: &Session,
    to_verifier: Option<(usize, Kind)>,
    to_prover: Option<(usize, Kind)>,
) -> Proof {
    prove_claim(s, None, to_verifier, to_prover)
}

/// [`prove`] of `lie` in place of the session's TLS 1.3 claim, if given.
fn prove_claim(
    s: &Session,
    lie: Option<&Claim13>,
    to_verifier: Option<(usize, Kind)>,
    to_prover: Option<(usize, Kind)>,
) -> Proof {
    // The session's COT extensions, rebuilt: the same seed gives the same
    // `Δ` and the same next COTs, so every run proves against one session.
    let (_, _, _, sender, receiver) = cots_ext(SEED, s.cots);
    let (pio, vio, pv, vp) = tapped(to_verifier, to_prover);
    let cfg = Config {
        cot_batch: 1 << 18,
        ..Config::default()
    };
    let prover_end = RefCell::new(End::Stalled);
    let verifier_end = RefCell::new(End::Stalled);
    let verified = RefCell::new(None);
    let mut r1 = ChaCha20Rng::seed_from_u64(SEED + 100);
    let mut r2 = ChaCha20Rng::seed_from_u64(SEED + 101);
    drive(async {
        futures::join!(
            async {
                let r = match &s.party {
                    Party::V12 { done, claim } => prove_response(
                        receiver,
                        Channel::new(pio),
                        cfg,
                        &done.prover,
                        claim,
                        &s.blinders,
                        &mut r1,
                    )
                    .await
                    .map(|_| ()),
                    Party::V13 { done, claim } => prove_response13(
                        receiver,
                        Channel::new(pio),
                        cfg,
                        &done.p,
                        lie.unwrap_or(claim),
                        &s.blinders,
                        &mut r1,
                    )
                    .await
                    .map(|_| ()),
                };
                *prover_end.borrow_mut() = match r {
                    Ok(_) => End::Done,
                    Err(e) => End::Failed(kind(&e)),
                };
            },
            async {
                let r = match &s.party {
                    Party::V12 { done, .. } => verify_response(
                        sender,
                        Channel::new(vio),
                        cfg,
                        &done.verifier,
                        true,
                        &mut r2,
                    )
                    .await
                    .map(Verified::V12),
                    Party::V13 { done, .. } => {
                        verify_response13(sender, Channel::new(vio), cfg, &done.v, true, &mut r2)
                            .await
                            .map(Verified::V13)
                    }
                };
                *verifier_end.borrow_mut() = match r {
                    Ok(v) => {
                        *verified.borrow_mut() = Some(v);
                        End::Done
                    }
                    Err(e) => End::Failed(kind(&e)),
                };
            }
        )
    });
    let (pv, vp) = (pv.lock().unwrap(), vp.lock().unwrap());
    Proof {
        prover: prover_end.into_inner(),
        verifier: verifier_end.into_inner(),
        verified: verified.into_inner(),
        prover_frames: pv.frames.clone(),
        verifier_frames: vp.frames.clone(),
        applied: pv.applied || vp.applied,
    }
}

/// The verifier's output holds only true bytes at true offsets and the
/// leaf hashes of the true transcript.
fn only_true_bytes(v: &Verified, w: &World) -> bool {
    let c = commitment(w).ok();
    match v {
        Verified::V12(v) => common::only_true_bytes(v, &w.request, &w.response, c.as_ref()),
        Verified::V13(v) => common::only_true_bytes13(v, &w.request, &w.response, c.as_ref()),
    }
}

/// Bytes of the response the verifier's view holds.
fn revealed_len(v: &Verified) -> usize {
    match v {
        Verified::V12(v) => v.ranges.iter().map(|r| r.bytes.len()).sum(),
        Verified::V13(v) => v.ranges.iter().map(|r| r.1.len()).sum(),
    }
}

/// What a cheating verifier sees of the prover in a run: how it ended,
/// how many frames it sent, and which of them differ in length from its
/// honest run's.
fn view(run: &Proof, honest: &Proof) -> (End, usize, Vec<usize>) {
    let off: Vec<usize> = run
        .prover_frames
        .iter()
        .enumerate()
        .filter(|(i, f)| honest.prover_frames.get(*i).map(Vec::len) != Some(f.len()))
        .map(|(i, _)| i)
        .collect();
    (run.prover.clone(), run.prover_frames.len(), off)
}

/// Frame indices to mutate out of `frames`: every one (`all`), or each
/// frame that starts or ends a run of frames of one length (the proof's
/// bulk, COT extension and full segments, is many frames alike).
fn sample(frames: &[Vec<u8>], all: bool) -> Vec<usize> {
    let n = frames.len();
    (0..n)
        .filter(|&i| {
            all || i == 0
                || i + 1 == n
                || frames[i - 1].len() != frames[i].len()
                || frames[i + 1].len() != frames[i].len()
        })
        .collect()
}

#[test]
fn response_proof_frames_are_refused_or_true_and_secrets_do_not_matter() {
    harness(Version::Tls12, false);
}

/// Every frame, not a sample (about four times the runs).
#[test]
#[ignore]
fn every_response_proof_frame_is_refused_or_true_and_secrets_do_not_matter() {
    harness(Version::Tls12, true);
}

/// TLS 1.3's response proof, the frames sampled as TLS 1.2's.
#[test]
fn tls13_response_proof_frames_are_refused_or_true_and_secrets_do_not_matter() {
    harness(Version::Tls13, false);
}

/// TLS 1.3's, every frame.
#[test]
#[ignore]
fn every_tls13_response_proof_frame_is_refused_or_true_and_secrets_do_not_matter() {
    harness(Version::Tls13, true);
}

fn harness(version: Version, all: bool) {
    let started = std::time::Instant::now();
    let a = session(version, 1);
    let b = session(version, 2);
    assert_ne!(a.world.request, b.world.request);
    assert_ne!(a.world.response, b.world.response);

    let honest = prove(&a, None, None);
    assert_eq!(honest.prover, End::Done);
    let v = honest.verified.as_ref().expect("the honest proof verifies");
    assert!(only_true_bytes(v, &a.world));
    assert_eq!(
        revealed_len(v),
        a.world.response.len() - BODY + BODY_REVEALED
    );
    let honest_b = prove(&b, None, None);
    assert_eq!(honest_b.prover, End::Done);
    // The same frames in both worlds; a few lengths differ by some bytes,
    // the proof's segments, whose AND count depends on public values
    // (constant inputs fold gates away), so each world's mutated runs are
    // compared with its own honest run.
    assert_eq!(honest.prover_frames.len(), honest_b.prover_frames.len());
    assert_eq!(honest.verifier_frames.len(), honest_b.verifier_frames.len());
    // The disclosure: the frame that carries the revealed bytes, found by
    // the revealed body's bytes (the prover's frames are otherwise MACs,
    // masks and hashes).
    let marker = &a.world.response[a.world.response.len() - BODY..][..BODY_REVEALED];
    let disclosure = honest
        .prover_frames
        .iter()
        .position(|f| f.windows(marker.len()).any(|w| w == marker))
        .expect("the prover discloses its revealed bytes");
    let (np, nv) = (honest.prover_frames.len(), honest.verifier_frames.len());
    eprintln!(
        "response proof: {np} prover frames (disclosure at {disclosure}), {nv} verifier frames"
    );

    let (mut runs, mut refused, mut accepted, mut stalled) = (0usize, 0usize, 0usize, 0usize);
    // The prover under test.
    for i in sample(&honest.prover_frames, all) {
        for k in KINDS {
            let r = prove(&a, Some((i, k)), None);
            if !r.applied {
                continue;
            }
            runs += 1;
            if r.verifier == End::Stalled {
                stalled += 1;
            }
            match &r.verified {
                None => refused += 1,
                Some(v) => {
                    accepted += 1;
                    assert!(
                        only_true_bytes(v, &a.world),
                        "{version:?} prover frame {i} {k:?}: the verifier accepted bytes the server did not send"
                    );
                }
            }
        }
    }
    // The verifier under test, in both worlds.
    for i in sample(&honest.verifier_frames, true) {
        for k in KINDS {
            let ra = prove(&a, None, Some((i, k)));
            let rb = prove(&b, None, Some((i, k)));
            if !ra.applied && !rb.applied {
                continue;
            }
            runs += 1;
            assert_eq!(
                view(&ra, &honest),
                view(&rb, &honest_b),
                "{version:?} verifier frame {i} {k:?}: what the verifier sees of the prover depends on its hidden bytes"
            );
            if ra.prover == End::Failed("verifier cheated") {
                assert!(
                    ra.prover_frames.len() <= disclosure,
                    "{version:?} verifier frame {i} {k:?}: the prover disclosed before it caught the verifier"
                );
            }
            if ra.prover == End::Stalled {
                stalled += 1;
            }
            if ra.prover == End::Done {
                accepted += 1;
            } else {
                refused += 1;
            }
        }
    }
    // TLS 1.3: the prover lies in its claim, one field at a time.
    if let Party::V13 { claim, .. } = &a.party {
        for (n, lie) in claim13_mutants(claim).iter().enumerate() {
            let r = prove_claim(&a, Some(lie), None, None);
            runs += 1;
            match &r.verified {
                None => refused += 1,
                Some(v) => {
                    accepted += 1;
                    assert!(
                        only_true_bytes(v, &a.world),
                        "claim mutant {n} ({lie:?}): the verifier accepted a false claim"
                    );
                }
            }
        }
    }
    eprintln!(
        "differential (response proof, {version:?}): {runs} mutated runs: {refused} refused ({stalled} of them by waiting for a frame that never came), {accepted} ended with true bytes only, in {:?}",
        started.elapsed()
    );
    assert!(runs > 100, "too few mutated runs ({runs})");
}

/// Mutants of a list field: its first and its last element changed by
/// `each` (every mutant of that element), the list one shorter, one
/// longer (`extra` appended).
fn list_mutants<T: Clone>(v: &[T], each: impl Fn(&T) -> Vec<T>, extra: T) -> Vec<Vec<T>> {
    let mut out = Vec::new();
    let ends: Vec<usize> = match v.len() {
        0 => Vec::new(),
        1 => vec![0],
        n => vec![0, n - 1],
    };
    for i in ends {
        for x in each(&v[i]) {
            let mut m = v.to_vec();
            m[i] = x;
            out.push(m);
        }
    }
    if !v.is_empty() {
        out.push(v[..v.len() - 1].to_vec());
    }
    let mut l = v.to_vec();
    l.push(extra);
    out.push(l);
    out
}

/// A number off by one either way.
fn number_mutants(n: usize) -> Vec<usize> {
    vec![n.wrapping_add(1), n.wrapping_sub(1)]
}

/// Every mutant of a TLS 1.3 claim, one field changed in each: the IVs,
/// every field of the records' types and lengths, the alert, the
/// revealed ranges' offsets and bytes (both directions), the ranges
/// free of line ends, the leaves and their hashes.
fn claim13_mutants(c: &Claim13) -> Vec<Claim13> {
    let mut out = Vec::new();
    out.push(Claim13 {
        server_iv: array_mutant(&c.server_iv),
        ..c.clone()
    });
    out.push(Claim13 {
        client_iv: array_mutant(&c.client_iv),
        ..c.clone()
    });
    let record = |&(t, l): &(u8, usize)| {
        let mut v = vec![(t.wrapping_add(1), l)];
        v.extend(number_mutants(l).into_iter().map(|l| (t, l)));
        v
    };
    let last = *c.records.last().expect("a record");
    for records in list_mutants(&c.records, record, last) {
        out.push(Claim13 {
            records,
            ..c.clone()
        });
    }
    let alerts = match c.alert {
        Some(a) => vec![None, Some(array_mutant(&a))],
        None => vec![Some([1, 0])],
    };
    for alert in alerts {
        out.push(Claim13 { alert, ..c.clone() });
    }
    let range = |(at, b): &(usize, Vec<u8>)| {
        let mut v: Vec<_> = number_mutants(*at)
            .into_iter()
            .map(|at| (at, b.clone()))
            .collect();
        v.extend(bytes_mutants(b).into_iter().map(|b| (*at, b)));
        v
    };
    // An extra range of a false byte (the first of either direction is
    // `H` or `G`).
    for ranges in list_mutants(&c.ranges, range, (0, b"X".to_vec())) {
        out.push(Claim13 {
            ranges,
            ..c.clone()
        });
    }
    for request in list_mutants(&c.request, range, (0, b"X".to_vec())) {
        out.push(Claim13 {
            request,
            ..c.clone()
        });
    }
    let place = |&(at, n): &(usize, usize)| {
        let mut v: Vec<_> = number_mutants(at).into_iter().map(|at| (at, n)).collect();
        v.extend(number_mutants(n).into_iter().map(|n| (at, n)));
        v
    };
    // An extra range over the request line's end: not free of line ends.
    let line_end = (0, 20);
    for request_crlf_free in list_mutants(&c.request_crlf_free, place, line_end) {
        out.push(Claim13 {
            request_crlf_free,
            ..c.clone()
        });
    }
    let leaf = |l: &webproof_attestation::LeafRange| {
        use webproof_attestation::Direction as D;
        let other = match l.direction {
            D::Sent => D::Received,
            D::Received => D::Sent,
        };
        vec![
            webproof_attestation::LeafRange {
                direction: other,
                ..*l
            },
            webproof_attestation::LeafRange {
                start: l.start.wrapping_add(1),
                ..*l
            },
            webproof_attestation::LeafRange {
                end: l.end.wrapping_sub(1),
                ..*l
            },
        ]
    };
    // The list mutants of leaves change the count: their hashes follow
    // (one per leaf), or the claim would be refused as malformed alone.
    let last_leaf = *c.leaves.last().expect("a leaf");
    for leaves in list_mutants(&c.leaves, leaf, last_leaf) {
        let mut leaf_hashes = c.leaf_hashes.clone();
        leaf_hashes.resize(leaves.len(), [0; 32]);
        out.push(Claim13 {
            leaves,
            leaf_hashes,
            ..c.clone()
        });
    }
    let hash = |h: &[u8; 32]| vec![array_mutant(h)];
    for leaf_hashes in list_mutants(&c.leaf_hashes, hash, [0; 32]) {
        if leaf_hashes.len() == c.leaves.len() {
            out.push(Claim13 {
                leaf_hashes,
                ..c.clone()
            });
        }
    }
    out
}

//! The differential soundness harness (issue 12): honest sessions whose true
//! bytes are known, replayed with the prover's messages mutated, through the
//! verifier's own code path after the relay. For every mutation the
//! verifier must refuse, or produce an output (and attestation, and
//! presentation) in which every revealed byte is the true byte at its
//! offset and every length the true length. See `SOUNDNESS.md` for how to
//! run it and what it covers.
//!
//! - `soundness/session.rs`: the honest rustls sessions, and the truth;
//! - `soundness/plan.rs`: the prover's messages, the adaptive cheating
//!   prover and the mutations (all knowledge of the plan's shape);
//! - `soundness/pipeline.rs`: `verify_after_relay`, the verifier under test;
//! - `soundness/oracle.rs`: the checks of an accepted session.

#[path = "soundness/oracle.rs"]
mod oracle;
#[path = "soundness/pipeline.rs"]
mod pipeline;
#[path = "soundness/plan.rs"]
mod plan;
#[path = "soundness/session.rs"]
mod session;

use pipeline::{verify_after_relay, Backend, ProverSide, Refused};
use plan::{Attempt, Kind, Mutation, Reveal, Scenario, Source};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use session::{Certs, Fixture, Session};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use webproof_attestation::{Scheme, SigningKey};

/// Mutation kinds whose violations are known open review findings: such
/// violations are reported but do not fail a run. Empty: every violation
/// fails. (After finding 1 is fixed, `&[Kind::ClientRecords]` lets the CI
/// run pass while finding 2 is open; see SOUNDNESS.md.)
const KNOWN_OPEN: &[Kind] = &[];

/// Everything a run needs: two sessions per fixture and suite and the
/// verifier's key.
struct World {
    /// Index `fixture * 6 + suite`, the fixtures in the order given.
    sessions: Vec<[Session; 2]>,
    key: SigningKey,
}

impl World {
    fn new(fixtures: &[Fixture]) -> Self {
        let certs = Certs::generate();
        let sessions = session::sessions(&certs, fixtures);
        let key = SigningKey::generate(Scheme::Ed25519, &mut ChaCha20Rng::seed_from_u64(1));
        World { sessions, key }
    }

    /// Every fixture (seeded runs).
    fn all() -> Self {
        Self::new(&Fixture::ALL)
    }
}

/// The fixture of a seeded session (`(seed / 6) mod 8`): half the plain
/// response, a quarter `Json`, an eighth each `Chunked` and `Eof`, so the
/// suite (`seed mod 6`) still cycles over all six for each.
fn fixture_of(seed: u64) -> usize {
    [0, 0, 1, 2, 0, 0, 1, 3][((seed / session::SUITES.len() as u64) % 8) as usize]
}

/// A mutated session, fully determined by its seed (or named).
#[derive(Clone, Debug)]
struct Case {
    name: String,
    seed: u64,
    /// Index into `World::sessions` (`fixture * 6 + suite`).
    suite: usize,
    scenario: Scenario,
    adaptive: bool,
    mutations: Vec<Mutation>,
}

/// What became of a case.
#[derive(Debug)]
enum Outcome {
    Refused(Refused),
    Accepted {
        checked: oracle::Checked,
        violations: Vec<String>,
        received_text: String,
    },
    Panicked(String),
}

/// Build the attempt of a seeded case (the mutations are generated from
/// the state they apply to) or of a named one.
fn build(w: &World, seed: u64, fixed: Option<(&Case, &[Mutation])>) -> (Case, Attempt) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let commit_seed: [u8; 32] = rng.gen();
    match fixed {
        Some((c, muts)) => {
            let [s, other] = &w.sessions[c.suite];
            let (a, applied) = plan::mutated::<ChaCha20Rng>(
                s,
                other,
                &c.scenario,
                c.adaptive,
                commit_seed,
                Source::Fixed(muts),
            );
            let mut c = c.clone();
            c.mutations = applied;
            (c, a)
        }
        None => {
            let n_suites = session::SUITES.len();
            let suite = fixture_of(seed) * n_suites + (seed % n_suites as u64) as usize;
            let [s, other] = &w.sessions[suite];
            let scenario = Scenario::random(&mut rng, s.fixture);
            let adaptive = rng.gen_bool(0.8);
            let n = match rng.gen_range(0..20) {
                0..=11 => 1,
                12..=16 => 2,
                _ => 3,
            };
            let json = s.body.is_some();
            let kinds: Vec<Kind> = (0..n).map(|_| Kind::random(&mut rng, json)).collect();
            let mut mrng = ChaCha20Rng::seed_from_u64(rng.gen());
            let (a, applied) = plan::mutated(
                s,
                other,
                &scenario,
                adaptive,
                commit_seed,
                Source::Random(&mut mrng, kinds),
            );
            let c = Case {
                name: format!("seed {seed}"),
                seed,
                suite,
                scenario,
                adaptive,
                mutations: applied,
            };
            (c, a)
        }
    }
}

fn run_attempt(
    w: &World,
    c: &Case,
    a: &Attempt,
    backend: Backend,
) -> Result<pipeline::Accepted, Refused> {
    let s = &w.sessions[c.suite][0];
    let witness = a.witness(s.tls13());
    verify_after_relay(
        &a.recorded,
        &a.close_frame(),
        &a.proof_message(),
        &s.cfg,
        Some(&w.key),
        &ProverSide {
            witness: &witness,
            backend,
            seed: c.seed,
        },
    )
}

/// Run a case on the ideal backend and check it; with `real`, also on a
/// real engine, which must give the same verdict and output.
fn run_case(w: &World, c: &Case, a: &Attempt, real: Option<Backend>) -> Outcome {
    let s = &w.sessions[c.suite][0];
    let result = catch(|| {
        let t0 = std::time::Instant::now();
        let ideal = run_attempt(w, c, a, Backend::Ideal);
        TIMES.with(|t| t.borrow_mut()[0] += t0.elapsed());
        let mut violations = Vec::new();
        if let Some(b) = real {
            let t0 = std::time::Instant::now();
            let other = run_attempt(w, c, a, b);
            TIMES.with(|t| t.borrow_mut()[1] += t0.elapsed());
            match (&ideal, &other) {
                (Ok(x), Ok(y)) => {
                    if x.proven != y.proven
                        || x.output != y.output
                        || x.attestation != y.attestation
                    {
                        violations.push(format!(
                            "{b:?} accepts with another result than the ideal proof"
                        ));
                    }
                }
                (Err(x), Err(y)) if x.stage == y.stage => {}
                (x, y) => violations.push(format!(
                    "engines disagree: ideal {:?}, {b:?} {:?}",
                    x.as_ref().map(|_| "accepted"),
                    y.as_ref().map(|_| "accepted")
                )),
            }
        }
        match ideal {
            Err(r) if violations.is_empty() => Outcome::Refused(r),
            Err(_) => Outcome::Accepted {
                checked: oracle::Checked::default(),
                violations,
                received_text: String::new(),
            },
            Ok(acc) => {
                let mut checked = oracle::Checked::default();
                let t0 = std::time::Instant::now();
                violations.extend(oracle::check(s, a, &acc, &w.key, &mut checked));
                TIMES.with(|t| t.borrow_mut()[2] += t0.elapsed());
                Outcome::Accepted {
                    checked,
                    violations,
                    received_text: acc.output.received.text.clone(),
                }
            }
        }
    });
    result.unwrap_or_else(Outcome::Panicked)
}

thread_local! {
    /// Time in the ideal pipeline, the real engines and the oracle.
    static TIMES: std::cell::RefCell<[std::time::Duration; 3]> = Default::default();
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f`, turning a panic into its message (printed only by the report).
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                default(info)
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    r.map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

/// Counts of a run.
#[derive(Default)]
struct Summary {
    sessions: usize,
    refused: usize,
    accepted: usize,
    /// suite -> [sessions, refused, accepted, violations]
    per_suite: BTreeMap<String, [usize; 4]>,
    stages: BTreeMap<&'static str, usize>,
    accepted_kinds: BTreeMap<String, usize>,
    attested: usize,
    presented: usize,
    truncated: usize,
    /// Accepted sessions with JSON claims, and the verified paths checked.
    json_sessions: usize,
    json_paths: usize,
    /// JSON claim ops and skeleton holes: op -> [refused, accepted].
    json_ops: BTreeMap<String, [usize; 2]>,
    real_checked: usize,
    failures: Vec<String>,
    /// (TLS version, mutation kinds, violation or panic) -> seeds
    classes: BTreeMap<String, Vec<u64>>,
    panics: usize,
    violations: usize,
    /// Violations of [`KNOWN_OPEN`] kinds.
    known_open: usize,
}

impl Summary {
    fn record(&mut self, w: &World, c: &Case, o: &Outcome, real: Option<Backend>) {
        let suite = w.sessions[c.suite][0].suite.to_string();
        let row = self.per_suite.entry(suite.clone()).or_default();
        row[0] += 1;
        self.sessions += 1;
        if real.is_some() {
            self.real_checked += 1;
        }
        let describe = |what: &str, detail: &str| {
            let replay = if c.name.starts_with("seed ") {
                format!("replay: WEBPROOF_SOUNDNESS_CASE={} cargo test -p webproof-net --test soundness replay -- --ignored --nocapture", c.seed)
            } else {
                "a named case".to_string()
            };
            format!(
                "{what} in case {} ({suite}, {:?}, adaptive {}): mutations {:?}\n    {detail}\n    {replay}",
                c.name, c.scenario, c.adaptive, c.mutations
            )
        };
        let class = |what: &str| {
            let mut kinds: Vec<String> = c
                .mutations
                .iter()
                .map(|m| format!("{:?}", m.kind()))
                .collect();
            kinds.sort();
            kinds.dedup();
            format!(
                "{what} {} [{}]",
                w.sessions[c.suite][0].suite.version(),
                kinds.join(", ")
            )
        };
        // Which JSON ops (and holes punched in the disclosure) were tried.
        for m in &c.mutations {
            let op = match m {
                Mutation::Json(op) => format!("{op:?}"),
                Mutation::Ranges(_, op @ plan::RangeOp::Hide(_)) => format!("{op:?}"),
                _ => continue,
            };
            let name = op.split('(').next().unwrap_or_default().to_string();
            let accepted = matches!(o, Outcome::Accepted { .. });
            self.json_ops.entry(name).or_default()[accepted as usize] += 1;
        }
        match o {
            Outcome::Refused(r) => {
                self.refused += 1;
                row[1] += 1;
                *self.stages.entry(r.stage).or_default() += 1;
            }
            Outcome::Accepted {
                checked,
                violations,
                received_text,
            } => {
                self.accepted += 1;
                row[2] += 1;
                self.attested += checked.attestation as usize;
                self.presented += checked.presentation as usize;
                self.truncated += checked.truncated as usize;
                self.json_sessions += (checked.json > 0) as usize;
                self.json_paths += checked.json;
                for m in &c.mutations {
                    *self
                        .accepted_kinds
                        .entry(format!("{:?}", m.kind()))
                        .or_default() += 1;
                }
                let known = c.mutations.iter().any(|m| KNOWN_OPEN.contains(&m.kind()));
                if !violations.is_empty() && known {
                    self.known_open += 1;
                    self.classes
                        .entry(class("known open"))
                        .or_default()
                        .push(c.seed);
                } else if !violations.is_empty() {
                    row[3] += 1;
                    self.violations += 1;
                    let detail = format!(
                        "{}\n    verifier output received.text = {received_text:?}",
                        violations.join("\n    ")
                    );
                    self.failures.push(describe("VIOLATION", &detail));
                    self.classes
                        .entry(class("violation"))
                        .or_default()
                        .push(c.seed);
                }
            }
            Outcome::Panicked(msg) => {
                self.panics += 1;
                row[3] += 1;
                self.failures
                    .push(describe("PANIC", &format!("the verifier panicked: {msg}")));
                self.classes.entry(class("panic")).or_default().push(c.seed);
            }
        }
    }

    fn report(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "soundness: {} mutated sessions, {} refused, {} accepted ({} with an attestation, {} with a presentation, {} truncated by the prover, {} with {} verified JSON paths), {} violations, {} panics, {} known open; {} cross-checked on a real engine",
            self.sessions,
            self.refused,
            self.accepted,
            self.attested,
            self.presented,
            self.truncated,
            self.json_sessions,
            self.json_paths,
            self.violations,
            self.panics,
            self.known_open,
            self.real_checked
        );
        for (suite, [n, r, a, v]) in &self.per_suite {
            let _ = writeln!(
                s,
                "  {suite:48} {n:6} sessions {r:6} refused {a:6} accepted {v:4} failed"
            );
        }
        let _ = writeln!(s, "  refused at: {:?}", self.stages);
        let [i, r, o] = TIMES.with(|t| *t.borrow());
        let _ = writeln!(
            s,
            "  time: ideal pipeline {:.1} s, real engines {:.1} s, oracle {:.1} s",
            i.as_secs_f64(),
            r.as_secs_f64(),
            o.as_secs_f64()
        );
        let _ = writeln!(
            s,
            "  mutation kinds in accepted sessions: {:?}",
            self.accepted_kinds
        );
        if !self.json_ops.is_empty() {
            let _ = writeln!(
                s,
                "  JSON ops and skeleton holes [refused, accepted]: {:?}",
                self.json_ops
            );
        }
        for (class, seeds) in &self.classes {
            let _ = writeln!(
                s,
                "  {class}: {} cases, seeds {:?}{}",
                seeds.len(),
                &seeds[..seeds.len().min(8)],
                if seeds.len() > 8 { " ..." } else { "" }
            );
        }
        for f in self.failures.iter().take(20) {
            let _ = writeln!(s, "{f}");
        }
        if self.failures.len() > 20 {
            let _ = writeln!(s, "... and {} more", self.failures.len() - 20);
        }
        s
    }
}

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Run `n` seeded cases from `base`. A real engine checks every
/// `real_every`-th case (QuickSilver with ideal COTs; every tenth of those
/// the production stack) and, with `real_accepted`, every accepted one.
fn seeded_run(w: &World, base: u64, n: usize, real_every: usize, real_accepted: bool) -> Summary {
    let mut sum = Summary::default();
    for i in 0..n {
        let seed = base + i as u64;
        let (c, a) = build(w, seed, None);
        let mut real = (real_every > 0 && i.is_multiple_of(real_every)).then(|| {
            if (i / real_every).is_multiple_of(10) {
                Backend::Production
            } else {
                Backend::QuickSilver
            }
        });
        let mut o = run_case(w, &c, &a, real);
        if real.is_none() && real_accepted && matches!(o, Outcome::Accepted { .. }) {
            real = Some(Backend::QuickSilver);
            o = run_case(w, &c, &a, real);
        }
        sum.record(w, &c, &o, real);
    }
    sum
}

/// The CI-sized run: a few hundred seeded mutated sessions, every accepted
/// one also proven with QuickSilver.
///
/// On main at 7417136 it failed on review finding 1 (a TLS 1.2 `data_len`
/// shorter than the record was accepted; the output and attestation were
/// the spliced stream).
#[test]
fn mutated_sessions_ci() {
    let w = World::all();
    let n = env("WEBPROOF_SOUNDNESS_SESSIONS", 300usize);
    let base = env("WEBPROOF_SOUNDNESS_SEED", 0x5eed_0000u64);
    let sum = seeded_run(&w, base, n, 100, true);
    println!("{}", sum.report());
    assert!(
        sum.failures.is_empty(),
        "{} violations and {} panics in {} mutated sessions:\n{}",
        sum.violations,
        sum.panics,
        sum.sessions,
        sum.report()
    );
}

/// The long run: `WEBPROOF_SOUNDNESS_SESSIONS` (default 10,000) seeded
/// mutated sessions over all six suites. See SOUNDNESS.md.
#[test]
#[ignore = "long: run in release, see SOUNDNESS.md"]
fn mutated_sessions_long() {
    let w = World::all();
    let n = env("WEBPROOF_SOUNDNESS_SESSIONS", 10_000usize);
    let base = env("WEBPROOF_SOUNDNESS_SEED", 0x10_0000_0000u64);
    let real_accepted = env("WEBPROOF_SOUNDNESS_REAL_ACCEPTED", 0u8) == 1;
    let sum = seeded_run(&w, base, n, 100, real_accepted);
    println!("{}", sum.report());
    assert!(sum.failures.is_empty(), "{}", sum.report());
}

/// Replay one case by its seed (`WEBPROOF_SOUNDNESS_CASE`), verbosely, on
/// the ideal backend and QuickSilver.
#[test]
#[ignore = "replay: set WEBPROOF_SOUNDNESS_CASE"]
fn replay() {
    let seed: u64 = std::env::var("WEBPROOF_SOUNDNESS_CASE")
        .expect("WEBPROOF_SOUNDNESS_CASE=<seed>")
        .parse()
        .expect("a seed");
    let w = World::all();
    let (c, a) = build(&w, seed, None);
    println!("case: {c:#?}");
    println!("close: {:?}", a.close);
    println!("plan: {}", String::from_utf8_lossy(&a.proof_message()));
    for b in [Backend::Ideal, Backend::QuickSilver] {
        match run_attempt(&w, &c, &a, b) {
            Ok(acc) => println!(
                "{b:?}: accepted\n  sent: {:?}\n  received: {:?}\n  attestation: {}",
                acc.output.sent.text,
                acc.output.received.text,
                acc.attestation.is_some()
            ),
            Err(r) => println!("{b:?}: refused at {}: {}", r.stage, r.error),
        }
    }
    let o = run_case(&w, &c, &a, None);
    let mut sum = Summary::default();
    sum.record(&w, &c, &o, None);
    println!("{}", sum.report());
    assert!(sum.failures.is_empty());
}

/// The review's attack, named: TLS 1.2, the record `{"admin":false,"beta":`
/// declared 9 bytes long (`{"admin":`), the disclosure over the forged
/// stream hiding only the secret header; and the `--reveal none --attest`
/// variant with a presentation. Run on all six suites.
fn review_cases(w: &World) -> Vec<(Case, Vec<Mutation>)> {
    let mut out = Vec::new();
    for (suite, [s, _]) in w.sessions.iter().enumerate() {
        let i = s
            .statement
            .records
            .iter()
            .zip(&s.opened)
            .position(|(_, o)| o.data == session::RESPONSE[2])
            .expect("the splice record");
        let m = vec![Mutation::Layout(plan::LayoutOp::DataLen(
            i,
            session::SPLICE_KEEP.len(),
        ))];
        for (reveal, attest) in [(Reveal::HideSecrets, None), (Reveal::Nothing, Some(16))] {
            out.push((
                Case {
                    name: format!("review splice {} {reveal:?} attest {attest:?}", s.suite),
                    seed: 0,
                    suite,
                    scenario: Scenario {
                        reveal,
                        attest,
                        reveal_unproven: false,
                        json: &[],
                    },
                    adaptive: true,
                    mutations: Vec::new(),
                },
                m.clone(),
            ));
        }
    }
    out
}

/// The review's critical finding through the harness: the verifier must
/// refuse. On main at 7417136 the TLS 1.2 cases are accepted with
/// `{"admin":true}` in the output and in the presentation.
#[test]
fn review_splice_is_refused() {
    let w = World::new(&[Fixture::Plain]);
    let mut sum = Summary::default();
    for (c, m) in review_cases(&w) {
        let (c, a) = build(&w, 0, Some((&c, &m)));
        let o = run_case(&w, &c, &a, Some(Backend::QuickSilver));
        if let Outcome::Accepted { received_text, .. } = &o {
            println!("{}: accepted, received.text = {received_text:?}", c.name);
        }
        sum.record(&w, &c, &o, Some(Backend::QuickSilver));
    }
    println!("{}", sum.report());
    assert_eq!(sum.accepted, 0, "{}", sum.report());
}

/// Honest sessions of every suite and scenario are accepted and pass the
/// oracle (the harness does not cry wolf), QuickSilver and the production
/// stack agree with the ideal party, and the oracle catches planted lies.
#[test]
fn honest_sessions_pass_and_the_oracle_catches_lies() {
    let w = World::new(&[Fixture::Plain]);
    let mut sum = Summary::default();
    for (suite, [s, _]) in w.sessions.iter().enumerate() {
        for (k, reveal) in [
            Reveal::All,
            Reveal::HideSecrets,
            Reveal::BodyOnly,
            Reveal::Nothing,
        ]
        .into_iter()
        .enumerate()
        {
            for attest in [None, Some(16)] {
                let c = Case {
                    name: format!("honest {} {reveal:?} {attest:?}", s.suite),
                    seed: suite as u64 * 100 + k as u64,
                    suite,
                    scenario: Scenario {
                        reveal,
                        attest,
                        reveal_unproven: false,
                        json: &[],
                    },
                    adaptive: true,
                    mutations: Vec::new(),
                };
                let (c, a) = build(&w, c.seed, Some((&c, &[])));
                let real = match (k, attest) {
                    (1, Some(_)) if suite % 3 == 0 => Some(Backend::Production),
                    (1, _) => Some(Backend::QuickSilver),
                    _ => None,
                };
                let o = run_case(&w, &c, &a, real);
                match &o {
                    Outcome::Accepted {
                        checked,
                        violations,
                        ..
                    } => {
                        assert!(violations.is_empty(), "{}: {violations:?}", c.name);
                        assert_eq!(checked.attestation, attest.is_some(), "{}", c.name);
                        assert_eq!(checked.presentation, attest.is_some(), "{}", c.name);
                        assert!(!checked.truncated);
                    }
                    other => panic!("{}: {other:?}", c.name),
                }
                sum.record(&w, &c, &o, real);
            }
        }
    }
    println!("{}", sum.report());

    // Planted lies: a byte of the output, a length, a signed leaf.
    let s = &w.sessions[3][0];
    let c = Case {
        name: "planted".into(),
        seed: 7,
        suite: 3,
        scenario: Scenario {
            reveal: Reveal::HideSecrets,
            attest: Some(16),
            reveal_unproven: false,
            json: &[],
        },
        adaptive: true,
        mutations: Vec::new(),
    };
    let (c, a) = build(&w, 7, Some((&c, &[])));
    let acc = run_attempt(&w, &c, &a, Backend::Ideal).unwrap();
    let mut checked = oracle::Checked::default();
    assert!(oracle::check(s, &a, &acc, &w.key, &mut checked).is_empty());
    let mut lie = acc.clone();
    let r = lie.output.received.revealed[0];
    lie.output.received.bytes[r.start] ^= 1;
    assert_eq!(oracle::check(s, &a, &lie, &w.key, &mut checked).len(), 1);
    let mut lie = acc.clone();
    lie.view.received.pop();
    assert_eq!(oracle::check(s, &a, &lie, &w.key, &mut checked).len(), 1);
    // A leaf whose proven hash is not over the true bytes.
    let mut lie = acc.clone();
    lie.proven.recv.commitments[0][0] ^= 1;
    assert_eq!(oracle::check(s, &a, &lie, &w.key, &mut checked).len(), 1);
    // The request's credentials are hidden, yet its end is fixed (their
    // bytes proven free of line ends); a line end said free is a lie.
    assert!(!acc.output.sent_crlf_free.is_empty());
    assert_eq!(
        webproof_disclosure::exchange::framed_request_ends(
            &acc.output.sent.view(),
            &acc.output.sent_crlf_free
        ),
        vec![s.request.len()]
    );
    let mut lie = acc.clone();
    let at = s.request.windows(2).position(|x| x == b"\r\n").unwrap();
    lie.output.sent_crlf_free = vec![webproof_proxy::Range::new(at, at + 2)];
    assert!(!oracle::check(s, &a, &lie, &w.key, &mut checked).is_empty());
}

/// A plan that claims a request's line ends free of CR and LF (so a hidden
/// header value could pass for one line while holding a whole request) is
/// refused by the proof, in every suite.
#[test]
fn line_ends_claimed_free_of_line_ends_are_refused() {
    use plan::RangeOp;
    let w = World::new(&[Fixture::Plain]);
    for (suite, [s, _]) in w.sessions.iter().enumerate() {
        let at = s.request.windows(2).position(|x| x == b"\r\n").unwrap();
        let c = Case {
            name: format!("crlf-free over a line end {}", s.suite),
            seed: 40 + suite as u64,
            suite,
            scenario: Scenario {
                reveal: Reveal::HideSecrets,
                attest: None,
                reveal_unproven: false,
                json: &[],
            },
            adaptive: false,
            // Only the line end, so the list stays well-formed and the
            // proof is what refuses it.
            mutations: vec![
                Mutation::CrlfFree(RangeOp::Clear),
                Mutation::CrlfFree(RangeOp::Push(webproof_proxy::Range::new(at, at + 2))),
            ],
        };
        let (c, a) = build(&w, c.seed, Some((&c, &c.mutations)));
        // One suite on the production stack, the rest on the ideal party.
        let real = (suite == 0).then_some(Backend::Production);
        match run_case(&w, &c, &a, real) {
            Outcome::Refused(r) => assert_eq!(r.stage, "proof", "{}: {r:?}", c.name),
            other => panic!("{}: {other:?}", c.name),
        }
    }
}

/// Review finding 2 through the harness: client records the server would
/// reject (TLS 1.2 AES-GCM: swapped or replayed; their explicit nonces make
/// them decrypt to genuine plaintext, out of order or repeated) must not
/// become "sent" data. On main at 7417136 they are accepted on the range
/// path (client tags are not checked), e.g. `sent.text` =
/// `"Cookie: session=████████████\r\n\r\nGET /account ..."`.
#[test]
fn client_records_the_server_rejects_are_refused() {
    let w = World::new(&[Fixture::Plain]);
    let mut sum = Summary::default();
    for (suite, [s, _]) in w.sessions.iter().enumerate() {
        let n = s.recorded.sent.len();
        for m in [
            plan::RecordOp::Swap(n - 2, n - 1),
            plan::RecordOp::Duplicate(n - 2),
        ] {
            let c = Case {
                name: format!("client records {m:?} {}", s.suite),
                seed: 0,
                suite,
                scenario: Scenario {
                    reveal: Reveal::HideSecrets,
                    attest: None,
                    reveal_unproven: true,
                    json: &[],
                },
                adaptive: true,
                mutations: Vec::new(),
            };
            let muts = [Mutation::ClientRecords(m)];
            let (c, a) = build(&w, 0, Some((&c, &muts)));
            let o = run_case(&w, &c, &a, None);
            if let Ok(acc) = run_attempt(&w, &c, &a, Backend::Ideal) {
                println!(
                    "{}: accepted, sent.text = {:?}",
                    c.name, acc.output.sent.text
                );
            }
            sum.record(&w, &c, &o, None);
        }
    }
    println!("{}", sum.report());
    assert!(sum.failures.is_empty(), "{}", sum.report());
}

/// Honest JSON sessions: both JSON fixtures, every suite, every honest
/// claim set with the real prover's `json:PATH` disclosure, and everything
/// revealed with claims, with and without an attestation. All accepted,
/// every verified path passes the JSON oracle, QuickSilver and the
/// production stack agree with the ideal party, and the JSON oracle
/// catches planted lies.
#[test]
fn honest_json_sessions_pass_and_the_oracle_catches_lies() {
    let w = World::new(&[Fixture::Json, Fixture::Chunked]);
    let mut sum = Summary::default();
    for (k, [s, _]) in w.sessions.iter().enumerate() {
        let sets = s.fixture.claim_sets();
        let suite = k % session::SUITES.len();
        for (j, &paths) in sets.iter().enumerate() {
            // Half the sets per suite, alternating (CI time): each set runs
            // on three suites of each fixture, both TLS versions.
            if (j + suite) % 2 == 1 {
                continue;
            }
            let reveal = if j == sets.len() - 1 {
                Reveal::All
            } else {
                Reveal::Skeleton
            };
            let attest = (j % 2 == 1).then_some(16);
            let c = Case {
                name: format!("honest JSON {} {reveal:?} {paths:?}", s.suite),
                seed: k as u64 * 100 + j as u64,
                suite: k,
                scenario: Scenario {
                    reveal,
                    attest,
                    reveal_unproven: false,
                    json: paths,
                },
                adaptive: true,
                mutations: Vec::new(),
            };
            let (c, a) = build(&w, c.seed, Some((&c, &[])));
            assert_eq!(a.plan.json.len(), paths.len());
            // Four sessions on a real engine (CI time): suites 0 and 3 of
            // `Json`, 2 and 5 of `Chunked`.
            let real = match (
                suite == j && (k / session::SUITES.len() + suite).is_multiple_of(3),
                suite,
            ) {
                (true, 0) => Some(Backend::Production),
                (true, _) => Some(Backend::QuickSilver),
                _ => None,
            };
            let o = run_case(&w, &c, &a, real);
            match &o {
                Outcome::Accepted {
                    checked,
                    violations,
                    ..
                } => {
                    assert!(violations.is_empty(), "{}: {violations:?}", c.name);
                    assert_eq!(checked.json, paths.len(), "{}", c.name);
                    assert_eq!(checked.attestation, attest.is_some(), "{}", c.name);
                }
                other => panic!("{}: {other:?}", c.name),
            }
            sum.record(&w, &c, &o, real);
        }
    }
    println!("{}", sum.report());
    let paths: usize = [Fixture::Json, Fixture::Chunked]
        .iter()
        .flat_map(|f| f.claim_sets().iter().map(|p| p.len()))
        .sum();
    // Each set on half the suites.
    assert_eq!(sum.json_paths, paths * session::SUITES.len() / 2);
    assert_eq!(sum.real_checked, 4);

    // Planted lies about a verified path.
    let s = &w.sessions[0][0];
    let c = Case {
        name: "planted JSON".into(),
        seed: 9,
        suite: 0,
        scenario: Scenario {
            reveal: Reveal::Skeleton,
            attest: None,
            reveal_unproven: false,
            json: &["items.1.amount"],
        },
        adaptive: true,
        mutations: Vec::new(),
    };
    let (c, a) = build(&w, 9, Some((&c, &[])));
    let acc = run_attempt(&w, &c, &a, Backend::Ideal).unwrap();
    assert_eq!(acc.output.json[0].value_text, "8");
    let truth = [s.request.clone(), s.response.clone()];
    oracle::json_lies_are_caught(s, &truth, &acc.output.json[0], acc.plan.json[0].body);
    // The `amount` of the other item, claimed at this path: caught.
    let mut lie = acc.clone();
    let other = s
        .response
        .windows(10)
        .position(|w| w == b"\"amount\":7")
        .unwrap()
        + 9;
    lie.output.json[0].value = webproof_proxy::disclosure::Range::new(other, other + 1);
    lie.output.json[0].value_text = "7".into();
    let mut checked = oracle::Checked::default();
    assert_eq!(oracle::check(s, &a, &lie, &w.key, &mut checked).len(), 1);
}

/// The skeleton attack through the harness: the prover hides `x","y` of
/// `"tags":["x","y\/z",true,null]` (so its view reads one string and three
/// elements), reveals `true`, and claims `user.tags.1` = `true` with the
/// hidden lists its own walk finds. The walk and the view accept it; the
/// byte classes (a quote among the hidden string bytes) must make the
/// proof fail, on the ideal party as on QuickSilver. An ideal party that
/// ignored byte classes would accept it and the JSON oracle would report a
/// violation.
#[test]
fn json_hidden_structure_is_refused() {
    use plan::RangeOp;
    use webproof_proxy::disclosure::Range;
    use webproof_proxy::Direction;
    let w = World::new(&[Fixture::Json]);
    let mut sum = Summary::default();
    for (k, [s, _]) in w.sessions.iter().enumerate() {
        let find = |needle: &[u8]| {
            let p = s
                .response
                .windows(needle.len())
                .position(|w| w == needle)
                .unwrap();
            Range::new(p, p + needle.len())
        };
        let hide = find(br#"x","y"#);
        let reveal = find(b"true");
        let c = Case {
            name: format!("JSON skeleton attack {}", s.suite),
            seed: 0,
            suite: k,
            scenario: Scenario {
                reveal: Reveal::Skeleton,
                attest: None,
                reveal_unproven: false,
                json: &["user.tags.1"],
            },
            adaptive: true,
            mutations: Vec::new(),
        };
        let muts = [
            Mutation::Ranges(Direction::Received, RangeOp::Push(reveal)),
            Mutation::Ranges(Direction::Received, RangeOp::Hide(hide)),
        ];
        let (c, a) = build(&w, 0, Some((&c, &muts)));
        // The cheater's claim reads `true` at index 1, a quote hidden in a string.
        let claim = &a.plan.json[0];
        assert_eq!(&s.response[claim.value.start..claim.value.end], b"true");
        assert!(claim
            .hidden_strings
            .iter()
            .any(|r| r.start <= hide.start + 1 && hide.start + 2 <= r.end));
        // Real engines on three suites (CI time): TLS 1.3 AES-128 on the
        // production stack, TLS 1.3 ChaCha20 and TLS 1.2 AES-256 on QuickSilver.
        let real = match k {
            0 => Some(Backend::Production),
            2 | 4 => Some(Backend::QuickSilver),
            _ => None,
        };
        let o = run_case(&w, &c, &a, real);
        match &o {
            Outcome::Refused(r) => assert_eq!(r.stage, "proof", "{}: {r:?}", c.name),
            other => panic!("{}: {other:?}", c.name),
        }
        sum.record(&w, &c, &o, real);
    }
    println!("{}", sum.report());
}

/// A body that ends with the connection, cut by the prover's `Close`: the
/// server sent `1000000` in two records (`1000`, `000`) and close_notify;
/// the prover reveals everything, cuts the last two records and claims the
/// whole body (`""`) is `1000`. The verifier must refuse the claim (the cut
/// shows only in `response_complete` and `server_records_after_cut`, which
/// a JSON consumer need not read). On main at 0a0064b it was accepted on
/// all six suites (fixed in json.rs).
#[test]
fn json_body_cut_by_close_is_refused() {
    let w = World::new(&[Fixture::Eof]);
    let mut sum = Summary::default();
    for (k, [s, _]) in w.sessions.iter().enumerate() {
        let n = s.recorded.received.len() as u32;
        let c = Case {
            name: format!("JSON body cut by Close {}", s.suite),
            seed: 0,
            suite: k,
            scenario: Scenario {
                reveal: Reveal::All,
                attest: None,
                reveal_unproven: false,
                json: &[],
            },
            adaptive: true,
            mutations: Vec::new(),
        };
        let body = s.response.len() - session::EOF_BODY.concat().len();
        let cut = webproof_proxy::disclosure::Range::new(body, body + session::EOF_BODY[0].len());
        let claim = webproof_proxy::json::JsonClaim {
            direction: webproof_proxy::Direction::Received,
            body: cut,
            path: String::new(),
            value: cut,
            hidden_strings: Vec::new(),
            hidden_tokens: Vec::new(),
        };
        let muts = [
            Mutation::Close(plan::CloseField::Received, n - 2),
            Mutation::Json(plan::JsonOp::Insert(0, claim)),
        ];
        let (c, a) = build(&w, 0, Some((&c, &muts)));
        let o = run_case(&w, &c, &a, None);
        match &o {
            Outcome::Refused(r) => assert!(
                r.stage == "conclude" && r.error.contains("ends with the connection"),
                "{}: {r:?}",
                c.name
            ),
            other => panic!("{}: {other:?}", c.name),
        }
        sum.record(&w, &c, &o, None);
    }
    println!("{}", sum.report());
}

//! The prover's messages, honest and mutated.
//!
//! Everything that knows the shape of the prover's messages is here: the
//! honest `Close` and `ProverMsg::Proof` (its `ZkPlan` and TLS 1.3
//! handshake secrets), the adaptive cheating prover that re-derives the
//! dependent fields after a structural change, and the [`Mutation`]s, one
//! enum per message field. When the plan changes shape, this module
//! changes.
//!
//! A mutated session is built in three phases:
//! 1. structural mutations: the client records the prover sends through the
//!    relay, the `Close` counts, then the record layouts (which an adaptive
//!    prover first derives for the transcript the verifier keeps);
//! 2. an adaptive prover then derives what depends on them, as the
//!    review's attacker did: the disclosure (the scenario's choice, over the
//!    stream the layouts claim) and the transcript commitments (over that
//!    claimed stream, so its attestation bundle matches);
//! 3. field mutations: disclosure ranges (after which an adaptive prover
//!    re-walks its JSON claims on the view it now shows), the JSON claims,
//!    the client verify_data, the committed leaves, the handshake secrets,
//!    the witness.
//!
//! The prover then proves the verifier's statement with its witness.

use super::session::{read_records, Fixture, ReadRecord, Session, COOKIE, REQUEST, SECRET_HEADER};
use rand::Rng;
use webproof_attestation::{
    CommitPlan, CommitmentSeed, Direction as ADir, LeafRange, Transcript as ATranscript,
    TranscriptCommitment,
};
use webproof_proxy::disclosure::{normalize, Disclosure, Range};
use webproof_proxy::json::{self, JsonClaim};
use webproof_proxy::protocol::{self, ProofPayload, ProverMsg, RelayFrame};
use webproof_proxy::statement::PublicInputs;
use webproof_proxy::verify::HandshakeSecrets;
use webproof_proxy::zk::{self, RecordLayout, ZkPlan};
use webproof_proxy::{Direction, Recording, SessionSecret};
use webproof_tlsproof as tp;

/// What the honest prover discloses to the verifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reveal {
    /// Everything (both directions take the key path).
    All,
    /// All but the cookie value and the secret header value.
    HideSecrets,
    /// Nothing sent, only the response body.
    BodyOnly,
    /// Nothing (with an attestation: `--reveal none --attest`).
    Nothing,
    /// `--reveal json:PATH...` as the real prover computes it: the request
    /// but its cookie, the response head, the body's skeleton, the keys on
    /// the paths and the values.
    Skeleton,
}

/// The honest prover's choices for a session.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    pub reveal: Reveal,
    /// Commit to the transcript for an attestation, leaves of this size.
    pub attest: Option<usize>,
    /// An adaptive prover also reveals bytes the layouts claim that are not
    /// true application data (a cheater wants them shown).
    pub reveal_unproven: bool,
    /// Paths of the JSON claims (`json:PATH` items); empty: none.
    pub json: &'static [&'static str],
}

impl Scenario {
    /// A random scenario. For a JSON fixture, mostly the real prover's
    /// `json:PATH` disclosure with claims, sometimes everything revealed
    /// with claims, sometimes the plain scenarios without claims.
    pub fn random(rng: &mut impl Rng, fixture: Fixture) -> Self {
        let mut sc = Self::random_plain(rng);
        let sets = fixture.claim_sets();
        if !sets.is_empty() {
            match rng.gen_range(0..8) {
                0..=4 => sc.reveal = Reveal::Skeleton,
                5 => sc.reveal = Reveal::All,
                _ => return sc,
            }
            sc.json = sets[rng.gen_range(0..sets.len())];
        }
        sc
    }

    fn random_plain(rng: &mut impl Rng) -> Self {
        let reveal = [
            Reveal::All,
            Reveal::HideSecrets,
            Reveal::BodyOnly,
            Reveal::Nothing,
        ][rng.gen_range(0..4)];
        let attest = match rng.gen_range(0..3) {
            0 => None,
            1 => Some([1, 7, 16, 64][rng.gen_range(0..4)]),
            _ => Some(rng.gen_range(1..200)),
        };
        Scenario {
            reveal,
            attest,
            reveal_unproven: rng.gen_bool(0.5),
            json: &[],
        }
    }

    /// The `json:PATH` reveal items.
    pub fn json_items(&self) -> Vec<webproof_proxy::http::RevealItem> {
        let items: Vec<String> = self.json.iter().map(|p| format!("json:{p}")).collect();
        webproof_proxy::http::parse_items(&items).expect("the harness's JSON paths parse")
    }

    /// Which bytes of the honest stream of `d` the prover reveals.
    fn mask(&self, s: &Session, d: Direction) -> Vec<bool> {
        let data = s.truth(d);
        let find = |needle: &[u8]| {
            data.windows(needle.len())
                .position(|w| w == needle)
                .map(|p| p..p + needle.len())
        };
        let mut m = vec![false; data.len()];
        match (self.reveal, d) {
            (Reveal::All, _) => m.fill(true),
            (Reveal::HideSecrets, _) => {
                m.fill(true);
                let secret = if d == Direction::Sent {
                    COOKIE
                } else {
                    SECRET_HEADER
                };
                for i in find(secret).expect("the secret is in the data") {
                    m[i] = false;
                }
            }
            (Reveal::BodyOnly, Direction::Received) => {
                let body = find(b"\r\n\r\n").expect("a header end").end;
                m[body..].fill(true);
            }
            (Reveal::BodyOnly, Direction::Sent) | (Reveal::Nothing, _) => {}
            (Reveal::Skeleton, _) => {
                let d_all = webproof_proxy::http::disclosure_from_items(
                    &self.json_items(),
                    &s.request,
                    &s.response,
                )
                .expect("the honest JSON disclosure");
                for r in d_all.ranges(d) {
                    m[r.start..r.end].fill(true);
                }
            }
        }
        m
    }
}

/// Everything a (cheating) prover sends and proves with.
#[derive(Clone, Debug)]
pub struct Attempt {
    /// What the relay recorded: the prover chose the client records.
    pub recorded: Recording,
    /// The `Close` counts.
    pub close: (u32, u32),
    pub plan: ZkPlan,
    pub handshake_secrets: Option<HandshakeSecrets>,
    /// The session secret the prover commits to.
    pub secret: Vec<u8>,
    /// The commitment seed (the blinders follow from it).
    pub seed: [u8; 32],
    /// Blinder bits flipped by a cheating prover: `(leaf, byte, mask)`.
    pub blinder_flips: Vec<(usize, usize, u8)>,
    /// The application data the prover claims each way (what its
    /// attestation bundle holds).
    pub claimed: [Vec<u8>; 2],
    /// Whether the plan declares a layout for every record (else, as for
    /// TLS 1.2 once the verifier computes those layouts itself, the records
    /// without one are read as they are).
    pub layout_per_record: bool,
}

impl Attempt {
    /// The `Close` frame.
    pub fn close_frame(&self) -> Vec<u8> {
        RelayFrame::Close {
            sent: self.close.0,
            received: self.close.1,
        }
        .encode()
    }

    /// The `Proof` message (JSON, as sent).
    pub fn proof_message(&self) -> Vec<u8> {
        protocol::encode(&ProverMsg::Proof {
            payload: ProofPayload::Zk {
                plan: self.plan.clone(),
                handshake_secrets: self.handshake_secrets.clone(),
            },
        })
    }

    /// The blinder of each committed leaf, in the plan's order.
    pub fn blinders(&self) -> Vec<[u8; 16]> {
        let seed = CommitmentSeed::from_bytes(self.seed);
        let mut out: Vec<[u8; 16]> = self
            .plan
            .commitments
            .iter()
            .map(|l| seed.blinder(l.direction, l.start, l.end))
            .collect();
        for &(leaf, byte, mask) in &self.blinder_flips {
            if let Some(b) = out.get_mut(leaf) {
                b[byte % 16] ^= mask;
            }
        }
        out
    }

    /// The witness of the proof: the secret and the blinders.
    pub fn witness(&self, tls13: bool) -> tp::Witness {
        let w = if tls13 {
            SessionSecret::Tls13 {
                handshake_secret: self.secret.clone(),
            }
        } else {
            SessionSecret::Tls12 {
                master_secret: self.secret.clone(),
            }
        };
        zk::witness_with_blinders(&w, &self.plan, &self.blinders()).expect("one blinder per leaf")
    }

    /// The prover's commitment to its claimed transcript, if its leaves are
    /// a valid layout of it (what `AttestationBundle::accept` needs).
    pub fn commitment(&self) -> Option<(ATranscript, TranscriptCommitment)> {
        let t = ATranscript::new(self.claimed[0].clone(), self.claimed[1].clone());
        let c = TranscriptCommitment::with_layout(
            &t,
            self.plan.commitments.clone(),
            CommitmentSeed::from_bytes(self.seed),
        )
        .ok()?;
        Some((t, c))
    }
}

/// One mutation of one field of one prover message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// `RelayFrame::Close`.
    Close(CloseField, u32),
    /// The client records the prover sent through the relay.
    ClientRecords(RecordOp),
    /// `ZkPlan::layouts`.
    Layout(LayoutOp),
    /// `ZkPlan::disclosure.sent` / `.received`.
    Ranges(Direction, RangeOp),
    /// `ZkPlan::sent_crlf_free`.
    CrlfFree(RangeOp),
    /// `ZkPlan::json`.
    Json(JsonOp),
    /// `ZkPlan::client_verify_data`.
    VerifyData(BytesOp),
    /// `ZkPlan::commitments`.
    Leaves(LeafOp),
    /// `ProofPayload::Zk::handshake_secrets`.
    Secrets(SecretsOp),
    /// The witness the cheating prover commits to.
    SessionSecret(WitnessOp),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseField {
    Sent,
    Received,
}

/// On the recorded client records (indices into `Recording::sent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordOp {
    Swap(usize, usize),
    Duplicate(usize),
    Drop(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutOp {
    DataLen(usize, usize),
    ContentType(usize, u8),
    Swap(usize, usize),
    Duplicate(usize),
    Drop(usize),
    Insert(usize, RecordLayout),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangeOp {
    Push(Range),
    Set(usize, Range),
    Duplicate(usize),
    Drop(usize),
    /// Out of order.
    Reverse,
    Clear,
    /// Hide these bytes (a hole punched in the disclosure): aimed at the
    /// JSON skeleton (a quote, comma, colon, brace) and the HTTP framing.
    Hide(Range),
}

/// Which hidden list of a JSON claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hidden {
    Strings,
    Tokens,
}

/// On `ZkPlan::json` (claim indices wrap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonOp {
    /// The other direction.
    Direction(usize),
    Body(usize, Range),
    /// Another path; with `true`, an adaptive prover then re-walks its own
    /// view for the value and hidden bytes of that path (when it can).
    Path(usize, String, bool),
    Value(usize, Range),
    Hidden(usize, Hidden, RangeOp),
    /// A hidden range moved to the other list.
    Move(usize, Hidden, usize),
    Duplicate(usize),
    Drop(usize),
    Swap(usize, usize),
    Clear,
    Insert(usize, JsonClaim),
    /// The claims repeated to this many.
    Repeat(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BytesOp {
    Resize(usize),
    Flip(usize, u8),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeafOp {
    Set(usize, u32, u32),
    FlipDirection(usize),
    Swap(usize, usize),
    Duplicate(usize),
    Drop(usize),
    Insert(usize, LeafRange),
    Clear,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretsOp {
    /// None in place of the secrets.
    Remove,
    /// Secrets where none belong (TLS 1.2), of this length.
    Invent(usize),
    /// Flip bits of the client (`false`) or server (`true`) secret.
    Flip(bool, usize, u8),
    Resize(bool, usize),
    /// Client and server secrets exchanged.
    Swap,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WitnessOp {
    Flip(usize, u8),
    /// The other session's secret (same suite).
    Other,
    Resize(usize),
    /// `(leaf, byte, mask)`.
    FlipBlinder(usize, usize, u8),
}

/// The kinds of mutation, for generation and counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Close,
    ClientRecords,
    Layout,
    Ranges,
    CrlfFree,
    Json,
    VerifyData,
    Leaves,
    Secrets,
    SessionSecret,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Close,
        Kind::ClientRecords,
        Kind::Layout,
        Kind::Ranges,
        Kind::CrlfFree,
        Kind::Json,
        Kind::VerifyData,
        Kind::Leaves,
        Kind::Secrets,
        Kind::SessionSecret,
    ];

    /// Random kinds, weighted towards the plan (where the review's bug is);
    /// in a JSON session, 40% JSON claims (and more disclosure holes).
    pub fn random(rng: &mut impl Rng, json: bool) -> Kind {
        if json && rng.gen_bool(0.4) {
            return Kind::Json;
        }
        match rng.gen_range(0..20) {
            0 | 1 => Kind::Close,
            2 | 3 => Kind::ClientRecords,
            4..=8 => Kind::Layout,
            9 => Kind::CrlfFree,
            10..=13 => Kind::Ranges,
            14 => Kind::VerifyData,
            15 | 16 => Kind::Leaves,
            17 => Kind::Secrets,
            _ => Kind::SessionSecret,
        }
    }

    fn structural(self) -> bool {
        matches!(self, Kind::Close | Kind::ClientRecords | Kind::Layout)
    }
}

impl Mutation {
    pub fn kind(&self) -> Kind {
        match self {
            Mutation::Close(..) => Kind::Close,
            Mutation::ClientRecords(_) => Kind::ClientRecords,
            Mutation::Layout(_) => Kind::Layout,
            Mutation::Ranges(..) => Kind::Ranges,
            Mutation::CrlfFree(_) => Kind::CrlfFree,
            Mutation::Json(_) => Kind::Json,
            Mutation::VerifyData(_) => Kind::VerifyData,
            Mutation::Leaves(_) => Kind::Leaves,
            Mutation::Secrets(_) => Kind::Secrets,
            Mutation::SessionSecret(_) => Kind::SessionSecret,
        }
    }
}

/// Where a session's mutations come from.
pub enum Source<'a, R: Rng> {
    /// Generate one of each kind (in phase order), from the state at hand.
    Random(&'a mut R, Vec<Kind>),
    /// Apply these (a named case or a replay).
    Fixed(&'a [Mutation]),
}

/// The honest messages and witness for scenario `sc`.
pub fn honest(s: &Session, sc: &Scenario, seed: [u8; 32]) -> Attempt {
    let disclosure = Disclosure {
        sent: runs(&sc.mask(s, Direction::Sent)),
        received: runs(&sc.mask(s, Direction::Received)),
    };
    let mut plan = zk::plan(&s.statement, &s.opened, &disclosure, &s.witness).unwrap();
    let layout_per_record = plan.layouts.len() == s.statement.records.len();
    let claimed = [s.request.clone(), s.response.clone()];
    plan.commitments = commit(sc, &claimed, &disclosure, seed);
    // JSON claims, built by the real prover's builder (`prover.rs`).
    plan.json =
        json::claims_from_items(&sc.json_items(), &s.request, &s.response, &plan.disclosure)
            .expect("honest JSON claims");
    // The hidden request-head bytes, as the real prover lists them.
    plan.sent_crlf_free =
        webproof_disclosure::exchange::hidden_head_bytes(&s.request, &plan.disclosure.sent);
    let handshake_secrets = match &s.statement.public {
        PublicInputs::Tls13 {
            client_hs_traffic,
            server_hs_traffic,
            ..
        } => Some(HandshakeSecrets {
            client: client_hs_traffic.clone(),
            server: server_hs_traffic.clone(),
        }),
        PublicInputs::Tls12 { .. } => None,
    };
    let secret = match &s.witness {
        SessionSecret::Tls13 { handshake_secret } => handshake_secret.clone(),
        SessionSecret::Tls12 { master_secret } => master_secret.clone(),
    };
    Attempt {
        close: (
            s.recorded.sent.len() as u32,
            s.recorded.received.len() as u32,
        ),
        recorded: s.recorded.clone(),
        plan,
        handshake_secrets,
        secret,
        seed,
        blinder_flips: Vec::new(),
        claimed,
        layout_per_record,
    }
}

/// Build a mutated attempt: honest messages for `sc`, then the mutations
/// of `source` in phase order. Returns the attempt and the mutations
/// applied (concrete, for the report and replays).
pub fn mutated<R: Rng>(
    s: &Session,
    other: &Session,
    sc: &Scenario,
    adaptive: bool,
    seed: [u8; 32],
    source: Source<'_, R>,
) -> (Attempt, Vec<Mutation>) {
    let mut a = honest(s, sc, seed);
    let mut applied = Vec::new();
    let (mut rng, mut kinds, fixed) = match source {
        Source::Random(rng, kinds) => (Some(rng), kinds, Vec::new()),
        Source::Fixed(m) => (None, Vec::new(), m.to_vec()),
    };
    kinds.sort();
    let mut fixed_sorted = fixed.clone();
    fixed_sorted.sort_by_key(|m| m.kind());
    let mut next = |a: &Attempt, k: Kind| -> Vec<Mutation> {
        match rng.as_deref_mut() {
            Some(rng) => kinds
                .iter()
                .filter(|&&kk| kk == k)
                .map(|_| generate(rng, s, a, k))
                .collect(),
            None => fixed_sorted
                .iter()
                .filter(|m| m.kind() == k)
                .cloned()
                .collect(),
        }
    };
    // Phase 1: the transcript and the cut, then the layouts.
    for k in [Kind::ClientRecords, Kind::Close] {
        for m in next(&a, k) {
            apply(&mut a, s, other, &m, adaptive);
            applied.push(m);
        }
    }
    if adaptive && (a.recorded != s.recorded || a.close != honest_close(s)) {
        derive_layouts(&mut a, s);
    }
    for m in next(&a, Kind::Layout) {
        apply(&mut a, s, other, &m, adaptive);
        applied.push(m);
    }
    // Phase 2: the adaptive prover derives the disclosure and commitments
    // over the stream its layouts claim.
    if adaptive && applied.iter().any(|m| m.kind().structural()) {
        adapt(&mut a, s, sc);
    }
    // Phase 3: the other fields. After disclosure mutations an adaptive
    // prover re-walks its JSON claims on the view it now shows (a hidden
    // quote or comma makes the walk see another structure).
    for k in Kind::ALL.into_iter().filter(|k| !k.structural()) {
        let ms = next(&a, k);
        let any = !ms.is_empty();
        for m in ms {
            apply(&mut a, s, other, &m, adaptive);
            applied.push(m);
        }
        if k == Kind::Ranges && any && adaptive {
            rewalk(&mut a);
        }
    }
    (a, applied)
}

fn honest_close(s: &Session) -> (u32, u32) {
    (
        s.recorded.sent.len() as u32,
        s.recorded.received.len() as u32,
    )
}

/// The transcript the verifier keeps after the prover's `Close`.
pub fn cut(a: &Attempt) -> Option<Recording> {
    a.recorded
        .clone()
        .cut(a.close.0 as usize, a.close.1 as usize)
        .ok()
}

/// The layout an honest prover declares for a record it reads as `r`.
fn layout_of(tls13: bool, r: &ReadRecord) -> RecordLayout {
    if tls13 {
        // Content type: the last non-zero byte; zero padding after it.
        match r.raw.iter().rposition(|&b| b != 0) {
            Some(i) => RecordLayout {
                data_len: i,
                content_type: r.raw[i],
            },
            None => RecordLayout {
                data_len: 0,
                content_type: 0,
            },
        }
    } else {
        RecordLayout {
            data_len: r.raw.len(),
            content_type: r.outer_type,
        }
    }
}

/// The adaptive prover's layouts for the transcript the verifier keeps.
fn derive_layouts(a: &mut Attempt, s: &Session) {
    if !a.layout_per_record {
        return;
    }
    let Some(records) = cut(a).and_then(|t| read_records(s, &t)) else {
        return;
    };
    a.plan.layouts = records.iter().map(|r| layout_of(s.tls13(), r)).collect();
}

/// Per direction: each claimed byte, with its offset in the true stream if
/// it is true application data at that offset.
type Streams = [Vec<(u8, Option<usize>)>; 2];

/// The stream each direction's layouts claim over the records the verifier
/// keeps, each byte with its offset in the true stream if it is true
/// application data at that offset.
fn claimed_streams(a: &Attempt, s: &Session) -> Option<Streams> {
    let records = read_records(s, &cut(a)?)?;
    let mut out = [Vec::new(), Vec::new()];
    // Per direction: the true stream's offset of the next authentic record,
    // until the first record that does not authenticate.
    let mut true_at = [Some(0usize), Some(0usize)];
    for (i, r) in records.iter().enumerate() {
        let d = r.direction as usize;
        let truth: Option<(usize, usize)> = match (&r.authentic, true_at[d]) {
            (Some((23, data)), Some(at)) => {
                true_at[d] = Some(at + data.len());
                Some((at, data.len()))
            }
            (Some(_), Some(_)) => None,
            (None, _) => {
                true_at[d] = None;
                None
            }
            (_, None) => None,
        };
        let layout = if a.layout_per_record {
            match a.plan.layouts.get(i) {
                Some(&l) => l,
                None => continue,
            }
        } else {
            layout_of(s.tls13(), r)
        };
        if layout.content_type != 23 {
            continue;
        }
        let n = layout.data_len.min(r.raw.len());
        for p in 0..n {
            let source = truth.and_then(|(at, len)| (p < len).then_some(at + p));
            out[d].push((r.raw[p], source));
        }
    }
    Some(out)
}

/// Phase 2 of an adaptive prover.
fn adapt(a: &mut Attempt, s: &Session, sc: &Scenario) {
    let Some(streams) = claimed_streams(a, s) else {
        return;
    };
    let mut disclosure = Disclosure::default();
    for d in [Direction::Sent, Direction::Received] {
        let mask = sc.mask(s, d);
        let stream = &streams[d as usize];
        let mut reveal: Vec<bool> = stream
            .iter()
            .map(|&(_, source)| match source {
                Some(t) => mask.get(t).copied().unwrap_or(false),
                None => sc.reveal_unproven,
            })
            .collect();
        // The prover still hides its secrets wherever its stream has them.
        if sc.reveal == Reveal::HideSecrets {
            let secret = if d == Direction::Sent {
                COOKIE
            } else {
                SECRET_HEADER
            };
            let bytes: Vec<u8> = stream.iter().map(|&(b, _)| b).collect();
            for (i, w) in bytes.windows(secret.len()).enumerate() {
                if w == secret {
                    reveal[i..i + secret.len()].fill(false);
                }
            }
        }
        match d {
            Direction::Sent => disclosure.sent = runs(&reveal),
            Direction::Received => disclosure.received = runs(&reveal),
        }
    }
    a.claimed = streams.map(|v| v.into_iter().map(|(b, _)| b).collect());
    a.plan.disclosure = disclosure.clone();
    a.plan.commitments = commit(sc, &a.claimed, &disclosure, a.seed);
    // The JSON claims over the claimed stream: the real prover's builder
    // if it works there, else the cheater walks each path itself.
    match json::claims_from_items(&sc.json_items(), &a.claimed[0], &a.claimed[1], &disclosure) {
        Ok(c) => a.plan.json = c,
        Err(_) => rewalk(a),
    }
}

/// The view the verifier would get of `d` if every disclosed byte is the
/// claimed stream's.
fn view(a: &Attempt, d: Direction) -> Vec<Option<u8>> {
    let data = &a.claimed[d as usize];
    let mut v = vec![None; data.len()];
    for r in a.plan.disclosure.ranges(d) {
        for i in r.start..r.end.min(data.len()) {
            v[i] = Some(data[i]);
        }
    }
    v
}

/// Walk `c.path` on the prover's view of the claimed stream, as the
/// verifier will: the value and hidden bytes that make the claim match the
/// view, if the walk succeeds (the body the claim names, else the first).
fn walked(a: &Attempt, c: &JsonClaim) -> Option<JsonClaim> {
    let v = view(a, c.direction);
    let bodies = json::message_bodies(&v, c.direction);
    let body = bodies.iter().find(|b| b.raw == c.body).or(bodies.first())?;
    let w = json::walk(&v, body, &c.path).ok()?;
    Some(JsonClaim {
        direction: c.direction,
        body: body.raw,
        path: c.path.clone(),
        value: w.value,
        hidden_strings: w.hidden_strings,
        hidden_tokens: w.hidden_tokens,
    })
}

/// The adaptive prover's claims for the view it now shows.
fn rewalk(a: &mut Attempt) {
    let new: Vec<JsonClaim> = a
        .plan
        .json
        .iter()
        .map(|c| walked(a, c).unwrap_or_else(|| c.clone()))
        .collect();
    a.plan.json = new;
}

/// The runs of `true` as ranges.
fn runs(mask: &[bool]) -> Vec<Range> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < mask.len() {
        if !mask[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < mask.len() && mask[i] {
            i += 1;
        }
        out.push(Range::new(start, i));
    }
    normalize(out)
}

/// The leaves the prover commits to: chunks of the scenario's size, the
/// disclosed ranges as leaves of their own.
fn commit(sc: &Scenario, data: &[Vec<u8>; 2], d: &Disclosure, seed: [u8; 32]) -> Vec<LeafRange> {
    let Some(chunk) = sc.attest else {
        return Vec::new();
    };
    let mut plan = CommitPlan::new().with_chunk_len(chunk).unwrap();
    for r in &d.sent {
        plan = plan.range(ADir::Sent, r.start..r.end);
    }
    for r in &d.received {
        plan = plan.range(ADir::Received, r.start..r.end);
    }
    let t = ATranscript::new(data[0].clone(), data[1].clone());
    match TranscriptCommitment::new(&t, &plan, CommitmentSeed::from_bytes(seed)) {
        Ok(c) => c.leaves().to_vec(),
        Err(_) => Vec::new(),
    }
}

/// A boundary value around `len` (or anything).
fn boundary(rng: &mut impl Rng, len: usize) -> usize {
    match rng.gen_range(0..10) {
        0 => 0,
        1 => 1,
        2 => len.saturating_sub(1),
        3 => len,
        4 => len + 1,
        5 => len / 2,
        6 => usize::MAX,
        7 => usize::MAX - rng.gen_range(0..4),
        8 => rng.gen_range(0..=len.max(1)),
        _ => len.saturating_sub(rng.gen_range(1..16)),
    }
}

fn boundary_u32(rng: &mut impl Rng, len: u32) -> u32 {
    match rng.gen_range(0..8) {
        0 => 0,
        1 => len.saturating_sub(1),
        2 => len + 1,
        3 => len.saturating_sub(2),
        4 => u32::MAX,
        5 => len / 2,
        6 => rng.gen_range(0..=len.max(1)),
        _ => len.saturating_sub(rng.gen_range(1..8)),
    }
}

fn boundary_range(rng: &mut impl Rng, len: usize) -> Range {
    let a = boundary(rng, len);
    let b = match rng.gen_range(0..4) {
        0 => a.saturating_add(1),
        1 => boundary(rng, len),
        2 => a.saturating_add(rng.gen_range(0..40)),
        _ => a,
    };
    Range::new(a, b)
}

/// An index of `len` elements, `len > 0`.
fn index(rng: &mut impl Rng, len: usize) -> usize {
    rng.gen_range(0..len)
}

/// Indices of the layouts of application-data records.
fn app_layouts(a: &Attempt) -> Vec<usize> {
    (0..a.plan.layouts.len())
        .filter(|&i| a.plan.layouts[i].content_type == 23)
        .collect()
}

fn app_len(a: &Attempt, d: Direction) -> usize {
    a.claimed[d as usize].len()
}

/// A concrete mutation of kind `k` for the attempt at hand.
fn generate(rng: &mut impl Rng, s: &Session, a: &Attempt, k: Kind) -> Mutation {
    match k {
        Kind::Close => {
            let field = if rng.gen_bool(0.3) {
                CloseField::Sent
            } else {
                CloseField::Received
            };
            let now = match field {
                CloseField::Sent => a.close.0,
                CloseField::Received => a.close.1,
            };
            Mutation::Close(field, boundary_u32(rng, now))
        }
        Kind::ClientRecords => {
            let n = a.recorded.sent.len();
            // Mostly the application records (the last ones).
            let first_app = n.saturating_sub(REQUEST.len());
            let pick = |rng: &mut _| {
                if rng_bool(rng, 0.8) {
                    rng_range(rng, first_app, n)
                } else {
                    rng_range(rng, 0, n)
                }
            };
            match rng.gen_range(0..3) {
                0 => {
                    let i = pick(rng);
                    let mut j = pick(rng);
                    if j == i {
                        j = (i + 1) % n;
                    }
                    Mutation::ClientRecords(RecordOp::Swap(i, j))
                }
                1 => Mutation::ClientRecords(RecordOp::Duplicate(pick(rng))),
                _ => Mutation::ClientRecords(RecordOp::Drop(pick(rng))),
            }
        }
        Kind::Layout => {
            let n = a.plan.layouts.len();
            let apps = app_layouts(a);
            let pick = |rng: &mut _| -> usize {
                if !apps.is_empty() && rng_bool(rng, 0.75) {
                    apps[rng_range(rng, 0, apps.len())]
                } else {
                    rng_range(rng, 0, n.max(1))
                }
            };
            let i = pick(rng);
            let cur = a.plan.layouts.get(i).copied().unwrap_or(RecordLayout {
                data_len: 0,
                content_type: 23,
            });
            match rng.gen_range(0..20) {
                0..=10 => Mutation::Layout(LayoutOp::DataLen(i, boundary(rng, cur.data_len))),
                11..=13 => Mutation::Layout(LayoutOp::ContentType(
                    i,
                    [0, 20, 21, 22, 23, 24, 255, rng.gen()][rng.gen_range(0..8)],
                )),
                14 | 15 => Mutation::Layout(LayoutOp::Swap(i, pick(rng))),
                16 => Mutation::Layout(LayoutOp::Duplicate(i)),
                17 => Mutation::Layout(LayoutOp::Drop(i)),
                _ => Mutation::Layout(LayoutOp::Insert(
                    rng.gen_range(0..=n),
                    RecordLayout {
                        data_len: boundary(rng, cur.data_len),
                        content_type: [23, 22, 21][rng.gen_range(0..3)],
                    },
                )),
            }
        }
        Kind::Ranges => {
            let d = if rng.gen_bool(0.4) {
                Direction::Sent
            } else {
                Direction::Received
            };
            let ranges = match d {
                Direction::Sent => &a.plan.disclosure.sent,
                Direction::Received => &a.plan.disclosure.received,
            };
            let len = app_len(a, d);
            let n = ranges.len();
            // In a JSON session, half the received-range mutations punch a
            // hole in the skeleton or the framing.
            if s.body.is_some() && d == Direction::Received && rng.gen_bool(0.5) {
                return Mutation::Ranges(d, RangeOp::Hide(skeleton_hole(rng, a)));
            }
            let op = match rng.gen_range(0..9) {
                _ if n == 0 => RangeOp::Push(boundary_range(rng, len)),
                0 | 1 => RangeOp::Push(boundary_range(rng, len)),
                2 | 3 => RangeOp::Set(index(rng, n), boundary_range(rng, len)),
                4 => {
                    // Overlapping an existing range.
                    let r = ranges[index(rng, n)];
                    RangeOp::Push(Range::new(
                        r.start.saturating_sub(rng.gen_range(0..3)),
                        r.start + rng.gen_range(1..=r.len().max(1) + 2),
                    ))
                }
                5 => RangeOp::Duplicate(index(rng, n)),
                6 => RangeOp::Drop(index(rng, n)),
                7 => RangeOp::Reverse,
                _ => RangeOp::Clear,
            };
            Mutation::Ranges(d, op)
        }
        Kind::CrlfFree => {
            // Claim line-end-free bytes that are not (the request's CRLFs),
            // move, drop or repeat the honest ones.
            let rs = &a.plan.sent_crlf_free;
            let len = app_len(a, Direction::Sent);
            let n = rs.len();
            let crlf = a.claimed[0]
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\r' || b == b'\n')
                .map(|(i, _)| i)
                .collect::<Vec<_>>();
            let op = match rng.gen_range(0..8) {
                0 | 1 if !crlf.is_empty() => {
                    let at = crlf[rng.gen_range(0..crlf.len())];
                    RangeOp::Push(Range::new(at.saturating_sub(rng.gen_range(0..4)), at + 1))
                }
                2 if n > 0 => {
                    let r = rs[index(rng, n)];
                    RangeOp::Set(index(rng, n), range_near(rng, r, len))
                }
                3 => RangeOp::Push(boundary_range(rng, len)),
                4 if n > 0 => RangeOp::Duplicate(index(rng, n)),
                5 if n > 0 => RangeOp::Drop(index(rng, n)),
                6 => RangeOp::Reverse,
                _ => RangeOp::Clear,
            };
            Mutation::CrlfFree(op)
        }
        Kind::Json => Mutation::Json(generate_json(rng, s, a)),
        Kind::VerifyData => {
            let n = a.plan.client_verify_data.len();
            if n == 0 || rng.gen_bool(0.3) {
                Mutation::VerifyData(BytesOp::Resize([0, 11, 13, 12, 32][rng.gen_range(0..5)]))
            } else {
                Mutation::VerifyData(BytesOp::Flip(index(rng, n), 1 << rng.gen_range(0..8)))
            }
        }
        Kind::Leaves => {
            let n = a.plan.commitments.len();
            let leaf = |rng: &mut _| {
                let d = if rng_bool(rng, 0.5) {
                    ADir::Sent
                } else {
                    ADir::Received
                };
                let len = a.claimed[d as usize].len() as u32;
                let start = boundary_u32(rng, len);
                LeafRange {
                    direction: d,
                    start,
                    end: start.saturating_add(rng_range(rng, 0, 40) as u32),
                }
            };
            let op = match rng.gen_range(0..8) {
                _ if n == 0 => LeafOp::Insert(0, leaf(rng)),
                0 | 1 => {
                    let i = index(rng, n);
                    let l = a.plan.commitments[i];
                    let len = a.claimed[l.direction as usize].len() as u32;
                    if rng.gen_bool(0.5) {
                        LeafOp::Set(i, boundary_u32(rng, l.start), l.end)
                    } else {
                        LeafOp::Set(i, l.start, boundary_u32(rng, len.max(l.end)))
                    }
                }
                2 => LeafOp::FlipDirection(index(rng, n)),
                3 => LeafOp::Swap(index(rng, n), index(rng, n)),
                4 => LeafOp::Duplicate(index(rng, n)),
                5 => LeafOp::Drop(index(rng, n)),
                6 => LeafOp::Insert(rng.gen_range(0..=n), leaf(rng)),
                _ => LeafOp::Clear,
            };
            Mutation::Leaves(op)
        }
        Kind::Secrets => {
            if a.handshake_secrets.is_none() {
                return Mutation::Secrets(SecretsOp::Invent([32, 48, 0][rng.gen_range(0..3)]));
            }
            let server = rng.gen_bool(0.5);
            Mutation::Secrets(match rng.gen_range(0..4) {
                0 => SecretsOp::Remove,
                1 => SecretsOp::Flip(server, rng.gen_range(0..48), 1 << rng.gen_range(0..8)),
                2 => SecretsOp::Resize(server, [0, 31, 33, 47, 49][rng.gen_range(0..5)]),
                _ => SecretsOp::Swap,
            })
        }
        Kind::SessionSecret => {
            let n = a.secret.len();
            let leaves = a.plan.commitments.len();
            Mutation::SessionSecret(match rng.gen_range(0..6) {
                _ if n == 0 => WitnessOp::Resize([32, 48][rng.gen_range(0..2)]),
                0 | 1 => WitnessOp::Flip(index(rng, n), 1 << rng.gen_range(0..8)),
                2 => WitnessOp::Other,
                3 => WitnessOp::Resize([0, n - 1, n + 1, 32, 48][rng.gen_range(0..5)]),
                _ if leaves == 0 => WitnessOp::Flip(index(rng, n), 1 << rng.gen_range(0..8)),
                _ => WitnessOp::FlipBlinder(
                    index(rng, leaves),
                    rng.gen_range(0..16),
                    1 << rng.gen_range(0..8),
                ),
            })
        }
    }
}

fn rng_bool(rng: &mut impl Rng, p: f64) -> bool {
    rng.gen_bool(p)
}

fn rng_range(rng: &mut impl Rng, lo: usize, hi: usize) -> usize {
    if hi <= lo {
        lo
    } else {
        rng.gen_range(lo..hi)
    }
}

fn ranges_mut(plan: &mut ZkPlan, d: Direction) -> &mut Vec<Range> {
    match d {
        Direction::Sent => &mut plan.disclosure.sent,
        Direction::Received => &mut plan.disclosure.received,
    }
}

/// Apply `m`. Indices out of bounds wrap (a fixed mutation replayed on
/// another suite's session still applies).
fn apply(a: &mut Attempt, s: &Session, other: &Session, m: &Mutation, adaptive: bool) {
    match m {
        Mutation::Close(CloseField::Sent, v) => a.close.0 = *v,
        Mutation::Close(CloseField::Received, v) => a.close.1 = *v,
        Mutation::ClientRecords(op) => {
            let recs = &mut a.recorded.sent;
            let n = recs.len();
            match *op {
                RecordOp::Swap(i, j) => recs.swap(wrap(i, n), wrap(j, n)),
                RecordOp::Duplicate(i) => {
                    let r = recs[wrap(i, n)].clone();
                    recs.insert(wrap(i, n) + 1, r);
                }
                RecordOp::Drop(i) => {
                    recs.remove(wrap(i, n));
                }
            }
            if adaptive {
                // The prover names the client records it sent.
                a.close.0 = a.recorded.sent.len() as u32;
            }
        }
        Mutation::Layout(op) => {
            if a.plan.layouts.is_empty() {
                // TLS 1.2 plans carry no layouts (the verifier computes
                // them); a cheating prover declares them anyway, as
                // protocol version 4 did, and then lies in them.
                a.plan.layouts = s
                    .statement
                    .records
                    .iter()
                    .zip(&s.opened)
                    .map(|(_, o)| RecordLayout {
                        data_len: o.data.len(),
                        content_type: o.content_type,
                    })
                    .collect();
            }
            let ls = &mut a.plan.layouts;
            let n = ls.len();
            match *op {
                LayoutOp::DataLen(i, v) if n > 0 => ls[wrap(i, n)].data_len = v,
                LayoutOp::ContentType(i, v) if n > 0 => ls[wrap(i, n)].content_type = v,
                LayoutOp::Swap(i, j) if n > 0 => ls.swap(wrap(i, n), wrap(j, n)),
                LayoutOp::Duplicate(i) if n > 0 => {
                    let l = ls[wrap(i, n)];
                    ls.insert(wrap(i, n) + 1, l);
                }
                LayoutOp::Drop(i) if n > 0 => {
                    ls.remove(wrap(i, n));
                }
                LayoutOp::Insert(i, l) => ls.insert(i.min(n), l),
                _ => {}
            }
        }
        Mutation::Ranges(d, op) => {
            let len = a.claimed[*d as usize].len();
            apply_ranges(ranges_mut(&mut a.plan, *d), op, len);
        }
        Mutation::CrlfFree(op) => {
            let len = a.claimed[0].len();
            apply_ranges(&mut a.plan.sent_crlf_free, op, len);
        }
        Mutation::Json(op) => apply_json(a, op, adaptive),
        Mutation::VerifyData(op) => {
            let vd = &mut a.plan.client_verify_data;
            match *op {
                BytesOp::Resize(len) => vd.resize(len, 0xa5),
                BytesOp::Flip(i, mask) if !vd.is_empty() => {
                    let n = vd.len();
                    vd[wrap(i, n)] ^= mask;
                }
                BytesOp::Flip(..) => {}
            }
        }
        Mutation::Leaves(op) => {
            let ls = &mut a.plan.commitments;
            let n = ls.len();
            match *op {
                LeafOp::Set(i, start, end) if n > 0 => {
                    let l = &mut ls[wrap(i, n)];
                    l.start = start;
                    l.end = end;
                }
                LeafOp::FlipDirection(i) if n > 0 => {
                    let l = &mut ls[wrap(i, n)];
                    l.direction = match l.direction {
                        ADir::Sent => ADir::Received,
                        ADir::Received => ADir::Sent,
                    };
                }
                LeafOp::Swap(i, j) if n > 0 => ls.swap(wrap(i, n), wrap(j, n)),
                LeafOp::Duplicate(i) if n > 0 => {
                    let l = ls[wrap(i, n)];
                    ls.insert(wrap(i, n) + 1, l);
                }
                LeafOp::Drop(i) if n > 0 => {
                    ls.remove(wrap(i, n));
                }
                LeafOp::Insert(i, l) => ls.insert(i.min(n), l),
                LeafOp::Clear => ls.clear(),
                _ => {}
            }
        }
        Mutation::Secrets(op) => match (op, a.handshake_secrets.as_mut()) {
            (SecretsOp::Remove, _) => a.handshake_secrets = None,
            (SecretsOp::Invent(len), _) => {
                a.handshake_secrets = Some(HandshakeSecrets {
                    client: vec![7; *len],
                    server: vec![9; *len],
                })
            }
            (SecretsOp::Flip(server, i, mask), Some(hs)) => {
                let v = if *server {
                    &mut hs.server
                } else {
                    &mut hs.client
                };
                if !v.is_empty() {
                    let n = v.len();
                    v[wrap(*i, n)] ^= mask;
                }
            }
            (SecretsOp::Resize(server, len), Some(hs)) => {
                let v = if *server {
                    &mut hs.server
                } else {
                    &mut hs.client
                };
                v.resize(*len, 0);
            }
            (SecretsOp::Swap, Some(hs)) => std::mem::swap(&mut hs.client, &mut hs.server),
            (_, None) => {}
        },
        Mutation::SessionSecret(op) => match *op {
            WitnessOp::Flip(i, mask) => {
                let n = a.secret.len();
                if n > 0 {
                    a.secret[wrap(i, n)] ^= mask;
                }
            }
            WitnessOp::Other => {
                assert_eq!(other.suite, s.suite);
                a.secret = match &other.witness {
                    SessionSecret::Tls13 { handshake_secret } => handshake_secret.clone(),
                    SessionSecret::Tls12 { master_secret } => master_secret.clone(),
                };
            }
            WitnessOp::Resize(len) => a.secret.resize(len, 0x5a),
            WitnessOp::FlipBlinder(leaf, byte, mask) => a.blinder_flips.push((leaf, byte, mask)),
        },
    }
}

fn wrap(i: usize, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        i % n
    }
}

/// Apply `op` to a list of ranges of a direction of `len` bytes.
fn apply_ranges(rs: &mut Vec<Range>, op: &RangeOp, len: usize) {
    let n = rs.len();
    match *op {
        RangeOp::Push(r) => rs.push(r),
        RangeOp::Set(i, r) if n > 0 => rs[wrap(i, n)] = r,
        RangeOp::Duplicate(i) if n > 0 => {
            let r = rs[wrap(i, n)];
            rs.insert(wrap(i, n) + 1, r);
        }
        RangeOp::Drop(i) if n > 0 => {
            rs.remove(wrap(i, n));
        }
        RangeOp::Reverse => rs.reverse(),
        RangeOp::Clear => rs.clear(),
        RangeOp::Hide(h) => {
            let mut d = Disclosure {
                sent: std::mem::take(rs),
                received: Vec::new(),
            };
            d.hide(Direction::Sent, h, len.max(h.end));
            *rs = d.sent;
        }
        _ => {}
    }
}

/// A hole in the received disclosure: mostly one structural byte of the
/// claimed body (`"`, `,`, `:`, a bracket or brace) or a run starting or
/// ending there, sometimes a byte of the head (the framing).
fn skeleton_hole(rng: &mut impl Rng, a: &Attempt) -> Range {
    let data = &a.claimed[Direction::Received as usize];
    let Some(body) = data
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
    else {
        return Range::new(0, 1);
    };
    let structural: Vec<usize> = (body..data.len())
        .filter(|&i| b"\"{}[],:".contains(&data[i]))
        .collect();
    if structural.is_empty() || rng.gen_bool(0.15) {
        let at = rng.gen_range(0..body);
        return Range::new(at, at + 1);
    }
    let at = structural[index(rng, structural.len())];
    match rng.gen_range(0..4) {
        0 | 1 => Range::new(at, at + 1),
        2 => Range::new(at, (at + rng.gen_range(2..24)).min(data.len())),
        _ => Range::new(at.saturating_sub(rng.gen_range(1..24)).max(body), at + 1),
    }
}

/// A value near `r`: boundaries of the direction (`len`), one off, shifted.
fn near(rng: &mut impl Rng, x: usize, len: usize) -> usize {
    match rng.gen_range(0..10) {
        0 => 0,
        1 => len.saturating_sub(1),
        2 => len,
        3 => len + 1,
        4 => usize::MAX,
        5 => x + 1,
        6 => x.saturating_sub(1),
        7 => x + rng.gen_range(2..20),
        8 => x.saturating_sub(rng.gen_range(2..20)),
        _ => usize::MAX - 1,
    }
}

/// A range near `r`: one end moved (shrunk or extended), both moved,
/// shifted, emptied or reversed.
fn range_near(rng: &mut impl Rng, r: Range, len: usize) -> Range {
    match rng.gen_range(0..6) {
        0 => Range::new(near(rng, r.start, len), r.end),
        1 => Range::new(r.start, near(rng, r.end, len)),
        2 => {
            let k = rng.gen_range(1..8);
            if rng.gen_bool(0.5) {
                Range::new(r.start + k, r.end + k)
            } else {
                Range::new(r.start.saturating_sub(k), r.end.saturating_sub(k))
            }
        }
        3 => Range::new(near(rng, r.start, len), near(rng, r.end, len)),
        4 => Range::new(r.start, r.start),
        _ => Range::new(r.end, r.start),
    }
}

/// Another path: from the fixture's pool (other keys, duplicated,
/// nonexistent, non-canonical), a prefix, an extension, another index,
/// empty, or a near miss.
fn other_path(rng: &mut impl Rng, s: &Session, cur: &str) -> String {
    let pool = s.fixture.path_pool();
    match rng.gen_range(0..9) {
        0..=2 => pool[index(rng, pool.len())].to_string(),
        3 => cur.rsplit_once('.').map_or("", |(p, _)| p).to_string(),
        4 => {
            let next = ["0", "1", "k", "amount", "x"][rng.gen_range(0..5)];
            if cur.is_empty() {
                next.to_string()
            } else {
                format!("{cur}.{next}")
            }
        }
        5 => {
            // Another index in place of the last numeric component.
            let mut parts: Vec<String> = cur.split('.').map(str::to_string).collect();
            let idx =
                ["0", "1", "2", "01", "-1", "18446744073709551616", "99"][rng.gen_range(0..7)];
            match parts.iter().rposition(|p| p.parse::<usize>().is_ok()) {
                Some(k) => parts[k] = idx.to_string(),
                None => parts.push(idx.to_string()),
            }
            parts.join(".")
        }
        6 => String::new(),
        7 => cur.to_uppercase(),
        _ => format!("{cur}{}", [".", "x", " ", "\\"][rng.gen_range(0..4)]),
    }
}

/// A claim the prover did not plan: a pool path walked on its own view
/// (so its hidden lists match), else on the fully revealed stream (true
/// value, hidden lists that do not match the view), else junk.
fn foreign_claim(rng: &mut impl Rng, s: &Session, a: &Attempt) -> JsonClaim {
    let pool = s.fixture.path_pool();
    let direction = if rng.gen_bool(0.1) {
        Direction::Sent
    } else {
        Direction::Received
    };
    let len = a.claimed[direction as usize].len();
    let junk = JsonClaim {
        direction,
        body: Range::new(len / 2, len),
        path: pool[index(rng, pool.len())].to_string(),
        value: Range::new(len.saturating_sub(4), len.saturating_sub(1)),
        hidden_strings: Vec::new(),
        hidden_tokens: Vec::new(),
    };
    if let Some(c) = walked(a, &junk) {
        return c;
    }
    let full: Vec<Option<u8>> = a.claimed[direction as usize]
        .iter()
        .map(|&b| Some(b))
        .collect();
    json::message_bodies(&full, direction)
        .first()
        .and_then(|b| json::walk(&full, b, &junk.path).ok().map(|w| (b.raw, w)))
        .map_or(junk.clone(), |(body, w)| JsonClaim {
            body,
            value: w.value,
            ..junk.clone()
        })
}

/// A mutation of `ZkPlan::json`.
fn generate_json(rng: &mut impl Rng, s: &Session, a: &Attempt) -> JsonOp {
    let cs = &a.plan.json;
    let n = cs.len();
    if n == 0 || rng.gen_bool(0.08) {
        return JsonOp::Insert(rng.gen_range(0..=n), foreign_claim(rng, s, a));
    }
    let i = index(rng, n);
    let c = &cs[i];
    let len = a.claimed[c.direction as usize].len();
    let which = if rng.gen_bool(0.5) {
        Hidden::Strings
    } else {
        Hidden::Tokens
    };
    let list = match which {
        Hidden::Strings => &c.hidden_strings,
        Hidden::Tokens => &c.hidden_tokens,
    };
    let m = list.len();
    match rng.gen_range(0..24) {
        0 => JsonOp::Direction(i),
        1 | 2 => JsonOp::Body(i, range_near(rng, c.body, len)),
        3..=7 => JsonOp::Path(i, other_path(rng, s, &c.path), rng.gen_bool(0.6)),
        8..=10 => JsonOp::Value(i, range_near(rng, c.value, len)),
        11..=16 => {
            let op = match rng.gen_range(0..9) {
                // A hidden range where there is none: over the value, a
                // key, a revealed byte of the body, or out of bounds.
                k if m == 0 || k == 0 => {
                    let at = match rng.gen_range(0..4) {
                        0 => c.value.start,
                        1 => rng_range(rng, c.body.start, c.body.end),
                        2 => c.body.end,
                        _ => near(rng, c.body.end, len),
                    };
                    RangeOp::Push(Range::new(at, at.saturating_add(rng.gen_range(1..4))))
                }
                1 => RangeOp::Drop(index(rng, m)),
                2 => RangeOp::Clear,
                3 | 4 => {
                    // Extended, shrunk or shifted.
                    let k = index(rng, m);
                    RangeOp::Set(k, range_near(rng, list[k], len))
                }
                5 => {
                    let r = list[index(rng, m)];
                    RangeOp::Push(Range::new(r.start + 1, r.end + 1))
                }
                6 => RangeOp::Reverse,
                7 => RangeOp::Duplicate(index(rng, m)),
                _ => {
                    // Split a range (a byte in the middle not listed).
                    let r = list[index(rng, m)];
                    let mid = r.start + r.len() / 2;
                    RangeOp::Hide(Range::new(mid, mid + 1))
                }
            };
            JsonOp::Hidden(i, which, op)
        }
        17 if m > 0 => JsonOp::Move(i, which, index(rng, m)),
        17 | 18 => JsonOp::Duplicate(i),
        19 => JsonOp::Drop(i),
        20 => JsonOp::Swap(i, index(rng, n)),
        21 => JsonOp::Clear,
        22 => JsonOp::Insert(rng.gen_range(0..=n), foreign_claim(rng, s, a)),
        _ => {
            JsonOp::Repeat([json::MAX_JSON_CLAIMS, json::MAX_JSON_CLAIMS + 1][rng.gen_range(0..2)])
        }
    }
}

/// Apply a mutation of `ZkPlan::json` (indices wrap).
fn apply_json(a: &mut Attempt, op: &JsonOp, adaptive: bool) {
    let n = a.plan.json.len();
    let cs = &mut a.plan.json;
    match op {
        JsonOp::Direction(i) if n > 0 => {
            let c = &mut cs[wrap(*i, n)];
            c.direction = match c.direction {
                Direction::Sent => Direction::Received,
                Direction::Received => Direction::Sent,
            };
        }
        JsonOp::Body(i, r) if n > 0 => cs[wrap(*i, n)].body = *r,
        JsonOp::Path(i, p, rewalk) if n > 0 => {
            let k = wrap(*i, n);
            cs[k].path = p.clone();
            if *rewalk && adaptive {
                if let Some(c) = walked(a, &a.plan.json[k]) {
                    a.plan.json[k] = c;
                }
            }
        }
        JsonOp::Value(i, r) if n > 0 => cs[wrap(*i, n)].value = *r,
        JsonOp::Hidden(i, h, op) if n > 0 => {
            let c = &mut cs[wrap(*i, n)];
            let len = a.claimed[c.direction as usize].len();
            let l = match h {
                Hidden::Strings => &mut c.hidden_strings,
                Hidden::Tokens => &mut c.hidden_tokens,
            };
            apply_ranges(l, op, len);
        }
        JsonOp::Move(i, h, j) if n > 0 => {
            let c = &mut cs[wrap(*i, n)];
            let (from, to) = match h {
                Hidden::Strings => (&mut c.hidden_strings, &mut c.hidden_tokens),
                Hidden::Tokens => (&mut c.hidden_tokens, &mut c.hidden_strings),
            };
            if !from.is_empty() {
                let r = from.remove(wrap(*j, from.len()));
                to.push(r);
                *to = normalize(std::mem::take(to));
            }
        }
        JsonOp::Duplicate(i) if n > 0 => {
            let c = cs[wrap(*i, n)].clone();
            cs.insert(wrap(*i, n) + 1, c);
        }
        JsonOp::Drop(i) if n > 0 => {
            cs.remove(wrap(*i, n));
        }
        JsonOp::Swap(i, j) if n > 0 => cs.swap(wrap(*i, n), wrap(*j, n)),
        JsonOp::Clear => cs.clear(),
        JsonOp::Insert(i, c) => cs.insert((*i).min(n), c.clone()),
        JsonOp::Repeat(k) if n > 0 => {
            let base = cs.clone();
            while cs.len() < *k {
                cs.push(base[cs.len() % base.len()].clone());
            }
        }
        _ => {}
    }
}

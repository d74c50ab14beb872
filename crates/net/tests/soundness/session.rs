//! Honest sessions with known bytes: real rustls TLS 1.3 and 1.2 sessions
//! in memory, the client behind the prover's instrumented provider, the
//! server with the fixture's certificates, recorded exactly as the
//! verifier's relay records them (every byte of both directions through a
//! [`Recorder`]).
//!
//! The server answers in several records, among them the review's splice
//! shape (`{"admin":false,"beta":` and `true}` in separate records) and a
//! header whose value the prover hides; the client sends its request in two
//! records, the cookie in the second. Two more fixtures answer with JSON
//! bodies for the JSON-path claims ([`Fixture`]): one with `Content-Length`,
//! one chunked, both split across several records inside strings, numbers
//! and chunk framing.

use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use webproof_net::provider::{instrumented_provider, take_shared_secret, CollectingKeyLog};
use webproof_net::FixtureCerts;
use webproof_proxy::statement::{AppKeys, OpenedRecord, SessionStatement};
use webproof_proxy::verify::{check_handshake, SecretsSource};
use webproof_proxy::{
    CipherSuite, Direction, Recorder, RecorderLimits, Recording, RootStore, SessionSecret,
    TlsVersion, VerifyConfig,
};

/// The six suites under test (the fixture's certificate is ECDSA).
pub const SUITES: [CipherSuite; 6] = [
    CipherSuite::TLS13_AES_128_GCM_SHA256,
    CipherSuite::TLS13_AES_256_GCM_SHA384,
    CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
];

/// The client's request, one record per part.
pub const REQUEST: [&[u8]; 2] = [
    b"GET /account HTTP/1.1\r\nHost: localhost\r\n",
    b"Cookie: session=c00kie-value\r\n\r\n",
];
/// The cookie value the prover hides.
pub const COOKIE: &[u8] = b"c00kie-value";

/// The server's response, one record per part.
pub const RESPONSE: [&[u8]; 4] = [
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n",
    b"X-Session: s3cr3t-token\r\nContent-Length: 27\r\nConnection: close\r\n\r\n",
    // The review's splice: drop `false,"beta":` and this reads {"admin":true}.
    b"{\"admin\":false,\"beta\":",
    b"true}",
];
/// The header value the prover hides.
pub const SECRET_HEADER: &[u8] = b"s3cr3t-token";
/// In `RESPONSE[2]`: what is left of it in the review's splice.
pub const SPLICE_KEEP: &[u8] = b"{\"admin\":";

/// What the server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixture {
    /// [`RESPONSE`]: the review's splice shape.
    Plain,
    /// [`JSON_BODY`] with `Content-Length`, split inside strings and numbers.
    Json,
    /// [`CHUNKED_BODY`], chunked (one chunk extension), the records split
    /// inside chunk-size lines and chunk data.
    Chunked,
    /// A body that ends with the connection (no `Content-Length`, not
    /// chunked): a top-level number split across two records, the shape a
    /// `Close` cut could shorten.
    Eof,
}

/// A JSON body with nested objects and arrays, escapes (`\"`, `\\`, `\/`,
/// `\u`, `\n`), whitespace, keys that look alike (`amount`, `Amount`,
/// `amount_due`, and `amount` in nested objects) and a real duplicate key
/// off the honest paths (`meta.k`).
pub const JSON_BODY: &[u8] = br#"{"user":{"name":"Ann \"Nan\" O\\Neil","age":41,"tags":["x","y\/z",true,null],"addr":{"city":"Z\u00fcrich","zip":"8001"}},
  "amount" : 125, "Amount":"1.25","amount_due":-0.5e+2,
  "items":[{"id":1,"amount":7},{"id":2,"amount":8,"note":"line\nbreak"}],"meta":{"k":1,"k":2},"empty":{},"list":[ ],"flag":false}"#;
/// Where the `Json` fixture's body is cut into records (after these).
const JSON_SPLITS: [&[u8]; 3] = [
    br#""name":"Ann \"N"#,
    br#""amount" : 12"#,
    br#"{"id":2,"am"#,
];

/// A top-level array, deep nesting, a long number and a duplicate key
/// written with an escape (`"dup"` and `"d\u0075p"`).
pub const CHUNKED_BODY: &[u8] = br#"[{"k":"v\"1","n":[1,2,[3,{"deep":"x"}]]},{"k":"w","n":{"a":{"b":{"c":true}}}},"s\\t\u0041r",12345678901234567890,{"dup":1,"d\u0075p":2},{"id":"0x\t"}]"#;

/// The `Eof` fixture's body, one record per part.
pub const EOF_BODY: [&[u8]; 2] = [b"1000", b"000"];

/// The honest claims' paths, one set per honest plan.
const JSON_CLAIMS: &[&[&str]] = &[
    &["user.age"],
    &["amount", "items.1.amount"],
    &["user.name", "user.tags.1"],
    &["user.addr", ""],
    &["flag", "empty", "list"],
    &["Amount", "amount_due", "user.addr.city"],
];
const CHUNKED_CLAIMS: &[&[&str]] = &[
    &["0.k"],
    &["0.n.2.1.deep", "1.n.a.b.c"],
    &["2", "3"],
    &["1"],
    &["0.n", ""],
    &["5.id", "4"],
];
/// Paths a cheating prover tries: other keys and indices, prefixes,
/// extensions, nonexistent, duplicated and non-canonical ones.
const JSON_POOL: &[&str] = &[
    "user.age",
    "user.name",
    "user.tags.1",
    "user.addr",
    "",
    "amount",
    "items.1.amount",
    "items.0.amount",
    "items.1.note",
    "flag",
    "empty",
    "list",
    "Amount",
    "amount_due",
    "user.addr.city",
    "meta.k",
    "meta",
    "items.2",
    "items.01",
    "user.tags.4",
    "amount.0",
    "user",
    "nope",
    "user.nope",
    "user.",
    ".user",
    "items.-1",
    "items.18446744073709551616",
    "user..age",
    "AMOUNT",
    "user.addr.zip.x",
    "user.tags",
    "list.0",
    "empty.x",
];
const CHUNKED_POOL: &[&str] = &[
    "0.k",
    "0.n.2.1.deep",
    "1.n.a.b.c",
    "2",
    "3",
    "1",
    "0.n",
    "",
    "5.id",
    "4",
    "4.dup",
    "6",
    "0.n.3",
    "0.n.2.1.deep.0",
    "00",
    "0.k.0",
    "0.K",
    "1.n.a.b",
    "0",
    "0.n.2",
    "-1",
    "k",
];

/// The raw body (chunk framing included) and its data (one range per
/// chunk), as the fixture built them: the oracle's truth, independent of
/// the verifier's parser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrueBody {
    pub raw: webproof_proxy::disclosure::Range,
    pub data: Vec<webproof_proxy::disclosure::Range>,
}

impl Fixture {
    pub const ALL: [Fixture; 4] = [
        Fixture::Plain,
        Fixture::Json,
        Fixture::Chunked,
        Fixture::Eof,
    ];

    /// The server's response, one record per part, and its JSON body.
    pub fn response(self) -> (Vec<Vec<u8>>, Option<TrueBody>) {
        use webproof_proxy::disclosure::Range;
        let cut = |body: &[u8], after: &[&[u8]]| -> Vec<Vec<u8>> {
            let mut at = vec![0];
            for a in after {
                let p = body.windows(a.len()).position(|w| w == *a).unwrap() + a.len();
                at.push(p);
            }
            at.push(body.len());
            at.windows(2).map(|w| body[w[0]..w[1]].to_vec()).collect()
        };
        match self {
            Fixture::Plain => (RESPONSE.map(<[u8]>::to_vec).to_vec(), None),
            Fixture::Json => {
                let mut parts = vec![
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n".to_vec(),
                    format!(
                        "X-Session: s3cr3t-token\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        JSON_BODY.len()
                    )
                    .into_bytes(),
                ];
                let head: usize = parts.iter().map(Vec::len).sum();
                parts.extend(cut(JSON_BODY, &JSON_SPLITS));
                let raw = Range::new(head, head + JSON_BODY.len());
                (
                    parts,
                    Some(TrueBody {
                        raw,
                        data: vec![raw],
                    }),
                )
            }
            Fixture::Chunked => {
                let head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Session: s3cr3t-token\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
                let mut data = Vec::new();
                let mut enc = Vec::new();
                let mut at = 0;
                for (i, n) in [19usize, 45, CHUNKED_BODY.len() - 64]
                    .into_iter()
                    .enumerate()
                {
                    let ext = if i == 1 { ";ext=1" } else { "" };
                    enc.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
                    let start = head.len() + enc.len();
                    data.push(Range::new(start, start + n));
                    enc.extend_from_slice(&CHUNKED_BODY[at..at + n]);
                    enc.extend_from_slice(b"\r\n");
                    at += n;
                }
                enc.extend_from_slice(b"0\r\n\r\n");
                let raw = Range::new(head.len(), head.len() + enc.len());
                // Records: the head in two, then the chunked data cut inside
                // the first chunk's data, the second size line and a chunk.
                let split = 40;
                let mut parts = vec![head[..split].to_vec(), head[split..].to_vec()];
                parts.extend(
                    [0, 9, 25, 27, 90, enc.len()]
                        .windows(2)
                        .map(|w| enc[w[0]..w[1]].to_vec()),
                );
                (parts, Some(TrueBody { raw, data }))
            }
            Fixture::Eof => {
                let head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Session: s3cr3t-token\r\nConnection: close\r\n\r\n";
                let raw = Range::new(head.len(), head.len() + EOF_BODY.concat().len());
                let mut parts = vec![head.to_vec()];
                parts.extend(EOF_BODY.iter().map(|p| p.to_vec()));
                (
                    parts,
                    Some(TrueBody {
                        raw,
                        data: vec![raw],
                    }),
                )
            }
        }
    }

    /// Path sets of the honest claims (empty: this fixture has none).
    pub fn claim_sets(self) -> &'static [&'static [&'static str]] {
        match self {
            Fixture::Plain => &[],
            Fixture::Json => JSON_CLAIMS,
            Fixture::Chunked => CHUNKED_CLAIMS,
            // The honest builder refuses a claim on this body (see json.rs).
            Fixture::Eof => &[],
        }
    }

    /// Paths a cheating prover tries.
    pub fn path_pool(self) -> &'static [&'static str] {
        match self {
            Fixture::Plain => &["admin", "beta", "", "admin.0", "gamma"],
            Fixture::Json => JSON_POOL,
            Fixture::Chunked => CHUNKED_POOL,
            Fixture::Eof => &["", "0", "a", "0.0"],
        }
    }
}

/// One honest session and everything true about it.
pub struct Session {
    pub suite: CipherSuite,
    pub fixture: Fixture,
    /// The JSON body of the response, where the fixture put it.
    pub body: Option<TrueBody>,
    /// Every record the relay recorded, before any cut.
    pub recorded: Recording,
    /// The session secret (TLS 1.3 HS, TLS 1.2 master secret).
    pub witness: SessionSecret,
    /// What the verifier checks the server against.
    pub cfg: VerifyConfig,
    /// The true application data the client sent.
    pub request: Vec<u8>,
    /// The true application data the server sent.
    pub response: Vec<u8>,
    /// The statement as the honest prover sees it.
    pub statement: SessionStatement,
    /// Every application-phase record, opened with its tag checked.
    pub opened: Vec<OpenedRecord>,
    /// The application traffic keys.
    pub keys: AppKeys,
}

impl Session {
    pub fn tls13(&self) -> bool {
        self.suite.version() == TlsVersion::Tls13
    }

    /// The true application data of a direction.
    pub fn truth(&self, d: Direction) -> &[u8] {
        match d {
            Direction::Sent => &self.request,
            Direction::Received => &self.response,
        }
    }
}

/// Fixture certificates shared by every session of a run.
pub struct Certs {
    certs: FixtureCerts,
    _dir: tempfile::TempDir,
}

impl Certs {
    pub fn generate() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let certs = FixtureCerts::generate(dir.path(), &[]).unwrap();
        Certs { certs, _dir: dir }
    }
}

/// Run one honest session of `suite` in memory and record it.
pub async fn session(certs: &Certs, suite: CipherSuite, fixture: Fixture) -> Session {
    let certs = &certs.certs;
    let (parts, body) = fixture.response();
    let server_parts = parts.clone();
    let server_cfg = certs.server_config().unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certs.chain[1].clone()).unwrap();
    let keylog = CollectingKeyLog::new();
    let versions: &[&rustls::SupportedProtocolVersion] = if suite.version() == TlsVersion::Tls13 {
        &[&rustls::version::TLS13]
    } else {
        &[&rustls::version::TLS12]
    };
    let mut client_cfg =
        rustls::ClientConfig::builder_with_provider(Arc::new(instrumented_provider(&[suite], &[])))
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    client_cfg.resumption = rustls::client::Resumption::disabled();
    client_cfg.key_log = keylog.clone();

    // client <-> [recording relay] <-> server, all in memory.
    let (c_end, relay_c) = tokio::io::duplex(1 << 16);
    let (relay_s, s_end) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(async move {
        let acceptor = tokio_rustls::TlsAcceptor::from(server_cfg);
        let mut tls = acceptor.accept(s_end).await.unwrap();
        let want: usize = REQUEST.iter().map(|p| p.len()).sum();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 4096];
        while got.len() < want {
            let n = tls.read(&mut buf).await.unwrap();
            assert!(n > 0, "the client closed before its request was complete");
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, REQUEST.concat());
        // One write, one flush: one record each.
        for part in server_parts {
            tls.write_all(&part).await.unwrap();
            tls.flush().await.unwrap();
        }
        tls.shutdown().await.unwrap();
    });
    let relay = tokio::spawn(async move {
        let mut rec = Recorder::new(RecorderLimits::default());
        let (mut cr, mut cw) = tokio::io::split(relay_c);
        let (mut sr, mut sw) = tokio::io::split(relay_s);
        let mut b1 = vec![0u8; 1 << 16];
        let mut b2 = vec![0u8; 1 << 16];
        let (mut c_open, mut s_open) = (true, true);
        while c_open || s_open {
            tokio::select! {
                n = cr.read(&mut b1), if c_open => match n {
                    Ok(0) | Err(_) => { c_open = false; let _ = sw.shutdown().await; }
                    Ok(n) => { rec.feed(Direction::Sent, &b1[..n]).unwrap(); sw.write_all(&b1[..n]).await.unwrap(); rec.mark_sent_delivered(); }
                },
                n = sr.read(&mut b2), if s_open => match n {
                    Ok(0) | Err(_) => { s_open = false; let _ = cw.shutdown().await; }
                    Ok(n) => { rec.feed(Direction::Received, &b2[..n]).unwrap(); let _ = cw.write_all(&b2[..n]).await; }
                },
            }
        }
        rec.finish()
    });
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_cfg));
    let mut tls = connector
        .connect(
            rustls::pki_types::ServerName::try_from("localhost").unwrap(),
            c_end,
        )
        .await
        .unwrap();
    for part in REQUEST {
        tls.write_all(part).await.unwrap();
        tls.flush().await.unwrap();
    }
    let mut response = Vec::new();
    tls.read_to_end(&mut response).await.unwrap();
    assert_eq!(response, parts.concat());
    drop(tls);
    server.await.unwrap();
    let recorded = relay.await.unwrap();

    let ecdhe = webproof_proxy::verify::client_public_keys(&recorded)
        .unwrap()
        .iter()
        .find_map(|k| take_shared_secret(k))
        .unwrap();
    let derived = webproof_proxy::verify::derive_witness(&recorded, &ecdhe).unwrap();
    assert_eq!(
        keylog
            .get(derived.keylog_check.0, &derived.client_random)
            .as_ref(),
        Some(&derived.keylog_check.1)
    );
    let mut roots = RootStore::empty();
    roots.add_pem(certs.ca_pem.as_bytes()).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let cfg = VerifyConfig {
        port: 443,
        roots,
        server_name: "localhost".into(),
        time: now,
    };
    let (_, statement) = check_handshake(
        &recorded,
        &cfg,
        SecretsSource::FromWitness(&derived.witness),
    )
    .unwrap();
    let keys = statement.derive_keys(&derived.witness).unwrap();
    let opened = statement.open_records(&keys).unwrap();
    // The records are as intended: the request and response parts, one
    // record each, in order.
    let app = |d: Direction| -> Vec<Vec<u8>> {
        opened
            .iter()
            .filter(|o| o.direction == d && o.content_type == 23)
            .map(|o| o.data.clone())
            .collect()
    };
    assert_eq!(app(Direction::Sent), REQUEST.map(<[u8]>::to_vec), "{suite}");
    assert_eq!(app(Direction::Received), parts, "{suite}");
    Session {
        suite,
        fixture,
        body,
        recorded,
        witness: derived.witness,
        cfg,
        request: REQUEST.concat(),
        response: parts.concat(),
        statement,
        opened,
        keys,
    }
}

/// Two honest sessions per fixture and suite (the second lends its secret
/// to a cheating prover of the first): index `fixture * 6 + suite`, the
/// fixtures in the order given.
pub fn sessions(certs: &Certs, fixtures: &[Fixture]) -> Vec<[Session; 2]> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    fixtures
        .iter()
        .flat_map(|&f| SUITES.iter().map(move |&s| (f, s)))
        .map(|(f, s)| {
            rt.block_on(async { [session(certs, s, f).await, session(certs, s, f).await] })
        })
        .collect()
}

/// One application-phase record of a transcript as a party holding the
/// session keys reads it.
#[derive(Clone, Debug)]
pub struct ReadRecord {
    pub direction: Direction,
    /// The record's outer content type.
    pub outer_type: u8,
    /// Ciphertext XOR keystream at the record's position, tag not checked
    /// (what the proof's openings give for any record).
    pub raw: Vec<u8>,
    /// `(content type, data)` if the record authenticates at its position
    /// (what the peer would accept).
    pub authentic: Option<(u8, Vec<u8>)>,
}

/// The records of `t` (a transcript the verifier holds) as read with the
/// session's true keys, in statement order; `None` if the handshake does
/// not check out with the true secret.
pub fn read_records(s: &Session, t: &Recording) -> Option<Vec<ReadRecord>> {
    let (_, statement) = check_handshake(t, &s.cfg, SecretsSource::FromWitness(&s.witness)).ok()?;
    let suite = s.suite;
    let aead = tp_aead(suite);
    let explicit = !s.tls13() && suite.aead() != webproof_proxy::suite::AeadAlg::ChaCha20Poly1305;
    let out = statement
        .records
        .iter()
        .map(|sr| {
            let keys = match sr.record.direction {
                Direction::Sent => &s.keys.client,
                Direction::Received => &s.keys.server,
            };
            let p = &sr.record.payload;
            let head = if explicit { 8 } else { 0 };
            let raw = if p.len() < head + 16 {
                Vec::new()
            } else {
                let nonce: [u8; 12] = if explicit {
                    let mut n = [0u8; 12];
                    n[..4].copy_from_slice(&keys.iv);
                    n[4..].copy_from_slice(&p[..8]);
                    n
                } else {
                    webproof_proxy::aead::xor_seq(&keys.iv, sr.seq)
                };
                let ct = &p[head..p.len() - 16];
                let ks =
                    webproof_tlsproof::testing::seal(aead, &keys.key, &nonce, &vec![0; ct.len()]);
                ct.iter().zip(ks).map(|(c, k)| c ^ k).collect()
            };
            let authentic = webproof_proxy::aead::RecordCipher::new(suite, keys.clone())
                .unwrap()
                .open(sr.seq, &sr.record)
                .ok()
                .map(|o| (o.content_type, o.data));
            ReadRecord {
                direction: sr.record.direction,
                outer_type: sr.record.content_type,
                raw,
                authentic,
            }
        })
        .collect();
    Some(out)
}

/// The true application data of each direction of the transcript `t` the
/// verifier kept: per direction, the records that authenticate at their
/// positions, up to the first that does not (the peer would reject it and
/// everything after it). Always a prefix of the honest session's data.
pub fn truth(s: &Session, t: &Recording) -> Result<[Vec<u8>; 2], String> {
    let records = read_records(s, t)
        .ok_or("the handshake does not check out with the true session secret")?;
    let mut out = [Vec::new(), Vec::new()];
    let mut stopped = [false, false];
    for r in records {
        let d = r.direction as usize;
        match (&r.authentic, stopped[d]) {
            (_, true) => {}
            (None, false) => stopped[d] = true,
            (Some((23, data)), false) => out[d].extend_from_slice(data),
            (Some(_), false) => {}
        }
    }
    for d in [Direction::Sent, Direction::Received] {
        let whole = s.truth(d);
        let got = &out[d as usize];
        if !whole.starts_with(got) {
            return Err(format!(
                "the {d} data read from the records is not a prefix of the session's"
            ));
        }
    }
    Ok(out)
}

/// The proof's AEAD for a suite.
pub fn tp_aead(suite: CipherSuite) -> webproof_tlsproof::Aead {
    use webproof_proxy::suite::AeadAlg;
    match suite.aead() {
        AeadAlg::Aes128Gcm => webproof_tlsproof::Aead::Aes128Gcm,
        AeadAlg::Aes256Gcm => webproof_tlsproof::Aead::Aes256Gcm,
        AeadAlg::ChaCha20Poly1305 => webproof_tlsproof::Aead::ChaCha20Poly1305,
    }
}

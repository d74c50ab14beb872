//! `webproof demo | fixture | serve | prove | relay`: the sessions' commands.
//!
//! Thin layer: parse arguments, call `webproof-net`, print. `fixture` and
//! `serve` print exactly one JSON line on stdout when ready
//! (`{"event":"listening","addr":"IP:PORT"}`, plus `"ca_cert"` for the
//! fixture) and run until SIGINT/SIGTERM; session logs go to stderr.
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Duration;
use webproof_disclosure::attest::AttestOptions;
use webproof_disclosure::http::RevealItem;
use webproof_disclosure::VerifierOutput;
use webproof_net::{Fixture, ProveOptions, ServerPolicy, Verifier, VerifierConfig};
use webproof_proxy::{CipherSuite, KxGroup, RootStore, TlsVersion};

use crate::failure::usage;

#[derive(Subcommand)]
pub enum ProxyCmd {
    /// Run a local HTTPS server, a verifier and a prover, and show what was verified.
    Demo,
    /// Run the local HTTPS test server (its own test CA, written to --cert-dir).
    Fixture(FixtureArgs),
    /// Run a verifier that relays provers' TLS sessions and checks their proofs.
    Serve(super::serve::ServeArgs),
    /// Fetch a URL through a verifier and prove what the server sent.
    Prove(ProveArgs),
    /// Run a WebSocket-to-TCP relay, through which a prover in a web page
    /// reaches servers itself (allow-listed targets, limits, metrics).
    Relay(super::relay::RelayArgs),
}

#[derive(Args)]
pub struct FixtureArgs {
    /// Address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// Where to write ca.pem, cert.pem and key.pem (default: a fresh temporary directory).
    #[arg(long)]
    cert_dir: Option<PathBuf>,
    /// Extra subject alternative name (DNS name or IP) for the certificate; repeatable.
    #[arg(long = "san")]
    sans: Vec<String>,
}

#[derive(Args)]
pub struct ProveArgs {
    /// Verifier address: HOST:PORT or tcp://, tls://, ws://, wss:// URLs
    /// (ws and wss at the service's /v1/session).
    #[arg(long)]
    verifier: String,
    /// Extra trusted root (PEM file) for a tls:// or wss:// verifier; repeatable.
    #[arg(long = "verifier-ca", value_name = "PEM")]
    verifier_cas: Vec<PathBuf>,
    /// The https:// URL to fetch.
    #[arg(long)]
    url: String,
    /// How the server is reached. proxy: the verifier relays your TLS
    /// connection and records it; mpc: you connect to the server yourself
    /// and the verifier takes part in the TLS client by two-party
    /// computation, never seeing the keys (TLS 1.2, ECDHE, AES-GCM).
    #[arg(long, default_value = "proxy", value_name = "proxy|mpc")]
    mode: webproof_net::Mode,
    /// With --mode mpc: connect to this address instead of resolving the
    /// URL's host (the host is still the name sent and checked).
    #[arg(long, value_name = "IP:PORT")]
    connect: Option<std::net::SocketAddr>,
    /// With --mode mpc: the record of verifiers that cheated (JSON lines;
    /// default: flagged-verifiers.jsonl under the user's data directory,
    /// e.g. ~/.local/share/webproof). A verifier in it is refused; one that
    /// stops after the Close or fails the audit is added.
    #[arg(long, value_name = "FILE")]
    flagged_verifiers: Option<PathBuf>,
    /// With --mode mpc: run even with a verifier recorded as cheating.
    #[arg(long)]
    allow_flagged_verifier: bool,
    /// Extra request header ('Name: value'); repeatable.
    #[arg(short = 'H', long = "header")]
    headers: Vec<String>,
    /// Request method, upper case [default: GET, or POST with --data or
    /// --data-file].
    #[arg(short = 'X', long, value_name = "METHOD", value_parser = parse_method)]
    method: Option<String>,
    /// Request body, sent with its Content-Length (set Content-Type with
    /// -H). Use --data-file for binary data.
    #[arg(short = 'd', long, value_name = "TEXT", conflicts_with = "data_file")]
    data: Option<String>,
    /// Request body from FILE ('-': standard input).
    #[arg(long, value_name = "FILE")]
    data_file: Option<PathBuf>,
    /// What to reveal; repeatable. Default: the whole request except its
    /// credentials (the values of secret headers, see --secret-header, and
    /// the query string) and the whole response. Hiding items alone
    /// (hide-sent:, hide-recv:, secret-header:, hide-req-body) subtract from the default;
    /// any other item starts from nothing. Items (--help says what each
    /// reveals): all, none, http, headers, header:NAME, req-header:NAME,
    /// query, body, json:PATH, sent:A-B, recv:A-B, hide-sent:A-B,
    /// hide-recv:A-B, secret-header:NAME, hide-req-body.
    ///
    /// all: every byte both ways, credentials included (refused when the
    /// request carries a secret header, unless --yes-reveal-secrets; the
    /// query string is revealed as it is);
    ///
    /// none: nothing;
    ///
    /// http: the request except its credentials, and the whole response;
    ///
    /// headers: the request except its credentials, the status line and
    /// every response header (no body);
    ///
    /// header:NAME: the request except its credentials, the status line and
    /// response header NAME (name and value);
    ///
    /// req-header:NAME: also the value of secret request header NAME;
    ///
    /// query: also the request's query string;
    ///
    /// body: the request except its credentials, the status line and the
    /// response body;
    ///
    /// json:PATH: the value at PATH (a.b.0.c; json: alone is the whole
    /// document), proven to sit there; to let the verifier check the path
    /// it also reveals the whole response head, the body's structure, the
    /// key names of every object on the path (so the value's siblings'
    /// names) and the length of every hidden value;
    ///
    /// sent:A-B, recv:A-B: bytes A up to (not including) B of the request or
    /// response, as they are;
    ///
    /// hide-sent:A-B, hide-recv:A-B: hide those bytes (applied last);
    ///
    /// secret-header:NAME: as --secret-header;
    ///
    /// hide-req-body: hide the request body (its length stays visible).
    ///
    /// N/ITEM (with --next): ITEM for exchange N only (from 1), e.g.
    /// 2/json:data.id or 3/header:etag; without the prefix an item applies
    /// to every exchange. It also reveals the framing (head, chunk sizes)
    /// of the responses before N, so the verifier finds response N itself.
    /// Byte ranges take no prefix: they are offsets in the whole transcript.
    ///
    /// Hidden bytes keep their length.
    #[arg(long, value_parser = parse_reveal)]
    reveal: Vec<RevealItem>,
    /// Treat request header NAME as a credential: its value is never
    /// revealed to the verifier. Repeatable. Built in: any header whose
    /// name contains cookie, auth, token, secret, session, password,
    /// passwd, api-key, apikey, api_key, access-key, csrf, xsrf, signature
    /// or credential (any case).
    #[arg(long = "secret-header", value_name = "NAME")]
    secret_headers: Vec<String>,
    /// Let --reveal all (or a sent:A-B range) reveal the values of the
    /// request's secret headers to the verifier.
    #[arg(long)]
    yes_reveal_secrets: bool,
    /// Extra trusted root certificate (PEM file) for the prover's own check; repeatable.
    #[arg(long = "ca-cert")]
    ca_certs: Vec<PathBuf>,
    /// TLS version to use (default: 1.3 or 1.2, as the server prefers).
    #[arg(long, value_parser = parse_version)]
    tls: Option<TlsVersion>,
    /// Cipher suite to offer (e.g. TLS13_AES_128_GCM_SHA256, ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256); repeatable.
    #[arg(long = "suite", value_parser = parse_suite)]
    suites: Vec<CipherSuite>,
    /// Key-exchange group to offer (x25519, p256); repeatable.
    #[arg(long = "group", value_parser = parse_group)]
    groups: Vec<KxGroup>,
    /// Add an X-Padding header of this many bytes.
    #[arg(long, default_value_t = 0)]
    padding: usize,
    /// Pad the request (X-Padding header) to this total size in bytes.
    #[arg(long)]
    upload_size: Option<usize>,
    /// Response size in bytes you expect: sizes the proof's preprocessing
    /// (a larger response still proves, with more work during the proof).
    #[arg(long, value_name = "BYTES", default_value_t = webproof_net::prover::DEFAULT_EXPECT_RESPONSE)]
    expect_response: usize,
    /// Give up after this many seconds [default: 60, plus 30 per MiB of
    /// --expect-response: proving a response with hidden bytes takes about
    /// 12 s of one core per MiB].
    #[arg(long)]
    timeout_secs: Option<u64>,
    /// Ask the verifier for a signed attestation and write the bundle needed
    /// for `webproof present` to FILE (secret: it can open every byte).
    #[arg(long, value_name = "FILE")]
    attest: Option<PathBuf>,
    /// With --attest: give this reveal item (json:PATH, header:NAME, ...) its
    /// own committed leaves, so a presentation can reveal exactly it
    /// (`present` refuses to reveal whole leaves wider than its items unless
    /// --allow-wider-reveal). Repeatable. The request's credentials always
    /// get leaves of their own.
    #[arg(long = "commit-at", value_name = "ITEM", requires = "attest", value_parser = parse_reveal)]
    commit_at: Vec<RevealItem>,
    /// With --attest: committed leaf size in bytes (default 215).
    #[arg(long, value_name = "BYTES", requires = "attest")]
    commit_chunk: Option<usize>,
    /// API key for a verifier that requires one (default: $WEBPROOF_API_KEY).
    #[arg(long, env = "WEBPROOF_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Print one JSON object {"verified": ..., "stats": ..., "session_id": ...}.
    #[arg(long)]
    json: bool,
    /// No progress lines on stderr (one per phase: connected, admitted,
    /// TLS session, response, proving, verdict; one updated line on a
    /// terminal).
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Another request on the same TLS connection, as curl's --next: the
    /// options after it (--url, -X/--method, -d/--data, --data-file,
    /// -H/--header, nothing else) make the next request; repeat for more
    /// (at most 32 requests). Every --url must name the first one's host
    /// and port. In proxy mode each request goes once the response before
    /// it is complete; in MPC mode all go in one flight (HTTP/1.1
    /// pipelining: the prover cannot read a response before the session
    /// ends), the responses read until the server closes. Only the last
    /// asks for Connection: close. Reveal items
    /// apply to every exchange; prefix one with N/ for exchange N only
    /// (--reveal 2/json:data.id), which also reveals the framing of the
    /// responses before it. E.g. prove --verifier V --url https://h/a -X
    /// POST -d @x --next --url https://h/b -H 'Accept: text/plain'
    #[arg(long = "next")]
    next_marker: bool,
    /// The argument groups after each --next, split off before parsing.
    #[arg(skip)]
    next: Vec<Vec<std::ffi::OsString>>,
}

impl ProveArgs {
    /// The argument groups that followed each `--next` (see [`split_next`]).
    pub fn set_next(&mut self, groups: Vec<Vec<std::ffi::OsString>>) {
        self.next = groups;
    }
}

/// Split a command line at `--next` (clap has no such convention): the
/// arguments up to the first, and the group after each. Only for `prove`:
/// other command lines come back whole.
pub fn split_next(
    args: Vec<std::ffi::OsString>,
) -> (Vec<std::ffi::OsString>, Vec<Vec<std::ffi::OsString>>) {
    let first_word = args
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'));
    if first_word.is_none_or(|w| w != "prove") {
        return (args, Vec::new());
    }
    let mut groups = args.split(|a| a == "--next");
    let head = groups.next().unwrap_or_default().to_vec();
    (head, groups.map(<[_]>::to_vec).collect())
}

/// The options of a request after `--next`: only the per-request ones.
#[derive(clap::Parser)]
#[command(name = "--next", no_binary_name = true, disable_help_flag = true)]
struct NextArgs {
    /// The https:// URL (the first request's host and port).
    #[arg(long)]
    url: String,
    #[arg(short = 'H', long = "header")]
    headers: Vec<String>,
    #[arg(short = 'X', long, value_parser = parse_method)]
    method: Option<String>,
    #[arg(short = 'd', long, conflicts_with = "data_file")]
    data: Option<String>,
    #[arg(long)]
    data_file: Option<PathBuf>,
}

/// The requests after `--next`, for a session to `first` (host, port).
fn next_requests(
    groups: &[Vec<std::ffi::OsString>],
    first: &webproof_disclosure::http::HttpsUrl,
) -> anyhow::Result<Vec<webproof_net::prover::HttpRequest>> {
    use clap::Parser;
    if 1 + groups.len() > webproof_net::prover::MAX_EXCHANGES {
        bail!(
            "{} requests: a session carries at most {} (--next)",
            1 + groups.len(),
            webproof_net::prover::MAX_EXCHANGES
        );
    }
    let origin = |u: &webproof_disclosure::http::HttpsUrl| format!("https://{}:{}", u.host, u.port);
    groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let n = i + 2;
            let a = NextArgs::try_parse_from(g).map_err(|e| {
                anyhow::anyhow!(
                    "request {n} (after --next): {}; after --next only --url, -X/--method, \
                     -d/--data, --data-file and -H/--header are taken",
                    crate::first_line(&e.to_string())
                )
            })?;
            let url: webproof_disclosure::http::HttpsUrl = a
                .url
                .parse()
                .map_err(|e| anyhow::anyhow!("request {n} (after --next): {e}"))?;
            if url.host != first.host || url.port != first.port {
                bail!(
                    "request {n} (after --next) goes to {}, the first to {}: the requests of a \
                     session share one TLS connection, so one server",
                    origin(&url),
                    origin(first)
                );
            }
            let body = request_body(a.data.as_deref(), a.data_file.as_deref())?;
            Ok(webproof_net::prover::HttpRequest {
                method: default_method(a.method, &body),
                path: url.path,
                headers: header_pairs(&a.headers)?,
                body,
            })
        })
        .collect()
}

/// `-X`, or GET without a body and POST with one.
fn default_method(method: Option<String>, body: &[u8]) -> String {
    match method {
        Some(m) => m,
        None if body.is_empty() => "GET".into(),
        None => "POST".into(),
    }
}

/// `-H 'Name: value'` arguments as pairs.
fn header_pairs(headers: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    headers
        .iter()
        .map(|h| {
            let (k, v) = h
                .split_once(':')
                .with_context(|| format!("-H {h:?}: expected 'Name: value'"))?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// Progress lines on stderr: each phase with the seconds since the start;
/// on a terminal one line rewritten in place, ended at the verdict.
fn progress_lines() -> webproof_net::Progress {
    use std::io::{IsTerminal, Write};
    let start = std::time::Instant::now();
    let tty = std::io::stderr().is_terminal();
    webproof_net::Progress(std::sync::Arc::new(move |stage| {
        let line = format!(
            "webproof: {:>6.2} s  {stage}",
            start.elapsed().as_secs_f64()
        );
        let mut e = std::io::stderr().lock();
        let _ = if !tty {
            writeln!(e, "{line}")
        } else if stage == webproof_net::Stage::Verdict {
            writeln!(e, "\r\x1b[2K{line}")
        } else {
            write!(e, "\r\x1b[2K{line}")
        };
        let _ = e.flush();
    }))
}

/// An HTTP method, checked before any network work.
fn parse_method(s: &str) -> Result<String, String> {
    if webproof_disclosure::http::valid_method(s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{s:?} is not an HTTP method: use upper case, e.g. GET, POST, PUT, PATCH, DELETE"
        ))
    }
}

/// The request body of `--data` or `--data-file` (`-`: standard input).
fn request_body(
    data: Option<&str>,
    data_file: Option<&std::path::Path>,
) -> anyhow::Result<Vec<u8>> {
    if let Some(d) = data {
        return Ok(d.as_bytes().to_vec());
    }
    match data_file {
        None => Ok(Vec::new()),
        Some(p) if p.as_os_str() == "-" => {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)
                .context("reading the request body from standard input")?;
            Ok(v)
        }
        Some(p) => std::fs::read(p).with_context(|| format!("reading {}", p.display())),
    }
}

/// A reveal item, parsed before any network work so a typo fails at once.
pub(crate) fn parse_reveal(s: &str) -> Result<RevealItem, String> {
    s.parse()
        .map_err(|e: webproof_disclosure::DisclosureError| e.to_string())
}

fn parse_version(s: &str) -> Result<TlsVersion, String> {
    match s {
        "1.2" => Ok(TlsVersion::Tls12),
        "1.3" => Ok(TlsVersion::Tls13),
        _ => Err("expected 1.2 or 1.3".into()),
    }
}

fn parse_suite(s: &str) -> Result<CipherSuite, String> {
    CipherSuite::from_name(s).ok_or_else(|| {
        let names: Vec<_> = CipherSuite::ALL.iter().map(|s| s.name()).collect();
        format!("unknown suite; supported: {}", names.join(", "))
    })
}

fn parse_group(s: &str) -> Result<KxGroup, String> {
    KxGroup::from_name(s).ok_or_else(|| "expected x25519 or p256".into())
}

pub async fn run(cmd: ProxyCmd) -> anyhow::Result<()> {
    match cmd {
        ProxyCmd::Demo => demo().await,
        ProxyCmd::Fixture(a) => fixture(a).await,
        ProxyCmd::Serve(a) => super::serve::run(a).await,
        ProxyCmd::Prove(a) => prove(a).await,
        ProxyCmd::Relay(a) => super::relay::run(a).await,
    }
}

/// SIGINT or SIGTERM, with the handlers installed now: a command creates
/// it before it says it is listening, so a signal sent on that line is
/// never the default (fatal) one.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
        async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

fn temp_cert_dir() -> PathBuf {
    std::env::temp_dir().join(format!("webproof-fixture-{}", std::process::id()))
}

async fn fixture(a: FixtureArgs) -> anyhow::Result<()> {
    let dir = a.cert_dir.unwrap_or_else(temp_cert_dir);
    let f = Fixture::start(&a.listen, &dir, &a.sans).await?;
    let stop = shutdown_signal();
    outln!(
        "{}",
        serde_json::json!({"event": "listening", "addr": f.addr.to_string(), "ca_cert": f.certs.ca_path.display().to_string()})
    );
    stop.await;
    f.stop();
    Ok(())
}

fn prove_options(a: &ProveArgs) -> anyhow::Result<ProveOptions> {
    let mut o = ProveOptions::new(&a.verifier, &a.url)?;
    o.headers = header_pairs(&a.headers)?;
    o.next = next_requests(&a.next, &a.url.parse()?)?;
    for p in &a.ca_certs {
        o.ca_pems
            .push(std::fs::read(p).with_context(|| format!("reading {}", p.display()))?);
    }
    for p in &a.verifier_cas {
        o.transport
            .ca_pems
            .push(std::fs::read(p).with_context(|| format!("reading {}", p.display()))?);
    }
    o.mode = a.mode;
    if a.connect.is_some() && a.mode != webproof_net::Mode::Mpc {
        bail!("--connect is for --mode mpc (in proxy mode the verifier connects)");
    }
    o.server_addr = a.connect;
    if a.mode == webproof_net::Mode::Mpc {
        o.flagged_verifiers = a
            .flagged_verifiers
            .clone()
            .or_else(webproof_net::flagged::FlaggedVerifiers::default_path);
        o.allow_flagged_verifier = a.allow_flagged_verifier;
    } else if a.flagged_verifiers.is_some() || a.allow_flagged_verifier {
        bail!("--flagged-verifiers and --allow-flagged-verifier are for --mode mpc");
    }
    o.version = a.tls;
    o.suites = a.suites.clone();
    o.groups = a.groups.clone();
    o.reveal = a.reveal.clone();
    let secret_items: Vec<RevealItem> = a
        .secret_headers
        .iter()
        .map(|n| RevealItem::SecretHeader(n.trim().to_ascii_lowercase()))
        .collect();
    o.reveal.extend(secret_items.iter().cloned());
    o.timeout = Duration::from_secs(
        a.timeout_secs
            .unwrap_or(default_timeout_secs(a.expect_response)),
    );
    o.expect_response = a.expect_response;
    o.api_key = a.api_key.clone();
    o.check_requests()?;
    if a.attest.is_some() {
        // The named secret headers get leaves of their own, as the built-in
        // ones do, so presentations can leave them out exactly.
        let mut boundaries = a.commit_at.clone();
        boundaries.extend(secret_items);
        o.attest = Some(AttestOptions {
            chunk_len: a.commit_chunk,
            boundaries,
        });
    }
    o.body = request_body(a.data.as_deref(), a.data_file.as_deref())?;
    o.method = default_method(a.method.clone(), &o.body);
    o.padding = a.padding;
    if let Some(total) = a.upload_size {
        let base = o.request().len();
        // "X-Padding: " + value + CRLF
        o.padding = total
            .saturating_sub(base + 13)
            .max(if total > base { 1 } else { 0 });
        if total <= base + 13 {
            o.padding = 0;
        }
    }
    Ok(o)
}

/// The prover's default deadline for a response of `expect_response` bytes.
fn default_timeout_secs(expect_response: usize) -> u64 {
    60 + 30 * (expect_response as u64 >> 20)
}

/// Refuse, before any network work, a selection that would give the
/// verifier a credential the user did not name.
fn refuse_unasked_secrets(o: &ProveOptions) -> anyhow::Result<()> {
    let secrets = webproof_disclosure::http::unasked_secrets(&o.reveal, &o.request())?;
    if secrets.is_empty() {
        return Ok(());
    }
    let by: Vec<String> = o
        .reveal
        .iter()
        .filter(|i| matches!(i, RevealItem::All | RevealItem::Sent(_)))
        .map(|i| format!("--reveal {i}"))
        .collect();
    let what: Vec<&str> = secrets.iter().map(|s| s.what.as_str()).collect();
    let names: Vec<String> = secrets
        .iter()
        .map(|s| format!("--reveal {}", s.item))
        .collect();
    bail!(
        "{} would show the verifier the request's {}. Leave --reveal out (the default hides \
         them), name each one you mean to reveal ({}), or pass --yes-reveal-secrets",
        by.join(" "),
        what.join(", "),
        names.join(", ")
    )
}

/// The request's credentials as the verifier's output shows them: those
/// whose bytes it did not get, and those it did.
fn secrets_seen(o: &ProveOptions, out: &VerifierOutput) -> (Vec<String>, Vec<String>) {
    webproof_disclosure::http::secrets_by_visibility(&o.reveal, &o.request(), &out.sent.revealed)
}

fn print_secrets(o: &ProveOptions, out: &VerifierOutput) {
    let (hidden, shown) = secrets_seen(o, out);
    if !hidden.is_empty() {
        outln!("hidden: {}", hidden.join(", "));
    }
    if !shown.is_empty() {
        outln!("REVEALED to the verifier: {}", shown.join(", "));
    }
}

async fn prove(a: ProveArgs) -> anyhow::Result<()> {
    let mut o = prove_options(&a).map_err(usage)?;
    if !a.quiet {
        o.progress = Some(progress_lines());
    }
    if !a.yes_reveal_secrets {
        refuse_unasked_secrets(&o).map_err(usage)?;
    }
    let proved = webproof_net::prove(&o).await;
    if proved.is_err()
        && o.progress.is_some()
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
    {
        // End the progress line the failure interrupted.
        eprintln!();
    }
    let out = match proved {
        Err(e @ webproof_net::NetError::Timeout(_)) => {
            return Err(anyhow::Error::new(e).context(format!(
                "gave up after {} s: for a large response, state its size with --expect-response \
                 or raise --timeout-secs",
                o.timeout.as_secs()
            )))
        }
        r => r?,
    };
    if let (Some(path), Some(bundle)) = (&a.attest, &out.attestation) {
        write_secret_file(path, bundle.to_json().as_bytes())?;
        eprintln!(
            "attestation bundle ({} leaves, signed by {}) written to {}; make presentations \
             with `webproof present {} --reveal ...`",
            bundle.attestation.attestation().leaf_count(),
            bundle.verifying_key.scheme().name(),
            path.display(),
            path.display()
        );
    }
    if a.json {
        let (hidden, revealed) = secrets_seen(&o, &out.output);
        let mut v = serde_json::json!({
            "verified": out.output,
            "time_utc": crate::utc::rfc3339(out.output.time),
            "secrets": {"hidden": hidden, "revealed": revealed},
            "stats": out.stats,
            "session_id": out.session_id,
        });
        // Several requests: the exchanges as the verifier's own data
        // splits them (single-request output stays as it was).
        let exchanges = out.output.exchanges();
        if exchanges.len() > 1 {
            v["exchanges"] = serde_json::json!(exchanges);
        }
        outln!("{v}");
    } else {
        if let Some(id) = out.session_id {
            outln!("session id: {id}");
        }
        print_output(&out.output);
        print_secrets(&o, &out.output);
        print_stats(&out.stats);
    }
    Ok(())
}

/// A one-shot verifier for the demo's fixture and prover options for `path`
/// through it (the fixture's CA trusted, a cookie to hide).
async fn demo_session(
    fixture: &Fixture,
    path: &str,
    attestation_key: Option<std::sync::Arc<webproof_attestation::SigningKey>>,
) -> anyhow::Result<(
    ProveOptions,
    tokio::task::JoinHandle<webproof_net::Result<VerifierOutput>>,
)> {
    let mut roots = RootStore::empty();
    roots.add_pem(fixture.certs.ca_pem.as_bytes())?;
    let verifier = Verifier::bind(
        "127.0.0.1:0",
        VerifierConfig {
            roots,
            // The demo's server is on loopback, which the default policy refuses.
            server_policy: ServerPolicy::public_only()
                .allow(["127.0.0.0/8".parse().map_err(anyhow::Error::msg)?]),
            attestation_key,
            ..VerifierConfig::default()
        },
    )
    .await?;
    let vaddr = verifier.local_addr()?;
    let vtask = tokio::spawn(verifier.serve_one());
    let mut o = ProveOptions::new(
        &vaddr.to_string(),
        &format!("https://localhost:{}{path}", fixture.addr.port()),
    )?;
    o.ca_pems.push(fixture.certs.ca_pem.clone().into_bytes());
    o.headers
        .push(("Cookie".into(), "session=demo-secret-token".into()));
    // The fixture's pages are well under 1 KiB with their headers.
    o.expect_response = 1 << 10;
    Ok((o, vtask))
}

/// The attestation flow: the verifier sees no plaintext, signs a commitment
/// to the transcript, and a third party checks a presentation of one field.
async fn demo_attestation(fixture: &Fixture) -> anyhow::Result<()> {
    use webproof_attestation::{Scheme, SigningKey};
    outln!("\n=== Attestation: the verifier sees nothing and signs; a third party sees one JSON field ===");
    let key = std::sync::Arc::new(SigningKey::generate(
        Scheme::Secp256k1,
        &mut rand::rngs::OsRng,
    ));
    let (mut o, vtask) = demo_session(fixture, "/json", Some(key.clone())).await?;
    o.version = Some(TlsVersion::Tls13);
    o.reveal = vec![RevealItem::None];
    let field = RevealItem::Json("account.balance.amount".into());
    o.attest = Some(AttestOptions {
        chunk_len: None,
        boundaries: vec![field.clone()],
    });
    let out = webproof_net::prove(&o).await?;
    let vout = vtask.await??;
    outln!(
        "verifier saw {} of {} sent and {} of {} received bytes",
        vout.sent.len - vout.sent.hidden(),
        vout.sent.len,
        vout.received.len - vout.received.hidden(),
        vout.received.len
    );
    let bundle = out
        .attestation
        .ok_or_else(|| anyhow::anyhow!("no attestation came back"))?;
    let a = bundle.attestation.attestation();
    outln!(
        "attestation: {} leaves, root {}, signed with secp256k1 (EVM address {})",
        a.leaf_count(),
        a.transcript_root()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>(),
        bundle.verifying_key.ethereum_address().unwrap_or_default()
    );
    let p = bundle.present(std::slice::from_ref(&field), false)?;
    let bytes = p.presentation.to_bytes();
    let checked = webproof_attestation::verify_presentation(&bytes, &[key.verifying_key()])?;
    outln!(
        "presentation ({} bytes) verified offline; the third party sees the response as:",
        bytes.len()
    );
    outln!("{}", checked.received.to_marked_string('█'));
    print_stats(&out.stats);
    Ok(())
}

/// Write a file only its owner can read (it holds secrets).
fn write_secret_file(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn print_output(o: &VerifierOutput) {
    let facts = o.facts();
    let end = facts.ending();
    // Not "verified" plain when the server may have said more.
    let verdict = if end.may_be_truncated() {
        "verified, response POSSIBLY TRUNCATED"
    } else {
        "verified"
    };
    outln!(
        "{verdict}: {} via {} ({}, {:?}), session time {}",
        o.server_name,
        o.tls_version,
        o.cipher_suite,
        o.key_exchange_group,
        crate::utc::rfc3339(o.time)
    );
    outln!("server certificate sha256: {}", o.server_certificate_sha256);
    let close_notify = match o.server_close_notify {
        Some(b) => b.to_string(),
        None => "not established".into(),
    };
    outln!(
        "proof: {}, {}; server close_notify: {close_notify}",
        proof_words(o.proof),
        facts.mode
    );
    outln!("response end: {end}");
    if o.proof == webproof_disclosure::ProofKind::FullReveal
        && o.sent.hidden() + o.received.hidden() > 0
    {
        outln!(
            "note: hidden bytes are left out of the attestation, but the full-reveal proof gave the \
             verifier the session keys; the ZK proof (in progress) is what keeps them private"
        );
    }
    for (name, d) in [("sent", &o.sent), ("received", &o.received)] {
        outln!("--- {name}: {} bytes, {} hidden ---", d.len, d.hidden());
        let shown: String = d.text.chars().take(2000).collect();
        outln!("{shown}");
        if d.text.chars().count() > 2000 {
            outln!("[... {} more characters]", d.text.chars().count() - 2000);
        }
    }
    let exchanges = o.exchanges();
    let several = exchanges.len() > 1;
    if several {
        print_exchanges(&exchanges);
    }
    if !o.json.is_empty() {
        outln!("--- JSON paths proven (value at the path, no duplicate key on it) ---");
        for j in &o.json {
            let text: String = j.value_text.chars().take(500).collect();
            let at = match webproof_disclosure::exchange::exchange_of(
                &exchanges,
                j.direction,
                j.value,
            ) {
                Some(k) if several => format!("exchange {}: ", k + 1),
                None if several => "exchange unknown: ".into(),
                _ => String::new(),
            };
            outln!(
                "{at}{} {:?} = {} (bytes {}..{})",
                j.direction,
                j.path,
                text.escape_debug(),
                j.value.start,
                j.value.end
            );
        }
    }
}

/// The exchanges of a session of several requests, as the verifier's own
/// data splits them: request line and status of each, and where each lies.
pub(crate) fn print_exchanges(exchanges: &[webproof_disclosure::exchange::Exchange]) {
    outln!(
        "--- exchanges: {} requests on one connection ---",
        exchanges.len()
    );
    for (k, e) in exchanges.iter().enumerate() {
        let line = e.request_line.as_deref().unwrap_or("(request line hidden)");
        let status = e
            .status
            .map_or_else(|| "status hidden".to_string(), |s| s.to_string());
        let response = e.response.map_or_else(
            || "response not found (framing hidden)".to_string(),
            |r| format!("received bytes {}..{}", r.start, r.end),
        );
        outln!(
            "{}. {line} -> {status} (sent bytes {}..{}, {response})",
            k + 1,
            e.request.start,
            e.request.end
        );
    }
}

/// What a proof kind means, in words.
fn proof_words(kind: webproof_disclosure::ProofKind) -> &'static str {
    use webproof_disclosure::ProofKind;
    match kind {
        ProofKind::Zk => "zero-knowledge proof",
        ProofKind::Mpc => "two-party computation of the TLS client and zero-knowledge proof",
        ProofKind::FullReveal => "full reveal (the verifier got the session keys)",
    }
}

fn print_stats(s: &webproof_net::ProveStats) {
    outln!(
        "timing: setup {:.1} ms, TLS session {:.1} ms, proof {:.1} ms, total {:.1} ms",
        s.time_preprocess_ms,
        s.time_tls_ms,
        s.time_proof_ms,
        s.time_total_ms
    );
    outln!(
        "traffic prover<->verifier: up {} B, down {} B",
        s.uploaded_preprocess + s.uploaded_online,
        s.downloaded_preprocess + s.downloaded_online
    );
}

async fn demo() -> anyhow::Result<()> {
    let dir = temp_cert_dir();
    let fixture = Fixture::start("127.0.0.1:0", &dir, &[]).await?;
    outln!(
        "fixture: https://localhost:{} (test CA {})",
        fixture.addr.port(),
        fixture.certs.ca_path.display()
    );
    // (title, mode, version, suites, path, reveal items)
    type Run<'a> = (
        &'a str,
        webproof_net::Mode,
        Option<TlsVersion>,
        Vec<CipherSuite>,
        &'a str,
        &'a [&'a str],
    );
    use webproof_net::Mode;
    let runs: [Run<'_>; 3] = [
        (
            "TLS 1.3, JSON: reveal the request without its cookie, the status line, Content-Type and two JSON fields",
            Mode::Proxy,
            Some(TlsVersion::Tls13),
            vec![CipherSuite::TLS13_AES_128_GCM_SHA256],
            "/json",
            &["header:content-type", "json:account.balance.amount", "json:verified"],
        ),
        (
            "TLS 1.2 (ECDHE-ECDSA, ChaCha20-Poly1305), the default: everything but the cookie",
            Mode::Proxy,
            Some(TlsVersion::Tls12),
            vec![CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256],
            "/html",
            &[],
        ),
        (
            "MPC mode, TLS 1.2 (ECDHE-ECDSA, AES-128-GCM): the prover connects to the server itself, \
             the verifier takes part in the TLS client by 2PC; reveal the request without its cookie, the status line, Content-Type and one JSON field",
            Mode::Mpc,
            Some(TlsVersion::Tls12),
            vec![CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256],
            "/json",
            &["header:content-type", "json:account.balance.amount"],
        ),
    ];
    for (title, mode, version, suites, path, reveal) in runs {
        let (mut o, vtask) = demo_session(&fixture, path, None).await?;
        o.mode = mode;
        o.version = version;
        o.suites = suites;
        o.reveal = webproof_disclosure::http::parse_items(reveal)?;
        outln!("\n=== {title} ===");
        let out = webproof_net::prove(&o).await?;
        let vout = vtask.await??;
        if vout != out.output {
            bail!("the verifier's own record differs from what the prover was told");
        }
        print_output(&out.output);
        print_secrets(&o, &out.output);
        print_stats(&out.stats);
    }
    demo_attestation(&fixture).await?;
    fixture.stop();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

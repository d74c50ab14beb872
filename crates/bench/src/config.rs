//! Benchmark configuration: TOML files in TLSNotary's `[[group]]` /
//! `[[bench]]` layout plus webproof's own fields.
//!
//! This module owns parsing and validation only. Every error names the file,
//! the line and the field, because configs are written by hand. Fields that
//! TLSNotary's harness knows but we do not use are accepted with a warning so
//! their files run unchanged.
//!
//! Resolution order for a bench: built-in defaults, then top-level keys, then
//! its group, then the bench itself.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml_edit::{ImDocument, Item, Table, Value};

/// How the prover obtains the server's response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The verifier relays the TLS bytes; the prover proves in ZK afterwards.
    Proxy,
    /// Two-party TLS client (not built yet: refused with a clear error).
    Mpc,
    /// Ordinary TLS, no proof: the network floor.
    Plain,
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Proxy => "proxy",
            Mode::Mpc => "mpc",
            Mode::Plain => "plain",
        }
    }
}

/// Where the prover runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// `webproof prove`, a native process.
    #[default]
    Native,
    /// The WebAssembly prover (`web/package`) in headless chromium.
    Browser,
}

impl Target {
    pub fn as_str(&self) -> &'static str {
        match self {
            Target::Native => "native",
            Target::Browser => "browser",
        }
    }

    /// `native` or `browser`.
    pub fn parse(s: &str) -> Option<Target> {
        match s {
            "native" => Some(Target::Native),
            "browser" => Some(Target::Browser),
            _ => None,
        }
    }
}

/// The TLS version a bench tells the prover to offer (`any`: both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OfferedVersion {
    /// Whatever both sides negotiate.
    Any,
    V12,
    V13,
}

impl OfferedVersion {
    pub fn as_str(&self) -> &'static str {
        match self {
            OfferedVersion::Any => "any",
            OfferedVersion::V12 => "1.2",
            OfferedVersion::V13 => "1.3",
        }
    }
}

/// Settings of one emulated link, identical in both directions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// Round-trip time in milliseconds (each direction gets half).
    pub rtt_ms: f64,
    /// Bottleneck rate per direction, Mbit/s.
    pub bandwidth_mbps: f64,
    /// Extra one-way delay, uniformly drawn in [-jitter, +jitter] ms.
    pub jitter_ms: f64,
    /// Packet loss per direction, percent.
    pub loss_percent: f64,
}

/// One fully resolved benchmark row.
#[derive(Clone, Debug)]
pub struct BenchSpec {
    pub group: String,
    pub name: String,
    /// Line of the `[[bench]]` table in the config file (1-based).
    pub line: usize,
    pub samples: u32,
    pub warmup: u32,
    pub mode: Mode,
    /// Name of an adapter (`curl` or one from `[adapter.NAME]`) that runs the
    /// prover (and verifier) instead of webproof's own executors.
    pub adapter: Option<String>,
    /// Prover <-> verifier.
    pub protocol: LinkSpec,
    /// Verifier <-> server in proxy mode, prover <-> server otherwise.
    pub app: LinkSpec,
    pub upload_size: usize,
    pub download_size: usize,
    pub defer_decryption: bool,
    pub memory_profile: bool,
    pub reveal_all: bool,
    pub tls: OfferedVersion,
    pub suite: Option<String>,
    /// What the prover reveals: `all`, `none` or a comma list of ranges as
    /// the prover's `--reveal` flag takes them. Default: all but one byte.
    pub reveal: Option<String>,
    /// Where the prover runs (browser: proxy and MPC modes).
    pub target: Target,
}

impl BenchSpec {
    /// Label for tables: `proxy`, `plain`, `adapter:curl`.
    pub fn mode_label(&self) -> String {
        match &self.adapter {
            Some(a) => format!("adapter:{a}"),
            None => self.mode.as_str().to_string(),
        }
    }

    /// Topology of webproof's own modes (adapters declare theirs).
    pub fn own_topology(&self) -> PeerTopology {
        match self.mode {
            Mode::Proxy => PeerTopology::Proxy,
            Mode::Mpc => PeerTopology::Mpc,
            Mode::Plain => PeerTopology::Plain,
        }
    }
}

/// Who talks to the server, which decides what the benchmark measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerTopology {
    /// The verifier connects to the server and relays the prover's TLS.
    Proxy,
    /// The prover connects to the server; prover and verifier run the TLS
    /// client together (MPC-TLS).
    Mpc,
    /// The prover connects to the server and nobody checks it: a client
    /// with no proof (curl, plain mode), the network's floor.
    Plain,
}

impl PeerTopology {
    pub fn as_str(&self) -> &'static str {
        match self {
            PeerTopology::Proxy => "proxy",
            PeerTopology::Mpc => "mpc",
            PeerTopology::Plain => "plain",
        }
    }
}

/// How an adapter's verifier reports its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerdictRule {
    /// A `{"event":"verdict","accepted":BOOL}` object on stdout.
    Event,
    /// The verifier serves one session and exits: status 0 accepts (a
    /// verdict event printed before it exits still counts first).
    Exit,
}

impl VerdictRule {
    pub fn as_str(&self) -> &'static str {
        match self {
            VerdictRule::Event => "event",
            VerdictRule::Exit => "exit",
        }
    }
}

/// How long after the prover's exit the harness waits for a verdict.
pub const DEFAULT_VERDICT_TIMEOUT_SECS: f64 = 60.0;

/// An external implementation measured under the same conditions. See
/// `bench/ADAPTERS.md` for the contract.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterSpec {
    pub name: String,
    /// argv of the prover; `{placeholders}` are substituted, see ADAPTERS.md.
    pub prover: Vec<String>,
    /// argv of the verifier, if the implementation has one.
    pub verifier: Option<Vec<String>>,
    pub topology: PeerTopology,
    pub verdict: VerdictRule,
    /// Grace for the verdict once the prover has exited, seconds.
    pub verdict_timeout_secs: f64,
}

impl AdapterSpec {
    /// Whether the verifier connects to the server (proxy topology).
    pub fn verifier_connects(&self) -> bool {
        self.topology == PeerTopology::Proxy
    }

    /// The built-in no-proof client: curl over the prover <-> server link.
    /// Its default `User-Agent` and `Accept` headers are removed so the
    /// request is the contract's template, `upload_size` bytes.
    pub fn curl() -> Self {
        let argv = [
            "curl",
            "-sS",
            "--fail",
            "--http1.1",
            "-o",
            "/dev/null",
            "--cacert",
            "{ca_cert}",
            "--resolve",
            "{server_name}:{server_port}:{server_ip}",
            "-H",
            "User-Agent:",
            "-H",
            "Accept:",
            "-H",
            "X-Padding: {padding}",
            "-H",
            "Connection: close",
            "{url}",
        ];
        AdapterSpec {
            name: "curl".into(),
            prover: argv.iter().map(|s| s.to_string()).collect(),
            verifier: None,
            topology: PeerTopology::Plain,
            verdict: VerdictRule::Event,
            verdict_timeout_secs: DEFAULT_VERDICT_TIMEOUT_SECS,
        }
    }
}

/// A parsed configuration file.
#[derive(Clone, Debug)]
pub struct Config {
    pub path: PathBuf,
    pub benches: Vec<BenchSpec>,
    pub adapters: BTreeMap<String, AdapterSpec>,
    /// Non-fatal findings (unknown fields, ignored TLSNotary options).
    pub warnings: Vec<String>,
}

/// A configuration error with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    /// 1-based line, 0 when the location is unknown.
    pub line: usize,
    /// Field the error is about (empty for syntax errors).
    pub field: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(
                f,
                "{}:{}: field `{}`: {}",
                self.file, self.line, self.field, self.message
            )
        }
    }
}

impl std::error::Error for ConfigError {}

/// Fields of an `[adapter.NAME]` table.
const ADAPTER_KNOWN: &[&str] = &[
    "prover",
    "verifier",
    "topology",
    "verdict",
    "verdict_timeout",
    "verdict-timeout",
];

/// Keys TLSNotary's harness defines that change nothing here.
const TLSN_IGNORED: &[&str] = &["memory-profile", "memory_profile"];

/// Every field a group or bench may carry (both spellings of each).
const KNOWN: &[&str] = &[
    "name",
    "group",
    "samples",
    "warmup",
    "mode",
    "adapter",
    "protocol_latency",
    "protocol-latency",
    "app_latency",
    "app-latency",
    "bandwidth",
    "app_bandwidth",
    "app-bandwidth",
    "upload-size",
    "upload_size",
    "download-size",
    "download_size",
    "defer-decryption",
    "defer_decryption",
    "memory-profile",
    "memory_profile",
    "reveal-all",
    "reveal_all",
    "proxy",
    "tls",
    "suite",
    "reveal",
    "target",
    "jitter",
    "app_jitter",
    "app-jitter",
    "loss",
    "app_loss",
    "app-loss",
];

impl Config {
    /// Read and parse a file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.display().to_string(),
            line: 0,
            field: String::new(),
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(&text, path)
    }

    /// Parse configuration text; `path` is used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let p = Parser {
            text,
            file: path.display().to_string(),
        };
        p.run(path)
    }
}

/// Field values collected from one table, with the line of each.
#[derive(Default, Clone)]
struct Layer {
    values: BTreeMap<&'static str, (Value, usize)>,
}

struct Parser<'a> {
    text: &'a str,
    file: String,
}

impl<'a> Parser<'a> {
    fn line_of(&self, span: Option<std::ops::Range<usize>>) -> usize {
        match span {
            Some(r) => {
                let end = r.start.min(self.text.len());
                1 + self.text.as_bytes()[..end]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
            }
            None => 0,
        }
    }

    fn err(&self, line: usize, field: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: self.file.clone(),
            line,
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn run(&self, path: &Path) -> Result<Config, ConfigError> {
        let doc = ImDocument::parse(self.text).map_err(|e| {
            let line = self.line_of(e.span());
            self.err(line, "", format!("TOML syntax: {}", e.message()))
        })?;
        let root = doc.as_table();
        let mut warnings = Vec::new();
        let mut top = Layer::default();
        let mut groups: BTreeMap<String, (Layer, usize)> = BTreeMap::new();
        let mut bench_tables: Vec<(&Table, usize)> = Vec::new();
        let mut adapters = BTreeMap::new();
        adapters.insert("curl".to_string(), AdapterSpec::curl());

        for (key, item) in root.iter() {
            let kline = self.line_of(root.key(key).and_then(|k| k.span()));
            match key {
                "group" | "groups" => {
                    let arr = item.as_array_of_tables().ok_or_else(|| {
                        self.err(kline, key, "must be an array of tables: write [[group]]")
                    })?;
                    for t in arr.iter() {
                        let line = self.line_of(t.span());
                        let layer = self.layer(t, line, &mut warnings, true)?;
                        let name = match layer.values.get("name") {
                            Some((v, l)) => v
                                .as_str()
                                .ok_or_else(|| self.err(*l, "name", "must be a string"))?
                                .to_string(),
                            None => return Err(self.err(line, "name", "missing in [[group]]")),
                        };
                        if groups.contains_key(&name) {
                            return Err(self.err(
                                line,
                                "name",
                                format!("group `{name}` defined twice"),
                            ));
                        }
                        groups.insert(name, (layer, line));
                    }
                }
                "bench" | "benches" => {
                    let arr = item.as_array_of_tables().ok_or_else(|| {
                        self.err(kline, key, "must be an array of tables: write [[bench]]")
                    })?;
                    for t in arr.iter() {
                        bench_tables.push((t, self.line_of(t.span())));
                    }
                }
                "adapter" => {
                    let t = item.as_table().ok_or_else(|| {
                        self.err(kline, key, "must be a table: write [adapter.NAME]")
                    })?;
                    for (name, a) in t.iter() {
                        let line = self.line_of(t.key(name).and_then(|k| k.span()));
                        let spec = self.adapter(name, a, line, &mut warnings)?;
                        adapters.insert(name.to_string(), spec);
                    }
                }
                _ => {
                    if let Some(v) = item.as_value() {
                        match KNOWN.iter().find(|k| **k == key) {
                            Some(k) if *k != "name" && *k != "group" => {
                                top.values.insert(canonical(k), (v.clone(), kline));
                            }
                            _ => warnings.push(format!(
                                "{}:{kline}: unknown top-level field `{key}` ignored",
                                self.file
                            )),
                        }
                    } else {
                        warnings.push(format!(
                            "{}:{kline}: unknown table `{key}` ignored",
                            self.file
                        ));
                    }
                }
            }
        }

        if bench_tables.is_empty() {
            return Err(self.err(0, "bench", "no [[bench]] entries in the file"));
        }
        let mut benches = Vec::new();
        let mut seen = BTreeMap::new();
        for (t, line) in bench_tables {
            let layer = self.layer(t, line, &mut warnings, false)?;
            let group = match layer.values.get("group") {
                Some((v, l)) => Some(
                    v.as_str()
                        .ok_or_else(|| self.err(*l, "group", "must be a string"))?
                        .to_string(),
                ),
                None => None,
            };
            let mut merged = top.clone();
            if let Some(g) = &group {
                let (gl, _) = groups.get(g).ok_or_else(|| {
                    let l = layer.values.get("group").map(|x| x.1).unwrap_or(line);
                    self.err(l, "group", format!("no [[group]] named `{g}`"))
                })?;
                // A group's `name` is the group's, not the bench's.
                merged.values.extend(
                    gl.values
                        .iter()
                        .filter(|(k, _)| **k != "name")
                        .map(|(k, v)| (*k, v.clone())),
                );
            }
            merged.values.extend(layer.values.clone());
            let mut spec = self.resolve(&merged, group, line, &adapters)?;
            if !layer.values.contains_key("name") {
                let base = spec.name.clone();
                let mut k = 2;
                while seen.contains_key(&(spec.group.clone(), spec.name.clone())) {
                    spec.name = format!("{base}-{k}");
                    k += 1;
                }
            }
            let key = (spec.group.clone(), spec.name.clone());
            if let Some(prev) = seen.insert(key, line) {
                return Err(self.err(
                    line,
                    "name",
                    format!(
                        "bench `{}` in group `{}` already defined on line {prev}",
                        spec.name, spec.group
                    ),
                ));
            }
            benches.push(spec);
        }
        Ok(Config {
            path: path.to_path_buf(),
            benches,
            adapters,
            warnings,
        })
    }

    /// Collect the known fields of one table, warning about unknown ones.
    fn layer(
        &self,
        t: &Table,
        table_line: usize,
        warnings: &mut Vec<String>,
        is_group: bool,
    ) -> Result<Layer, ConfigError> {
        let mut layer = Layer::default();
        for (key, item) in t.iter() {
            let line = self.line_of(t.key(key).and_then(|k| k.span()));
            let line = if line == 0 { table_line } else { line };
            let Some(known) = KNOWN.iter().find(|k| **k == key) else {
                let what = if is_group { "[[group]]" } else { "[[bench]]" };
                warnings.push(format!(
                    "{}:{line}: unknown field `{key}` in {what} ignored",
                    self.file
                ));
                continue;
            };
            if is_group && *known == "group" {
                return Err(self.err(line, key, "a [[group]] cannot name a group"));
            }
            if TLSN_IGNORED.contains(known) {
                warnings.push(format!(
                    "{}:{line}: field `{key}` accepted for TLSNotary compatibility; \
                     peak memory is always measured from outside",
                    self.file
                ));
            }
            let v = item
                .as_value()
                .ok_or_else(|| self.err(line, key, "must be a value, not a table"))?;
            // Store under the underscore spelling so both spellings merge.
            let canon = canonical(known);
            layer.values.insert(canon, (v.clone(), line));
        }
        Ok(layer)
    }

    fn adapter(
        &self,
        name: &str,
        item: &Item,
        line: usize,
        warnings: &mut Vec<String>,
    ) -> Result<AdapterSpec, ConfigError> {
        let t = item
            .as_table_like()
            .ok_or_else(|| self.err(line, name, "an adapter must be a table"))?;
        let argv = |field: &str| -> Result<Option<Vec<String>>, ConfigError> {
            let Some(v) = t.get(field) else {
                return Ok(None);
            };
            let arr = v.as_array().ok_or_else(|| {
                self.err(
                    line,
                    &format!("adapter.{name}.{field}"),
                    "must be an array of strings (argv)",
                )
            })?;
            let mut out = Vec::new();
            for x in arr.iter() {
                out.push(
                    x.as_str()
                        .ok_or_else(|| {
                            self.err(
                                line,
                                &format!("adapter.{name}.{field}"),
                                "must contain only strings",
                            )
                        })?
                        .to_string(),
                );
            }
            if out.is_empty() {
                return Err(self.err(
                    line,
                    &format!("adapter.{name}.{field}"),
                    "must not be empty",
                ));
            }
            Ok(Some(out))
        };
        let prover = argv("prover")?
            .ok_or_else(|| self.err(line, &format!("adapter.{name}.prover"), "missing"))?;
        let verifier = argv("verifier")?;
        let field = |f: &str| format!("adapter.{name}.{f}");
        let text = |f: &str| -> Result<Option<&str>, ConfigError> {
            match t.get(f) {
                None => Ok(None),
                Some(v) => v
                    .as_str()
                    .map(Some)
                    .ok_or_else(|| self.err(line, &field(f), "must be a string")),
            }
        };
        let topology = match text("topology")? {
            // `direct`: the prover connects; with a verifier that is MPC.
            None | Some("direct") if verifier.is_some() => PeerTopology::Mpc,
            None | Some("direct") | Some("plain") => PeerTopology::Plain,
            Some("mpc") => PeerTopology::Mpc,
            Some("proxy") => PeerTopology::Proxy,
            Some(other) => {
                return Err(self.err(
                    line,
                    &field("topology"),
                    format!("`{other}` is not `proxy`, `mpc`, `direct` or `plain`"),
                ))
            }
        };
        if topology != PeerTopology::Plain && verifier.is_none() {
            return Err(self.err(
                line,
                &field("verifier"),
                format!(
                    "a {}-topology adapter needs a verifier command",
                    topology.as_str()
                ),
            ));
        }
        if topology == PeerTopology::Plain && verifier.is_some() {
            return Err(self.err(
                line,
                &field("topology"),
                "`plain` means no verifier; use `proxy` or `mpc` (or `direct`)",
            ));
        }
        let verdict = match text("verdict")? {
            None | Some("event") => VerdictRule::Event,
            Some("exit") => VerdictRule::Exit,
            Some(other) => {
                return Err(self.err(
                    line,
                    &field("verdict"),
                    format!("`{other}` is not `event` or `exit`"),
                ))
            }
        };
        let verdict_timeout_secs = match t.get("verdict_timeout").or(t.get("verdict-timeout")) {
            None => DEFAULT_VERDICT_TIMEOUT_SECS,
            Some(v) => v
                .as_integer()
                .map(|i| i as f64)
                .or(v.as_float())
                .filter(|x| x.is_finite() && *x > 0.0 && *x <= 3600.0)
                .ok_or_else(|| {
                    self.err(
                        line,
                        &field("verdict_timeout"),
                        "must be a number of seconds in (0, 3600]",
                    )
                })?,
        };
        for (k, _) in t.iter() {
            if !ADAPTER_KNOWN.contains(&k) {
                warnings.push(format!(
                    "{}:{line}: unknown field `{k}` in [adapter.{name}] ignored",
                    self.file
                ));
            }
        }
        Ok(AdapterSpec {
            name: name.to_string(),
            prover,
            verifier,
            topology,
            verdict,
            verdict_timeout_secs,
        })
    }

    fn resolve(
        &self,
        l: &Layer,
        group: Option<String>,
        line: usize,
        adapters: &BTreeMap<String, AdapterSpec>,
    ) -> Result<BenchSpec, ConfigError> {
        let num = |field: &'static str, default: Option<f64>| -> Result<f64, ConfigError> {
            match l.values.get(field) {
                Some((v, vl)) => {
                    let x = match v {
                        Value::Integer(i) => *i.value() as f64,
                        Value::Float(f) => *f.value(),
                        _ => return Err(self.err(*vl, field, "must be a number")),
                    };
                    if !x.is_finite() || x < 0.0 {
                        return Err(self.err(*vl, field, format!("must be >= 0, got {x}")));
                    }
                    Ok(x)
                }
                None => default.ok_or_else(|| {
                    self.err(
                        line,
                        field,
                        "missing (set it in the [[bench]], its [[group]] or at the top)",
                    )
                }),
            }
        };
        let boolean = |field: &'static str, default: bool| -> Result<bool, ConfigError> {
            match l.values.get(field) {
                Some((Value::Boolean(b), _)) => Ok(*b.value()),
                Some((_, vl)) => Err(self.err(*vl, field, "must be true or false")),
                None => Ok(default),
            }
        };
        let string = |field: &'static str| -> Result<Option<(String, usize)>, ConfigError> {
            match l.values.get(field) {
                Some((Value::String(s), vl)) => Ok(Some((s.value().clone(), *vl))),
                Some((_, vl)) => Err(self.err(*vl, field, "must be a string")),
                None => Ok(None),
            }
        };
        let count =
            |field: &'static str, default: Option<f64>, min: f64| -> Result<f64, ConfigError> {
                let x = num(field, default)?;
                if x.fract() != 0.0 || x < min {
                    let vl = l.values.get(field).map(|v| v.1).unwrap_or(line);
                    return Err(self.err(vl, field, format!("must be a whole number >= {min}")));
                }
                Ok(x)
            };

        let samples = count("samples", Some(10.0), 1.0)? as u32;
        let warmup = count("warmup", Some(1.0), 0.0)? as u32;
        let proxy_flag = boolean("proxy", false)?;
        let mode = match string("mode")? {
            Some((m, vl)) => match m.as_str() {
                "proxy" => Mode::Proxy,
                "plain" => Mode::Plain,
                "mpc" => Mode::Mpc,
                other => {
                    return Err(self.err(
                        vl,
                        "mode",
                        format!("unknown mode `{other}` (expected proxy, mpc or plain)"),
                    ))
                }
            },
            // TLSNotary: `proxy = true` selects proxy mode, MPC otherwise.
            None if proxy_flag => Mode::Proxy,
            None => Mode::Mpc,
        };
        if let (Some((_, vl)), true) = (l.values.get("proxy"), mode != Mode::Proxy && proxy_flag) {
            return Err(self.err(
                *vl,
                "proxy",
                format!("`proxy = true` contradicts `mode = \"{}\"`", mode.as_str()),
            ));
        }
        let adapter = match string("adapter")? {
            Some((a, vl)) => {
                if !adapters.contains_key(&a) {
                    return Err(self.err(
                        vl,
                        "adapter",
                        format!("no adapter named `{a}` (define [adapter.{a}])"),
                    ));
                }
                Some(a)
            }
            None => None,
        };
        let bandwidth = num("bandwidth", None)?;
        if bandwidth <= 0.0 {
            let vl = l.values.get("bandwidth").map(|v| v.1).unwrap_or(line);
            return Err(self.err(vl, "bandwidth", "must be > 0 Mbps"));
        }
        let app_bandwidth = num("app_bandwidth", Some(bandwidth))?;
        if app_bandwidth <= 0.0 {
            let vl = l.values.get("app_bandwidth").map(|v| v.1).unwrap_or(line);
            return Err(self.err(vl, "app_bandwidth", "must be > 0 Mbps"));
        }
        let loss = num("loss", Some(0.0))?;
        let app_loss = num("app_loss", Some(0.0))?;
        for (f, x) in [("loss", loss), ("app_loss", app_loss)] {
            if x >= 100.0 {
                let vl = l.values.get(f).map(|v| v.1).unwrap_or(line);
                return Err(self.err(vl, f, "must be a percentage below 100"));
            }
        }
        let protocol = LinkSpec {
            rtt_ms: num("protocol_latency", None)?,
            bandwidth_mbps: bandwidth,
            jitter_ms: num("jitter", Some(0.0))?,
            loss_percent: loss,
        };
        let app = LinkSpec {
            rtt_ms: num("app_latency", Some(protocol.rtt_ms))?,
            bandwidth_mbps: app_bandwidth,
            jitter_ms: num("app_jitter", Some(0.0))?,
            loss_percent: app_loss,
        };
        let upload_size = count("upload_size", None, 0.0)? as usize;
        let download_size = count("download_size", None, 0.0)? as usize;
        const MAX_SIZE: usize = 1 << 30;
        for (f, x) in [
            ("upload_size", upload_size),
            ("download_size", download_size),
        ] {
            if x > MAX_SIZE {
                let vl = l.values.get(f).map(|v| v.1).unwrap_or(line);
                return Err(self.err(vl, f, "must be at most 1 GiB"));
            }
        }
        let tls = match string("tls")? {
            None => OfferedVersion::Any,
            Some((s, vl)) => match s.as_str() {
                "any" => OfferedVersion::Any,
                "1.2" | "tls12" | "TLS1.2" => OfferedVersion::V12,
                "1.3" | "tls13" | "TLS1.3" => OfferedVersion::V13,
                other => {
                    return Err(self.err(
                        vl,
                        "tls",
                        format!("unknown TLS version `{other}` (1.2, 1.3 or any)"),
                    ))
                }
            },
        };
        let suite = string("suite")?.map(|s| s.0);
        let reveal = string("reveal")?.map(|s| s.0);
        let target = match string("target")? {
            None => Target::Native,
            Some((t, vl)) => {
                let t = Target::parse(&t).ok_or_else(|| {
                    self.err(
                        vl,
                        "target",
                        format!("unknown target `{t}` (native or browser)"),
                    )
                })?;
                if t == Target::Browser
                    && (!matches!(mode, Mode::Proxy | Mode::Mpc) || adapter.is_some())
                {
                    return Err(self.err(
                        vl,
                        "target",
                        format!(
                            "the browser prover runs webproof's proxy and MPC modes, not {} \
                             (a browser bench is compared with the native plain baseline)",
                            adapter.as_deref().map_or(mode.as_str(), |_| "an adapter")
                        ),
                    ));
                }
                t
            }
        };
        // TLSNotary's benches are often unnamed: name them by what they set.
        let name = match string("name")? {
            Some((n, _)) => n,
            None => format!(
                "{}-{}mbps-{}ms-{}-{}",
                adapter.as_deref().unwrap_or(mode.as_str()),
                bandwidth,
                protocol.rtt_ms,
                upload_size,
                download_size
            ),
        };
        Ok(BenchSpec {
            group: group.unwrap_or_else(|| "default".into()),
            name,
            line,
            samples,
            warmup,
            mode,
            adapter,
            protocol,
            app,
            upload_size,
            download_size,
            defer_decryption: boolean("defer_decryption", true)?,
            memory_profile: boolean("memory_profile", false)?,
            reveal_all: boolean("reveal_all", false)?,
            tls,
            suite,
            reveal,
            target,
        })
    }
}

fn canonical(k: &'static str) -> &'static str {
    match k {
        "protocol-latency" => "protocol_latency",
        "app-latency" => "app_latency",
        "app-bandwidth" => "app_bandwidth",
        "upload-size" => "upload_size",
        "download-size" => "download_size",
        "defer-decryption" => "defer_decryption",
        "memory-profile" => "memory_profile",
        "reveal-all" => "reveal_all",
        "app-jitter" => "app_jitter",
        "app-loss" => "app_loss",
        other => other,
    }
}

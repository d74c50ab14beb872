//! Config files: the shipped ones and TLSNotary's layout parse; bad ones give
//! errors naming the field and the line.

use std::path::{Path, PathBuf};
use webproof_bench::config::{
    Config, ConfigError, Mode, OfferedVersion, PeerTopology, Target, VerdictRule,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("test.toml"))
}

#[test]
fn shipped_configs_parse() {
    for (file, n) in [
        ("profiles.toml", 12),
        ("bandwidth.toml", 16),
        ("latency.toml", 14),
        ("download.toml", 12),
    ] {
        let c = Config::load(&repo().join("bench").join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.benches.len(), n, "{file}");
        assert!(c.warnings.is_empty(), "{file}: {:?}", c.warnings);
        // Proxy and plain side by side.
        assert!(c.benches.iter().any(|b| b.mode == Mode::Proxy));
        assert!(c.benches.iter().any(|b| b.mode == Mode::Plain));
        if file == "profiles.toml" {
            // MPC mode beside them, on TLS 1.2 and on TLS 1.3.
            for tls in [OfferedVersion::V12, OfferedVersion::V13] {
                let mpc = c
                    .benches
                    .iter()
                    .filter(|b| b.mode == Mode::Mpc && b.tls == tls);
                assert_eq!(mpc.count(), 3, "{tls:?}");
            }
        }
        for b in &c.benches {
            assert_eq!(b.app.rtt_ms, 50.0);
            assert_eq!(b.upload_size, 1024);
        }
    }
    let p = Config::load(&repo().join("bench/profiles.toml")).unwrap();
    let cable = p.benches.iter().find(|b| b.group == "cable").unwrap();
    assert_eq!(
        (cable.protocol.bandwidth_mbps, cable.protocol.rtt_ms),
        (20.0, 20.0)
    );
    assert_eq!(cable.download_size, 2048);
}

#[test]
fn tlsnotary_layout_parses_unchanged() {
    let c = Config::load(&repo().join("bench/tlsnotary-style.toml")).unwrap();
    assert_eq!(c.benches.len(), 4);
    // No `proxy = true`: TLSNotary's default, MPC.
    assert_eq!(c.benches[0].mode, Mode::Mpc);
    assert_eq!(c.benches[1].mode, Mode::Proxy);
    assert_eq!(c.benches[1].protocol.bandwidth_mbps, 10.0);
    assert_eq!(c.benches[1].protocol.rtt_ms, 25.0);
    assert_eq!(c.benches[1].app.rtt_ms, 50.0);
    assert!(c.benches[1].defer_decryption);
    assert_eq!(c.benches[3].download_size, 10240);
    assert_eq!(c.benches[3].upload_size, 2048);
    // Unnamed benches get distinct names.
    assert_ne!(c.benches[1].name, c.benches[2].name);
    // memory-profile is accepted with a warning that says why.
    assert!(
        c.warnings.iter().any(|w| w.contains("memory-profile")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn our_fields_and_overrides() {
    let c = parse(
        r#"
samples = 3
protocol_latency = 40
bandwidth = 20
upload-size = 100
download-size = 200

[[group]]
name = "g"
tls = "1.3"
jitter = 2.5
loss = 1

[[bench]]
group = "g"
mode = "plain"
samples = 7
app_latency = 80
suite = "TLS13_AES_128_GCM_SHA256"
reveal = "0..10"
some-future-field = 1
"#,
    )
    .unwrap();
    let b = &c.benches[0];
    assert_eq!(b.samples, 7);
    assert_eq!(b.tls, OfferedVersion::V13);
    assert_eq!(b.protocol.jitter_ms, 2.5);
    assert_eq!(b.protocol.loss_percent, 1.0);
    assert_eq!(b.app.rtt_ms, 80.0);
    assert_eq!(b.suite.as_deref(), Some("TLS13_AES_128_GCM_SHA256"));
    assert_eq!(b.reveal.as_deref(), Some("0..10"));
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("some-future-field") && w.contains(":21:")),
        "{:?}",
        c.warnings
    );
}

fn err(text: &str) -> ConfigError {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

const BASE: &str = "[[group]]\nname = \"g\"\nprotocol_latency = 20\nbandwidth = 20\nupload-size = 1024\ndownload-size = 2048\n";

#[test]
fn unknown_mode_names_field_and_line() {
    let e = err(&format!(
        "{BASE}\n[[bench]]\ngroup = \"g\"\nmode = \"turbo\"\n"
    ));
    assert_eq!((e.field.as_str(), e.line), ("mode", 10), "{e}");
    assert!(
        e.to_string()
            .contains("test.toml:10: field `mode`: unknown mode `turbo`"),
        "{e}"
    );
}

#[test]
fn negative_bandwidth_names_field_and_line() {
    let e = err("[[bench]]\nname = \"x\"\nprotocol_latency = 20\nbandwidth = -5\nupload-size = 1\ndownload-size = 1\n");
    assert_eq!((e.field.as_str(), e.line), ("bandwidth", 4), "{e}");
    let e = err("[[bench]]\nname = \"x\"\nprotocol_latency = 20\nbandwidth = 0\nupload-size = 1\ndownload-size = 1\n");
    assert_eq!(e.field, "bandwidth");
}

#[test]
fn missing_fields_name_field_and_bench_line() {
    let e = err("[[group]]\nname = \"g\"\nbandwidth = 20\n\n[[bench]]\ngroup = \"g\"\nupload-size = 1\ndownload-size = 1\n");
    assert_eq!((e.field.as_str(), e.line), ("protocol_latency", 5), "{e}");
    let e = err("[[bench]]\nprotocol_latency = 1\nbandwidth = 1\ndownload-size = 1\n");
    assert_eq!(e.field, "upload_size");
    let e = err("[[group]]\nbandwidth = 1\n[[bench]]\nbandwidth = 1\n");
    assert_eq!((e.field.as_str(), e.line), ("name", 1), "{e}");
}

#[test]
fn other_bad_configs() {
    // Wrong types.
    let e = err(&format!(
        "{BASE}[[bench]]\ngroup = \"g\"\nsamples = \"ten\"\n"
    ));
    assert_eq!((e.field.as_str(), e.line), ("samples", 9));
    let e = err(&format!("{BASE}[[bench]]\ngroup = \"g\"\nsamples = 0\n"));
    assert_eq!(e.field, "samples");
    let e = err(&format!(
        "{BASE}[[bench]]\ngroup = \"g\"\ndefer-decryption = 1\n"
    ));
    assert_eq!(e.field, "defer_decryption");
    // Unknown group, adapter, TLS version; contradictions; loss.
    let e = err(&format!("{BASE}[[bench]]\ngroup = \"nope\"\n"));
    assert_eq!((e.field.as_str(), e.line), ("group", 8));
    let e = err(&format!(
        "{BASE}[[bench]]\ngroup = \"g\"\nadapter = \"nope\"\n"
    ));
    assert_eq!(e.field, "adapter");
    let e = err(&format!("{BASE}[[bench]]\ngroup = \"g\"\ntls = \"1.1\"\n"));
    assert_eq!(e.field, "tls");
    let e = err(&format!(
        "{BASE}[[bench]]\ngroup = \"g\"\nmode = \"plain\"\nproxy = true\n"
    ));
    assert_eq!(e.field, "proxy");
    let e = err(&format!("{BASE}[[bench]]\ngroup = \"g\"\nloss = 100\n"));
    assert_eq!(e.field, "loss");
    // Duplicate bench names.
    let e = err(&format!(
        "{BASE}[[bench]]\ngroup = \"g\"\nname = \"a\"\n[[bench]]\ngroup = \"g\"\nname = \"a\"\n"
    ));
    assert_eq!((e.field.as_str(), e.line), ("name", 10));
    // TOML syntax error: line of the error.
    let e = err("[[bench]]\nname = \"x\"\nbandwidth = = 3\n");
    assert_eq!(e.line, 3, "{e}");
    // No benches at all.
    assert_eq!(err(BASE).field, "bench");
    // Huge sizes are refused, not allocated.
    let e = err(&format!(
        "{BASE}[[bench]]\ngroup = \"g\"\ndownload-size = 99999999999999\n"
    ));
    assert_eq!(e.field, "download_size");
    // Adapters: argv must be strings.
    let e = err(&format!(
        "{BASE}[adapter.x]\nprover = [1]\n[[bench]]\ngroup = \"g\"\nadapter = \"x\"\n"
    ));
    assert_eq!(e.field, "adapter.x.prover");
}

#[test]
fn adapters_parse() {
    let c = parse(&format!(
        "{BASE}[adapter.other]\nprover = [\"other-prover\", \"--url\", \"{{url}}\"]\nverifier = [\"other-verifier\", \"--listen\", \"{{verifier_addr}}\"]\ntopology = \"proxy\"\n[[bench]]\ngroup = \"g\"\nadapter = \"other\"\n"
    ))
    .unwrap();
    let a = &c.adapters["other"];
    assert!(a.verifier_connects());
    assert_eq!(a.topology, PeerTopology::Proxy);
    assert_eq!(a.verdict, VerdictRule::Event);
    assert_eq!(a.prover[2], "{url}");
    assert_eq!(c.benches[0].mode_label(), "adapter:other");
}

#[test]
fn adapter_topology_and_verdict_are_recorded() {
    let adapter = |body: &str| {
        parse(&format!(
            "{BASE}[adapter.x]\nprover = [\"p\"]\n{body}\n[[bench]]\ngroup = \"g\"\nadapter = \"x\"\n"
        ))
    };
    // A verifier without a stated topology: the prover connects, so MPC.
    let c = adapter("verifier = [\"v\"]\nverdict = \"exit\"\nverdict_timeout = 5").unwrap();
    let a = &c.adapters["x"];
    assert_eq!(a.topology, PeerTopology::Mpc);
    assert_eq!(a.verdict, VerdictRule::Exit);
    assert_eq!(a.verdict_timeout_secs, 5.0);
    // No verifier: a plain client.
    let c = adapter("").unwrap();
    assert_eq!(c.adapters["x"].topology, PeerTopology::Plain);
    // Contradictions and typos.
    let e = adapter("topology = \"mpc\"").unwrap_err();
    assert_eq!(e.field, "adapter.x.verifier");
    let e = adapter("verifier = [\"v\"]\nverdict = \"maybe\"").unwrap_err();
    assert_eq!(e.field, "adapter.x.verdict");
    let e = adapter("verifier = [\"v\"]\nverdict_timeout = -1").unwrap_err();
    assert_eq!(e.field, "adapter.x.verdict_timeout");
    let c = adapter("verifier = [\"v\"]\nverdikt = \"exit\"").unwrap();
    assert!(
        c.warnings.iter().any(|w| w.contains("verdikt")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn browser_target_parses_and_is_refused_where_it_cannot_run() {
    let c = parse(&format!(
        "{BASE}\n[[bench]]\ngroup = \"g\"\nname = \"b\"\nmode = \"proxy\"\ntarget = \"browser\"\n\n\
         [[bench]]\ngroup = \"g\"\nname = \"n\"\nmode = \"proxy\"\n"
    ))
    .unwrap();
    assert_eq!(c.benches[0].target, Target::Browser);
    assert_eq!(c.benches[1].target, Target::Native);
    // `tls` and `suite` restrict the browser prover's TLS client too.
    let c = parse(&format!(
        "{BASE}\n[[bench]]\ngroup = \"g\"\nname = \"b\"\nmode = \"proxy\"\ntarget = \"browser\"\n\
         tls = \"1.2\"\nsuite = \"ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\"\n"
    ))
    .unwrap();
    let b = &c.benches[0];
    assert_eq!((b.target, b.tls), (Target::Browser, OfferedVersion::V12));
    assert_eq!(
        b.suite.as_deref(),
        Some("ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let e = err(&format!(
        "{BASE}\n[[bench]]\ngroup = \"g\"\nmode = \"plain\"\ntarget = \"browser\"\n"
    ));
    assert_eq!((e.field.as_str(), e.line), ("target", 11), "{e}");
    assert!(
        e.to_string().contains("proxy and MPC modes, not plain"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}\n[[bench]]\ngroup = \"g\"\nmode = \"proxy\"\ntarget = \"wasm\"\n"
    ));
    assert!(e.to_string().contains("unknown target `wasm`"), "{e}");

    // The shipped side-by-side file: native, browser and plain per profile.
    let c = Config::load(&repo().join("bench/browser.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    for g in ["cable", "fiber", "mobile-5g", "redacted-51k"] {
        let of = |t: Target, m: Mode| {
            c.benches
                .iter()
                .filter(|b| b.group == g && b.target == t && b.mode == m)
                .count()
        };
        assert_eq!(of(Target::Browser, Mode::Proxy), 1, "{g}");
        assert_eq!(of(Target::Native, Mode::Proxy), 1, "{g}");
        assert_eq!(of(Target::Native, Mode::Plain), 1, "{g}");
    }
    let r = c
        .benches
        .iter()
        .find(|b| b.group == "redacted-51k")
        .unwrap();
    assert_eq!((r.download_size, r.protocol.rtt_ms), (52224, 25.0));

    // MPC mode in the browser beside the native MPC prover, per profile,
    // over TLS 1.2 and TLS 1.3.
    let c = Config::load(&repo().join("bench/browser-mpc.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.benches.len(), 12);
    for g in ["cable", "fiber", "mobile-5g"] {
        for tls in [OfferedVersion::V12, OfferedVersion::V13] {
            let of = |t: Target| {
                c.benches
                    .iter()
                    .filter(|b| {
                        b.group == g && b.target == t && b.mode == Mode::Mpc && b.tls == tls
                    })
                    .count()
            };
            assert_eq!(
                (of(Target::Browser), of(Target::Native)),
                (1, 1),
                "{g} {tls:?}"
            );
        }
    }
}

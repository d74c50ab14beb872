//! The browser target: the prover as WebAssembly (the npm package
//! `web/package`) on its example page `web/prover/index.html`, in Debian's
//! headless chromium, driven over the DevTools protocol by
//! `web/driver/chromium.mjs` under node.
//!
//! This module owns what is particular to that target: finding and
//! checking the tools it needs (errors say which script provides each),
//! the prover's command line (the page's query carries what `webproof
//! prove` takes as flags, `--tls` and `--suite` included), and reading the driver's report of memory. The
//! runner starts the command in the prover's namespace like any prover;
//! the verifier is `webproof serve --once` over WebSocket. In MPC mode
//! the page reaches the server through `webproof relay`, which the runner
//! starts in the prover's namespace.

use anyhow::{bail, Context};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The driver and the page, relative to the `web/` directory.
const DRIVER: &str = "driver/chromium.mjs";
const PAGE: &str = "/prover/index.html";
/// What `scripts/browser-package.sh` builds, relative to `web/`.
const PACKAGE_FILES: &[&str] = &[
    "package/dist/index.js",
    "package/wasm/webproof_browser_bg.wasm",
];

/// The tools of the browser target, checked to exist.
#[derive(Clone, Debug)]
pub struct BrowserTools {
    pub node: PathBuf,
    pub chromium: PathBuf,
    /// The repository's `web/` directory (driver, page, built package).
    pub web: PathBuf,
}

/// `name` on `PATH`, if any.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The `web/` directory: `explicit`, else `WEBPROOF_WEB_DIR`, else the
/// first `web/` with the driver above the current directory or above the
/// `webproof` binary (`target/release/webproof` sits inside the checkout).
pub fn find_web_dir(explicit: Option<&Path>, exe: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("WEBPROOF_WEB_DIR") {
        return Some(PathBuf::from(p));
    }
    let starts = [
        std::env::current_dir().ok(),
        exe.and_then(|e| e.parent().map(Path::to_path_buf)),
    ];
    starts
        .into_iter()
        .flatten()
        .flat_map(|s| s.ancestors().map(|a| a.join("web")).collect::<Vec<_>>())
        .find(|w| w.join(DRIVER).is_file())
}

impl BrowserTools {
    /// Find node, chromium and the built package, or say what to run.
    pub fn locate(web: Option<&Path>) -> anyhow::Result<BrowserTools> {
        let node = which("node").context(
            "the browser target needs node (it drives chromium): install it with \
             `bash scripts/wasm-tools.sh` (Debian's nodejs and chromium)",
        )?;
        let chromium = match std::env::var_os("CHROMIUM") {
            Some(c) => PathBuf::from(c),
            None => which("chromium").unwrap_or_else(|| PathBuf::from("/usr/bin/chromium")),
        };
        if !chromium.is_file() {
            bail!(
                "the browser target needs Debian's chromium ({} not found): install it with \
                 `bash scripts/wasm-tools.sh`, or set CHROMIUM to a chromium binary",
                chromium.display()
            );
        }
        let web = web.context(
            "the browser target needs the repository's web/ directory (driver, page, package): \
             run from the checkout, or set WEBPROOF_WEB_DIR",
        )?;
        if !web.join(DRIVER).is_file() {
            bail!(
                "{} has no {DRIVER}: WEBPROOF_WEB_DIR must name the repository's web/ directory",
                web.display()
            );
        }
        for f in PACKAGE_FILES {
            if !web.join(f).is_file() {
                bail!(
                    "the browser prover is not built ({} is missing): run \
                     `bash scripts/browser-package.sh` (it installs its tools with \
                     scripts/wasm-tools.sh)",
                    web.join(f).display()
                );
            }
        }
        Ok(BrowserTools {
            node,
            chromium,
            web: web.to_path_buf(),
        })
    }

    /// The driver's command line (program first) for one proof: `node
    /// chromium.mjs --bench --page /prover/index.html?QUERY`.
    pub fn argv(&self, page: &PageArgs<'_>, timeout_secs: u64) -> Vec<String> {
        vec![
            self.node.display().to_string(),
            self.web.join(DRIVER).display().to_string(),
            "--root".into(),
            self.web.display().to_string(),
            "--chromium".into(),
            self.chromium.display().to_string(),
            "--timeout".into(),
            timeout_secs.to_string(),
            "--bench".into(),
            "--page".into(),
            format!("{PAGE}?{}", page.query()),
        ]
    }

    /// `argv` as a command.
    pub fn command(&self, page: &PageArgs<'_>, timeout_secs: u64) -> Command {
        let argv = self.argv(page, timeout_secs);
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]);
        c
    }
}

/// What the page proves: `webproof prove`'s flags as the page's query.
#[derive(Clone, Debug)]
pub struct PageArgs<'a> {
    /// `ws://IP:PORT/v1/session`.
    pub verifier: &'a str,
    pub url: &'a str,
    /// The fixture's CA certificate file (its PEM goes in the query).
    pub ca_pem: &'a str,
    /// `Name: value` request headers.
    pub headers: Vec<String>,
    /// `webproof prove --reveal` items.
    pub reveal: Vec<String>,
    pub expect_response: usize,
    /// `webproof prove --tls` (None: the prover's default, 1.3 or 1.2).
    pub tls: Option<&'a str>,
    /// `webproof prove --suite`.
    pub suite: Option<&'a str>,
    /// MPC mode: the `webproof relay` endpoint the page reaches the
    /// server through (None: proxy mode).
    pub mpc_relay: Option<&'a str>,
}

impl PageArgs<'_> {
    /// The query string, percent-encoded.
    pub fn query(&self) -> String {
        let mut q: Vec<(&str, &str)> = vec![
            ("bench", "1"),
            ("verifier", self.verifier),
            ("url", self.url),
            ("ca", self.ca_pem),
        ];
        for h in &self.headers {
            q.push(("header", h));
        }
        for r in &self.reveal {
            q.push(("reveal", r));
        }
        if let Some(t) = self.tls {
            q.push(("tls", t));
        }
        if let Some(s) = self.suite {
            q.push(("suite", s));
        }
        if let Some(r) = self.mpc_relay {
            q.push(("mode", "mpc"));
            q.push(("relay", r));
        }
        let expect = self.expect_response.to_string();
        q.push(("expect_response", &expect));
        q.iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// Percent-encode everything but RFC 3986's unreserved characters.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Memory the driver reported in its result line (`--bench`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BrowserMemory {
    /// Peak resident set (VmHWM) of the renderer process that ran the page
    /// and its worker, where the prover runs.
    pub renderer_peak_rss_bytes: u64,
    /// The WebAssembly memory after the proof (its peak: it never shrinks).
    pub wasm_memory_bytes: u64,
    /// CPU time of that renderer (page load and compilation included, as
    /// a native prover's includes its start-up), ms.
    pub renderer_cpu_ms: f64,
}

impl BrowserMemory {
    /// From the driver's result object (the last with `stats`).
    pub fn from_objects(objects: &[Value]) -> Option<BrowserMemory> {
        let v = objects
            .iter()
            .rev()
            .find(|v| v.get("stats").is_some_and(Value::is_object))?;
        let n = |x: &Value| x.as_f64().filter(|x| *x >= 0.0).map(|x| x as u64);
        Some(BrowserMemory {
            renderer_peak_rss_bytes: v.get("renderer_peak_rss_bytes").and_then(n).unwrap_or(0),
            wasm_memory_bytes: v["stats"].get("wasm_memory_bytes").and_then(n).unwrap_or(0),
            renderer_cpu_ms: v
                .get("renderer_cpu_ms")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_carries_every_flag_encoded() {
        let p = PageArgs {
            verifier: "ws://198.18.0.2:7047/v1/session",
            url: "https://server.test:8443/bytes?size=2048",
            ca_pem: "-----BEGIN CERTIFICATE-----\nAB+/=\n",
            headers: vec!["X-Padding: xx".into()],
            reveal: vec!["all".into(), "hide-recv:10-11".into()],
            expect_response: 2560,
            tls: None,
            suite: None,
            mpc_relay: None,
        };
        let q = p.query();
        assert!(q.starts_with("bench=1&verifier=ws%3A%2F%2F198.18.0.2%3A7047%2Fv1%2Fsession&"));
        assert!(q.contains("&url=https%3A%2F%2Fserver.test%3A8443%2Fbytes%3Fsize%3D2048&"));
        assert!(q.contains("&ca=-----BEGIN%20CERTIFICATE-----%0AAB%2B%2F%3D%0A&"));
        assert!(q.contains("&header=X-Padding%3A%20xx&reveal=all&reveal=hide-recv%3A10-11&"));
        assert!(q.ends_with("&expect_response=2560"));
        assert!(!q.contains("&tls=") && !q.contains("&suite="), "{q}");
        // The TLS restrictions, as the page passes them to the prover.
        let p = PageArgs {
            tls: Some("1.2"),
            suite: Some("ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
            ..p
        };
        assert!(p
            .query()
            .ends_with("&tls=1.2&suite=ECDHE_ECDSA_WITH_AES_128_GCM_SHA256&expect_response=2560"));
        // MPC mode: the mode and the relay the page reaches the server by.
        let p = PageArgs {
            mpc_relay: Some("ws://127.0.0.1:9/tcp"),
            ..p
        };
        assert!(p
            .query()
            .contains("&mode=mpc&relay=ws%3A%2F%2F127.0.0.1%3A9%2Ftcp&"));
        // MPC over TLS 1.3 (`mpc13-browser`): the version beside the relay.
        let p = PageArgs {
            tls: Some("1.3"),
            suite: None,
            ..p
        };
        assert!(p
            .query()
            .contains("&tls=1.3&mode=mpc&relay=ws%3A%2F%2F127.0.0.1%3A9%2Ftcp&"));
    }

    #[test]
    fn memory_comes_from_the_result_line() {
        let objs = vec![
            serde_json::json!({"event": "start"}),
            serde_json::json!({"ok": true, "renderer_peak_rss_bytes": 123456789, "renderer_cpu_ms": 2500,
                               "stats": {"wasm_memory_bytes": 41943040, "time_total_ms": 900}}),
        ];
        assert_eq!(
            BrowserMemory::from_objects(&objs),
            Some(BrowserMemory {
                renderer_peak_rss_bytes: 123456789,
                wasm_memory_bytes: 41943040,
                renderer_cpu_ms: 2500.0,
            })
        );
        assert_eq!(BrowserMemory::from_objects(&objs[..1]), None);
    }

    #[test]
    fn missing_tools_name_the_script_that_provides_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("driver")).unwrap();
        std::fs::write(dir.path().join(DRIVER), "").unwrap();
        if which("node").is_none() {
            let e = BrowserTools::locate(Some(dir.path())).unwrap_err();
            assert!(e.to_string().contains("scripts/wasm-tools.sh"), "{e}");
            return;
        }
        // node is here; chromium may not be: either error names a script.
        let e = BrowserTools::locate(Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("scripts/browser-package.sh") || e.contains("scripts/wasm-tools.sh"),
            "{e}"
        );
        if Path::new("/usr/bin/chromium").is_file() && std::env::var_os("CHROMIUM").is_none() {
            assert!(e.contains("scripts/browser-package.sh"), "{e}");
            assert!(e.contains("package/dist/index.js"), "{e}");
        }
        let e = BrowserTools::locate(None).unwrap_err().to_string();
        assert!(e.contains("web/") || e.contains("chromium"), "{e}");
    }
}

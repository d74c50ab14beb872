//! Shared by the binary's end-to-end tests: the binary run as a child that
//! is killed when the test ends, and a scratch directory with the fixture
//! HTTPS server running.
#![allow(dead_code)] // each test file uses some of these

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_webproof");

/// A child process killed when the test ends.
pub struct Running {
    pub child: Child,
    lines: BufReader<std::process::ChildStdout>,
}

impl Running {
    /// Start `webproof args` and read its `listening` line.
    pub fn start(args: &[&str]) -> (Self, serde_json::Value) {
        let mut child = Command::new(BIN)
            .args(args)
            .env_remove("WEBPROOF_API_KEY")
            .env_remove("WEBPROOF_SIGNING_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary runs");
        let lines = BufReader::new(child.stdout.take().unwrap());
        let mut run = Running { child, lines };
        let ready = run.next_json();
        assert_eq!(ready["event"], "listening", "{ready}");
        (run, ready)
    }

    /// The next line of its stdout, as JSON.
    pub fn next_json(&mut self) -> serde_json::Value {
        let mut line = String::new();
        self.lines.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory with the fixture server running.
pub struct Setup {
    pub dir: PathBuf,
    _fixture: Running,
    pub port: u16,
}

impl Setup {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("webproof-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fx = dir.join("fx");
        let (fixture, ready) = Running::start(&["fixture", "--cert-dir", fx.to_str().unwrap()]);
        let addr: std::net::SocketAddr = ready["addr"].as_str().unwrap().parse().unwrap();
        Setup {
            dir,
            _fixture: fixture,
            port: addr.port(),
        }
    }

    pub fn ca(&self) -> String {
        self.dir.join("fx/ca.pem").display().to_string()
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    /// `webproof prove` of the fixture's `path` through `verifier`,
    /// trusting the fixture's CA, with `extra` arguments.
    pub fn prove(&self, verifier: &str, path: &str, extra: &[&str]) -> Output {
        let (url, ca) = (self.url(path), self.ca());
        let mut args = vec![
            "prove",
            "--verifier",
            verifier,
            "--url",
            &url,
            "--ca-cert",
            &ca,
        ];
        args.extend(extra);
        webproof(&args)
    }

    /// A verifier trusting the fixture (loopback allowed unless `strict`),
    /// with `extra` arguments; its `listening` line.
    pub fn serve(&self, extra: &[&str], strict: bool) -> (Running, serde_json::Value) {
        let ca = self.ca();
        let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--ca-cert", &ca];
        if !strict {
            args.extend(["--allow-net", "127.0.0.0/8"]);
        }
        args.extend(extra);
        Running::start(&args)
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn webproof(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("WEBPROOF_API_KEY")
        .output()
        .expect("the binary runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

//! A typo in a reveal item fails at the command line, before any network
//! work: the verifier address here is never contacted (nothing listens on
//! it, and a connection attempt would fail differently).

use std::process::Command;
use std::time::{Duration, Instant};

fn webproof(args: &[&str]) -> (bool, String, Duration) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_webproof"))
        .args(args)
        .env_remove("WEBPROOF_API_KEY")
        .output()
        .expect("the binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

#[test]
fn a_reveal_typo_fails_before_any_network_work() {
    let prove = |flag: &str, item: &str| {
        let mut args = vec![
            "prove",
            "--verifier",
            "127.0.0.1:9",
            "--url",
            "https://example.com/",
            flag,
            item,
        ];
        if flag == "--commit-at" {
            args.extend(["--attest", "/nonexistent/bundle.json"]);
        }
        webproof(&args)
    };
    for (flag, item, why) in [
        ("--reveal", "jsn:account", "unknown item"),
        ("--reveal", "recv:10-5", "ends before it starts"),
        ("--reveal", "hide-sent:1", "START-END"),
        ("--commit-at", "header:", "needs a NAME"),
    ] {
        let (ok, stderr, took) = prove(flag, item);
        assert!(!ok, "{flag} {item}");
        assert!(stderr.contains(why), "{flag} {item}: {stderr}");
        assert!(!stderr.contains("127.0.0.1:9"), "{stderr}");
        assert!(took < Duration::from_secs(5), "{took:?}");
    }
    // `present` parses its items the same way.
    let (ok, stderr, _) = webproof(&["present", "/nonexistent", "--reveal", "bdy"]);
    assert!(!ok);
    assert!(stderr.contains("unknown item"), "{stderr}");
}

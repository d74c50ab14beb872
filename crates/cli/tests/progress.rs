//! `prove` tells the user where it is: one line per phase on stderr (a
//! pipe here, so lines, not the terminal's updated line), in order, in
//! both modes; `--quiet` prints none.

mod common;
use common::*;

const STAGES: [&str; 6] = [
    "connected to the verifier",
    "admitted by the verifier",
    "TLS session with the server",
    "response received (",
    "proving",
    "verdict received",
];

/// The progress lines of a `prove` of the fixture's `/json` in `mode`.
fn progress(s: &Setup, mode: &str, extra: &[&str]) -> Vec<String> {
    let (_v, ready) = s.serve(&["--once"], false);
    let connect = format!("127.0.0.1:{}", s.port);
    let mut args = vec!["--mode", mode];
    if mode == "mpc" {
        // MPC mode connects to the server itself: the fixture on loopback.
        args.extend(["--connect", &connect]);
    }
    args.extend(extra);
    let out = s.prove(ready["addr"].as_str().unwrap(), "/json", &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("webproof: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn each_phase_is_reported_in_order_in_both_modes() {
    let s = Setup::new("progress");
    for mode in ["proxy", "mpc"] {
        let lines = progress(&s, mode, &[]);
        assert_eq!(lines.len(), STAGES.len(), "{mode}: {lines:#?}");
        for (line, stage) in lines.iter().zip(STAGES) {
            assert!(line.contains(stage), "{mode}: {line:?} is not {stage:?}");
        }
        let secs: Vec<f64> = lines
            .iter()
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(secs.windows(2).all(|w| w[0] <= w[1]), "{mode}: {secs:?}");
    }
    assert!(progress(&s, "proxy", &["--quiet"]).is_empty());
}

//! A reader that stops reading (`webproof keygen --json | head -1`) ends
//! the command quietly with the status a shell gives `SIGPIPE`, not with
//! a panic. The pipe's read end is closed before the command writes, so
//! the write fails every time.

use std::process::{Command, Stdio};

#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    let dir = std::env::temp_dir().join(format!("webproof-closed-stdout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("k.key");
    let mut child = Command::new(env!("CARGO_BIN_EXE_webproof"))
        .args(["keygen", "--json", "-o"])
        .arg(&key)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    drop(child.stdout.take()); // the reader is gone before anything is written
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::fs::remove_dir_all(&dir).ok();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
}

//! Golden vectors: a test renders what it pins (message encodings, digests
//! of a seeded transcript) as text and [`check`]s it against a file kept in
//! the repository, so that a change to the wire shows up as a failing test
//! that names the line, instead of as a peer of another version failing
//! mid-session. Tests only (feature `golden`); it reads and writes files.
//!
//! When a change to the wire is intended, bump `PROTOCOL_VERSION` and run
//! the test again with `WEBPROOF_BLESS=1`, which rewrites the file.

/// Compare `actual` with the file at `path`; with `WEBPROOF_BLESS=1`,
/// write it there instead. Panics with the first differing line.
pub fn check(path: &std::path::Path, actual: &str) {
    if std::env::var_os("WEBPROOF_BLESS").is_some_and(|v| v == "1") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("the golden directory");
        }
        std::fs::write(path, actual).expect("writing the golden file");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run the test with WEBPROOF_BLESS=1 to write it",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let n = (0..e.len().max(a.len()))
        .find(|&i| e.get(i) != a.get(i))
        .unwrap_or(0);
    panic!(
        "{} line {}: the wire changed\n  expected: {}\n  actual:   {}\n\
         If this is intended, bump PROTOCOL_VERSION (crates/proxy/src/protocol.rs), \
         note it in docs/protocol/versions.md and rerun with WEBPROOF_BLESS=1.",
        path.display(),
        n + 1,
        e.get(n).unwrap_or(&"(nothing)"),
        a.get(n).unwrap_or(&"(nothing)"),
    );
}

//! The prover's record of verifiers that cheated in MPC mode.
//!
//! Dual execution keeps an MPC verifier from rewriting the request or
//! reading hidden request bytes (`webproof_mpc_tls::rec::dual`), but a verifier can
//! still try a selective failure on the session's ephemeral inputs and
//! escape the audit of its garbling by stopping after the prover's `Close`
//! (`SECURITY.md`, MPC mode point 4). This record keeps such a verifier
//! from getting another session: [`crate::mpc`] appends a verifier that
//! stopped or failed the audit, and refuses to start a session with a
//! recorded one unless the user overrides it.
//!
//! The file is JSON lines, one [`FlaggedVerifier`] per line, appended to
//! and never rewritten (a user removes a line to forgive a verifier). It
//! holds no secret. This module owns the file's format and its lookups;
//! it never decides who cheated.

use crate::{NetError, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One recorded verifier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlaggedVerifier {
    /// The verifier's address as the prover dialled it (lowercased).
    pub verifier: String,
    /// What identifies the verifier besides its address (its attestation
    /// key id once the link authenticates one); `None`: the address only.
    #[serde(default)]
    pub identity: Option<String>,
    /// When it was recorded, Unix seconds.
    pub time: u64,
    /// What it did, in words.
    pub reason: String,
}

impl FlaggedVerifier {
    /// Whether this record names the verifier at `verifier` with `identity`:
    /// the same address, or the same identity where both have one.
    pub fn matches(&self, verifier: &str, identity: Option<&str>) -> bool {
        self.verifier == normalize(verifier)
            || matches!((&self.identity, identity), (Some(a), Some(b)) if a == b)
    }
}

/// The address as recorded: trimmed, lowercased.
fn normalize(verifier: &str) -> String {
    verifier.trim().to_ascii_lowercase()
}

/// The record file.
#[derive(Clone, Debug)]
pub struct FlaggedVerifiers {
    path: PathBuf,
}

/// File name under the data directory.
const FILE_NAME: &str = "flagged-verifiers.jsonl";

impl FlaggedVerifiers {
    /// The record at `path` (it need not exist yet).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        FlaggedVerifiers { path: path.into() }
    }

    /// `$XDG_DATA_HOME/webproof/flagged-verifiers.jsonl`, else
    /// `$HOME/.local/share/webproof/...` (`%APPDATA%\webproof\...` on
    /// Windows); `None` if none of these is set.
    pub fn default_path() -> Option<PathBuf> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let base = var("XDG_DATA_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".local").join("share")))
            .or_else(|| var("APPDATA"))?;
        Some(base.join("webproof").join(FILE_NAME))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every record, in file order; a missing file is an empty record.
    /// A line that does not parse is an error naming it: a damaged file
    /// must not silently forgive a verifier.
    pub fn load(&self) -> Result<Vec<FlaggedVerifier>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io_error("reading", e)),
        };
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| {
                    NetError::Setup(format!(
                        "line {} of the flagged-verifier record {} does not parse ({e}); \
                         fix or remove that line",
                        i + 1,
                        self.path.display()
                    ))
                })
            })
            .collect()
    }

    /// The first record naming `verifier` / `identity`, if any.
    pub fn find(&self, verifier: &str, identity: Option<&str>) -> Result<Option<FlaggedVerifier>> {
        Ok(self
            .load()?
            .into_iter()
            .find(|f| f.matches(verifier, identity)))
    }

    /// Append a record for `verifier` (creating the file and its
    /// directory); returns it.
    pub fn record(
        &self,
        verifier: &str,
        identity: Option<&str>,
        reason: &str,
    ) -> Result<FlaggedVerifier> {
        let entry = FlaggedVerifier {
            verifier: normalize(verifier),
            identity: identity.map(str::to_string),
            time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            reason: reason.to_string(),
        };
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| self.io_error("creating the folder of", e))?;
        }
        let mut line = serde_json::to_string(&entry).expect("plain data serializes");
        line.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .map_err(|e| self.io_error("writing", e))?;
        Ok(entry)
    }

    fn io_error(&self, doing: &str, source: std::io::Error) -> NetError {
        NetError::Io {
            context: format!(
                "{doing} the flagged-verifier record {}",
                self.path.display()
            ),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_appended_and_found() {
        let dir = tempfile::tempdir().unwrap();
        let rec = FlaggedVerifiers::at(dir.path().join("sub").join(FILE_NAME));
        assert_eq!(rec.load().unwrap(), Vec::new());
        assert_eq!(rec.find("v.example:7000", None).unwrap(), None);
        rec.record("V.example:7000 ", None, "stopped after Close")
            .unwrap();
        rec.record("other:1", Some("key-1"), "failed the audit")
            .unwrap();
        let all = rec.load().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].verifier, "v.example:7000");
        let found = rec.find("v.example:7000", None).unwrap().unwrap();
        assert_eq!(found.reason, "stopped after Close");
        // The same identity at another address is the same verifier.
        assert!(rec.find("moved:2", Some("key-1")).unwrap().is_some());
        assert!(rec.find("moved:2", Some("key-2")).unwrap().is_none());
        assert!(rec.find("moved:2", None).unwrap().is_none());
        // One JSON object per line.
        let text = std::fs::read_to_string(rec.path()).unwrap();
        assert_eq!(text.lines().count(), 2);
    }

    #[test]
    fn a_damaged_line_is_an_error_not_a_pardon() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(
            &path,
            "{\"verifier\":\"a:1\",\"time\":0,\"reason\":\"x\"}\nnot json\n",
        )
        .unwrap();
        let e = FlaggedVerifiers::at(&path).find("b:2", None).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}

//! The output side of the adapter contract (`bench/ADAPTERS.md`): what the
//! harness reads from a prover's and a verifier's stdout.
//!
//! This module owns parsing only: finding JSON objects in a stream of lines
//! (one-line or pretty-printed, mixed with log text), and turning them into
//! the events and figures the runner uses. It never decides what a figure
//! means for a sample; the runner does.

use serde_json::Value;

/// Largest pretty-printed object kept while waiting for it to close, so a
/// stray `{` in log output cannot make the harness buffer forever.
const MAX_PENDING: usize = 16 << 20;

/// Finds JSON objects in stdout fed line by line. An object starts on a line
/// whose first non-blank character is `{` and may span lines; anything else
/// is log text and is skipped.
#[derive(Default, Debug)]
pub struct JsonScanner {
    pending: String,
}

impl JsonScanner {
    /// Feed one line (without its newline); returns the objects it completes.
    pub fn push(&mut self, line: &str) -> Vec<Value> {
        let mut out = Vec::new();
        if self.pending.is_empty() {
            if !line.trim_start().starts_with('{') {
                return out;
            }
        } else {
            self.pending.push('\n');
        }
        self.pending.push_str(line);
        loop {
            let mut it = serde_json::Deserializer::from_str(&self.pending).into_iter::<Value>();
            match it.next() {
                Some(Ok(v)) => {
                    let used = it.byte_offset();
                    if v.is_object() {
                        out.push(v);
                    }
                    let rest = self.pending[used..].trim_start().to_string();
                    self.pending = if rest.starts_with('{') {
                        rest
                    } else {
                        String::new()
                    };
                    if self.pending.is_empty() {
                        break;
                    }
                }
                Some(Err(e)) if e.is_eof() && self.pending.len() < MAX_PENDING => break,
                // Not JSON after all (or too long): drop it, but a `{` line
                // inside it may still start a real object.
                Some(Err(_)) | None => {
                    let restart = self
                        .pending
                        .split_once('\n')
                        .map(|(_, rest)| rest.to_string())
                        .unwrap_or_default();
                    self.pending.clear();
                    for l in restart.lines() {
                        out.extend(self.push(l));
                    }
                    break;
                }
            }
        }
        out
    }

    /// Every object in a finished stream.
    pub fn scan<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Value> {
        let mut s = JsonScanner::default();
        lines.into_iter().flat_map(|l| s.push(l)).collect()
    }
}

/// A verifier's decision about one session.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub accepted: bool,
    /// Why, as the verifier put it (empty if it gave no reason).
    pub reason: String,
}

/// `{"event":"verdict","accepted":BOOL,...}`; `reason` (or `error`) is kept.
/// An event without a boolean `accepted` is a rejection: a verdict must be
/// explicit.
pub fn verdict_of(v: &Value) -> Option<Verdict> {
    if v.get("event")?.as_str()? != "verdict" {
        return None;
    }
    let reason = ["reason", "error"]
        .iter()
        .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
        .unwrap_or("")
        .to_string();
    Some(match v.get("accepted").and_then(|x| x.as_bool()) {
        Some(accepted) => Verdict { accepted, reason },
        None => Verdict {
            accepted: false,
            reason: format!("verdict event without a boolean `accepted`: {v}"),
        },
    })
}

/// `{"event":"start"}` from a prover: its start-up is over.
pub fn is_start(v: &Value) -> bool {
    v.get("event").and_then(|x| x.as_str()) == Some("start")
}

/// What a prover reported about its session: the last object with a
/// `stats` member. Every field is optional.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reported {
    pub time_preprocess_ms: Option<f64>,
    pub time_online_ms: Option<f64>,
    pub time_finalize_ms: Option<f64>,
    pub time_total_ms: Option<f64>,
    /// webproof's split of its online phase: the TLS session, then the proof.
    pub time_tls_ms: Option<f64>,
    pub time_proof_ms: Option<f64>,
    pub uploaded_preprocess: Option<u64>,
    pub downloaded_preprocess: Option<u64>,
    pub uploaded_online: Option<u64>,
    pub downloaded_online: Option<u64>,
    pub uploaded_finalize: Option<u64>,
    pub downloaded_finalize: Option<u64>,
    /// Negotiated, as the prover saw it.
    pub tls_version: Option<String>,
    pub suite: Option<String>,
}

impl Reported {
    /// Phase fields of the stats object, and `tls_version` / `suite` from
    /// the stats object or the object around it (or, for webproof's
    /// `prove --json`, its `verified` member).
    pub fn from_objects(objects: &[Value]) -> Option<Reported> {
        let v = objects
            .iter()
            .rev()
            .find(|v| v.get("stats").is_some_and(|x| x.is_object()))?;
        let st = &v["stats"];
        let f = |k: &str| st.get(k).and_then(|x| x.as_f64()).filter(|x| *x >= 0.0);
        let n = |k: &str| f(k).map(|x| x as u64);
        let text = |k: &str| {
            [st, v, &v["verified"]]
                .iter()
                .find_map(|o| o.get(k).and_then(|x| x.as_str()))
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        Some(Reported {
            time_preprocess_ms: f("time_preprocess_ms"),
            time_online_ms: f("time_online_ms"),
            time_finalize_ms: f("time_finalize_ms"),
            time_total_ms: f("time_total_ms"),
            time_tls_ms: f("time_tls_ms"),
            time_proof_ms: f("time_proof_ms"),
            uploaded_preprocess: n("uploaded_preprocess"),
            downloaded_preprocess: n("downloaded_preprocess"),
            uploaded_online: n("uploaded_online"),
            downloaded_online: n("downloaded_online"),
            uploaded_finalize: n("uploaded_finalize"),
            downloaded_finalize: n("downloaded_finalize"),
            tls_version: text("tls_version").map(|s| normalize_tls(&s)),
            suite: text("suite").or_else(|| text("cipher_suite")),
        })
    }

    /// Whether any byte count was reported.
    pub fn has_bytes(&self) -> bool {
        [
            self.uploaded_preprocess,
            self.downloaded_preprocess,
            self.uploaded_online,
            self.downloaded_online,
            self.uploaded_finalize,
            self.downloaded_finalize,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// `TLSv1_3`, `TLS1.3`, `tls13`, `1.3` -> `1.3` (likewise 1.2).
pub fn normalize_tls(s: &str) -> String {
    let digits: String = s.chars().filter(|c| c.is_ascii_digit()).collect();
    match digits.as_str() {
        "13" => "1.3".into(),
        "12" => "1.2".into(),
        _ => s.to_string(),
    }
}

/// What the harness's fixture server saw of one session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerSession {
    pub tls_version: String,
    pub suite: String,
    /// Bytes of the request the server read (head and body).
    pub request_bytes: u64,
    /// Bytes of the response it wrote (head and body).
    pub response_bytes: u64,
}

/// `{"event":"session",...}` from the fixture server.
pub fn server_session_of(v: &Value) -> Option<ServerSession> {
    if v.get("event")?.as_str()? != "session" {
        return None;
    }
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let n = |k: &str| v.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    Some(ServerSession {
        tls_version: normalize_tls(&s("tls_version")),
        suite: s("suite"),
        request_bytes: n("request_bytes"),
        response_bytes: n("response_bytes"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_and_pretty_objects_among_logs() {
        let text = "starting up\n{\"event\":\"listening\",\"addr\":\"1.2.3.4:5\"}\n\
                    log: {not json\n{\n  \"stats\": {\n    \"time_online_ms\": 12.5,\n    \
                    \"uploaded_online\": 100\n  },\n  \"tls_version\": \"TLSv1_3\"\n}\ndone";
        let objs = JsonScanner::scan(text.lines());
        assert_eq!(objs.len(), 2, "{objs:?}");
        let r = Reported::from_objects(&objs).unwrap();
        assert_eq!(r.time_online_ms, Some(12.5));
        assert_eq!(r.uploaded_online, Some(100));
        assert_eq!(r.tls_version.as_deref(), Some("1.3"));
        assert_eq!(r.time_finalize_ms, None);
    }

    #[test]
    fn a_broken_object_does_not_hide_the_next() {
        let objs = JsonScanner::scan(["{ oops", "{\"event\":\"verdict\",\"accepted\":true}"]);
        assert_eq!(objs.len(), 1);
        assert!(verdict_of(&objs[0]).unwrap().accepted);
        // Two objects on one line.
        let objs = JsonScanner::scan(["{\"a\":1} {\"b\":2}"]);
        assert_eq!(objs.len(), 2);
    }

    #[test]
    fn verdicts_must_be_explicit() {
        let v = |s: &str| verdict_of(&serde_json::from_str(s).unwrap());
        assert_eq!(
            v(r#"{"event":"verdict","accepted":false,"reason":"bad tag"}"#),
            Some(Verdict {
                accepted: false,
                reason: "bad tag".into()
            })
        );
        assert!(
            !v(r#"{"event":"verdict","accepted":"yes"}"#)
                .unwrap()
                .accepted
        );
        assert!(!v(r#"{"event":"verdict"}"#).unwrap().accepted);
        assert_eq!(v(r#"{"event":"listening"}"#), None);
    }

    #[test]
    fn webproof_prove_json_is_read() {
        let line = r#"{"verified":{"tls_version":"TLS1.2","cipher_suite":"ECDHE_RSA_AES128_GCM"},"stats":{"time_preprocess_ms":3,"time_online_ms":50,"time_total_ms":53,"uploaded_preprocess":10,"downloaded_preprocess":20,"uploaded_online":30,"downloaded_online":40,"time_tls_ms":20,"time_proof_ms":30}}"#;
        let r = Reported::from_objects(&JsonScanner::scan([line])).unwrap();
        assert_eq!(r.tls_version.as_deref(), Some("1.2"));
        assert_eq!(r.suite.as_deref(), Some("ECDHE_RSA_AES128_GCM"));
        assert_eq!(r.time_proof_ms, Some(30.0));
        assert!(r.has_bytes());
    }
}

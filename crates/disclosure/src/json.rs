//! Proven JSON paths: `json:PATH` shows not only a value but that it sits at
//! `PATH` of the HTTP body, with no duplicate key along the way.
//!
//! ## What the prover shows
//!
//! For a [`JsonClaim`] the prover reveals the body's **skeleton**: every
//! byte except the contents of strings and the scalar tokens (numbers,
//! `true`, `false`, `null`) that are neither the value nor a key of an
//! object on the path. So the verifier sees every structural character
//! (`{ } [ ] : ,`), all whitespace between tokens, the quotes of every
//! string, every key of every object on the path (and so all siblings of
//! each key on the path), escape sequences (`\` and the byte after it), and
//! the value at the path whole. It also reveals the whole head of the
//! message and every HTTP framing byte before the body, so the verifier
//! finds the body itself ([`message_bodies`]): a head, then `Content-Length`
//! bytes, or chunks, or the rest of the data.
//!
//! ## What the verifier checks
//!
//! It walks its own view of the body (revealed bytes, hidden bytes `None`)
//! as JSON, in one linear pass ([`walk`]). A hidden byte is allowed in two
//! places only: inside a string opened by a revealed quote (a *string
//! byte*), or in a bare token of value position that ends at a revealed
//! delimiter (a *token byte*). Anything else (a hidden byte where a key, a
//! `:` or a `,` must be) refuses the claim. The hidden string bytes and
//! token bytes it finds must equal the claim's `hidden_strings` and
//! `hidden_tokens`, which the ZK statement constrained *before* the proof
//! (the statement is fixed before the view exists, so the prover announces
//! the lists and the verifier checks them afterwards): string bytes avoid
//! [`STRING_FORBIDDEN`] (`"` and `\`), token bytes avoid
//! [`TOKEN_FORBIDDEN`] (the structural characters, `"`, `\` and JSON
//! whitespace). Then `path` must lead to exactly `value`, every key of every
//! object on the path must be revealed whole, and no two of an object's keys
//! may be equal once unescaped.
//!
//! ## Why the verified path is the true path
//!
//! Let B be the true body. A JSON lexer is a small state machine: outside
//! strings each byte is a delimiter (structural, whitespace), a quote that
//! opens a string, or part of a bare token; inside a string each byte is
//! content, a backslash that makes the next byte content, or the closing
//! quote. Claim: at every byte the lexer on B is in the state the verifier's
//! walk assigns. Revealed bytes are B's bytes, so both take the same step on
//! them. A hidden string byte is not `"` or `\` (proven): in B it is plain
//! content, so the string neither ends nor starts an escape there, as in the
//! walk; a byte after a revealed backslash is consumed as escaped content by
//! both. A hidden token byte is none of the delimiters, quote or backslash
//! (proven): in B it continues the bare token, and the token ends at the
//! same revealed delimiter. (A `\u` escape whose `u` is hidden is read by
//! the walk as four bytes of content; in valid JSON those are hex digits,
//! which neither end a string nor escape.) By induction B has the same
//! tokens at the same positions as the walk, hence — if B is valid JSON —
//! the same tree: the same objects and arrays with the same members, the
//! same (revealed) keys on the path, the same element counts, and the same
//! value bytes at the path. If B is not valid JSON, a conforming parser
//! rejects it; nothing is claimed about invalid bodies except that their
//! revealed bytes are as shown (the verifier checks revealed tokens and
//! escapes for validity, hidden ones cannot be).
//!
//! The body is the verifier's own: it parses every message head from the
//! start of the direction in its view, with the framing bytes revealed, and
//! the claim's `body` must be one of the bodies found. A hidden head byte
//! stops the parse, so a JSON claim needs the heads before it revealed.
//!
//! A response body without `Content-Length` or chunking ends with the data
//! the verifier kept, and the prover's `Close` may cut the server's last
//! records: the true body may be longer than the view's. Past the view's
//! end a valid body can only have more whitespace, unless the view's body
//! ends inside a bare token (`1000` of `1000000`). So the walk refuses such
//! a body whose top-level value is a bare token ending at the end of the
//! data ([`Body::until_close`]).
//!
//! ## Costs and limits
//!
//! Hidden body bytes are constrained, so the proof computes their
//! keystream (as for an opened byte) and a few AND gates per byte
//! (`webproof_tlsproof::ByteClass`). At most [`MAX_JSON_CLAIMS`] claims per
//! session, paths of at most [`MAX_PATH_DEPTH`] components and
//! [`MAX_PATH_LEN`] bytes, nesting of at most [`MAX_NESTING`]; the walk is
//! linear in the body.

use crate::disclosure::{normalize, Disclosure, Range};
use crate::error::{malformed, DisclosureError, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use webproof_tls::Direction;

/// Claims per session.
pub const MAX_JSON_CLAIMS: usize = 32;
/// Components of a path.
pub const MAX_PATH_DEPTH: usize = 64;
/// Bytes of a path.
pub const MAX_PATH_LEN: usize = 4096;
/// Nesting of arrays and objects in a claimed body.
pub const MAX_NESTING: usize = 128;
/// Values a hidden string byte may not take.
pub const STRING_FORBIDDEN: [u8; 2] = [b'"', b'\\'];
/// Values a hidden token byte may not take: JSON whitespace, `"`, `,`,
/// `:`, `[`, `\`, `]`, `{`, `}` (increasing).
pub const TOKEN_FORBIDDEN: [u8; 12] = [
    b'\t', b'\n', b'\r', b' ', b'"', b',', b':', b'[', b'\\', b']', b'{', b'}',
];

/// The prover's claim that the value at `path` of a JSON body is `value`.
/// Every field is checked by the verifier against its own view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonClaim {
    /// The direction of the message.
    pub direction: Direction,
    /// The raw HTTP body (chunk framing included), in the direction's
    /// application data: one of the bodies the verifier finds.
    pub body: Range,
    /// Dot-separated path: object keys, or decimal indices into arrays.
    /// Empty: the whole body.
    pub path: String,
    /// The value's bytes in the application data: its first byte to one
    /// past its last (chunk framing in between, if any, is not part of it).
    pub value: Range,
    /// Hidden bytes inside strings of the body, as sorted, merged ranges:
    /// proven in the ZK statement to avoid [`STRING_FORBIDDEN`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_strings: Vec<Range>,
    /// Hidden bytes of bare tokens of the body, as sorted, merged ranges:
    /// proven to avoid [`TOKEN_FORBIDDEN`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_tokens: Vec<Range>,
}

/// A JSON path the verifier checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifiedJson {
    /// The path, as claimed.
    pub path: String,
    /// The direction of the message.
    pub direction: Direction,
    /// The value's bytes in the application data.
    pub value: Range,
    /// The value's JSON text (chunk framing removed).
    pub value_text: String,
}

/// A message body as the verifier finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    /// The raw body, chunk framing included.
    pub raw: Range,
    /// The body's data: one range per chunk, or the whole body.
    pub data: Vec<Range>,
    /// Delimited by the end of the data (no `Content-Length`, not chunked):
    /// a cut of the server's records could have shortened it.
    pub until_close: bool,
}

/// The bodies of the HTTP/1.x messages in `view` (requests if `direction`
/// is sent, responses if received), judged on revealed bytes only, from the
/// start: every head must be revealed whole, and chunk-size lines too. Stops
/// at the first message whose framing is not fully known (hidden, truncated
/// or unsupported), so every body returned is where the data really has it.
pub fn message_bodies(view: &[Option<u8>], direction: Direction) -> Vec<Body> {
    let response = direction == Direction::Received;
    // The revealed line at `from` without its CRLF, and the next line's start.
    let line = |from: usize| -> Option<(Vec<u8>, usize)> {
        let mut out = Vec::new();
        let mut i = from;
        loop {
            match view.get(i)? {
                None => return None,
                Some(b'\n') if out.last() == Some(&b'\r') => {
                    out.pop();
                    return Some((out, i + 1));
                }
                &Some(b) => out.push(b),
            }
            i += 1;
        }
    };
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < view.len() {
        let Some((start, mut p)) = line(pos) else {
            break;
        };
        let status = if response {
            match parse_status(&start) {
                Some(s) => Some(s),
                None => break,
            }
        } else {
            if !(start.ends_with(b" HTTP/1.1") || start.ends_with(b" HTTP/1.0"))
                || start.split(|&b| b == b' ').count() != 3
            {
                break;
            }
            None
        };
        let mut content_length: Option<usize> = None;
        let mut chunked = false;
        let mut other_coding = false;
        let mut ok = true;
        loop {
            let Some((h, next)) = line(p) else {
                ok = false;
                break;
            };
            p = next;
            if h.is_empty() {
                break;
            }
            let Some(colon) = h.iter().position(|&b| b == b':') else {
                ok = false;
                break;
            };
            let name = h[..colon].to_ascii_lowercase();
            let value = core::str::from_utf8(&h[colon + 1..]).map(str::trim);
            match (name.as_slice(), value) {
                (b"content-length", Ok(v)) => match (v.parse::<usize>(), content_length) {
                    (Ok(n), None) => content_length = Some(n),
                    (Ok(n), Some(m)) if n == m => {}
                    _ => ok = false,
                },
                (b"transfer-encoding", Ok(v)) => {
                    chunked = v
                        .rsplit(',')
                        .next()
                        .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
                    other_coding = !chunked;
                }
                (b"content-length" | b"transfer-encoding", Err(_)) => ok = false,
                _ => {}
            }
            if !ok {
                break;
            }
        }
        if !ok || other_coding {
            break;
        }
        let body_start = p;
        let no_body = match status {
            Some(101) => break,
            Some(s) => (100..200).contains(&s) || s == 204 || s == 304,
            None => false,
        };
        let mut until_close = false;
        let (end, data) = if no_body {
            (p, Vec::new())
        } else if chunked {
            let mut data = Vec::new();
            let end = loop {
                let Some((size_line, next)) = line(p) else {
                    break None;
                };
                let size = core::str::from_utf8(&size_line)
                    .ok()
                    .and_then(|t| usize::from_str_radix(t.split(';').next()?.trim(), 16).ok());
                let Some(size) = size else { break None };
                if size == 0 {
                    let mut q = next;
                    loop {
                        match line(q) {
                            Some((t, n)) => {
                                q = n;
                                if t.is_empty() {
                                    break;
                                }
                            }
                            None => return out,
                        }
                    }
                    break Some(q);
                }
                let Some(data_end) = next.checked_add(size) else {
                    break None;
                };
                match (view.get(data_end), view.get(data_end.saturating_add(1))) {
                    (Some(Some(b'\r')), Some(Some(b'\n'))) => {
                        data.push(Range::new(next, data_end));
                        p = data_end + 2;
                    }
                    _ => break None,
                }
            };
            match end {
                Some(e) => (e, data),
                None => break,
            }
        } else if let Some(n) = content_length {
            match p.checked_add(n) {
                Some(e) if e <= view.len() => (e, vec![Range::new(p, e)]),
                _ => break,
            }
        } else if response {
            until_close = true;
            (view.len(), vec![Range::new(p, view.len())])
        } else {
            (p, Vec::new())
        };
        let data: Vec<Range> = data.into_iter().filter(|r| !r.is_empty()).collect();
        out.push(Body {
            raw: Range::new(body_start, end),
            data,
            until_close,
        });
        pos = end;
    }
    out
}

fn parse_status(line: &[u8]) -> Option<u16> {
    let rest = line
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| line.strip_prefix(b"HTTP/1.0 "))?;
    let code = rest.get(..3)?;
    if !code.iter().all(u8::is_ascii_digit) || rest.get(3).is_some_and(|&b| b != b' ') {
        return None;
    }
    core::str::from_utf8(code).ok()?.parse().ok()
}

/// What a walk of a body established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walk {
    /// Hidden string bytes, as merged ranges of the application data.
    pub hidden_strings: Vec<Range>,
    /// Hidden token bytes, as merged ranges of the application data.
    pub hidden_tokens: Vec<Range>,
    /// The value at the path, in the application data.
    pub value: Range,
    /// The value's text.
    pub value_text: String,
    /// Bytes (application data) the prover may hide: string contents
    /// (escape sequences excepted) and tokens, outside the value and the
    /// keys of the objects on the path. Only meaningful on a full view.
    pub hideable: Vec<Range>,
}

/// Split a path into components (bounded).
fn path_parts(path: &str) -> Result<Vec<&str>> {
    if path.len() > MAX_PATH_LEN {
        return Err(bad(format!(
            "a JSON path of {} bytes (at most {MAX_PATH_LEN})",
            path.len()
        )));
    }
    let parts: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('.').collect()
    };
    if parts.len() > MAX_PATH_DEPTH {
        return Err(bad(format!(
            "a JSON path of {} components (at most {MAX_PATH_DEPTH})",
            parts.len()
        )));
    }
    Ok(parts)
}

fn bad(detail: impl Into<String>) -> DisclosureError {
    malformed("JSON claim", detail)
}

/// Walk `body` of `view` as JSON along `path` (see the module docs). Linear
/// in the body.
pub fn walk(view: &[Option<u8>], body: &Body, path: &str) -> Result<Walk> {
    let parts = path_parts(path)?;
    let mut v: Vec<(Option<u8>, usize)> = Vec::new();
    for r in &body.data {
        let slice = view
            .get(r.start..r.end)
            .ok_or_else(|| bad("the body is outside the data"))?;
        v.extend(slice.iter().copied().zip(r.start..r.end));
    }
    let mut w = Walker {
        v: &v,
        pos: 0,
        depth: 0,
        strings: Vec::new(),
        tokens: Vec::new(),
        hideable: Vec::new(),
        found: None,
    };
    w.ws();
    let bare = !matches!(w.peek(), Some(Some(b'{' | b'[' | b'"')));
    w.value(Some(&parts), false)?;
    // Soundness: a body that ends with the data may have been cut by the
    // prover's `Close`; a bare token ending there could continue past the
    // cut (`1000` of `1000000`), while a container or string cannot (only
    // whitespace may follow it in valid JSON). See the module docs.
    if body.until_close && bare && w.pos == v.len() {
        return Err(w.err(
            "a number or literal ends a body that ends with the connection (a cut could have shortened it)",
        ));
    }
    w.ws();
    if w.pos != v.len() {
        return Err(w.err("bytes after the JSON value"));
    }
    let (a, b) = w.found.ok_or_else(|| bad("the path was not reached"))?;
    let bytes: Vec<u8> = v[a..b]
        .iter()
        .map(|(x, _)| *x)
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| bad(format!("the value at {path:?} is not revealed whole")))?;
    let value_text =
        String::from_utf8(bytes).map_err(|_| bad(format!("the value at {path:?} is not UTF-8")))?;
    let runs = |mut p: Vec<usize>| -> Vec<Range> {
        p.sort_unstable();
        normalize(p.into_iter().map(|x| Range::new(x, x + 1)).collect())
    };
    let hideable = runs(std::mem::take(&mut w.hideable));
    Ok(Walk {
        hidden_strings: runs(w.strings),
        hidden_tokens: runs(w.tokens),
        value: Range::new(v[a].1, v[b - 1].1 + 1),
        value_text,
        hideable,
    })
}

struct Walker<'a> {
    /// The body's data: byte (None: hidden) and its position in the direction.
    v: &'a [(Option<u8>, usize)],
    pos: usize,
    depth: usize,
    strings: Vec<usize>,
    tokens: Vec<usize>,
    hideable: Vec<usize>,
    /// The value at the path, as indices into `v`.
    found: Option<(usize, usize)>,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

impl Walker<'_> {
    fn err(&self, d: &str) -> DisclosureError {
        bad(format!("{d} at body byte {}", self.pos))
    }

    fn peek(&self) -> Option<Option<u8>> {
        self.v.get(self.pos).map(|x| x.0)
    }

    fn ws(&mut self) {
        while let Some(Some(b)) = self.peek() {
            if !is_ws(b) {
                break;
            }
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<()> {
        if self.peek() == Some(Some(c)) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected a revealed {:?}", c as char)))
        }
    }

    /// A string at the cursor. `keep`: its content must stay revealed (a key
    /// on the path, or inside the value). Returns the raw content (`None`
    /// if some of it is hidden).
    fn string(&mut self, keep: bool) -> Result<Option<Vec<u8>>> {
        self.eat(b'"')?;
        let mut raw = Some(Vec::new());
        loop {
            let Some(&(b, at)) = self.v.get(self.pos) else {
                return Err(self.err("unterminated string"));
            };
            self.pos += 1;
            match b {
                None => {
                    self.strings.push(at);
                    raw = None;
                }
                Some(b'"') => return Ok(raw),
                Some(b'\\') => {
                    let Some(&(e, at_e)) = self.v.get(self.pos) else {
                        return Err(self.err("unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        None => {
                            self.strings.push(at_e);
                            raw = None;
                        }
                        Some(c) if b"\"\\/bfnrtu".contains(&c) => {
                            if let Some(r) = raw.as_mut() {
                                r.extend_from_slice(&[b'\\', c]);
                            }
                        }
                        Some(_) => return Err(self.err("invalid escape")),
                    }
                }
                Some(c) if c < 0x20 => return Err(self.err("control character in a string")),
                Some(c) => {
                    if !keep {
                        self.hideable.push(at);
                    }
                    if let Some(r) = raw.as_mut() {
                        r.push(c);
                    }
                }
            }
        }
    }

    /// A bare token (number or literal) at the cursor.
    fn token(&mut self, keep: bool) -> Result<()> {
        let start = self.pos;
        let mut whole = true;
        while let Some(&(b, at)) = self.v.get(self.pos) {
            match b {
                None => {
                    self.tokens.push(at);
                    whole = false;
                }
                Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.') => {
                    if !keep {
                        self.hideable.push(at);
                    }
                }
                Some(c) if TOKEN_FORBIDDEN.contains(&c) => break,
                Some(_) => return Err(self.err("invalid character in a value")),
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.err("expected a value"));
        }
        if whole {
            let t: Vec<u8> = self.v[start..self.pos]
                .iter()
                .map(|x| x.0.unwrap_or(0))
                .collect();
            if !valid_token(&t) {
                return Err(self.err("invalid number or literal"));
            }
        }
        Ok(())
    }

    /// The value at the cursor. `path`: `Some(rest)` if this value is on
    /// the path with `rest` to go. `inside`: within the value at the path.
    fn value(&mut self, path: Option<&[&str]>, inside: bool) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err("nested too deeply"));
        }
        let start = self.pos;
        let target = path.is_some_and(|p| p.is_empty());
        let keep = inside || target;
        // Components still to follow below this value.
        let rest = path.filter(|p| !p.is_empty());
        match self.peek() {
            Some(Some(b'{')) => {
                self.pos += 1;
                self.ws();
                let mut keys: HashSet<Vec<u8>> = HashSet::new();
                let mut hit = false;
                if self.peek() == Some(Some(b'}')) {
                    self.pos += 1;
                } else {
                    loop {
                        self.ws();
                        let raw = self.string(keep || rest.is_some())?;
                        let mut child = None;
                        if let Some(p) = rest {
                            let raw = raw.ok_or_else(|| {
                                self.err("a key of an object on the path is not revealed whole")
                            })?;
                            let key = unescape(&raw).ok_or_else(|| self.err("invalid key"))?;
                            if key == p[0].as_bytes() {
                                hit = true;
                                child = Some(&p[1..]);
                            }
                            if !keys.insert(key) {
                                return Err(self.err("duplicate key in an object on the path"));
                            }
                        }
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                        self.value(child, keep)?;
                        self.ws();
                        match self.peek() {
                            Some(Some(b',')) => self.pos += 1,
                            Some(Some(b'}')) => {
                                self.pos += 1;
                                break;
                            }
                            _ => return Err(self.err("expected a revealed ',' or '}'")),
                        }
                    }
                }
                if rest.is_some() && !hit {
                    return Err(self.err("the path's key is not in its object"));
                }
            }
            Some(Some(b'[')) => {
                self.pos += 1;
                self.ws();
                let want = match rest {
                    Some(p) => Some(
                        parse_index(p[0])
                            .ok_or_else(|| self.err("an array on the path needs an index"))?,
                    ),
                    None => None,
                };
                let mut count = 0usize;
                if self.peek() == Some(Some(b']')) {
                    self.pos += 1;
                } else {
                    loop {
                        self.ws();
                        let child = match (rest, want) {
                            (Some(p), Some(i)) if i == count => Some(&p[1..]),
                            _ => None,
                        };
                        self.value(child, keep)?;
                        count += 1;
                        self.ws();
                        match self.peek() {
                            Some(Some(b',')) => self.pos += 1,
                            Some(Some(b']')) => {
                                self.pos += 1;
                                break;
                            }
                            _ => return Err(self.err("expected a revealed ',' or ']'")),
                        }
                    }
                }
                if want.is_some_and(|i| i >= count) {
                    return Err(self.err("the path's index is past the array's end"));
                }
            }
            Some(Some(b'"')) => {
                if rest.is_some() {
                    return Err(self.err("the path goes below a string"));
                }
                self.string(keep)?;
            }
            Some(_) => {
                if rest.is_some() {
                    return Err(self.err("the path goes below a scalar"));
                }
                self.token(keep)?;
            }
            None => return Err(self.err("unexpected end")),
        }
        if target {
            self.found = Some((start, self.pos));
        }
        self.depth -= 1;
        Ok(())
    }
}

/// An array index: decimal, no sign, no leading zero.
fn parse_index(s: &str) -> Option<usize> {
    if s.is_empty() || (s.len() > 1 && s.starts_with('0')) || !s.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    s.parse().ok()
}

/// A JSON number, `true`, `false` or `null`.
fn valid_token(t: &[u8]) -> bool {
    if matches!(t, b"true" | b"false" | b"null") {
        return true;
    }
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while t.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > s
    };
    if t.get(i) == Some(&b'-') {
        i += 1;
    }
    if t.get(i) == Some(&b'0') {
        i += 1;
    } else if !digits(&mut i) {
        return false;
    }
    if t.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == t.len()
}

/// A string's raw content, unescaped to UTF-8 bytes; `None` if invalid.
fn unescape(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    let hex4 = |i: usize| -> Option<u32> {
        let h = raw.get(i..i + 4)?;
        u32::from_str_radix(core::str::from_utf8(h).ok()?, 16).ok()
    };
    while i < raw.len() {
        if raw[i] != b'\\' {
            out.push(raw[i]);
            i += 1;
            continue;
        }
        let c = *raw.get(i + 1)?;
        i += 2;
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = hex4(i)?;
                i += 4;
                let cp = if (0xD800..0xDC00).contains(&hi) {
                    if raw.get(i..i + 2)? != b"\\u" {
                        return None;
                    }
                    let lo = hex4(i + 2)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return None;
                    }
                    i += 6;
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else {
                    hi
                };
                char::from_u32(cp)?
            }
            _ => return None,
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }
    core::str::from_utf8(&out).ok()?;
    Some(out)
}

/// Before the proof: the claims' shape, against a direction of `totals`
/// bytes (sent, received). Returns, per direction, the hidden string and
/// token ranges to constrain (merged over all claims).
pub fn claim_constraints(claims: &[JsonClaim], totals: [usize; 2]) -> Result<[[Vec<Range>; 2]; 2]> {
    if claims.len() > MAX_JSON_CLAIMS {
        return Err(bad(format!(
            "{} JSON claims (at most {MAX_JSON_CLAIMS})",
            claims.len()
        )));
    }
    let mut out: [[Vec<Range>; 2]; 2] = Default::default();
    for c in claims {
        let d = c.direction as usize;
        let total = totals[d];
        path_parts(&c.path)?;
        for r in [&c.body, &c.value] {
            if r.start >= r.end || r.end > total {
                return Err(bad(
                    "a JSON claim's body or value is empty or outside the data",
                ));
            }
        }
        if c.value.start < c.body.start || c.value.end > c.body.end {
            return Err(bad("a JSON claim's value is outside its body"));
        }
        for (k, list) in [&c.hidden_strings, &c.hidden_tokens]
            .into_iter()
            .enumerate()
        {
            crate::disclosure::check_ranges(list, total)?;
            if list
                .iter()
                .any(|r| r.start < c.body.start || r.end > c.body.end)
            {
                return Err(bad("a JSON claim's hidden bytes are outside its body"));
            }
            out[d][k].extend_from_slice(list);
        }
    }
    for dir in &mut out {
        for list in dir.iter_mut() {
            *list = normalize(std::mem::take(list));
        }
    }
    Ok(out)
}

/// After the proof: check every claim against the verified view (`sent`,
/// `received`: application data, hidden bytes `None`).
pub fn verify_claims(
    sent: &[Option<u8>],
    received: &[Option<u8>],
    claims: &[JsonClaim],
) -> Result<Vec<VerifiedJson>> {
    let bodies = [
        message_bodies(sent, Direction::Sent),
        message_bodies(received, Direction::Received),
    ];
    claims
        .iter()
        .map(|c| {
            let view = match c.direction {
                Direction::Sent => sent,
                Direction::Received => received,
            };
            let body = bodies[c.direction as usize]
                .iter()
                .find(|b| b.raw == c.body)
                .ok_or_else(|| {
                    bad("a JSON claim's body is not a message body the verifier finds")
                })?;
            let w = walk(view, body, &c.path)?;
            if w.value != c.value {
                return Err(bad(format!(
                    "the value at {:?} is {}..{}, not {}..{}",
                    c.path, w.value.start, w.value.end, c.value.start, c.value.end
                )));
            }
            if w.hidden_strings != c.hidden_strings || w.hidden_tokens != c.hidden_tokens {
                return Err(bad(
                    "a JSON claim's hidden bytes differ from those its body has",
                ));
            }
            Ok(VerifiedJson {
                path: c.path.clone(),
                direction: c.direction,
                value: w.value,
                value_text: w.value_text,
            })
        })
        .collect()
}

/// A direction's data with the disclosed bytes shown.
fn view_of(data: &[u8], ranges: &[Range]) -> Vec<Option<u8>> {
    let mut v = vec![None; data.len()];
    for r in ranges {
        for i in r.start..r.end.min(data.len()) {
            v[i] = Some(data[i]);
        }
    }
    v
}

/// Prover side: the ranges of `received` to reveal for `path` in the
/// first response's body: its head, the skeleton of its body, the keys of
/// the objects on the path and the value.
pub fn skeleton_ranges(received: &[u8], path: &str) -> Result<Vec<Range>> {
    let full: Vec<Option<u8>> = received.iter().map(|&b| Some(b)).collect();
    let body = message_bodies(&full, Direction::Received)
        .into_iter()
        .next()
        .ok_or_else(|| bad("no HTTP response with a known body length"))?;
    let w = walk(&full, &body, path)?;
    Ok(crate::disclosure::complement(&w.hideable, body.raw.end))
}

/// Prover side: the claims for the `json:PATH` items of `items`, checked on
/// the prover's own view of `disclosure` (exactly what the verifier will
/// run), so a disclosure that hides part of a skeleton fails here. In a
/// session of several requests an item applies to every response, or to
/// the one its `N/` names ([`crate::http::RevealItem::In`]).
pub fn claims_from_items(
    items: &[crate::http::RevealItem],
    sent: &[u8],
    received: &[u8],
    disclosure: &Disclosure,
) -> Result<Vec<JsonClaim>> {
    use crate::http::RevealItem;
    // (exchange from 1 or every one, path)
    let paths: Vec<(Option<usize>, &str)> = items
        .iter()
        .filter_map(|i| match i {
            RevealItem::Json(p) => Some((None, p.as_str())),
            RevealItem::In(n, inner) => match &**inner {
                RevealItem::Json(p) => Some((Some(*n), p.as_str())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let spans = crate::exchange::split(sent, received)?;
    let view = view_of(received, &disclosure.received);
    let bodies = message_bodies(&view, Direction::Received);
    let mut claims = Vec::new();
    for (k, (_, response)) in spans.iter().enumerate() {
        for &(_, p) in paths.iter().filter(|(n, _)| n.is_none_or(|n| n == k + 1)) {
            let body = bodies
                .iter()
                .find(|b| response.start <= b.raw.start && b.raw.start <= response.end)
                .ok_or_else(|| {
                    bad(if k == 0 {
                        "the first response's framing is not revealed".to_string()
                    } else {
                        format!(
                            "the framing of response {} or of one before it is not revealed",
                            k + 1
                        )
                    })
                })?;
            let w = walk(&view, body, p)?;
            claims.push(JsonClaim {
                direction: Direction::Received,
                body: body.raw,
                path: p.to_string(),
                value: w.value,
                hidden_strings: w.hidden_strings,
                hidden_tokens: w.hidden_tokens,
            });
        }
    }
    let sent_view = view_of(sent, &disclosure.sent);
    verify_claims(&sent_view, &view, &claims)?;
    claim_constraints(&claims, [sent.len(), received.len()])?;
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::disclosure_from_items;

    const REQ: &[u8] = b"GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n";

    fn response(body: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    }

    fn items(paths: &[&str]) -> Vec<crate::http::RevealItem> {
        paths
            .iter()
            .map(|p| crate::http::RevealItem::Json(p.to_string()))
            .collect()
    }

    /// The prover's disclosure and claims for `paths`, and the verifier's view.
    fn prove(resp: &[u8], paths: &[&str]) -> Result<(Vec<JsonClaim>, Vec<Option<u8>>)> {
        let it = items(paths);
        let d = disclosure_from_items(&it, REQ, resp)?;
        let claims = claims_from_items(&it, REQ, resp, &d)?;
        Ok((claims, view_of(resp, &d.received)))
    }

    fn text(view: &[Option<u8>]) -> String {
        view.iter().map(|b| b.map_or('*', |c| c as char)).collect()
    }

    #[test]
    fn skeleton_is_revealed_and_scalars_hidden() {
        let body = br#"{"user":{"name":"ann","age":41,"tags":["x",true]},"id":"a\"b","n":null}"#;
        let resp = response(body);
        let (claims, view) = prove(&resp, &["user.age"]).unwrap();
        let head = resp.len() - body.len();
        assert_eq!(
            &text(&view)[head..],
            r#"{"user":{"name":"***","age":41,"tags":["*",****]},"id":"*\"*","n":****}"#
        );
        let ok = verify_claims(&[], &view, &claims).unwrap();
        assert_eq!(ok[0].value_text, "41");
        assert_eq!(ok[0].path, "user.age");
        let at = head + body.windows(2).position(|w| w == b"41").unwrap();
        assert_eq!(ok[0].value, Range::new(at, at + 2));
        // Objects and arrays as values, the whole body, an array index.
        let (claims, view) = prove(&resp, &["user.tags", "", "user.tags.1"]).unwrap();
        let ok = verify_claims(&[], &view, &claims).unwrap();
        assert_eq!(ok[0].value_text, r#"["x",true]"#);
        assert_eq!(ok[1].value_text.as_bytes(), body);
        assert_eq!(ok[2].value_text, "true");
    }

    /// Keys are compared unescaped: `"a"` and `"\u0061"` are duplicates.
    #[test]
    fn duplicate_keys_on_the_path_are_refused() {
        for body in [
            &br#"{"amount":1,"amount":5}"#[..],
            br#"{"x":{"amount":1,"\u0061mount":5}}"#,
            br#"{"x":{"amount":1,"y":2,"amount":5}}"#,
        ] {
            let path = if body.starts_with(b"{\"x\"") {
                "x.amount"
            } else {
                "amount"
            };
            let err = prove(&response(body), &[path]).unwrap_err().to_string();
            assert!(err.contains("duplicate key"), "{err}");
        }
        // Off the path, duplicates are the body's business, not the claim's.
        let (c, v) = prove(&response(br#"{"o":{"k":1,"k":2},"amount":5}"#), &["amount"]).unwrap();
        assert_eq!(verify_claims(&[], &v, &c).unwrap()[0].value_text, "5");
    }

    /// A nested `"amount":5` cannot be claimed as the top-level amount: the
    /// prover's honest claim fails, and a forged claim (the nested value's
    /// range under the top-level path) is refused on any view.
    #[test]
    fn nested_value_claimed_at_top_level_is_refused() {
        let body = br#"{"a":{"amount":5}}"#;
        let resp = response(body);
        assert!(prove(&resp, &["amount"]).is_err());
        let (mut claims, view) = prove(&resp, &["a.amount"]).unwrap();
        verify_claims(&[], &view, &claims).unwrap();
        claims[0].path = "amount".into();
        assert!(verify_claims(&[], &view, &claims).is_err());
        let full: Vec<Option<u8>> = resp.iter().map(|&b| Some(b)).collect();
        let mut full_claims = claims.clone();
        full_claims[0].hidden_strings.clear();
        full_claims[0].hidden_tokens.clear();
        assert!(verify_claims(&[], &full, &full_claims).is_err());
    }

    /// Every field of a claim is checked: a mutation harness should mutate
    /// each of them; here, one mutation of each.
    #[test]
    fn every_claim_field_is_checked() {
        let body = br#"{"n":"ann","list":[1,2,{"k":"v"}],"amount":5}"#;
        let resp = response(body);
        let (claims, view) = prove(&resp, &["list.2.k", "amount"]).unwrap();
        verify_claims(&[], &view, &claims).unwrap();
        let c0 = &claims[1];
        let mut bad: Vec<JsonClaim> = Vec::new();
        let mut m = c0.clone();
        m.direction = Direction::Sent;
        bad.push(m);
        for (s, e) in [(1isize, 0isize), (0, 1), (0, -1), (-1, 0)] {
            let mut m = c0.clone();
            m.body = Range::new(
                (m.body.start as isize + s) as usize,
                (m.body.end as isize + e) as usize,
            );
            bad.push(m);
            let mut m = c0.clone();
            m.value = Range::new(
                (m.value.start as isize + s) as usize,
                (m.value.end as isize + e) as usize,
            );
            bad.push(m);
        }
        for p in [
            "list", "list.2", "amoun", "amount.0", "n", "list.3", "list.01", "",
        ] {
            let mut m = c0.clone();
            m.path = p.into();
            bad.push(m);
        }
        let mut m = c0.clone();
        m.hidden_strings.pop();
        bad.push(m);
        let mut m = c0.clone();
        m.hidden_tokens.clear();
        bad.push(m);
        let mut m = c0.clone();
        m.hidden_tokens.push(Range::new(m.value.start, m.value.end));
        bad.push(m);
        let mut m = c0.clone();
        m.hidden_strings.extend(m.hidden_tokens.clone());
        m.hidden_strings = normalize(m.hidden_strings);
        bad.push(m);
        for m in bad {
            assert!(
                verify_claims(&[], &view, std::slice::from_ref(&m)).is_err(),
                "accepted {m:?}"
            );
        }
    }

    /// Views a cheating prover could produce by hiding other bytes than
    /// the honest skeleton: refused by the walk itself.
    #[test]
    fn hidden_structure_is_refused_by_the_walk() {
        let body = br#"{"a":1,"b":"x","amount":5}"#;
        let resp = response(body);
        let head = resp.len() - body.len();
        let (claims, view) = prove(&resp, &["amount"]).unwrap();
        let c = &claims[0];
        let bodies = message_bodies(&view, Direction::Received);
        for hide in [",", ":", "{", "}", r#""b""#, r#"""#] {
            // Hide the first occurrence (a structural byte or key quote).
            let at = head
                + body
                    .windows(hide.len())
                    .position(|w| w == hide.as_bytes())
                    .unwrap();
            let mut v = view.clone();
            for x in &mut v[at..at + hide.len()] {
                *x = None;
            }
            assert!(walk(&v, &bodies[0], &c.path).is_err(), "hiding {hide:?}");
        }
        // A hidden head byte: the body is not found.
        let mut v = view.clone();
        v[3] = None;
        assert!(message_bodies(&v, Direction::Received).is_empty());
        assert!(verify_claims(&[], &v, &claims).is_err());
        // The prover's own check refuses a disclosure that hides a key on the path.
        let it = items(&["amount"]);
        let mut d = disclosure_from_items(&it, REQ, &resp).unwrap();
        let key = head + 8; // the `b` of "b", a key of the object on the path
        assert_eq!(resp[key], b'b');
        d.hide(Direction::Received, Range::new(key, key + 1), resp.len());
        assert!(claims_from_items(&it, REQ, &resp, &d.normalized()).is_err());
    }

    #[test]
    fn framing_is_the_verifiers_own() {
        // Chunked, split inside a string and inside a number.
        let body = br#"{"user":{"name":"ann","age":41},"k":123456}"#;
        let mut resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for part in [&body[..18], &body[18..39], &body[39..]] {
            resp.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            resp.extend_from_slice(part);
            resp.extend_from_slice(b"\r\n");
        }
        resp.extend_from_slice(b"0\r\n\r\n");
        let (claims, view) = prove(&resp, &["k", "user.age"]).unwrap();
        let ok = verify_claims(&[], &view, &claims).unwrap();
        assert_eq!(ok[0].value_text, "123456");
        // The value spans chunk framing: its range covers it, its text not.
        assert!(ok[0].value.len() > 6);
        assert_eq!(claims[0].hidden_strings.len(), 2, "ann split by a chunk");
        // A second response follows: its body is found after the first.
        let mut two = response(br#"{"x":1}"#);
        let first_len = two.len();
        two.extend_from_slice(&response(br#"{"y":2}"#));
        let full: Vec<Option<u8>> = two.iter().map(|&b| Some(b)).collect();
        let bodies = message_bodies(&full, Direction::Received);
        assert_eq!(bodies.len(), 2);
        assert_eq!(bodies[1].raw.start, two.len() - 7);
        assert!(bodies[0].raw.end == first_len);
        // Requests: the body per Content-Length; none without it.
        let req = b"POST /p HTTP/1.1\r\nContent-Length: 7\r\n\r\n{\"a\":1}GET / HTTP/1.1\r\n\r\n";
        let full: Vec<Option<u8>> = req.iter().map(|&b| Some(b)).collect();
        let bodies = message_bodies(&full, Direction::Sent);
        assert_eq!(bodies.len(), 2);
        assert_eq!(walk(&full, &bodies[0], "a").unwrap().value_text, "1");
        assert!(bodies[1].data.is_empty());
    }

    /// Regression (soundness harness, `json_body_cut_by_close_is_refused`):
    /// a body delimited by the end of the connection, `1000000` sent in two
    /// records, the prover's `Close` cutting the second: the view's body is
    /// `1000`, and the claim `""` = `1000` was accepted. A top-level bare
    /// token ending the data is now refused; containers, strings, trailing
    /// whitespace and length-delimited bodies are not affected.
    #[test]
    fn bare_token_ending_a_body_cut_by_close_is_refused() {
        let head = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
        let full = |body: &[u8]| -> Vec<Option<u8>> {
            head.iter().chain(body).map(|&b| Some(b)).collect()
        };
        for body in [&b"1000"[..], b"  -1.5e3", b"true", b"1000\r\n"] {
            let v = full(body);
            let b = message_bodies(&v, Direction::Received).remove(0);
            assert!(b.until_close);
            let r = walk(&v, &b, "");
            assert_eq!(r.is_err(), !body.ends_with(b"\n"), "{body:?}");
        }
        for body in [&br#"{"a":1000}"#[..], b"[1000]", br#""1000""#] {
            let v = full(body);
            let b = message_bodies(&v, Direction::Received).remove(0);
            assert_eq!(walk(&v, &b, "").unwrap().value_text.as_bytes(), body);
        }
        // The prover's own builder refuses it too; with a length it is fine.
        assert!(skeleton_ranges(&[&head[..], b"1000"].concat(), "").is_err());
        let (claims, view) = prove(&response(b"1000"), &[""]).unwrap();
        assert_eq!(
            verify_claims(&[], &view, &claims).unwrap()[0].value_text,
            "1000"
        );
    }

    #[test]
    fn limits_and_tokens() {
        assert!(path_parts(&"a.".repeat(MAX_PATH_DEPTH)).is_err());
        assert!(path_parts(&"a.".repeat(MAX_PATH_DEPTH / 2)).is_ok());
        assert!(path_parts(&"a".repeat(MAX_PATH_LEN + 1)).is_err());
        let claim = JsonClaim {
            direction: Direction::Received,
            body: Range::new(0, 2),
            path: String::new(),
            value: Range::new(0, 2),
            hidden_strings: Vec::new(),
            hidden_tokens: Vec::new(),
        };
        assert!(claim_constraints(&vec![claim.clone(); MAX_JSON_CLAIMS + 1], [0, 9]).is_err());
        assert!(claim_constraints(&vec![claim.clone(); MAX_JSON_CLAIMS], [0, 9]).is_ok());
        assert!(claim_constraints(std::slice::from_ref(&claim), [0, 1]).is_err());
        let mut c = claim.clone();
        c.hidden_tokens = vec![Range::new(1, 3)];
        assert!(claim_constraints(&[c], [0, 9]).is_err());
        for t in ["0", "-1.5e+3", "true", "null", "12", "0.0"] {
            assert!(valid_token(t.as_bytes()), "{t}");
        }
        for t in ["01", "1.", "+1", "tru", "1e", "-", "nul1"] {
            assert!(!valid_token(t.as_bytes()), "{t}");
        }
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        let full: Vec<Option<u8>> = deep.bytes().map(Some).collect();
        let body = Body {
            raw: Range::new(0, full.len()),
            data: vec![Range::new(0, full.len())],
            until_close: false,
        };
        assert!(walk(&full, &body, "").is_err());
        assert_eq!(
            unescape(br#"a\u00e9\ud83d\ude00"#).unwrap(),
            "aé😀".as_bytes()
        );
        assert!(unescape(br#"\ud83d"#).is_none());
    }
}

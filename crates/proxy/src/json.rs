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
//! ## Costs and limits
//!
//! Hidden body bytes are constrained, so the proof computes their
//! keystream (as for an opened byte) and a few AND gates per byte
//! ([`webproof_tlsproof::ByteClass`]). At most [`MAX_JSON_CLAIMS`] claims per
//! session, paths of at most [`MAX_PATH_DEPTH`] components and
//! [`MAX_PATH_LEN`] bytes, nesting of at most [`MAX_NESTING`]; the walk is
//! linear in the body.

use crate::disclosure::{normalize, Disclosure, Range};
use crate::error::{malformed, ProxyError, Result};
use crate::record::Direction;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

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
            (view.len(), vec![Range::new(p, view.len())])
        } else {
            (p, Vec::new())
        };
        let data: Vec<Range> = data.into_iter().filter(|r| !r.is_empty()).collect();
        out.push(Body {
            raw: Range::new(body_start, end),
            data,
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

fn bad(detail: impl Into<String>) -> ProxyError {
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
    w.value(Some(&parts), false)?;
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
    fn err(&self, d: &str) -> ProxyError {
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
            crate::zk::check_ranges(list, total)?;
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
/// run), so a disclosure that hides part of a skeleton fails here.
pub fn claims_from_items(
    items: &[String],
    sent: &[u8],
    received: &[u8],
    disclosure: &Disclosure,
) -> Result<Vec<JsonClaim>> {
    let paths: Vec<&str> = items
        .iter()
        .filter_map(|i| i.strip_prefix("json:"))
        .collect();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let view = view_of(received, &disclosure.received);
    let body = message_bodies(&view, Direction::Received)
        .into_iter()
        .next()
        .ok_or_else(|| bad("the first response's framing is not revealed"))?;
    let claims: Vec<JsonClaim> = paths
        .iter()
        .map(|p| {
            let w = walk(&view, &body, p)?;
            Ok(JsonClaim {
                direction: Direction::Received,
                body: body.raw,
                path: p.to_string(),
                value: w.value,
                hidden_strings: w.hidden_strings,
                hidden_tokens: w.hidden_tokens,
            })
        })
        .collect::<Result<_>>()?;
    let sent_view = view_of(sent, &disclosure.sent);
    verify_claims(&sent_view, &view, &claims)?;
    claim_constraints(&claims, [sent.len(), received.len()])?;
    Ok(claims)
}

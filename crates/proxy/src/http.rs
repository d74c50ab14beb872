//! HTTP/1.1-aware choice of what to reveal.
//!
//! Parses the request the prover sent and the response it received (bounded,
//! tolerant of a response cut short) into spans, and turns a [`RevealSpec`]
//! into a [`Disclosure`]: the request line and chosen headers (cookie and
//! authorization values hidden by default), the status line, chosen response
//! headers, the body, or JSON fields by path, through chunked encoding.

use crate::disclosure::{normalize, Disclosure, Range};
use crate::error::{malformed, ProxyError, Result};
use crate::record::Direction;
use serde::{Deserialize, Serialize};
use webproof_attestation::Completeness;

/// Header names whose values stay hidden unless named explicitly.
pub const SECRET_HEADERS: [&str; 3] = ["cookie", "authorization", "proxy-authorization"];

/// One header line of a parsed message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderSpan {
    /// Lower-cased name.
    pub name: String,
    /// The whole line including CRLF.
    pub line: Range,
    /// The value (trimmed).
    pub value: Range,
}

/// A parsed HTTP/1.1 message (request or response).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpMessage {
    /// Request line or status line, CRLF included.
    pub start_line: Range,
    /// Header lines.
    pub headers: Vec<HeaderSpan>,
    /// The blank line ending the headers.
    pub header_end: Range,
    /// The raw body (chunk framing included).
    pub body: Range,
    /// The decoded body as raw spans (one per chunk, or the whole body).
    pub body_spans: Vec<Range>,
}

impl HttpMessage {
    /// Value of the first header named `name` (lower case).
    pub fn header<'a>(&self, data: &'a [u8], name: &str) -> Option<&'a [u8]> {
        self.headers
            .iter()
            .find(|h| h.name == name)
            .map(|h| &data[h.value.start..h.value.end])
    }

    /// The decoded body bytes.
    pub fn decoded_body(&self, data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        for s in &self.body_spans {
            v.extend_from_slice(&data[s.start..s.end]);
        }
        v
    }

    /// Map a range of the decoded body to ranges of the raw data.
    pub fn map_body_range(&self, r: Range) -> Vec<Range> {
        let mut out = Vec::new();
        let mut off = 0;
        for s in &self.body_spans {
            let (a, b) = (off, off + s.len());
            let (lo, hi) = (r.start.max(a), r.end.min(b));
            if lo < hi {
                out.push(Range::new(s.start + lo - a, s.start + hi - a));
            }
            off = b;
        }
        out
    }
}

fn find_crlf(data: &[u8], from: usize) -> Option<usize> {
    data[from..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| from + p)
}

/// Parse the first HTTP/1.1 message in `data`.
pub fn parse_message(data: &[u8]) -> Result<HttpMessage> {
    let what = "HTTP message";
    let line_end = find_crlf(data, 0).ok_or_else(|| malformed(what, "no start line"))?;
    let start = &data[..line_end];
    if !(start.starts_with(b"HTTP/1.")
        || start
            .windows(9)
            .any(|w| w == b" HTTP/1.1" || w == b" HTTP/1.0"))
    {
        return Err(malformed(what, "not HTTP/1.x"));
    }
    let mut pos = line_end + 2;
    let mut headers = Vec::new();
    loop {
        let end = find_crlf(data, pos).ok_or_else(|| malformed(what, "headers not terminated"))?;
        if end == pos {
            break;
        }
        let line = &data[pos..end];
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or_else(|| malformed(what, "header line without ':'"))?;
        let name = core::str::from_utf8(&line[..colon])
            .map_err(|_| malformed(what, "header name not ASCII"))?;
        let mut vs = pos + colon + 1;
        let mut ve = end;
        while vs < ve && (data[vs] == b' ' || data[vs] == b'\t') {
            vs += 1;
        }
        while ve > vs && (data[ve - 1] == b' ' || data[ve - 1] == b'\t') {
            ve -= 1;
        }
        headers.push(HeaderSpan {
            name: name.trim().to_ascii_lowercase(),
            line: Range::new(pos, end + 2),
            value: Range::new(vs, ve),
        });
        pos = end + 2;
    }
    let header_end = Range::new(pos, pos + 2);
    let body_start = pos + 2;
    let mut msg = HttpMessage {
        start_line: Range::new(0, line_end + 2),
        headers,
        header_end,
        body: Range::new(body_start, data.len()),
        body_spans: Vec::new(),
    };
    let chunked = msg
        .header(data, "transfer-encoding")
        .map(|v| v.to_ascii_lowercase().windows(7).any(|w| w == b"chunked"))
        .unwrap_or(false);
    if chunked {
        let mut p = body_start;
        loop {
            let end = find_crlf(data, p)
                .ok_or_else(|| malformed(what, "chunk size line not terminated"))?;
            let size_txt =
                core::str::from_utf8(&data[p..end]).map_err(|_| malformed(what, "chunk size"))?;
            let size_txt = size_txt.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_txt, 16)
                .map_err(|_| malformed(what, "chunk size not hex"))?;
            let s = end + 2;
            if size == 0 {
                // Trailers are not supported; expect the final CRLF.
                msg.body.end = (s + 2).min(data.len());
                break;
            }
            if s + size + 2 > data.len() {
                return Err(malformed(what, "chunk truncated"));
            }
            msg.body_spans.push(Range::new(s, s + size));
            p = s + size + 2;
        }
    } else {
        let len = match msg.header(data, "content-length") {
            Some(v) => core::str::from_utf8(v)
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .ok_or_else(|| malformed(what, "bad content-length"))?,
            None => data.len() - body_start,
        };
        if body_start + len > data.len() {
            return Err(malformed(what, "body shorter than content-length"));
        }
        msg.body = Range::new(body_start, body_start + len);
        if len > 0 {
            msg.body_spans.push(msg.body);
        }
    }
    Ok(msg)
}

/// Whether the server's application data (`view`: hidden bytes `None`)
/// holds complete HTTP/1.x responses, judged only on bytes the verifier
/// saw: every response head (status line and headers up to the empty line)
/// and, for a chunked body, every chunk-size line must be revealed, or the
/// answer is [`Completeness::Unknown`]. Bodies themselves may stay hidden:
/// their lengths are public. A body without Content-Length or chunking ends
/// with the connection, so it is complete only if the server sent
/// close_notify. (A response to HEAD that carries a Content-Length looks
/// truncated: the verifier does not read the request.)
pub fn response_completeness(view: &[Option<u8>], close_notify: bool) -> Completeness {
    use Completeness::*;
    if view.is_empty() {
        return Truncated;
    }
    // The revealed line starting at `from`, without its CRLF, and where the
    // next line starts; Err: Unknown (hidden) or Truncated (data ended).
    let line = |from: usize| -> core::result::Result<(Vec<u8>, usize), Completeness> {
        let mut out = Vec::new();
        let mut i = from;
        loop {
            match view.get(i) {
                None => return Err(Truncated),
                Some(None) => return Err(Unknown),
                Some(Some(b'\n')) if out.last() == Some(&b'\r') => {
                    out.pop();
                    return Ok((out, i + 1));
                }
                Some(&Some(b)) => out.push(b),
            }
            i += 1;
        }
    };
    let mut pos = 0usize;
    loop {
        if pos == view.len() {
            return Complete;
        }
        let (status_line, mut p) = match line(pos) {
            Ok(x) => x,
            Err(c) => return c,
        };
        let status = match parse_status_line(&status_line) {
            Some(s) => s,
            None => return Unknown,
        };
        let mut content_length: Option<usize> = None;
        let mut chunked = false;
        loop {
            let (h, next) = match line(p) {
                Ok(x) => x,
                Err(c) => return c,
            };
            p = next;
            if h.is_empty() {
                break;
            }
            let Some(colon) = h.iter().position(|&b| b == b':') else {
                return Unknown;
            };
            let name = h[..colon].to_ascii_lowercase();
            let value = core::str::from_utf8(&h[colon + 1..]).map(str::trim);
            match (name.as_slice(), value) {
                (b"content-length", Ok(v)) => match (v.parse::<usize>(), content_length) {
                    (Ok(n), None) => content_length = Some(n),
                    (Ok(n), Some(m)) if n == m => {}
                    _ => return Unknown,
                },
                (b"transfer-encoding", Ok(v)) => {
                    chunked = v
                        .rsplit(',')
                        .next()
                        .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
                }
                (b"content-length" | b"transfer-encoding", Err(_)) => return Unknown,
                _ => {}
            }
        }
        let end = if (100..200).contains(&status) {
            if status == 101 {
                return Unknown;
            }
            p
        } else if status == 204 || status == 304 {
            p
        } else if chunked {
            loop {
                let (size_line, next) = match line(p) {
                    Ok(x) => x,
                    Err(c) => return c,
                };
                let size = core::str::from_utf8(&size_line)
                    .ok()
                    .and_then(|t| usize::from_str_radix(t.split(';').next()?.trim(), 16).ok());
                let Some(size) = size else { return Unknown };
                if size == 0 {
                    // Trailer lines up to the empty line.
                    let mut q = next;
                    loop {
                        match line(q) {
                            Ok((t, n)) => {
                                q = n;
                                if t.is_empty() {
                                    break;
                                }
                            }
                            Err(c) => return c,
                        }
                    }
                    break q;
                }
                let Some(data_end) = next.checked_add(size) else {
                    return Truncated;
                };
                match (view.get(data_end), view.get(data_end + 1)) {
                    (Some(Some(b'\r')), Some(Some(b'\n'))) => p = data_end + 2,
                    (None, _) | (_, None) => return Truncated,
                    _ => return Unknown,
                }
            }
        } else if let Some(n) = content_length {
            match p.checked_add(n) {
                Some(e) => e,
                None => return Truncated,
            }
        } else {
            return if close_notify { Complete } else { Truncated };
        };
        if end > view.len() {
            return Truncated;
        }
        pos = end;
    }
}

/// The status code of an HTTP/1.x status line.
fn parse_status_line(line: &[u8]) -> Option<u16> {
    let rest = line
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| line.strip_prefix(b"HTTP/1.0 "))?;
    let code = rest.get(..3)?;
    if !code.iter().all(u8::is_ascii_digit) || rest.get(3).is_some_and(|&b| b != b' ') {
        return None;
    }
    core::str::from_utf8(code).ok()?.parse().ok()
}

/// The parts of an `https://` URL the session needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpsUrl {
    /// Host name or IP address (without brackets).
    pub host: String,
    /// Port (443 unless given).
    pub port: u16,
    /// Request target: path and query (`/` if absent).
    pub path: String,
}

impl core::str::FromStr for HttpsUrl {
    type Err = ProxyError;

    /// `https://host[:port][/path]`, with `[v6]` hosts.
    fn from_str(url: &str) -> Result<Self> {
        let bad = |why: &str| malformed("URL", format!("{url:?}: {why}"));
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| bad("only https:// URLs"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
                h.trim_matches(|c| c == '[' || c == ']'),
                p.parse().map_err(|_| bad("bad port"))?,
            ),
            _ => (authority, 443),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        Ok(HttpsUrl {
            host: host.to_string(),
            port,
            path: path.to_string(),
        })
    }
}

/// The HTTP/1.1 request a prover sends: `method` on `path` at
/// `host:port`, extra headers, `padding` bytes of `X-Padding` (0: none),
/// `Connection: close` so that the server's close ends the response, and
/// `body` with its `Content-Length` (unless the headers frame it
/// already). A GET has no body unless one is given.
pub fn http_request(
    method: &str,
    host: &str,
    port: u16,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
    padding: usize,
) -> Vec<u8> {
    let host = if port == 443 {
        host.to_string()
    } else {
        format!("{host}:{port}")
    };
    let mut r = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    if padding > 0 {
        r.push_str("X-Padding: ");
        r.push_str(&"a".repeat(padding));
        r.push_str("\r\n");
    }
    let framed = headers.iter().any(|(k, _)| {
        k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("transfer-encoding")
    });
    // A body needs its length; so does a POST or PUT without one, which
    // some servers refuse with 411 otherwise.
    let needs_length = !body.is_empty() || !matches!(method, "GET" | "HEAD" | "DELETE" | "OPTIONS");
    if needs_length && !framed {
        r.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    r.push_str("Connection: close\r\n\r\n");
    let mut r = r.into_bytes();
    r.extend_from_slice(body);
    r
}

/// Whether `method` is an HTTP method token (RFC 9110: one or more
/// token characters; by convention upper case, which is required here so
/// that a typo such as `post` fails before any network work).
pub fn valid_method(method: &str) -> bool {
    !method.is_empty()
        && method.len() <= 32
        && method
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_')
}

/// Largest response a prover reads.
pub const MAX_RESPONSE: usize = 64 << 20;

/// Where a response read so far ends, if its framing says it is complete
/// (`Content-Length` or chunked encoding, up to the last chunk); `None`:
/// read on (a response without framing ends with the connection).
pub fn response_end(data: &[u8]) -> Option<usize> {
    let m = parse_message(data).ok()?;
    let framed = m.header(data, "content-length").is_some()
        || m.header(data, "transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().windows(7).any(|w| w == b"chunked"));
    framed.then_some(m.body.end)
}

/// What to reveal, by HTTP structure. Start lines are always revealed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevealSpec {
    /// Reveal every request header except [`SECRET_HEADERS`] values.
    pub request_headers: bool,
    /// Secret request headers to reveal anyway (lower case).
    pub reveal_secret_headers: Vec<String>,
    /// Reveal the request body.
    pub request_body: bool,
    /// Response headers to reveal (lower case); `None` = all.
    pub response_headers: Option<Vec<String>>,
    /// Response body.
    pub response_body: BodyReveal,
}

/// Which part of the response body to reveal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BodyReveal {
    /// Everything.
    All,
    /// Nothing.
    None,
    /// The values at these JSON paths (`a.b.0.c`), proven to sit there: the
    /// response head and the body's skeleton are revealed too (see
    /// [`crate::json`]).
    Json(Vec<String>),
}

impl Default for RevealSpec {
    fn default() -> Self {
        RevealSpec {
            request_headers: true,
            reveal_secret_headers: Vec::new(),
            request_body: true,
            response_headers: None,
            response_body: BodyReveal::All,
        }
    }
}

impl RevealSpec {
    /// The ranges to open for this request/response pair.
    pub fn disclosure(&self, sent: &[u8], received: &[u8]) -> Result<Disclosure> {
        let req = parse_message(sent)?;
        let resp = parse_message(received)?;
        let mut s = vec![req.start_line, req.header_end];
        if self.request_headers {
            for h in &req.headers {
                if SECRET_HEADERS.contains(&h.name.as_str())
                    && !self.reveal_secret_headers.contains(&h.name)
                {
                    s.push(Range::new(h.line.start, h.value.start));
                    s.push(Range::new(h.value.end, h.line.end));
                } else {
                    s.push(h.line);
                }
            }
        }
        if self.request_body {
            s.push(req.body);
        }
        let mut r = vec![resp.start_line, resp.header_end];
        for h in &resp.headers {
            let show = match &self.response_headers {
                None => true,
                Some(list) => list.contains(&h.name),
            };
            if show {
                r.push(h.line);
            }
        }
        match &self.response_body {
            BodyReveal::All => r.push(resp.body),
            BodyReveal::None => {}
            BodyReveal::Json(paths) => {
                // The whole head, the body's skeleton, the keys on the
                // path and the value: what the verifier needs to check the
                // path ([`crate::json`]).
                for p in paths {
                    r.extend(crate::json::skeleton_ranges(received, p)?);
                }
            }
        }
        Ok(Disclosure {
            sent: normalize(s),
            received: normalize(r),
        })
    }
}

/// One item of a reveal selection (`--reveal`, `--commit-at`, `present
/// --reveal`), parsed once where the user typed it ([`str::parse`]):
///
/// `all` (default), `none` (nothing: with an attestation, the verifier then
/// sees no plaintext at all), `http` (default HTTP policy), `headers` (all
/// response headers, no body), `header:NAME`, `req-header:NAME` (reveal a
/// secret request header), `body`, `json:PATH`, `sent:A-B`, `recv:A-B`
/// (raw ranges), `hide-sent:A-B`, `hide-recv:A-B` (applied last).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RevealItem {
    /// `all`: everything.
    All,
    /// `none`: nothing (unless other items add something).
    None,
    /// `http`: the default HTTP policy ([`RevealSpec::default`]).
    Http,
    /// `headers`: all response headers.
    Headers,
    /// `header:NAME`: one response header (lower case).
    Header(String),
    /// `req-header:NAME`: a secret request header's value (lower case).
    ReqHeader(String),
    /// `body`: the response body.
    Body,
    /// `json:PATH`: a proven JSON path of the response body (`json:` alone:
    /// the whole document).
    Json(String),
    /// `sent:A-B`: a raw range of the request data.
    Sent(Range),
    /// `recv:A-B`: a raw range of the response data.
    Recv(Range),
    /// `hide-sent:A-B`: hide a range of the request data (applied last).
    HideSent(Range),
    /// `hide-recv:A-B`: hide a range of the response data (applied last).
    HideRecv(Range),
}

impl core::str::FromStr for RevealItem {
    type Err = ProxyError;

    fn from_str(item: &str) -> Result<Self> {
        let bad = |why: String| malformed("reveal item", format!("{item:?}: {why}"));
        let range = |v: &str| -> Result<Range> {
            let (a, b) = v
                .split_once('-')
                .ok_or_else(|| bad("expected START-END".into()))?;
            let a: usize = a.parse().map_err(|_| bad(format!("bad start {a:?}")))?;
            let b: usize = b.parse().map_err(|_| bad(format!("bad end {b:?}")))?;
            if a > b {
                return Err(bad("the range ends before it starts".into()));
            }
            Ok(Range::new(a, b))
        };
        let name = |v: &str| -> Result<String> {
            if v.is_empty() {
                return Err(bad("needs a NAME".into()));
            }
            Ok(v.to_ascii_lowercase())
        };
        let (k, v) = item.split_once(':').unwrap_or((item, ""));
        let plain = |it: RevealItem| {
            if item.contains(':') {
                Err(bad("takes no argument".into()))
            } else {
                Ok(it)
            }
        };
        match k {
            "all" => plain(RevealItem::All),
            "none" => plain(RevealItem::None),
            "http" => plain(RevealItem::Http),
            "headers" => plain(RevealItem::Headers),
            "body" => plain(RevealItem::Body),
            "header" => Ok(RevealItem::Header(name(v)?)),
            "req-header" => Ok(RevealItem::ReqHeader(name(v)?)),
            // `json:` alone is the whole document (the empty path).
            "json" => Ok(RevealItem::Json(v.to_string())),
            "sent" => Ok(RevealItem::Sent(range(v)?)),
            "recv" => Ok(RevealItem::Recv(range(v)?)),
            "hide-sent" => Ok(RevealItem::HideSent(range(v)?)),
            "hide-recv" => Ok(RevealItem::HideRecv(range(v)?)),
            _ => Err(bad(
                "unknown item (all, none, http, headers, header:NAME, req-header:NAME, body, \
                 json:PATH, sent:A-B, recv:A-B, hide-sent:A-B, hide-recv:A-B)"
                    .into(),
            )),
        }
    }
}

impl core::fmt::Display for RevealItem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RevealItem::All => f.write_str("all"),
            RevealItem::None => f.write_str("none"),
            RevealItem::Http => f.write_str("http"),
            RevealItem::Headers => f.write_str("headers"),
            RevealItem::Header(n) => write!(f, "header:{n}"),
            RevealItem::ReqHeader(n) => write!(f, "req-header:{n}"),
            RevealItem::Body => f.write_str("body"),
            RevealItem::Json(p) => write!(f, "json:{p}"),
            RevealItem::Sent(r) => write!(f, "sent:{}-{}", r.start, r.end),
            RevealItem::Recv(r) => write!(f, "recv:{}-{}", r.start, r.end),
            RevealItem::HideSent(r) => write!(f, "hide-sent:{}-{}", r.start, r.end),
            RevealItem::HideRecv(r) => write!(f, "hide-recv:{}-{}", r.start, r.end),
        }
    }
}

/// Parse reveal items (the first bad one is the error).
pub fn parse_items<S: AsRef<str>>(items: &[S]) -> Result<Vec<RevealItem>> {
    items.iter().map(|i| i.as_ref().parse()).collect()
}

/// The disclosure that reveal items select over the actual data (see
/// [`RevealItem`]; no items: everything).
pub fn disclosure_from_items(
    items: &[RevealItem],
    sent: &[u8],
    received: &[u8],
) -> Result<Disclosure> {
    let mut raw = Disclosure::default();
    let mut hides = Vec::new();
    let mut spec: Option<RevealSpec> = None;
    let mut all = items.is_empty();
    for item in items {
        let spec_mut = |spec: &mut Option<RevealSpec>| {
            spec.get_or_insert_with(|| RevealSpec {
                response_headers: Some(Vec::new()),
                response_body: BodyReveal::None,
                ..RevealSpec::default()
            })
            .clone()
        };
        match item {
            RevealItem::All => all = true,
            RevealItem::None => {}
            RevealItem::Http => spec = Some(RevealSpec::default()),
            RevealItem::Headers => {
                let mut s = spec_mut(&mut spec);
                s.response_headers = None;
                spec = Some(s);
            }
            RevealItem::Header(v) => {
                let mut s = spec_mut(&mut spec);
                if let Some(l) = s.response_headers.as_mut() {
                    l.push(v.to_ascii_lowercase());
                }
                spec = Some(s);
            }
            RevealItem::ReqHeader(v) => {
                let mut s = spec_mut(&mut spec);
                s.reveal_secret_headers.push(v.to_ascii_lowercase());
                spec = Some(s);
            }
            RevealItem::Body => {
                let mut s = spec_mut(&mut spec);
                s.response_body = BodyReveal::All;
                spec = Some(s);
            }
            RevealItem::Json(v) => {
                let mut s = spec_mut(&mut spec);
                match &mut s.response_body {
                    BodyReveal::Json(p) => p.push(v.to_string()),
                    BodyReveal::All => {}
                    b @ BodyReveal::None => *b = BodyReveal::Json(vec![v.to_string()]),
                }
                spec = Some(s);
            }
            RevealItem::Sent(r) => raw.sent.push(*r),
            RevealItem::Recv(r) => raw.received.push(*r),
            RevealItem::HideSent(r) => hides.push((Direction::Sent, *r)),
            RevealItem::HideRecv(r) => hides.push((Direction::Received, *r)),
        }
    }
    let mut d = if all {
        Disclosure::all(sent.len(), received.len())
    } else {
        let mut d = match &spec {
            Some(s) => s.disclosure(sent, received)?,
            None => Disclosure::default(),
        };
        d.sent.extend(raw.sent);
        d.received.extend(raw.received);
        d.normalized()
    };
    for (dir, r) in hides {
        let len = match dir {
            Direction::Sent => sent.len(),
            Direction::Received => received.len(),
        };
        d.hide(dir, r, len);
    }
    Ok(d.normalized())
}

/// Spans (in `body`) of the JSON value at `path` and of the keys leading to it.
pub fn json_path_spans(body: &[u8], path: &str) -> Result<Vec<Range>> {
    let parts: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('.').collect()
    };
    let mut p = JsonScanner {
        s: body,
        pos: 0,
        depth: 0,
    };
    p.ws();
    let mut out = Vec::new();
    p.find(&parts, &mut out)?;
    Ok(out)
}

struct JsonScanner<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

const MAX_JSON_DEPTH: usize = 128;

impl JsonScanner<'_> {
    fn err(&self, d: &str) -> ProxyError {
        malformed("JSON body", format!("{d} at byte {}", self.pos))
    }
    fn ws(&mut self) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\r' | b'\n') {
            self.pos += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }
    fn eat(&mut self, c: u8) -> Result<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected {:?}", c as char)))
        }
    }
    /// Skip a string, returning its raw content span.
    fn string(&mut self) -> Result<Range> {
        self.eat(b'"')?;
        let start = self.pos;
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    let r = Range::new(start, self.pos);
                    self.pos += 1;
                    return Ok(r);
                }
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
        Err(self.err("unterminated string"))
    }
    /// Skip one value, returning its span.
    fn value(&mut self) -> Result<Range> {
        self.find(&[], &mut Vec::new())
    }
    /// Walk the value at the cursor; if `path` is empty record the value's
    /// span, else descend. Returns the value's span.
    fn find(&mut self, path: &[&str], out: &mut Vec<Range>) -> Result<Range> {
        self.depth += 1;
        if self.depth > MAX_JSON_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.ws();
        let start = self.pos;
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                } else {
                    loop {
                        self.ws();
                        let kstart = self.pos;
                        let key = self.string()?;
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                        let kend = self.pos;
                        let hit =
                            !path.is_empty() && &self.s[key.start..key.end] == path[0].as_bytes();
                        if hit {
                            let before = out.len();
                            self.find(&path[1..], out)?;
                            if out.len() > before {
                                out.push(Range::new(kstart, kend));
                            }
                        } else {
                            self.value()?;
                        }
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.pos += 1,
                            Some(b'}') => {
                                self.pos += 1;
                                break;
                            }
                            _ => return Err(self.err("expected ',' or '}'")),
                        }
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                self.ws();
                let want: Option<usize> = path.first().and_then(|p| p.parse().ok());
                if self.peek() == Some(b']') {
                    self.pos += 1;
                } else {
                    let mut i = 0;
                    loop {
                        if !path.is_empty() && want == Some(i) {
                            self.find(&path[1..], out)?;
                        } else {
                            self.value()?;
                        }
                        i += 1;
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.pos += 1,
                            Some(b']') => {
                                self.pos += 1;
                                break;
                            }
                            _ => return Err(self.err("expected ',' or ']'")),
                        }
                    }
                }
            }
            Some(b'"') => {
                self.string()?;
            }
            Some(_) => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                        break;
                    }
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(self.err("expected a value"));
                }
            }
            None => return Err(self.err("unexpected end")),
        }
        self.depth -= 1;
        let span = Range::new(start, self.pos);
        if path.is_empty() && !out.is_empty() && out.last() == Some(&span) {
            // already recorded
        } else if path.is_empty() {
            out.push(span);
        }
        Ok(span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(b: &[u8]) -> Vec<Option<u8>> {
        b.iter().map(|&x| Some(x)).collect()
    }

    /// Completeness from framing the verifier saw; hidden framing gives
    /// Unknown, never a guess; hidden bodies are fine (lengths are public).
    #[test]
    fn response_completeness_from_revealed_framing() {
        use Completeness::*;
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(response_completeness(&shown(cl), false), Complete);
        assert_eq!(
            response_completeness(&shown(&cl[..cl.len() - 1]), false),
            Truncated
        );
        assert_eq!(response_completeness(&shown(&cl[..10]), false), Truncated);
        // Body hidden: still complete.
        let mut v = shown(cl);
        for b in &mut v[cl.len() - 5..] {
            *b = None;
        }
        assert_eq!(response_completeness(&v, false), Complete);
        // A header value hidden: unknown.
        let mut v = shown(cl);
        v[35] = None;
        assert_eq!(response_completeness(&v, false), Unknown);
        // Two responses (keep-alive), the second cut.
        let two = [&cl[..], &cl[..]].concat();
        assert_eq!(response_completeness(&shown(&two), false), Complete);
        assert_eq!(
            response_completeness(&shown(&two[..two.len() - 2]), false),
            Truncated
        );
        // Chunked: complete only with the last chunk.
        let ch = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(response_completeness(&shown(ch), false), Complete);
        assert_eq!(
            response_completeness(&shown(&ch[..ch.len() - 5]), false),
            Truncated
        );
        let mut v = shown(ch);
        v[ch.len() - 5] = None; // the last chunk's size
        assert_eq!(response_completeness(&v, false), Unknown);
        // Close-delimited: complete with close_notify only.
        let cd = b"HTTP/1.1 200 OK\r\n\r\nstream";
        assert_eq!(response_completeness(&shown(cd), true), Complete);
        assert_eq!(response_completeness(&shown(cd), false), Truncated);
        // Interim responses and bodiless statuses.
        let cont = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(response_completeness(&shown(cont), false), Complete);
        // Not HTTP, nothing, absurd lengths, conflicting lengths.
        assert_eq!(
            response_completeness(&shown(b"SSH-2.0\r\n\r\n"), false),
            Unknown
        );
        assert_eq!(response_completeness(&[], true), Truncated);
        let huge = b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nx";
        assert_eq!(response_completeness(&shown(huge), false), Truncated);
        let two_cl = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx";
        assert_eq!(response_completeness(&shown(two_cl), false), Unknown);
    }

    const REQ: &[u8] =
        b"GET /x HTTP/1.1\r\nHost: a.test\r\nCookie: sid=SECRET\r\nAccept: */*\r\n\r\n";

    #[test]
    fn request_secrets_hidden_by_default() {
        let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        let d = RevealSpec::default().disclosure(REQ, resp).unwrap();
        let o = d.open(REQ, resp).unwrap();
        let (s, r) = crate::disclosure::check_openings(REQ, resp, &o).unwrap();
        assert!(s.text.contains("Cookie: ██████████\r\n"), "{}", s.text);
        assert!(s.text.contains("Host: a.test"));
        assert_eq!(r.hidden(), 0);
    }

    #[test]
    fn json_path_through_chunks() {
        let body = br#"{"user":{"name":"ann","age":41},"list":[1,{"k":true}]}"#;
        let (a, b) = body.split_at(20);
        let mut resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n".to_vec();
        resp.extend_from_slice(format!("{:x}\r\n", a.len()).as_bytes());
        resp.extend_from_slice(a);
        resp.extend_from_slice(format!("\r\n{:x}\r\n", b.len()).as_bytes());
        resp.extend_from_slice(b);
        resp.extend_from_slice(b"\r\n0\r\n\r\n");
        let items =
            parse_items(&["json:user.age", "json:list.1.k", "header:content-type"]).unwrap();
        let d = disclosure_from_items(&items, REQ, &resp).unwrap();
        let o = d.open(REQ, &resp).unwrap();
        let (_, r) = crate::disclosure::check_openings(REQ, &resp, &o).unwrap();
        assert!(r.text.contains("\"age\":41"), "{}", r.text);
        assert!(r.text.contains("\"k\":true"));
        assert!(!r.text.contains("ann"));
        assert!(r.text.contains("Content-Type: application/json"));
        // The head is revealed whole: the verifier parses the framing itself.
        assert!(r.text.contains("chunked"));
        // The skeleton: the path's keys and structure, not the hidden values.
        assert!(r.text.contains("\"name\":\""), "{}", r.text);
        let v: Vec<Option<u8>> = (0..resp.len())
            .map(|i| {
                d.received
                    .iter()
                    .any(|x| x.start <= i && i < x.end)
                    .then(|| resp[i])
            })
            .collect();
        let claims = crate::json::claims_from_items(&items, REQ, &resp, &d).unwrap();
        assert_eq!(claims.len(), 2);
        let ok = crate::json::verify_claims(&[], &v, &claims).unwrap();
        assert_eq!(ok[0].value_text, "41");
        assert_eq!(ok[1].value_text, "true");
        // "ann" and "list"'s 1 are hidden and constrained.
        assert_eq!(claims[0].hidden_strings.len(), 1);
        assert_eq!(claims[0].hidden_tokens.len(), 1);
        assert!(json_path_spans(body, "user.missing").unwrap().is_empty());
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(parse_message(b"\x16\x03\x01 binary").is_err());
        assert!(parse_message(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhi").is_err());
        assert!(
            parse_message(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").is_err()
        );
        assert!(json_path_spans(b"{\"a\":", "a").is_err());
        let deep = vec![b'['; 10_000];
        assert!(json_path_spans(&deep, "0").is_err());
        for bad in [
            "frobnicate",
            "sent:1",
            "recv:5-2",
            "hide-recv:a-b",
            "header:",
            "all:x",
        ] {
            assert!(bad.parse::<RevealItem>().is_err(), "{bad}");
        }
    }

    /// Every item reads back as it was written.
    #[test]
    fn items_round_trip() {
        for i in [
            "json:",
            "all",
            "none",
            "http",
            "headers",
            "header:x-a",
            "req-header:cookie",
            "body",
            "json:a.0.b",
            "sent:0-5",
            "recv:3-3",
            "hide-sent:1-2",
            "hide-recv:0-10",
        ] {
            assert_eq!(i.parse::<RevealItem>().unwrap().to_string(), i);
        }
        let u: HttpsUrl = "https://[::1]:8443/a?b".parse().unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 8443, "/a?b")
        );
        let u: HttpsUrl = "https://example.com".parse().unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("example.com", 443, "/")
        );
        assert!("http://example.com/".parse::<HttpsUrl>().is_err());
        assert!("https://:80/".parse::<HttpsUrl>().is_err());
        assert!("https://a:b/".parse::<HttpsUrl>().is_err());
    }

    #[test]
    fn raw_and_hide_items() {
        let resp = b"HTTP/1.1 200 OK\r\n\r\n";
        let items = parse_items(&["all", "hide-recv:0-1"]).unwrap();
        let d = disclosure_from_items(&items, REQ, resp).unwrap();
        assert_eq!(d.received, vec![Range::new(1, resp.len())]);
        assert_eq!(d.sent, vec![Range::new(0, REQ.len())]);
    }
}

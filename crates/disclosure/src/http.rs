//! HTTP/1.1-aware choice of what to reveal.
//!
//! Parses the request the prover sent and the response it received (bounded,
//! tolerant of a response cut short) into spans, and turns reveal items
//! ([`RevealItem`]) into a [`Disclosure`]: the request line and chosen
//! headers, the status line, chosen response headers, the body, or JSON
//! fields by path, through chunked encoding. It also owns the rule for what
//! in a request is a credential ([`request_secrets`]): those bytes stay
//! hidden unless the user names them.

use crate::disclosure::{normalize, Disclosure, Range};
use crate::error::{malformed, DisclosureError, Result};
use serde::{Deserialize, Serialize};
use webproof_attestation::Completeness;
use webproof_tls::Direction;

/// Marks of a request header that carries a credential: a header whose
/// lower-cased name contains one of these has its value hidden unless the
/// user names it (`req-header:NAME`). They cover `Cookie`, `Authorization`,
/// `Proxy-Authorization` and the names APIs give their keys and tokens
/// (`X-Api-Key`, `X-Auth-Token`, `X-CSRF-Token`, `X-Session-Id`, ...).
/// The list leans wide on purpose: a false match only hides a value the
/// user can still reveal by name, a miss gives a secret to the verifier.
pub const SECRET_HEADER_MARKS: [&str; 15] = [
    "cookie",
    "auth",
    "token",
    "secret",
    "session",
    "password",
    "passwd",
    "api-key",
    "apikey",
    "api_key",
    "access-key",
    "csrf",
    "xsrf",
    "signature",
    "credential",
];

/// Whether a request header named `name` carries a credential by the rule
/// of [`SECRET_HEADER_MARKS`] (any case).
pub fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_HEADER_MARKS.iter().any(|m| name.contains(m))
}

/// A part of the request that carries a credential and that the default
/// selection hides: a secret header's value or the query string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestSecret {
    /// What it is, for people: `Cookie value`, `query string`.
    pub what: String,
    /// Where it is in the request.
    pub range: Range,
    /// How to reveal it anyway: the reveal item naming it.
    pub item: RevealItem,
    /// Whether the user named it a secret (`secret-header:NAME`), rather
    /// than the built-in rule.
    pub named: bool,
}

/// The credentials in `request`: the values of headers that
/// [`is_secret_header`] or that `named` (lower case) marks, and the query
/// string (from `?` up to the space before `HTTP/1.x`), in request order.
pub fn request_secrets(request: &[u8], named: &[String]) -> Result<Vec<RequestSecret>> {
    let req = parse_message(request)?;
    let mut out = Vec::new();
    let line = &request[req.start_line.start..req.start_line.end];
    if let (Some(q), Some(v)) = (
        line.iter().position(|&b| b == b'?'),
        line.windows(6).rposition(|w| w == b" HTTP/"),
    ) {
        if q < v {
            out.push(RequestSecret {
                what: "query string".into(),
                range: Range::new(req.start_line.start + q, req.start_line.start + v),
                item: RevealItem::Query,
                named: false,
            });
        }
    }
    for h in &req.headers {
        let is_named = named.contains(&h.name);
        if h.value.is_empty() || !(is_named || is_secret_header(&h.name)) {
            continue;
        }
        // The name as sent, for the message (`X-Api-Key`, not `x-api-key`).
        let colon = request[h.line.start..h.line.end]
            .iter()
            .position(|&b| b == b':')
            .unwrap_or(0);
        let shown = String::from_utf8_lossy(&request[h.line.start..h.line.start + colon]);
        out.push(RequestSecret {
            what: format!("{} value", shown.trim()),
            range: h.value,
            item: RevealItem::ReqHeader(h.name.clone()),
            named: is_named,
        });
    }
    Ok(out)
}

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
    type Err = DisclosureError;

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
    http_request_on(method, host, port, path, headers, body, padding, true)
}

/// [`http_request`], with `Connection: close` only if `last`: a request
/// that more follow on the same connection leaves it open (HTTP/1.1's
/// default).
#[allow(clippy::too_many_arguments)]
pub fn http_request_on(
    method: &str,
    host: &str,
    port: u16,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
    padding: usize,
    last: bool,
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
    if last {
        r.push_str("Connection: close\r\n");
    }
    r.push_str("\r\n");
    let mut r = r.into_bytes();
    r.extend_from_slice(body);
    r
}

/// One HTTP/1.1 request of a session, as the prover asks for it: what
/// [`http_request_on`] builds for a host.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRequest {
    /// Method, upper case (`GET`, `POST`, ...).
    pub method: String,
    /// Request target: path and query.
    pub path: String,
    /// Extra headers, in order.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Body (empty: none).
    #[serde(default)]
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A `GET` of `path`.
    pub fn get(path: &str) -> Self {
        HttpRequest {
            method: "GET".into(),
            path: path.into(),
            ..Default::default()
        }
    }

    /// The bytes for `host:port`: `padding` bytes of `X-Padding` (0:
    /// none), `Connection: close` if it is the `last` of the session.
    pub fn encode(&self, host: &str, port: u16, padding: usize, last: bool) -> Vec<u8> {
        http_request_on(
            &self.method,
            host,
            port,
            &self.path,
            &self.headers,
            &self.body,
            padding,
            last,
        )
    }

    /// All `requests` for `host:port`, one after the other as they go on
    /// the connection: padding on the first, `Connection: close` on the
    /// last only.
    pub fn encode_all(requests: &[HttpRequest], host: &str, port: u16, padding: usize) -> Vec<u8> {
        let n = requests.len();
        requests
            .iter()
            .enumerate()
            .flat_map(|(k, r)| r.encode(host, port, if k == 0 { padding } else { 0 }, k + 1 == n))
            .collect()
    }
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

/// What to reveal, by HTTP structure. Start lines are always revealed,
/// except the request's query string.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevealSpec {
    /// Reveal every request header, the values of secret headers
    /// ([`request_secrets`]) excepted.
    pub request_headers: bool,
    /// Secret request headers to reveal anyway (lower case).
    pub reveal_secret_headers: Vec<String>,
    /// Reveal the request's query string anyway.
    #[serde(default)]
    pub reveal_query: bool,
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
            reveal_query: false,
            request_body: true,
            response_headers: None,
            response_body: BodyReveal::All,
        }
    }
}

impl RevealSpec {
    /// The ranges to open for this request/response pair.
    pub fn disclosure(&self, sent: &[u8], received: &[u8]) -> Result<Disclosure> {
        Ok(Disclosure {
            sent: self.sent_ranges(sent)?,
            received: self.received_ranges(received)?,
        })
    }

    /// The request's ranges to open: they depend on the request alone.
    fn sent_ranges(&self, sent: &[u8]) -> Result<Vec<Range>> {
        let req = parse_message(sent)?;
        let mut s = vec![req.start_line, req.header_end];
        if self.request_headers {
            s.extend(req.headers.iter().map(|h| h.line));
        }
        if self.request_body {
            s.push(req.body);
        }
        let mut d = Disclosure {
            sent: normalize(s),
            received: Vec::new(),
        };
        for secret in request_secrets(sent, &[])? {
            let asked = match &secret.item {
                RevealItem::Query => self.reveal_query,
                RevealItem::ReqHeader(n) => self.reveal_secret_headers.contains(n),
                _ => false,
            };
            if !asked {
                d.hide(Direction::Sent, secret.range, sent.len());
            }
        }
        Ok(d.sent)
    }

    /// The response's ranges to open.
    fn received_ranges(&self, received: &[u8]) -> Result<Vec<Range>> {
        let resp = parse_message(received)?;
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
        Ok(normalize(r))
    }
}

/// One item of a reveal selection (`--reveal`, `--commit-at`, `present
/// --reveal`), parsed once where the user typed it ([`str::parse`]).
///
/// With no item, or only items that hide (`hide-sent:`, `hide-recv:`,
/// `secret-header:`), the selection starts from the default: the whole
/// request except its credentials ([`request_secrets`]: the values of
/// secret headers and the query string) and the whole response. Any other
/// item starts from nothing and adds. Items that select by HTTP structure
/// (`http`, `headers`, `header:`, `body`, `json:`) also reveal the whole
/// request except its credentials and the response's status line; `all`,
/// `sent:` and `recv:` take bytes as they are, credentials included. Hiding
/// items apply last. Ranges `A-B` are byte offsets, half-open (`A` up to,
/// not including, `B`). What is hidden still has a known length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RevealItem {
    /// `all`: every byte both ways, credentials included.
    All,
    /// `none`: nothing (unless other items add something); with an
    /// attestation the verifier then sees no plaintext at all.
    None,
    /// `http`: the request except its credentials, and the whole response
    /// (status line, every header, the body) ([`RevealSpec::default`]).
    Http,
    /// `headers`: the request except its credentials, the status line and
    /// every response header; not the body.
    Headers,
    /// `header:NAME`: the request except its credentials, the status line
    /// and the response header NAME (its name and value; lower case).
    Header(String),
    /// `req-header:NAME`: with a structural item, also the value of the
    /// secret request header NAME (lower case).
    ReqHeader(String),
    /// `query`: with a structural item, also the request's query string.
    Query,
    /// `body`: the request except its credentials, the status line and the
    /// response body (raw, chunk framing included).
    Body,
    /// `json:PATH`: the value at PATH of the JSON response body, proven to
    /// sit there (`a.b.0.c`: keys and array indexes; `json:` alone: the
    /// whole document). It also reveals, to let the verifier check the
    /// path, the whole response head (every header), the body's structure
    /// (brackets, commas, quotes, whitespace), the key names of every
    /// object on the path (so the names of the value's siblings) and the
    /// length of every hidden value, plus the request except its
    /// credentials. With an attestation made with `--commit-at json:PATH`,
    /// a presentation of it reveals exactly that; without, whole leaves.
    Json(String),
    /// `sent:A-B`: bytes A to B of the request, as they are.
    Sent(Range),
    /// `recv:A-B`: bytes A to B of the response, as they are.
    Recv(Range),
    /// `hide-sent:A-B`: hide bytes A to B of the request (applied last).
    HideSent(Range),
    /// `hide-recv:A-B`: hide bytes A to B of the response (applied last).
    HideRecv(Range),
    /// `secret-header:NAME`: hide the value of request header NAME as a
    /// credential, whatever else is selected (applied last; lower case).
    SecretHeader(String),
    /// `hide-req-body`: hide the request body (a form or JSON document
    /// carrying a password, say), whatever else is selected (applied
    /// last). Its length stays visible, as its `Content-Length` does.
    HideRequestBody,
    /// `N/ITEM`: ITEM for exchange N only (from 1) of a session with
    /// several requests (`2/json:data.id`, `3/header:etag`); without a
    /// prefix an item applies to every exchange. Not for byte ranges, which
    /// are offsets in the whole transcript. Revealing anything of a later
    /// response also reveals the framing of every response before it (each
    /// head, and its chunk-size lines), so the verifier can find where it
    /// starts.
    In(usize, Box<RevealItem>),
}

impl RevealItem {
    /// Whether the item only hides (it leaves the default as the base).
    fn only_hides(&self) -> bool {
        match self {
            RevealItem::In(_, item) => item.only_hides(),
            _ => matches!(
                self,
                RevealItem::HideSent(_)
                    | RevealItem::HideRecv(_)
                    | RevealItem::SecretHeader(_)
                    | RevealItem::HideRequestBody
            ),
        }
    }

    /// The exchange (from 1) an `N/ITEM` targets; `None`: every exchange.
    pub fn exchange(&self) -> Option<usize> {
        match self {
            RevealItem::In(n, _) => Some(*n),
            _ => None,
        }
    }
}

/// Refuse items that target an exchange past the last of `exchanges`:
/// known before any network work, from the requests alone.
pub fn check_exchange_targets(items: &[RevealItem], exchanges: usize) -> Result<()> {
    for item in items {
        if let Some(n) = item.exchange().filter(|&n| n > exchanges) {
            return Err(malformed(
                "reveal item",
                format!(
                    "{item}: exchange {n} does not exist (the session has {exchanges} request{})",
                    if exchanges == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    Ok(())
}

/// The items that apply to exchange `k` (from 1), whose request and
/// response are `request` and `response` of the transcript: untargeted
/// items and those targeting `k` (unwrapped), with byte ranges clipped to
/// the exchange and made relative to it.
fn items_for(items: &[RevealItem], k: usize, request: Range, response: Range) -> Vec<RevealItem> {
    let clip = |r: &Range, within: Range| {
        let (a, b) = (r.start.max(within.start), r.end.min(within.end));
        (a < b).then(|| Range::new(a - within.start, b - within.start))
    };
    items
        .iter()
        .filter_map(|item| match item {
            RevealItem::In(n, inner) => (*n == k).then(|| (**inner).clone()),
            RevealItem::Sent(r) => clip(r, request).map(RevealItem::Sent),
            RevealItem::HideSent(r) => clip(r, request).map(RevealItem::HideSent),
            RevealItem::Recv(r) => clip(r, response).map(RevealItem::Recv),
            RevealItem::HideRecv(r) => clip(r, response).map(RevealItem::HideRecv),
            other => Some(other.clone()),
        })
        .collect()
}

impl core::str::FromStr for RevealItem {
    type Err = DisclosureError;

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
        if let Some((n, rest)) = item.split_once('/').filter(|(n, _)| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !n.contains(':')
        }) {
            let n: usize = n
                .parse()
                .ok()
                .filter(|&n| (1..=crate::exchange::MAX_EXCHANGES).contains(&n))
                .ok_or_else(|| {
                    bad(format!(
                        "exchanges are numbered 1 to {}",
                        crate::exchange::MAX_EXCHANGES
                    ))
                })?;
            let inner: RevealItem = rest.parse()?;
            return match inner {
                RevealItem::Sent(_)
                | RevealItem::Recv(_)
                | RevealItem::HideSent(_)
                | RevealItem::HideRecv(_)
                | RevealItem::In(..)
                | RevealItem::All
                | RevealItem::None => Err(bad(format!(
                    "{rest:?} takes no exchange (byte ranges are offsets in the whole transcript)"
                ))),
                inner => Ok(RevealItem::In(n, Box::new(inner))),
            };
        }
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
            "query" => plain(RevealItem::Query),
            "hide-req-body" => plain(RevealItem::HideRequestBody),
            "header" => Ok(RevealItem::Header(name(v)?)),
            "req-header" => Ok(RevealItem::ReqHeader(name(v)?)),
            "secret-header" => Ok(RevealItem::SecretHeader(name(v)?)),
            // `json:` alone is the whole document (the empty path).
            "json" => Ok(RevealItem::Json(v.to_string())),
            "sent" => Ok(RevealItem::Sent(range(v)?)),
            "recv" => Ok(RevealItem::Recv(range(v)?)),
            "hide-sent" => Ok(RevealItem::HideSent(range(v)?)),
            "hide-recv" => Ok(RevealItem::HideRecv(range(v)?)),
            _ => Err(bad(
                "unknown item (all, none, http, headers, header:NAME, req-header:NAME, query, \
                 body, json:PATH, sent:A-B, recv:A-B, hide-sent:A-B, hide-recv:A-B, \
                 secret-header:NAME, hide-req-body; N/ITEM for exchange N only)"
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
            RevealItem::Query => f.write_str("query"),
            RevealItem::Body => f.write_str("body"),
            RevealItem::Json(p) => write!(f, "json:{p}"),
            RevealItem::Sent(r) => write!(f, "sent:{}-{}", r.start, r.end),
            RevealItem::Recv(r) => write!(f, "recv:{}-{}", r.start, r.end),
            RevealItem::HideSent(r) => write!(f, "hide-sent:{}-{}", r.start, r.end),
            RevealItem::HideRecv(r) => write!(f, "hide-recv:{}-{}", r.start, r.end),
            RevealItem::SecretHeader(n) => write!(f, "secret-header:{n}"),
            RevealItem::HideRequestBody => f.write_str("hide-req-body"),
            RevealItem::In(n, item) => write!(f, "{n}/{item}"),
        }
    }
}

/// Parse reveal items (the first bad one is the error).
pub fn parse_items<S: AsRef<str>>(items: &[S]) -> Result<Vec<RevealItem>> {
    items.iter().map(|i| i.as_ref().parse()).collect()
}

/// Reveal items sorted into what they select (see [`RevealItem`]).
struct Selection {
    /// Everything, as it is.
    all: bool,
    /// The default: the request without credentials, the whole response.
    default: bool,
    /// The structural selection, if an item asked for one.
    spec: Option<RevealSpec>,
    /// Raw ranges added.
    raw: Disclosure,
    /// Ranges hidden last.
    hides: Vec<(Direction, Range)>,
    /// Request headers the user named secret (lower case).
    secret_headers: Vec<String>,
    /// Hide the request body (`hide-req-body`).
    hide_request_body: bool,
}

impl Selection {
    fn new(items: &[RevealItem]) -> Self {
        let mut sel = Selection {
            all: false,
            default: items.iter().all(RevealItem::only_hides),
            spec: None,
            raw: Disclosure::default(),
            hides: Vec::new(),
            secret_headers: Vec::new(),
            hide_request_body: false,
        };
        // The structural selection an item refines: from nothing on the
        // response side, the request without credentials.
        let spec = |spec: &mut Option<RevealSpec>| -> RevealSpec {
            spec.take().unwrap_or_else(|| RevealSpec {
                response_headers: Some(Vec::new()),
                response_body: BodyReveal::None,
                ..RevealSpec::default()
            })
        };
        for item in items {
            let s = &mut sel.spec;
            match item {
                RevealItem::All => sel.all = true,
                RevealItem::None => {}
                RevealItem::Http => *s = Some(RevealSpec::default()),
                RevealItem::Headers => {
                    let mut x = spec(s);
                    x.response_headers = None;
                    *s = Some(x);
                }
                RevealItem::Header(v) => {
                    let mut x = spec(s);
                    if let Some(l) = x.response_headers.as_mut() {
                        l.push(v.to_ascii_lowercase());
                    }
                    *s = Some(x);
                }
                RevealItem::ReqHeader(v) => {
                    let mut x = spec(s);
                    x.reveal_secret_headers.push(v.to_ascii_lowercase());
                    *s = Some(x);
                }
                RevealItem::Query => {
                    let mut x = spec(s);
                    x.reveal_query = true;
                    *s = Some(x);
                }
                RevealItem::Body => {
                    let mut x = spec(s);
                    x.response_body = BodyReveal::All;
                    *s = Some(x);
                }
                RevealItem::Json(v) => {
                    let mut x = spec(s);
                    match &mut x.response_body {
                        BodyReveal::Json(p) => p.push(v.to_string()),
                        BodyReveal::All => {}
                        b @ BodyReveal::None => *b = BodyReveal::Json(vec![v.to_string()]),
                    }
                    *s = Some(x);
                }
                RevealItem::Sent(r) => sel.raw.sent.push(*r),
                RevealItem::Recv(r) => sel.raw.received.push(*r),
                RevealItem::HideSent(r) => sel.hides.push((Direction::Sent, *r)),
                RevealItem::HideRecv(r) => sel.hides.push((Direction::Received, *r)),
                RevealItem::SecretHeader(n) => sel.secret_headers.push(n.to_ascii_lowercase()),
                RevealItem::HideRequestBody => sel.hide_request_body = true,
                // Unwrapped for their exchange by `items_for` before.
                RevealItem::In(..) => {}
            }
        }
        sel
    }

    /// The request's ranges: they depend on the request alone, so they are
    /// known before any network work.
    fn sent(&self, sent: &[u8]) -> Result<Vec<Range>> {
        let mut d = Disclosure::default();
        if self.all {
            d.sent = vec![Range::new(0, sent.len())];
        } else if self.default {
            d.sent = vec![Range::new(0, sent.len())];
            for secret in request_secrets(sent, &[])? {
                d.hide(Direction::Sent, secret.range, sent.len());
            }
        } else {
            if let Some(s) = &self.spec {
                d.sent = s.sent_ranges(sent)?;
            }
            d.sent.extend(self.raw.sent.iter().copied());
        }
        d.sent = normalize(d.sent);
        if !self.secret_headers.is_empty() {
            for secret in request_secrets(sent, &self.secret_headers)? {
                if secret.named {
                    d.hide(Direction::Sent, secret.range, sent.len());
                }
            }
        }
        for (dir, r) in &self.hides {
            if *dir == Direction::Sent {
                d.hide(Direction::Sent, *r, sent.len());
            }
        }
        if self.hide_request_body {
            let body = parse_message(sent)?.body;
            d.hide(Direction::Sent, body, sent.len());
        }
        Ok(normalize(d.sent))
    }

    /// The response's ranges.
    fn received(&self, received: &[u8]) -> Result<Vec<Range>> {
        let mut d = Disclosure::default();
        if self.all || self.default {
            d.received = vec![Range::new(0, received.len())];
        } else {
            if let Some(s) = &self.spec {
                d.received = s.received_ranges(received)?;
            }
            d.received.extend(self.raw.received.iter().copied());
        }
        d.received = normalize(d.received);
        for (dir, r) in &self.hides {
            if *dir == Direction::Received {
                d.hide(Direction::Received, *r, received.len());
            }
        }
        Ok(normalize(d.received))
    }
}

/// The disclosure that reveal items select over the actual data (see
/// [`RevealItem`]; no items: the default).
///
/// A transcript of several requests is split into exchanges
/// ([`crate::exchange::split`]) and the items apply to each (see
/// [`RevealItem::In`]).
pub fn disclosure_from_items(
    items: &[RevealItem],
    sent: &[u8],
    received: &[u8],
) -> Result<Disclosure> {
    let spans = crate::exchange::split(sent, received)?;
    check_exchange_targets(items, spans.len())?;
    // Whether the selection starts from the default is the session's,
    // not an exchange's: `2/json:x` reveals nothing of exchange 1.
    let default = items.iter().all(RevealItem::only_hides);
    let mut d = Disclosure::default();
    let mut per_exchange = Vec::new();
    for (k, &(rq, rs)) in spans.iter().enumerate() {
        let mut sel = Selection::new(&items_for(items, k + 1, rq, rs));
        sel.default = default;
        let shift = |v: Vec<Range>, by: usize| {
            v.into_iter()
                .map(move |r| Range::new(r.start + by, r.end + by))
        };
        let q = sel.sent(&sent[rq.start..rq.end])?;
        let r = sel.received(&received[rs.start..rs.end])?;
        per_exchange.push((sel, r.is_empty(), q.is_empty()));
        d.sent.extend(shift(q, rq.start));
        d.received.extend(shift(r, rs.start));
    }
    // The verifier pairs a response with its request only while it can fix
    // the extent of every request before ([`crate::exchange`]): reveal
    // the framing of every request before the last exchange anything is
    // revealed of (not its line, values or body).
    if let Some(last) = per_exchange.iter().rposition(|(_, r, q)| !(*r && *q)) {
        d.sent.extend(earlier_framing(
            &per_exchange,
            &spans,
            last,
            Direction::Sent,
            sent,
            request_framing,
        )?);
    }
    // The verifier finds a response only after every response before it
    // ([`crate::exchange`]): reveal their framing up to the last response
    // anything is revealed of.
    if let Some(last) = per_exchange.iter().rposition(|(_, empty, _)| !empty) {
        d.received.extend(earlier_framing(
            &per_exchange,
            &spans,
            last,
            Direction::Received,
            received,
            |resp| {
                let m = parse_message(resp)?;
                Ok(crate::disclosure::complement(&m.body_spans, m.body.end))
            },
        )?);
    }
    d.sent = normalize(d.sent);
    d.received = normalize(d.received);
    Ok(d)
}

/// The `framing` of each exchange's message in `direction` before exchange
/// `last` (`data` is that direction's transcript, `spans` the exchanges'),
/// less what the exchange's own items hide, at its place in the
/// transcript.
fn earlier_framing(
    per_exchange: &[(Selection, bool, bool)],
    spans: &[(Range, Range)],
    last: usize,
    direction: Direction,
    data: &[u8],
    framing: impl Fn(&[u8]) -> Result<Vec<Range>>,
) -> Result<Vec<Range>> {
    let mut out = Vec::new();
    for (k, (sel, _, _)) in per_exchange.iter().enumerate().take(last) {
        let at = match direction {
            Direction::Sent => spans[k].0,
            Direction::Received => spans[k].1,
        };
        let mut f = Disclosure::default();
        let ranges = match direction {
            Direction::Sent => &mut f.sent,
            Direction::Received => &mut f.received,
        };
        *ranges = framing(&data[at.start..at.end])?;
        for (dir, r) in &sel.hides {
            if *dir == direction {
                f.hide(direction, *r, at.len());
            }
        }
        out.extend(
            f.ranges(direction)
                .iter()
                .map(|r| Range::new(r.start + at.start, r.end + at.start)),
        );
    }
    Ok(out)
}

/// The framing of `request`: what the verifier needs to see to find where
/// it ends ([`crate::exchange::framed_request_ends`]) and nothing more of
/// what it asks: the version at the end of the request line, each header's
/// name and colon, every line end, and the `Content-Length` and
/// `Transfer-Encoding` lines whole. The request line's method and target,
/// the other values and the body stay hidden (their lengths show).
pub fn request_framing(request: &[u8]) -> Result<Vec<Range>> {
    let m = parse_message(request)?;
    let line = m.start_line;
    let mut out = vec![Range::new(
        line.end.saturating_sub(11).max(line.start),
        line.end,
    )];
    for h in &m.headers {
        if matches!(h.name.as_str(), "content-length" | "transfer-encoding") {
            out.push(h.line);
            continue;
        }
        let colon = request[h.line.start..h.line.end]
            .iter()
            .position(|&b| b == b':')
            .map_or(h.line.start, |c| h.line.start + c + 1);
        out.push(Range::new(h.line.start, colon));
        out.push(Range::new(h.line.end.saturating_sub(2), h.line.end));
    }
    out.push(m.header_end);
    Ok(normalize(out))
}

/// The secret headers' values in `request` that `items` would reveal
/// without naming them (`all`, or a `sent:` range over them): what a user
/// may give away by mistake. Known before any network work: the request
/// decides. The query string is left out: many carry no secret
/// (`?page=2`), and `all` is how a user asks for one as it is.
///
/// `request` may hold several requests ([`crate::exchange::split_requests`]):
/// each is judged with the items that apply to it, and a secret's range is
/// in the whole of `request`.
pub fn unasked_secrets(items: &[RevealItem], request: &[u8]) -> Result<Vec<RequestSecret>> {
    let default = items.iter().all(RevealItem::only_hides);
    let requests = crate::exchange::split_requests(request)?;
    let mut out = Vec::new();
    for (k, rq) in requests.iter().enumerate() {
        let own = items_for(items, k + 1, *rq, Range::new(0, 0));
        let mut sel = Selection::new(&own);
        sel.default = default;
        let one = &request[rq.start..rq.end];
        let shown = sel.sent(one)?;
        let named_secret: Vec<String> = sel.secret_headers.clone();
        out.extend(
            request_secrets(one, &named_secret)?
                .into_iter()
                .filter(|s| s.item != RevealItem::Query && !own.contains(&s.item))
                .filter(|s| {
                    shown
                        .iter()
                        .any(|r| r.start < s.range.end && s.range.start < r.end)
                })
                .map(|s| of_request(s, k, requests.len(), rq.start)),
        );
    }
    Ok(out)
}

/// A secret of request `k` (from 0) of `n`, its range moved by `at`.
fn of_request(mut s: RequestSecret, k: usize, n: usize, at: usize) -> RequestSecret {
    s.range = Range::new(s.range.start + at, s.range.end + at);
    if n > 1 {
        s.what = format!("{} (request {})", s.what, k + 1);
        s.item = RevealItem::In(k + 1, Box::new(s.item));
    }
    s
}

/// The request's credentials (as [`request_secrets`] finds them, with the
/// headers `items` name secret) split by whether `revealed`, the ranges of
/// the request a verifier got, shows any of their bytes: `(hidden,
/// shown)`, each by what it is. What the prover tells its user after a
/// session.
pub fn secrets_by_visibility(
    items: &[RevealItem],
    request: &[u8],
    revealed: &[Range],
) -> (Vec<String>, Vec<String>) {
    let requests = crate::exchange::split_requests(request).unwrap_or_default();
    let n = requests.len();
    let secrets = requests.iter().enumerate().flat_map(|(k, rq)| {
        let named = Selection::new(&items_for(items, k + 1, *rq, Range::new(0, 0))).secret_headers;
        request_secrets(&request[rq.start..rq.end], &named)
            .unwrap_or_default()
            .into_iter()
            .map(move |s| of_request(s, k, n, rq.start))
    });
    let (mut hidden, mut shown) = (Vec::new(), Vec::new());
    for secret in secrets {
        let seen = revealed
            .iter()
            .any(|r| r.start < secret.range.end && secret.range.start < r.end);
        if seen { &mut shown } else { &mut hidden }.push(secret.what);
    }
    (hidden, shown)
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
    fn err(&self, d: &str) -> DisclosureError {
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

    /// `hide-req-body` hides exactly the request body, on top of the
    /// default (credentials hidden) or of any selection; the request built
    /// by [`http_request`] carries the body's length.
    #[test]
    fn hide_req_body_hides_exactly_the_body() {
        let body = br#"{"user":"ada","password":"hunter2"}"#;
        let headers = [("Cookie".to_string(), "sid=SECRET".to_string())];
        let req = http_request("POST", "a.test", 443, "/login", &headers, body, 0);
        let text = String::from_utf8_lossy(&req);
        assert!(text.starts_with("POST /login HTTP/1.1\r\n"), "{text}");
        assert!(text.contains(&format!("Content-Length: {}\r\n", body.len())));
        assert!(req.ends_with(body));
        let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let start = req.len() - body.len();
        let hidden = |items: &[RevealItem]| {
            let d = disclosure_from_items(items, &req, resp).unwrap();
            (0..req.len())
                .filter(|&i| !d.sent.iter().any(|r| r.start <= i && i < r.end))
                .collect::<Vec<_>>()
        };
        // The default reveals the body, hides the cookie's value.
        let cookie = text.find("sid=SECRET").unwrap();
        assert_eq!(hidden(&[]), (cookie..cookie + 10).collect::<Vec<_>>());
        // With hide-req-body: the cookie and the body.
        let item: RevealItem = "hide-req-body".parse().unwrap();
        assert_eq!(item.to_string(), "hide-req-body");
        let mut want: Vec<usize> = (cookie..cookie + 10).collect();
        want.extend(start..req.len());
        assert_eq!(hidden(std::slice::from_ref(&item)), want);
        // On top of `all`, only the body.
        assert_eq!(
            hidden(&[RevealItem::All, item]),
            (start..req.len()).collect::<Vec<_>>()
        );
        // A GET carries no Content-Length; a POST without a body does.
        let get = http_request("GET", "a.test", 8443, "/", &[], b"", 0);
        assert!(!String::from_utf8_lossy(&get).contains("Content-Length"));
        assert!(String::from_utf8_lossy(&get).contains("Host: a.test:8443\r\n"));
        let post = http_request("POST", "a.test", 443, "/", &[], b"", 0);
        assert!(String::from_utf8_lossy(&post).contains("Content-Length: 0\r\n"));
        assert!(valid_method("PATCH") && !valid_method("post") && !valid_method("GET /"));
    }

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

    /// The default hides the request's credentials (built-in names, named
    /// headers, the query string) and nothing else; `all` hides nothing,
    /// and says what it would give away.
    #[test]
    fn default_hides_credentials_only() {
        let req = b"GET /a/b?token=Q1 HTTP/1.1\r\nHost: a.test\r\nCookie: s=C1\r\n\
            Authorization: Bearer A1\r\nX-Api-Key: K1\r\nX-Custom: U1\r\nAccept: */*\r\n\r\n";
        let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        let shown = |items: &[&str]| {
            let d = disclosure_from_items(&parse_items(items).unwrap(), req, resp).unwrap();
            let o = d.open(req, resp).unwrap();
            let (s, r) = crate::disclosure::check_openings(req, resp, &o).unwrap();
            (s.text, r.hidden())
        };
        for items in [&[][..], &["secret-header:x-custom"], &["hide-recv:0-0"]] {
            let (s, hidden) = shown(items);
            for secret in ["Q1", "C1", "A1", "K1"] {
                assert!(!s.contains(secret), "{items:?}: {s}");
            }
            assert!(s.starts_with("GET /a/b█"), "{s}");
            assert!(s.contains("Host: a.test\r\nCookie: █"), "{s}");
            assert!(s.contains("Accept: */*"), "{s}");
            assert_eq!(hidden, 0);
            assert_eq!(
                s.contains("U1"),
                items.is_empty() || items[0] != "secret-header:x-custom"
            );
        }
        let (s, _) = shown(&["all", "secret-header:x-custom"]);
        assert!(s.contains("Cookie: s=C1") && !s.contains("U1"), "{s}");
        // The structural items hide the same credentials, unless named.
        let (s, _) = shown(&["http", "req-header:x-api-key"]);
        assert!(
            !s.contains("C1") && !s.contains("Q1") && s.contains("K1"),
            "{s}"
        );
        let (s, _) = shown(&["header:content-length", "query"]);
        assert!(!s.contains("C1") && s.contains("?token=Q1"), "{s}");

        let unasked = |items: &[&str]| -> Vec<String> {
            unasked_secrets(&parse_items(items).unwrap(), req)
                .unwrap()
                .into_iter()
                .map(|s| s.what)
                .collect()
        };
        assert_eq!(
            unasked(&["all"]),
            ["Cookie value", "Authorization value", "X-Api-Key value"]
        );
        assert_eq!(
            unasked(&["all", "req-header:cookie", "secret-header:x-api-key"]),
            ["Authorization value"]
        );
        assert!(unasked(&[]).is_empty());
        assert!(unasked(&["http", "json:a"]).is_empty());
        assert!(unasked(&["none", "sent:0-10"]).is_empty());
        assert_eq!(unasked(&["none", "sent:48-52"]), ["Cookie value"]);
        assert!(is_secret_header("X-CSRF-Token") && !is_secret_header("Accept"));
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
            "query",
            "secret-header:x-a",
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

//! Several HTTP/1.1 exchanges on one TLS connection: where each request
//! and each response lies in its direction's application data.
//!
//! Two sides split a transcript, and each from its own data only:
//!
//! - the prover, who holds every byte, splits by HTTP framing ([`split`]):
//!   reveal items are applied exchange by exchange over these spans;
//! - the verifier splits its own view ([`exchanges`]): requests by their
//!   framing from the start of the sent data for as long as it can fix
//!   each one's extent ([`framed_request_ends`]: every line end and the
//!   head's end revealed, header names and `Content-Length` revealed, and
//!   the hidden bytes of heads, a cookie's value say, proven in the proof
//!   to be neither CR nor LF, [`hidden_head_bytes`]), then by the runs of
//!   sent data it recorded itself between received data (a prover in
//!   proxy mode sends request `k + 1` only once response `k` is
//!   complete); responses by the framing of their revealed heads, from
//!   the start of the received data (a hidden head byte stops that split:
//!   later bytes belong to no exchange, except that the last request's
//!   response is all that follows the one before it; an interim `1xx`
//!   response belongs to the final one after it). Nothing of the split is
//!   taken from the prover: a prover that announces, reveals or claims
//!   another split changes no exchange a value is attributed to.
//!
//! Response `k` answers request `k` (HTTP/1.1 answers requests in order)
//! while the extent of every request before `k` is fixed: a hidden byte
//! that could be a line end could hide a whole request (or a body that
//! swallows the next visible request), whose response would then read as
//! the answer to a later one. It must also have begun to arrive after
//! request `k` was sent whole (the verifier's order); from the first
//! response that is not paired, no later one is.

use crate::disclosure::Range;
use crate::error::{malformed, Result};
use crate::http::parse_message;
use serde::{Deserialize, Serialize};
use webproof_attestation::OrderSpan;
use webproof_tls::Direction;

/// Most requests one session carries.
pub const MAX_EXCHANGES: usize = 32;

/// Where the request at the start of `data` ends: after its head, plus its
/// `Content-Length` or chunked body (a request without either has none).
pub fn request_end(data: &[u8]) -> Result<usize> {
    let m = parse_message(data)?;
    let framed = m.header(data, "content-length").is_some()
        || m.header(data, "transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().windows(7).any(|w| w == b"chunked"));
    Ok(if framed { m.body.end } else { m.header_end.end })
}

/// The requests of `sent` (all requests one after the other), by their
/// framing; the last runs to the end of the data.
pub fn split_requests(sent: &[u8]) -> Result<Vec<Range>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < sent.len() {
        if out.len() == MAX_EXCHANGES {
            return Err(malformed(
                "requests",
                format!("more than {MAX_EXCHANGES} requests in one session"),
            ));
        }
        let end = pos + request_end(&sent[pos..])?;
        out.push(Range::new(pos, end));
        pos = end;
    }
    if let Some(last) = out.last_mut() {
        last.end = sent.len();
    }
    if out.is_empty() {
        out.push(Range::new(0, 0));
    }
    Ok(out)
}

/// The responses of `received`, by their framing, at most `n`: the last
/// runs to the end of the data (a response without framing ends with it,
/// and bytes past the `n`-th response stay with it).
pub fn split_responses(received: &[u8], n: usize) -> Vec<Range> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < received.len() && out.len() + 1 < n {
        match crate::http::response_end(&received[pos..]) {
            Some(end) if end > 0 => {
                out.push(Range::new(pos, pos + end));
                pos += end;
            }
            _ => break,
        }
    }
    out.push(Range::new(pos, received.len()));
    out
}

/// How many of the requests in `sent` the responses in `received` answer,
/// by framing: complete responses, plus one for bytes after the last (a
/// response that ends with the connection, or a cut one). What a prover
/// that sent every request at once (MPC mode) checks once it reads the
/// responses.
pub fn responses_answered(sent: &[u8], received: &[u8]) -> Result<(usize, usize)> {
    let requests = split_requests(sent)?.len();
    let responses = split_responses(received, requests);
    let answered = responses.iter().filter(|r| !r.is_empty()).count();
    Ok((answered, requests))
}

/// The prover's split of a transcript it holds whole: request `k` and
/// response `k` for each request (a response that never came is empty, at
/// the end of the data). One request: the whole of each direction.
pub fn split(sent: &[u8], received: &[u8]) -> Result<Vec<(Range, Range)>> {
    let requests = split_requests(sent)?;
    let mut responses = split_responses(received, requests.len());
    while responses.len() < requests.len() {
        responses.push(Range::new(received.len(), received.len()));
    }
    Ok(requests.into_iter().zip(responses).collect())
}

/// One exchange as the verifier established it from its own view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// The request's bytes in the sent data.
    pub request: Range,
    /// The request line (`GET /a HTTP/1.1`), when its method, version and
    /// end are revealed; hidden bytes in it (a query string) are shown as
    /// `█`, revealed ones escaped as in the disclosed text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_line: Option<String>,
    /// The response's bytes in the received data; `None`: the verifier
    /// could not find it (a hidden byte in this or an earlier response's
    /// framing, or no response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Range>,
    /// The response's status code, when its status line is revealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

impl Exchange {
    /// Whether `range` of `direction` lies within this exchange.
    pub fn holds(&self, direction: Direction, range: Range) -> bool {
        let within = |r: Range| r.start <= range.start && range.end <= r.end;
        match direction {
            Direction::Sent => within(self.request),
            Direction::Received => self.response.is_some_and(within),
        }
    }
}

/// The index (from 0) of the exchange of `exchanges` that holds `range`.
pub fn exchange_of(exchanges: &[Exchange], direction: Direction, range: Range) -> Option<usize> {
    exchanges.iter().position(|e| e.holds(direction, range))
}

/// The verifier's split of its own view of a session (hidden bytes
/// `None`), with `order`, the runs of application data in the order it
/// recorded them, and `crlf_free`, sent ranges known to hold no CR or LF
/// (hidden request-head bytes the proof showed free of both; see the
/// module docs). Empty when nothing was sent.
pub fn exchanges(
    sent: &[Option<u8>],
    received: &[Option<u8>],
    order: &[OrderSpan],
    crlf_free: &[Range],
) -> Vec<Exchange> {
    // Requests whose extent the verifier fixes from the start, then the
    // rest by the runs of sent data it recorded between received data.
    let mut requests = Vec::new();
    let mut pos = 0;
    for e in framed_request_ends(sent, crlf_free) {
        requests.push(Range::new(pos, e));
        pos = e;
    }
    let fixed = requests.len();
    for g in sent_runs(order, sent.len()) {
        let g = Range::new(g.start.max(pos), g.end);
        if g.end > sent.len() || g.start >= g.end {
            continue;
        }
        let within = &sent[g.start..g.end];
        let ends = message_ends(within, false);
        if ends.last() == Some(&within.len()) && ends.len() > 1 {
            let mut start = g.start;
            for e in ends {
                requests.push(Range::new(start, g.start + e));
                start = g.start + e;
            }
        } else {
            requests.push(g);
        }
    }
    requests.truncate(MAX_EXCHANGES);
    let mut responses = response_ranges(received);
    let start = responses.last().map_or(0, |r| r.0.end);
    // The last request's response is whatever follows the one before it,
    // framing revealed or not: no other request is left to answer.
    if responses.len() + 1 == requests.len() && start < received.len() {
        let status = status_of(&received[start..]);
        responses.push((Range::new(start, received.len()), status));
    }
    // Response `k` answers request `k` while every request before `k` has
    // a fixed extent (request `k` itself starts where a request starts, so
    // the response answers the request its first bytes are), and only if
    // it began to arrive after the request was sent whole: a response
    // recorded earlier answers an earlier request, and from there on the
    // pairing is unknown.
    let mut paired = true;
    requests
        .into_iter()
        .enumerate()
        .map(|(k, request)| {
            let response = responses.get(k).copied().filter(|(r, _)| {
                paired &= k <= fixed
                    && (order.is_empty() || r.start >= received_before(order, request.end));
                paired
            });
            Exchange {
                request,
                // A hidden query string leaves the rest of the line to show;
                // the line must start and end as a request line does.
                request_line: first_line(&sent[request.start..request.end], true).filter(|l| {
                    (l.ends_with(" HTTP/1.1") || l.ends_with(" HTTP/1.0"))
                        && l.split(' ').next().is_some_and(crate::http::valid_method)
                }),
                response: response.map(|(r, _)| r),
                status: response.and_then(|(_, status)| status),
            }
        })
        .collect()
}

/// The runs of sent data between received data in `order`; without a
/// recorded order, all sent data is one run.
fn sent_runs(order: &[OrderSpan], sent_len: usize) -> Vec<Range> {
    let mut groups: Vec<Range> = Vec::new();
    let mut last_received = true;
    for s in order {
        let r = Range::new(s.start as usize, s.end as usize);
        match s.direction {
            Direction::Sent => match groups.last_mut() {
                Some(g) if !last_received && g.end == r.start => g.end = r.end,
                _ => groups.push(r),
            },
            Direction::Received => {}
        }
        last_received = s.direction == Direction::Received;
    }
    if groups.is_empty() && sent_len > 0 {
        groups.push(Range::new(0, sent_len));
    }
    groups
}

/// The responses of `view` from the start, by the framing of their
/// revealed heads, with the final status of each: an interim response
/// (`100 Continue`, `103 Early Hints`) belongs to the final response after
/// it, as both answer the same request.
fn response_ranges(view: &[Option<u8>]) -> Vec<(Range, Option<u16>)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut interim = None;
    for e in message_ends(view, true) {
        let status = status_of(&view[start..e]);
        let from = interim.take().unwrap_or(start);
        if status.is_some_and(|s| (100..200).contains(&s)) {
            interim = Some(from);
        } else {
            out.push((Range::new(from, e), status));
        }
        start = e;
    }
    out
}

/// The status code of the response at the start of `view`, when its status
/// line is revealed.
fn status_of(view: &[Option<u8>]) -> Option<u16> {
    let line = first_line(view, false)?;
    let code = line
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| line.strip_prefix("HTTP/1.0 "))?;
    code.get(..3)?.parse().ok()
}

/// Where each request of the sent `view` ends, from the start, for as long
/// as the verifier can fix each request's extent from what it knows: every
/// hidden byte of a head lies in `crlf_free` (proven to be neither CR nor
/// LF), so every line end, and the blank line that ends the head, is a
/// revealed CRLF; the request line ends in a revealed ` HTTP/1.1` or
/// ` HTTP/1.0`; every header's name is revealed up to its colon and is a
/// token, so no hidden byte can make a framing header; `Content-Length`
/// is revealed whole (and agrees with any repeat); there is no
/// `Transfer-Encoding`; the body lies within the data. A bare CR or LF,
/// or a line that folds onto the one before, stops the split: servers
/// disagree on those, and the split must be the server's.
pub fn framed_request_ends(view: &[Option<u8>], crlf_free: &[Range]) -> Vec<usize> {
    let free = |i: usize| {
        let k = crlf_free.partition_point(|r| r.end <= i);
        crlf_free.get(k).is_some_and(|r| r.start <= i)
    };
    // The line at `from` (hidden bytes `None`) and where the next starts.
    let line = |from: usize| -> Option<(Vec<Option<u8>>, usize)> {
        let mut out = Vec::new();
        let mut i = from;
        loop {
            match *view.get(i)? {
                None if free(i) => out.push(None),
                None => return None,
                Some(b'\r') => {
                    return (view.get(i + 1)? == &Some(b'\n')).then_some((out, i + 2));
                }
                Some(b'\n') => return None,
                Some(b) => out.push(Some(b)),
            }
            i += 1;
        }
    };
    let revealed = |v: &[Option<u8>]| -> Option<Vec<u8>> { v.iter().copied().collect() };
    let mut ends = Vec::new();
    let mut pos = 0;
    'requests: while pos < view.len() && ends.len() < MAX_EXCHANGES {
        let Some((start, mut p)) = line(pos) else {
            break;
        };
        let version = start
            .len()
            .checked_sub(9)
            .and_then(|i| revealed(&start[i..]));
        if !matches!(version.as_deref(), Some(b" HTTP/1.1" | b" HTTP/1.0")) {
            break;
        }
        let mut content_length: Option<usize> = None;
        loop {
            let Some((h, next)) = line(p) else {
                break 'requests;
            };
            p = next;
            if h.is_empty() {
                break;
            }
            let Some(colon) = h.iter().position(|&b| b == Some(b':')) else {
                break 'requests;
            };
            let Some(name) = revealed(&h[..colon]).filter(|n| !n.is_empty()) else {
                break 'requests;
            };
            if !name.iter().all(|&b| is_tchar(b)) {
                break 'requests;
            }
            let name = name.to_ascii_lowercase();
            if name == b"transfer-encoding" {
                break 'requests;
            }
            if name == b"content-length" {
                let n = revealed(&h[colon + 1..])
                    .and_then(|v| String::from_utf8(v).ok())
                    .and_then(|v| {
                        let v = v.trim_matches([' ', '\t']);
                        (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                            .then(|| v.parse::<usize>().ok())
                            .flatten()
                    });
                match (n, content_length) {
                    (Some(n), None) => content_length = Some(n),
                    (Some(n), Some(m)) if n == m => {}
                    _ => break 'requests,
                }
            }
        }
        let Some(end) = p
            .checked_add(content_length.unwrap_or(0))
            .filter(|&e| e <= view.len())
        else {
            break;
        };
        ends.push(end);
        pos = end;
    }
    ends
}

/// The sent ranges a verifier knows to hold no CR or LF: its revealed
/// bytes that are neither, and the hidden ones of `proven` (shown free of
/// both by the proof), merged, the first `max` runs. What an attestation
/// signs, so a presentation that hides more of the requests than the
/// verifier saw still lets a relying party fix where they end.
pub fn known_crlf_free(view: &[Option<u8>], proven: &[Range], max: usize) -> Vec<Range> {
    let mut out: Vec<Range> = Vec::new();
    let mut k = 0;
    for (i, b) in view.iter().enumerate() {
        while k < proven.len() && proven[k].end <= i {
            k += 1;
        }
        let known = match b {
            Some(b) => !matches!(b, b'\r' | b'\n'),
            None => proven.get(k).is_some_and(|r| r.start <= i),
        };
        if !known {
            continue;
        }
        if let Some(r) = out.last_mut().filter(|r| r.end == i) {
            r.end = i + 1;
        } else if out.len() == max {
            break;
        } else {
            out.push(Range::new(i, i + 1));
        }
    }
    out
}

/// An HTTP token character (RFC 9110 §5.6.2): what a header name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The hidden bytes of the request heads in `sent` (every request, by its
/// own framing) that hold no CR or LF: what a prover proves free of both,
/// so that the verifier can fix each request's extent without seeing them
/// ([`framed_request_ends`]). `revealed`: the sent ranges it reveals.
pub fn hidden_head_bytes(sent: &[u8], revealed: &[Range]) -> Vec<Range> {
    let Ok(requests) = split_requests(sent) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for rq in requests {
        let Ok(m) = parse_message(&sent[rq.start..rq.end]) else {
            continue;
        };
        let head = Range::new(rq.start, rq.start + m.header_end.end);
        let shown: Vec<Range> = revealed
            .iter()
            .filter_map(|r| {
                let (a, b) = (r.start.max(head.start), r.end.min(head.end));
                (a < b).then(|| Range::new(a - head.start, b - head.start))
            })
            .collect();
        for h in crate::disclosure::complement(&crate::disclosure::normalize(shown), head.len()) {
            // The hidden run split around its line ends (which cannot be
            // proven free of them; the verifier then stops its split there).
            let (from, to) = (head.start + h.start, head.start + h.end);
            let mut a = from;
            for (i, b) in sent[from..to]
                .iter()
                .enumerate()
                .map(|(k, b)| (from + k, b))
            {
                if matches!(b, b'\r' | b'\n') {
                    if a < i {
                        out.push(Range::new(a, i));
                    }
                    a = i + 1;
                }
            }
            if a < to {
                out.push(Range::new(a, to));
            }
        }
    }
    out
}

/// How much received data the verifier had recorded when it forwarded the
/// sent byte just before offset `end` (the last of a request).
fn received_before(order: &[OrderSpan], end: usize) -> usize {
    let mut received = 0;
    for s in order {
        match s.direction {
            Direction::Sent if (s.start as usize) < end && end <= s.end as usize => {
                return received
            }
            Direction::Received => received = received.max(s.end as usize),
            Direction::Sent => {}
        }
    }
    received
}

/// The first line of `view` (without its CRLF, which must be revealed),
/// hidden bytes shown as [`crate::disclosure::HIDDEN_CHAR`] and revealed
/// ones escaped as in [`crate::disclosure::DisclosedData::text`];
/// `hidden_ok`: whether hidden bytes may be in it (a request line whose
/// query string is hidden), else such a line is `None`.
fn first_line(view: &[Option<u8>], hidden_ok: bool) -> Option<String> {
    use crate::disclosure::HIDDEN_CHAR;
    let end = view
        .windows(2)
        .position(|w| w == [Some(b'\r'), Some(b'\n')])?;
    let line = &view[..end];
    if !hidden_ok && line.iter().any(Option::is_none) {
        return None;
    }
    let mut out = String::new();
    for run in line.chunk_by(|a, b| a.is_some() == b.is_some()) {
        if run[0].is_none() {
            out.extend(core::iter::repeat_n(HIDDEN_CHAR, run.len()));
        } else {
            let bytes: Vec<u8> = run.iter().flatten().copied().collect();
            out.push_str(&webproof_attestation::escape_revealed(&bytes, HIDDEN_CHAR));
        }
    }
    Some(out)
}

/// Where each message of `view` ends, from the start, by framing on
/// revealed bytes ([`crate::json::message_bodies`]: it stops at the first
/// message whose framing is hidden).
fn message_ends(view: &[Option<u8>], response: bool) -> Vec<usize> {
    let direction = if response {
        Direction::Received
    } else {
        Direction::Sent
    };
    crate::json::message_bodies(view, direction)
        .into_iter()
        .map(|b| b.raw.end)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const R1: &[u8] = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
    const R2: &[u8] = b"POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
    const R3: &[u8] = b"GET /c HTTP/1.1\r\nHost: h\r\nCookie: s=1\r\nConnection: close\r\n\r\n";
    const A1: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    const A2: &[u8] =
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    const A3: &[u8] = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

    fn full(d: &[u8]) -> Vec<Option<u8>> {
        d.iter().map(|&b| Some(b)).collect()
    }

    fn span(direction: Direction, start: usize, end: usize) -> OrderSpan {
        OrderSpan {
            direction,
            start: start as u32,
            end: end as u32,
        }
    }

    #[test]
    fn the_prover_splits_by_framing() {
        let sent = [R1, R2, R3].concat();
        let received = [A1, A2, A3].concat();
        let s = split(&sent, &received).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(&sent[s[1].0.start..s[1].0.end], R2);
        assert_eq!(&received[s[1].1.start..s[1].1.end], A2);
        assert_eq!(&received[s[2].1.start..s[2].1.end], A3);
        // One request: each direction whole, whatever follows.
        let one = split(R1, &[A1, b"junk"].concat()).unwrap();
        assert_eq!(
            one,
            vec![(Range::new(0, R1.len()), Range::new(0, A1.len() + 4))]
        );
    }

    #[test]
    fn the_verifier_splits_its_own_view() {
        let sent = [R1, R2, R3].concat();
        let received = [A1, A2, A3].concat();
        let (a, b) = (R1.len(), R1.len() + R2.len());
        let (x, y) = (A1.len(), A1.len() + A2.len());
        let order = vec![
            span(Direction::Sent, 0, a),
            span(Direction::Received, 0, x),
            span(Direction::Sent, a, b),
            span(Direction::Received, x, y),
            span(Direction::Sent, b, sent.len()),
            span(Direction::Received, y, received.len()),
        ];
        // The cookie's value hidden: the third request splits by order.
        let mut view = full(&sent);
        let c = b + R3.windows(3).position(|w| w == b"s=1").unwrap();
        for v in &mut view[c..c + 3] {
            *v = None;
        }
        let e = exchanges(&view, &full(&received), &order, &[]);
        assert_eq!(e.len(), 3);
        assert_eq!(e[1].request, Range::new(a, b));
        assert_eq!(e[1].request_line.as_deref(), Some("POST /b HTTP/1.1"));
        assert_eq!(e[1].status, Some(201));
        assert_eq!(e[2].response, Some(Range::new(y, received.len())));
        assert_eq!(e[2].status, Some(404));
        assert_eq!(
            exchange_of(&e, Direction::Received, Range::new(x + 3, x + 5)),
            Some(1)
        );
        // A hidden query string shows as hidden in the request line.
        let mut q = full(&sent);
        q[5] = None; // the `a` of `GET /a`
        assert_eq!(
            exchanges(&q, &full(&received), &order, &[])[0]
                .request_line
                .as_deref(),
            Some("GET /█ HTTP/1.1")
        );
        // Pipelined (one run), heads revealed: split by framing.
        let one_run = vec![
            span(Direction::Sent, 0, sent.len()),
            span(Direction::Received, 0, received.len()),
        ];
        let e = exchanges(&full(&sent), &full(&received), &one_run, &[]);
        assert_eq!(e.len(), 3);
        assert_eq!(e[2].request, Range::new(b, sent.len()));
    }

    /// The split is the verifier's: a hidden response head stops it, so
    /// bytes past it belong to no exchange, whatever the prover meant.
    #[test]
    fn a_hidden_head_stops_the_response_split() {
        let sent = [R1, R2].concat();
        let received = [A1, A2].concat();
        let mut view = full(&received);
        view[5] = None; // in A1's status line
        let order = vec![
            span(Direction::Sent, 0, R1.len()),
            span(Direction::Received, 0, A1.len()),
            span(Direction::Sent, R1.len(), sent.len()),
            span(Direction::Received, A1.len(), received.len()),
        ];
        let e = exchanges(&full(&sent), &view, &order, &[]);
        assert_eq!(e.len(), 2);
        assert!(e.iter().all(|e| e.response.is_none()));
        assert_eq!(
            exchange_of(
                &e,
                Direction::Received,
                Range::new(A1.len() + 2, A1.len() + 4)
            ),
            None
        );
    }

    /// Items apply to every exchange unless they name one; naming a later
    /// exchange reveals the framing of the responses before it, so the
    /// verifier's own split finds the claim's body.
    #[test]
    fn items_apply_per_exchange() {
        use crate::http::{disclosure_from_items, parse_items, unasked_secrets};
        let a2 = b"HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"id\":42,\"x\":1}".to_vec();
        let sent = [R1, R2, R3].concat();
        let received = [A1, &a2[..], A3].concat();
        // Default: each request without its credentials (R3's cookie).
        let d = disclosure_from_items(&[], &sent, &received).unwrap();
        assert_eq!(d.received, vec![Range::new(0, received.len())]);
        let c = R1.len() + R2.len() + R3.windows(3).position(|w| w == b"s=1").unwrap();
        assert!(d.sent.iter().all(|r| r.end <= c || r.start >= c + 3));
        // `2/json:id`: the value of response 2, the framing of response 1.
        let items = parse_items(&["2/json:id"]).unwrap();
        let d = disclosure_from_items(&items, &sent, &received).unwrap();
        let view: Vec<Option<u8>> = (0..received.len())
            .map(|i| {
                d.received
                    .iter()
                    .any(|r| r.start <= i && i < r.end)
                    .then(|| received[i])
            })
            .collect();
        let sview: Vec<Option<u8>> = (0..sent.len())
            .map(|i| {
                d.sent
                    .iter()
                    .any(|r| r.start <= i && i < r.end)
                    .then(|| sent[i])
            })
            .collect();
        let order = vec![
            span(Direction::Sent, 0, R1.len()),
            span(Direction::Received, 0, A1.len()),
            span(Direction::Sent, R1.len(), R1.len() + R2.len()),
            span(Direction::Received, A1.len(), A1.len() + a2.len()),
            span(Direction::Sent, R1.len() + R2.len(), sent.len()),
            span(Direction::Received, A1.len() + a2.len(), received.len()),
        ];
        // Request 1's framing is revealed, its hidden bytes proven free of
        // line ends: the verifier fixes its extent and pairs response 2.
        let free = hidden_head_bytes(&sent, &d.sent);
        assert!(!free.is_empty());
        assert_eq!(
            framed_request_ends(&sview, &free)[..2],
            [R1.len(), R1.len() + R2.len()]
        );
        let e = exchanges(&sview, &view, &order, &free);
        assert_eq!(e[1].status, Some(200));
        assert_eq!(e[0].request_line, None, "request 1's line is not revealed");
        assert!(sview[4].is_none(), "nor its target");
        assert_eq!(exchanges(&sview, &view, &order, &[])[1].response, None);
        assert!(
            view[A1.len() - 2].is_none(),
            "response 1's body stays hidden"
        );
        let claims = crate::json::claims_from_items(&items, &sent, &received, &d).unwrap();
        assert_eq!(claims.len(), 1);
        assert_eq!(
            exchange_of(&e, Direction::Received, claims[0].value),
            Some(1)
        );
        assert_eq!(&received[claims[0].value.start..claims[0].value.end], b"42");
        // An exchange past the last is refused.
        let err = disclosure_from_items(&parse_items(&["4/body"]).unwrap(), &sent, &received);
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("exchange 4 does not exist"));
        assert!("2/sent:0-3".parse::<crate::http::RevealItem>().is_err());
        assert!("0/body".parse::<crate::http::RevealItem>().is_err());
        // `all` over request 3's cookie is caught, named by its request.
        let s = unasked_secrets(&parse_items(&["all"]).unwrap(), &sent).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].item.to_string(), "3/req-header:cookie");
        assert_eq!(s[0].range, Range::new(c, c + 3));
    }

    /// A prover that lies about the split: it sends requests 1 and 2 in
    /// one flight with a hidden cookie (so the verifier cannot split that
    /// run), waits for both responses, then sends request 3, hoping
    /// response 2 reads as the answer to request 3; it claims a JSON value
    /// of response 3 on response 2's body; it hides response 2's head so
    /// response 3's value reads as response 2's. None makes a value
    /// appear in another exchange.
    #[test]
    fn a_prover_cannot_move_a_value_to_another_exchange() {
        let q1 = b"GET /a HTTP/1.1\r\nCookie: s=1\r\n\r\n";
        let q2 = b"GET /b HTTP/1.1\r\nCookie: s=1\r\n\r\n";
        let q3 = b"GET /c HTTP/1.1\r\nConnection: close\r\n\r\n";
        let body = |v: &str| {
            let doc = format!("{{\"id\":{v}}}");
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{doc}",
                doc.len()
            )
            .into_bytes()
        };
        let (a1, a2, a3) = (body("1"), body("2"), body("3"));
        let sent = [&q1[..], q2, q3].concat();
        let received = [a1.clone(), a2.clone(), a3.clone()].concat();
        let mut sview = full(&sent);
        for (i, w) in sent.windows(3).enumerate() {
            if w == b"s=1" {
                sview[i..i + 3].iter_mut().for_each(|b| *b = None);
            }
        }
        let (x, y) = (a1.len(), a1.len() + a2.len());
        let q12 = q1.len() + q2.len();
        let order = vec![
            span(Direction::Sent, 0, q12),
            span(Direction::Received, 0, y),
            span(Direction::Sent, q12, sent.len()),
            span(Direction::Received, y, received.len()),
        ];
        let e = exchanges(&sview, &full(&received), &order, &[]);
        // Two runs of requests: the verifier sees two requests; response 2
        // came before the second was sent, so it answers neither shown.
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].response, Some(Range::new(0, x)));
        assert_eq!(e[1].response, None);
        let v3 = Range::new(received.len() - 2, received.len() - 1);
        assert_eq!(&received[v3.start..v3.end], b"3");
        assert_eq!(exchange_of(&e, Direction::Received, v3), None);
        assert_eq!(
            exchange_of(&e, Direction::Received, Range::new(y - 2, y - 1)),
            None
        );

        // A JSON claim naming response 2's body for response 3's value.
        let rview = full(&received);
        let bodies = crate::json::message_bodies(&rview, Direction::Received);
        let claim = crate::json::JsonClaim {
            direction: Direction::Received,
            body: bodies[1].raw,
            path: "id".into(),
            value: v3,
            hidden_strings: Vec::new(),
            hidden_tokens: Vec::new(),
        };
        assert!(crate::json::verify_claims(&full(&sent), &rview, &[claim]).is_err());

        // Response 2's head hidden: response 3 is found by no one.
        let mut hidden = full(&received);
        hidden[x + 2] = None;
        let honest_order = vec![
            span(Direction::Sent, 0, q1.len()),
            span(Direction::Received, 0, x),
            span(Direction::Sent, q1.len(), q12),
            span(Direction::Received, x, y),
            span(Direction::Sent, q12, sent.len()),
            span(Direction::Received, y, received.len()),
        ];
        let e = exchanges(&sview, &hidden, &honest_order, &[]);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].response, Some(Range::new(0, x)));
        assert!(e[1].response.is_none() && e[2].response.is_none());
        assert_eq!(exchange_of(&e, Direction::Received, v3), None);
        // Honest, the same bytes: response 3's value is exchange 3's once
        // the hidden cookies are proven free of CR and LF, and only then.
        let free: Vec<Range> = sview
            .iter()
            .enumerate()
            .filter(|(_, b)| b.is_none())
            .map(|(i, _)| Range::new(i, i + 1))
            .collect();
        let free = crate::disclosure::normalize(free);
        assert_eq!(
            hidden_head_bytes(&sent, &complement_of(&free, sent.len())),
            free
        );
        let e = exchanges(&sview, &full(&received), &honest_order, &free);
        assert_eq!(exchange_of(&e, Direction::Received, v3), Some(2));
        let e = exchanges(&sview, &full(&received), &honest_order, &[]);
        assert_eq!(exchange_of(&e, Direction::Received, v3), None);
    }

    fn complement_of(v: &[Range], len: usize) -> Vec<Range> {
        crate::disclosure::complement(v, len)
    }

    /// Hides `secret` wherever it occurs in `data`: the view and the hidden
    /// ranges.
    fn hide(data: &[u8], secret: &[u8]) -> (Vec<Option<u8>>, Vec<Range>) {
        let mut view = full(data);
        let mut hidden = Vec::new();
        for i in 0..=data.len().saturating_sub(secret.len()) {
            if &data[i..i + secret.len()] == secret {
                view[i..i + secret.len()].iter_mut().for_each(|b| *b = None);
                hidden.push(Range::new(i, i + secret.len()));
            }
        }
        (view, crate::disclosure::normalize(hidden))
    }

    /// The attack the CR/LF proof closes: a hidden cookie value that ends
    /// the head and starts a `POST` whose body swallows the next visible
    /// request, so the server answers the hidden `POST` after the visible
    /// `GET /b` was sent. Without a proof that the hidden bytes hold no
    /// line end, the verifier pairs nothing past request 1; the prover
    /// cannot claim the cookie free of CR and LF (its proof would fail), and
    /// its own [`hidden_head_bytes`] leaves the line ends out.
    #[test]
    fn a_hidden_request_in_a_cookie_pairs_nothing_after_it() {
        let evil = b"1\r\n\r\nPOST /x HTTP/1.1\r\nContent-Length: 38\r\nX: y";
        let q1 = [&b"GET /a HTTP/1.1\r\nCookie: "[..], evil, b"\r\n\r\n"].concat();
        let q2 = b"GET /b HTTP/1.1\r\nConnection: close\r\n\r\n";
        assert_eq!(q2.len(), 38);
        let sent = [&q1[..], q2].concat();
        let a1 = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na".to_vec();
        let ax = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx".to_vec();
        let received = [a1.clone(), ax.clone()].concat();
        let (sview, hidden) = hide(&sent, evil);
        let order = vec![
            span(Direction::Sent, 0, q1.len()),
            span(Direction::Received, 0, a1.len()),
            span(Direction::Sent, q1.len(), sent.len()),
            span(Direction::Received, a1.len(), received.len()),
        ];
        let e = exchanges(&sview, &full(&received), &order, &[]);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].response, Some(Range::new(0, a1.len())));
        assert_eq!(e[1].response, None, "response x must not answer GET /b");
        // The prover's own list of bytes to prove leaves out the line ends,
        // so the verifier still cannot fix request 1's extent.
        let free = hidden_head_bytes(&sent, &complement_of(&hidden, sent.len()));
        assert!(free.iter().all(|r| sent[r.start..r.end]
            .iter()
            .all(|&b| b != b'\r' && b != b'\n')));
        assert_eq!(framed_request_ends(&sview, &free), Vec::<usize>::new());
        let e = exchanges(&sview, &full(&received), &order, &free);
        assert_eq!(e[1].response, None);
    }

    /// What stops the verifier's framing of requests.
    #[test]
    fn request_framing_needs_every_line_end_and_framing_header() {
        let ok = |req: &[u8], secret: &[u8]| {
            let (view, hidden) = hide(req, secret);
            framed_request_ends(&view, &hidden)
        };
        let r = b"GET /a?k=1 HTTP/1.1\r\nHost: h\r\nCookie: c=2\r\n\r\n";
        assert_eq!(ok(r, b"c=2"), vec![r.len()]);
        assert_eq!(ok(r, b"k=1"), vec![r.len()]);
        // Not proven free of CR and LF: nothing is fixed.
        let (view, _) = hide(r, b"c=2");
        assert!(framed_request_ends(&view, &[]).is_empty());
        // A header name hidden (it could be `Content-Length`).
        assert!(ok(r, b"Cookie").is_empty());
        // A hidden `Content-Length` value.
        let p = b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n";
        assert_eq!(ok(p, b"abc"), vec![p.len() - 18, p.len()]);
        assert!(ok(p, b": 3").is_empty());
        // Repeated lengths that disagree, chunked bodies, folded lines,
        // bare line ends and a request line without a version stop it.
        for bad in [
            &b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"[..],
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\nY: b\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\rY: b\r\n\r\n",
            b"GET /\r\n\r\n",
            b"GET / HTTP/1.1\r\nX : a\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc",
        ] {
            assert!(
                ok(bad, b"\x00").is_empty(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        // Matching repeated lengths are one length.
        let two = b"POST / HTTP/1.1\r\ncontent-length: 1\r\nContent-Length:1 \r\n\r\nz";
        assert_eq!(ok(two, b"\x00"), vec![two.len()]);
    }

    /// What a verifier knows free of line ends (its revealed bytes that are
    /// neither, the proven hidden ones) carries the pairing to a
    /// presentation that hides more of the requests: with only the framing
    /// of request 1 shown, its ends are still fixed.
    #[test]
    fn known_line_end_free_bytes_carry_the_pairing_forward() {
        let sent = [R1, R2, R3].concat();
        let (view, hidden) = hide(&sent, b"s=1");
        let known = known_crlf_free(&view, &hidden, usize::MAX);
        assert!(known.iter().all(|r| sent[r.start..r.end]
            .iter()
            .all(|&b| b != b'\r' && b != b'\n')));
        let crlfs = sent.iter().filter(|&&b| b == b'\r' || b == b'\n').count();
        assert_eq!(
            known.iter().map(|r| r.len()).sum::<usize>(),
            sent.len() - crlfs
        );
        // Not proven: the cookie is not known, the split stops before it.
        assert!(known_crlf_free(&view, &[], usize::MAX)
            .iter()
            .all(|r| r.end <= hidden[0].start || r.start >= hidden[0].end));
        assert_eq!(known_crlf_free(&view, &hidden, 2).len(), 2);
        // A presentation showing only request 1's framing and request 2.
        let shown = [
            crate::http::request_framing(R1).unwrap(),
            vec![Range::new(0, R2.len())],
        ];
        let mut pview = vec![None; sent.len()];
        for (r, at) in shown[0]
            .iter()
            .map(|r| (r, 0))
            .chain(shown[1].iter().map(|r| (r, R1.len())))
        {
            for i in r.start + at..r.end + at {
                pview[i] = Some(sent[i]);
            }
        }
        assert!(pview[4].is_none(), "request 1's target is hidden");
        let ends = framed_request_ends(&pview, &known);
        assert_eq!(ends[..2], [R1.len(), R1.len() + R2.len()]);
        assert!(framed_request_ends(&pview, &[]).is_empty());
    }

    /// An interim `100 Continue` answers the same request as the final
    /// response after it: it does not shift the pairing.
    #[test]
    fn interim_responses_belong_to_the_final_one() {
        let sent = [R2, R1].concat();
        let cont = b"HTTP/1.1 100 Continue\r\n\r\n";
        let received = [&cont[..], A1, A3].concat();
        let order = vec![
            span(Direction::Sent, 0, R2.len()),
            span(Direction::Received, 0, cont.len() + A1.len()),
            span(Direction::Sent, R2.len(), sent.len()),
            span(Direction::Received, cont.len() + A1.len(), received.len()),
        ];
        let e = exchanges(&full(&sent), &full(&received), &order, &[]);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].response, Some(Range::new(0, cont.len() + A1.len())));
        assert_eq!(e[0].status, Some(200));
        assert_eq!(e[1].status, Some(404));
    }
}

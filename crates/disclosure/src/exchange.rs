//! Several HTTP/1.1 exchanges on one TLS connection: where each request
//! and each response lies in its direction's application data.
//!
//! Two sides split a transcript, and each from its own data only:
//!
//! - the prover, who holds every byte, splits by HTTP framing ([`split`]):
//!   reveal items are applied exchange by exchange over these spans;
//! - the verifier splits its own view ([`exchanges`]): responses by the
//!   framing of the revealed response heads, parsed from the start of the
//!   received data (a hidden head byte stops the split: later bytes belong
//!   to no exchange, except that the last request's response is all that
//!   follows the one before it); requests by the runs of sent data it recorded itself
//!   between received data (a prover in proxy mode sends request `k + 1`
//!   only once response `k` is complete), each run split further where its
//!   request heads are revealed whole. Nothing of the split is taken from
//!   the prover: a prover that announces, reveals or claims another split
//!   changes no exchange a value is attributed to.
//!
//! Response `k` answers request `k` (HTTP/1.1 answers requests in order),
//! if it began to arrive after request `k` was sent whole (the verifier's
//! order again); from the first response that did not, no later response
//! is paired with a request.
//! Known limit: hidden request bytes (credentials) are not proven free of
//! CR and LF, so a hidden header value could carry a whole extra request
//! whose response the verifier would pair with the next visible request.
//! The verifier's pairing is therefore exact for sessions whose request
//! heads it sees whole, and for the others only as exact as the prover's
//! hidden bytes are honest headers; the response split does not depend on
//! it.

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
/// recorded them (see the module docs). Empty when nothing was sent.
pub fn exchanges(
    sent: &[Option<u8>],
    received: &[Option<u8>],
    order: &[OrderSpan],
) -> Vec<Exchange> {
    // Runs of sent data between received data, as the verifier recorded
    // them; without a recorded order, all sent data is one run.
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
    if groups.is_empty() && !sent.is_empty() {
        groups.push(Range::new(0, sent.len()));
    }
    let mut requests = Vec::new();
    for g in groups {
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
    let mut responses = Vec::new();
    let mut start = 0;
    for e in message_ends(received, true) {
        responses.push(Range::new(start, e));
        start = e;
    }
    // The last request's response is whatever follows the one before it,
    // framing revealed or not: no other request is left to answer.
    if responses.len() + 1 == requests.len() && start < received.len() {
        responses.push(Range::new(start, received.len()));
    }
    // A response answers a request only if it began to arrive after the
    // request was sent whole: a response recorded earlier answers an
    // earlier request (several in one run of hidden heads, say), and from
    // there on the pairing is unknown.
    let mut paired = true;
    requests
        .into_iter()
        .enumerate()
        .map(|(k, request)| {
            let response = responses.get(k).copied().filter(|r| {
                paired &= order.is_empty() || r.start >= received_before(order, request.end);
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
                response,
                status: response.and_then(|r| {
                    let line = first_line(&received[r.start..r.end], false)?;
                    let code = line
                        .strip_prefix("HTTP/1.1 ")
                        .or_else(|| line.strip_prefix("HTTP/1.0 "))?;
                    code.get(..3)?.parse().ok()
                }),
            }
        })
        .collect()
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
        let e = exchanges(&view, &full(&received), &order);
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
            exchanges(&q, &full(&received), &order)[0]
                .request_line
                .as_deref(),
            Some("GET /█ HTTP/1.1")
        );
        // Pipelined (one run), heads revealed: split by framing.
        let one_run = vec![
            span(Direction::Sent, 0, sent.len()),
            span(Direction::Received, 0, received.len()),
        ];
        let e = exchanges(&full(&sent), &full(&received), &one_run);
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
        let e = exchanges(&full(&sent), &view, &order);
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
        let e = exchanges(&sview, &view, &order);
        assert_eq!(e[1].status, Some(200));
        assert_eq!(e[0].request_line, None, "request 1 is not revealed");
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
        let e = exchanges(&sview, &full(&received), &order);
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
        let e = exchanges(&sview, &hidden, &honest_order);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].response, Some(Range::new(0, x)));
        assert!(e[1].response.is_none() && e[2].response.is_none());
        assert_eq!(exchange_of(&e, Direction::Received, v3), None);
        // Honest, the same bytes: response 3's value is exchange 3's.
        let e = exchanges(&sview, &full(&received), &honest_order);
        assert_eq!(exchange_of(&e, Direction::Received, v3), Some(2));
    }
}

//! The prover/verifier link over the browser's WebSocket.
//!
//! This module owns the byte stream under the protocol in a page: binary
//! WebSocket messages carry the stream (as `webproof_net::transport::WsStream`
//! does natively; message boundaries mean nothing), and the multiplexed
//! section of the link (`webproof_proxy::mux`) is demultiplexed as messages
//! arrive, in the socket's event handler, so no task has to pump it.
//!
//! The browser gives no backpressure to wait on: every write is handed to
//! `WebSocket.send` at once (the browser queues it) and every message is
//! buffered until read. Handles ([`PlainIo`], [`StreamIo`]) are
//! `futures::io` streams the proof engine's `Channel` runs over; they are
//! `Send` (the engine requires it) because the socket itself stays in a
//! thread-local table and the handles hold only its id and the buffers.
//!
//! One thread runs both the TLS relay and the engine's preprocessing, and a
//! future that is always ready never returns to the event loop, where the
//! socket's messages are delivered. So while the relay is open, a read of
//! the preprocessing stream that comes more than [`YIELD_AFTER_MS`] after
//! the last event-loop turn yields once (a message to ourselves on a
//! `MessageChannel`, which is not clamped like nested timers): relay
//! frames that arrived during the computation are delivered and the TLS
//! session moves on before the next stretch of engine work. The same
//! test decides at the engine's own pauses ([`Link::pause_while_relaying`],
//! `webproof_core::pause`): once per Ferret tree and every few base OTs, so
//! a relay frame waits for at most one tree's work rather than a whole
//! iteration's.

use futures::io::{AsyncRead, AsyncWrite};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{BinaryType, CloseEvent, MessageChannel, MessageEvent, WebSocket};
use webproof_proxy::mux::{encode_chunks, Demux, END_MARKER, PREPROCESSING, RELAY};

/// Longest stretch of engine work between event-loop turns while the TLS
/// relay is open (milliseconds).
pub const YIELD_AFTER_MS: f64 = 4.0;

/// An open socket: the socket, the channel that carries the link's yield
/// messages, and the handlers, which live as long as the link.
struct Socket {
    ws: WebSocket,
    channel: MessageChannel,
    _handlers: Vec<Closure<dyn FnMut(JsValue)>>,
}

thread_local! {
    /// Open sockets by link id: JavaScript objects never leave this thread,
    /// so a [`Link`] holds only its id and buffers, and is `Send`.
    static SOCKETS: RefCell<HashMap<u32, Socket>> = RefCell::new(HashMap::new());
    static NEXT_ID: RefCell<u32> = const { RefCell::new(0) };
}

/// Received bytes and the state of the link, shared by the socket's
/// handlers and the handles.
#[derive(Default)]
struct Shared {
    open: bool,
    /// Bytes of the link outside a multiplexed section.
    plain: VecDeque<u8>,
    /// While the peer's multiplexed section is being read.
    demux: Option<Demux>,
    /// The relay's and the preprocessing's received bytes.
    streams: [VecDeque<u8>; 2],
    /// The peer ended the section (or the link ended).
    streams_done: bool,
    /// Local write halves of the section still open.
    writing: [bool; 2],
    /// Why the link ended, once it has.
    gone: Option<String>,
    wakers: Vec<Waker>,
    /// Tasks waiting for the event loop to have turned (see the module docs).
    yielding: Vec<Waker>,
    /// When the event loop last delivered something to us (ms).
    last_turn: f64,
    /// Yield messages heard so far.
    turns: u64,
    sent: u64,
    received: u64,
    /// For a link in memory ([`Link::memory_pair`]): the other end, which
    /// receives what this end sends.
    peer: Option<Weak<Mutex<Shared>>>,
}

impl Shared {
    fn wake(&mut self) {
        for w in self.wakers.drain(..) {
            w.wake();
        }
    }

    fn deliver(&mut self, data: &[u8]) {
        self.received += data.len() as u64;
        let Some(demux) = &mut self.demux else {
            self.plain.extend(data);
            return self.wake();
        };
        let streams = &mut self.streams;
        match demux.feed(data, |s, b| streams[s as usize].extend(b)) {
            Ok(n) if demux.ended() => {
                self.demux = None;
                self.streams_done = true;
                self.plain.extend(&data[n..]);
            }
            Ok(_) => {}
            Err(e) => {
                self.gone = Some(format!("the verifier broke the multiplexed section: {e}"));
                self.streams_done = true;
            }
        }
        self.wake();
    }

    fn end(&mut self, why: String) {
        self.gone.get_or_insert(why);
        self.streams_done = true;
        self.wake();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // A link in memory whose last handle is gone ends its other end, as
        // a closed socket would: its reader fails instead of waiting.
        if let Some(peer) = self.peer.take().and_then(|p| p.upgrade()) {
            lock(&peer).end("the other end of the link in memory was dropped".into());
        }
    }
}

/// A WebSocket link: to the verifier, or (MPC mode) to the server through
/// `webproof relay`.
pub struct Link {
    id: u32,
    shared: Arc<Mutex<Shared>>,
}

use wasm_bindgen::JsValue;

fn lock(s: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

impl Link {
    /// Open a WebSocket to the verifier at `url` (`ws://…` or `wss://…`)
    /// and wait until it is open.
    pub async fn connect(url: &str) -> Result<Link, String> {
        Self::connect_to(url, "the verifier").await
    }

    /// Open a WebSocket to `url`, `peer` naming what is at the other end
    /// in errors ("the verifier", "the relay"), and wait until it is open.
    pub async fn connect_to(url: &str, peer: &'static str) -> Result<Link, String> {
        let ws = WebSocket::new(url).map_err(|e| format!("WebSocket to {url}: {e:?}"))?;
        ws.set_binary_type(BinaryType::Arraybuffer);
        let shared = Arc::new(Mutex::new(Shared::default()));
        let id = NEXT_ID.with(|n| {
            let mut n = n.borrow_mut();
            *n += 1;
            *n
        });
        let on_open = {
            let sh = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |_| {
                let mut s = lock(&sh);
                s.open = true;
                s.wake();
            })
        };
        let on_message = {
            let sh = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
                let e: MessageEvent = e.unchecked_into();
                let mut s = lock(&sh);
                s.last_turn = js_sys::Date::now();
                match e.data().dyn_into::<js_sys::ArrayBuffer>() {
                    Ok(buf) => s.deliver(&js_sys::Uint8Array::new(&buf).to_vec()),
                    Err(_) => s.end(format!("{peer} sent a text message")),
                }
            })
        };
        let on_close = {
            let sh = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
                let e: CloseEvent = e.unchecked_into();
                let why = match e.reason() {
                    r if r.is_empty() => format!("{peer} closed the link (code {})", e.code()),
                    r => format!("{peer} closed the link (code {}: {r})", e.code()),
                };
                lock(&sh).end(why);
            })
        };
        let on_error = {
            let sh = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |_| {
                lock(&sh).end(format!("the WebSocket to {peer} failed"));
            })
        };
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        ws.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // Yield messages: posted on port 2, heard on port 1.
        let channel = MessageChannel::new().map_err(|e| format!("MessageChannel: {e:?}"))?;
        let on_turn = {
            let sh = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |_| {
                let mut s = lock(&sh);
                s.last_turn = js_sys::Date::now();
                s.turns += 1;
                for w in s.yielding.drain(..) {
                    w.wake();
                }
            })
        };
        channel
            .port1()
            .set_onmessage(Some(on_turn.as_ref().unchecked_ref()));
        SOCKETS.with(|s| {
            s.borrow_mut().insert(
                id,
                Socket {
                    ws,
                    channel,
                    _handlers: vec![on_open, on_message, on_close, on_error, on_turn],
                },
            )
        });
        let link = Link { id, shared };
        futures::future::poll_fn(|cx| {
            let mut s = lock(&link.shared);
            if s.open {
                Poll::Ready(Ok(()))
            } else if let Some(why) = &s.gone {
                Poll::Ready(Err(format!("connecting to {url}: {why}")))
            } else {
                s.wakers.push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await?;
        Ok(link)
    }

    /// Two links joined in memory, each receiving what the other sends:
    /// the warm-up (`crate::warm`) runs the engine over them, so that it
    /// runs the very functions a session runs over a WebSocket (the
    /// engine's generic code is compiled once per transport type). No
    /// event loop is involved: a send delivers at once and wakes the reader.
    pub fn memory_pair() -> (Link, Link) {
        let end = || {
            let mut s = Shared::default();
            s.open = true;
            Arc::new(Mutex::new(s))
        };
        let (a, b) = (end(), end());
        lock(&a).peer = Some(Arc::downgrade(&b));
        lock(&b).peer = Some(Arc::downgrade(&a));
        let link = |shared| Link {
            // Id 0 is never a socket's (those count from 1).
            id: 0,
            shared,
        };
        (link(a), link(b))
    }

    /// The link outside multiplexed sections.
    pub fn plain(&self) -> PlainIo {
        PlainIo {
            id: self.id,
            shared: self.shared.clone(),
        }
    }

    /// Start a multiplexed section: bytes received from now on (and those
    /// not read yet) are the peer's chunks until its end marker. Returns
    /// the relay's and the preprocessing's streams; the section ends on
    /// this side when both are closed.
    pub fn start_mux(&self) -> (StreamIo, StreamIo) {
        let mut s = lock(&self.shared);
        let pending: Vec<u8> = s.plain.drain(..).collect();
        s.demux = Some(Demux::new());
        s.streams_done = false;
        s.writing = [true, true];
        s.received -= pending.len() as u64;
        s.deliver(&pending);
        drop(s);
        let stream = |n| StreamIo {
            id: self.id,
            n,
            shared: self.shared.clone(),
        };
        (
            stream(webproof_proxy::mux::RELAY),
            stream(webproof_proxy::mux::PREPROCESSING),
        )
    }

    /// Make the engine's pauses (`webproof_core::pause`) on this thread
    /// yield to the event loop, while the relay is open, when it last
    /// turned more than [`YIELD_AFTER_MS`] ago; until the guard is dropped.
    pub fn pause_while_relaying(&self) -> webproof_core::pause::Installed {
        let (id, shared) = (self.id, self.shared.clone());
        webproof_core::pause::install(Box::new(move || {
            let mut s = lock(&shared);
            let after = s.turns;
            turn_due(&mut s).then(|| {
                drop(s);
                post_turn(id);
                Box::pin(NextTurn {
                    shared: shared.clone(),
                    after,
                }) as webproof_core::pause::PauseFuture
            })
        }))
    }

    /// Bytes sent and received so far.
    pub fn counters(&self) -> (u64, u64) {
        let s = lock(&self.shared);
        (s.sent, s.received)
    }

    /// A handle that reads [`Link::counters`] from anywhere.
    pub fn counter_handle(&self) -> CounterHandle {
        CounterHandle(self.shared.clone())
    }
}

/// Reads a link's byte counts ([`Link::counter_handle`]).
pub struct CounterHandle(Arc<Mutex<Shared>>);

impl CounterHandle {
    /// Bytes sent and received so far.
    pub fn counters(&self) -> (u64, u64) {
        let s = lock(&self.0);
        (s.sent, s.received)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(Socket { ws, channel, .. }) = SOCKETS.with(|s| s.borrow_mut().remove(&self.id))
        {
            channel.port1().set_onmessage(None);
            channel.port1().close();
            channel.port2().close();
            ws.set_onopen(None);
            ws.set_onmessage(None);
            ws.set_onclose(None);
            ws.set_onerror(None);
            // The service ends the session when the socket closes.
            let _ = ws.close();
        }
    }
}

/// Whether engine work should let the event loop turn now (see the
/// module docs); if so, counts it as turning.
fn turn_due(s: &mut Shared) -> bool {
    if !(s.writing[RELAY as usize] && s.gone.is_none()) {
        return false;
    }
    let now = js_sys::Date::now();
    let due = now - s.last_turn > YIELD_AFTER_MS;
    if due {
        s.last_turn = now;
    }
    due
}

/// Post the message that marks the event loop's next turn.
fn post_turn(id: u32) {
    SOCKETS.with(|t| {
        if let Some(socket) = t.borrow().get(&id) {
            let _ = socket.channel.port2().post_message(&JsValue::NULL);
        }
    });
}

/// Ready once a yield message posted after `after` turns is heard (or the
/// link has ended).
struct NextTurn {
    shared: Arc<Mutex<Shared>>,
    after: u64,
}

impl std::future::Future for NextTurn {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = lock(&self.shared);
        if s.turns > self.after || s.gone.is_some() {
            return Poll::Ready(());
        }
        s.yielding.push(cx.waker().clone());
        Poll::Pending
    }
}

fn send(id: u32, shared: &Mutex<Shared>, bytes: &[u8]) -> io::Result<()> {
    let peer = {
        let s = lock(shared);
        if let Some(why) = &s.gone {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                why.clone(),
            ));
        }
        s.peer.clone()
    };
    if let Some(peer) = peer {
        let peer = peer.upgrade().ok_or_else(|| {
            io::Error::new(io::ErrorKind::BrokenPipe, "the other end was dropped")
        })?;
        lock(&peer).deliver(bytes);
        lock(shared).sent += bytes.len() as u64;
        return Ok(());
    }
    SOCKETS.with(|s| match s.borrow().get(&id) {
        Some(socket) => socket
            .ws
            .send_with_u8_array(bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::BrokenPipe, format!("{e:?}"))),
        None => Err(io::Error::new(io::ErrorKind::NotConnected, "link closed")),
    })?;
    lock(shared).sent += bytes.len() as u64;
    Ok(())
}

fn read_from(
    s: &mut Shared,
    which: Option<usize>,
    cx: &mut Context<'_>,
    buf: &mut [u8],
) -> Poll<io::Result<usize>> {
    let (queue, done) = match which {
        None => (&mut s.plain, s.demux.is_none() && s.gone.is_some()),
        Some(n) => (&mut s.streams[n], s.streams_done),
    };
    if !queue.is_empty() {
        let n = buf.len().min(queue.len());
        let (front, back) = queue.as_slices();
        let k = n.min(front.len());
        buf[..k].copy_from_slice(&front[..k]);
        buf[k..n].copy_from_slice(&back[..n - k]);
        queue.drain(..n);
        return Poll::Ready(Ok(n));
    }
    if done || s.gone.is_some() {
        return match (&s.gone, which) {
            // The end of a section's stream is an ordinary end of stream.
            (None, Some(_)) => Poll::Ready(Ok(0)),
            (Some(why), _) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                why.clone(),
            ))),
            (None, None) => Poll::Ready(Ok(0)),
        };
    }
    s.wakers.push(cx.waker().clone());
    Poll::Pending
}

/// The link itself, outside multiplexed sections. Reads wait while the
/// peer's section runs; writes go out at once.
pub struct PlainIo {
    id: u32,
    shared: Arc<Mutex<Shared>>,
}

impl AsyncRead for PlainIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        read_from(&mut lock(&self.shared), None, cx, buf)
    }
}

impl AsyncWrite for PlainIo {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        Poll::Ready(send(self.id, &self.shared, buf).map(|()| buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// One stream of a multiplexed section. Closing it ends this side's part
/// of the stream; when both are closed the end marker goes out. Clones are
/// handles on the same stream (one reads, one writes).
#[derive(Clone)]
pub struct StreamIo {
    id: u32,
    n: u8,
    shared: Arc<Mutex<Shared>>,
}

impl StreamIo {
    /// End this side's writing on the stream (idempotent).
    pub fn finish(&self) -> io::Result<()> {
        let mut s = lock(&self.shared);
        let was = std::mem::replace(&mut s.writing[self.n as usize], false);
        let last = was && !s.writing.iter().any(|&w| w);
        drop(s);
        if last {
            send(self.id, &self.shared, &END_MARKER)?;
        }
        Ok(())
    }
}

impl AsyncRead for StreamIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut s = lock(&self.shared);
        if self.n == PREPROCESSING && turn_due(&mut s) {
            // Let the event loop deliver what came for the relay.
            s.yielding.push(cx.waker().clone());
            drop(s);
            post_turn(self.id);
            return Poll::Pending;
        }
        read_from(&mut s, Some(self.n as usize), cx, buf)
    }
}

impl AsyncWrite for StreamIo {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if !lock(&self.shared).writing[self.n as usize] {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stream already finished",
            )));
        }
        let mut out = Vec::with_capacity(buf.len() + 3 * (1 + buf.len() / (16 << 10)));
        encode_chunks(self.n, buf, &mut out);
        Poll::Ready(send(self.id, &self.shared, &out).map(|()| buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::io::{AsyncReadExt, AsyncWriteExt};

    /// Links in memory carry bytes both ways, plain and in a section, and
    /// a dropped end fails its peer's reads (the warm-up must not hang on
    /// a party that gave up).
    #[test]
    fn memory_pair_carries_and_ends() {
        futures::executor::block_on(async {
            let (a, b) = Link::memory_pair();
            a.plain().write_all(b"hello").await.unwrap();
            let mut got = [0u8; 5];
            b.plain().read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"hello");
            let (ra, mut pa) = a.start_mux();
            let (rb, mut pb) = b.start_mux();
            ra.finish().unwrap();
            rb.finish().unwrap();
            pa.write_all(b"section").await.unwrap();
            let mut got = [0u8; 7];
            pb.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"section");
            pa.close().await.unwrap();
            pb.close().await.unwrap();
            // Plain again on both sides, after the end markers.
            b.plain().write_all(b"after").await.unwrap();
            let mut got = [0u8; 5];
            a.plain().read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"after");
            assert_eq!(a.counters().0, b.counters().1);
            let mut plain = b.plain();
            drop((a, pa, ra));
            let e = plain.read(&mut got).await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::ConnectionAborted);
        });
    }
}

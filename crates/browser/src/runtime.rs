//! The page as a `webproof_session` runtime: the browser's clock and
//! timers, tasks on its event loop, computation in place (one thread)
//! ([`PageRuntime`]); the WebSocket [`Link`] to the verifier with its
//! multiplexed sections ([`PageLink`]); the server through `webproof
//! relay` ([`RelayConnector`]).

use crate::link::{Link, PlainIo, StreamIo};
use futures::io::{AsyncRead, AsyncWrite};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use webproof_session::{Counters, Error, Result};

/// The page's event loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct PageRuntime;

impl webproof_session::Runtime for PageRuntime {
    type Sleep = Pin<Box<dyn std::future::Future<Output = ()>>>;
    type Rng = rand::rngs::OsRng;

    fn rng(&self) -> Self::Rng {
        rand::rngs::OsRng
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn unix_time(&self) -> u64 {
        (js_sys::Date::now() / 1000.0) as u64
    }

    fn sleep(&self, d: Duration) -> Self::Sleep {
        let ms = d.as_millis().min(u32::MAX as u128) as u32;
        Box::pin(crate::sleep_ms(ms))
    }

    fn spawn_boxed(&self, f: futures::future::BoxFuture<'static, ()>) {
        wasm_bindgen_futures::spawn_local(f);
    }

    fn compute_boxed(&self, f: Box<dyn FnOnce() + Send>) {
        // One thread: the work runs now, and the caller's task goes on
        // when it is done.
        f()
    }
}

/// A [`Link`] as a session's link: its plain stream, and its sections.
pub struct PageLink {
    link: Link,
    io: PlainIo,
}

impl PageLink {
    /// The link as a session uses it.
    pub fn new(link: Link) -> Self {
        let io = link.plain();
        PageLink { link, io }
    }
}

impl AsyncRead for PageLink {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for PageLink {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}

impl webproof_session::Link for PageLink {
    type Stream = StreamIo;
    type Section = PageSection;
    type Early = PageLink;

    fn counters(&self) -> Counters {
        let link = self.link.counter_handle();
        Counters::new(move || link.counters())
    }

    fn start_mux(self) -> (StreamIo, StreamIo, PageSection) {
        let (relay, preprocessing) = self.link.start_mux();
        // The engine's pauses let relay frames in while the relay is open
        // (see `crate::link`).
        let pauses = self.link.pause_while_relaying();
        (
            relay,
            preprocessing,
            PageSection {
                link: self,
                _pauses: pauses,
            },
        )
    }
}

/// A section of a [`PageLink`]: the link demultiplexes as messages arrive,
/// and its plain reads wait for the peer's end marker, so ending the
/// section is giving the link back.
pub struct PageSection {
    link: PageLink,
    _pauses: webproof_core::pause::Installed,
}

impl webproof_session::Section<PageLink> for PageSection {
    async fn finish(self) -> Result<PageLink> {
        Ok(self.link)
    }

    async fn early(self) -> Result<PageLink> {
        Ok(self.link)
    }

    async fn abandon(self) {}
}

/// The server through `webproof relay` at `url` (`ws[s]://relay/tcp`):
/// the page's TLS runs end to end through it.
#[derive(Clone, Debug)]
pub struct RelayConnector {
    /// The relay's endpoint, without a query.
    pub url: String,
}

impl webproof_session::Connector for RelayConnector {
    type Conn = PageLink;

    async fn connect(&self, host: &str, port: u16) -> Result<PageLink> {
        let sep = if self.url.contains('?') { '&' } else { '?' };
        let url = format!(
            "{}{sep}host={}&port={port}",
            self.url,
            js_sys::encode_uri_component(host)
        );
        let link = Link::connect_to(&url, "the relay")
            .await
            .map_err(|e| Error::Io {
                context: format!("connecting to the server {host}:{port} through the relay"),
                source: std::io::Error::other(e),
            })?;
        Ok(PageLink::new(link))
    }
}

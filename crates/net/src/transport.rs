//! How a prover reaches its verifier: the byte stream under the protocol.
//!
//! The protocol runs over any ordered, reliable byte stream ([`Stream`]).
//! [`connect_verifier`] turns the verifier address a user gives into one:
//!
//! - `host:port` or `tcp://host:port`: plain TCP;
//! - `tls://host:port`: TCP with TLS to the verifier (webpki roots and
//!   [`TransportOptions::ca_pems`]), so the link is private and the prover
//!   knows which verifier it talks to;
//! - `ws://host:port[/path]` and `wss://host:port[/path]`: WebSocket (the
//!   path defaults to [`WS_SESSION_PATH`]), the transport browsers have.
//!
//! [`WsStream`] is the adapter both ends use to run the byte stream over
//! WebSocket: each write becomes one binary message (at most
//! [`WS_MAX_MESSAGE`] bytes) and reads return the messages' bytes in order.
//! The protocol's own framing sits on top, so message boundaries carry no
//! meaning; text messages are a protocol error, pings are answered by the
//! WebSocket layer, a close message is the end of the stream.

use crate::{timeout, NetError, Result};
use futures::{Sink, Stream as FuturesStream};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Bytes, Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

/// A byte stream the protocol can run over.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Stream for T {}

/// A boxed [`Stream`].
pub type BoxStream = Box<dyn Stream>;

/// The verifier's WebSocket endpoint for proving sessions.
pub const WS_SESSION_PATH: &str = "/v1/session";

/// Largest WebSocket message (and frame) either end sends or accepts. The
/// protocol's relay frames are at most 64 KiB; larger writes are split.
pub const WS_MAX_MESSAGE: usize = 1 << 20;

/// How long connecting (TCP, TLS and WebSocket handshakes) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Options for reaching the verifier.
#[derive(Clone, Debug, Default)]
pub struct TransportOptions {
    /// Extra trusted roots (PEM) for a TLS connection to the verifier.
    pub ca_pems: Vec<Vec<u8>>,
}

/// The WebSocket limits both ends use.
pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(WS_MAX_MESSAGE))
        .max_frame_size(Some(WS_MAX_MESSAGE))
        // Bound what a peer that never reads can make us buffer.
        .max_write_buffer_size(4 * WS_MAX_MESSAGE)
}

/// A verifier address, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Tcp(String),
    Tls(String),
    Ws {
        tls: bool,
        authority: String,
        path: String,
    },
}

fn parse_target(addr: &str) -> Result<Target> {
    let bad = |why: &str| NetError::Setup(format!("verifier address {addr:?}: {why}"));
    let (scheme, rest) = addr.split_once("://").unwrap_or(("tcp", addr));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if host_of(authority).is_empty() {
        return Err(bad("no host"));
    }
    if !authority.contains(':') || authority.ends_with(']') {
        return Err(bad("no port (use host:port)"));
    }
    let authority = authority.to_string();
    match scheme {
        "tcp" | "tls" if !path.is_empty() => {
            Err(bad("a path only makes sense for ws:// and wss://"))
        }
        "tcp" => Ok(Target::Tcp(authority)),
        "tls" => Ok(Target::Tls(authority)),
        "ws" | "wss" => Ok(Target::Ws {
            tls: scheme == "wss",
            authority,
            path: if path.is_empty() {
                WS_SESSION_PATH.to_string()
            } else {
                path.to_string()
            },
        }),
        other => Err(bad(&format!(
            "unsupported scheme {other:?} (use host:port, tcp://, tls://, ws:// or wss://)"
        ))),
    }
}

/// Connect to the verifier at `addr` (see the module docs for the forms).
pub async fn connect_verifier(addr: &str, opts: &TransportOptions) -> Result<BoxStream> {
    let target = parse_target(addr)?;
    timeout(CONNECT_TIMEOUT, "connecting to the verifier", async {
        match target {
            Target::Tcp(a) => Ok(Box::new(tcp(&a).await?) as BoxStream),
            Target::Tls(a) => Ok(Box::new(tls(&a, opts).await?) as BoxStream),
            Target::Ws {
                tls: false,
                authority,
                path,
            } => {
                let s = tcp(&authority).await?;
                Ok(Box::new(ws_client(s, "ws", &authority, &path).await?) as BoxStream)
            }
            Target::Ws {
                tls: true,
                authority,
                path,
            } => {
                let s = tls(&authority, opts).await?;
                Ok(Box::new(ws_client(s, "wss", &authority, &path).await?) as BoxStream)
            }
        }
    })
    .await
}

async fn tcp(authority: &str) -> Result<TcpStream> {
    let s = TcpStream::connect(authority)
        .await
        .map_err(NetError::io(format!(
            "connecting to the verifier at {authority}"
        )))?;
    tune_link(&s);
    Ok(s)
}

/// Unsent bytes the kernel queues on a prover-verifier socket before it
/// reports the socket unwritable.
const NOTSENT_LOWAT: u32 = 16 << 10;

/// Tune a prover-verifier TCP connection: no Nagle delay, and a small queue
/// of not-yet-sent bytes (`TCP_NOTSENT_LOWAT`, Linux). The link multiplexes
/// the TLS relay with bulk preprocessing; without the limit the kernel
/// takes hundreds of kilobytes of preprocessing into its send buffer while
/// the congestion window is still small, and the relay's few bytes queue
/// behind all of them, whatever order the mux wrote them in.
pub fn tune_link(s: &TcpStream) {
    let _ = s.set_nodelay(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let v = NOTSENT_LOWAT;
        // SAFETY: setsockopt on a valid socket fd with a u32 option value
        // of the right size; failure leaves the socket as it was.
        let r = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NOTSENT_LOWAT,
                (&v as *const u32).cast(),
                std::mem::size_of::<u32>() as libc::socklen_t,
            )
        };
        if r != 0 {
            tracing::debug!(
                "TCP_NOTSENT_LOWAT not set: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

fn host_of(authority: &str) -> &str {
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// The TLS client configuration for the verifier link.
pub fn client_tls_config(opts: &TransportOptions) -> Result<Arc<rustls::ClientConfig>> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for pem in &opts.ca_pems {
        for c in CertificateDer::pem_slice_iter(pem) {
            let c =
                c.map_err(|e| NetError::Setup(format!("verifier CA certificate PEM: {e:?}")))?;
            roots
                .add(c)
                .map_err(|e| NetError::Setup(format!("verifier CA certificate: {e}")))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| NetError::Setup(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

async fn tls(
    authority: &str,
    opts: &TransportOptions,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let name = rustls::pki_types::ServerName::try_from(host_of(authority).to_string())
        .map_err(|e| NetError::Setup(format!("verifier name {authority:?}: {e}")))?;
    let connector = tokio_rustls::TlsConnector::from(client_tls_config(opts)?);
    let s = tcp(authority).await?;
    connector
        .connect(name, s)
        .await
        .map_err(|e| NetError::Tls(format!("TLS to the verifier at {authority}: {e}")))
}

async fn ws_client<S: AsyncRead + AsyncWrite + Unpin>(
    s: S,
    scheme: &str,
    authority: &str,
    path: &str,
) -> Result<WsStream<WebSocketStream<S>>> {
    let url = format!("{scheme}://{authority}{path}");
    let (ws, _resp) =
        tokio_tungstenite::client_async_with_config(url.as_str(), s, Some(ws_config()))
            .await
            .map_err(|e| NetError::Io {
                context: format!("WebSocket handshake with {url}"),
                source: std::io::Error::other(e.to_string()),
            })?;
    Ok(WsStream::new(ws))
}

/// A byte stream over a WebSocket: see the module docs.
pub struct WsStream<W> {
    ws: W,
    /// The unread rest of the last binary message.
    pending: Bytes,
    /// The peer closed (or the socket ended): reads return EOF.
    eof: bool,
}

impl<W> WsStream<W> {
    /// Wrap a WebSocket whose handshake is done.
    pub fn new(ws: W) -> Self {
        WsStream {
            ws,
            pending: Bytes::new(),
            eof: false,
        }
    }
}

fn ws_io_error(e: WsError) -> std::io::Error {
    use std::io::{Error, ErrorKind};
    match e {
        WsError::Io(e) => e,
        WsError::ConnectionClosed | WsError::AlreadyClosed => {
            Error::new(ErrorKind::NotConnected, "WebSocket closed")
        }
        WsError::Protocol(p) => Error::new(ErrorKind::InvalidData, format!("WebSocket: {p}")),
        WsError::Capacity(c) => Error::new(ErrorKind::InvalidData, format!("WebSocket: {c}")),
        other => Error::other(format!("WebSocket: {other}")),
    }
}

impl<W> AsyncRead for WsStream<W>
where
    W: FuturesStream<Item = std::result::Result<Message, WsError>> + Unpin,
{
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            if !self.pending.is_empty() {
                let n = self.pending.len().min(buf.remaining());
                let chunk = self.pending.split_to(n);
                buf.put_slice(&chunk);
                return Poll::Ready(Ok(()));
            }
            if self.eof || buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            match ready!(Pin::new(&mut self.ws).poll_next(cx)) {
                Some(Ok(Message::Binary(b))) => self.pending = b,
                // Control messages: tungstenite answers pings itself.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Text(_))) => {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "WebSocket text message where binary protocol data was expected",
                    )))
                }
                Some(Ok(Message::Close(_))) | None => self.eof = true,
                // A peer gone without a close handshake is an abrupt end of stream.
                Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => self.eof = true,
                Some(Err(WsError::Protocol(
                    tokio_tungstenite::tungstenite::error::ProtocolError::ResetWithoutClosingHandshake,
                ))) => self.eof = true,
                Some(Err(e)) => return Poll::Ready(Err(ws_io_error(e))),
            }
        }
    }
}

impl<W> AsyncWrite for WsStream<W>
where
    W: Sink<Message, Error = WsError> + Unpin,
{
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        ready!(Pin::new(&mut self.ws).poll_ready(cx)).map_err(ws_io_error)?;
        let n = buf.len().min(WS_MAX_MESSAGE);
        Pin::new(&mut self.ws)
            .start_send(Message::Binary(Bytes::copy_from_slice(&buf[..n])))
            .map_err(ws_io_error)?;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.ws).poll_flush(cx).map_err(ws_io_error)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match ready!(Pin::new(&mut self.ws).poll_close(cx)) {
            Ok(()) | Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => Poll::Ready(Ok(())),
            Err(e) => Poll::Ready(Err(ws_io_error(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The link's unsent-bytes limit is really set (Linux).
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn tuned_links_limit_unsent_bytes() {
        use std::os::fd::AsRawFd;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, _) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let client = client.unwrap();
        tune_link(&client);
        let mut v: u32 = 0;
        let mut len = std::mem::size_of::<u32>() as libc::socklen_t;
        // SAFETY: getsockopt into a u32 of the stated size on a valid fd.
        let r = unsafe {
            libc::getsockopt(
                client.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NOTSENT_LOWAT,
                (&mut v as *mut u32).cast(),
                &mut len,
            )
        };
        assert_eq!(r, 0);
        assert_eq!(v, NOTSENT_LOWAT);
        assert!(client.nodelay().unwrap());
    }
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_tungstenite::tungstenite::protocol::Role;

    #[test]
    fn addresses_parse() {
        let t = |s: &str| parse_target(s).unwrap();
        assert_eq!(t("127.0.0.1:7047"), Target::Tcp("127.0.0.1:7047".into()));
        assert_eq!(t("tcp://v.example:1"), Target::Tcp("v.example:1".into()));
        assert_eq!(
            t("tls://v.example:443"),
            Target::Tls("v.example:443".into())
        );
        assert_eq!(
            t("ws://v.example:80"),
            Target::Ws {
                tls: false,
                authority: "v.example:80".into(),
                path: WS_SESSION_PATH.into()
            }
        );
        assert_eq!(
            t("wss://[::1]:8443/x/y"),
            Target::Ws {
                tls: true,
                authority: "[::1]:8443".into(),
                path: "/x/y".into()
            }
        );
        for bad in [
            "",
            "ftp://a:1",
            "tls://a",
            "ws://:80",
            "tcp://a:1/x",
            "[::1]",
        ] {
            assert!(parse_target(bad).is_err(), "{bad:?}");
        }
        assert_eq!(host_of("[::1]:8443"), "::1");
        assert_eq!(host_of("v.example:1"), "v.example");
    }

    async fn ws_pair() -> (
        WsStream<WebSocketStream<tokio::io::DuplexStream>>,
        WsStream<WebSocketStream<tokio::io::DuplexStream>>,
    ) {
        let (a, b) = tokio::io::duplex(1 << 16);
        let (a, b) = tokio::join!(
            WebSocketStream::from_raw_socket(a, Role::Client, Some(ws_config())),
            WebSocketStream::from_raw_socket(b, Role::Server, Some(ws_config()))
        );
        (WsStream::new(a), WsStream::new(b))
    }

    #[tokio::test]
    async fn bytes_cross_in_order_whatever_the_chunking() {
        let (mut a, mut b) = ws_pair().await;
        let data: Vec<u8> = (0..3 * WS_MAX_MESSAGE + 12345)
            .map(|i| (i * 7) as u8)
            .collect();
        let d2 = data.clone();
        let w = tokio::spawn(async move {
            // Writes of several sizes, one larger than a message.
            let (x, rest) = d2.split_at(1);
            a.write_all(x).await.unwrap();
            let (x, rest) = rest.split_at(WS_MAX_MESSAGE + 17);
            a.write_all(x).await.unwrap();
            a.write_all(rest).await.unwrap();
            a.flush().await.unwrap();
            a.shutdown().await.unwrap();
            a
        });
        let mut got = Vec::new();
        // Small reads split messages across calls.
        let mut buf = [0u8; 1000];
        loop {
            let n = b.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got.len(), data.len());
        assert!(got == data);
        b.shutdown().await.unwrap();
        w.await.unwrap();
    }

    #[tokio::test]
    async fn text_messages_are_an_error_and_oversized_messages_refused() {
        use futures::SinkExt;
        let (a, b) = tokio::io::duplex(1 << 16);
        let (mut raw, srv) = tokio::join!(
            WebSocketStream::from_raw_socket(a, Role::Client, None),
            WebSocketStream::from_raw_socket(b, Role::Server, Some(ws_config()))
        );
        let mut srv = WsStream::new(srv);
        raw.send(Message::text("hello")).await.unwrap();
        let mut buf = [0u8; 16];
        let e = srv.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");

        let (a, b) = tokio::io::duplex(1 << 16);
        let (mut raw, srv) = tokio::join!(
            WebSocketStream::from_raw_socket(a, Role::Client, None),
            WebSocketStream::from_raw_socket(b, Role::Server, Some(ws_config()))
        );
        let mut srv = WsStream::new(srv);
        let big = vec![0u8; WS_MAX_MESSAGE + 1];
        let sender = tokio::spawn(async move {
            let _ = raw.send(Message::binary(big)).await;
            raw
        });
        let e = srv.read(&mut buf).await.unwrap_err();
        assert!(
            e.to_string().contains("too long") || e.to_string().contains("size"),
            "{e}"
        );
        drop(srv);
        let _ = sender.await;
    }

    #[tokio::test]
    async fn peer_vanishing_is_end_of_stream() {
        let (a, b) = tokio::io::duplex(1 << 16);
        let (c, s) = tokio::join!(
            WebSocketStream::from_raw_socket(a, Role::Client, Some(ws_config())),
            WebSocketStream::from_raw_socket(b, Role::Server, Some(ws_config()))
        );
        let mut c = WsStream::new(c);
        let mut s = WsStream::new(s);
        c.write_all(b"abc").await.unwrap();
        c.flush().await.unwrap();
        drop(c);
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"abc");
    }
}

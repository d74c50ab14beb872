//! How a prover reaches its verifier: the byte stream under the protocol.
//!
//! The protocol runs over any ordered, reliable byte stream ([`Stream`]).
//! [`connect_verifier`] turns the verifier address a user gives into one:
//! `host:port` or `tcp://host:port` is plain TCP.

use crate::{timeout, NetError, Result};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// A byte stream the protocol can run over.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Stream for T {}

/// A boxed [`Stream`].
pub type BoxStream = Box<dyn Stream>;

/// Options for reaching the verifier.
#[derive(Clone, Debug, Default)]
pub struct TransportOptions {
    /// Extra trusted roots (PEM) for a TLS connection to the verifier.
    pub ca_pems: Vec<Vec<u8>>,
}

/// Connect to the verifier at `addr` (`host:port` or `tcp://host:port`).
pub async fn connect_verifier(addr: &str, _opts: &TransportOptions) -> Result<BoxStream> {
    let target = match addr.split_once("://") {
        None => addr,
        Some(("tcp", rest)) => rest,
        Some((scheme, _)) => {
            return Err(NetError::Setup(format!(
                "verifier address {addr:?}: unsupported scheme {scheme:?} (use host:port or tcp://host:port)"
            )))
        }
    };
    let tcp = timeout(
        Duration::from_secs(10),
        "connecting to the verifier",
        async {
            TcpStream::connect(target)
                .await
                .map_err(NetError::io(format!(
                    "connecting to the verifier at {addr}"
                )))
        },
    )
    .await?;
    let _ = tcp.set_nodelay(true);
    Ok(Box::new(tcp))
}

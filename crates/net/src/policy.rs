//! Connecting to a server under the verifier's address policy
//! ([`ServerPolicy`], `webproof_session`'s decision): every resolved
//! address is checked before connecting *and* the address the socket
//! reached after, so a name that resolves differently the second time
//! (DNS rebinding) gains nothing.

use crate::{NetError, Result};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use tokio::net::TcpStream;
pub use webproof_session::policy::{special_purpose, IpNet, ServerPolicy};

/// Resolve `host` and connect to `port` on the first address `policy`
/// allows, checking again the address the socket reached (DNS rebinding);
/// names in `resolve` go to their pinned address, trusted as configured.
/// The verifier connects to servers with it, and so does the relay.
pub async fn connect_checked(
    policy: &ServerPolicy,
    resolve: &HashMap<String, IpAddr>,
    host: &str,
    port: u16,
) -> Result<TcpStream> {
    // Names the operator pinned to an address are trusted as configured.
    let pinned = resolve.contains_key(host);
    let addrs: Vec<SocketAddr> = if let Some(ip) = resolve.get(host) {
        vec![SocketAddr::new(*ip, port)]
    } else if let Ok(ip) = host.parse::<IpAddr>() {
        vec![SocketAddr::new(ip, port)]
    } else {
        tokio::net::lookup_host((host, port))
            .await
            .map_err(NetError::io(format!("resolving {host}")))?
            .collect()
    };
    let mut last = None;
    let mut refused = None;
    for a in addrs {
        if let Err(why) = policy
            .check(a.ip())
            .or_else(|e| pinned.then_some(()).ok_or(e))
        {
            refused = Some(why);
            continue;
        }
        match TcpStream::connect(a).await {
            Ok(s) => {
                // Check where the socket really went, not only what DNS said.
                let peer = s
                    .peer_addr()
                    .map_err(NetError::io(format!("connecting to {host}:{port}")))?;
                if !pinned {
                    policy.check(peer.ip()).map_err(NetError::Forbidden)?;
                }
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    match (last, refused) {
        (None, Some(why)) => Err(NetError::Forbidden(why)),
        (last, _) => Err(NetError::Io {
            context: format!("connecting to {host}:{port}"),
            source: last.unwrap_or_else(|| std::io::Error::other("no address")),
        }),
    }
}

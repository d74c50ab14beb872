//! Parsing of the TLS handshake messages a verifier inspects.
//!
//! Only the fields the verifier needs are extracted; each parser is bounded
//! by the message it is given and fails with [`TlsError::Malformed`] on
//! truncated or inconsistent input.

use crate::codec::Reader;
use crate::error::{malformed, Result, TlsError};

/// Handshake message types.
pub mod msg_type {
    /// client_hello
    pub const CLIENT_HELLO: u8 = 1;
    /// server_hello (and hello_retry_request in TLS 1.3)
    pub const SERVER_HELLO: u8 = 2;
    /// new_session_ticket
    pub const NEW_SESSION_TICKET: u8 = 4;
    /// end_of_early_data
    pub const END_OF_EARLY_DATA: u8 = 5;
    /// encrypted_extensions
    pub const ENCRYPTED_EXTENSIONS: u8 = 8;
    /// certificate
    pub const CERTIFICATE: u8 = 11;
    /// server_key_exchange
    pub const SERVER_KEY_EXCHANGE: u8 = 12;
    /// certificate_request
    pub const CERTIFICATE_REQUEST: u8 = 13;
    /// server_hello_done
    pub const SERVER_HELLO_DONE: u8 = 14;
    /// certificate_verify
    pub const CERTIFICATE_VERIFY: u8 = 15;
    /// client_key_exchange
    pub const CLIENT_KEY_EXCHANGE: u8 = 16;
    /// finished
    pub const FINISHED: u8 = 20;
    /// key_update
    pub const KEY_UPDATE: u8 = 24;
    /// message_hash (synthetic, for HelloRetryRequest transcripts)
    pub const MESSAGE_HASH: u8 = 254;
}

/// Largest handshake message accepted (certificate chains included).
pub const MAX_MESSAGE: usize = 1 << 17;

/// Most bytes the [`Reassembler`] buffers: a whole message of the largest
/// size with its header, and a full record behind it.
const MAX_BUFFERED: usize = 4 + MAX_MESSAGE + crate::record::MAX_PAYLOAD;

/// The special ServerHello.random that marks a HelloRetryRequest (RFC 8446 4.1.3).
pub const HRR_RANDOM: [u8; 32] = [
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
];

/// One complete handshake message, header included (as hashed into the transcript).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The message type.
    pub typ: u8,
    /// The whole message: 4-byte header and body.
    pub bytes: Vec<u8>,
}

impl Message {
    /// The body without the 4-byte header.
    pub fn body(&self) -> &[u8] {
        &self.bytes[4..]
    }
}

/// Reassembles handshake messages from record fragments.
#[derive(Default, Debug)]
pub struct Reassembler {
    buf: Vec<u8>,
}

impl Reassembler {
    /// Append a handshake record's plaintext.
    pub fn push(&mut self, fragment: &[u8]) -> Result<()> {
        if fragment.is_empty() {
            return Err(malformed("handshake record", "empty handshake fragment"));
        }
        // Callers drain complete messages after each fragment, so the buffer
        // holds at most one partial message and one record; anything more is
        // a peer (or caller) feeding without bound.
        let total = self.buf.len().saturating_add(fragment.len());
        if total > MAX_BUFFERED {
            return Err(TlsError::Limit(format!(
                "{total} bytes of handshake messages buffered (max {MAX_BUFFERED})"
            )));
        }
        self.buf.extend_from_slice(fragment);
        Ok(())
    }

    /// Take the next complete message, if any.
    pub fn next_message(&mut self) -> Result<Option<Message>> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len =
            ((self.buf[1] as usize) << 16) | ((self.buf[2] as usize) << 8) | self.buf[3] as usize;
        if len > MAX_MESSAGE {
            return Err(TlsError::Limit(format!(
                "handshake message of {len} bytes (max {MAX_MESSAGE})"
            )));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let bytes: Vec<u8> = self.buf.drain(..4 + len).collect();
        Ok(Some(Message {
            typ: bytes[0],
            bytes,
        }))
    }

    /// Whether a partial message is buffered (keys must not change then).
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

/// Extension code points used here.
pub mod ext {
    /// server_name
    pub const SERVER_NAME: u16 = 0;
    /// extended_master_secret
    pub const EXTENDED_MASTER_SECRET: u16 = 23;
    /// pre_shared_key
    pub const PRE_SHARED_KEY: u16 = 41;
    /// early_data
    pub const EARLY_DATA: u16 = 42;
    /// supported_versions
    pub const SUPPORTED_VERSIONS: u16 = 43;
    /// key_share
    pub const KEY_SHARE: u16 = 51;
}

fn extensions<'a>(r: &mut Reader<'a>, what: &'static str) -> Result<Vec<(u16, &'a [u8])>> {
    let mut out = Vec::new();
    if r.is_empty() {
        return Ok(out);
    }
    let mut e = r.sub16(what)?;
    while !e.is_empty() {
        let typ = e.u16()?;
        let data = e.vec16()?;
        if out.iter().any(|(t, _)| *t == typ) {
            return Err(malformed(what, format!("duplicate extension {typ}")));
        }
        out.push((typ, data));
    }
    Ok(out)
}

/// What the verifier needs from a ClientHello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientHello {
    /// client_random
    pub random: [u8; 32],
    /// The SNI host name, if sent.
    pub server_name: Option<String>,
    /// Offered cipher suite codes.
    pub cipher_suites: Vec<u16>,
    /// Whether extended_master_secret was offered.
    pub ems: bool,
    /// Whether TLS 1.3 was offered in supported_versions.
    pub offers_tls13: bool,
    /// Key shares offered: (group, public key).
    pub key_shares: Vec<(u16, Vec<u8>)>,
    /// Whether a pre_shared_key (resumption) or early_data was offered.
    pub offers_psk_or_early_data: bool,
}

/// Parse a ClientHello body.
pub fn parse_client_hello(body: &[u8]) -> Result<ClientHello> {
    let what = "ClientHello";
    let mut r = Reader::new(body, what);
    let _legacy_version = r.u16()?;
    let random: [u8; 32] = r.take(32)?.try_into().expect("32 bytes");
    let _session_id = r.vec8()?;
    let mut cs = r.sub16(what)?;
    let mut cipher_suites = Vec::new();
    while !cs.is_empty() {
        cipher_suites.push(cs.u16()?);
    }
    let _compression = r.vec8()?;
    let exts = extensions(&mut r, what)?;
    r.finish()?;
    let mut hello = ClientHello {
        random,
        server_name: None,
        cipher_suites,
        ems: false,
        offers_tls13: false,
        key_shares: Vec::new(),
        offers_psk_or_early_data: false,
    };
    for (typ, data) in exts {
        let mut e = Reader::new(data, what);
        match typ {
            ext::SERVER_NAME => {
                let mut list = e.sub16(what)?;
                while !list.is_empty() {
                    let kind = list.u8()?;
                    let name = list.vec16()?;
                    if kind == 0 {
                        let name = core::str::from_utf8(name)
                            .map_err(|_| malformed(what, "server name is not UTF-8"))?;
                        hello.server_name = Some(name.to_ascii_lowercase());
                    }
                }
            }
            ext::EXTENDED_MASTER_SECRET => hello.ems = true,
            ext::SUPPORTED_VERSIONS => {
                let list = e.vec8()?;
                hello.offers_tls13 = list.chunks(2).any(|c| c == [3, 4]);
            }
            ext::KEY_SHARE => {
                let mut list = e.sub16(what)?;
                while !list.is_empty() {
                    let g = list.u16()?;
                    let k = list.vec16()?;
                    hello.key_shares.push((g, k.to_vec()));
                }
            }
            ext::PRE_SHARED_KEY | ext::EARLY_DATA => hello.offers_psk_or_early_data = true,
            _ => {}
        }
    }
    Ok(hello)
}

/// What the verifier needs from a ServerHello (or HelloRetryRequest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerHello {
    /// server_random
    pub random: [u8; 32],
    /// Chosen cipher suite code.
    pub cipher_suite: u16,
    /// The negotiated version (supported_versions, else legacy_version).
    pub version: u16,
    /// TLS 1.3: the server's key share (group, public key); an HRR carries only the group.
    pub key_share: Option<(u16, Vec<u8>)>,
    /// Whether extended_master_secret was accepted (TLS 1.2).
    pub ems: bool,
    /// Whether the server accepted a PSK.
    pub psk: bool,
}

impl ServerHello {
    /// Whether this is a HelloRetryRequest.
    pub fn is_hrr(&self) -> bool {
        self.random == HRR_RANDOM
    }
}

/// Parse a ServerHello body.
pub fn parse_server_hello(body: &[u8]) -> Result<ServerHello> {
    let what = "ServerHello";
    let mut r = Reader::new(body, what);
    let legacy_version = r.u16()?;
    let random: [u8; 32] = r.take(32)?.try_into().expect("32 bytes");
    let _session_id = r.vec8()?;
    let cipher_suite = r.u16()?;
    let compression = r.u8()?;
    if compression != 0 {
        return Err(malformed(what, "compression selected"));
    }
    let exts = extensions(&mut r, what)?;
    r.finish()?;
    let mut sh = ServerHello {
        random,
        cipher_suite,
        version: legacy_version,
        key_share: None,
        ems: false,
        psk: false,
    };
    let hrr = sh.is_hrr();
    for (typ, data) in exts {
        let mut e = Reader::new(data, what);
        match typ {
            ext::SUPPORTED_VERSIONS => {
                sh.version = e.u16()?;
                e.finish()?;
            }
            ext::KEY_SHARE => {
                let g = e.u16()?;
                let k = if hrr { Vec::new() } else { e.vec16()?.to_vec() };
                e.finish()?;
                sh.key_share = Some((g, k));
            }
            ext::EXTENDED_MASTER_SECRET => sh.ems = true,
            ext::PRE_SHARED_KEY => sh.psk = true,
            _ => {}
        }
    }
    Ok(sh)
}

/// Parse a Certificate message body into DER certificates, end entity first.
pub fn parse_certificate(body: &[u8], tls13: bool) -> Result<Vec<Vec<u8>>> {
    let what = "Certificate";
    let mut r = Reader::new(body, what);
    if tls13 {
        let ctx = r.vec8()?;
        if !ctx.is_empty() {
            return Err(malformed(what, "non-empty request context from the server"));
        }
    }
    let mut list = r.sub24(what)?;
    r.finish()?;
    let mut certs = Vec::new();
    while !list.is_empty() {
        let der = list.vec24()?;
        if der.is_empty() {
            return Err(malformed(what, "empty certificate"));
        }
        certs.push(der.to_vec());
        if tls13 {
            let _exts = list.vec16()?;
        }
    }
    if certs.is_empty() {
        return Err(TlsError::Certificate(
            "the server sent no certificate".into(),
        ));
    }
    Ok(certs)
}

/// A signature with its scheme (CertificateVerify, or the tail of ServerKeyExchange).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signed {
    /// The SignatureScheme code.
    pub scheme: u16,
    /// The signature bytes.
    pub signature: Vec<u8>,
}

/// Parse a CertificateVerify body.
pub fn parse_certificate_verify(body: &[u8]) -> Result<Signed> {
    let mut r = Reader::new(body, "CertificateVerify");
    let scheme = r.u16()?;
    let signature = r.vec16()?.to_vec();
    r.finish()?;
    Ok(Signed { scheme, signature })
}

/// An ECDHE ServerKeyExchange (TLS 1.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerKeyExchange {
    /// The named group.
    pub group: u16,
    /// The server's ephemeral public key.
    pub public: Vec<u8>,
    /// The signed params as they appear on the wire (curve type .. public key).
    pub params: Vec<u8>,
    /// The signature over client_random || server_random || params.
    pub signed: Signed,
}

/// Parse an ECDHE ServerKeyExchange body.
pub fn parse_server_key_exchange(body: &[u8]) -> Result<ServerKeyExchange> {
    let what = "ServerKeyExchange";
    let mut r = Reader::new(body, what);
    let curve_type = r.u8()?;
    if curve_type != 3 {
        return Err(TlsError::Unsupported(format!(
            "ServerKeyExchange curve type {curve_type} (only named curves)"
        )));
    }
    let group = r.u16()?;
    let public = r.vec8()?.to_vec();
    // curve type, group and the vector: what the reader consumed so far.
    let params = body[..body.len() - r.rest().len()].to_vec();
    let scheme = r.u16()?;
    let signature = r.vec16()?.to_vec();
    r.finish()?;
    Ok(ServerKeyExchange {
        group,
        public,
        params,
        signed: Signed { scheme, signature },
    })
}

/// Parse a ClientKeyExchange (ECDHE) body: the client's public key.
pub fn parse_client_key_exchange(body: &[u8]) -> Result<Vec<u8>> {
    let mut r = Reader::new(body, "ClientKeyExchange");
    let k = r.vec8()?.to_vec();
    r.finish()?;
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassembly_across_fragments_and_limits() {
        let mut r = Reassembler::default();
        r.push(&[20, 0, 0, 3, 1]).unwrap();
        assert!(r.next_message().unwrap().is_none());
        r.push(&[2, 3, 8, 0]).unwrap();
        let m = r.next_message().unwrap().unwrap();
        assert_eq!((m.typ, m.body()), (20, &[1u8, 2, 3][..]));
        assert!(!r.is_empty());
        r.push(&[0, 0]).unwrap();
        assert_eq!(r.next_message().unwrap().unwrap().typ, 8);
        assert!(r.is_empty());
        r.push(&[11, 0xff, 0xff, 0xff]).unwrap();
        assert!(matches!(r.next_message(), Err(TlsError::Limit(_))));
    }

    /// The largest allowed message reassembles; one byte more is refused; a
    /// peer that only feeds fragments cannot grow the buffer without bound.
    #[test]
    fn reassembly_lengths_at_their_limits() {
        let mut r = Reassembler::default();
        let len = MAX_MESSAGE;
        r.push(&[11, (len >> 16) as u8, (len >> 8) as u8, len as u8])
            .unwrap();
        let mut left = len;
        while left > 0 {
            assert!(r.next_message().unwrap().is_none());
            let n = left.min(10_000);
            r.push(&vec![0u8; n]).unwrap();
            left -= n;
        }
        assert_eq!(r.next_message().unwrap().unwrap().body().len(), len);
        assert!(r.is_empty());
        let mut r = Reassembler::default();
        let len = MAX_MESSAGE + 1;
        r.push(&[11, (len >> 16) as u8, (len >> 8) as u8, len as u8])
            .unwrap();
        assert!(matches!(r.next_message(), Err(TlsError::Limit(_))));
        // Fragments pushed without draining hit the buffer bound.
        let mut r = Reassembler::default();
        let mut refused = false;
        for _ in 0..(MAX_BUFFERED / 16384 + 2) {
            if r.push(&[0u8; 16384]).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused);
        assert!(r.push(&[]).is_err());
    }

    /// Hello, certificate and key exchange parsers on length fields at
    /// u8/u16/u24 max with little data behind them.
    #[test]
    fn maximal_inner_lengths_are_errors() {
        // ClientHello: session id length 255 with nothing behind it.
        let mut ch = vec![3, 3];
        ch.extend_from_slice(&[0; 32]);
        ch.push(0xff);
        assert!(parse_client_hello(&ch).is_err());
        // ClientHello: cipher suites length 0xffff.
        let mut ch = vec![3, 3];
        ch.extend_from_slice(&[0; 32]);
        ch.extend_from_slice(&[0, 0xff, 0xff, 0x13, 0x01]);
        assert!(parse_client_hello(&ch).is_err());
        // Extensions block length 0xffff.
        let mut ch = vec![3, 3];
        ch.extend_from_slice(&[0; 32]);
        ch.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0, 0xff, 0xff, 0, 0]);
        assert!(parse_client_hello(&ch).is_err());
        // Certificate list length 0xffffff, and one certificate too long.
        assert!(parse_certificate(&[0, 0xff, 0xff, 0xff, 0, 0, 1], true).is_err());
        assert!(parse_certificate(&[0, 0, 0, 4, 0xff, 0xff, 0xff, 1], false).is_err());
        // CertificateVerify with a signature length of 0xffff.
        assert!(parse_certificate_verify(&[4, 3, 0xff, 0xff, 1, 2]).is_err());
        // ServerKeyExchange: public key length 255, signature length 0xffff.
        assert!(parse_server_key_exchange(&[3, 0, 0x1d, 0xff, 1, 2]).is_err());
        let ske = [3, 0, 0x1d, 1, 9, 4, 3, 0xff, 0xff, 1];
        assert!(parse_server_key_exchange(&ske).is_err());
        let ske = [3, 0, 0x1d, 2, 9, 8, 4, 3, 0, 1, 5];
        let ok = parse_server_key_exchange(&ske).unwrap();
        assert_eq!(ok.params, &ske[..6]);
        assert_eq!(ok.public, &[9, 8]);
        assert!(parse_client_key_exchange(&[0xff, 1]).is_err());
    }

    #[test]
    fn truncated_hellos_rejected() {
        assert!(parse_client_hello(&[3, 3]).is_err());
        let mut sh = vec![3, 3];
        sh.extend_from_slice(&[7; 32]);
        sh.extend_from_slice(&[0, 0x13, 0x01, 0]);
        let ok = parse_server_hello(&sh).unwrap();
        assert_eq!(ok.cipher_suite, 0x1301);
        sh.extend_from_slice(&[0, 10, 0, 43]);
        assert!(parse_server_hello(&sh).is_err());
        assert!(parse_certificate(&[0, 0, 0, 0], true).is_err());
        assert!(parse_server_key_exchange(&[3, 0, 0x1d, 40, 1]).is_err());
    }
}

//! The verifier's checks on a recorded transcript.
//!
//! [`check_handshake`] walks the handshake records: it parses the hellos,
//! checks the server's identity (certificate chain to the configured roots,
//! server name, validity at the session time, CertificateVerify or
//! ServerKeyExchange signature) and, for TLS 1.3, decrypts the server's
//! handshake flight with the revealed handshake traffic secrets and checks
//! both Finished messages. It returns the [`SessionStatement`] whose relation the
//! prover must then establish (in ZK, or in the clear with
//! [`SessionStatement::evaluate`]), and [`assemble`] turns the opened records into
//! each direction's application data, enforcing the record-layer rules
//! (inner content types, close_notify, nothing after it).

use crate::aead::{OpenError, RecordCipher};
use crate::error::{malformed, Result, TlsError};
use crate::handshake::{self as hsk, msg_type, Message, Reassembler};
use crate::identity::{check_chain, check_signature, check_sni};
pub use crate::identity::{check_tls12_server, RootStore, VerifyConfig};
use crate::keys;
use crate::record::{content_type, Direction, Record};
use crate::statement::{
    OpenedRecord, PublicInputs, SessionSecret, SessionStatement, StatementRecord,
};
use crate::suite::{CipherSuite, HashAlg, KxGroup, TlsVersion};
use rustls_pki_types::CertificateDer;
use serde::{Deserialize, Serialize};

/// What the handshake established, besides the statement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The server name checked against the certificate.
    pub server_name: String,
    /// The TCP port the verifier connected to.
    pub port: u16,
    /// Session time (Unix seconds).
    pub time: u64,
    /// TLS version.
    pub version: TlsVersion,
    /// Cipher suite.
    pub suite: CipherSuite,
    /// Key-exchange group.
    pub group: KxGroup,
    /// The server's certificate chain, end entity first (DER, hex in JSON).
    #[serde(with = "hex_list")]
    pub certificates: Vec<Vec<u8>>,
}

mod hex_list {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(hex::encode))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        let v = Vec::<String>::deserialize(d)?;
        v.iter()
            .map(|s| hex::decode(s).map_err(serde::de::Error::custom))
            .collect()
    }
}

/// The public TLS 1.3 handshake traffic secrets, which the prover reveals.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandshakeSecrets {
    /// client_handshake_traffic_secret
    #[serde(with = "crate::record::hex_bytes")]
    pub client: Vec<u8>,
    /// server_handshake_traffic_secret
    #[serde(with = "crate::record::hex_bytes")]
    pub server: Vec<u8>,
}

impl core::fmt::Debug for HandshakeSecrets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HandshakeSecrets(..)")
    }
}

/// Where a TLS 1.3 verifier gets the handshake traffic secrets from.
pub enum SecretsSource<'a> {
    /// Revealed by the prover (the ZK path proves they follow from HS).
    Revealed(&'a HandshakeSecrets),
    /// Derived from the witness (the full-reveal path).
    FromWitness(&'a SessionSecret),
}

/// Reads one direction's records in order, tracking keys and sequence numbers.
struct Stream<'a> {
    dir: Direction,
    records: &'a [Record],
    pos: usize,
    cipher: Option<RecordCipher>,
    /// TLS 1.2: the cipher that takes effect at the next ChangeCipherSpec.
    pending: Option<RecordCipher>,
    seq: u64,
    hs: Reassembler,
    tls13: bool,
}

impl<'a> Stream<'a> {
    fn new(dir: Direction, records: &'a [Record]) -> Self {
        Stream {
            dir,
            records,
            pos: 0,
            cipher: None,
            pending: None,
            seq: 0,
            hs: Reassembler::default(),
            tls13: false,
        }
    }

    fn set_cipher(&mut self, c: RecordCipher) -> Result<()> {
        if !self.hs.is_empty() {
            return Err(malformed(
                "handshake",
                format!("{} handshake message spans a key change", self.dir.sender()),
            ));
        }
        self.cipher = Some(c);
        self.seq = 0;
        Ok(())
    }

    fn next_message(&mut self) -> Result<Message> {
        loop {
            if let Some(m) = self.hs.next_message()? {
                return Ok(m);
            }
            let Some(rec) = self.records.get(self.pos) else {
                return Err(TlsError::Incomplete(format!(
                    "the {} handshake ended early",
                    self.dir.sender()
                )));
            };
            self.pos += 1;
            if rec.content_type == content_type::CHANGE_CIPHER_SPEC {
                if rec.payload != [1] {
                    return Err(malformed("ChangeCipherSpec", "payload is not [1]"));
                }
                if self.tls13 {
                    // Middlebox-compatibility CCS (RFC 8446 D.4): allowed in the
                    // clear anywhere before the peer's Finished; meaningless.
                    continue;
                }
                let Some(c) = self.pending.take() else {
                    return Err(malformed(
                        "record",
                        format!("unexpected ChangeCipherSpec from the {}", self.dir.sender()),
                    ));
                };
                self.set_cipher(c)?;
                continue;
            }
            let (typ, data) = match &self.cipher {
                None => (rec.content_type, rec.payload.clone()),
                Some(c) => match c.open(self.seq, rec) {
                    Ok(o) => {
                        self.seq += 1;
                        (o.content_type, o.data)
                    }
                    Err(OpenError::Auth) => {
                        return Err(TlsError::Decrypt {
                            direction: self.dir,
                            index: self.pos - 1,
                            seq: self.seq,
                        })
                    }
                    Err(OpenError::Malformed(m)) => return Err(malformed("record plaintext", m)),
                },
            };
            match typ {
                content_type::HANDSHAKE => self.hs.push(&data)?,
                content_type::ALERT => {
                    return Err(TlsError::HandshakeAlert {
                        direction: self.dir,
                        description: data.get(1).copied().unwrap_or(255),
                    })
                }
                t => {
                    return Err(malformed(
                        "handshake",
                        format!(
                            "the {} sent content type {t} before the handshake finished",
                            self.dir.sender()
                        ),
                    ))
                }
            }
        }
    }

    fn expect(&mut self, typ: u8, name: &str) -> Result<Message> {
        let m = self.next_message()?;
        if m.typ != typ {
            return Err(unexpected(self.dir, name, m.typ));
        }
        Ok(m)
    }

    /// The remaining records as application-phase statement records.
    fn rest(&self, first_seq: u64) -> Result<Vec<StatementRecord>> {
        if !self.hs.is_empty() {
            return Err(malformed(
                "handshake",
                format!(
                    "trailing partial handshake message from the {}",
                    self.dir.sender()
                ),
            ));
        }
        Ok(self.records[self.pos..]
            .iter()
            .enumerate()
            .map(|(i, r)| StatementRecord {
                record: r.clone(),
                seq: first_seq + i as u64,
                index: self.pos + i,
            })
            .collect())
    }
}

fn unexpected(dir: Direction, wanted: &str, got: u8) -> TlsError {
    let what = match got {
        msg_type::CERTIFICATE_REQUEST => {
            return TlsError::Unsupported("client certificates (the server asked for one)".into())
        }
        msg_type::END_OF_EARLY_DATA => return TlsError::Unsupported("0-RTT early data".into()),
        _ => got,
    };
    malformed(
        "handshake",
        format!(
            "the {} sent message type {what} where {wanted} was expected",
            dir.sender()
        ),
    )
}

/// The transcript hash over the messages so far, kept as the messages themselves.
struct Hashes {
    h: HashAlg,
    msgs: Vec<u8>,
}

impl Hashes {
    fn push(&mut self, m: &Message) {
        self.msgs.extend_from_slice(&m.bytes);
    }
    fn current(&self) -> Vec<u8> {
        self.h.hash(&self.msgs)
    }
}

/// Check the handshake and derive the statement.
///
/// For TLS 1.3 the handshake traffic secrets come from `secrets`; TLS 1.2
/// needs none (its handshake is in the clear, Finished is checked by the
/// relation).
pub fn check_handshake(
    t: &crate::record::Recording,
    cfg: &VerifyConfig,
    secrets: SecretsSource<'_>,
) -> Result<(SessionInfo, SessionStatement)> {
    let mut sent = Stream::new(Direction::Sent, &t.sent);
    let mut recv = Stream::new(Direction::Received, &t.received);
    let ch_msg = sent.expect(msg_type::CLIENT_HELLO, "ClientHello")?;
    let ch = hsk::parse_client_hello(ch_msg.body())?;
    if ch.offers_psk_or_early_data {
        return Err(TlsError::Unsupported(
            "session resumption / 0-RTT offered by the client".into(),
        ));
    }
    check_sni(&ch, &cfg.server_name)?;
    let sh_msg = recv.expect(msg_type::SERVER_HELLO, "ServerHello")?;
    let sh = hsk::parse_server_hello(sh_msg.body())?;
    let suite = CipherSuite::from_code(sh.cipher_suite)
        .ok_or_else(|| TlsError::Unsupported(format!("cipher suite {:#06x}", sh.cipher_suite)))?;
    if !ch.cipher_suites.contains(&sh.cipher_suite) {
        return Err(malformed("ServerHello", "suite was not offered"));
    }
    match sh.version {
        0x0304 => tls13(sent, recv, cfg, secrets, ch_msg, ch, sh_msg, sh, suite),
        0x0303 => {
            if ch.offers_tls13 && sh.random[24..] == *b"DOWNGRD\x01" {
                return Err(malformed("ServerHello", "TLS 1.3 downgrade sentinel"));
            }
            tls12(sent, recv, cfg, ch_msg, ch, sh_msg, sh, suite)
        }
        v => Err(TlsError::Unsupported(format!("protocol version {v:#06x}"))),
    }
}

#[allow(clippy::too_many_arguments)]
fn tls13(
    mut sent: Stream<'_>,
    mut recv: Stream<'_>,
    cfg: &VerifyConfig,
    secrets: SecretsSource<'_>,
    mut ch_msg: Message,
    mut ch: hsk::ClientHello,
    mut sh_msg: Message,
    mut sh: hsk::ServerHello,
    mut suite: CipherSuite,
) -> Result<(SessionInfo, SessionStatement)> {
    sent.tls13 = true;
    recv.tls13 = true;
    let mut hashes = Hashes {
        h: suite.hash(),
        msgs: Vec::new(),
    };
    if sh.is_hrr() {
        // RFC 8446 4.4.1: ClientHello1 is replaced by a synthetic message_hash.
        let h = suite.hash();
        let digest = h.hash(&ch_msg.bytes);
        let mut synthetic = vec![msg_type::MESSAGE_HASH, 0, 0, h.output_len() as u8];
        synthetic.extend_from_slice(&digest);
        hashes.msgs.extend_from_slice(&synthetic);
        hashes.push(&sh_msg);
        ch_msg = sent.expect(msg_type::CLIENT_HELLO, "second ClientHello")?;
        ch = hsk::parse_client_hello(ch_msg.body())?;
        if ch.offers_psk_or_early_data {
            return Err(TlsError::Unsupported(
                "session resumption / 0-RTT offered by the client".into(),
            ));
        }
        check_sni(&ch, &cfg.server_name)?;
        sh_msg = recv.expect(msg_type::SERVER_HELLO, "ServerHello")?;
        sh = hsk::parse_server_hello(sh_msg.body())?;
        if sh.is_hrr() {
            return Err(malformed("ServerHello", "second HelloRetryRequest"));
        }
        if CipherSuite::from_code(sh.cipher_suite) != Some(suite) {
            return Err(malformed(
                "ServerHello",
                "suite changed after HelloRetryRequest",
            ));
        }
        suite = CipherSuite::from_code(sh.cipher_suite).expect("checked");
    }
    if sh.version != 0x0304 || suite.version() != TlsVersion::Tls13 {
        return Err(malformed("ServerHello", "TLS 1.3 with a TLS 1.2 suite"));
    }
    if sh.psk {
        return Err(TlsError::Unsupported("pre-shared key handshake".into()));
    }
    let (g, server_share) = sh
        .key_share
        .clone()
        .ok_or_else(|| malformed("ServerHello", "no key share"))?;
    let group =
        KxGroup::from_code(g).ok_or_else(|| TlsError::Unsupported(format!("group {g:#06x}")))?;
    if !ch.key_shares.iter().any(|(cg, _)| *cg == g) || server_share.is_empty() {
        return Err(malformed(
            "ServerHello",
            "key share for a group the client did not send",
        ));
    }
    let h = suite.hash();
    hashes.push(&ch_msg);
    hashes.push(&sh_msg);
    let th_hello = hashes.current();
    let hs_secrets = match secrets {
        SecretsSource::Revealed(s) => s.clone(),
        SecretsSource::FromWitness(SessionSecret::Tls13 { handshake_secret }) => {
            if handshake_secret.len() != h.output_len() {
                return Err(TlsError::SecretMismatch(
                    "handshake secret has the wrong length".into(),
                ));
            }
            let (c, s) = keys::tls13_handshake_traffic(h, handshake_secret, &th_hello);
            HandshakeSecrets {
                client: c,
                server: s,
            }
        }
        SecretsSource::FromWitness(_) => {
            return Err(TlsError::SecretMismatch(
                "witness is for TLS 1.2 but the session is TLS 1.3".into(),
            ))
        }
    };
    if hs_secrets.client.len() != h.output_len() || hs_secrets.server.len() != h.output_len() {
        return Err(TlsError::SecretMismatch(
            "handshake traffic secret has the wrong length".into(),
        ));
    }
    recv.set_cipher(RecordCipher::new(
        suite,
        keys::tls13_traffic_keys(suite, &hs_secrets.server),
    )?)?;
    let ee = recv.expect(msg_type::ENCRYPTED_EXTENSIONS, "EncryptedExtensions")?;
    hashes.push(&ee);
    let cert_msg = recv.expect(msg_type::CERTIFICATE, "Certificate")?;
    let chain = hsk::parse_certificate(cert_msg.body(), true)?;
    hashes.push(&cert_msg);
    let cv_msg = recv.expect(msg_type::CERTIFICATE_VERIFY, "CertificateVerify")?;
    let cv = hsk::parse_certificate_verify(cv_msg.body())?;
    let ee_der = CertificateDer::from(chain[0].clone());
    let ee_cert = check_chain(cfg, &ee_der, &chain)?;
    let mut signed = vec![0x20u8; 64];
    signed.extend_from_slice(b"TLS 1.3, server CertificateVerify\0");
    signed.extend_from_slice(&hashes.current());
    check_signature(&ee_cert, cv.scheme, &signed, &cv.signature, true)?;
    hashes.push(&cv_msg);
    let fin = recv.expect(msg_type::FINISHED, "Finished")?;
    if fin.body() != keys::tls13_finished(h, &hs_secrets.server, &hashes.current()) {
        return Err(TlsError::Finished(Direction::Received));
    }
    hashes.push(&fin);
    let th_server_finished = hashes.current();

    sent.set_cipher(RecordCipher::new(
        suite,
        keys::tls13_traffic_keys(suite, &hs_secrets.client),
    )?)?;
    let cfin = sent.expect(msg_type::FINISHED, "client Finished")?;
    if cfin.body() != keys::tls13_finished(h, &hs_secrets.client, &th_server_finished) {
        return Err(TlsError::Finished(Direction::Sent));
    }
    let mut records = sent.rest(0)?;
    records.extend(recv.rest(0)?);
    let info = SessionInfo {
        server_name: cfg.server_name.clone(),
        port: cfg.port,
        time: cfg.time,
        version: TlsVersion::Tls13,
        suite,
        group,
        certificates: chain,
    };
    let statement = SessionStatement {
        suite,
        public: PublicInputs::Tls13 {
            th_hello,
            th_server_finished,
            client_hs_traffic: hs_secrets.client,
            server_hs_traffic: hs_secrets.server,
        },
        records,
    };
    Ok((info, statement))
}

#[allow(clippy::too_many_arguments)]
fn tls12(
    mut sent: Stream<'_>,
    mut recv: Stream<'_>,
    cfg: &VerifyConfig,
    ch_msg: Message,
    ch: hsk::ClientHello,
    sh_msg: Message,
    sh: hsk::ServerHello,
    suite: CipherSuite,
) -> Result<(SessionInfo, SessionStatement)> {
    if suite.version() != TlsVersion::Tls12 {
        return Err(malformed("ServerHello", "TLS 1.2 with a TLS 1.3 suite"));
    }
    let mut hashes = Hashes {
        h: suite.hash(),
        msgs: Vec::new(),
    };
    hashes.push(&ch_msg);
    hashes.push(&sh_msg);
    let cert_msg = recv.expect(msg_type::CERTIFICATE, "Certificate")?;
    let chain = hsk::parse_certificate(cert_msg.body(), false)?;
    hashes.push(&cert_msg);
    let ske_msg = recv.expect(msg_type::SERVER_KEY_EXCHANGE, "ServerKeyExchange")?;
    let ske = hsk::parse_server_key_exchange(ske_msg.body())?;
    hashes.push(&ske_msg);
    let group = KxGroup::from_code(ske.group)
        .ok_or_else(|| TlsError::Unsupported(format!("group {:#06x}", ske.group)))?;
    check_tls12_server(cfg, &chain, &ch.random, &sh.random, &ske)?;
    let done = recv.expect(msg_type::SERVER_HELLO_DONE, "ServerHelloDone")?;
    if !done.body().is_empty() {
        return Err(malformed("ServerHelloDone", "non-empty"));
    }
    hashes.push(&done);
    let cke = sent.expect(msg_type::CLIENT_KEY_EXCHANGE, "ClientKeyExchange")?;
    hsk::parse_client_key_exchange(cke.body())?;
    hashes.push(&cke);

    // The Finished records are protected; the relation checks their contents.
    let client_finished = finished_record(&mut sent)?;
    // NewSessionTicket (if any) precedes the server's ChangeCipherSpec.
    let mut tickets = Vec::new();
    loop {
        let Some(rec) = recv.records.get(recv.pos) else {
            return Err(TlsError::Incomplete(
                "the server handshake ended early".into(),
            ));
        };
        if rec.content_type == content_type::CHANGE_CIPHER_SPEC && recv.hs.is_empty() {
            break;
        }
        let m = recv.next_message()?;
        if m.typ != msg_type::NEW_SESSION_TICKET {
            return Err(unexpected(
                Direction::Received,
                "NewSessionTicket or ChangeCipherSpec",
                m.typ,
            ));
        }
        tickets.extend_from_slice(&m.bytes);
    }
    let server_finished = finished_record(&mut recv)?;
    let info = SessionInfo {
        server_name: cfg.server_name.clone(),
        port: cfg.port,
        time: cfg.time,
        version: TlsVersion::Tls12,
        suite,
        group,
        certificates: chain,
    };
    let mut records = sent.rest(1)?;
    records.extend(recv.rest(1)?);
    let statement = SessionStatement {
        suite,
        public: PublicInputs::Tls12 {
            client_random: ch.random.to_vec(),
            server_random: sh.random.to_vec(),
            handshake_messages: hashes.msgs,
            tickets,
            client_finished,
            server_finished,
        },
        records,
    };
    Ok((info, statement))
}

fn finished_record(s: &mut Stream<'_>) -> Result<Record> {
    let ccs = s.records.get(s.pos).ok_or_else(|| {
        TlsError::Incomplete(format!("no ChangeCipherSpec from the {}", s.dir.sender()))
    })?;
    if ccs.content_type != content_type::CHANGE_CIPHER_SPEC || ccs.payload != [1] {
        return Err(malformed(
            "handshake",
            format!(
                "the {} sent no ChangeCipherSpec before Finished",
                s.dir.sender()
            ),
        ));
    }
    let fin = s
        .records
        .get(s.pos + 1)
        .ok_or_else(|| TlsError::Incomplete(format!("no Finished from the {}", s.dir.sender())))?;
    if fin.content_type != content_type::HANDSHAKE {
        return Err(malformed(
            "handshake",
            format!(
                "the {} sent content type {} where Finished was expected",
                s.dir.sender(),
                fin.content_type
            ),
        ));
    }
    s.pos += 2;
    Ok(fin.clone())
}

/// Each direction's application data and how the connection ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppData {
    /// Application data the client sent, concatenated.
    pub sent: Vec<u8>,
    /// Application data the server sent, concatenated.
    pub received: Vec<u8>,
    /// Whether the server sent close_notify.
    pub server_close_notify: bool,
    /// A fatal alert description the server sent after the handshake, if any.
    pub server_alert: Option<u8>,
}

/// Assemble the application data from the opened records, enforcing the
/// record-layer rules: only application data, post-handshake tickets
/// (server) and alerts; nothing after an alert.
pub fn assemble(version: TlsVersion, opened: &[OpenedRecord]) -> Result<AppData> {
    let mut out = AppData::default();
    let mut closed = [false, false];
    let mut tickets = Reassembler::default();
    for r in opened {
        let d = r.direction as usize;
        if closed[d] {
            return Err(malformed(
                "record",
                format!("the {} sent data after an alert", r.direction),
            ));
        }
        match r.content_type {
            content_type::APPLICATION_DATA => match r.direction {
                Direction::Sent => out.sent.extend_from_slice(&r.data),
                Direction::Received => out.received.extend_from_slice(&r.data),
            },
            content_type::ALERT => {
                if r.data.len() != 2 {
                    return Err(malformed("alert", "not 2 bytes"));
                }
                closed[d] = true;
                if r.direction == Direction::Received {
                    if r.data[1] == 0 {
                        out.server_close_notify = true;
                    } else {
                        out.server_alert = Some(r.data[1]);
                    }
                }
            }
            content_type::HANDSHAKE
                if r.direction == Direction::Received && version == TlsVersion::Tls13 =>
            {
                tickets.push(&r.data)?;
                while let Some(m) = tickets.next_message()? {
                    match m.typ {
                        msg_type::NEW_SESSION_TICKET => {}
                        msg_type::KEY_UPDATE => {
                            return Err(TlsError::Unsupported("KeyUpdate".into()))
                        }
                        t => return Err(unexpected(Direction::Received, "NewSessionTicket", t)),
                    }
                }
            }
            t => {
                return Err(malformed(
                    "record",
                    format!(
                        "the {} sent content type {t} after the handshake",
                        r.direction
                    ),
                ))
            }
        }
    }
    Ok(out)
}

/// What the prover computes from its own copy of the transcript and the
/// captured (EC)DHE shared secret.
#[derive(Clone, Debug)]
pub struct DerivedWitness {
    /// The witness (HS for TLS 1.3, master secret for TLS 1.2).
    pub witness: SessionSecret,
    /// The session's suite.
    pub suite: CipherSuite,
    /// client_random, to find the session in a key log.
    pub client_random: [u8; 32],
    /// The key-log label and secret that must equal what the TLS stack
    /// logged (`CLIENT_HANDSHAKE_TRAFFIC_SECRET` or `CLIENT_RANDOM`), as a
    /// cross-check of the derivation.
    pub keylog_check: (&'static str, Vec<u8>),
    /// The client key shares offered (group, public key), to look up the
    /// captured shared secret.
    pub key_shares: Vec<(u16, Vec<u8>)>,
}

/// The client's key shares in the transcript (TLS 1.3: of the last
/// ClientHello; TLS 1.2: the ClientKeyExchange public key), so the prover can
/// find the shared secret it captured.
pub fn client_public_keys(t: &crate::record::Recording) -> Result<Vec<Vec<u8>>> {
    let mut sent = Stream::new(Direction::Sent, &t.sent);
    sent.tls13 = true;
    let mut out = Vec::new();
    let ch = hsk::parse_client_hello(sent.expect(msg_type::CLIENT_HELLO, "ClientHello")?.body())?;
    out.extend(ch.key_shares.into_iter().map(|(_, k)| k));
    // A second ClientHello (after HRR) or a ClientKeyExchange may follow in the clear.
    if let Ok(m) = sent.next_message() {
        match m.typ {
            msg_type::CLIENT_HELLO => {
                out.extend(
                    hsk::parse_client_hello(m.body())?
                        .key_shares
                        .into_iter()
                        .map(|(_, k)| k),
                );
            }
            msg_type::CLIENT_KEY_EXCHANGE => out.push(hsk::parse_client_key_exchange(m.body())?),
            _ => {}
        }
    }
    Ok(out)
}

/// Derive the witness from the transcript's clear-text handshake messages and
/// the (EC)DHE shared secret.
pub fn derive_witness(t: &crate::record::Recording, ecdhe: &[u8]) -> Result<DerivedWitness> {
    let mut sent = Stream::new(Direction::Sent, &t.sent);
    let mut recv = Stream::new(Direction::Received, &t.received);
    sent.tls13 = true;
    recv.tls13 = true;
    let mut ch_msg = sent.expect(msg_type::CLIENT_HELLO, "ClientHello")?;
    let mut sh_msg = recv.expect(msg_type::SERVER_HELLO, "ServerHello")?;
    let mut sh = hsk::parse_server_hello(sh_msg.body())?;
    let suite = CipherSuite::from_code(sh.cipher_suite)
        .ok_or_else(|| TlsError::Unsupported(format!("cipher suite {:#06x}", sh.cipher_suite)))?;
    let h = suite.hash();
    let mut msgs = Vec::new();
    if sh.version == 0x0304 && sh.is_hrr() {
        let mut synthetic = vec![msg_type::MESSAGE_HASH, 0, 0, h.output_len() as u8];
        synthetic.extend_from_slice(&h.hash(&ch_msg.bytes));
        msgs.extend_from_slice(&synthetic);
        msgs.extend_from_slice(&sh_msg.bytes);
        ch_msg = sent.expect(msg_type::CLIENT_HELLO, "second ClientHello")?;
        sh_msg = recv.expect(msg_type::SERVER_HELLO, "ServerHello")?;
        sh = hsk::parse_server_hello(sh_msg.body())?;
    }
    let ch = hsk::parse_client_hello(ch_msg.body())?;
    msgs.extend_from_slice(&ch_msg.bytes);
    msgs.extend_from_slice(&sh_msg.bytes);
    match sh.version {
        0x0304 => {
            let hs = keys::tls13_handshake_secret(h, ecdhe);
            let (chts, _) = keys::tls13_handshake_traffic(h, &hs, &h.hash(&msgs));
            Ok(DerivedWitness {
                witness: SessionSecret::Tls13 {
                    handshake_secret: hs,
                },
                suite,
                client_random: ch.random,
                keylog_check: ("CLIENT_HANDSHAKE_TRAFFIC_SECRET", chts),
                key_shares: ch.key_shares,
            })
        }
        0x0303 => {
            sent.tls13 = false;
            recv.tls13 = false;
            for name in ["Certificate", "ServerKeyExchange", "ServerHelloDone"] {
                let m = recv.next_message()?;
                let want = match name {
                    "Certificate" => msg_type::CERTIFICATE,
                    "ServerKeyExchange" => msg_type::SERVER_KEY_EXCHANGE,
                    _ => msg_type::SERVER_HELLO_DONE,
                };
                if m.typ != want {
                    return Err(unexpected(Direction::Received, name, m.typ));
                }
                msgs.extend_from_slice(&m.bytes);
            }
            let cke = sent.expect(msg_type::CLIENT_KEY_EXCHANGE, "ClientKeyExchange")?;
            let client_pub = hsk::parse_client_key_exchange(cke.body())?;
            msgs.extend_from_slice(&cke.bytes);
            let ems = ch.ems && sh.ems;
            let seed = if ems {
                h.hash(&msgs)
            } else {
                let mut s = ch.random.to_vec();
                s.extend_from_slice(&sh.random);
                s
            };
            let ms = keys::tls12_master_secret(h, ecdhe, ems, &seed);
            Ok(DerivedWitness {
                witness: SessionSecret::Tls12 {
                    master_secret: ms.clone(),
                },
                suite,
                client_random: ch.random,
                keylog_check: ("CLIENT_RANDOM", ms),
                key_shares: vec![(0, client_pub)],
            })
        }
        v => Err(TlsError::Unsupported(format!("protocol version {v:#06x}"))),
    }
}

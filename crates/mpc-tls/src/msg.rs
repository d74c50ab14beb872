//! The messages between the prover and the verifier of an MPC-mode
//! session, with their byte encodings.
//!
//! # Encoding
//! One tag byte, then the message's fields in order: fixed-size arrays as
//! their bytes, variable ones as a `u32` big-endian length and the bytes,
//! lists as a `u32` count and the elements. [`ProverMsg::decode`] and
//! [`VerifierMsg::decode`] refuse unknown tags, truncated fields, lengths
//! past the end, trailing bytes and anything over [`MAX_MESSAGE`]; every
//! length is checked against the bytes actually present before anything is
//! allocated, so a forged length cannot make a party reserve memory.
//! Suites and groups travel as their IANA `u16` codes and are typed
//! ([`webproof_tls::CipherSuite`], [`webproof_tls::KxGroup`]) at decoding:
//! a code of no known suite or group is refused there, named in the error.
//!
//! The 2PC payloads inside (flips, labels, OLE answers, garbled chunks)
//! are `webproof_mpc`'s own byte strings, checked by its parsers when the
//! session hands them over.

use crate::error::{Error, Result};
use crate::hello::{group_from_wire, suite_from_wire, Terms};

/// Largest encoded message accepted (garbled tables come in chunks of at
/// most 2 MiB; the largest others are the OLE answers of the longest
/// records).
pub const MAX_MESSAGE: usize = 64 << 20;

/// Prover → verifier.
#[derive(Clone, PartialEq, Eq)]
pub enum ProverMsg {
    /// Commitments to the prover's public key shares, one per group (the
    /// group is not known before the ServerKeyExchange).
    Hello {
        /// Commitment to the P-256 share.
        commit_p256: [u8; 32],
        /// Commitment to the X25519 share.
        commit_x25519: [u8; 32],
        /// Plaintext lengths of the request's records, in order (record
        /// lengths are public: the verifier garbles their circuits ahead).
        request_lens: Vec<u32>,
        /// The suite family, group and EMS offer the verifier garbles for
        /// before the ClientHello.
        terms: Terms,
        /// The base-OT message of the prover's garbling of the request's
        /// keystream (`crate::rec::dual`): the verifier's key ‖ IV share
        /// enters it by that OT.
        dual_ot: [u8; 32],
    },
    /// Preprocessing, after `Setup`: the labels of the verifier's key ‖ IV
    /// wires in the prover's keystream circuits, each pair padded by the
    /// two keys of its base OT (`crate::rec::dual::DualProver::verifier_labels`).
    DualLabels(Vec<u8>),
    /// Preprocessing: one chunk of the prover's garbling of request record
    /// `id`'s keystream, streamed while the verifier's tables come down
    /// (records in id order).
    DualTables {
        /// Record id.
        id: u32,
        /// The chunk (`webproof_mpc`'s encoding).
        chunk: Vec<u8>,
    },
    /// The end of request record `id`'s keystream tables: its decoding
    /// bits, padded by the prover's COT choice bits, and the labels of its
    /// explicit nonce (`crate::rec::dual::RecordGarbling::finish`).
    DualEnd {
        /// Record id.
        id: u32,
        /// The end message.
        end: Vec<u8>,
    },
    /// Bytes the prover sent to the server, exactly as sent.
    ToServer(Vec<u8>),
    /// Bytes the prover received from the server, exactly as received.
    FromServer(Vec<u8>),
    /// The server closed the TCP connection.
    ServerClosed,
    /// The opening of the commitment for the negotiated group and the
    /// first ECtF flips.
    KeyOpen {
        /// The prover's public share.
        public: Vec<u8>,
        /// The commitment's blind.
        blind: [u8; 32],
        /// The ECtF's flips (its one round trip).
        flips: Vec<u8>,
    },
    /// The ECtF's last message, the prover's padded correction `α² − c`
    /// (`crate::keyx::ectf`); no answer follows, the key derivation's
    /// first flips come in the same flight.
    EctfCorrection(Vec<u8>),
    /// Flips of the prover's share for a key-derivation step.
    KdfFlips {
        /// Step index.
        step: u8,
        /// Flips.
        flips: Vec<u8>,
    },
    /// A key-derivation step's revealed output: its bits and the digest
    /// of their labels (`webproof_mpc::exec`), which the verifier checks.
    KdfLabels {
        /// Step index.
        step: u8,
        /// Labels.
        labels: Vec<u8>,
    },
    /// Record in 2PC (its circuit evaluated on the key derivation's
    /// output, chained, and the verifier's early inputs): the ciphertext
    /// and, for the record that computes the GHASH key (the client
    /// Finished), the offsets `h_P^i + ρ_i` of its odd powers from the
    /// random inputs of the M2A answered ahead (16 bytes per odd power;
    /// the circuit output `h_P`, the prover's multiplicative share of the
    /// key); empty for the request's records, which take those powers.
    RecCiphertext {
        /// Record id.
        id: u32,
        /// The client Finished's ciphertext; a request record's ciphertext
        /// masked by the prover's COT choice bits (`C ⊕ ρ`, 16 bytes per
        /// block, `crate::rec::gcm::RecordProver::mask_ciphertext`):
        /// the verifier never sees the request's ciphertext.
        ct: Vec<u8>,
        /// Offsets.
        offsets: Vec<u8>,
        /// A request record's: the labels of the prover's key ‖ IV share
        /// in its keystream circuit (`crate::rec::dual`); empty for the
        /// client Finished.
        labels: Vec<u8>,
    },
    /// Request record `id` went to the server: in the parties' recordings
    /// it stands as its header and explicit nonce, zeros in place of its
    /// ciphertext and tag (`crate::rec::hidden_record`), which the
    /// verifier builds itself.
    RecSent {
        /// Record id.
        id: u32,
    },
    /// The prover ends the session: the records it saw each way after the
    /// handshake.
    Close {
        /// Client application-phase records sent.
        sent: u32,
        /// Server records after the server Finished received.
        received: u32,
    },
    /// The prover gives up.
    Abort(String),
}

/// Verifier → prover.
#[derive(Clone, PartialEq, Eq)]
pub enum VerifierMsg {
    /// The client random (the verifier's, so the server's signature covers
    /// a fresh value of its choice) and its public key shares.
    Setup {
        /// ClientHello.random.
        client_random: [u8; 32],
        /// The verifier's P-256 share (SEC1 uncompressed).
        q_p256: Vec<u8>,
        /// The verifier's X25519 share (compressed Edwards).
        q_x25519: [u8; 32],
        /// Its answer to the prover's base OT (`crate::rec::dual`), its
        /// key ‖ IV share the choice bits.
        dual_ot: Vec<u8>,
    },
    /// The ECtF's answer to the flips in `KeyOpen`.
    EctfAnswer(Vec<u8>),
    /// One chunk of a garbled circuit's tables, streamed as it is
    /// garbled. Circuits come one after the other, numbered: the key
    /// derivation's steps from 0, then every record in 2PC by id (client
    /// Finished, server Finished, the request's records).
    Tables {
        /// The circuit.
        circuit: u8,
        /// The chunk (`webproof_mpc`'s encoding).
        chunk: Vec<u8>,
    },
    /// The end of a circuit's tables: its decoding information and the
    /// labels of the verifier's inputs it knows before the session.
    Decoding {
        /// The circuit (as in `Tables`).
        circuit: u8,
        /// The decoding information (`webproof_mpc`'s encoding).
        decoding: Vec<u8>,
        /// The labels of the verifier's early input groups (its masks, a
        /// record's explicit nonce: `webproof_mpc::exec`'s early inputs),
        /// which its input message at the circuit's step then leaves out;
        /// empty for the full PRF's circuits.
        early: Vec<u8>,
    },
    /// Input labels of a key-derivation step.
    KdfInputs {
        /// Step index.
        step: u8,
        /// The inputs message.
        msg: Vec<u8>,
    },
    /// Right after a step's `KdfInputs`: the labels of the next step's
    /// inputs the session already fixed (its advance group,
    /// `crate::kdf::reduced::advance_groups`), sent while the prover
    /// evaluates the step before so that they cross the link off the
    /// critical path.
    KdfAdvance {
        /// The step they are for (the one after the `KdfInputs`').
        step: u8,
        /// The labels (`webproof_mpc::exec`'s early inputs).
        msg: Vec<u8>,
    },
    /// Preprocessing, after the last circuit's `Decoding`: the M2A of the
    /// odd powers of the client's GHASH key, for the record that computes
    /// it (the client Finished; its powers serve every client record's
    /// tag), answered ahead for the prover's random inputs.
    RecPowers {
        /// Record id.
        id: u32,
        /// The OLE answer.
        msg: Vec<u8>,
    },
    /// Record in 2PC (client records): the verifier's tag share and, for
    /// a request record, the corrections of its hidden ciphertext's M2A
    /// (16 bytes per block; empty for the client Finished).
    RecTagShare {
        /// Record id.
        id: u32,
        /// Tag share.
        tag: [u8; 16],
        /// Corrections `[H^p]_V + R` per ciphertext block.
        corrections: Vec<u8>,
        /// A request record's check value over both garblings of its
        /// keystream (`crate::rec::dual`, 32 bytes): the prover sends the
        /// record only if it matches; empty for the client Finished.
        check: Vec<u8>,
    },
    /// The verifier recorded every server record the prover named: its
    /// share of the server write key and IV (deferred decryption).
    CloseAck {
        /// Share of server_write_key.
        server_key: Vec<u8>,
        /// Share of server_write_IV.
        server_iv: Vec<u8>,
        /// Share of client_write_key: the request's records are all
        /// recorded too, so the prover may now prove what they say.
        client_key: Vec<u8>,
        /// Share of client_write_IV.
        client_iv: Vec<u8>,
    },
    /// The verifier refuses to go on.
    Abort(String),
}

impl core::fmt::Debug for ProverMsg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ProverMsg::{}", self.name())
    }
}

impl core::fmt::Debug for VerifierMsg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "VerifierMsg::{}", self.name())
    }
}

struct W(Vec<u8>);

impl W {
    fn new(tag: u8) -> Self {
        W(vec![tag])
    }
    fn raw(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
    fn u32(self, v: u32) -> Self {
        self.raw(&v.to_be_bytes())
    }
    fn bytes(self, b: &[u8]) -> Self {
        self.u32(b.len() as u32).raw(b)
    }
}

struct R<'a>(&'a [u8]);

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(Error::Malformed("truncated message"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.arr()?))
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn bytes(&mut self) -> Result<Vec<u8>> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn end(&self) -> Result<()> {
        if !self.0.is_empty() {
            return Err(Error::Malformed("trailing bytes"));
        }
        Ok(())
    }
}

fn start(b: &[u8]) -> Result<(u8, R<'_>)> {
    if b.len() > MAX_MESSAGE {
        return Err(Error::Oversized {
            len: b.len(),
            max: MAX_MESSAGE,
        });
    }
    let (&tag, rest) = b.split_first().ok_or(Error::Malformed("empty message"))?;
    Ok((tag, R(rest)))
}

fn string(b: Vec<u8>) -> Result<String> {
    if b.len() > 1024 {
        return Err(Error::Malformed("abort reason over 1 KiB"));
    }
    String::from_utf8(b).map_err(|_| Error::Malformed("abort reason not UTF-8"))
}

fn reason(s: &str) -> &[u8] {
    let mut n = s.len().min(1024);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s.as_bytes()[..n]
}

impl ProverMsg {
    /// The message's name (for errors and logs; never its contents).
    pub fn name(&self) -> &'static str {
        match self {
            ProverMsg::Hello { .. } => "Hello",
            ProverMsg::DualLabels(_) => "DualLabels",
            ProverMsg::DualTables { .. } => "DualTables",
            ProverMsg::DualEnd { .. } => "DualEnd",
            ProverMsg::ToServer(_) => "ToServer",
            ProverMsg::FromServer(_) => "FromServer",
            ProverMsg::ServerClosed => "ServerClosed",
            ProverMsg::KeyOpen { .. } => "KeyOpen",
            ProverMsg::EctfCorrection(_) => "EctfCorrection",
            ProverMsg::KdfFlips { .. } => "KdfFlips",
            ProverMsg::KdfLabels { .. } => "KdfLabels",
            ProverMsg::RecCiphertext { .. } => "RecCiphertext",
            ProverMsg::RecSent { .. } => "RecSent",
            ProverMsg::Close { .. } => "Close",
            ProverMsg::Abort(_) => "Abort",
        }
    }

    /// The encoding (module docs).
    pub fn encode(&self) -> Vec<u8> {
        let w = match self {
            ProverMsg::Hello {
                commit_p256,
                commit_x25519,
                request_lens,
                terms,
                dual_ot,
            } => {
                let mut w = W::new(1)
                    .raw(commit_p256)
                    .raw(commit_x25519)
                    .u32(request_lens.len() as u32);
                for l in request_lens {
                    w = w.u32(*l);
                }
                w.raw(&terms.suite.code().to_be_bytes())
                    .raw(&terms.group.code().to_be_bytes())
                    .raw(&[terms.ems as u8])
                    .raw(dual_ot)
            }
            ProverMsg::DualLabels(b) => W::new(16).bytes(b),
            ProverMsg::DualTables { id, chunk } => W::new(17).u32(*id).bytes(chunk),
            ProverMsg::DualEnd { id, end } => W::new(18).u32(*id).bytes(end),
            ProverMsg::ToServer(b) => W::new(2).bytes(b),
            ProverMsg::FromServer(b) => W::new(3).bytes(b),
            ProverMsg::ServerClosed => W::new(4),
            ProverMsg::KeyOpen {
                public,
                blind,
                flips,
            } => W::new(5).bytes(public).raw(blind).bytes(flips),
            ProverMsg::EctfCorrection(d) => W::new(6).bytes(d),
            ProverMsg::KdfFlips { step, flips } => W::new(7).raw(&[*step]).bytes(flips),
            ProverMsg::KdfLabels { step, labels } => W::new(8).raw(&[*step]).bytes(labels),
            ProverMsg::RecCiphertext {
                id,
                ct,
                offsets,
                labels,
            } => W::new(12).u32(*id).bytes(ct).bytes(offsets).bytes(labels),
            ProverMsg::RecSent { id } => W::new(15).u32(*id),
            ProverMsg::Close { sent, received } => W::new(13).u32(*sent).u32(*received),
            ProverMsg::Abort(s) => W::new(14).bytes(reason(s)),
        };
        w.0
    }

    /// Parse one message (module docs for what is refused).
    pub fn decode(b: &[u8]) -> Result<Self> {
        let (tag, mut r) = start(b)?;
        let m = match tag {
            1 => {
                let commit_p256 = r.arr()?;
                let commit_x25519 = r.arr()?;
                let n = r.u32()? as usize;
                if n > r.0.len() / 4 {
                    return Err(Error::Malformed("list longer than the message"));
                }
                let request_lens = (0..n).map(|_| r.u32()).collect::<Result<_>>()?;
                let suite = suite_from_wire(u16::from_be_bytes(r.arr()?))?;
                let group = group_from_wire(u16::from_be_bytes(r.arr()?))?;
                let ems = match r.u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(Error::Malformed("a flag other than 0 or 1")),
                };
                ProverMsg::Hello {
                    commit_p256,
                    commit_x25519,
                    request_lens,
                    terms: Terms { suite, group, ems },
                    dual_ot: r.arr()?,
                }
            }
            16 => ProverMsg::DualLabels(r.bytes()?),
            17 => ProverMsg::DualTables {
                id: r.u32()?,
                chunk: r.bytes()?,
            },
            18 => ProverMsg::DualEnd {
                id: r.u32()?,
                end: r.bytes()?,
            },
            2 => ProverMsg::ToServer(r.bytes()?),
            3 => ProverMsg::FromServer(r.bytes()?),
            4 => ProverMsg::ServerClosed,
            5 => ProverMsg::KeyOpen {
                public: r.bytes()?,
                blind: r.arr()?,
                flips: r.bytes()?,
            },
            6 => ProverMsg::EctfCorrection(r.bytes()?),
            7 => ProverMsg::KdfFlips {
                step: r.u8()?,
                flips: r.bytes()?,
            },
            8 => ProverMsg::KdfLabels {
                step: r.u8()?,
                labels: r.bytes()?,
            },
            12 => ProverMsg::RecCiphertext {
                id: r.u32()?,
                ct: r.bytes()?,
                offsets: r.bytes()?,
                labels: r.bytes()?,
            },
            13 => ProverMsg::Close {
                sent: r.u32()?,
                received: r.u32()?,
            },
            14 => ProverMsg::Abort(string(r.bytes()?)?),
            15 => ProverMsg::RecSent { id: r.u32()? },
            _ => return Err(Error::Malformed("unknown prover message tag")),
        };
        r.end()?;
        Ok(m)
    }
}

impl VerifierMsg {
    /// The message's name (for errors and logs; never its contents).
    pub fn name(&self) -> &'static str {
        match self {
            VerifierMsg::Setup { .. } => "Setup",
            VerifierMsg::EctfAnswer(_) => "EctfAnswer",
            VerifierMsg::Tables { .. } => "Tables",
            VerifierMsg::Decoding { .. } => "Decoding",
            VerifierMsg::KdfInputs { .. } => "KdfInputs",
            VerifierMsg::KdfAdvance { .. } => "KdfAdvance",
            VerifierMsg::RecPowers { .. } => "RecPowers",
            VerifierMsg::RecTagShare { .. } => "RecTagShare",
            VerifierMsg::CloseAck { .. } => "CloseAck",
            VerifierMsg::Abort(_) => "Abort",
        }
    }

    /// The encoding (module docs).
    pub fn encode(&self) -> Vec<u8> {
        let w = match self {
            VerifierMsg::Setup {
                client_random,
                q_p256,
                q_x25519,
                dual_ot,
            } => W::new(1)
                .raw(client_random)
                .bytes(q_p256)
                .raw(q_x25519)
                .bytes(dual_ot),
            VerifierMsg::EctfAnswer(m) => W::new(2).bytes(m),
            VerifierMsg::Tables { circuit, chunk } => W::new(3).raw(&[*circuit]).bytes(chunk),
            VerifierMsg::Decoding {
                circuit,
                decoding,
                early,
            } => W::new(10).raw(&[*circuit]).bytes(decoding).bytes(early),
            VerifierMsg::KdfInputs { step, msg } => W::new(4).raw(&[*step]).bytes(msg),
            VerifierMsg::KdfAdvance { step, msg } => W::new(12).raw(&[*step]).bytes(msg),
            VerifierMsg::RecTagShare {
                id,
                tag,
                corrections,
                check,
            } => W::new(7).u32(*id).raw(tag).bytes(corrections).bytes(check),
            VerifierMsg::RecPowers { id, msg } => W::new(11).u32(*id).bytes(msg),
            VerifierMsg::CloseAck {
                server_key,
                server_iv,
                client_key,
                client_iv,
            } => W::new(8)
                .bytes(server_key)
                .bytes(server_iv)
                .bytes(client_key)
                .bytes(client_iv),
            VerifierMsg::Abort(s) => W::new(9).bytes(reason(s)),
        };
        w.0
    }

    /// Parse one message (module docs for what is refused).
    pub fn decode(b: &[u8]) -> Result<Self> {
        let (tag, mut r) = start(b)?;
        let m = match tag {
            1 => VerifierMsg::Setup {
                client_random: r.arr()?,
                q_p256: r.bytes()?,
                q_x25519: r.arr()?,
                dual_ot: r.bytes()?,
            },
            2 => VerifierMsg::EctfAnswer(r.bytes()?),
            3 => VerifierMsg::Tables {
                circuit: r.u8()?,
                chunk: r.bytes()?,
            },
            4 => VerifierMsg::KdfInputs {
                step: r.u8()?,
                msg: r.bytes()?,
            },

            7 => VerifierMsg::RecTagShare {
                id: r.u32()?,
                tag: r.arr()?,
                corrections: r.bytes()?,
                check: r.bytes()?,
            },
            8 => VerifierMsg::CloseAck {
                server_key: r.bytes()?,
                server_iv: r.bytes()?,
                client_key: r.bytes()?,
                client_iv: r.bytes()?,
            },
            9 => VerifierMsg::Abort(string(r.bytes()?)?),
            10 => VerifierMsg::Decoding {
                circuit: r.u8()?,
                decoding: r.bytes()?,
                early: r.bytes()?,
            },
            11 => VerifierMsg::RecPowers {
                id: r.u32()?,
                msg: r.bytes()?,
            },
            12 => VerifierMsg::KdfAdvance {
                step: r.u8()?,
                msg: r.bytes()?,
            },
            _ => return Err(Error::Malformed("unknown verifier message tag")),
        };
        r.end()?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prover_samples() -> Vec<ProverMsg> {
        vec![
            ProverMsg::Hello {
                commit_p256: [1; 32],
                commit_x25519: [2; 32],
                request_lens: vec![100, 2],
                terms: Terms {
                    suite: crate::hello::ECDHE_RSA_AES128_GCM_SHA256,
                    group: crate::hello::GROUP_P256,
                    ems: true,
                },
                dual_ot: [3; 32],
            },
            ProverMsg::DualLabels(vec![1; 64]),
            ProverMsg::DualTables {
                id: 1,
                chunk: vec![2; 40],
            },
            ProverMsg::DualEnd {
                id: 2,
                end: vec![3; 17],
            },
            ProverMsg::ToServer(vec![22, 3, 3, 0, 1, 9]),
            ProverMsg::FromServer(vec![]),
            ProverMsg::ServerClosed,
            ProverMsg::KeyOpen {
                public: vec![4; 65],
                blind: [5; 32],
                flips: vec![6; 64],
            },
            ProverMsg::EctfCorrection(vec![7; 32]),
            ProverMsg::KdfFlips {
                step: 3,
                flips: vec![8; 8],
            },
            ProverMsg::KdfLabels {
                step: 4,
                labels: vec![9; 32],
            },
            ProverMsg::RecCiphertext {
                id: 2,
                ct: vec![3; 17],
                offsets: vec![2; 48],
                labels: vec![4; 32],
            },
            ProverMsg::RecSent { id: 3 },
            ProverMsg::Close {
                sent: 1,
                received: 4,
            },
            ProverMsg::Abort("done é".into()),
        ]
    }

    fn verifier_samples() -> Vec<VerifierMsg> {
        vec![
            VerifierMsg::Setup {
                client_random: [1; 32],
                q_p256: vec![4; 65],
                q_x25519: [2; 32],
                dual_ot: vec![6; 128],
            },
            VerifierMsg::EctfAnswer(vec![5; 100]),
            VerifierMsg::Tables {
                circuit: 3,
                chunk: vec![1, 2, 3],
            },
            VerifierMsg::Decoding {
                circuit: 11,
                decoding: vec![4, 5],
                early: vec![7; 48],
            },
            VerifierMsg::KdfInputs {
                step: 0,
                msg: vec![6; 32],
            },
            VerifierMsg::KdfAdvance {
                step: 3,
                msg: vec![5; 48],
            },
            VerifierMsg::RecPowers {
                id: 1,
                msg: vec![2; 4],
            },
            VerifierMsg::RecTagShare {
                id: 0,
                tag: [3; 16],
                corrections: vec![4; 32],
                check: vec![5; 32],
            },
            VerifierMsg::CloseAck {
                server_key: vec![1; 16],
                server_iv: vec![2; 4],
                client_key: vec![3; 16],
                client_iv: vec![4; 4],
            },
            VerifierMsg::Abort("no".into()),
        ]
    }

    #[test]
    fn round_trip() {
        for m in prover_samples() {
            assert_eq!(ProverMsg::decode(&m.encode()).unwrap(), m, "{m:?}");
        }
        for m in verifier_samples() {
            assert_eq!(VerifierMsg::decode(&m.encode()).unwrap(), m, "{m:?}");
        }
    }

    /// Every strict prefix and every extension by a byte is refused, and
    /// so is every unknown tag.
    #[test]
    fn truncated_extended_and_unknown_are_refused() {
        for m in prover_samples() {
            let b = m.encode();
            for n in 0..b.len() {
                assert!(ProverMsg::decode(&b[..n]).is_err(), "{m:?} prefix {n}");
            }
            let mut x = b.clone();
            x.push(0);
            assert_eq!(
                ProverMsg::decode(&x).unwrap_err(),
                Error::Malformed("trailing bytes")
            );
        }
        for m in verifier_samples() {
            let b = m.encode();
            for n in 0..b.len() {
                assert!(VerifierMsg::decode(&b[..n]).is_err(), "{m:?} prefix {n}");
            }
            let mut x = b.clone();
            x.push(0);
            assert!(VerifierMsg::decode(&x).is_err());
        }
        for tag in [0u8, 19, 200, 255] {
            assert!(ProverMsg::decode(&[tag, 0, 0, 0, 0]).is_err());
        }
        for tag in [0u8, 12, 255] {
            assert!(VerifierMsg::decode(&[tag, 0, 0, 0, 0]).is_err());
        }
    }

    #[test]
    fn forged_lengths_and_oversized_are_refused() {
        // A length far past the end: refused without allocating it.
        let b = [2u8, 0xff, 0xff, 0xff, 0xff, 1, 2, 3];
        assert_eq!(
            ProverMsg::decode(&b).unwrap_err(),
            Error::Malformed("truncated message")
        );
        // A list count far past the end.
        let b = [3u8, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff];
        assert!(VerifierMsg::decode(&b).is_err());
        // A Hello claiming more request records than it has bytes for.
        let mut b = vec![1u8; 65];
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        assert!(ProverMsg::decode(&b).is_err());
        // More garbled circuits than a session has.
        let b = [3u8, 0, 0, 0, 17];
        assert!(VerifierMsg::decode(&b).is_err());
        let big = vec![2u8; MAX_MESSAGE + 1];
        assert!(matches!(
            ProverMsg::decode(&big).unwrap_err(),
            Error::Oversized { .. }
        ));
        // A Hello whose EMS flag is neither 0 nor 1.
        let mut b = ProverMsg::Hello {
            commit_p256: [1; 32],
            commit_x25519: [2; 32],
            request_lens: vec![64],
            terms: Terms {
                suite: crate::hello::ECDHE_ECDSA_AES128_GCM_SHA256,
                group: crate::hello::GROUP_X25519,
                ems: true,
            },
            dual_ot: [0; 32],
        }
        .encode();
        let flag = b.len() - 33;
        b[flag] = 2;
        assert_eq!(
            ProverMsg::decode(&b).unwrap_err(),
            Error::Malformed("a flag other than 0 or 1")
        );
        // Terms naming a suite or a group no TLS stack of the workspace
        // knows: refused at decoding, the error naming the code.
        b[flag] = 1;
        let (suite, group) = (flag - 4, flag - 2);
        let mut unknown_suite = b.clone();
        unknown_suite[suite..group].copy_from_slice(&0x009cu16.to_be_bytes());
        assert_eq!(
            ProverMsg::decode(&unknown_suite).unwrap_err(),
            Error::Unsupported("cipher suite 0x009c".into())
        );
        let mut unknown_group = b.clone();
        unknown_group[group..flag].copy_from_slice(&0x0018u16.to_be_bytes());
        assert!(matches!(
            ProverMsg::decode(&unknown_group).unwrap_err(),
            Error::Unsupported(why) if why.contains("group 0x0018")
        ));
        assert!(ProverMsg::decode(&b).is_ok());
        // An abort reason that is not UTF-8.
        let b = [14u8, 0, 0, 0, 2, 0xff, 0xfe];
        assert!(ProverMsg::decode(&b).is_err());
    }
}

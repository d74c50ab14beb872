//! Cheating and bad input end a session with a typed error, never a
//! panic: a forged ServerKeyExchange signature, the wrong server name, an
//! expired certificate, a tampered server Finished, server records
//! modified in flight, a server alert or close mid-handshake, altered
//! 2PC messages and client records, and garbage, truncated, oversized or
//! out-of-turn messages from either party.

mod common;
use common::*;
use webproof_mpc_tls::hello::*;
use webproof_mpc_tls::msg::MAX_MESSAGE;
use webproof_mpc_tls::{Error, ProverMsg, ProverSession, VerifierMsg, VerifierSession};
use webproof_tls::CipherSuite;
use webproof_tls::TlsError;

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: webproof.test\r\n\r\n";

/// A fresh pair of sessions on the default terms (AES-128-GCM, P-256,
/// EMS, a short request): the prover, its `Hello`, the verifier.
fn default_sessions(seed: u64, ca_der: &[u8]) -> (ProverSession, ProverMsg, VerifierSession) {
    default_terms(seed, ca_der, REQUEST)
}
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

fn run_with(kind: KeyKind, cert_names: &[&str], expired: bool, name: &str, hooks: Hooks) -> Stop {
    let c = certs(kind, cert_names, expired);
    let suite = match kind {
        KeyKind::Ecdsa => ECDHE_ECDSA_AES128_GCM_SHA256,
        KeyKind::Rsa => ECDHE_RSA_AES128_GCM_SHA256,
    };
    let (p, hello, v) = sessions(
        40,
        prover_config(name, suite, GROUP_X25519, true, REQUEST),
        verifier_config(&c.ca_der, name),
    );
    match run(p, hello, v, server(&c), RESPONSE, hooks) {
        Ok(_) => panic!("the session completed"),
        Err(e) => e,
    }
}

fn on_flight(n: usize, f: impl Fn(&mut Vec<u8>) + 'static) -> Hooks {
    Hooks {
        server_to_prover: Some(Box::new(move |i, b| {
            if i == n {
                f(b)
            }
        })),
        ..Hooks::default()
    }
}

#[test]
fn forged_server_key_exchange_signature() {
    let hooks = on_flight(0, |b| {
        let r = find_message(b, 12).expect("a ServerKeyExchange");
        b[r.end - 1] ^= 1;
    });
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(
        matches!(e, Stop::Verifier(Error::Tls(TlsError::Signature(_)))),
        "{e:?}"
    );
}

/// The server random altered in flight: the signature no longer covers
/// the handshake.
#[test]
fn altered_server_random() {
    let hooks = on_flight(0, |b| {
        let r = find_message(b, 2).expect("a ServerHello");
        b[r.start + 4 + 2 + 5] ^= 0x10;
    });
    let e = run_with(KeyKind::Rsa, &[NAME], false, NAME, hooks);
    assert!(
        matches!(e, Stop::Verifier(Error::Tls(TlsError::Signature(_)))),
        "{e:?}"
    );
}

#[test]
fn certificate_for_another_name() {
    let e = run_with(
        KeyKind::Ecdsa,
        &["other.test"],
        false,
        NAME,
        Hooks::default(),
    );
    assert!(
        matches!(e, Stop::Verifier(Error::Tls(TlsError::Certificate(_)))),
        "{e:?}"
    );
}

#[test]
fn prover_names_another_server_than_the_verifier() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let (p, hello, v) = sessions(
        41,
        prover_config(
            NAME,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            GROUP_P256,
            true,
            REQUEST,
        ),
        verifier_config(&c.ca_der, "bank.test"),
    );
    let e = run(p, hello, v, server(&c), RESPONSE, Hooks::default())
        .err()
        .unwrap();
    assert!(matches!(e, Stop::Verifier(Error::ClientHello(_))), "{e:?}");
}

#[test]
fn expired_certificate() {
    let e = run_with(KeyKind::Ecdsa, &[NAME], true, NAME, Hooks::default());
    assert!(
        matches!(e, Stop::Verifier(Error::Tls(TlsError::Certificate(_)))),
        "{e:?}"
    );
}

#[test]
fn tampered_server_finished_ciphertext() {
    let hooks = on_flight(1, |b| {
        let r = find_record(b, 22).expect("the server Finished");
        b[r.start + 9] ^= 1;
    });
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert_eq!(e, Stop::Prover(Error::ServerFinished));
}

/// The server Finished runs in no 2PC: its tag is checked by the prover
/// once the server key is revealed, before anything is proven (and in
/// the proof, `response::server_finished_is_checked_in_the_proof`).
#[test]
fn tampered_server_finished_tag() {
    let hooks = on_flight(1, |b| {
        let r = find_record(b, 22).expect("the server Finished");
        b[r.end - 1] ^= 1;
    });
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert_eq!(e, Stop::Prover(Error::ServerFinished));
}

#[test]
fn server_record_modified_in_flight() {
    // The first response record, in whichever flight it comes (with
    // False Start the server's Finished and its response may share one).
    let hooks = Hooks {
        server_to_prover: Some(Box::new(|_, b| {
            if let Some(r) = find_record(b, 23) {
                b[r.start + 12] ^= 0x20;
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert_eq!(e, Stop::Prover(Error::Decrypt { index: 0 }));
}

#[test]
fn server_alert_mid_handshake() {
    // An RSA certificate while only an ECDSA suite is offered: the server
    // refuses with handshake_failure.
    let c = certs(KeyKind::Rsa, &[NAME], false);
    let (p, hello, v) = sessions(
        42,
        prover_config(
            NAME,
            ECDHE_ECDSA_AES128_GCM_SHA256,
            GROUP_P256,
            true,
            REQUEST,
        ),
        verifier_config(&c.ca_der, NAME),
    );
    let e = run(p, hello, v, server(&c), RESPONSE, Hooks::default())
        .err()
        .unwrap();
    assert_eq!(
        e,
        Stop::Prover(Error::ServerAlert {
            level: 2,
            description: 40
        })
    );
}

#[test]
fn server_closes_mid_handshake() {
    let hooks = Hooks {
        close_after_flights: Some(1),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert_eq!(e, Stop::Prover(Error::ServerClosed));
}

/// The verifier side of an alert and a close mid-handshake: fed by a
/// prover that forwards them (a prover that did not would stall).
#[test]
fn verifier_ends_on_alert_and_close() {
    for alert in [true, false] {
        let c = certs(KeyKind::Ecdsa, &[NAME], false);
        let (mut p, hello, mut v) = sessions(
            43,
            prover_config(
                NAME,
                ECDHE_ECDSA_AES128_GCM_SHA256,
                GROUP_P256,
                true,
                REQUEST,
            ),
            verifier_config(&c.ca_der, NAME),
        );
        let out = preprocess(&mut p, &mut v, hello);
        for m in out.to_verifier {
            assert!(v.on_message(m).unwrap().is_empty());
        }
        let e = if alert {
            v.on_message(ProverMsg::FromServer(vec![21, 3, 3, 0, 2, 2, 80]))
        } else {
            v.on_message(ProverMsg::ServerClosed)
        }
        .unwrap_err();
        let want = if alert {
            Error::ServerAlert {
                level: 2,
                description: 80,
            }
        } else {
            Error::ServerClosed
        };
        assert_eq!(e, want);
        // The session stays over.
        assert!(v.on_message(ProverMsg::ToServer(vec![])).is_err());
    }
}

#[test]
fn altered_garbled_tables() {
    let hooks = Hooks {
        verifier_to_prover: Some(Box::new(|m| {
            if let VerifierMsg::Tables { circuit: 0, chunk } = m {
                // Every ciphertext of the first circuit's chunks (after
                // their 8-byte header): a single flipped row is used only
                // if the evaluator's colour bit selects it.
                for i in (8..chunk.len()).step_by(16) {
                    chunk[i] ^= 1;
                }
            }
        })),
        ..Hooks::default()
    };
    // The prover reads wrong values (decoding has no digests,
    // `webproof_mpc::output`); the step's revealed output comes back with
    // labels that are not the garbling's, and the verifier refuses them.
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(
        matches!(
            e,
            Stop::Verifier(Error::Mpc(webproof_mpc::Error::OutputCheck { .. }))
        ),
        "{e:?}"
    );
}

#[test]
fn forwarded_client_key_exchange_altered() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m| {
            if let ProverMsg::ToServer(b) = m {
                // Record header, handshake header, length: the key's
                // first byte after the SEC1 tag / the first u byte.
                if b.len() > 11 && b[0] == 22 && b[5] == 16 {
                    b[11] ^= 1;
                }
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(matches!(e, Stop::Verifier(Error::ClientRecord(_))), "{e:?}");
}

/// The verifier never takes request bytes: a prover that forwards a
/// request record (here in place of its `RecSent`) is refused, whatever
/// the bytes.
#[test]
fn forwarded_request_bytes_are_refused() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m| {
            if let ProverMsg::RecSent { .. } = m {
                *m = ProverMsg::ToServer(vec![23, 3, 3, 0, 25, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(matches!(e, Stop::Verifier(Error::ClientRecord(_))), "{e:?}");
}

/// The tag binds the masked ciphertext the verifier got: one bit of it
/// flipped on the way makes the verifier's tag share one for another
/// ciphertext, so the record the prover sends fails the server's check
/// and the session ends with the server's alert, nothing attested.
#[test]
fn masked_request_altered_fails_at_the_server() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m| {
            if let ProverMsg::RecCiphertext { id: 1, ct, .. } = m {
                ct[3] ^= 0x20;
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(
        matches!(
            e,
            Stop::Prover(Error::ServerAlert { .. } | Error::ServerClosed) | Stop::Server(_)
        ),
        "{e:?}"
    );
}

/// A prover that hides a response record at the close.
#[test]
fn close_with_a_wrong_record_count() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m| {
            if let ProverMsg::Close { received, .. } = m {
                *received -= 1;
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(matches!(e, Stop::Verifier(Error::Recording(_))), "{e:?}");
}

/// A wrong key-share opening.
#[test]
fn key_share_opening_altered() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m| {
            if let ProverMsg::KeyOpen { blind, .. } = m {
                blind[0] ^= 1;
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(matches!(e, Stop::Verifier(Error::Mpc(_))), "{e:?}");
}

#[test]
fn garbage_truncated_oversized_and_out_of_turn() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let fresh = || default_sessions(44, &c.ca_der);
    // Verifier: garbage, a truncated Hello, an oversized message, a step
    // before the Hello, a second Hello.
    let (_, hello, mut v) = fresh();
    assert!(matches!(
        v.on_bytes(b"\xffgarbage"),
        Err(Error::Malformed(_))
    ));
    let (_, hello2, mut v) = fresh();
    let b = hello2.encode();
    assert!(matches!(
        v.on_bytes(&b[..b.len() - 1]),
        Err(Error::Malformed(_))
    ));
    let (_, _, mut v) = fresh();
    assert!(matches!(
        v.on_bytes(&vec![2u8; MAX_MESSAGE + 1]),
        Err(Error::Oversized { .. })
    ));
    let (_, _, mut v) = fresh();
    assert!(matches!(
        v.on_message(ProverMsg::KdfFlips {
            step: 0,
            flips: vec![0; 32]
        }),
        Err(Error::Unexpected { .. })
    ));
    let (_, _, mut v) = fresh();
    v.on_message(hello.clone()).unwrap();
    assert!(v.on_message(hello.clone()).is_err());
    // A Hello with request records over the limits.
    let (_, _, mut v) = fresh();
    let terms = Terms {
        suite: ECDHE_ECDSA_AES128_GCM_SHA256,
        group: GROUP_P256,
        ems: true,
    };
    let big = ProverMsg::Hello {
        commit_p256: [0; 32],
        commit_x25519: [0; 32],
        request_lens: vec![4096],
        terms,
        dual_ot: [0; 32],
    };
    assert!(matches!(v.on_message(big), Err(Error::Malformed(_))));
    // A Hello with terms MPC mode does not run over TLS 1.2 (a TLS 1.3
    // suite, a group other than P-256 and X25519): refused before anything
    // is garbled.
    // A group code no TLS stack of the workspace knows (0x0018,
    // secp384r1) cannot be typed: it is refused with the Hello's bytes.
    let hello_with = |terms| ProverMsg::Hello {
        commit_p256: [0; 32],
        commit_x25519: [0; 32],
        request_lens: vec![64],
        terms,
        dual_ot: [0; 32],
    };
    let (_, _, mut v) = fresh();
    let tls13 = hello_with(Terms {
        suite: CipherSuite::TLS13_AES_128_GCM_SHA256,
        ..terms
    });
    assert!(matches!(v.on_message(tls13), Err(Error::Unsupported(_))));
    let mut b = hello_with(terms).encode();
    // The group's two bytes come before the EMS flag and `dual_ot`.
    let group_at = b.len() - 32 - 1 - 2;
    b[group_at..group_at + 2].copy_from_slice(&0x0018u16.to_be_bytes());
    let (_, _, mut v) = fresh();
    assert!(matches!(
        v.on_bytes(&b),
        Err(Error::Unsupported(why)) if why.contains("0x0018")
    ));
    // Server bytes that are not TLS.
    let (mut p, hello, mut v) = fresh();
    let first = answer(&mut v, hello).unwrap();
    let setup = first[0].clone();
    for m in first {
        let out = p.on_verifier(m).unwrap();
        for m in out.to_verifier {
            v.on_message(m).unwrap();
        }
    }
    assert!(matches!(
        v.on_message(ProverMsg::FromServer(
            b"HTTP/1.1 400 Bad Request\r\n".to_vec()
        )),
        Err(Error::Tls(_))
    ));
    assert!(matches!(
        p.on_server_bytes(b"SSH-2.0-OpenSSH\r\n"),
        Err(Error::Tls(_))
    ));

    // Prover: garbage, a truncated Setup, a message out of turn.
    let (mut p, _, _) = fresh();
    assert!(p.on_verifier_bytes(&[]).is_err());
    let (mut p, _, _) = fresh();
    let b = setup.encode();
    assert!(matches!(
        p.on_verifier_bytes(&b[..b.len() - 3]),
        Err(Error::Malformed(_))
    ));
    let (mut p, _, _) = fresh();
    assert!(matches!(
        p.on_verifier(VerifierMsg::EctfAnswer(vec![1, 2, 3])),
        Err(Error::Unexpected { .. })
    ));
    let (mut p, _, _) = fresh();
    assert!(matches!(
        p.on_verifier(VerifierMsg::Abort("no".into())),
        Err(Error::Aborted(_))
    ));
}

/// A verifier key share outside the prime-order subgroup (the identity).
#[test]
fn verifier_key_share_refused() {
    let hooks = Hooks {
        verifier_to_prover: Some(Box::new(|m| {
            if let VerifierMsg::Setup { q_x25519, .. } = m {
                *q_x25519 = [0; 32];
                q_x25519[0] = 1;
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(matches!(e, Stop::Prover(Error::Mpc(_))), "{e:?}");
}

/// A ClientHello forwarded with another client random than the
/// verifier's (a prover replaying a server flight signed earlier).
#[test]
fn client_hello_with_another_random() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m| {
            if let ProverMsg::ToServer(b) = m {
                if b.len() > 12 && b[0] == 22 && b[5] == 1 {
                    // Record header, handshake header, version: the random.
                    b[5 + 4 + 2] ^= 1;
                }
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert_eq!(
        e,
        Stop::Verifier(Error::ClientHello(
            "the client random is not the verifier's"
        ))
    );
}

/// Server bytes before any ClientHello, and a second ClientHello.
#[test]
fn verifier_refuses_records_out_of_place() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let fresh = || default_sessions(45, &c.ca_der);
    let (_, hello, mut v) = fresh();
    v.on_message(hello).unwrap();
    assert!(matches!(
        v.on_message(ProverMsg::FromServer(vec![22, 3, 3, 0, 1, 2])),
        Err(Error::Unexpected { .. })
    ));
    let (mut p, hello, mut v) = fresh();
    let out = preprocess(&mut p, &mut v, hello);
    let ch = out.to_server.clone();
    for m in out.to_verifier {
        v.on_message(m).unwrap();
    }
    assert!(matches!(
        v.on_message(ProverMsg::ToServer(ch)),
        Err(Error::ClientRecord(_))
    ));
}

/// A verifier answering a request record's last step before the client
/// Finished's (the first answer relabelled): the prover refuses to send
/// the request ahead of its Finished.
#[test]
fn record_answers_out_of_order_are_refused() {
    let mut swapped = false;
    let hooks = Hooks {
        verifier_to_prover: Some(Box::new(move |m| {
            if let VerifierMsg::RecTagShare { id, .. } = m {
                if *id == 0 && !swapped {
                    *id = 1;
                    swapped = true;
                }
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert_eq!(
        e,
        Stop::Prover(Error::OutOfOrder(
            "a record's tag before an earlier record's"
        ))
    );
}

/// A record's first step while the key derivation has not yet produced
/// the key shares (step 2's flips relabelled as the client Finished's
/// ciphertext and offsets): the verifier refuses it.
#[test]
fn record_before_the_key_shares_is_refused() {
    let hooks = Hooks {
        prover_to_verifier: Some(Box::new(|m| {
            if let ProverMsg::KdfFlips { step: 2, flips } = m {
                *m = ProverMsg::RecCiphertext {
                    id: 0,
                    ct: vec![0; 16],
                    offsets: flips.clone(),
                    labels: Vec::new(),
                };
            }
        })),
        ..Hooks::default()
    };
    let e = run_with(KeyKind::Ecdsa, &[NAME], false, NAME, hooks);
    assert!(
        matches!(e, Stop::Verifier(Error::Unexpected { .. })),
        "{e:?}"
    );
}

/// The garbled tables stream circuit by circuit, and the prover holds no
/// more than each circuit has: chunks of a later circuit first, a circuit's
/// chunks sent twice over, chunks past its tables, or a decoding out of
/// turn are refused before
/// the ClientHello; the verifier takes nothing from the prover but its
/// keystream garbling (dual execution) and an abort while its tables are
/// still going out.
#[test]
fn streamed_tables_in_order_and_bounded() {
    let c = certs(KeyKind::Ecdsa, &[NAME], false);
    let fresh = || default_sessions(47, &c.ca_der);
    let (mut p, hello, mut v) = fresh();
    let msgs = answer(&mut v, hello).unwrap();
    let chunks = |circuit: u8| -> Vec<VerifierMsg> {
        msgs.iter()
            .filter(|m| matches!(m, VerifierMsg::Tables { circuit: c, .. } if *c == circuit))
            .cloned()
            .collect()
    };
    let decoding = |circuit: u8| -> VerifierMsg {
        msgs.iter()
            .find(|m| matches!(m, VerifierMsg::Decoding { circuit: c, .. } if *c == circuit))
            .cloned()
            .unwrap()
    };
    assert!(chunks(0).len() > 1, "the first step's tables in one chunk");
    p.on_verifier(msgs[0].clone()).unwrap(); // Setup

    // The second circuit's chunk before the first's.
    let (mut p2, _, _) = fresh();
    p2.on_verifier(msgs[0].clone()).unwrap();
    assert_eq!(
        p2.on_verifier(chunks(1)[0].clone()).unwrap_err(),
        Error::Malformed("garbled tables out of order")
    );
    // A decoding out of turn.
    let (mut p3, _, _) = fresh();
    p3.on_verifier(msgs[0].clone()).unwrap();
    assert_eq!(
        p3.on_verifier(decoding(1)).unwrap_err(),
        Error::Malformed("garbled tables out of order")
    );
    // The first circuit's chunks, then all of them again: refused at the
    // first one sent again (its sequence number), not held.
    let first = chunks(0);
    for m in first.iter().cloned() {
        p.on_verifier(m).unwrap();
    }
    assert_eq!(
        p.on_verifier(first[0].clone()).unwrap_err(),
        Error::Mpc(webproof_mpc::Error::ChunkOrder {
            expected: first.len() as u32,
            got: 0
        })
    );
    // Well-framed chunks of one table each, in sequence, past the tables
    // the circuit has: refused once past them, not held.
    let (mut p5, _, _) = fresh();
    p5.on_verifier(msgs[0].clone()).unwrap();
    let one_table = |seq: u32| VerifierMsg::Tables {
        circuit: 0,
        chunk: [
            &seq.to_le_bytes()[..],
            &1u32.to_le_bytes(),
            &vec![0; webproof_mpc::tables_bytes(1)],
        ]
        .concat(),
    };
    let refused = (0..10_000_000)
        .map(|seq| p5.on_verifier(one_table(seq)))
        .find_map(Result::err);
    assert_eq!(
        refused,
        Some(Error::Malformed("more garbled tables than the circuit has"))
    );
    // Empty chunks: refused at once (no header).
    let (mut p4, _, _) = fresh();
    p4.on_verifier(msgs[0].clone()).unwrap();
    let empty = VerifierMsg::Tables {
        circuit: 0,
        chunk: Vec::new(),
    };
    let taken = (0..10_000_000)
        .take_while(|_| p4.on_verifier(empty.clone()).is_ok())
        .count();
    assert!(taken < 10_000_000, "empty chunks taken without end");

    // The verifier, its tables not all out: the prover's next message is
    // refused.
    let (_, hello, mut v) = fresh();
    v.on_message(hello).unwrap();
    assert!(matches!(
        v.next_tables(),
        Ok(Some(VerifierMsg::Tables { .. }))
    ));
    assert!(matches!(
        v.on_message(ProverMsg::ToServer(vec![22, 3, 3, 0, 1, 2])),
        Err(Error::Unexpected { .. })
    ));
}

/// Record schedules built off the session (`record_plan_jobs`) are taken
/// only by the session that asked for them, only before their record is
/// garbled: none before the `Hello`, one built for another request length
/// refused, and none asked for or taken once every circuit is out.
#[test]
fn record_schedules_only_for_the_session_that_asked() {
    let certs = certs(KeyKind::Ecdsa, &[NAME], false);
    let (_p, hello, mut v) = default_sessions(70, &certs.ca_der);
    assert!(v.record_plan_jobs().is_empty(), "no terms before the Hello");
    let long = [REQUEST, &[b'x'; 600][..]].concat();
    let (_q, other_hello, mut w) = sessions(
        71,
        prover_config(NAME, ECDHE_ECDSA_AES128_GCM_SHA256, GROUP_P256, true, &long),
        verifier_config(&certs.ca_der, NAME),
    );
    v.on_message(hello).unwrap();
    w.on_message(other_hello).unwrap();
    let ours = v.record_plan_jobs();
    let theirs = w.record_plan_jobs();
    assert!(!ours.is_empty() && !theirs.is_empty());
    let request_job = |jobs: &[webproof_mpc_tls::RecordPlanJob]| *jobs.last().unwrap();
    assert!(matches!(
        v.provide_record_plan(request_job(&theirs).build().unwrap()),
        Err(Error::OutOfOrder(_))
    ));
    for job in ours {
        v.provide_record_plan(job.build().unwrap()).unwrap();
    }
    assert!(v.record_plan_jobs().is_empty(), "every schedule given");
    while v.next_tables().unwrap().is_some() {}
    assert!(!v.wants_record_plan());
    let late = w.record_plan_jobs();
    assert!(matches!(
        v.provide_record_plan(request_job(&late).build().unwrap()),
        Err(Error::OutOfOrder(_))
    ));
}

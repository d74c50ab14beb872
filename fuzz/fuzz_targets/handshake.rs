//! The handshake parser: reassembly from fragments, then every message
//! parser on every message; also each parser on the raw input.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webproof_proxy::handshake::{self, msg_type, Reassembler};

fn parse_all(typ: u8, body: &[u8]) {
    match typ {
        msg_type::CLIENT_HELLO => drop(handshake::parse_client_hello(body)),
        msg_type::SERVER_HELLO => drop(handshake::parse_server_hello(body)),
        msg_type::CERTIFICATE => {
            drop(handshake::parse_certificate(body, true));
            drop(handshake::parse_certificate(body, false));
        }
        msg_type::CERTIFICATE_VERIFY => drop(handshake::parse_certificate_verify(body)),
        msg_type::SERVER_KEY_EXCHANGE => {
            if let Ok(ske) = handshake::parse_server_key_exchange(body) {
                // The signed params are a prefix of the body.
                assert!(body.starts_with(&ske.params));
                assert!(ske.params.ends_with(&ske.public));
            }
        }
        msg_type::CLIENT_KEY_EXCHANGE => drop(handshake::parse_client_key_exchange(body)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some((&typ, body)) = data.split_first() {
        parse_all(typ, body);
    }
    // Fragments: one length byte, then that many bytes.
    let mut r = Reassembler::default();
    let mut rest = data;
    while let Some((&n, tail)) = rest.split_first() {
        let n = (n as usize).min(tail.len());
        let (frag, tail) = tail.split_at(n);
        rest = tail;
        if r.push(frag).is_err() {
            return;
        }
        loop {
            match r.next_message() {
                Ok(Some(m)) => {
                    assert_eq!(m.typ, m.bytes[0]);
                    parse_all(m.typ, m.body());
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
});

//! Golden transcripts: the whole proof of a seeded session (base OT,
//! SoftSpokenOT, Ferret, QuickSilver: every byte either party sends), as
//! the number of bytes and the SHA-256 of each direction, pinned in
//! `tests/golden/transcripts.txt`. Every party's randomness is seeded, so
//! the bytes are a function of the code: a change to any message of the
//! proof's stack fails here (see `webproof_core::golden` for blessing an
//! intended one).

use crate::testing::{prove_over, tls12_session, tls13_session};
use crate::{Aead, SessionConfig};
use futures::{AsyncRead, AsyncWrite};
use sha2::{Digest, Sha256};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use webproof_core::memory::MemoryIo;

/// What one end wrote.
#[derive(Default)]
struct Written {
    bytes: u64,
    hash: Sha256,
}

/// A pipe end that hashes what it writes.
struct Tapped {
    io: MemoryIo,
    written: Arc<Mutex<Written>>,
}

impl AsyncRead for Tapped {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_read(cx, out)
    }
}

impl AsyncWrite for Tapped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            let mut w = self.written.lock().expect("tap lock");
            w.bytes += n as u64;
            w.hash.update(&buf[..n]);
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}

/// `name bytes sha256` for each direction of the production proof of
/// `session`, sized for its own statement.
fn transcript(name: &str, session: crate::testing::Session, expected_cots: u64) -> String {
    let (a, b) = webproof_core::memory_duplex();
    let (pw, vw) = (Arc::default(), Arc::default());
    let (p, v) = prove_over(
        Tapped {
            io: a,
            written: Arc::clone(&pw),
        },
        Tapped {
            io: b,
            written: Arc::clone(&vw),
        },
        &session.statement,
        &session.witness,
        SessionConfig::sized(expected_cots),
        11,
    );
    p.expect("the prover's proof");
    v.expect("the verifier's check");
    let line = |dir: &str, w: &Arc<Mutex<Written>>| {
        let w = w.lock().expect("tap lock");
        let digest: String = w
            .hash
            .clone()
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{name} {dir} {} {digest}\n", w.bytes)
    };
    line("prover->verifier", &pw) + &line("verifier->prover", &vw)
}

#[test]
fn proof_transcripts_are_pinned() {
    const REQUEST: &[u8] = b"GET /balance HTTP/1.1\r\nHost: bank.example\r\n\r\n";
    const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"amount\":42}";
    let mut out =
        String::from("# bytes and SHA-256 per direction of seeded proofs (src/golden.rs)\n");
    out += &transcript(
        "tls13-aes128gcm",
        tls13_session(Aead::Aes128Gcm, 5, &[REQUEST], &[RESPONSE]),
        crate::session::expected_cots(REQUEST.len(), RESPONSE.len(), Some(Aead::Aes128Gcm)),
    );
    out += &transcript(
        "tls12-chacha20",
        tls12_session(Aead::ChaCha20Poly1305, 6, &[REQUEST], &[RESPONSE]),
        crate::session::expected_cots(REQUEST.len(), RESPONSE.len(), Some(Aead::ChaCha20Poly1305)),
    );
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/transcripts.txt");
    webproof_core::golden::check(&path, &out);
}

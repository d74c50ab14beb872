//! MPC mode of webproof, without I/O: the prover talks to a real TLS 1.2
//! (or TLS 1.3: [`tls13`], not yet with the consistency proof in ZK)
//! server while every computation that depends on the session's secrets
//! runs in two-party computation with the verifier, so neither party
//! alone holds a write key while the session runs.
//!
//! The generic 2PC is `webproof_mpc`'s (garbled circuits, label transfer,
//! OLE, share conversions, the consistency proof); the TLS parsing and the
//! server-identity checks are the ones both modes share (`webproof_tls`).
//! This crate owns each TLS step in 2PC, in a folder named for the step,
//! and the sessions that chain them around a real handshake:
//!
//! - [`prover`]: [`ProverSession`], the TLS client's wire side (it writes
//!   the ClientHello, moves the server's bytes) and the evaluator's half of
//!   every 2PC step;
//! - [`verifier`]: [`VerifierSession`], the garbler; it checks the server's
//!   certificate chain, name, validity and ServerKeyExchange signature on
//!   the flight it received itself and records every record both ways
//!   (its module docs list where each public value comes from);
//! - [`msg`]: the messages between them and their encodings;
//! - [`hello`]: the ClientHello, ClientKeyExchange and Finished messages,
//!   the suites and groups;
//! - [`keyx`]: the key exchange: the key shares with their commitment
//!   ([`keyx::keyshare`]) and the ECtF ([`keyx::ectf`]) for P-256 and
//!   X25519;
//! - [`kdf`]: key derivation and both Finished in 2PC: the TLS 1.2 PRF
//!   ([`kdf::tls12`]), the reduced PRF for the SHA-256 suites
//!   ([`kdf::reduced`]), the TLS 1.3 key schedule ([`kdf::tls13`]);
//! - [`rec`]: the records run in 2PC (both Finished, the request) and
//!   each suite's record layout: AES-GCM ([`rec::gcm`]),
//!   ChaCha20-Poly1305 ([`rec::chacha`]: `docs/protocol/mpc-chacha.md`),
//!   and the request's keystream under dual execution ([`rec::dual`]);
//! - [`response`]: the verified response, a sealed proof after the
//!   session that the recorded server records decrypt, under the key the
//!   2PC derived, to the byte ranges the prover reveals;
//! - [`output`]: the verifier's output in proxy mode's shape
//!   ([`webproof_disclosure::VerifierOutput`]), every field from its own
//!   recording and checks;
//! - [`consist`]: what the sessions retain of every garbled circuit and
//!   OLE batch, and the consistency proof and audit run inside the proof
//!   of the response;
//! - [`cots`]: the correlated OTs the caller supplies;
//! - [`tls13`]: the sessions over TLS 1.3 (the AES-GCM suites): the
//!   handshake, the request in 2PC, the response and a sealed proof of it
//!   with the prover's audit, the verifier's output and attestation;
//!   their own
//!   flight table is in `docs/protocol/mpc-tls13.md`; the rest of these
//!   docs (the table below included) is TLS 1.2's;
//! - [`error`]: the one error type.
//!
//! # The session, flight by flight
//! | # | prover → verifier | verifier → prover | prover ↔ server |
//! |---|---|---|---|
//! | 1 | `Hello` (key-share commitments, request record lengths, the [`hello::Terms`]) | `Setup` (client random, its key shares), then per circuit its `Tables` chunks and its `Decoding` (with the labels of its inputs known ahead: its masks, the explicit nonces), streamed as garbled ([`VerifierSession::next_tables`]), and after the last circuit `RecPowers`: per request record the M2A of its hidden ciphertext (one OLE per block, answered ahead, `crate::rec::gcm`'s "Hidden ciphertext"), then the M2A of the powers of the client's GHASH key, answered ahead for the client Finished, which computes it (every client record's tag takes them) | |
//! | 2 | `ToServer` (ClientHello) | | ClientHello → |
//! | 3 | `FromServer` (the server's flight), then `KeyOpen` (opening, the ECtF's flips) | `EctfAnswer` | ← ServerHello … ServerHelloDone |
//! | 4 | `EctfCorrection` (the ECtF's last message, no answer) with step 0's `KdfFlips` in one flight | | |
//! | 5 | `KdfFlips` / `KdfLabels` per step | `KdfInputs` per step, and right after steps 2 and 5 the next step's `KdfAdvance` (its inputs fixed a step early, sent while the prover evaluates) | |
//! | 6 | `RecCiphertext` of the client Finished (the ciphertext and the offsets of the GHASH key's odd powers) and of every request record (its ciphertext masked by the prover's COT choice bits: the verifier never sees the request's ciphertext), side by side, as soon as the key derivation output the key shares: each record's circuit takes the prover's key ‖ IV share as the labels it evaluated there (chained, no input round trip), the verifier's inputs came with the tables, and the client Finished's outputs the prover's multiplicative share of the GHASH key (the A2M in the circuit; the request's records compute no `H` of their own) | `RecTagShare` per record (a request record's with the corrections of its hidden M2A) | |
//! | 7 | `ToServer` (ClientKeyExchange, CCS, Finished), then `RecSent` per request record (False Start: without waiting for the server's Finished; the record itself goes to the server only, and both recordings hold its header and nonce) | | → Finished, request |
//! | 8 | `FromServer` (the server Finished record, recorded; its contents are checked in the proof) | | ← CCS, Finished |
//! | 9 | `FromServer` (the response, recorded as received), `Close` | `CloseAck` (its server-key share) | ← response |
//! | 10 | the claim, then at once the sealed proof ([`response`], [`consist`]) | its input bits and OLE inputs (right after `CloseAck`, unasked), its answer to the claim (read at the prover's next receive), then the `Δ` reveal | |
//!
//! Flight 1 is preprocessing: the verifier garbles the key derivation and
//! every record for the terms the prover named (suite family, group, EMS
//! offer) before the prover opens the server connection, so the tables
//! (~6.2 MB for the key derivation of AES-128-GCM-SHA256, ~0.105 MB per
//! 16 bytes of request: 4,256 AND, the counter blocks sharing their first
//! rounds' work) never keep a server waiting, and so do the OLE
//! answers that need no session input (2 KiB per odd power of the
//! client's GHASH key, once per session; the even powers' shares are
//! squares); the server
//! connection carries only the input labels of what the session
//! decides (the prover's inputs, the inner digests' public schedules,
//! the premaster share: the verifier's masks and the explicit nonces
//! went with the tables), the ECtF's OLEs, 16 bytes per odd
//! power and a few hundred bytes per step (about 0.32 MB in all for a
//! 1 KB request, `table_bytes_figures`; the prover's later inputs are
//! chained to the outputs they come from, so they cost nothing online). Meanwhile the prover builds the same circuits' schedules
//! ([`ProverSession::prepare`]), so no circuit is built online either.
//! The key derivation's schedules depend on nothing of a session: each
//! process builds them once and shares them ([`warm_plans`]; a verifier
//! service does so at start). A record's depend on its key and plaintext
//! lengths alone: a process keeps its recent ones (32 MiB of them, least
//! recently used out first), so a service that meets a request shape again
//! does not build its circuit again (about 44% of a verifier's CPU in an
//! MPC session with a 1 KB request when it did).
//!
//! The caller supplies the COTs ([`CotPool`], [`cots_needed`]), moves the
//! messages and the server's bytes, and decides when the response is
//! complete. Both sessions end in an outcome ([`VerifierOutcome`],
//! [`ProverOutcome`]) holding the recording and the labels the proof of
//! the response needs; [`prove_response`] / [`verify_response`] run that
//! proof over a [`webproof_core::Channel`] with the session's COT
//! correlation (the engine is async over the channel, as proxy mode's
//! proofs are; the driver owns the transport) and leave the verifier with
//! a [`VerifiedResponse`]: the revealed ranges at their offsets in the
//! response, every public value taken from its own recording.
//!
//! # Security (as far as this layer goes)
//! The 2PC is `webproof_mpc`'s semi-honest garbling, made maliciously
//! secure after the fact by garble-then-prove: both sessions retain every
//! garbled circuit (labels and digests, [`ProverRetained`],
//! [`VerifierRetained`]) and every OLE batch, and [`prove_response`] /
//! [`verify_response`] run, inside the sealed proof of the response, the
//! consistency proof (every key-derivation and record circuit's labels
//! imported as authenticated bits, the equalities between steps), then the
//! prover's audit of the garbling and
//! of the OLE answers after the `Δ` reveal and before it opens. What the
//! sessions enforce themselves: the server's identity over a client
//! random the verifier chose, the client key share as the sum of
//! committed shares, every forwarded client record equal to what the 2PC
//! produced (the request's records are never forwarded), the server Finished recorded before `Close` (its tag and its
//! `verify_data` are asserted in the proof under the server key the key
//! derivation output, [`consist::FinishedCheck`]; the prover checks both
//! in the clear first: the tag once the server key is revealed, the
//! `verify_data` then under the full PRF and once the verifier's inputs
//! are revealed under the reduced PRF), the recording complete before
//! the server key is revealed, and the client key's share revealed only
//! after `Close`, when no record it could make counts any more.
//!
//! # Not yet here
//! - The tie between the ECtF's output and the key derivation's input
//!   (see [`response`]'s "Not in this proof yet"). The verifier's
//!   revealed inputs are checked against what the protocol makes them
//!   ([`ProverRetained::check_inputs`]), and the request's ciphertext is
//!   kept from it during the session (protocol version 24), so a garbling
//!   that leaks is caught by the audit before it learns more than one bit
//!   per session by selective failure.
//! - Tables in memory bounded by less than the session: the verifier
//!   holds one chunk at a time, but the prover holds every circuit's
//!   tables from preprocessing until its step (about 13.5 MB for a 1 KB request
//!   with AES-128-GCM-SHA256; the test `table_bytes_figures` prints it).
//! - Fewer round trips: each of the seven key-derivation steps of the
//!   reduced PRF is one round trip (the labels of a step ride with the
//!   next step's flips); the records run side by side (two round trips
//!   for the client Finished and the whole request, after the key
//!   derivation's last step). The server Finished's record runs in no
//!   2PC at all: it is checked in the proof, like the response.
//!
//! No sockets, threads, clocks or unsafe code: the crate builds for
//! `wasm32-unknown-unknown`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod consist;
pub mod cots;
pub mod error;
pub mod hello;
pub mod kdf;
pub mod keyx;
pub mod msg;
pub mod output;
pub mod prover;
pub mod rec;
pub mod response;
pub mod tls13;
pub mod verifier;

pub use consist::{ProverRetained, VerifierRetained};
pub use cots::{cots_needed, CotPool};
pub use error::{Error, Result};
pub use kdf::{warm_plans, KeyLabels};
pub use msg::{ProverMsg, VerifierMsg};
pub use output::{attestation, verifier_output};
pub use prover::{ProverConfig, ProverOutcome, ProverOutput, ProverSession};
pub use rec::HiddenRecord;
pub use response::{prove_response, verify_response, ClaimShape, ResponseClaim, VerifiedResponse};
pub use verifier::{RecordPlan, RecordPlanJob, VerifierConfig, VerifierOutcome, VerifierSession};

//! `webproof keygen | verify`: verifier keys and offline checking of
//! presentations. Thin: parse, call `webproof-attestation`, print.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use webproof_attestation::keyfile;
use webproof_attestation::{
    escape_revealed, verify_presentation, OrderSpan, ProofMode, RedactedTranscript, Scheme,
    SessionFacts, VerifiedPresentation, VerifyingKey,
};

#[derive(Subcommand)]
pub enum AttestationCmd {
    /// Generate a verifier signing key: the secret goes to a new file (mode
    /// 0600), the public key to FILE.pub and the terminal.
    Keygen(KeygenArgs),
    /// Check a presentation (JSON or binary) offline and print what it proves.
    Verify(VerifyArgs),
    /// Build a presentation from an attestation bundle (`prove --attest`),
    /// revealing only the chosen parts.
    Present(PresentArgs),
}

#[derive(Args)]
pub struct PresentArgs {
    /// The attestation bundle written by `webproof prove --attest FILE`.
    pub bundle: PathBuf,
    /// What to reveal (the items of `prove --reveal`: header:NAME,
    /// json:PATH, body, recv:A-B, sent:A-B, ...; `none` proves only the
    /// session). Repeatable. A presentation reveals whole committed leaves:
    /// unless the attestation was made with `prove --commit-at ITEM` for
    /// these items, the leaves reveal more than asked, and the presentation
    /// is refused (see --allow-wider-reveal).
    #[arg(long, value_name = "ITEM", default_value = "none", value_parser = super::proxy::parse_reveal)]
    pub reveal: Vec<webproof_disclosure::http::RevealItem>,
    /// Write the presentation even when its leaves reveal more bytes than
    /// the --reveal items select (neighbouring bytes of the same leaves).
    #[arg(long)]
    pub allow_wider_reveal: bool,
    /// Treat request header NAME as a credential, as `prove
    /// --secret-header` does: --reveal all leaves its value out (or is
    /// refused, see --yes-reveal-secrets). Repeatable.
    #[arg(long = "secret-header", value_name = "NAME")]
    pub secret_headers: Vec<String>,
    /// Let --reveal all (or a sent:A-B range) reveal the values of the
    /// request's secret headers (as `prove --yes-reveal-secrets`).
    #[arg(long)]
    pub yes_reveal_secrets: bool,
    /// Include the server's certificate chain.
    #[arg(long)]
    pub with_certificates: bool,
    /// Output file.
    #[arg(short = 'o', long = "output", default_value = "presentation.json")]
    pub output: PathBuf,
    /// Write the binary encoding instead of JSON.
    #[arg(long)]
    pub binary: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum SchemeArg {
    /// ECDSA on secp256k1, checkable by EVM contracts (ecrecover).
    Secp256k1,
    /// Ed25519.
    Ed25519,
}

#[derive(Args)]
pub struct KeygenArgs {
    /// Signature scheme.
    #[arg(long, value_enum, default_value = "secp256k1")]
    pub scheme: SchemeArg,
    /// Secret key file to create (never overwritten).
    #[arg(short = 'o', long = "output", default_value = "webproof-verifier.key")]
    pub output: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// Presentation file (JSON or binary); `-` reads standard input.
    pub presentation: PathBuf,
    /// A trusted verifier public key (`secp256k1:HEX`, `ed25519:HEX`, bare
    /// hex) or a file of them, one per line. Repeatable.
    #[arg(
        long = "trusted-key",
        value_name = "KEY|FILE",
        env = "WEBPROOF_TRUSTED_KEYS",
        value_delimiter = ',',
        required = true
    )]
    pub trusted_keys: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(cmd: AttestationCmd) -> anyhow::Result<()> {
    match cmd {
        AttestationCmd::Keygen(a) => keygen(a),
        AttestationCmd::Verify(a) => verify(a),
        AttestationCmd::Present(a) => present(a),
    }
}

fn present(args: PresentArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.bundle)
        .with_context(|| format!("reading {}", args.bundle.display()))?;
    let bundle = webproof_disclosure::attest::AttestationBundle::from_json(&text)?;
    let mut reveal = args.reveal.clone();
    reveal.extend(args.secret_headers.iter().map(|n| {
        webproof_disclosure::http::RevealItem::SecretHeader(n.trim().to_ascii_lowercase())
    }));
    if !args.yes_reveal_secrets {
        let secrets =
            webproof_disclosure::http::unasked_secrets(&reveal, bundle.transcript.sent())?;
        if !secrets.is_empty() {
            let what: Vec<&str> = secrets.iter().map(|s| s.what.as_str()).collect();
            return Err(crate::failure::usage(anyhow::anyhow!(
                "this presentation would show the request's {}: reveal less, or pass \
                 --yes-reveal-secrets",
                what.join(", ")
            )));
        }
    }
    let presented = bundle.present(&reveal, args.with_certificates)?;
    let (asked, revealed) = (presented.asked_len(), presented.revealed_len());
    if revealed > asked && !args.allow_wider_reveal {
        let items: Vec<String> = args.reveal.iter().map(|i| i.to_string()).collect();
        let commit: Vec<String> = args
            .reveal
            .iter()
            .map(|i| format!("--commit-at {i}"))
            .collect();
        return Err(crate::failure::usage(anyhow::anyhow!(
            "asked for {} ({asked} B), the attestation's leaves would reveal {revealed} B: \
             prove with {} for an exact fit, or pass --allow-wider-reveal",
            items.join(", "),
            commit.join(" ")
        )));
    }
    let p = &presented.presentation;
    let bytes = if args.binary {
        p.to_bytes()
    } else {
        p.to_json().into_bytes()
    };
    std::fs::write(&args.output, bytes)
        .with_context(|| format!("writing {}", args.output.display()))?;
    let a = bundle.attestation.attestation();
    outln!(
        "presentation of {} at {} written to {}",
        a.server_name(),
        crate::utc::rfc3339(a.time()),
        args.output.display()
    );
    for (dir, r) in &presented.revealed {
        outln!("  reveals {dir} bytes {}..{}", r.start, r.end);
    }
    if revealed > asked {
        outln!("  ({revealed} B revealed for {asked} B asked: whole leaves)");
    }
    outln!(
        "  verify with: webproof verify {} --trusted-key {}:{}",
        args.output.display(),
        bundle.verifying_key.scheme().name(),
        bundle
            .verifying_key
            .to_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    Ok(())
}

fn keygen(args: KeygenArgs) -> anyhow::Result<()> {
    let scheme = match args.scheme {
        SchemeArg::Secp256k1 => Scheme::Secp256k1,
        SchemeArg::Ed25519 => Scheme::Ed25519,
    };
    let key = keyfile::generate_signing_key(scheme);
    let public = key.verifying_key();
    let mut pub_path = args.output.clone().into_os_string();
    pub_path.push(".pub");
    let pub_path = PathBuf::from(pub_path);
    if pub_path.exists() {
        bail!("{} already exists; not overwriting", pub_path.display());
    }
    keyfile::write_signing_key(&args.output, &key)?;
    std::fs::write(&pub_path, format!("{public}\n"))
        .with_context(|| format!("writing {}", pub_path.display()))?;
    if args.json {
        let out = serde_json::json!({
            "scheme": scheme.name(),
            "public_key": public.to_string(),
            "key_id": public.key_id().to_string(),
            "ethereum_address": public.ethereum_address(),
            "secret_key_file": args.output,
            "public_key_file": pub_path,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!(
            "secret key   {} (mode 0600; keep it private)",
            args.output.display()
        );
        outln!("public key   {public}");
        outln!("key id       {}", public.key_id());
        if let Some(addr) = public.ethereum_address() {
            outln!("eth address  {addr}");
        }
        outln!("written to   {}", pub_path.display());
    }
    Ok(())
}

/// A key given inline, or a file holding keys one per line (`#` comments).
fn load_trusted_keys(specs: &[String]) -> anyhow::Result<Vec<VerifyingKey>> {
    let mut keys = Vec::new();
    for (i, spec) in specs
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .enumerate()
    {
        let path = Path::new(spec);
        if path.is_file() {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {spec}"))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                keys.push(line.parse().with_context(|| format!("{spec}:{}", n + 1))?);
            }
        } else {
            // Never echo the argument: it may be a secret key pasted by mistake.
            let key = spec
                .parse()
                .with_context(|| format!("trusted key #{} (not a file either)", i + 1))?;
            keys.push(key);
        }
    }
    if keys.is_empty() {
        bail!("no trusted key given");
    }
    Ok(keys)
}

fn verify(args: VerifyArgs) -> anyhow::Result<()> {
    let trusted = load_trusted_keys(&args.trusted_keys)?;
    let bytes = if args.presentation.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut buf)?;
        buf
    } else {
        std::fs::read(&args.presentation)
            .with_context(|| format!("reading {}", args.presentation.display()))?
    };
    let verified = verify_presentation(&bytes, &trusted).context("presentation rejected")?;
    if args.json {
        let mut value = verified.to_json_value();
        value["time_utc"] = crate::utc::rfc3339(verified.time).into();
        let exchanges = exchanges(&verified);
        if exchanges.len() > 1 {
            value["exchanges"] = serde_json::json!(exchanges);
        }
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print_table(&verified);
    }
    Ok(())
}

const HIDDEN: char = '█';

/// The session's exchanges as the presentation's revealed bytes and
/// signed order split them ([`webproof_disclosure::exchange::exchanges`]).
fn exchanges(v: &VerifiedPresentation) -> Vec<webproof_disclosure::exchange::Exchange> {
    let view = |t: &webproof_attestation::RedactedTranscript| -> Vec<Option<u8>> {
        let mut out = vec![None; t.len() as usize];
        for (r, d) in t.revealed() {
            out[r.start as usize..r.end as usize]
                .iter_mut()
                .zip(d)
                .for_each(|(slot, b)| *slot = Some(*b));
        }
        out
    };
    let free: Vec<webproof_disclosure::disclosure::Range> = v
        .facts
        .sent_crlf_free
        .iter()
        .map(|r| webproof_disclosure::disclosure::Range::new(r.start as usize, r.end as usize))
        .collect();
    webproof_disclosure::exchange::exchanges(
        &view(&v.sent),
        &view(&v.received),
        &v.facts.order,
        &free,
    )
}

fn print_table(v: &VerifiedPresentation) {
    let end = v.facts.ending();
    if end.may_be_truncated() {
        // Not "verified" plain: what is shown may not be all the server said.
        outln!("Presentation verified, but the response may be TRUNCATED ({end}).");
    } else {
        outln!("Presentation verified.");
    }
    outln!("  server         {}", v.server_name);
    outln!(
        "  time           {} ({})",
        crate::utc::rfc3339(v.time),
        v.time
    );
    outln!("  TLS            {}, {}", v.tls_version, v.cipher_suite);
    outln!("  verifier key   {}", v.verifier_key);
    outln!("  key id         {}", v.key_id());
    if let Some(addr) = v.verifier_key.ethereum_address() {
        outln!("  eth address    {addr}");
    }
    match &v.server_identity {
        Some(id) => outln!(
            "  certificates   {} (match the attested handshake hash)",
            id.cert_chain().len()
        ),
        None => outln!("  certificates   not included"),
    }
    for (name, t) in [("sent", &v.sent), ("received", &v.received)] {
        outln!(
            "  {name:<14} {} bytes, {} revealed, {} hidden",
            t.len(),
            t.revealed_len(),
            t.len() - t.revealed_len()
        );
    }
    for line in facts_lines(&v.facts) {
        outln!("  {line}");
    }
    outln!(
        "\nHidden bytes are shown as {HIDDEN}, long hidden runs as {HIDDEN}\\[N hidden bytes]{HIDDEN}. \
         In revealed text every backslash starts an escape: \\\\ is a backslash, \\u{{2588}} \
         a revealed {HIDDEN}, \\xNN a control byte."
    );
    let exchanges = exchanges(v);
    if exchanges.len() > 1 {
        outln!();
        super::proxy::print_exchanges(&exchanges);
    }
    for (name, t) in [("sent", &v.sent), ("received", &v.received)] {
        outln!("\n--- {name} ---");
        outln!("{}", for_terminal(t));
    }
}

/// Most order spans the table prints.
const MAX_ORDER_SHOWN: usize = 64;

/// The session facts as table rows.
fn facts_lines(f: &SessionFacts) -> Vec<String> {
    let port = match f.server_port {
        0 => "not recorded".to_string(),
        p => p.to_string(),
    };
    let close_notify = match f.server_close_notify {
        Some(true) => "yes (the server closed the TLS session)",
        Some(false) => "no (the server may have had more to send)",
        None => "not established (the verifier did not see the server's closing alert)",
    };
    let after_cut = match f.server_records_after_cut {
        Some(n) => {
            format!("{n} server records relayed after the prover's cut (not in the transcript)")
        }
        None => "not established (the verifier saw only what the prover forwarded)".into(),
    };
    let order = match f.mode {
        ProofMode::Proxy => order_text(&f.order),
        ProofMode::Mpc => format!("{} (as the prover reported it)", order_text(&f.order)),
    };
    vec![
        format!("{:<14} {}", "mode", f.mode),
        format!("{:<14} {port}", "server port"),
        format!("{:<14} {close_notify}", "close_notify"),
        format!("{:<14} {after_cut}", "after cut"),
        format!("{:<14} {}", "response", f.response_complete),
        format!("{:<14} {}", "response end", f.ending()),
        format!("{:<14} {order}", "order"),
    ]
}

/// `sent 0..120, received 0..2048, sent 120..240`.
fn order_text(order: &[OrderSpan]) -> String {
    if order.is_empty() {
        return "no application data".into();
    }
    let mut text = order
        .iter()
        .take(MAX_ORDER_SHOWN)
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if order.len() > MAX_ORDER_SHOWN {
        text.push_str(&format!(
            ", ... ({} more spans, see --json)",
            order.len() - MAX_ORDER_SHOWN
        ));
    }
    text
}

/// Marked text that is safe to print and cannot be spoofed by revealed
/// bytes: revealed text escaped (`\\` for a backslash, `\u{2588}` for a
/// revealed `█`, `\xNN` for control characters; CRLF and LF shown as a line
/// break, tab kept), hidden bytes drawn as `█`, long hidden runs summarised
/// as `█\[N hidden bytes]█` (a revealed `[` is never preceded by an
/// unescaped backslash, so the summary cannot be imitated either).
fn for_terminal(t: &RedactedTranscript) -> String {
    const MAX_MARKERS: u32 = 256;
    let mut out = String::new();
    for seg in t.segments() {
        match seg.data {
            Some(d) => {
                let text = escape_revealed(d, HIDDEN);
                let mut chars = text.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '\r' if chars.peek() == Some(&'\n') => {}
                        '\n' | '\t' => out.push(c),
                        c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                        c => out.push(c),
                    }
                }
            }
            None if seg.range.len() as u32 <= MAX_MARKERS => {
                out.extend(std::iter::repeat_n(HIDDEN, seg.range.len()))
            }
            None => out.push_str(&format!(
                "{HIDDEN}\\[{} hidden bytes]{HIDDEN}",
                seg.range.len()
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{facts_lines, for_terminal, order_text, HIDDEN};
    use webproof_attestation::{
        Attestation, AttestationFields, CipherSuite, CommitPlan, CommitmentSeed, Completeness,
        Direction, OrderSpan, PresentationBuilder, ProofMode, Scheme, SessionFacts, SigningKey,
        Transcript, TranscriptCommitment, VerifiedPresentation,
    };

    /// A verified presentation of `received` with `hidden` (a range of it)
    /// not revealed.
    fn verified(received: &[u8], hidden: std::ops::Range<usize>) -> VerifiedPresentation {
        let mut rng = rand::rngs::OsRng;
        let sent = b"GET / HTTP/1.1\r\n\r\n".to_vec();
        let t = Transcript::new(sent.clone(), received.to_vec());
        let plan = CommitPlan::new().range(Direction::Received, hidden.clone());
        let c = TranscriptCommitment::new(&t, &plan, CommitmentSeed::generate(&mut rng)).unwrap();
        let key = SigningKey::generate(Scheme::Ed25519, &mut rng);
        let facts = SessionFacts {
            mode: ProofMode::Proxy,
            server_port: 8443,
            server_close_notify: Some(false),
            server_records_after_cut: Some(2),
            response_complete: Completeness::Truncated,
            order: vec![
                OrderSpan {
                    direction: Direction::Sent,
                    start: 0,
                    end: 10,
                },
                OrderSpan {
                    direction: Direction::Received,
                    start: 0,
                    end: received.len() as u32,
                },
                OrderSpan {
                    direction: Direction::Sent,
                    start: 10,
                    end: sent.len() as u32,
                },
            ],
            sent_crlf_free: Vec::new(),
        };
        let att = Attestation::sign(
            AttestationFields::for_commitment(
                "x.example",
                0,
                CipherSuite::TLS13_AES_128_GCM_SHA256,
                &c,
                [0; 32],
                facts,
            ),
            &key,
        )
        .unwrap();
        let mut b = PresentationBuilder::new(&att, &t, &c).unwrap();
        b.reveal_all(Direction::Sent);
        if hidden.start > 0 {
            b.reveal(Direction::Received, 0..hidden.start).unwrap();
        }
        if hidden.end < received.len() {
            b.reveal(Direction::Received, hidden.end..received.len())
                .unwrap();
        }
        b.build().verify(&[key.verifying_key()]).unwrap()
    }

    /// Revealed `█`, `[3 hidden bytes]` and backslashes cannot pass for
    /// hidden bytes or for a summary of a long hidden run.
    #[test]
    fn revealed_text_cannot_imitate_hidden_bytes() {
        let text = "a\u{2588}[3 hidden bytes]\\x01[300 hidden bytes]\u{1}SECRET!\r\nz";
        let secret = text.find("SECRET").unwrap();
        let v = verified(text.as_bytes(), secret..secret + 6);
        let shown = for_terminal(&v.received);
        assert_eq!(
            shown,
            "a\\u{2588}[3 hidden bytes]\\\\x01[300 hidden bytes]\\x01██████!\nz"
        );
        // Only the six hidden bytes are blocks.
        assert_eq!(shown.matches(HIDDEN).count(), 6);

        // A long hidden run is summarised with an escape that revealed text
        // cannot produce.
        let long = format!("[300 hidden bytes]{}[300 hidden bytes]", "s".repeat(300));
        let v = verified(long.as_bytes(), 18..318);
        assert_eq!(
            for_terminal(&v.received),
            "[300 hidden bytes]█\\[300 hidden bytes]█[300 hidden bytes]"
        );
    }

    #[test]
    fn facts_are_shown() {
        let v = verified(b"HTTP/1.1 200 OK\r\n\r\nsecret", 19..25);
        let lines = facts_lines(&v.facts).join("\n");
        assert!(lines.contains("server port    8443"), "{lines}");
        assert!(lines.contains("close_notify   no"), "{lines}");
        assert!(lines.contains("after cut      2 server records"), "{lines}");
        assert!(lines.contains("response       truncated"), "{lines}");
        assert!(
            lines.contains("order          sent 0..10, received 0..25, sent 10..18"),
            "{lines}"
        );
        assert_eq!(order_text(&[]), "no application data");
        let many: Vec<OrderSpan> = (0..100)
            .map(|i| OrderSpan {
                direction: if i % 2 == 0 {
                    Direction::Sent
                } else {
                    Direction::Received
                },
                start: i / 2,
                end: i / 2 + 1,
            })
            .collect();
        assert!(order_text(&many).ends_with("(36 more spans, see --json)"));
        let json = v.to_json_value();
        assert_eq!(json["facts"]["server_port"], 8443);
        assert_eq!(json["facts"]["order"][2]["start"], 10);
        assert!(lines.contains("mode           proxy mode"), "{lines}");
        assert!(lines.contains("response end   TRUNCATED"), "{lines}");
    }

    /// MPC mode's facts: the mode is named, what the verifier did not
    /// establish reads as such, and the response as possibly truncated.
    #[test]
    fn mpc_facts_are_shown_as_not_established() {
        let mut v = verified(b"HTTP/1.1 200 OK\r\n\r\nsecret", 19..25);
        v.facts.mode = ProofMode::Mpc;
        v.facts.server_port = 0;
        v.facts.server_close_notify = None;
        v.facts.server_records_after_cut = None;
        v.facts.response_complete = webproof_attestation::Completeness::Unknown;
        let lines = facts_lines(&v.facts).join("\n");
        assert!(lines.contains("mode           MPC mode"), "{lines}");
        assert!(lines.contains("server port    not recorded"), "{lines}");
        assert!(lines.contains("close_notify   not established"), "{lines}");
        assert!(lines.contains("after cut      not established"), "{lines}");
        assert!(
            lines.contains("response end   POSSIBLY TRUNCATED"),
            "{lines}"
        );
        assert!(lines.contains("(as the prover reported it)"), "{lines}");
    }
}

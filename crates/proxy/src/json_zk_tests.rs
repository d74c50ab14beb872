//! JSON claims through the real QuickSilver proof: the byte classes catch
//! what the walk of `webproof_disclosure::json` cannot see. Here, not in
//! the disclosure crate, because they need a proxy-mode session and
//! proof plan.

use crate::disclosure::{Disclosure, Range};
use crate::error::{malformed, Result};
use crate::json::{
    claims_from_items, message_bodies, verify_claims, walk, JsonClaim, VerifiedJson,
};
use crate::record::Direction;
use crate::suite::CipherSuite;
use crate::tags::tests::session;
use crate::zk;
use futures::executor::block_on;
use rand::SeedableRng;
use webproof_core::cot::ideal;
use webproof_core::{memory_duplex, Channel};
use webproof_tlsproof as tp;

const REQ: &[u8] = b"GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n";

fn head(len: usize) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n").into_bytes()
}

/// Prove `received` (split into records at `split`) with `revealed`
/// ranges of it and `claims`, and run the verifier's checks.
fn prove(
    suite: CipherSuite,
    received: &[u8],
    split: usize,
    revealed: Vec<Range>,
    claims: Vec<JsonClaim>,
) -> Result<Vec<VerifiedJson>> {
    let s = session(suite, &[REQ], &[&received[..split], &received[split..]]);
    let opened = s.statement.evaluate(&s.witness).unwrap();
    let disclosure = Disclosure {
        sent: vec![Range::new(0, REQ.len())],
        received: revealed,
    };
    let mut plan = zk::plan(&s.statement, &opened, &disclosure, &s.witness).unwrap();
    plan.json = claims;
    let st = zk::zk_statement(&s.statement, &plan)?;
    let w = zk::witness(&s.witness);
    let (a, b) = memory_duplex();
    let (cot_s, cot_r) = ideal::pair(9);
    let cfg = webproof_zk::Config::default();
    let (_, v) = block_on(async {
        let prover = async {
            let mut p = webproof_zk::Prover::new(cot_r, Channel::new(a), cfg).await?;
            let out = tp::run(&mut p, &st, Some(&w)).await;
            drop(p);
            out
        };
        let verifier = async {
            let mut rng = rand::rngs::StdRng::seed_from_u64(3);
            let mut v = webproof_zk::Verifier::new(cot_s, Channel::new(b), cfg, &mut rng).await?;
            let out = tp::run(&mut v, &st, None).await;
            drop(v);
            out
        };
        futures::join!(prover, verifier)
    });
    let proven = v.map_err(|e| malformed("JSON claim", format!("the proof failed: {e}")))?;
    let view = zk::assemble_proven(&s.statement, &plan, &proven)?;
    Ok(verify_claims(&view.sent, &view.received, &plan.json)?)
}

#[test]
fn honest_json_claims_pass_the_proof() {
    let body = br#"{"user":{"name":"ann","age":41},"amount":5,"note":"x\"y"}"#;
    let mut resp = head(body.len());
    resp.extend_from_slice(body);
    let items = crate::http::parse_items(&["json:user.age", "json:amount"]).unwrap();
    let d = crate::http::disclosure_from_items(&items, REQ, &resp).unwrap();
    let claims = claims_from_items(&items, REQ, &resp, &d).unwrap();
    assert!(!claims[0].hidden_strings.is_empty());
    for suite in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ] {
        let ok = prove(suite, &resp, 60, d.received.clone(), claims.clone()).unwrap();
        assert_eq!(ok[0].value_text, "41");
        assert_eq!(ok[1].value_text, "5");
    }
}

/// The prover hides everything but `hidden` of `body` and claims `path`;
/// the walk on that view accepts, the proof does not.
fn cheat(body: &[u8], hidden: &str, path: &str, want: &str) {
    let mut resp = head(body.len());
    let at = resp.len()
        + body
            .windows(hidden.len())
            .position(|w| w == hidden.as_bytes())
            .unwrap();
    resp.extend_from_slice(body);
    let revealed = vec![Range::new(0, at), Range::new(at + hidden.len(), resp.len())];
    let mut view: Vec<Option<u8>> = resp.iter().map(|&b| Some(b)).collect();
    for x in &mut view[at..at + hidden.len()] {
        *x = None;
    }
    let b = message_bodies(&view, Direction::Received).remove(0);
    let w = walk(&view, &b, path).expect("the walk alone is fooled");
    assert_eq!(w.value_text, want);
    let claim = JsonClaim {
        direction: Direction::Received,
        body: b.raw,
        path: path.into(),
        value: w.value,
        hidden_strings: w.hidden_strings.clone(),
        hidden_tokens: w.hidden_tokens.clone(),
    };
    verify_claims(&[], &view, std::slice::from_ref(&claim)).expect("the view alone is fooled");
    let err = prove(
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        &resp,
        resp.len() - 7,
        revealed.clone(),
        vec![claim.clone()],
    )
    .unwrap_err();
    assert!(err.to_string().contains("the proof failed"), "{err}");
    // Without the constraint the claim no longer matches the view.
    let mut bare = claim;
    bare.hidden_strings.clear();
    bare.hidden_tokens.clear();
    let err = prove(
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        &resp,
        resp.len() - 7,
        revealed,
        vec![bare],
    )
    .unwrap_err();
    assert!(err.to_string().contains("hidden bytes differ"), "{err}");
}

/// A hidden run spanning `","amount":1,"b":"` would make one string of
/// a duplicate key: the quotes in it break the string constraint.
#[test]
fn hidden_quotes_in_a_string_are_caught() {
    cheat(
        br#"{"a":"xx","amount":1,"b":"yy","amount":5}"#,
        r#"xx","amount":1,"b":"yy"#,
        "amount",
        "5",
    );
}

/// An escaped quote may not hide in a string: escapes are revealed.
#[test]
fn hidden_escaped_quote_is_caught() {
    cheat(br#"{"n":"a\"b","amount":5}"#, r#"a\"b"#, "amount", "5");
}

/// A hidden comma in a "number" shifts array indices: `[7,8,9]` shown
/// as `[*,9]` would make 9 the element 1.
#[test]
fn hidden_structural_character_in_a_token_is_caught() {
    cheat(br#"{"v":[7,8,9]}"#, "7,8", "v.1", "9");
}

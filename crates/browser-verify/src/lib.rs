//! The npm package's `verify()`: a presentation (what `webproof present`
//! writes) checked against the verifier keys an application trusts, by the
//! Rust code `webproof verify` runs ([`check`]), bound for JavaScript.
//!
//! It is its own WebAssembly module, apart from the prover's
//! (`webproof-browser`): an application that only checks presentations
//! (a backend in Node, a page showing a proof) loads the attestation
//! format and its signature schemes, not the TLS client and the proof
//! engine. No I/O, no clock: the caller applies its age limit
//! (`web/package/src/verify.ts`).

pub mod check;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_VERIFY: &str = r#"
/** Check a presentation (JSON text or binary, as bytes) against trusted verifier keys, as `webproof verify`; throws an Error with `kind` (`malformed`, `invalid-key`, `untrusted-key`, `bad-signature`, `bad-opening`) and `detail`. */
export function verifyPresentation(presentation: Uint8Array, trustedKeys: string[]): Record<string, unknown>;
"#;

/// Check a presentation against trusted keys ([`check::verify`]); throws an
/// `Error` with `kind` and `detail`.
#[wasm_bindgen(js_name = verifyPresentation, skip_typescript)]
pub fn verify_presentation(
    presentation: &[u8],
    trusted_keys: Vec<String>,
) -> Result<JsValue, JsValue> {
    let fail = |kind: &str, detail: &str| -> JsValue {
        let err = js_sys::Error::new(detail);
        let _ = js_sys::Reflect::set(&err, &"kind".into(), &kind.into());
        let _ = js_sys::Reflect::set(&err, &"detail".into(), &detail.into());
        err.into()
    };
    let value = check::verify(presentation, &trusted_keys).map_err(|e| fail(e.kind, &e.detail))?;
    js_sys::JSON::parse(&value.to_string())
}

#!/usr/bin/env bash
# The npm package as an application gets it: `scripts/browser-package.sh
# --pack` builds web/package and packs webproof-0.1.0.tgz; a fresh project
# in a temp directory installs that tarball (offline: it has no runtime
# dependencies); then the package's `verify` checks a presentation made
# by the CLI of a real session (the HTTPS fixture, `webproof serve --once`
# with an attestation key, `prove --attest`, `present --reveal body`), in
# Node (web/package/test/verify.node.mjs) and in headless chromium
# (verify.html through web/driver/chromium.mjs), both importing the
# installed package. The checks (web/package/test/verify-cases.mjs): the
# result matches `webproof verify --json` and the fixture's body; an
# untrusted key, an altered byte, an altered server name, malformed input
# and a stale session are refused with their kinds.
#
# Honours CARGO_TARGET_DIR; uses the debug `webproof` unless WEBPROOF_BIN
# names one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/browser-package.sh --pack >/dev/null
target=${CARGO_TARGET_DIR:-$PWD/target}
if [[ -n "${WEBPROOF_BIN:-}" ]]; then
    bin=$WEBPROOF_BIN
else
    cargo build --quiet -p webproof
    bin="$target/debug/webproof"
fi
tarball=$PWD/web/package/webproof-$(node -p 'require("./web/package/package.json").version').tgz

source scripts/lib/processes.sh

"$bin" fixture --listen 127.0.0.1:0 --cert-dir "$tmp" >"$tmp/fixture.out" 2>"$tmp/fixture.err" &
pids+=($!)
port=$(listening "$tmp/fixture.out" addr | sed 's/.*://')
url="https://localhost:$port/json"
"$bin" keygen --scheme ed25519 -o "$tmp/verifier.key" --json >"$tmp/key.json"
"$bin" keygen --scheme secp256k1 -o "$tmp/other.key" --json >"$tmp/other.json"
"$bin" serve --once --listen 127.0.0.1:0 --ca-cert "$tmp/ca.pem" --allow-net 127.0.0.0/8 \
    --attestation-key "$tmp/verifier.key" >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
verifier=$(listening "$tmp/serve.out" addr)
"$bin" prove --verifier "$verifier" --url "$url" --ca-cert "$tmp/ca.pem" \
    --attest "$tmp/bundle.json" --commit-at body >/dev/null
"$bin" present "$tmp/bundle.json" --reveal body -o "$tmp/presentation.json" >/dev/null
key=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).public_key' "$tmp/key.json")
other=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).public_key' "$tmp/other.json")
"$bin" verify "$tmp/presentation.json" --trusted-key "$key" --json >"$tmp/expected.json"
body=$(curl -sS --fail --cacert "$tmp/ca.pem" "$url" | od -An -v -tx1 | tr -d ' \n')

app=$tmp/app
mkdir "$app"
(cd "$app" && npm init -y >/dev/null &&
    npm install --offline --no-audit --no-fund --loglevel=error "$tarball" >&2)
cp web/package/test/verify-cases.mjs web/package/test/verify.node.mjs web/package/test/verify.html "$app/"
node -e '
    const fs = require("fs");
    const [p, key, other, expected, body, out] = process.argv.slice(1);
    fs.writeFileSync(out, JSON.stringify({
        presentation: fs.readFileSync(p, "utf8"), key, otherKey: other,
        expected: JSON.parse(fs.readFileSync(expected, "utf8")), bodyHex: body,
    }));
' "$tmp/presentation.json" "$key" "$other" "$tmp/expected.json" "$body" "$app/cases.json"
echo "npm-test: $(basename "$tarball") installed into a fresh project" >&2
# verify() loads its own module, not the prover's: if the prover's code
# leaked into it, the module would be about as large as the prover's.
wasm=$app/node_modules/webproof/wasm
prover=$(gzip -9c "$wasm/webproof_browser_bg.wasm" | wc -c)
checker=$(gzip -9c "$wasm/webproof_browser_verify_bg.wasm" | wc -c)
echo "npm-test: verify's module $checker B gzip, the prover's $prover B gzip" >&2
if (( checker * 4 > prover )); then
    echo "npm-test: verify's module is more than a quarter of the prover's" >&2
    exit 1
fi

node "$app/verify.node.mjs" "$app/cases.json" >&2
echo "npm-test: node ok" >&2
node web/driver/chromium.mjs --root "$app" --timeout 120 --page /verify.html >"$tmp/page.json" || {
    cat "$tmp/page.json" >&2
    exit 1
}
node -e 'for (const l of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).lines) console.error(`chromium: ${l}`)' "$tmp/page.json"
echo "npm-test: chromium ok" >&2

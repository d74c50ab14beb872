#!/usr/bin/env bash
# The browser prover end to end: build crates/browser for wasm32 (SIMD128,
# release) and bind it into web/prover/pkg; start the HTTPS fixture and
# `webproof serve` with a WebSocket listener; open web/prover/index.html in
# headless chromium (web/driver/chromium.mjs), which proves the fixture's
# /json through ws:// revealing the body; the page checks the verified
# output reveals exactly the bytes the fixture serves (fetched here with
# curl). Also a verifier that refuses (an API key is required), one that
# is not there and one that never answers must give the page typed errors
# (`kind`: unauthorized, disconnected, timeout).
#
#   scripts/browser-prover-test.sh          (called by scripts/browser-test.sh)
#   scripts/browser-prover-test.sh --bench [REPS]
#       figures instead of tests: the 1 KB request / 2 KB response case
#       (bench/profiles.toml) proved REPS times (default 5) by the browser
#       prover and by `webproof prove` through the same service on
#       loopback, medians printed; and the release wasm's size after
#       `wasm-opt -O3`, raw, gzip and brotli. BENCH_PROFILE=debug uses the
#       debug build of `webproof` (no release build needed).
#
# Honours CARGO_TARGET_DIR. Prints the page's verdict JSON on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/wasm-tools.sh

target=${CARGO_TARGET_DIR:-$PWD/target}
wasm_target="$target/wasm-simd128"
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128" cargo build --quiet --release \
    --target wasm32-unknown-unknown -p webproof-browser --lib --target-dir "$wasm_target"
wasm-bindgen --target web --out-dir web/prover/pkg \
    "$wasm_target/wasm32-unknown-unknown/release/webproof_browser.wasm"
# The native prover of the benchmark is a release build unless
# BENCH_PROFILE=debug (quicker to build; protocol crates are optimised in
# both, but debug keeps overflow checks).
profile=debug
[[ "${1:-}" == "--bench" ]] && profile=${BENCH_PROFILE:-release}
if [[ "$profile" == release ]]; then
    cargo build --quiet --release -p webproof
else
    cargo build --quiet -p webproof
fi
bin="$target/$profile/webproof"

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# Wait for a process's `{"event":"listening",...}` line and print FIELD of it.
listening() { # file field
    for _ in $(seq 1 200); do
        if grep -q '"listening"' "$1" 2>/dev/null; then
            node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").split("\n").find(x=>x.includes("\"listening\""));console.log(JSON.parse(l)[process.argv[2]])' "$1" "$2"
            return
        fi
        sleep 0.1
    done
    echo "browser-prover-test: no listening line in $1" >&2
    cat "$1" >&2
    return 1
}

"$bin" fixture --listen 127.0.0.1:0 --cert-dir "$tmp" >"$tmp/fixture.out" 2>"$tmp/fixture.err" &
pids+=($!)
fixture=$(listening "$tmp/fixture.out" addr)
"$bin" serve --listen 127.0.0.1:0 --listen-http 127.0.0.1:0 --ca-cert "$tmp/ca.pem" \
    --allow-net 127.0.0.0/8 >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
ws="ws://$(listening "$tmp/serve.out" http_addr)/v1/session"
url="https://$fixture/json"

# What the fixture serves, fetched without webproof.
body=$(curl -sS --fail --cacert "$tmp/ca.pem" "$url" | od -An -v -tx1 | tr -d ' \n')

query() { # verifier url [extra key=value ...]
    node -e '
        const [verifier, url, ca, ...rest] = process.argv.slice(1);
        const q = new URLSearchParams({ verifier, url, ca });
        for (const kv of rest) { const i = kv.indexOf("="); q.append(kv.slice(0, i), kv.slice(i + 1)); }
        console.log(q.toString());
    ' "$@"
}

if [[ "${1:-}" == "--bench" ]]; then
    reps=${2:-5}
    # 1 KB request: the X-Padding header fills GET /bytes?size=2048 up to 1024 bytes.
    burl="https://$fixture/bytes?size=2048"
    base=$(printf 'GET /bytes?size=2048 HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$fixture" | wc -c)
    padding=$((1024 - base - 13))
    median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m}'; }
    echo "browser-prover-bench: $reps proofs each, 1 KB request (padding $padding), 2 KB response, loopback" >&2
    for _ in $(seq 1 "$reps"); do
        "$bin" prove --verifier "$ws" --url "$burl" --ca-cert "$tmp/ca.pem" --padding "$padding" --json
    done | node -e '
        const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
        for (const l of lines) { const s = JSON.parse(l).stats; console.log([s.time_total_ms, s.time_preprocess_ms, s.time_online_ms, s.uploaded_preprocess + s.uploaded_online, s.downloaded_preprocess + s.downloaded_online].join(" ")); }
    ' >"$tmp/native.txt"
    node web/driver/chromium.mjs --root web --timeout 900 \
        --page "/prover/index.html?$(query "$ws" "$burl" "$(cat "$tmp/ca.pem")" "reps=$reps" "padding=$padding")" |
        node -e '
            const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
            for (const s of r.runs) console.log([s.time_total_ms, s.time_preprocess_ms, s.time_online_ms, s.uploaded_preprocess + s.uploaded_online, s.downloaded_preprocess + s.downloaded_online].join(" "));
        ' >"$tmp/browser.txt"
    printf '%-9s %10s %14s %10s %10s %10s\n' target total_ms preprocess_ms online_ms up_bytes down_bytes
    for t in native browser; do
        printf '%-9s' "$t"
        for col in 1 2 3 4 5; do printf ' %10s' "$(awk -v c=$col '{print $c}' "$tmp/$t.txt" | median)"; done
        echo
    done
    nat=$(awk '{print $1}' "$tmp/native.txt" | median)
    bro=$(awk '{print $1}' "$tmp/browser.txt" | median)
    echo "browser/native total: $(awk -v a="$bro" -v b="$nat" 'BEGIN {printf "%.2f", a/b}')x"
    wasm-opt -O3 --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int \
        --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
        web/prover/pkg/webproof_browser_bg.wasm -o "$tmp/opt.wasm"
    node -e '
        const z = require("zlib"), b = require("fs").readFileSync(process.argv[1]);
        const br = z.brotliCompressSync(b, { params: { [z.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
        console.log(`wasm after wasm-opt -O3: ${b.length} bytes, gzip -9 ${z.gzipSync(b, { level: 9 }).length}, brotli q11 ${br}`);
    ' "$tmp/opt.wasm"
    exit 0
fi

echo "browser-prover-test: proving $url through $ws in chromium" >&2
node web/driver/chromium.mjs --root web --timeout 300 \
    --page "/prover/index.html?$(query "$ws" "$url" "$(cat "$tmp/ca.pem")" reveal=body "expect_hex=$body")"
echo "browser-prover-test: verified output matches the fixture" >&2

# A verifier that requires an API key refuses us: the page gets the reason code.
echo "key-for-tests" >"$tmp/keys"
"$bin" serve --listen 127.0.0.1:0 --listen-http 127.0.0.1:0 --ca-cert "$tmp/ca.pem" \
    --allow-net 127.0.0.0/8 --api-keys "$tmp/keys" >"$tmp/serve2.out" 2>"$tmp/serve2.err" &
pids+=($!)
ws2="ws://$(listening "$tmp/serve2.out" http_addr)/v1/session"
if out=$(node web/driver/chromium.mjs --root web --timeout 120 \
    --page "/prover/index.html?$(query "$ws2" "$url" "$(cat "$tmp/ca.pem")")"); then
    echo "browser-prover-test: a verifier requiring an API key accepted us" >&2
    exit 1
fi
grep -q '"kind": *"unauthorized"' <<<"$out" || {
    echo "browser-prover-test: expected kind unauthorized, got: $out" >&2
    exit 1
}
echo "browser-prover-test: refusal reported as kind unauthorized" >&2

# Bad verifiers: nothing listening, and one that accepts the WebSocket but
# never answers (a timeout must end the proof with kind timeout).
expect_kind() { # kind verifier [extra query]
    local kind=$1 out
    shift
    if out=$(node web/driver/chromium.mjs --root web --timeout 120 \
        --page "/prover/index.html?$(query "$1" "$url" "$(cat "$tmp/ca.pem")" "${@:2}")"); then
        echo "browser-prover-test: $1 did not fail" >&2
        exit 1
    fi
    grep -q "\"kind\": *\"$kind\"" <<<"$out" || {
        echo "browser-prover-test: $1: expected kind $kind, got: $out" >&2
        exit 1
    }
    echo "browser-prover-test: $1 reported as kind $kind" >&2
}
dead=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
expect_kind disconnected "ws://127.0.0.1:$dead/v1/session"
node -e '
    // Accept a WebSocket upgrade and never answer: a verifier that hangs.
    const s = require("net").createServer((c) => c.once("data", (d) => {
        const key = /sec-websocket-key: *(.*)\r\n/i.exec(d.toString())[1].trim();
        const accept = require("crypto").createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
        c.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
        c.on("data", () => {});
    }));
    s.listen(0, "127.0.0.1", () => console.log(s.address().port));
' >"$tmp/hang.out" &
pids+=($!)
for _ in $(seq 1 50); do [[ -s "$tmp/hang.out" ]] && break; sleep 0.1; done
expect_kind timeout "ws://127.0.0.1:$(cat "$tmp/hang.out")/v1/session" timeout_ms=2000

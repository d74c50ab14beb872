#!/usr/bin/env bash
# The browser prover end to end, through the npm package: build web/package
# (scripts/browser-package.sh: crates/browser for wasm32 with SIMD128, the
# TypeScript API and its worker); start the HTTPS fixture and `webproof
# serve` (WebSocket listener, attestation key); open the package's example
# page web/prover/index.html in headless chromium (web/driver/chromium.mjs).
#
# Tests (the page checks the verified output, this script the service):
#   - the fixture's /json proved in the engine's worker revealing the body:
#     the revealed bytes are exactly the body the fixture serves (fetched
#     here with curl), every hidden byte is zero in the verifier's output;
#     the same on the page's own thread (engine: "page"), and in a
#     worker after `preload()`, whose warm-up (a proof in memory, prover
#     and verifier in the worker) must verify first;
#   - a 1 MiB body fully revealed: the revealed bytes end with what the
#     fixture serves (length and SHA-256), wasm memory within 256 MiB;
#   - the TLS client restricted (tls=1.2, an ECDHE-ECDSA AES-128-GCM
#     suite): the verifier attests exactly that version and suite;
#   - MPC mode in the page through `webproof relay` (the fixture's body
#     revealed, TLS 1.2 and an MPC proof attested), and its typed setup
#     errors (no relay; a relay without MPC mode);
#   - the same with tls=1.3: the verifier attests TLS 1.3 and an MPC proof;
#   - an attested proof revealing nothing to the verifier, the body
#     committed at its own leaves: the bundle is turned into a
#     presentation of the body by `webproof present`, checked by `webproof
#     verify` with the verifier's key, and reveals the body, not the
#     headers;
#   - credentials: `reveal: "all"` over a request with a Cookie is refused
#     (kind setup) unless `yesRevealSecrets`; the result's `hidden`
#     names the Cookie as withheld by default, as revealed with the opt-in;
#   - a request over the verifier's max_sent_bytes: kind limit at once;
#   - typed errors: an unknown suite or TLS version (kind setup, naming
#     the option and what it accepts), a verifier requiring an API key
#     (kind unauthorized, decided by the verifier), none listening
#     (disconnected), one that never answers (timeout with timeoutMs);
#   - cancelled proofs (AbortSignal, during the TLS session and during the
#     proof): kind cancelled, and the service's /metrics shows the session
#     ended (no session active, one more failed session).
#
#   scripts/browser-prover-test.sh          (called by scripts/browser-test.sh)
#   scripts/browser-prover-test.sh --bench [REPS]
#       figures instead of tests: REPS proofs (default 5) by the browser
#       prover and by `webproof prove` (release) through the same service
#       on loopback, medians printed; and the module's size as
#       `scripts/browser-package.sh --pack` ships it, raw, gzip and
#       brotli. The case is the field's 1 KB request with a 2 KB
#       response, everything revealed but the last byte each way (the
#       zero-knowledge path, as the harness does). The
#       browser's line also gives its renderer's peak RSS over the REPS
#       proofs (VmHWM, the page's last verdict on screen). Settings:
#         BENCH_SIZE=BYTES     response size (default 2048)
#         BENCH_REVEAL=all|zk  `all`: everything revealed (the key fast
#                              path); `zk` (default): all but one byte;
#                              else reveal items, comma-separated
#                              (`headers`: the body hidden)
#         BENCH_ENGINE=worker|page   where the browser engine runs
#         BENCH_LINK=loopback|cable|fiber|mobile-5g|redacted-51k  links
#                              emulated by web/driver/link.mjs (a delaying
#                              TCP relay: an approximation of the harness's
#                              links; redacted-51k is the field's 51 KB
#                              case, 100 Mbit/s / 25 ms)
#         BENCH_PROFILE=debug  the debug `webproof` (quicker to build)
#         BENCH_CPU_PROFILE=FILE     DevTools CPU profiles of the browser
#                              runs (FILE, FILE.worker-N; summarise with
#                              web/driver/profile-summary.mjs)
#
# Honours CARGO_TARGET_DIR; the tests use the debug `webproof` unless
# WEBPROOF_PROFILE=release, or WEBPROOF_BIN names a binary to use as is.
# Prints the page's verdict JSON on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

bench=false
[[ "${1:-}" == "--bench" ]] && bench=true
bash scripts/browser-package.sh
target=${CARGO_TARGET_DIR:-$PWD/target}
profile=${WEBPROOF_PROFILE:-debug}
$bench && profile=${BENCH_PROFILE:-release}
if [[ -n "${WEBPROOF_BIN:-}" ]]; then
    bin=$WEBPROOF_BIN
elif [[ "$profile" == release ]]; then
    cargo build --quiet --release -p webproof
    bin="$target/release/webproof"
else
    cargo build --quiet -p webproof
    bin="$target/debug/webproof"
fi

source scripts/lib/processes.sh

"$bin" fixture --listen 127.0.0.1:0 --cert-dir "$tmp" >"$tmp/fixture.out" 2>"$tmp/fixture.err" &
pids+=($!)
fixture=$(listening "$tmp/fixture.out" addr)
"$bin" keygen --scheme ed25519 -o "$tmp/verifier.key" --json >"$tmp/key.json"
"$bin" serve --listen 127.0.0.1:0 --listen-http 127.0.0.1:0 --ca-cert "$tmp/ca.pem" \
    --allow-net 127.0.0.0/8 --attestation-key "$tmp/verifier.key" \
    >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
http=$(listening "$tmp/serve.out" http_addr)
ws="ws://$http/v1/session"
url="https://$fixture/json"

query() { # verifier url [extra key=value ...]
    node -e '
        const [verifier, url, ca, ...rest] = process.argv.slice(1);
        const q = new URLSearchParams({ verifier, url, ca });
        for (const kv of rest) { const i = kv.indexOf("="); q.append(kv.slice(0, i), kv.slice(i + 1)); }
        console.log(q.toString());
    ' "$@"
}
page() { # timeout-secs verifier url [extra key=value ...]
    local secs=$1
    shift
    node web/driver/chromium.mjs --root web --timeout "$secs" ${cpu_profile:+--cpu-profile "$cpu_profile"} ${rss:+--rss} \
        --page "/prover/index.html?$(query "$1" "$2" "$(cat "$tmp/ca.pem")" "${@:3}")"
}

if $bench; then
    reps=${2:-5}
    size=${BENCH_SIZE:-2048}
    engine=${BENCH_ENGINE:-worker}
    cpu_profile=${BENCH_CPU_PROFILE:-}
    rss=1
    server=$fixture
    link=${BENCH_LINK:-loopback}
    if [[ "$link" != loopback ]]; then
        # The profiles of bench/profiles.toml: prover <-> verifier RTT and
        # rate, verifier <-> server 50 ms at the same rate.
        case $link in
        cable) rtt=20 mbps=20 ;;
        fiber) rtt=15 mbps=100 ;;
        mobile-5g) rtt=30 mbps=30 ;;
        redacted-51k) rtt=25 mbps=100 ;;
        *) echo "browser-prover-bench: BENCH_LINK is loopback, cable, fiber, mobile-5g or redacted-51k" >&2; exit 2 ;;
        esac
        # Started in this shell, not in a command substitution's subshell,
        # so that cleanup knows their pids and stops them.
        emulate() { # name to rtt mbps: start a link (its address: listening)
            node web/driver/link.mjs --to "$2" --rtt-ms "$3" --mbps "$4" >"$tmp/link-$1.out" &
            pids+=($!)
        }
        emulate prover "$http" "$rtt" "$mbps"
        emulate app "$fixture" 50 "$mbps"
        ws="ws://$(listening "$tmp/link-prover.out" addr)/v1/session"
        server=$(listening "$tmp/link-app.out" addr)
        link="$link ($rtt ms, $mbps Mbit/s to the verifier; 50 ms to the server; web/driver/link.mjs)"
    fi
    # 1 KB request: the X-Padding header fills the GET up to 1024 bytes.
    burl="https://$server/bytes?size=$size"
    base=$(printf 'GET /bytes?size=%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$size" "$server" | wc -c)
    padding=$((1024 - base - 13))
    req_len=1024
    resp_len=$(curl -sS --fail -i --cacert "$tmp/ca.pem" "$burl" | wc -c)
    case ${BENCH_REVEAL:-zk} in
    all) reveal=(all) ;;
    zk) reveal=(all "hide-sent:$((req_len - 1))-$req_len" "hide-recv:$((resp_len - 1))-$resp_len") ;;
    *) IFS=, read -ra reveal <<<"$BENCH_REVEAL" ;;
    esac
    median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m}'; }
    echo "browser-prover-bench: $reps proofs each, 1 KB request (padding $padding), $size B body ($resp_len B response), reveal ${reveal[*]}, engine $engine, link $link" >&2
    native_reveal=()
    for r in "${reveal[@]}"; do native_reveal+=(--reveal "$r"); done
    for _ in $(seq 1 "$reps"); do
        "$bin" prove --verifier "$ws" --url "$burl" --ca-cert "$tmp/ca.pem" --padding "$padding" \
            --expect-response "$resp_len" "${native_reveal[@]}" --json
    done | node -e '
        const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
        for (const l of lines) { const s = JSON.parse(l).stats; console.log([s.time_total_ms, s.time_preprocess_ms, s.time_online_ms, s.uploaded_preprocess + s.uploaded_online, s.downloaded_preprocess + s.downloaded_online, 0].join(" ")); }
    ' >"$tmp/native.txt"
    page_args=("reps=$reps" "padding=$padding" "expect_response=$resp_len" "engine=$engine")
    for r in "${reveal[@]}"; do page_args+=("reveal=$r"); done
    page 1800 "$ws" "$burl" "${page_args[@]}" >"$tmp/browser.json"
    node -e '
        const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        for (const s of r.runs) console.log([s.time_total_ms, s.time_preprocess_ms, s.time_online_ms, s.uploaded_preprocess + s.uploaded_online, s.downloaded_preprocess + s.downloaded_online, s.wasm_memory_bytes].join(" "));
        console.error(`browser: wall ms ${r.runs.map((s) => s.wall_ms.toFixed(0)).join(" ")}; longest page stall ${Math.max(...r.runs.map((s) => s.page_max_stall_ms)).toFixed(0)} ms; renderer peak RSS ${(r.renderer_peak_rss_bytes / 2 ** 20).toFixed(0)} MiB (all renderers ${(r.renderers_peak_rss_sum_bytes / 2 ** 20).toFixed(0)} MiB); ${r.browser}`);
    ' "$tmp/browser.json" >"$tmp/browser.txt"
    printf '%-9s %10s %14s %10s %10s %10s %12s\n' target total_ms preprocess_ms online_ms up_bytes down_bytes wasm_mem_MiB
    for t in native browser; do
        printf '%-9s' "$t"
        for col in 1 2 3 4 5; do printf ' %10s' "$(awk -v c=$col '{print $c}' "$tmp/$t.txt" | median)"; done
        printf ' %12s\n' "$(awk '{print $6 / 1048576}' "$tmp/$t.txt" | sort -n | tail -1)"
    done
    nat=$(awk '{print $1}' "$tmp/native.txt" | median)
    bro=$(awk '{print $1}' "$tmp/browser.txt" | median)
    echo "browser/native total: $(awk -v a="$bro" -v b="$nat" 'BEGIN {printf "%.2f", a/b}')x"
    # The module as `scripts/browser-package.sh --pack` ships it (no name
    # or producers section).
    wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir "$tmp/pack" \
        "$target/wasm-simd128/wasm32-unknown-unknown/release/webproof_browser.wasm"
    node -e '
        const z = require("zlib"), b = require("fs").readFileSync(process.argv[1]);
        const br = z.brotliCompressSync(b, { params: { [z.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
        console.log(`wasm as packed: ${b.length} bytes, gzip -9 ${z.gzipSync(b, { level: 9 }).length}, brotli q11 ${br}`);
    ' "$tmp/pack/webproof_browser_bg.wasm"
    exit 0
fi

# What the fixture serves, fetched without webproof.
body=$(curl -sS --fail --cacert "$tmp/ca.pem" "$url" | od -An -v -tx1 | tr -d ' \n')

for engine in worker page; do
    echo "browser-prover-test: proving $url through $ws in chromium (engine: $engine)" >&2
    page 300 "$ws" "$url" reveal=body "expect_hex=$body" "engine=$engine"
    echo "browser-prover-test: verified output matches the fixture (engine: $engine)" >&2
done

# The engine preloaded first: its warm-up (a proof in memory, prover and
# verifier in the worker, SIMD128 kernels) must verify, then the proof
# runs in the warmed worker.
page 300 "$ws" "$url" reveal=body "expect_hex=$body" preload=1 >"$tmp/preload.json"
node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    if (!(r.warm_ms > 0)) { console.error(`browser-prover-test: preload: no warm-up reported: ${JSON.stringify(r)}`); process.exit(1); }
    console.error(`browser-prover-test: engine preloaded (warm-up ${r.warm_ms.toFixed(0)} ms), then the proof verified in ${r.stats.wall_ms.toFixed(0)} ms`);
' "$tmp/preload.json"

# A 1 MiB response fully revealed (the key fast path), the issue's bound:
# the revealed bytes end with the body the fixture serves (its length and
# SHA-256, fetched here with curl), and the engine's linear memory stays
# within 256 MiB.
big=$((1 << 20))
big_url="https://$fixture/bytes?size=$big"
big_sha=$(curl -sS --fail --cacert "$tmp/ca.pem" "$big_url" | sha256sum | cut -d' ' -f1)
page 300 "$ws" "$big_url" reveal=all "expect_response=$((big + 1024))" "expect_body_len=$big" \
    "expect_body_sha256=$big_sha" max_wasm_mib=256 >"$tmp/big.json" || {
    echo "browser-prover-test: 1 MiB revealed: $(cat "$tmp/big.json")" >&2
    exit 1
}
node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).stats;
    console.error(`browser-prover-test: 1 MiB response proved revealed in ${s.wall_ms.toFixed(0)} ms, wasm memory ${(s.wasm_memory_bytes / 2 ** 20).toFixed(0)} MiB`);
' "$tmp/big.json"
cat "$tmp/big.json"

# The TLS client restricted as `webproof prove --tls 1.2 --suite ...`: the
# verifier attests the version and suite offered (the fixture's key is
# ECDSA P-256), and the page's verdict carries them.
suite12=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
page 300 "$ws" "$url" reveal=body "expect_hex=$body" tls=1.2 suite=ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 \
    expect_tls=1.2 "expect_suite=$suite12" >"$tmp/tls12.json"
node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    if (r.tls_version !== "1.2" || r.cipher_suite !== process.argv[2]) {
        console.error(`browser-prover-test: negotiated ${r.tls_version} ${r.cipher_suite}, expected 1.2 ${process.argv[2]}`);
        process.exit(1);
    }
' "$tmp/tls12.json" "$suite12"
echo "browser-prover-test: tls=1.2 suite=$suite12 offered and attested" >&2

# An attested proof: the bundle must make a presentation the verifier's key verifies.
page 300 "$ws" "$url" reveal=none attest=1 commit_at=body >"$tmp/attest.json"
node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    require("fs").writeFileSync(process.argv[2], JSON.stringify(r.attestation));
' "$tmp/attest.json" "$tmp/bundle.json"
"$bin" present "$tmp/bundle.json" --reveal body -o "$tmp/presentation.json" >&2
key=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).public_key' "$tmp/key.json")
"$bin" verify "$tmp/presentation.json" --trusted-key "$key" --json >"$tmp/presented.json"
node -e '
    // The presentation reveals the body the fixture served (with the
    // message framing `body` includes: status line, blank line), not the headers.
    const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const shown = p.received.segments.filter((s) => !s.hidden).map((s) => s.hex).join("");
    const body = process.argv[2];
    if (!shown.endsWith(body) || shown.length - body.length > 128 || !p.received.segments.some((s) => s.hidden)) {
        console.error(`browser-prover-test: the presentation reveals ${shown}, not the body ${process.argv[2]}`);
        process.exit(1);
    }
' "$tmp/presented.json" "$body"
echo "browser-prover-test: attestation from the browser presented and verified with the verifier's key" >&2

# MPC mode in the page: webproof_session's run on the page's runtime (the
# same code as `webproof prove --mode mpc`). The page reaches the fixture
# through `webproof relay`, the verifier takes part in the TLS client in
# 2PC and never relays; the revealed body is the fixture's, and the
# verifier attests the TLS version and an MPC proof: TLS 1.2 by default
# (the session's pick where the server runs it), TLS 1.3 with tls=1.3
# (its own key schedule and records in 2PC, another path through the
# same page runtime).
"$bin" relay --listen 127.0.0.1:0 --allow "$fixture" --allow-private \
    >"$tmp/relay.out" 2>"$tmp/relay.err" &
pids+=($!)
relay="ws://$(listening "$tmp/relay.out" addr)/tcp"
mpc_page() { # expected-tls out-file [extra key=value ...]
    local tls=$1 out=$2
    page 300 "$ws" "$url" reveal=body "expect_hex=$body" mode=mpc "relay=$relay" \
        "expect_tls=$tls" expect_proof=mpc "${@:3}" >"$out" || {
        echo "browser-prover-test: MPC mode (TLS $tls) in the page: $(cat "$out")" >&2
        exit 1
    }
    node -e '
        const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        const [tls, s] = [process.argv[2], r.stats];
        if (r.tls_version !== tls || r.proof !== "mpc") {
            console.error(`browser-prover-test: MPC mode attested TLS ${r.tls_version} and a ${r.proof} proof, expected TLS ${tls} and mpc`);
            process.exit(1);
        }
        console.error(`browser-prover-test: MPC mode over TLS ${tls} (${r.cipher_suite}) in the page through webproof relay verified the fixture body in ${s.wall_ms.toFixed(0)} ms (up ${s.uploaded_preprocess + s.uploaded_online} B, down ${s.downloaded_preprocess + s.downloaded_online} B)`);
    ' "$out" "$tls"
}
mpc_page 1.2 "$tmp/mpc.json"
mpc_page 1.3 "$tmp/mpc13.json" tls=1.3

expect_kind() { # kind verifier [extra query]; leaves the page's verdict in $out
    local kind=$1
    shift
    if out=$(page 120 "$1" "$url" "${@:2}"); then
        echo "browser-prover-test: $1 did not fail" >&2
        exit 1
    fi
    grep -q "\"kind\": *\"$kind\"" <<<"$out" || {
        echo "browser-prover-test: $1: expected kind $kind, got: $out" >&2
        exit 1
    }
    echo "browser-prover-test: $1 reported as kind $kind" >&2
}

# Options the prover does not know: typed errors before any network work.
expect_kind setup "$ws" suite=TLS_RSA_WITH_RC4_128_MD5
grep -q 'suite: unknown value \\"TLS_RSA_WITH_RC4_128_MD5\\"; expected TLS13_AES_128_GCM_SHA256, ' <<<"$out" || {
    echo "browser-prover-test: unknown suite: not the typed error: $out" >&2
    exit 1
}
expect_kind setup "$ws" tls=1.1
grep -q 'tls: unknown value \\"1.1\\"; expected 1.2, 1.3 or any' <<<"$out" || {
    echo "browser-prover-test: unknown TLS version: not the typed error: $out" >&2
    exit 1
}

# MPC mode needs a relay (a page opens no TCP), and a relay is for MPC mode.
expect_kind setup "$ws" mode=mpc
grep -q 'MPC mode needs `relay`' <<<"$out" || {
    echo "browser-prover-test: mode=mpc without a relay: not the typed error: $out" >&2
    exit 1
}
expect_kind setup "$ws" "relay=ws://127.0.0.1:1/tcp"

# Credentials: `reveal=all` over a request with a Cookie is refused before
# any network work unless yesRevealSecrets; by default the result names
# the Cookie as withheld, and with the opt-in as revealed.
expect_kind setup "$ws" reveal=all "header=Cookie: s=CKSECRET"
grep -q 'would show the verifier the request.s Cookie value' <<<"$out" && grep -q 'yesRevealSecrets' <<<"$out" || {
    echo "browser-prover-test: reveal=all with a Cookie: not the refusal: $out" >&2
    exit 1
}
page 300 "$ws" "$url" "header=Cookie: s=CKSECRET" "expect_hidden_secret=Cookie value" >"$tmp/hidden.json"
page 300 "$ws" "$url" reveal=all "header=Cookie: s=CKSECRET" yes_reveal_secrets=1 >"$tmp/shown.json"
node -e '
    const fs = require("fs");
    const [h, s] = process.argv.slice(1).map((f) => JSON.parse(fs.readFileSync(f, "utf8")).hidden);
    if (!(h.sent_bytes > 0) || !s.revealed_secrets.includes("Cookie value") || s.secrets.length || s.sent_bytes) {
        console.error(`browser-prover-test: hidden summaries ${JSON.stringify(h)} (default), ${JSON.stringify(s)} (all, opted in)`);
        process.exit(1);
    }
    console.error(`browser-prover-test: the Cookie hidden by default (${h.sent_bytes} B of the request), revealed only with yesRevealSecrets`);
' "$tmp/hidden.json" "$tmp/shown.json"

# A verifier that requires an API key refuses us: the page gets the reason code.
echo "key-for-tests" >"$tmp/keys"
"$bin" serve --listen 127.0.0.1:0 --listen-http 127.0.0.1:0 --ca-cert "$tmp/ca.pem" \
    --allow-net 127.0.0.0/8 --api-keys "$tmp/keys" >"$tmp/serve2.out" 2>"$tmp/serve2.err" &
pids+=($!)
ws2="ws://$(listening "$tmp/serve2.out" http_addr)/v1/session"
expect_kind unauthorized "$ws2"
grep -q '"decidedBy": *"verifier"' <<<"$out" || {
    echo "browser-prover-test: a refusal not decided by the verifier: $out" >&2
    exit 1
}

# A request over the verifier's max_sent_bytes: refused at once (well
# within timeout_ms), as kind limit naming the limit.
"$bin" serve --listen 127.0.0.1:0 --listen-http 127.0.0.1:0 --ca-cert "$tmp/ca.pem" \
    --allow-net 127.0.0.0/8 --max-sent-bytes 4096 >"$tmp/serve3.out" 2>"$tmp/serve3.err" &
pids+=($!)
ws3="ws://$(listening "$tmp/serve3.out" http_addr)/v1/session"
expect_kind limit "$ws3" padding=8000 timeout_ms=20000
grep -q "max_sent_bytes" <<<"$out" || {
    echo "browser-prover-test: over max_sent_bytes: the limit not named: $out" >&2
    exit 1
}

# Bad verifiers: nothing listening, and one that accepts the WebSocket but
# never answers (a timeout must end the proof with kind timeout).
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

# Cancelled proofs: the page's AbortSignal during the TLS session and
# during the proof; the service must end the session (its /metrics: no
# session active, one more failed WebSocket session).
metric() { # name-with-labels
    curl -sS --fail "http://$http/metrics" | awk -v m="$1" '$1 == m {print $2}' | tail -1
}
failed='webproof_sessions_total{transport="ws",outcome="failed"}'
for phase in tls proving; do
    before=$(metric "$failed")
    page 120 "$ws" "$url" reveal=body "cancel_at=$phase" >"$tmp/cancel.json" || {
        echo "browser-prover-test: cancelling at $phase: $(cat "$tmp/cancel.json")" >&2
        exit 1
    }
    ok=false
    for _ in $(seq 1 100); do
        if [[ "$(metric webproof_sessions_active)" == 0 && "$(metric "$failed")" -gt "${before:-0}" ]]; then
            ok=true
            break
        fi
        sleep 0.1
    done
    $ok || {
        echo "browser-prover-test: the service did not end the session cancelled at $phase:" >&2
        curl -sS "http://$http/metrics" | grep -v '^#' >&2
        exit 1
    }
    echo "browser-prover-test: cancelled at $phase: kind cancelled, the service ended the session" >&2
done

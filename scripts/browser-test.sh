#!/usr/bin/env bash
# Build crates/wasm-kernels-bench for wasm32 twice (portable and SIMD128),
# bind it with wasm-bindgen, and run its self-tests in Node and in headless
# Debian chromium (web/driver/chromium.mjs); then build the npm package
# (web/package: the browser prover, crates/browser, SIMD128, in a Web
# Worker) and run scripts/browser-prover-test.sh: its example page proves
# the fixture's /json in chromium through `webproof serve` over ws://
# (the revealed body checked against what the fixture serves), plus an
# attested proof, the typed errors and cancelled proofs. Fails if any
# test fails.
#
#   scripts/browser-test.sh            tests (what CI runs)
#   scripts/browser-test.sh --kernels  only the kernel self-tests
#   scripts/browser-test.sh --prover   only the browser prover test
#   scripts/browser-test.sh --bench [REPS] [ZK_BLOCKS]
#                                      kernel benchmarks: native, Node, chromium
#
# Honours CARGO_TARGET_DIR; the SIMD128 build gets its own subdirectory
# because its RUSTFLAGS differ (sharing one would rebuild everything).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/wasm-tools.sh

target=${CARGO_TARGET_DIR:-$PWD/target}
crate=webproof-wasm-kernels-bench
pkg=web/kernels/pkg

build() { # flavour target-dir extra-rustflags
    RUSTFLAGS="${RUSTFLAGS:-} $3" cargo build --quiet --release \
        --target wasm32-unknown-unknown -p "$crate" --lib --target-dir "$2"
    wasm-bindgen --target web --no-typescript --out-dir "$pkg/$1" \
        "$2/wasm32-unknown-unknown/release/webproof_wasm_kernels_bench.wasm"
}
simd_flags="-C target-feature=+simd128"

if [[ "${1:-}" == "--prover" ]]; then
    bash scripts/browser-prover-test.sh
    exit
fi

build portable "$target" ""
build simd128 "$target/wasm-simd128" "$simd_flags"

if [[ "${1:-}" == "--bench" ]]; then
    reps=${2:-5} zk=${3:-64}
    cargo build --quiet --release -p "$crate" --target-dir "$target"
    echo "== native" >&2
    "$target/release/webproof-wasm-kernels-bench" bench "$reps" "$zk"
    echo "== node" >&2
    node web/kernels/node.mjs bench "$reps" "$zk"
    echo "== chromium" >&2
    node web/driver/chromium.mjs --root web --timeout 1800 \
        --page "/kernels/index.html?mode=bench&reps=$reps&zk_blocks=$zk"
else
    node web/kernels/node.mjs test >/dev/null
    echo "browser-test: node ok" >&2
    node web/driver/chromium.mjs --root web --timeout 600 --page "/kernels/index.html?mode=test" >/dev/null
    echo "browser-test: chromium ok" >&2
    [[ "${1:-}" == "--kernels" ]] || bash scripts/browser-prover-test.sh
fi

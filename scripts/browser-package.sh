#!/usr/bin/env bash
# Build the npm package `webproof` (web/package): the browser prover
# (crates/browser) for wasm32 with SIMD128, release, bound by wasm-bindgen
# into web/package/wasm/; the TypeScript (web/package/src) compiled by tsc
# into web/package/dist/ with its declarations. TypeScript comes from the
# npm registry at the version package.json pins (no lockfile: it has no
# dependencies of its own).
#
#   scripts/browser-package.sh          build
#   scripts/browser-package.sh --opt    also run wasm-opt -O3 on the module (what a release ships)
#   scripts/browser-package.sh --pack   --opt, then `npm pack` into web/package/
#
# Honours CARGO_TARGET_DIR (the wasm build gets its own subdirectory: its
# RUSTFLAGS differ from the host's).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/wasm-tools.sh

target=${CARGO_TARGET_DIR:-$PWD/target}
# The same directory and flags as scripts/browser-test.sh's SIMD128 kernel
# build, so the two share their dependencies.
wasm_target="$target/wasm-simd128"
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128" \
    cargo build --quiet --release --target wasm32-unknown-unknown -p webproof-browser --lib \
    --target-dir "$wasm_target"
pkg=web/package
wasm-bindgen --target web --out-dir "$pkg/wasm" \
    "$wasm_target/wasm32-unknown-unknown/release/webproof_browser.wasm"
if [[ "${1:-}" == --opt || "${1:-}" == --pack ]]; then
    wasm-opt -O3 --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int \
        --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
        "$pkg/wasm/webproof_browser_bg.wasm" -o "$pkg/wasm/webproof_browser_bg.wasm"
fi

want=$(node -p 'require("./web/package/package.json").devDependencies.typescript')
have=$(node -p 'try { require("./web/package/node_modules/typescript/package.json").version } catch { "" }')
if [[ "$have" != "$want" ]]; then
    echo "browser-package: npm install typescript@$want (have: ${have:-none})" >&2
    (cd "$pkg" && npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error >&2)
fi
rm -rf "$pkg/dist"
(cd "$pkg" && node node_modules/typescript/bin/tsc -p .)
echo "browser-package: built $pkg (dist/, wasm/)" >&2
if [[ "${1:-}" == --pack ]]; then
    (cd "$pkg" && npm pack --loglevel=error)
fi

#!/usr/bin/env bash
# Build the npm package `webproof` (web/package): the browser prover
# (crates/browser) for wasm32 with SIMD128, release, and the presentation
# check `verify()` loads (crates/browser-verify, a module of its own so an
# application that only verifies does not load the prover), bound by
# wasm-bindgen into web/package/wasm/; the TypeScript (web/package/src) compiled by tsc
# into web/package/dist/ with its declarations. TypeScript comes from the
# npm registry at the version package.json pins (no lockfile: it has no
# dependencies of its own).
#
#   scripts/browser-package.sh          build (the module keeps its name
#                                       section: Rust names in profiles)
#   scripts/browser-package.sh --pack   without the name and producers
#                                       sections (what a release ships:
#                                       1.13 MB gzip instead of 1.24), then
#                                       `npm pack` into web/package/
#
# No wasm-opt pass: LLVM has optimised the module already, and `wasm-opt
# -O3` (binaryen 132 from npm) made the harness's browser proofs slower,
# their proof phase 60 to 75 ms longer on every profile of
# bench/browser.toml (12 samples each, alternated with this build), for
# no smaller gzip than removing the name section. Debian's binaryen (108)
# also writes a broken module from wasm-bindgen's: it exports the
# function table under the name of wasm-bindgen's externref table, and
# the module fails to instantiate.
#
# Honours CARGO_TARGET_DIR (the wasm build gets its own subdirectory: its
# RUSTFLAGS differ from the host's).
set -euo pipefail
cd "$(dirname "$0")/.."
strip=()
case "${1:-}" in
"") ;;
--pack) strip=(--remove-name-section --remove-producers-section) ;;
*) echo "usage: scripts/browser-package.sh [--pack]" >&2; exit 2 ;;
esac
scripts/wasm-tools.sh

target=${CARGO_TARGET_DIR:-$PWD/target}
# The same directory and flags as scripts/browser-test.sh's SIMD128 kernel
# build, so the two share their dependencies.
wasm_target="$target/wasm-simd128"
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128" \
    cargo build --quiet --release --target wasm32-unknown-unknown \
    -p webproof-browser -p webproof-browser-verify --lib --target-dir "$wasm_target"
pkg=web/package
for module in webproof_browser webproof_browser_verify; do
    wasm-bindgen --target web "${strip[@]}" --out-dir "$pkg/wasm" \
        "$wasm_target/wasm32-unknown-unknown/release/$module.wasm"
done

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

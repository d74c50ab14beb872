#!/usr/bin/env bash
# The test suite: unit, soundness, interop and end-to-end tests, the
# WebAssembly build of the protocol cores, and the browser tests (kernel
# self-tests and the browser prover end to end in headless chromium), the
# npm package installed from its tarball (its presentation verifier in
# Node and chromium), and a run of the MPC figures' examples.
set -euo pipefail
cd "$(dirname "$0")/.."
# A one-off run gains nothing from incremental state, and it is the largest
# part of the target directory (5 GiB of 16 for this suite).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
bash scripts/setup.sh

echo "== wasm32 build of the protocol cores"
cargo build --target wasm32-unknown-unknown \
  -p webproof-core -p webproof-circuits -p webproof-ot -p webproof-ferret -p webproof-zk -p webproof-tlsproof -p webproof-tls -p webproof-disclosure -p webproof-proxy \
  -p webproof-mpc -p webproof-mpc-tls -p webproof-session -p webproof-tls-provider -p webproof-browser -p webproof-browser-verify

echo "== browser tests (wasm kernels, the browser prover) in headless chromium"
bash scripts/browser-test.sh

echo "== the npm package from its tarball: verify() in Node and chromium"
bash scripts/npm-test.sh

echo "== the webproof binary (the bench's end-to-end test drives it)"
cargo build -p webproof

echo "== PostgreSQL for the service's fleet tests"
pg_env=$(bash scripts/postgres.sh start)
eval "$pg_env"
trap 'bash scripts/postgres.sh destroy "$WEBPROOF_TEST_PGDIR"' EXIT

echo "== cargo test"
cargo test --workspace --no-fail-fast

echo "== deployment manifests"; bash scripts/deploy-test.sh

# The figures the MPC crates' docs quote come from these examples; run them
# so that a protocol change that breaks one is caught here, not by the next
# person who wants the figures (their output is not checked: figures, not
# assertions).
echo "== the MPC figures' examples run"
cargo run --quiet -p webproof-mpc --example garble_bench >/dev/null
for example in ectf_bench tls12_bench consistency_bench; do
  cargo run --quiet -p webproof-mpc-tls --example "$example" >/dev/null
done

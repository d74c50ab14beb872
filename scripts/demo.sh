#!/usr/bin/env bash
# The main job: fixture server, verifier and prover on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -p webproof --quiet
exec "${CARGO_TARGET_DIR:-target}/release/webproof" demo "$@"

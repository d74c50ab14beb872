#!/usr/bin/env bash
# Install what webproof's build, demo and tests need on a Debian machine.
# Idempotent: skips what is already there.
set -euo pipefail

need_apt=()
for pair in nginx:nginx-light openssl:openssl curl:curl clang:clang systemd-analyze:systemd haproxy:haproxy; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || need_apt+=("$pkg")
done
# PostgreSQL for the service's fleet tests (scripts/postgres.sh); Debian
# keeps its programs out of PATH, under /usr/lib/postgresql/<version>/bin.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 ||
  need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing ${need_apt[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup first" >&2
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  rustup target list --installed | grep -q wasm32-unknown-unknown ||
    rustup target add wasm32-unknown-unknown >&2
fi

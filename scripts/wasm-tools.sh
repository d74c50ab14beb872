#!/usr/bin/env bash
# Install what the WebAssembly builds and the browser tests need, each only
# if missing (a few seconds when everything is there): Debian's chromium,
# node and npm (the npm package's TypeScript), curl and clang
# (ring's C and assembly for wasm32), the
# wasm32-unknown-unknown Rust target, and wasm-bindgen-cli at
# exactly the wasm-bindgen version Cargo.lock pins (the CLI refuses modules
# from another version). Nothing here downloads a prebuilt toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_missing=()
command -v chromium >/dev/null || apt_missing+=(chromium)
command -v node >/dev/null || apt_missing+=(nodejs)
command -v npm >/dev/null || apt_missing+=(npm)
command -v curl >/dev/null || apt_missing+=(curl)
command -v clang >/dev/null || apt_missing+=(clang)
if ((${#apt_missing[@]})); then
    sudo=""
    [[ "$(id -u)" == 0 ]] || sudo=sudo
    echo "wasm-tools: apt-get install ${apt_missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
fi

rustup target list --installed | grep -qx wasm32-unknown-unknown ||
    rustup target add wasm32-unknown-unknown

want=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[[ -n "$want" ]] || { echo "wasm-tools: wasm-bindgen not in Cargo.lock" >&2; exit 1; }
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [[ "$have" != "$want" ]]; then
    echo "wasm-tools: cargo install wasm-bindgen-cli $want (have: ${have:-none})" >&2
    # Not --locked: the CLI's lockfile can name versions a registry mirror lacks.
    cargo install wasm-bindgen-cli --version "$want"
fi

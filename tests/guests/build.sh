#!/usr/bin/env bash
# Builds the test guests under tests/guests/ for wasm32-wasip2 and writes them next to this
# script (fs_probe.wasm), where the end-to-end tests (tests/e2e/wasi_sandbox.rs) take them.
# The .wasm files are committed so the tests run before a rebuild; CI rebuilds them.
#
# Usage: tests/guests/build.sh
# Needs: rustup target add wasm32-wasip2
# Build output goes to $CARGO_TARGET_DIR (default: <repo>/target/guests), shared with the
# other guest crates so the SDK and its dependencies compile once.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/guests}"

libdir="$(rustc --print target-libdir --target wasm32-wasip2 2>/dev/null || true)"
if [ -z "$libdir" ] || [ ! -d "$libdir" ]; then
    echo "error: the wasm32-wasip2 target is missing; install it with: rustup target add wasm32-wasip2" >&2
    exit 1
fi

build() { # <crate dir> <artifact name> <output file>
    cargo build --locked --release --target wasm32-wasip2 --manifest-path "$here/$1/Cargo.toml"
    cp "$CARGO_TARGET_DIR/wasm32-wasip2/release/$2.wasm" "$here/$3"
    echo "wrote $here/$3 ($(wc -c <"$here/$3") bytes)" >&2
}

build fs-probe rho_fs_probe fs_probe.wasm

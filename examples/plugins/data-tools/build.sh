#!/usr/bin/env bash
# Builds the plugin's `data` tool component (tool/) for wasm32-wasip2 and copies it to
# dev.rho/tools/data.wasm, where rho looks for it.
#
# Usage: examples/plugins/data-tools/build.sh
# Needs: rustup target add wasm32-wasip2
# Build output goes to $CARGO_TARGET_DIR (default: <repo>/target/guests), outside the plugin
# directory: `rho plugins install` copies the whole directory, and a target/ inside it
# would be copied too.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/guests}"

libdir="$(rustc --print target-libdir --target wasm32-wasip2 2>/dev/null || true)"
if [ -z "$libdir" ] || [ ! -d "$libdir" ]; then
    echo "error: the wasm32-wasip2 target is missing; install it with: rustup target add wasm32-wasip2" >&2
    exit 1
fi

cargo build --locked --release --target wasm32-wasip2 --manifest-path "$here/tool/Cargo.toml"
mkdir -p "$here/dev.rho/tools"
cp "$CARGO_TARGET_DIR/wasm32-wasip2/release/rho_example_data_tools.wasm" "$here/dev.rho/tools/data.wasm"
echo "wrote $here/dev.rho/tools/data.wasm ($(wc -c <"$here/dev.rho/tools/data.wasm") bytes)" >&2

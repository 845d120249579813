#!/usr/bin/env bash
# Builds the {{tool}} component (tool/) for wasm32-wasip2 and copies it to
# dev.rho/tools/{{tool}}.wasm, where rho looks for it.
#
# Needs: rustup target add wasm32-wasip2
# Build output goes to $CARGO_TARGET_DIR (default: ~/.cache/rho/plugin-builds/{{plugin}}),
# outside the plugin directory: `rho plugins install` copies the whole directory, and a
# target/ inside it would be copied too.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rho/plugin-builds/{{plugin}}}"

libdir="$(rustc --print target-libdir --target wasm32-wasip2 2>/dev/null || true)"
if [ -z "$libdir" ] || [ ! -d "$libdir" ]; then
    echo "error: the wasm32-wasip2 target is missing; install it with: rustup target add wasm32-wasip2" >&2
    exit 1
fi

cargo build --release --target wasm32-wasip2 --manifest-path "$here/tool/Cargo.toml"
artifact="$(echo "rho-tool-{{tool}}" | tr - _).wasm"
mkdir -p "$here/dev.rho/tools"
cp "$CARGO_TARGET_DIR/wasm32-wasip2/release/$artifact" "$here/dev.rho/tools/{{tool}}.wasm"
echo "wrote $here/dev.rho/tools/{{tool}}.wasm ($(wc -c <"$here/dev.rho/tools/{{tool}}.wasm") bytes)" >&2

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
build="$here/../../../plugin-sdk/build-component.sh"

"$build" "$here/tool" rho_example_data_tools "$here/dev.rho/tools/data.wasm"

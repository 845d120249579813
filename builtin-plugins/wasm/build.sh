#!/usr/bin/env bash
# Builds the built-in tool components under builtin-plugins/wasm/ for wasm32-wasip2 and writes
# them next to this script (text_stats.wasm), where rho-builtin-plugins embeds them.
#
# Usage: builtin-plugins/wasm/build.sh   (needs: rustup target add wasm32-wasip2)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/../../plugin-sdk/build-component.sh"

"$build" "$here/text-stats" rho_text_stats "$here/text_stats.wasm"
# The tool list rho embeds beside it (text_stats.tools.json) is checked, and after a change
# written again, by: RHO_WRITE_TOOL_LISTS=1 cargo test -p rho-core builtin_tool_lists

#!/usr/bin/env bash
# Builds the test guests under tests/guests/ for wasm32-wasip2 and writes them next to this
# script (fs_probe.wasm), where the end-to-end tests (tests/e2e/wasi_sandbox.rs) take them.
# The .wasm files are committed so the tests run before a rebuild; CI rebuilds them.
#
# Usage: tests/guests/build.sh   (needs: rustup target add wasm32-wasip2)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/../../plugin-sdk/build-component.sh"

"$build" "$here/fs-probe" rho_fs_probe "$here/fs_probe.wasm"

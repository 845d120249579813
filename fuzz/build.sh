#!/bin/sh
# Builds every fuzz target and replays its seeds once (no mutation); a cheap CI check.
set -eu
cd "$(dirname "$0")"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
cargo fuzz build
for t in $(cargo fuzz list); do
    cargo fuzz run "$t" "seeds/$t" -- -runs=0
done

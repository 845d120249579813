#!/bin/sh
# Builds every fuzz target and replays its seeds once (no mutation): the CI check that the
# targets still build against host/ and that no seed fails. Fuzzing itself: README.md.
set -eu
cd "$(dirname "$0")"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz@0.13.2 --locked
# cargo-fuzz has no --locked: fail here when Cargo.lock no longer matches the crates it builds.
cargo fetch --locked --quiet --target "$(rustc -vV | sed -n 's/^host: //p')"
export RUSTC_BOOTSTRAP=1
cargo fuzz build
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Each target's seeds, and the inputs that once made it fail (regressions/<target>/).
for t in $(cargo fuzz list); do
    for dir in "seeds/$t" "regressions/$t"; do
        [ -d "$dir" ] || continue
        echo "replaying $dir"
        if ! cargo fuzz run "$t" "$dir" -- -runs=0 >"$log" 2>&1; then
            cat "$log"
            exit 1
        fi
    done
done

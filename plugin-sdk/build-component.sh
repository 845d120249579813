#!/usr/bin/env bash
# Builds one tool-component crate written with rho-plugin-sdk for wasm32-wasip2 (release) and
# copies the component to where rho or a test takes it. rho's own guests (the built-in
# components, the example plugin, the test guests) are all built through this script.
#
# Usage: plugin-sdk/build-component.sh <crate dir> <library name> <output .wasm>
#   <library name> is the crate's library name (`rho_text_stats` for `rho-text-stats`).
# Needs: rustup target add wasm32-wasip2
# Build output goes to $CARGO_TARGET_DIR (default: <repo>/target/guests), outside every plugin
# directory (`rho plugins install` copies a whole directory) and shared by all guest crates
# so the SDK and its dependencies compile once.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 <crate dir> <library name> <output .wasm>" >&2
    exit 2
fi
crate="$1" lib="$2" out="$3"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/guests}"

libdir="$(rustc --print target-libdir --target wasm32-wasip2 2>/dev/null || true)"
if [ -z "$libdir" ] || [ ! -d "$libdir" ]; then
    echo "error: the wasm32-wasip2 target is missing; install it with: rustup target add wasm32-wasip2" >&2
    exit 1
fi

crate="$(cd "$crate" && pwd)"
stable=/tmp/rho-guest-checkout
case "$crate/" in
"$repo"/*)
    # Cargo hashes the absolute path of a path dependency that lies outside the crate's own
    # workspace (the SDK, for every guest) into the symbols of the build, so one source at two
    # checkouts built two different components. rho's own guests therefore build through one
    # fixed path, a link to this checkout. The link lives in a private mount namespace whose
    # /tmp is a fresh tmpfs: nothing is written to the machine's /tmp, and two checkouts
    # building at once each see their own link.
    if [ "${RHO_GUEST_NAMESPACE:-}" = private ]; then
        mount -t tmpfs -o mode=0700 rho-guest /tmp
        ln -s "$repo" "$stable"
        crate="$stable/${crate#"$repo"/}"
    else
        # As root a mount namespace is enough; otherwise a user namespace comes with it. The
        # tmpfs hides the machine's /tmp, so a build that reads or writes there cannot use it.
        case "$repo/ $CARGO_TARGET_DIR/ $(cd "$(dirname "$out")" 2>/dev/null && pwd)/" in
        /tmp/* | *" /tmp/"*) namespaces=() ;;
        *) namespaces=("unshare --mount --propagation private"
            "unshare --user --map-root-user --mount --propagation private") ;;
        esac
        for namespace in "${namespaces[@]}"; do
            # shellcheck disable=SC2086 # one word per argument
            if $namespace true 2>/dev/null; then
                RHO_GUEST_NAMESPACE=private exec $namespace bash "${BASH_SOURCE[0]}" "$@"
            fi
        done
        # No mount namespace here (unprivileged user namespaces switched off): the build is
        # right, but its bytes name this checkout's path, so a drift check cannot compare them.
        echo "warning: no private mount namespace (unshare failed, or the build is under /tmp); $out is built at" \
            "this checkout's path and may differ from the committed file" >&2
        mkdir -p "$CARGO_TARGET_DIR"
        touch "$CARGO_TARGET_DIR/path-dependent"
        stable="$repo"
    fi
    ;;
*) stable="$repo" ;;
esac

# Paths of the build machine (the checkout, cargo's registry) are written into panic messages;
# remapped, the component is the same byte for byte wherever it is built, and names no local
# directory (CI rebuilds rho's own components and fails when one differs from the committed file).
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$stable=/rho --remap-path-prefix=$cargo_home=/cargo"
cargo build --locked --release --target wasm32-wasip2 --manifest-path "$crate/Cargo.toml"
mkdir -p "$(dirname "$out")"
cp "$CARGO_TARGET_DIR/wasm32-wasip2/release/$lib.wasm" "$out"
echo "wrote $out ($(wc -c <"$out") bytes)" >&2

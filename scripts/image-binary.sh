#!/usr/bin/env bash
# The binary headroom's image holds, built here as the Dockerfile builds it: a static musl
# build for this machine's architecture. No container engine runs on the project's
# machines, so the image's test builds its binary with this script and runs it as a pod would.
#
#   scripts/image-binary.sh
#       Adds the musl target (rustup) and musl-gcc (the distribution's musl-tools) when they
#       are missing, builds (in $CARGO_TARGET_DIR when set, else target/), and prints the
#       binary's path. Exit 1, with the reason, when the
#       build cannot be made here.
set -euo pipefail
cd "$(dirname "$0")/.."

target="$(uname -m)-unknown-linux-musl"
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    echo "adding the $target target" >&2
    rustup target add "$target" >&2 || {
        echo "rustup could not add the $target target" >&2
        exit 1
    }
fi
if ! command -v musl-gcc >/dev/null 2>&1; then
    scripts/debian-package.sh musl-tools musl-gcc >&2 || exit 1
fi

# The Dockerfile's build line (tests/run/build_image.rs checks that the two are the same):
cargo build --locked --release --target "$(uname -m)-unknown-linux-musl" --bin headroom >&2

target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$PWD/$target_dir" ;;
esac
echo "$target_dir/$target/release/headroom"

#!/usr/bin/env bash
# Chromium for headroom's dashboard tests: the distribution's own browser, run headless by the
# tests themselves.
#
#   scripts/chromium.sh install
#       Finds the browser; when it is missing and this is Debian or Ubuntu run as root,
#       installs the `chromium` package. Prints the binary's path. Exit 1 (with the reason)
#       when there is no browser and none could be installed.
set -euo pipefail

find_binary() {
    local path
    for path in "$(command -v chromium 2>/dev/null || true)" /usr/bin/chromium "$(command -v chromium-browser 2>/dev/null || true)"; do
        if [[ -n "$path" && -x "$path" ]]; then
            echo "$path"
            return 0
        fi
    done
    return 1
}

install() {
    if path=$(find_binary); then
        echo "$path"
        return 0
    fi
    "$(dirname "$0")/debian-package.sh" chromium Chromium || return 1
    find_binary || {
        echo "chromium was installed, and no chromium binary was found" >&2
        return 1
    }
}

case "${1:-}" in
    install) install ;;
    *) echo "usage: scripts/chromium.sh install" >&2; exit 1 ;;
esac

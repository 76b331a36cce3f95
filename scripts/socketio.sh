#!/usr/bin/env bash
# The reference Socket.IO server for headroom's tests: the `socket.io` npm package on Node,
# a chat written the way its docs show (tests/servers/socketio-chat/server.js).
#
#   scripts/socketio.sh install
#       Installs the server's packages from its package-lock.json (npm ci) when they are not
#       there. Prints the server's path. Exit 1 (with the reason) when Node or npm is missing
#       or the packages could not be installed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
server="$root/tests/servers/socketio-chat"

install() {
    command -v node >/dev/null 2>&1 || { echo "Node.js is not installed (node not found)" >&2; return 1; }
    command -v npm >/dev/null 2>&1 || { echo "npm is not installed" >&2; return 1; }
    if [[ ! -f "$server/node_modules/socket.io/package.json" ]]; then
        (cd "$server" && npm ci --no-audit --no-fund --loglevel=error >&2) || {
            echo "npm ci in tests/servers/socketio-chat failed" >&2
            return 1
        }
    fi
    echo "$server/server.js"
}

case "${1:-}" in
    install) install ;;
    *) echo "usage: scripts/socketio.sh install" >&2; exit 2 ;;
esac

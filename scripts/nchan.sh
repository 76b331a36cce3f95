#!/usr/bin/env bash
# nginx with nchan's EventSource subscriber and publisher endpoints, for headroom's SSE tests
# (tests/servers/nchan/serve.sh): Debian's libnginx-mod-nchan, which brings nginx.
#
#   scripts/nchan.sh install
#       Installs the module and nginx when they are not there (as root, with apt-get). Prints
#       the server's script. Exit 1 (with the reason) when they cannot be installed here.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
module="${NCHAN_MODULE_DIR:-/usr/lib/nginx/modules}/ngx_nchan_module.so"

install() {
    if ! command -v nginx >/dev/null 2>&1 || [[ ! -f "$module" ]]; then
        "$root/scripts/debian-package.sh" libnginx-mod-nchan "nginx with nchan" || return 1
    fi
    command -v nginx >/dev/null 2>&1 || { echo "nginx is not installed (nginx not found)" >&2; return 1; }
    [[ -f "$module" ]] || { echo "nchan's module is not at $module" >&2; return 1; }
    echo "$root/tests/servers/nchan/serve.sh"
}

case "${1:-}" in
    install) install ;;
    *) echo "usage: scripts/nchan.sh install" >&2; exit 2 ;;
esac

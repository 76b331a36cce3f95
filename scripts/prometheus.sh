#!/usr/bin/env bash
# Prometheus for headroom's stream tests: the distribution's own server, on loopback, with its
# remote write receiver on, in a temporary folder.
#
#   scripts/prometheus.sh install
#       Finds the server; when it is missing and this is Debian or Ubuntu run as root,
#       installs the `prometheus` package (and stops the service the package starts: the
#       tests run their own). Prints the binary's path. Exit 1 (with the reason) when there
#       is no server and none could be installed.
#
#   scripts/prometheus.sh serve --port PORT
#       A fresh server in a new temporary folder, listening on 127.0.0.1:PORT only, scraping
#       nothing, its remote write receiver at http://127.0.0.1:PORT/api/v1/write, in the
#       foreground until it is stopped; the folder is removed when it exits.
set -euo pipefail

find_binary() {
    local path
    for path in "$(command -v prometheus 2>/dev/null || true)" /usr/bin/prometheus /usr/local/bin/prometheus; do
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
    # The package's service would start on :9090; nothing here needs it.
    "$(dirname "$0")/debian-package.sh" prometheus Prometheus || return 1
    if command -v service >/dev/null 2>&1; then
        service prometheus stop >/dev/null 2>&1 || true
    fi
    find_binary || {
        echo "prometheus was installed, and no prometheus binary was found" >&2
        return 1
    }
}

serve() {
    local port=""
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --port) port="$2"; shift 2 ;;
            *) echo "unknown argument: $1" >&2; return 1 ;;
        esac
    done
    [[ -n "$port" ]] || { echo "serve needs --port PORT" >&2; return 1; }
    local binary dir
    binary=$(find_binary) || { echo "Prometheus is not installed: scripts/prometheus.sh install" >&2; return 1; }
    dir=$(mktemp -d "${TMPDIR:-/tmp}/headroom-prom.XXXXXX")
    cat > "$dir/prometheus.yml" <<CONFIG
global:
  scrape_interval: 1m
scrape_configs: []
CONFIG
    "$binary" \
        --config.file="$dir/prometheus.yml" \
        --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$port" \
        --web.enable-remote-write-receiver \
        --log.level=warn &
    local server=$!
    trap 'kill -TERM $server 2>/dev/null || true' TERM INT
    local status=0
    wait "$server" || status=$?
    # A signal to this script ends the wait early: wait for the server itself.
    wait "$server" 2>/dev/null || true
    rm -rf "$dir"
    return "$status"
}

case "${1:-}" in
    install) install ;;
    serve) shift; serve "$@" ;;
    *) echo "usage: scripts/prometheus.sh install | serve --port PORT" >&2; exit 1 ;;
esac

#!/usr/bin/env bash
# PostgreSQL for headroom's examples and tests: the machine's own server, from the
# distribution's packages, run as a non-root user in a temporary data directory on loopback.
#
#   scripts/postgres.sh install
#       Finds the server (postgres, initdb); when it is missing and this is Debian or Ubuntu
#       run as root, installs the `postgresql` package. Prints the server's folder. Exit 1
#       (with the reason) when there is no server and none could be installed.
#
#   scripts/postgres.sh serve --port PORT [--max-connections N] [--shared-buffers SIZE]
#       A fresh cluster in a new temporary folder (initdb, trust auth for user `headroom` on
#       127.0.0.1 only), then the server in the foreground until it is stopped: SIGINT is a
#       fast shutdown. The folder is removed when the server exits; folders that killed runs
#       left behind are removed at the next start. Run as root, the server runs as `nobody`
#       (PostgreSQL refuses root).
set -euo pipefail

find_bindir() {
    local dir
    if command -v pg_config >/dev/null 2>&1; then
        dir=$(pg_config --bindir 2>/dev/null || true)
        if [[ -x "$dir/postgres" && -x "$dir/initdb" ]]; then
            echo "$dir"
            return 0
        fi
    fi
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) /usr/local/pgsql/bin /usr/bin; do
        if [[ -x "$dir/postgres" && -x "$dir/initdb" ]]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

install() {
    if dir=$(find_bindir); then
        echo "$dir"
        return 0
    fi
    if [[ $(id -u) -ne 0 ]]; then
        echo "PostgreSQL is not installed and this is not root: install the distribution's postgresql package (apt-get install postgresql)" >&2
        return 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "PostgreSQL is not installed and there is no apt-get here: install the distribution's PostgreSQL server package" >&2
        return 1
    fi
    echo "installing PostgreSQL from the distribution's packages" >&2
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2; then
        DEBIAN_FRONTEND=noninteractive apt-get update >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2 || {
            echo "apt-get could not install postgresql" >&2
            return 1
        }
    fi
    # The package starts a cluster of its own on port 5432; the tests use their own.
    if command -v pg_ctlcluster >/dev/null 2>&1; then
        pg_lsclusters -h 2>/dev/null | while read -r version name _; do
            pg_ctlcluster "$version" "$name" stop >/dev/null 2>&1 || true
        done
    fi
    find_bindir || {
        echo "postgresql was installed, and no postgres binary was found" >&2
        return 1
    }
}

# Folders of earlier runs whose server is gone (a run killed before it could clean up).
remove_stale() {
    local dir pid
    for dir in "${TMPDIR:-/tmp}"/headroom-pg.*; do
        [[ -d "$dir" ]] || continue
        pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
        if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
            # Younger than a minute: maybe a cluster another run is making right now.
            if [[ -n $(find "$dir" -maxdepth 0 -mmin +1 2>/dev/null) ]]; then
                rm -rf "$dir"
            fi
        fi
    done
}

serve() {
    local port="" max_connections=100 shared_buffers=128MB
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --port) port="$2"; shift 2 ;;
            --max-connections) max_connections="$2"; shift 2 ;;
            --shared-buffers) shared_buffers="$2"; shift 2 ;;
            *) echo "unknown argument: $1" >&2; return 2 ;;
        esac
    done
    if [[ -z "$port" ]]; then
        echo "serve needs --port PORT" >&2
        return 2
    fi
    local bindir
    bindir=$(find_bindir) || {
        echo "PostgreSQL is not installed: run scripts/postgres.sh install" >&2
        return 1
    }
    remove_stale
    # Global: the EXIT trap runs after this function has returned.
    PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/headroom-pg.XXXXXX")
    local dir="$PG_DIR"
    chmod 755 "$dir"
    local as=()
    if [[ $(id -u) -eq 0 ]]; then
        chown nobody:nogroup "$dir"
        as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
    fi
    # The folder goes when the server has exited, however it was asked to stop.
    trap 'rm -rf "$PG_DIR"' EXIT
    "${as[@]}" "$bindir/initdb" -D "$dir/data" -U headroom --auth=trust -E UTF8 \
        --no-sync --no-instructions >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        return 1
    }
    "${as[@]}" "$bindir/postgres" -D "$dir/data" -p "$port" \
        -c listen_addresses=127.0.0.1 -c unix_socket_directories="$dir" \
        -c max_connections="$max_connections" -c shared_buffers="$shared_buffers" &
    local server=$!
    # A stop signal to the group reaches the server too; this shell waits for it to exit.
    trap 'kill -INT "$server" 2>/dev/null || true' INT TERM
    local status=0
    while kill -0 "$server" 2>/dev/null; do
        wait "$server" && status=0 || status=$?
    done
    return "$status"
}

case "${1:-}" in
    install) install ;;
    serve) shift; serve "$@" ;;
    *)
        echo "usage: scripts/postgres.sh install | serve --port PORT [--max-connections N] [--shared-buffers SIZE]" >&2
        exit 2
        ;;
esac

#!/usr/bin/env bash
# Installs what scripts/bench-generator.sh compares against: wrk 4 and nginx, from Debian's
# packages (and GNU time, which measures each generator's peak memory). wrk2 (the open-model peer) and oha are not packaged: bench-generator.sh uses
# them when they are on PATH (or WRK2=/path/to/wrk), and says so when they are not.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
    echo "install-bench-tools: needs root for apt-get; skipped" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install-bench-tools: no apt-get on this machine; skipped" >&2
    exit 0
fi
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || missing+=(nginx-light)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi
# The package's own nginx must not hold the port 80 of the machine for a benchmark.
if command -v systemctl >/dev/null && systemctl is-active --quiet nginx 2>/dev/null; then
    systemctl stop nginx || true
fi
wrk --version 2>&1 | head -1 || true
nginx -v

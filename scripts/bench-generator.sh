#!/usr/bin/env bash
# The HTTP generator against wrk (and wrk2, oha when installed) on a loopback nginx, in the
# same session, alternating; medians and ratios. See scripts/bench_generator.py for what is
# measured, docs/performance.md for the figures.
#
#   scripts/bench-generator.sh [--rounds N] [--seconds S] [--connections C] [--quick]
#       [--stall-only | --live-only | --image-only]
#
# wrk and nginx come from scripts/install-bench-tools.sh when they are missing (as root with
# apt-get); otherwise the script says which rows it leaves out.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null || [ ! -x /usr/bin/time ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        scripts/install-bench-tools.sh
    else
        echo "wrk or nginx is missing and cannot be installed here (needs root and apt-get):" \
            "the rows without them are left out" >&2
    fi
fi
exec python3 scripts/bench_generator.py "$@"

#!/usr/bin/env bash
# Issue 32's queueing known answer: a search against a fine fixed sweep of the same fixture
# (the demo target at 1 ms of CPU a request on one thread, p95 < 50 ms), in one session, with
# the runs and wall time of each. See scripts/bench_search.py; figures in docs/performance.md.
#
#   scripts/bench-search.sh [--hold 4s] [--repeats 2]
#
# Takes about ten minutes on two cores; run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
exec python3 scripts/bench_search.py "$@"

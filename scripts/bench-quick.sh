#!/usr/bin/env bash
# Issue 41: `--quick` is a smaller version of the same measurement. For each shipped example
# that searches its ceiling, the quick search's last pass against the full search's, each run
# `--rounds` times in one session, and whether they lie within 25 % of each other. See
# scripts/bench_quick.py; figures in docs/performance.md.
#
#   scripts/bench-quick.sh [--rounds 2] [--examples notes-api,chat,python-stdlib] [--quick-only]
#
# The full searches take hours (notes-api's holds are 2 minutes; chat is searched at one CPU
# size, its `cpu-1` phase): run it on a quiet machine, with nothing else running. Each run is
# kept in target/bench-quick and not run again (`--fresh` does), so it may take two sittings.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
exec python3 scripts/bench_quick.py "$@"

#!/usr/bin/env bash
# `headroom prices import aws` on a generated AWS-shaped EC2 offer file of about 450 MB: its
# peak RSS (the issue's bound is 100 MB), beside the file's size and Python's json.load of the
# same file as the peer that reads it whole (see scripts/bench_prices_import.py).
set -euo pipefail
exec python3 "$(dirname "$0")/bench_prices_import.py" "$@"

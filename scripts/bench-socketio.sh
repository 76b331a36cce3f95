#!/usr/bin/env bash
# headroom's Socket.IO rooms beside Artillery's Socket.IO engine against the reference
# Socket.IO server: emit→ack p50/p95 and each generator's CPU per message (see
# scripts/bench_socketio.py for the method). Needs Node and npm.
set -euo pipefail
exec python3 "$(dirname "$0")/bench_socketio.py" "$@"

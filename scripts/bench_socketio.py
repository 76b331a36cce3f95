#!/usr/bin/env python3
"""headroom's Socket.IO rooms beside Artillery's Socket.IO engine, against the same reference
server at the same emit rate, measured in the same session.

Usage: scripts/bench-socketio.sh [--rounds N] [--seconds S] [--rooms R]

The server is the reference Socket.IO server (tests/servers/socketio-chat: the `socket.io` npm
package on Node, a chat as its docs write one), started once by this script on loopback and
pinned to the first core; each generator runs on the second. Both open R rooms of 10 sockets
over WebSocket, join their room by a `join` event, and emit `chat` events asking an ack, one a
second per socket, for S seconds; the server sends each to the whole room.

  headroom  a rooms scenario, protocol "socket.io", ack = true, send.rate 1/s per sender
            (open model), against the server as an external target
  artillery `engine: socketio` (Artillery 2, socket.io-client 4): R×10 virtual users, each
            joining a room drawn at random, then `emit` with `acknowledge` and `think: 1` in
            a loop: a closed loop, so its rate is 1/(1 s + the ack time), about 1/s here

Each round runs both, alternating which goes first; the table gives medians over the rounds of
emit→ack p50 and p95 (headroom: from the intended send time, so its own send lag, in its own
column, is inside the figure; Artillery: from its emit call), the messages emitted, and each generator's CPU per message (user + system of its whole process
tree, by wait4 rusage, start-up included). Artillery is installed with npm into
target/bench-tools/artillery when it is not there.
"""

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADROOM = os.path.join(ROOT, "target", "release", "headroom")
ARTILLERY_VERSION = "2.0.21"  # the last whose engines accept the Node 20 these machines have
TOOLS = os.path.join(ROOT, "target", "bench-tools", "artillery")
ARTILLERY = os.path.join(TOOLS, "node_modules", ".bin", "artillery")

SPEC = """
[bench]
name = "socketio-bench"

[target]
url = "http://127.0.0.1:{port}"

[[scenario]]
name = "chat"
kind = "rooms"
protocol = "socket.io"
url = "http://127.0.0.1:{port}"
rooms = {rooms}
peers_per_room = 10
connect_over = "2s"
socket_io = {{ joins = ['["join", "room-{{room}}"]'], join_ack = true, event = "chat", ack = true }}
send = {{ rate = "1/s", arrivals = "fixed", size = "200B", template = '{{"stamp":"{{stamp}}","text":"{{payload}}"}}' }}
stages = {{ ramp_up = "2s", ramp_down = "1s" }}

[[phase]]
name = "load"
hold = "{seconds}s"
repeats = 1
cooldown = "0s"
"""

ARTILLERY_SCRIPT = """
config:
  target: "http://127.0.0.1:{port}"
  phases:
    - duration: 2
      arrivalCount: {users}
  socketio:
    transports: ["websocket"]
  engines:
    socketio: {{}}
scenarios:
  - engine: socketio
    flow:
      - emit:
          channel: "join"
          data: "room-{{{{ $randomNumber(0, {last_room}) }}}}"
          acknowledge: {{}}
      - loop:
          - emit:
              channel: "chat"
              data: {{ "text": "{payload}" }}
              acknowledge: {{}}
          - think: 1
        count: {seconds}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command, **kwargs):
    """Runs `command` pinned to the second core; its process tree's CPU seconds."""
    before = children_cpu()
    subprocess.run(["taskset", "-c", "1", *command], check=True, **kwargs)
    return children_cpu() - before


def install_artillery():
    if os.path.exists(ARTILLERY):
        return
    os.makedirs(TOOLS, exist_ok=True)
    print(f"installing artillery@{ARTILLERY_VERSION} into {TOOLS}", file=sys.stderr)
    subprocess.run(
        # --ignore-scripts: Artillery's browser engine would download Chromium, which this
        # benchmark does not use (and a closed network refuses).
        ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", f"artillery@{ARTILLERY_VERSION}"],
        cwd=TOOLS,
        check=True,
        stdout=sys.stderr,
    )


def run_headroom(work, port, options):
    spec = os.path.join(work, "headroom.toml")
    with open(spec, "w") as f:
        f.write(SPEC.format(port=port, rooms=options.rooms, seconds=options.seconds))
    out = os.path.join(work, "headroom.json")
    cpu = timed([HEADROOM, "run", spec, "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        run = json.load(f)["phases"][0]["points"][0]["runs"][0]
    rooms = run["scenarios"]["chat"]["rooms"]
    if rooms["sockets"]["opened"] != options.rooms * 10 or rooms["sockets"]["closed_by_server"]:
        sys.exit(f"headroom: sockets {rooms['sockets']}")
    ack = rooms["socket_io"]["ack"]
    lag = run["scenarios"]["chat"]["schedule_lag"]
    sent = rooms["messages"]["sent"]
    return {
        "p50": ack["p50_ms"],
        "p95": ack["p95_ms"],
        "lag_p50": lag["p50_ms"],
        "lag_p95": lag["p95_ms"],
        "messages": sent,
        "cpu_per_message": cpu / sent,
    }


def run_artillery(work, port, options):
    script = os.path.join(work, "artillery.yml")
    with open(script, "w") as f:
        f.write(
            ARTILLERY_SCRIPT.format(
                port=port,
                users=options.rooms * 10,
                last_room=options.rooms - 1,
                seconds=options.seconds,
                payload="x" * 180,
            )
        )
    report = os.path.join(work, "artillery.json")
    env = dict(os.environ, ARTILLERY_DISABLE_TELEMETRY="true", DO_NOT_TRACK="1")
    cpu = timed(
        [ARTILLERY, "run", "--output", report, script],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    with open(report) as f:
        aggregate = json.load(f)["aggregate"]
    counters, summary = aggregate["counters"], aggregate["summaries"]["socketio.response_time"]
    # Each user's join is an emit too, acknowledged: the chat messages are the rest.
    joins = options.rooms * 10
    messages = counters.get("socketio.emit", 0) - joins
    failed = counters.get("vusers.failed", 0)
    if failed:
        sys.exit(f"artillery: {failed} virtual users failed: {counters}")
    return {
        "p50": summary.get("p50", summary.get("median")),
        "p95": summary["p95"],
        "lag_p50": None,
        "lag_p95": None,
        "messages": messages,
        "cpu_per_message": cpu / max(messages, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--rooms", type=int, default=20)
    options = parser.parse_args()
    server = subprocess.run(
        [os.path.join(ROOT, "scripts", "socketio.sh"), "install"], check=True, capture_output=True, text=True
    ).stdout.strip()
    install_artillery()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    port = free_port()
    node = subprocess.Popen(
        ["taskset", "-c", "0", "node", server, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        results = {"headroom": [], "artillery": []}
        with tempfile.TemporaryDirectory() as work:
            for round_ in range(options.rounds):
                order = ["headroom", "artillery"] if round_ % 2 == 0 else ["artillery", "headroom"]
                for tool in order:
                    run = run_headroom if tool == "headroom" else run_artillery
                    results[tool].append(run(work, port, options))
    finally:
        node.terminate()
        node.wait()
    print(
        f"{options.rooms} rooms of 10 sockets, 1 emit a second each asking an ack, {options.seconds} s;"
        f" medians of {options.rounds} rounds"
    )
    print(
        f"{'generator':<10} {'ack p50':>9} {'ack p95':>9} {'send lag p50/p95':>17} {'messages':>9}"
        f" {'CPU per message':>16}"
    )
    median = lambda tool, key: statistics.median(r[key] for r in results[tool])
    for tool in results:
        lag = (
            f"{median(tool, 'lag_p50'):.2f}/{median(tool, 'lag_p95'):.2f}ms"
            if results[tool][0]["lag_p50"] is not None
            else "-"
        )
        print(
            f"{tool:<10} {median(tool, 'p50'):7.2f}ms {median(tool, 'p95'):7.2f}ms {lag:>17}"
            f" {median(tool, 'messages'):9.0f} {median(tool, 'cpu_per_message') * 1e6:13.1f} µs"
        )
    ratio = median("artillery", "cpu_per_message") / median("headroom", "cpu_per_message")
    print(f"Artillery spends {ratio:.1f}× headroom's CPU per message")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The generator's memory per idle socket, by protocol: `headroom run` holding 10,000 idle
sockets to the demo target on loopback, against the same run holding 100, measured in the same
session, for raw WebSocket, for Socket.IO (Engine.IO v4 over WebSocket) and for Server-Sent
Events streams.

Usage: python3 scripts/bench-sockets.py [--sockets N] [--runs N] [--protocols websocket,socket.io,sse]

Builds the release binary, writes two specs per protocol (an idle rooms scenario of N sockets
and one of 100 sockets, ten per room), and alternates them all. While each run holds its sockets, the script reads
the resident set of the `headroom` process itself (not the target, a separate process) from
/proc every 20 ms and keeps the peak. The memory per socket is the difference of the median
peaks over the difference in sockets, so what every run holds anyway (the runtime, the spec,
the histograms) cancels out. Each run's results file is checked: every socket opened. A
protocol's cost is also given as a ratio to raw WebSocket's, measured in the same session.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "headroom")

SPEC = """
[bench]
name = "idle-sockets"

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]
ready = {{ http = "/healthz", timeout = "30s" }}

[[scenario]]
name = "idle"
kind = "rooms"
{protocol}
rooms = {rooms}
peers_per_room = 10
idle = true
connect_over = "{connect_over}"
stages = {{ ramp_up = "{connect_over}" }}

[[phase]]
name = "hold"
hold = "3s"
repeats = 1
cooldown = "0s"
"""


# What each protocol's scenario says of its sockets.
PROTOCOLS = {
    "websocket": 'url = "ws://127.0.0.1:{port}/rooms/{room}"',
    "socket.io": 'protocol = "socket.io"\nurl = "http://127.0.0.1:{port}"',
    "sse": 'protocol = "sse"\nurl = "http://127.0.0.1:{port}/sse/{room}"',
}


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def run(spec, out):
    """One `headroom run`: the peak RSS of the headroom process, and the sockets it opened."""
    process = subprocess.Popen(
        [BINARY, "run", spec, "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    peak = 0
    while process.poll() is None:
        value = rss_bytes(process.pid)
        if value:
            peak = max(peak, value)
        time.sleep(0.02)
    if process.returncode != 0:
        sys.exit(f"`headroom run {spec}` exited with {process.returncode}")
    with open(out) as f:
        results = json.load(f)
    scenario = results["phases"][0]["points"][0]["runs"][0]["scenarios"]["idle"]["rooms"]
    target_rss = results["phases"][0]["points"][0]["runs"][0]["process"]["steady"]["rss_bytes"]
    return peak, scenario["sockets"]["opened"], target_rss


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sockets", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    options = parser.parse_args()
    protocols = options.protocols.split(",")
    for protocol in protocols:
        if protocol not in PROTOCOLS:
            sys.exit(f"--protocols: `{protocol}` is not one of {', '.join(PROTOCOLS)}")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    sizes = {"small": 100, "large": options.sockets}
    runs = [(protocol, name) for protocol in protocols for name in sizes]
    peaks = {key: [] for key in runs}
    targets = {key: [] for key in runs}
    with tempfile.TemporaryDirectory() as work:
        specs = {}
        for protocol, name in runs:
            sockets = sizes[name]
            path = os.path.join(work, f"{protocol}-{name}.toml")
            with open(path, "w") as f:
                f.write(
                    SPEC.format(
                        protocol=PROTOCOLS[protocol],
                        rooms=sockets // 10,
                        connect_over="2s" if sockets > 1000 else "200ms",
                    )
                )
            specs[(protocol, name)] = path
        for _ in range(options.runs):
            for key, path in specs.items():
                peak, opened, target = run(path, os.path.join(work, "results.json"))
                if opened != sizes[key[1]]:
                    sys.exit(f"{key}: {opened} of {sizes[key[1]]} sockets opened")
                peaks[key].append(peak)
                targets[key].append(target)
    mib = lambda b: b / 1024 / 1024
    print(f"{options.runs} runs each, alternating; peak RSS of the headroom process while it held the sockets")
    span = sizes["large"] - sizes["small"]
    per_socket = {}
    for protocol in protocols:
        for name, sockets in sizes.items():
            values = peaks[(protocol, name)]
            print(
                f"{protocol:>10} {sockets:>6} sockets: median {mib(statistics.median(values)):7.1f} MiB"
                f"  (min {mib(min(values)):.1f}, max {mib(max(values)):.1f})"
            )
        large, small = (statistics.median(peaks[(protocol, n)]) for n in ("large", "small"))
        per_socket[protocol] = (large - small) / span
        target = (
            statistics.median(targets[(protocol, "large")]) - statistics.median(targets[(protocol, "small")])
        ) / span
        print(
            f"{protocol:>10}: generator {per_socket[protocol] / 1024:.2f} KiB per idle socket (goal: 8 KiB or less);"
            f" for scale, the demo target {target / 1024:.1f} KiB"
        )
    if "websocket" in per_socket:
        for protocol, cost in per_socket.items():
            if protocol != "websocket":
                ratio = cost / per_socket["websocket"]
                print(f"{protocol}: {ratio:.2f}× a raw WebSocket's idle cost (goal: 1.5× or less)")


if __name__ == "__main__":
    main()

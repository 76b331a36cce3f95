#!/usr/bin/env python3
"""The generator's memory per idle WebSocket: `headroom run` holding 10,000 idle sockets to the
demo target on loopback, against the same run holding 100, measured in the same session.

Usage: python3 scripts/bench-sockets.py [--sockets N] [--runs N]

Builds the release binary, writes two specs (an idle rooms scenario of N sockets and one of 100
sockets, ten per room), and alternates them. While each run holds its sockets, the script reads
the resident set of the `headroom` process itself (not the target, a separate process) from
/proc every 20 ms and keeps the peak. The memory per socket is the difference of the median
peaks over the difference in sockets, so what every run holds anyway (the runtime, the spec,
the histograms) cancels out. Each run's results file is checked: every socket opened.
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
url = "ws://127.0.0.1:{{port}}/rooms/{{room}}"
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
    options = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    sizes = {"small": 100, "large": options.sockets}
    with tempfile.TemporaryDirectory() as work:
        specs = {}
        for name, sockets in sizes.items():
            path = os.path.join(work, f"{name}.toml")
            with open(path, "w") as f:
                f.write(SPEC.format(rooms=sockets // 10, connect_over="2s" if sockets > 1000 else "200ms"))
            specs[name] = path
        peaks = {name: [] for name in sizes}
        targets = {name: [] for name in sizes}
        for _ in range(options.runs):
            for name, path in specs.items():
                peak, opened, target = run(path, os.path.join(work, f"{name}.json"))
                if opened != sizes[name]:
                    sys.exit(f"{name}: {opened} of {sizes[name]} sockets opened")
                peaks[name].append(peak)
                targets[name].append(target)
    mib = lambda b: b / 1024 / 1024
    print(f"{options.runs} runs each, alternating; peak RSS of the headroom process while it held the sockets")
    for name, sockets in sizes.items():
        values = peaks[name]
        print(
            f"{sockets:>6} sockets: median {mib(statistics.median(values)):7.1f} MiB"
            f"  (min {mib(min(values)):.1f}, max {mib(max(values)):.1f})"
        )
    span = sizes["large"] - sizes["small"]
    per_socket = (statistics.median(peaks["large"]) - statistics.median(peaks["small"])) / span
    print(f"generator: {per_socket / 1024:.2f} KiB per idle socket (goal: 8 KiB or less)")
    target = (statistics.median(targets["large"]) - statistics.median(targets["small"])) / span
    print(f"for scale, the demo target (axum, tungstenite defaults): {target / 1024:.1f} KiB per socket")


if __name__ == "__main__":
    main()

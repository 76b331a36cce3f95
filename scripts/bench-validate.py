#!/usr/bin/env python3
"""Times `headroom validate` on the largest example, against a peer measured in the same run.

Usage: python3 scripts/bench-validate.py [--runs N] [--spec PATH]

Builds the release binary, then alternates the two commands (warm-up runs first) so that noise
on a shared machine hits both alike. Reports min / median / max wall time over N runs of each,
and the ratio of the medians. The peer is `headroom --version`: the same binary doing no work,
so the difference is what validation costs on top of starting a process.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "headroom")


def largest_example():
    examples = os.path.join(ROOT, "examples")
    specs = [os.path.join(examples, f) for f in os.listdir(examples) if f.endswith(".toml")]
    return max(specs, key=os.path.getsize)


def run(args):
    start = time.perf_counter()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"`{' '.join(args)}` exited with {done.returncode}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--spec", default=None)
    options = parser.parse_args()
    spec = options.spec or largest_example()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    commands = {
        "validate": [BINARY, "validate", spec],
        "peer (--version)": [BINARY, "--version"],
    }
    for _ in range(options.warmup):
        for args in commands.values():
            run(args)
    times = {name: [] for name in commands}
    for _ in range(options.runs):
        for name, args in commands.items():
            times[name].append(run(args))
    print(f"spec: {os.path.relpath(spec, ROOT)} ({os.path.getsize(spec)} bytes), {options.runs} runs each, alternating")
    for name, samples in times.items():
        ms = [t * 1000 for t in samples]
        print(f"{name:>18}: median {statistics.median(ms):6.2f} ms  (min {min(ms):.2f}, max {max(ms):.2f})")
    validate = statistics.median(times["validate"])
    peer = statistics.median(times["peer (--version)"])
    print(f"validate / peer: {validate / peer:.2f}x; validation itself ~{(validate - peer) * 1000:.2f} ms")
    print(f"goal: validate median < 20 ms: {'met' if validate < 0.020 else 'NOT met'}")


if __name__ == "__main__":
    main()

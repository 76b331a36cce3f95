"""`headroom compare` over points with many repeats (issue 42's N-C06): each point of
tests/fixtures/render/routes-results.json copied to 30, 300 and 3,000 repeats, compared with
itself, three times each; prints the median wall time and the time per repeat. Per-repeat time
that stays flat from 300 to 3,000 is linear work (a copy of the whole file per repeat once
made it quadratic: 3,000 took over five minutes).

    cargo build --release && python3 scripts/bench_compare_repeats.py [--headroom PATH]
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import tempfile
import time

FIXTURE = "tests/fixtures/render/routes-results.json"


def with_repeats(results, repeats):
    copied = copy.deepcopy(results)
    for phase in copied["phases"]:
        for point in phase["points"]:
            first = point["runs"][0]
            point["runs"] = []
            for repeat in range(repeats):
                run = copy.deepcopy(first)
                run["repeat"] = repeat + 1
                point["runs"].append(run)
    return copied


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--headroom", default="target/release/headroom")
    options = parser.parse_args()
    with open(FIXTURE, encoding="utf-8") as f:
        results = json.load(f)
    print("| repeats a point | median of 3 | per repeat |")
    print("| --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for repeats in (30, 300, 3000):
            path = os.path.join(folder, f"r{repeats}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(with_repeats(results, repeats), f)
            times = []
            for _ in range(3):
                started = time.monotonic()
                subprocess.run([options.headroom, "compare", path, path, "--format", "json"],
                               stdout=subprocess.DEVNULL, check=True, timeout=600)
                times.append(time.monotonic() - started)
            median = statistics.median(times)
            print(f"| {repeats:,} | {median:.2f} s | {median / repeats * 1000:.2f} ms |")


if __name__ == "__main__":
    main()

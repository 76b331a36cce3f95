"""Issue 41: the quick search's ceiling against the full search's, per shipped example.

Each example's searched phase runs `--quick` and in full, `rounds` times each (quick and full
alternating, so a slow stretch of a shared machine lands on both), with HEADROOM_COMPETED_RERUNS
left at its default. Prints a Markdown table: each run's bracket (last pass … first fail), the
runs and wall time it took, the commit it ran at, and per example the ratio of the quick last
passes' median to the full ones', within 25 % or not.

The full searches take hours, more than one sitting may have: each run's search record is kept
in `--keep` (target/bench-quick by default) with its wall time and commit, and a run already
kept there is read, not run again (`--fresh` runs everything again).

    python3 scripts/bench_quick.py [--rounds 2] [--examples notes-api,chat,python-stdlib]
                                   [--quick-only] [--keep DIR] [--fresh]
                                   [--headroom target/release/headroom]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# The phase each example searches (chat searches three CPU sizes alike: one is enough).
PHASES = {"notes-api": "load", "chat": "cpu-1", "python-stdlib": "rate"}


def number(value):
    """A searched value's number: 1180 of "1180/s"."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return float(str(value).split("/")[0])


def search_of(path, phase):
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    for ran in results["phases"]:
        if ran["name"] == phase and ran.get("search"):
            return ran["search"]
    raise SystemExit(f"{path}: phase `{phase}` has no search record")


def commit():
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() or "unknown"


def run(headroom, example, phase, quick, out):
    args = [headroom, "run", f"examples/{example}.toml", "--phase", phase, "--no-page",
            "--out", out]
    if quick:
        args.insert(2, "--quick")
    started = time.monotonic()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - started
    if done.returncode not in (0, 2):
        sys.stderr.write(done.stderr)
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}")
    record = search_of(out, phase)
    return {
        "pass": number(record.get("pass")),
        "fail": number(record.get("fail")),
        "said": record["said"],
        "runs": record["runs"],
        "wall_s": took,
        "commit": commit(),
    }


def kept_or_run(options, example, phase, quick, round_):
    kind = "quick" if quick else "full"
    summary = os.path.join(options.keep, f"{example}-{kind}-{round_}.summary.json")
    if not options.fresh and os.path.exists(summary):
        with open(summary, encoding="utf-8") as f:
            ran = json.load(f)
        print(f"{example} {kind} {round_}: kept from {ran['commit']}: {ran['said']}",
              file=sys.stderr, flush=True)
        return ran
    out = os.path.join(options.keep, f"{example}-{kind}-{round_}.json")
    ran = run(options.headroom, example, phase, quick, out)
    partial = summary + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        json.dump(ran, f)
    os.replace(partial, summary)
    print(f"{example} {kind} {round_}: {ran['said']} ({ran['wall_s']:.0f} s)",
          file=sys.stderr, flush=True)
    return ran


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--examples", default="notes-api,chat,python-stdlib")
    parser.add_argument("--quick-only", action="store_true")
    parser.add_argument("--keep", default="target/bench-quick")
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--headroom", default="target/release/headroom")
    options = parser.parse_args()
    os.makedirs(options.keep, exist_ok=True)
    rows = []
    verdicts = []
    for example in options.examples.split(","):
        phase = PHASES[example]
        seen = {True: [], False: []}
        for round_ in range(1, options.rounds + 1):
            for quick in ([True] if options.quick_only else [True, False]):
                ran = kept_or_run(options, example, phase, quick, round_)
                seen[quick].append(ran["pass"])
                rows.append((example, "quick" if quick else "full", round_, ran))
        quick_passes = [p for p in seen[True] if p is not None]
        full_passes = [p for p in seen[False] if p is not None]
        if quick_passes and full_passes:
            ratio = statistics.median(quick_passes) / statistics.median(full_passes)
            verdicts.append((example, ratio, abs(ratio - 1.0) <= 0.25))
    print("| example | search | round | last pass | first fail | runs | wall | commit |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for example, kind, round_, ran in rows:
        print(f"| {example} | {kind} | {round_} | {ran['pass']} | {ran['fail']} | {ran['runs']} "
              f"| {ran['wall_s']:.0f} s | {ran['commit']} |")
    if verdicts:
        print()
        print("| example | quick / full (medians) | within 25 % |")
        print("| --- | --- | --- |")
        for example, ratio, within in verdicts:
            print(f"| {example} | {ratio:.2f} | {'yes' if within else 'no'} |")


if __name__ == "__main__":
    main()

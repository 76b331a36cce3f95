"""Issue 32's queueing known answer: the SLO ceiling a search finds against the one a fine
fixed sweep of the same fixture finds, in one session, with the runs and wall time of each.

The demo target spends 1 ms of CPU on every request, one request at a time (at most 1,000 a
second); the SLO is p95 < 50 ms under Poisson arrivals. The sweep steps the rate from 500/s to
1,100/s by 20/s, `repeats` each; the search doubles from 250/s and halves the bracket to 5 %,
its two ends confirmed at the same hold and repeats. The sweep's ceiling is its last step
that passed in every repeat before the first that did not. Prints a Markdown table.

    python3 scripts/bench_search.py [--hold 4s] [--repeats 2] [--headroom target/release/headroom]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SPEC = """[bench]
name = "bench-search"
unit = "req/s"

[vars]
rate = "250/s"

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}", "--request-cpu", "1ms"]
ready = {{ http = "/healthz", timeout = "20s" }}

[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{{rate}}"
arrivals = "poisson"
requests = [{{ url = "http://127.0.0.1:{{port}}/api/groups/1/notes", expect = 200 }}]

[[phase]]
name = "rate"
hold = "{hold}"
repeats = {repeats}
cooldown = "0s"
{vary}

[slo]
p95 = "api.latency.p95 < 50ms"
failed = "api.failed < 1%"

[capacity]
units = "rate"
"""

SWEEP = 'vary = { rate = { from = "500/s", to = "1100/s", step = 20 } }\norder = "grouped"'
SEARCH = 'vary = { rate = { search = { from = "250/s", to = "8000/s", precision = "5%", probe_hold = "HOLD", max_runs = 60, max_time = "1h" } } }'


def number(value):
    if isinstance(value, (int, float)):
        return float(value)
    return float(str(value).split("/")[0])


def run(headroom, spec_text, out_dir, name):
    spec = os.path.join(out_dir, f"{name}.toml")
    with open(spec, "w") as f:
        f.write(spec_text)
    results = os.path.join(out_dir, name, "results.json")
    started = time.monotonic()
    subprocess.run(
        [headroom, "run", spec, "--out", results, "--no-page", "--yes"],
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.monotonic() - started
    with open(results) as f:
        return json.load(f), wall


def sweep_ceiling(results):
    phase = results["phases"][0]
    passed = {}
    for point in phase["points"]:
        x = number(point["at"]["rate"])
        ok = all(
            run.get("failure") is None and all(v.get("pass") is True for v in run["slo"])
            for run in point["runs"]
        )
        passed[x] = passed.get(x, True) and ok
    last = None
    for x in sorted(passed):
        if not passed[x]:
            return last, x
        last = x
    return last, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hold", default="4s")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--headroom", default="target/release/headroom")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        fill = lambda vary: SPEC.format(hold=args.hold, repeats=args.repeats, vary=vary)
        # The search first, then the sweep: each on the same machine in the same session.
        search, search_wall = run(args.headroom, fill(SEARCH.replace("HOLD", args.hold)), out, "search")
        sweep, sweep_wall = run(args.headroom, fill(SWEEP), out, "sweep")
    record = search["phases"][0].get("search")
    if record is None:
        sys.exit("the search left no record")
    search_runs = record["runs"]
    sweep_runs = sum(len(p["runs"]) for p in sweep["phases"][0]["points"])
    s_pass, s_fail = sweep_ceiling(sweep)
    f_pass = number(record["pass"]) if "pass" in record else None
    f_fail = number(record["fail"]) if "fail" in record else None
    print(f"hold {args.hold}, {args.repeats} repeats; search ending: {record['ending']}\n")
    print("| method | runs | wall time | last pass | first fail |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| fine sweep, 500–1,100/s by 20/s | {sweep_runs} | {sweep_wall:.0f} s | {s_pass:g}/s | {s_fail if s_fail is None else f'{s_fail:g}/s'} |")
    print(f"| search from 250/s to 5 % | {search_runs} | {search_wall:.0f} s | {f_pass:g}/s | {f_fail if f_fail is None else f'{f_fail:g}/s'} |")
    if s_pass and f_pass:
        off = abs(f_pass - s_pass) / s_pass
        ratio = search_runs / sweep_runs
        print(f"\nthe search's last pass is {off * 100:.1f} % from the sweep's (within 10 %: {'yes' if off <= 0.10 else 'NO'}); it took {ratio:.2f} of the sweep's runs (at most a quarter: {'yes' if ratio <= 0.25 else 'NO'}) and {search_wall / sweep_wall:.2f} of its time")


if __name__ == "__main__":
    main()

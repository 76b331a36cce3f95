#!/usr/bin/env python3
"""The HTTP generator against its peers, measured in the same session on a loopback server.

Usage: scripts/bench-generator.sh [--rounds N] [--seconds S] [--connections C] [--quick]

The server is nginx (one worker, answering "ok") when it is installed, else the demo
target's /healthz; it is pinned to the first core, every generator to the second. Each
measurement alternates the generators, round after round, and reports medians:

  closed   wrk -t1 -cC against headroom constant-vus C, think 0 (req/s, CPU per request, RSS)
  open     headroom constant-arrival-rate at half wrk's closed rate, max_connections C, and
           wrk2 -R at the same rate when it is installed (CPU per request, schedule lag, RSS)
  10k      headroom at 10,000 req/s: schedule lag p99, and its p50 against one user in a
           closed loop (the server's own answer time, nothing queued)
  long     headroom open at half wrk's rate for 1,000,000 requests: RSS against the short run
  stall    the demo target stalling 200 ms every second, 2,000 req/s: p50/p90/p99
           against the server's own account of each answer's time and the stall's computed
           shape (and oha --latency-correction when installed)
  live     headroom open at half wrk's rate with everything a user can watch the run with
           (the terminal view in a pseudo-terminal, --dashboard with a headless Chromium
           attached, --stream json-lines and --stream prometheus-rw to a loopback
           Prometheus) against all of it off, alternating: CPU per request of each
           (`--live-only` runs this part alone, at --rate or half of a closed run's rate)

A generator's CPU and peak RSS are its process's own (wait4 rusage), start-up included. A tool
that is not installed is said, and its rows and ratios left out; nothing is made up.
"""

import argparse
import shlex
import threading
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADROOM = os.path.join(ROOT, "target", "release", "headroom")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port, timeout):
    """Whether something listens on 127.0.0.1:port within `timeout` seconds."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_port(port, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def cores():
    return sorted(os.sched_getaffinity(0))


def pinned(core, argv):
    return ["taskset", "-c", str(core), *argv] if core is not None else argv


def measure(argv, timeout):
    """Runs argv under GNU time; returns (its output, CPU seconds, peak RSS in MiB). The CPU
    is wait4's; the RSS is time's, whose child is forked from a small process (Python's
    fork would count the interpreter's pages in the child's peak)."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as usage_file:
        argv = ["/usr/bin/time", "-f", "%M", "-o", usage_file.name, *argv]
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                process.kill()
                sys.exit(f"`{' '.join(argv)}` ran past {timeout} s")
            time.sleep(0.05)
        out.seek(0)
        text = out.read().decode(errors="replace")
        peak_kib = int(usage_file.read().strip().splitlines()[-1])
    if os.waitstatus_to_exitcode(status) not in (0, 2):
        sys.exit(f"`{' '.join(argv)}` failed:\n{text[-2000:]}")
    return text, usage.ru_utime + usage.ru_stime, peak_kib / 1024


class Server:
    """nginx when installed, else the demo target; on the first core."""

    def __init__(self, core, stall=False):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="headroom-bench-")
        if shutil.which("nginx") and not stall:
            self.name = "nginx 1 worker"
            self.path = "/"
            conf = os.path.join(self.dir, "nginx.conf")
            with open(conf, "w") as f:
                f.write(
                    f"""worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log;
events {{ worker_connections 16384; }}
http {{
  access_log off;
  server {{
    listen 127.0.0.1:{self.port} backlog=4096;
    keepalive_requests 1000000000;
    location / {{ return 200 "ok"; }}
  }}
}}
"""
                )
            argv = ["nginx", "-c", conf, "-e", f"{self.dir}/error.log"]
        else:
            self.name = "demo target"
            self.path = "/healthz"
            argv = [HEADROOM, "demo-target", "--port", str(self.port)]
            if stall:
                self.name = "demo target, stalling 200 ms every 1 s"
                self.path = "/healthz"
                argv += ["--stall-every", "1s", "--stall-for", "200ms"]
        self.process = subprocess.Popen(
            pinned(core, argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_port(self.port)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}{self.path}"

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


SPEC = """[bench]
name = "bench-generator"

[target]
url = "http://127.0.0.1:{port}"

[[scenario]]
name = "load"
kind = "http"
{executor}
requests = [{{ url = "{url}" }}]

[[phase]]
name = "bench"
hold = "{seconds}s"
repeats = 1
cooldown = "0s"
"""


def headroom(server, executor, seconds, core, work, live=None, binary=None):
    """One run of headroom; with `live` (Prometheus's port, Chromium's path), watched with
    everything: in a pseudo-terminal (the terminal view), the dashboard with a browser
    attached, and both streams."""
    spec = os.path.join(work, "spec.toml")
    out = os.path.join(work, "results.json")
    with open(spec, "w") as f:
        f.write(SPEC.format(port=server.port, url=server.url, executor=executor, seconds=seconds))
    argv = [binary or HEADROOM, "run", "--no-page", "--force", "--out", out, spec]
    browser = None
    if live:
        prometheus_port, chromium = live
        dashboard_port = free_port()
        argv += [
            "--dashboard", "--dashboard-port", str(dashboard_port),
            "--stream", f"json-lines={os.path.join(work, 'live.jsonl')}",
            "--stream", f"prometheus-rw=http://127.0.0.1:{prometheus_port}/api/v1/write",
        ]
        argv = ["script", "-qec", shlex.join(argv), "/dev/null"]
        if chromium:
            browser = Browser(chromium, dashboard_port, work)
    try:
        _, cpu, rss = measure(pinned(core, argv), seconds * 4 + 60)
    finally:
        if browser:
            browser.stop()
            ATTACHED.append(browser.attached)
    with open(out) as f:
        results = json.load(f)
    run = results["phases"][0]["points"][0]["runs"][0]
    load = run["scenarios"]["load"]
    requests = load["requests"] + (load.get("ramps") or {}).get("requests", 0)
    return {
        "rate": load["rate"],
        "requests": requests,
        "cpu_us": cpu / max(requests, 1) * 1e6,
        "rss": rss,
        "p50": load["latency"]["p50_ms"],
        "p90": load["latency"]["p90_ms"],
        "p99": load["latency"]["p99_ms"],
        "lag99": load["schedule_lag"]["p99_ms"],
        "errors": sum(load["errors"].values()),
        "threads": run["generator"].get("threads"),
    }


# Whether each run with the dashboard had its browser attached.
ATTACHED = []


class Browser:
    """A headless Chromium that opens the dashboard once it listens, on a thread: the
    dashboard's cost with one browser attached."""

    def __init__(self, chromium, port, work):
        self.process = None
        self.attached = False
        self.profile = tempfile.mkdtemp(prefix="headroom-bench-chromium-", dir=work)

        def attach():
            if listening(port, 30):
                self.process = subprocess.Popen([
                    chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", f"--user-data-dir={self.profile}", f"http://127.0.0.1:{port}/",
                ], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
                self.attached = True

        self.thread = threading.Thread(target=attach, daemon=True)
        self.thread.start()

    def stop(self):
        self.thread.join(timeout=31)
        if self.process:
            os.killpg(self.process.pid, 9)
            self.process.wait()


def live_overhead(server, rate, connections, seconds, core, work, rounds):
    """The open model at `rate` with the live view and streams all on, against all off."""
    prometheus_port = free_port()
    prometheus = subprocess.Popen(
        [os.path.join(ROOT, "scripts", "prometheus.sh"), "serve", "--port", str(prometheus_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    chromium = shutil.which("chromium")
    try:
        if not listening(prometheus_port, 30):
            print("Prometheus did not start (scripts/prometheus.sh install): the live rows are left out\n")
            return
        if not chromium:
            print("Chromium is not installed (scripts/chromium.sh install): the dashboard runs with no browser attached")
        executor = f'executor = "constant-arrival-rate"\nrate = "{rate}/s"\nmax_connections = {connections}'
        rows = {"all off": [], "all on": []}
        for _ in range(rounds):
            rows["all off"].append(headroom(server, executor, seconds, core, work))
            rows["all on"].append(headroom(server, executor, seconds, core, work, live=(prometheus_port, chromium)))
        print(f"## The live view and streams: {rate:,} req/s, {connections} connections\n")
        print("all on: the terminal view (in a pseudo-terminal), --dashboard with a headless Chromium attached, "
              "--stream json-lines and --stream prometheus-rw to a loopback Prometheus\n")
        print("| headroom | req/s | CPU per request | schedule lag p99 |\n| --- | --- | --- | --- |")
        for name, measured in rows.items():
            print(f"| {name} | {median(measured, 'rate'):,.0f} | {median(measured, 'cpu_us'):.2f} µs | {median(measured, 'lag99'):.3f} ms |")
        print(f"\na browser attached to the dashboard in {sum(ATTACHED)} of {len(ATTACHED)} runs with it")
        each = ", ".join(f"{on['cpu_us'] / off['cpu_us']:.3f}x" for on, off in zip(rows["all on"], rows["all off"]))
        print(f"\nall on / all off, CPU per request: {median(rows['all on'], 'cpu_us') / median(rows['all off'], 'cpu_us'):.3f}x "
              f"(each round: {each})\n")
    finally:
        os.killpg(prometheus.pid, 15)
        prometheus.wait()


def image_binary(server, connections, seconds, core, work, rounds):
    """The image's static musl build (scripts/image-binary.sh) against the glibc release
    build, closed and open model, alternating rounds: what the Dockerfile's binary costs."""
    built = subprocess.run(
        [os.path.join(ROOT, "scripts", "image-binary.sh")], cwd=ROOT, check=True,
        stdout=subprocess.PIPE, text=True,
    )
    musl = built.stdout.strip().splitlines()[-1]
    closed = f'executor = "constant-vus"\nvus = {connections}\nthink = "0s"'
    rows = {"glibc (cargo build --release)": [], "musl, static (the image's)": []}
    for _ in range(rounds):
        rows["glibc (cargo build --release)"].append(headroom(server, closed, seconds, core, work))
        rows["musl, static (the image's)"].append(headroom(server, closed, seconds, core, work, binary=musl))
    half = int(median(rows["glibc (cargo build --release)"], "rate") / 2)
    opened = f'executor = "constant-arrival-rate"\nrate = "{half}/s"\nmax_connections = {connections}'
    open_rows = {name: [] for name in rows}
    for _ in range(rounds):
        open_rows["glibc (cargo build --release)"].append(headroom(server, opened, seconds, core, work))
        open_rows["musl, static (the image's)"].append(headroom(server, opened, seconds, core, work, binary=musl))
    print(f"## The image's binary: closed model, {connections} connections; open model at {half:,} req/s\n")
    print("| build | closed req/s | closed CPU per request | open CPU per request | open lag p99 | peak RSS |\n| --- | --- | --- | --- | --- | --- |")
    for name in rows:
        print(f"| {name} | {median(rows[name], 'rate'):,.0f} | {median(rows[name], 'cpu_us'):.1f} µs | "
              f"{median(open_rows[name], 'cpu_us'):.1f} µs | {median(open_rows[name], 'lag99'):.3f} ms | {median(rows[name], 'rss'):.0f} MiB |")
    glibc, static = rows.keys()
    print(f"\nmusl / glibc: closed req/s {median(rows[static], 'rate') / median(rows[glibc], 'rate'):.3f}x, "
          f"closed CPU per request {median(rows[static], 'cpu_us') / median(rows[glibc], 'cpu_us'):.3f}x, "
          f"open CPU per request {median(open_rows[static], 'cpu_us') / median(open_rows[glibc], 'cpu_us'):.3f}x\n")


def wrk(binary, server, connections, seconds, core, rate=None):
    argv = [binary, "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if rate is not None:
        argv.append(f"-R{rate}")
    text, cpu, rss = measure(pinned(core, [*argv, server.url]), seconds * 3 + 60)
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    rate_found = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    return {
        "rate": rate_found,
        "requests": requests,
        "cpu_us": cpu / max(requests, 1) * 1e6,
        "rss": rss,
    }


def oha(server, rate, seconds, core):
    argv = [
        "oha", "--no-tui", "--output-format", "json", "-q", str(rate),
        "--latency-correction", "-z", f"{seconds}s", server.url,
    ]
    text, cpu, rss = measure(pinned(core, argv), seconds * 3 + 60)
    found = json.loads(text[text.index("{"):])
    percentiles = found["latencyPercentiles"]
    return {
        "p50": percentiles["p50"] * 1000,
        "p90": percentiles["p90"] * 1000,
        "p99": percentiles["p99"] * 1000,
    }


def median(rows, key):
    return statistics.median(row[key] for row in rows)


def stall_truth(quantile, every=1.0, stall=0.2):
    """The latency at `quantile` of arrivals evenly spread over time, against a server that
    holds every request arriving during a stall of `stall` s once every `every` s until the
    stall ends, and answers the others at once (its own answer time left out): a request
    arriving s into the stall waits stall - s."""
    stalled = stall / every
    if quantile <= 1 - stalled:
        return 0.0
    return stall * (quantile - (1 - stalled)) / stalled * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="1 round of 3 s, no long run")
    parser.add_argument("--stall-only", action="store_true", help="only the stalling server")
    parser.add_argument("--live-only", action="store_true", help="only the live view and streams' cost")
    parser.add_argument("--rate", type=int, help="--live-only's rate [default: half a closed run's]")
    parser.add_argument("--image-only", action="store_true", help="only the image's static musl binary against the glibc build")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds = 1, 3
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-q", "--bin", "headroom"], cwd=ROOT, check=True
    )
    available = cores()
    server_core, generator_core = (available[0], available[1]) if len(available) >= 2 else (None, None)
    wrk_bin, wrk2_bin = shutil.which("wrk"), os.environ.get("WRK2") or shutil.which("wrk2")
    has_oha = shutil.which("oha") is not None
    work = tempfile.mkdtemp(prefix="headroom-bench-")
    print(f"# bench-generator, {time.strftime('%Y-%m-%d %H:%M')} UTC")
    print(f"machine: {os.cpu_count()} cores ({open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()})")
    print(f"server on core {server_core}, generators on core {generator_core}; {args.rounds} rounds of {args.seconds} s, alternating; medians")
    for tool, path in [("wrk", wrk_bin), ("wrk2", wrk2_bin), ("oha", shutil.which("oha"))]:
        if not path:
            print(f"{tool}: not installed, its rows and ratios are left out (scripts/install-bench-tools.sh)")
    c, s = args.connections, args.seconds

    if args.stall_only:
        stall(args, server_core, generator_core, has_oha, work)
        return
    if args.image_only:
        server = Server(server_core)
        print(f"server: {server.name} at {server.url}\n")
        try:
            image_binary(server, c, s, generator_core, work, args.rounds)
        finally:
            server.stop()
        return
    if args.live_only:
        server = Server(server_core)
        print(f"server: {server.name} at {server.url}\n")
        try:
            rate = args.rate
            if rate is None:
                closed = headroom(server, f'executor = "constant-vus"\nvus = {c}\nthink = "0s"', s, generator_core, work)
                rate = int(closed["rate"] / 2)
            live_overhead(server, rate, c, s, generator_core, work, args.rounds)
        finally:
            server.stop()
        return
    server = Server(server_core)
    print(f"server: {server.name} at {server.url}\n")
    try:
        closed = {"wrk": [], "headroom": []}
        for _ in range(args.rounds):
            if wrk_bin:
                closed["wrk"].append(wrk(wrk_bin, server, c, s, generator_core))
            closed["headroom"].append(
                headroom(server, f'executor = "constant-vus"\nvus = {c}\nthink = "0s"', s, generator_core, work)
            )
        print(f"## Closed model: {c} connections, no think time\n")
        print("| generator | req/s | CPU per request | peak RSS |\n| --- | --- | --- | --- |")
        for name, rows in closed.items():
            if rows:
                print(f"| {name} | {median(rows, 'rate'):,.0f} | {median(rows, 'cpu_us'):.1f} µs | {median(rows, 'rss'):.0f} MiB |")
        if closed["wrk"]:
            print(f"\nheadroom / wrk: req/s {median(closed['headroom'], 'rate') / median(closed['wrk'], 'rate'):.2f}x, "
                  f"CPU per request {median(closed['headroom'], 'cpu_us') / median(closed['wrk'], 'cpu_us'):.2f}x\n")
            half = int(median(closed["wrk"], "rate") / 2)
        else:
            half = int(median(closed["headroom"], "rate") / 2)

        opened = {"wrk2": [], "headroom": []}
        for _ in range(args.rounds):
            if wrk2_bin:
                opened["wrk2"].append(wrk(wrk2_bin, server, c, s, generator_core, rate=half))
            opened["headroom"].append(
                headroom(server, f'executor = "constant-arrival-rate"\nrate = "{half}/s"\nmax_connections = {c}', s, generator_core, work)
            )
        print(f"## Open model: {half:,} req/s (half of the closed rate), {c} connections\n")
        print("| generator | req/s | CPU per request | schedule lag p99 | peak RSS |\n| --- | --- | --- | --- | --- |")
        for name, rows in opened.items():
            if rows:
                lag = f"{median(rows, 'lag99'):.3f} ms" if name == "headroom" else "-"
                print(f"| {name} | {median(rows, 'rate'):,.0f} | {median(rows, 'cpu_us'):.1f} µs | {lag} | {median(rows, 'rss'):.0f} MiB |")
        ours = median(opened["headroom"], "cpu_us")
        if closed["wrk"]:
            print(f"\nheadroom open CPU per request / wrk closed: {ours / median(closed['wrk'], 'cpu_us'):.2f}x", end="")
        if opened["wrk2"]:
            print(f"; / wrk2 at the same rate: {ours / median(opened['wrk2'], 'cpu_us'):.2f}x", end="")
        print("\n")

        live_overhead(server, half, c, s, generator_core, work, args.rounds)

        precise = []
        for _ in range(args.rounds):
            precise.append((
                headroom(server, 'executor = "constant-arrival-rate"\nrate = "10000/s"', s, generator_core, work),
                headroom(server, 'executor = "constant-vus"\nvus = 1\nthink = "0s"', s, generator_core, work),
            ))
        print("## 10,000 req/s against one user in a closed loop\n")
        print("| run | open lag p99 | open p50 | closed (1 user) p50 | difference |\n| --- | --- | --- | --- | --- |")
        for i, (open_run, closed_run) in enumerate(precise, 1):
            print(f"| {i} | {open_run['lag99']:.3f} ms | {open_run['p50']:.3f} ms | {closed_run['p50']:.3f} ms | {open_run['p50'] - closed_run['p50']:+.3f} ms |")
        print()

        if not args.quick:
            long_seconds = max(s, int(1_000_000 / max(half, 1)) + 1)
            long = headroom(server, f'executor = "constant-arrival-rate"\nrate = "{half}/s"\nmax_connections = {c}', long_seconds, generator_core, work)
            print(f"## Memory over run length: {half:,} req/s\n")
            print(f"| run | requests | peak RSS |\n| --- | --- | --- |")
            print(f"| {s} s | {median(opened['headroom'], 'requests'):,.0f} | {median(opened['headroom'], 'rss'):.0f} MiB |")
            print(f"| {long_seconds} s | {long['requests']:,} | {long['rss']:.0f} MiB |\n")
    finally:
        server.stop()

    stall(args, server_core, generator_core, has_oha, work)


def stall(args, server_core, generator_core, has_oha, work):
    """The stall: a fresh demo target per run, so its own account of its answers' time
    (demo_http_answer_seconds) is that run's."""
    s = args.seconds
    stalled = {"headroom": [], "oha": []}
    try:
        for _ in range(args.rounds):
            for name in stalled:
                if name == "oha" and not has_oha:
                    continue
                stall_server = Server(server_core, stall=True)
                try:
                    if name == "headroom":
                        row = headroom(stall_server, 'executor = "constant-arrival-rate"\nrate = "2000/s"\narrivals = "fixed"', s, generator_core, work)
                    else:
                        row = oha(stall_server, 2000, s, generator_core)
                    if name == "headroom":
                        row.update(server_quantiles(stall_server))
                    stalled[name].append(row)
                finally:
                    stall_server.stop()
        print("## A server that stalls 200 ms every second, 2,000 req/s\n")
        print("The server's own account is each request's time in the demo target, up to the last of its answer")
        print("handed to the connection: the burst of 400 answers after each stall takes it milliseconds on one")
        print("core, and that is the server's latency, not the generator's.\n")
        print("| | p50 | p90 | p99 | the server's own p90 / p99 |\n| --- | --- | --- | --- | --- |")
        print(f"| the stall's shape (computed) | {stall_truth(0.5):.1f} ms | {stall_truth(0.9):.1f} ms | {stall_truth(0.99):.1f} ms | |")
        for name, rows in stalled.items():
            if rows:
                # oha holds 50 connections: the server sees at most 50 of a stall's requests,
                # the rest wait in oha, so the server's own account is not the truth there.
                own = f"{median(rows, 'server_p90'):.1f} / {median(rows, 'server_p99'):.1f} ms" if name == "headroom" else "-"
                print(f"| {name} | {median(rows, 'p50'):.2f} ms | {median(rows, 'p90'):.1f} ms | {median(rows, 'p99'):.1f} ms | {own} |")
        ours = stalled["headroom"]
        print(f"\nheadroom / the server's own: p90 {median(ours, 'p90') / median(ours, 'server_p90'):.3f}, p99 {median(ours, 'p99') / median(ours, 'server_p99'):.3f}; "
              f"headroom / the shape: p90 {median(ours, 'p90') / stall_truth(0.9):.3f}, p99 {median(ours, 'p99') / stall_truth(0.99):.3f}")
        if stalled["oha"]:
            print(f"headroom p50 - oha p50: {median(ours, 'p50') - median(stalled['oha'], 'p50'):+.3f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def server_quantiles(server):
    """The demo target's own p90 and p99 of its answers' time, in ms."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=10) as page:
        text = page.read().decode()
    found = {}
    for quantile, key in [("0.9", "server_p90"), ("0.99", "server_p99")]:
        match = re.search(rf'demo_http_answer_seconds{{quantile="{re.escape(quantile)}"}} ([\d.e+-]+)', text)
        found[key] = float(match.group(1)) * 1000 if match else float("nan")
    return found


if __name__ == "__main__":
    main()

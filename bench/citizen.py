#!/usr/bin/env python3
"""citizen: what one command does to the rest of the host while it runs.

Runs a neighbour (wrk, a few connections, against an nginx on loopback)
for the whole measurement, starts the command LEAD seconds in, and records:

- the run queue: procs_running from /proc/stat every INTERVAL seconds
  (2 ms) while the command runs, peak and 99th percentile, minus one for
  this sampler (which is running whenever it reads);
- load1: its value before, its highest value from the command's start to
  SETTLE seconds after its end (the kernel folds the run queue into the
  load average every 5 s, so a spike shows up late or not at all), and
  the rise between them; CPU pressure (PSI some avg10) the same way;
- the neighbour's latency: wrk's p50 and p99 over the measurement.

The command "sleep S" gives the baseline: the neighbour alone. --conn 0
runs no neighbour: the command alone on the host (its own run queue).

usage: citizen.py --out FILE --url URL [--conn N] [--duration S] [--lead S]
                  [--settle S] [--interval S] -- CMD...
"""
import argparse
import json
import re
import subprocess
import sys
import threading
import time

WRK_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def procs_running():
    with open("/proc/stat", "rb") as f:
        for line in f:
            if line.startswith(b"procs_running "):
                return int(line.split()[1])
    return 0


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def psi_some10():
    try:
        with open("/proc/pressure/cpu") as f:
            m = re.search(r"^some avg10=([0-9.]+)", f.read(), re.M)
            return float(m.group(1)) if m else None
    except OSError:
        return None


def quantile(xs, q):
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


class Sampler(threading.Thread):
    """procs_running every interval, and load1 / PSI every 0.5 s."""

    def __init__(self, interval):
        super().__init__(daemon=True)
        self.interval = interval
        self.stop = threading.Event()
        self.runq = []  # (t, procs_running - 1)
        self.load = []  # (t, load1, psi)

    def run(self):
        next_load = 0.0
        while not self.stop.is_set():
            t = time.monotonic()
            self.runq.append((t, max(0, procs_running() - 1)))
            if t >= next_load:
                self.load.append((t, load1(), psi_some10()))
                next_load = t + 0.5
            time.sleep(self.interval)


def wrk_parse(text):
    r = {}
    for q in ("50", "99"):
        m = re.search(rf"^\s+{q}%\s+([0-9.]+)(us|ms|s)\s*$", text, re.M)
        r[f"p{q}_ms"] = float(m.group(1)) * WRK_UNITS[m.group(2)] if m else None
    m = re.search(r"^Requests/sec:\s+([0-9.]+)", text, re.M)
    r["rps"] = float(m.group(1)) if m else None
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--conn", type=int, default=4, help="the neighbour's connections; 0: none")
    ap.add_argument("--duration", type=float, required=True,
                    help="how long the neighbour runs after LEAD (the command's expected wall time)")
    ap.add_argument("--lead", type=float, default=1.0)
    ap.add_argument("--settle", type=float, default=12.0)
    ap.add_argument("--interval", type=float, default=0.002)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")

    before = {"load1": load1(), "psi_some_avg10": psi_some10()}
    s = Sampler(a.interval)
    s.start()
    wrk_s = int(a.lead + a.duration + 1.5)
    wrk = None
    if a.conn > 0:
        wrk = subprocess.Popen(["wrk", "-t1", f"-c{a.conn}", f"-d{wrk_s}s", "--latency", a.url],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(a.lead)
    t0 = time.monotonic()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    t1 = time.monotonic()
    wout = wrk.communicate()[0] if wrk else ""
    while time.monotonic() < t1 + a.settle:
        time.sleep(0.1)
    s.stop.set()
    s.join()

    during = [n for t, n in s.runq if t0 <= t <= t1]
    loads = [(l, p) for t, l, p in s.load if t >= t0]
    peak_load = max([l for l, _ in loads] or [before["load1"]])
    psis = [p for _, p in loads if p is not None]
    doc = {
        "cmd": cmd,
        "rc": rc,
        "wall_s": t1 - t0,
        "interval_s": a.interval,
        "runq": {
            "samples": len(during),
            "peak": max(during) if during else None,
            "p99": quantile(during, 0.99),
            "p50": quantile(during, 0.50),
        },
        "before": before,
        "load1_max": peak_load,
        "load1_rise": peak_load - before["load1"],
        "psi_some_avg10_max": max(psis) if psis else None,
        "neighbour": dict(wrk_parse(wout), conn=a.conn, seconds=wrk_s if wrk else 0),
        "wrk_output": wout,
    }
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""watch: samples a running process (the idle daemon) for a while and
records its CPU use, memory and wake-ups.

CPU comes from utime+stime in /proc/PID/stat (clock ticks; everything the
process's threads used, including threads that ended) and, at nanosecond
resolution, from the sum of /proc/PID/task/*/schedstat. RSS and thread
count come from /proc/PID/status every INTERVAL seconds; wake-ups are the
voluntary context switches of all its threads.

usage: watch.py --pid PID --seconds S [--interval I] --out FILE
"""
import argparse
import json
import os
import statistics
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat_cpu(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        s = f.read()
    rest = s[s.rfind(b")") + 2:].split()
    # Fields 14..17 of stat(5): utime stime cutime cstime (rest starts at field 3).
    ut, st, cut, cst = (int(x) for x in rest[11:15])
    return {"self_s": (ut + st) / TICK, "children_s": (cut + cst) / TICK}


def tasks_sum(pid):
    run_ns = 0
    vol = invol = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run_ns += int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        vol += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        invol += int(line.split()[1])
        except OSError:
            continue
    return run_ns, vol, invol


def status(pid):
    vals = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "Threads", "RssAnon", "RssFile"):
                vals[key] = int(value.split()[0])
    return vals


def main():
    ap = argparse.ArgumentParser(description="Sample a process's idle cost.")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    t0 = time.monotonic()
    c0 = stat_cpu(a.pid)
    r0, v0, i0 = tasks_sum(a.pid)
    rss, anon, threads = [], [], []
    died = False
    end = t0 + a.seconds
    while True:
        try:
            st = status(a.pid)
        except OSError:
            died = True
            break
        rss.append(st.get("VmRSS", 0))
        anon.append(st.get("RssAnon", 0))
        threads.append(st.get("Threads", 0))
        now = time.monotonic()
        if now >= end:
            break
        time.sleep(min(a.interval, end - now))
    wall = time.monotonic() - t0
    rec = {"pid": a.pid, "seconds": wall, "samples": len(rss), "died": died}
    if not died:
        c1 = stat_cpu(a.pid)
        r1, v1, i1 = tasks_sum(a.pid)
        st = status(a.pid)
        cpu = c1["self_s"] - c0["self_s"]
        rec.update({
            "cpu_s": cpu,
            "cpu_pct": 100.0 * cpu / wall,
            "sched_cpu_s": (r1 - r0) / 1e9,
            "sched_cpu_pct": 100.0 * (r1 - r0) / 1e9 / wall,
            "children_cpu_s": c1["children_s"] - c0["children_s"],
            "wakeups_per_s": (v1 - v0) / wall,
            "preemptions_per_s": (i1 - i0) / wall,
            "rss_kb_min": min(rss),
            "rss_kb_median": statistics.median(rss),
            "rss_kb_max": max(rss),
            "rss_anon_kb_max": max(anon),
            "hwm_kb": st.get("VmHWM", 0),
            "threads_max": max(threads),
        })
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main()

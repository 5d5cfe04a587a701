#!/usr/bin/env python3
"""rusage: runs one command and records what it cost the host.

Wall time, user and system CPU seconds and peak RSS come from wait4() on
the child, which also counts every descendant the child waited for (the
probes a `threadwatch run` starts). With --sample, a thread also walks the
process tree every SECONDS and keeps, per process name, the highest VmHWM,
VmRSS, thread count and VMA count (lines of /proc/PID/maps) it saw.

usage: rusage.py --out FILE [--stdout FILE] [--stderr FILE] [--sample SECONDS] -- CMD...
The exit code is the command's.
"""
import argparse
import json
import os
import sys
import threading
import time


def children_map():
    """pid -> parent pid for every process in /proc."""
    parents = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        rest = stat[stat.rfind(b")") + 2:].split()
        parents[int(name)] = int(rest[1])
    return parents


def tree(root):
    """root and all its descendants."""
    parents = children_map()
    kids = {}
    for pid, ppid in parents.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def status_fields(pid):
    vals = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Name", "VmHWM", "VmRSS", "Threads"):
                vals[key] = value.split()[0] if value.split() else ""
    return vals


def vma_count(pid):
    n = 0
    with open(f"/proc/{pid}/maps", "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            n += chunk.count(b"\n")
    return n


class Sampler(threading.Thread):
    def __init__(self, root, interval):
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.stop = threading.Event()
        self.per_name = {}
        self.samples = 0
        self.tree_rss_max_kb = 0

    def one(self):
        tree_rss = 0
        for pid in tree(self.root):
            try:
                st = status_fields(pid)
                vmas = vma_count(pid)
            except (OSError, ValueError):
                continue  # it exited meanwhile
            name = st.get("Name", "?")
            rec = self.per_name.setdefault(
                name, {"hwm_kb": 0, "rss_kb": 0, "threads": 0, "vmas": 0, "pids": set()})
            rss = int(st.get("VmRSS", "0") or 0)
            tree_rss += rss
            rec["hwm_kb"] = max(rec["hwm_kb"], int(st.get("VmHWM", "0") or 0))
            rec["rss_kb"] = max(rec["rss_kb"], rss)
            rec["threads"] = max(rec["threads"], int(st.get("Threads", "0") or 0))
            rec["vmas"] = max(rec["vmas"], vmas)
            rec["pids"].add(pid)
        self.tree_rss_max_kb = max(self.tree_rss_max_kb, tree_rss)
        self.samples += 1

    def run(self):
        while not self.stop.is_set():
            self.one()
            self.stop.wait(self.interval)

    def result(self):
        per = {}
        for name, rec in self.per_name.items():
            r = dict(rec)
            r["processes"] = len(r.pop("pids"))
            per[name] = r
        return {"interval_s": self.interval, "samples": self.samples,
                "tree_rss_max_kb": self.tree_rss_max_kb, "per_name": per}


def main():
    ap = argparse.ArgumentParser(description="Run a command and record its cost.")
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--stdout", help="file for the command's stdout")
    ap.add_argument("--stderr", help="file for the command's stderr")
    ap.add_argument("--sample", type=float, default=0, help="tree sampling period (s)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command given")

    out = open(a.stdout, "wb") if a.stdout else None
    if a.stderr and a.stderr == a.stdout:
        err = out  # one file for both streams, one offset
    else:
        err = open(a.stderr, "wb") if a.stderr else None
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            if out:
                os.dup2(out.fileno(), 1)
            if err:
                os.dup2(err.fileno(), 2)
            os.execvp(cmd[0], cmd)
        except OSError as e:
            sys.stderr.write(f"rusage.py: cannot run {cmd[0]!r}: {e}\n")
        os._exit(127)
    sampler = None
    if a.sample > 0:
        sampler = Sampler(pid, a.sample)
        sampler.start()
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    if sampler:
        sampler.stop.set()
        sampler.join()
    code = os.waitstatus_to_exitcode(status)
    rec = {
        "cmd": cmd,
        "exit": code,
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "maxrss_kb": ru.ru_maxrss,
        "nvcsw": ru.ru_nvcsw,
        "nivcsw": ru.ru_nivcsw,
    }
    if sampler:
        rec["tree"] = sampler.result()
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()

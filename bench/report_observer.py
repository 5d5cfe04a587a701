"""report_observer: section 9 of bench/RESULTS.md, the workload observer's
own cost (bench/observer.sh's results.json). report.py's Bench calls
section() with itself and its helpers (load_json, median, table), which
this module takes as arguments rather than importing report.py back."""

TITLE = "## 9. The workload observer's own cost"
GOAL_SHARE = 0.005  # of one CPU, at 10,000 threads and 5,000 creates/s
GOAL_STALL_US = 1000.0  # the p99.9 rise of a reader's mmap/munmap


def section(self, load_json, median, table):
    L = [TITLE, ""]
    d = load_json(self.p("observer", "results.json"))
    if not d:
        L += ["Not measured in this run (bench/observer.sh, phase observer).", ""]
        self.out += L
        return
    L += ["`threadwatch workloads` beside services of known behaviour (tests/tools/twload), "
          "measured by bench/observer.sh: its CPU from wait4() (user + system, bench/rusage.py) "
          "over its whole run, one window each, and the sweeps' share of it (`observer.sweep_s`: "
          "every thread's sched file read at both ends of the window). The rest is the proc "
          "connector's events, nearly all of it in the kernel's netlink receive path.", ""]
    rows = []
    for name, runs in (("10,000 threads in 50 processes, 5,000 creates/s", d.get("cost", [])),
                       ("the most threads pid_max leaves room for", [d["large"]] if d.get("large") else [])):
        for r in runs:
            rows.append([name, f"{r['threads']:,}", f"{r['creates_per_s']:,.0f}", f"{r['window_s']:.1f} s",
                         f"{r['cpu_s']:.3f} s", f"{r['sweep_s']:.3f} s", f"{100 * r['share_of_cpu']:.2f}%",
                         f"{r['max_rss_kb'] / 1024:.1f} MiB"])
    L += [table(["scene", "threads", "creates/s seen", "window", "CPU", "of it sweeps",
                 "share of one CPU", "peak RSS"], rows), ""]
    sv = d.get("service")
    if sv and sv.get("steady"):
        rows = [[i, f"{w['window_s']:.1f} s", f"{w['threads']:,}", f"{w['creates_per_s']:,.0f}",
                 f"{w['threads_read']:,}", f"{w['cpu_s']:.3f} s", f"{100 * w['share_of_cpu']:.2f}%"]
                for i, w in enumerate(sv["steady"], 2)]
        L += ["threadwatch-observer, as the packaged service runs it, beside the same services: "
              f"{sv['windows']} windows in a row (`--stdout`). The first reads every thread at both "
              f"ends ({sv['first']['threads_read']:,} reads, {sv['first']['cpu_s']:.3f} s of CPU); "
              "each later window starts from the last one's end and reads each thread once. The "
              "connector is asked for FORK and EXEC alone where the kernel filters (Linux 6.6), "
              "and each process's exits are derived. Per window, its own measure (`observer.cpu_s`):", ""]
        L += [table(["window", "length", "threads", "creates/s seen", "threads read", "CPU",
                     "share of one CPU"], rows), ""]
        L += [f"Over the whole run by wait4(), less the first window: "
              f"{100 * sv['steady_share_of_cpu']:.2f}% of one CPU (the documents and their printing "
              f"included); peak RSS {sv['max_rss_kb'] / 1024:.1f} MiB.", ""]
    costs = [r["share_of_cpu"] for r in d.get("cost", [])]
    if sv and sv.get("steady"):
        share = sv["steady_share_of_cpu"]
        met = share <= GOAL_SHARE
        self.targets.append(("observer at 10,000 threads and 5,000 creates/s",
                             f"≤ {100 * GOAL_SHARE:g}% of one CPU",
                             f"{100 * share:.2f}% (threadwatch-observer, {len(sv['steady'])} "
                             "windows after its first)", met))
        L += [f"Target: at most {100 * GOAL_SHARE:g}% of one CPU, for the observer as it runs on a "
              f"host (the service, window after window): {'**met**' if met else '**missed**'} "
              f"({100 * share:.2f}%). A one-off `threadwatch workloads` window reads every thread "
              f"twice and opens the connector for itself: "
              + (f"{100 * median(costs):.2f}% (median of {len(costs)})." if costs else "not measured.")
              , ""]
        if not met:
            w = min(sv["steady"], key=lambda x: x["cpu_s"])
            ev = w["cpu_s"] - w["sweep_s"]
            msgs = w["creates_per_s"] * w["window_s"]
            L += ["What it is spent on, measured in its cheapest window: the one read of every "
                  f"thread's sched file ({w['threads_read']:,} reads, {w['sweep_s']:.3f} s) and the "
                  f"connector's FORK messages, about {w['creates_per_s']:,.0f} a second, "
                  f"{ev:.3f} s, {1e6 * ev / msgs:.2f} µs each, copied and freed in the kernel's "
                  "netlink receive path (perf record: `_copy_to_iter`, `skb_release_data`, the "
                  "paravirtual interrupt enable of the socket's queue lock). At this rate the "
                  f"messages alone are {100 * ev / w['window_s']:.2f}% of one CPU on this host, a "
                  "floor for an observer that hears each create one message at a time.", ""]
    elif costs:
        med = median(costs)
        met = med <= GOAL_SHARE
        self.targets.append(("observer at 10,000 threads and 5,000 creates/s",
                             f"≤ {100 * GOAL_SHARE:g}% of one CPU",
                             f"{100 * med:.2f}% (median of {len(costs)} windows)", met))
        L += [f"Target: at most {100 * GOAL_SHARE:g}% of one CPU: "
              f"{'**met**' if met else '**missed**'} ({100 * med:.2f}%, median of {len(costs)} "
              "60 s windows).", ""]
        if not met:
            c = d["cost"][0]
            ev = c["cpu_s"] - c["sweep_s"]
            L += ["Why: two parts, both measured. The events: 5,000 creates and 5,000 exits a "
                  f"second are about 10,000 connector messages a second, which took {ev:.2f} s of "
                  f"the window ({100 * ev / c['wall_s']:.2f}% of a CPU), about "
                  f"{1e6 * ev / (2 * 5000 * c['window_s']):.1f} µs each, three quarters of it in "
                  "the kernel's netlink receive (copy and free of each message; perf record). The "
                  f"sweeps: {c['sweep_s']:.2f} s for two reads of {c['threads']:,} threads' "
                  "sched files. What would meet it: the connector's event filter (Linux 6.6) "
                  "asking for FORK and EXEC only, the exits then counted as creates less the "
                  "change in live threads (half the messages); and the service "
                  "(threadwatch-observer) keeping each window's end as the next one's start "
                  "(one sweep a window, not two).", ""]
    if d.get("large"):
        lg = d["large"]
        L += [f"At 100,000 threads (carried from {lg['threads']:,} at "
              f"{1e6 * lg['sweep_s'] / (2 * lg['threads']):.1f} µs a thread read, since pid_max "
              f"leaves no room for more here): sweeps of {lg['sweep_s_at_100000']:.1f} s a "
              f"window, {100 * lg['share_of_cpu_at_100000']:.1f}% of one CPU at 60 s windows "
              "for a one-off window; the service reads each thread once a window, "
              f"{lg['sweep_s_at_100000'] / 2:.1f} s, {50 * lg['sweep_s_at_100000'] / 60:.1f}% of one "
              "CPU at its default 60 s.", ""]
    stall = d.get("stall", [])
    if stall:
        rows, rises = [], []
        for i, r in enumerate(stall, 1):
            rise = r["with"]["p999_us"] - r["without"]["p999_us"]
            rises.append(rise)
            rows.append([i, f"{r['without']['p999_us']:.0f} µs", f"{r['with']['p999_us']:.0f} µs",
                         f"{rise:+.0f} µs", f"{r['without']['max_us']:.0f} µs", f"{r['with']['max_us']:.0f} µs"])
        L += ["A process of 10,000 threads whose main thread maps, touches and unmaps 64 KiB "
              "every millisecond and times each pair, without the observer and while the "
              "observer reads it (its 10,000 sched files, its maps, PAGEMAP_SCAN over its "
              "10,000 stacks), rounds interleaved:", ""]
        L += [table(["round", "p99.9 without", "p99.9 with", "rise", "max without", "max with"], rows), ""]
        worst = max(rises)
        met = worst <= GOAL_STALL_US
        self.targets.append(("observer's stall on a 10,000-thread process",
                             f"p99.9 of mmap+munmap rises ≤ {GOAL_STALL_US / 1000:g} ms",
                             f"{worst:+.0f} µs (worst of {len(rises)} rounds)", met))
        L += [f"Target: the p99.9 rises by at most {GOAL_STALL_US / 1000:g} ms: "
              f"{'**met**' if met else '**missed**'} ({worst:+.0f} µs at worst).", ""]
    self.out += L

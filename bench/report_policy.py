"""report_policy: section 10 of bench/RESULTS.md, the daemon's switch and
hand-off times against `threadwatch run`'s on the same host (bench/policy.sh's
results.json). report.py's Bench calls section() with itself and its helpers
(load_json, table), which this module takes as arguments rather than
importing report.py back."""

TITLE = "## 10. The daemon's figures against threadwatch run's"
FIGURES = (("ctxsw", "a switch (ctxsw high_ns)"), ("handoff", "a same-CPU hand-off (handoff same_cpu_ns)"))
SETTINGS = (("daemon", "the daemon (probe_sched = priced)"), ("run", "`threadwatch run` (normal, nice 0)"),
            ("idle", "`run --sched idle --nice 10` (SCHED_IDLE)"))


def overlap(a, b):
    """Whether two [value, lo, hi, ...] figures' CIs overlap."""
    return a[1] is not None and b[1] is not None and a[1] <= b[2] and b[1] <= a[2]


def median_ci(v):
    """The median of v and its distribution-free CI from order statistics
    (the sign test's): [x(k), x(n+1-k)] for the largest k whose two tails
    hold at most 5%, else the range; and the CI's coverage."""
    from math import comb
    x, n = sorted(v), len(v)
    med = (x[(n - 1) // 2] + x[n // 2]) / 2
    k, cover = 1, 1 - 2 * 0.5 ** n
    for j in range(1, n // 2 + 1):
        c = 1 - 2 * sum(comb(n, i) for i in range(j)) * 0.5 ** n
        if c >= 0.95:
            k, cover = j, c
    return med, x[k - 1], x[n - k], cover


def cell(f):
    if not f or f[0] is None:
        return "not measured"
    cpu = f" CPU {f[5]}" if len(f) > 5 and f[5] is not None else ""
    return f"{f[0]:,.0f} ns [{f[1]:,.0f}, {f[2]:,.0f}] ({f[3]}, nice {f[4]}{cpu})"


def section(self, load_json, table):
    L = [TITLE, ""]
    d = load_json(self.p("policy", "results.json"))
    if not d or not d.get("rounds"):
        L += ["Not measured in this run (bench/policy.sh, phase policy).", ""]
        self.out += L
        return
    rounds = d["rounds"]
    L += ["The daemon prices the services with its switch and hand-off times, so they must be what a "
          "normal thread pays. Each round, interleaved: one daemon cycle at its defaults, "
          "`threadwatch run ctxsw handoff` at the caller's normal policy, and the same under "
          "SCHED_IDLE, the daemon's former default; all `--quick`, pinned to the quiet CPU, with "
          "each document's recorded policy and nice (bench/policy.sh).", ""]
    agree, total = 0, 0
    for key, words in FIGURES:
        rows = []
        for i, r in enumerate(rounds, 1):
            dm, rn, idl = r["daemon"][key], r["run"][key], r["idle"][key]
            ok = overlap(dm, rn)
            agree += ok
            total += 1
            rows.append([str(i), cell(dm), cell(rn), "yes" if ok else "**no**", cell(idl),
                         f"{idl[0] / rn[0]:.2f}×" if idl[0] and rn[0] else "—"])
        L += [f"{words[0].upper()}{words[1:]}:", "",
              table(["round"] + [w for _, w in SETTINGS[:2]] + ["CIs overlap"] + [SETTINGS[2][1], "idle / run"],
                    rows), ""]
    # How far apart the settings are, against how far apart the same
    # setting is from one round to the next (a run's CI is of its own
    # samples, and does not hold what changes between runs).
    rows = []
    for key, words in FIGURES:
        dr = [r["daemon"][key][0] / r["run"][key][0] for r in rounds if r["daemon"][key][0] and r["run"][key][0]]
        ir = [r["idle"][key][0] / r["run"][key][0] for r in rounds if r["idle"][key][0] and r["run"][key][0]]
        rr = [b["run"][key][0] / a["run"][key][0] for a, b in zip(rounds, rounds[1:])
              if a["run"][key][0] and b["run"][key][0]]
        span = lambda v: f"{min(v):.3f} to {max(v):.3f}" if v else "—"
        rows.append([key, span(dr), span(rr), span(ir)])
    L += ["Ratios per round: the daemon's figure over run's; run's over its own the round before (the "
          "same setting twice); SCHED_IDLE's over run's.", "",
          table(["figure", "daemon / run", "run / run, a round apart", "idle / run"], rows), ""]
    # the same setting against itself a round later, by the same test
    self_agree = sum(overlap(a["run"][k], b["run"][k]) for k, _ in FIGURES for a, b in zip(rounds, rounds[1:]))
    self_total = len(FIGURES) * (len(rounds) - 1)
    L += [f"A run's CI against another's, round by round: the daemon's and run's overlap in {agree} of "
          f"{total}; `threadwatch run` against itself a round later in {self_agree} of {self_total}. "
          "Each such CI is of one run's samples and does not hold what changes between runs on a guest "
          "(which physical CPU a vCPU is on, what else the host runs), so it cannot judge one setting "
          "against another. Each setting as runs, then: the median of its rounds and the "
          "distribution-free CI of that median (order statistics, the sign test's), which holds the "
          "spread between runs:", ""]
    rows, agree_runs = [], []
    for key, words in FIGURES:
        cis = {}
        for name, _ in SETTINGS:
            v = [r[name][key][0] for r in rounds if r[name][key][0]]
            if len(v) >= 2:
                cis[name] = median_ci(v)
        if "daemon" not in cis or "run" not in cis:
            continue
        dm, rn = cis["daemon"], cis["run"]
        ok = dm[1] <= rn[2] and rn[1] <= dm[2]
        agree_runs.append(ok)
        fmt = lambda c: f"{c[0]:,.0f} ns [{c[1]:,.0f}, {c[2]:,.0f}] ({100 * c[3]:.1f}%)"
        rows.append([key, fmt(dm), fmt(rn), "yes" if ok else "**no**",
                     fmt(cis["idle"]) if "idle" in cis else "—", f"{dm[0] / rn[0]:.3f}"])
    L += [table(["figure", "the daemon, median [CI]", "`threadwatch run`, median [CI]", "CIs overlap",
                 "SCHED_IDLE, median [CI]", "daemon / run"], rows), ""]
    met = bool(agree_runs) and all(agree_runs)
    min_idle = min((r["idle"][k][0] / r["run"][k][0] for r in rounds for k, _ in FIGURES
                    if r["idle"][k][0] and r["run"][k][0]), default=float("nan"))
    self.targets.append(("daemon's switch and hand-off = run's",
                         f"CIs of the median of {len(rounds)} runs each overlap",
                         f"{sum(agree_runs)} of {len(agree_runs)} figures", met))
    L += [f"Target: the daemon's figure and `threadwatch run`'s agree within their CIs, as runs: "
          f"{'**met**' if met else '**missed**'} ({sum(agree_runs)} of {len(agree_runs)} figures, "
          f"{len(rounds)} rounds). Under SCHED_IDLE the same probes took at least {min_idle:.2f} times "
          "as long in every round, which is why "
          "the probes whose times price the services run at SCHED_OTHER, nice 19 "
          "(doc/configuration.md).", ""]
    self.out += L

#!/bin/bash
# bench/observer.sh: the workload observer's own cost, run by bench/run.sh
# (phase observer) or alone. Three scenes, each on services of known
# behaviour (tests/tools/twload):
#  cost    10,000 threads in 50 processes and a process creating 5,000
#          threads a second; `threadwatch workloads --for OBS_WINDOW_S`
#          OBS_ROUNDS times, its CPU taken by wait4() (bench/rusage.py);
#  service the same services, watched by threadwatch-observer as the
#          packaged service runs it, OBS_ROUNDS + 1 windows of OBS_WINDOW_S
#          (--stdout): its CPU by wait4(), the first window's (two reads
#          of every thread) told apart from the rest (one read each, none
#          of a quiet process's);
#  serviceall the same with --read-all-threads: every thread read at each
#          window's end, as if every one had run;
#  stall   a process of 10,000 threads whose main thread times an mmap and
#          munmap every millisecond: its p99.9 over OBS_STALL_S without the
#          observer and over the same while the observer reads it, rounds
#          interleaved;
#  percreate what the BPF counter adds to a thread create and join, end to
#          end (tests/tools/twbpfcost: the creator's own CPU with and
#          without the programs, 41 rounds interleaved, on one CPU), since
#          the programs' own clock misses the tracepoint's call into them;
#          as it runs by default (exits derived) and with its exit program;
#  large   up to 100,000 threads in processes of 5,000, one window: as many
#          as pid_max and threads-max leave room for (with 4,000 spare), and
#          the cost per thread carried to 100,000 when fewer fit.
# Writes $OBS_OUT/results.json (and each run's raw output beside it).
#
# Environment: B (build dir), SRC; OBS_OUT [$B/bench/observer]; OBS_ROUNDS [3];
# OBS_WINDOW_S [60]; OBS_STALL_S [20];
# OBS_SCENES ["cost service serviceall stall percreate large"].
set -euo pipefail
: "${B:?B (the build directory) must be set}"
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
OUT=${OBS_OUT:-$B/bench/observer}
ROUNDS=${OBS_ROUNDS:-3}
WIN=${OBS_WINDOW_S:-60}
STALL=${OBS_STALL_S:-20}
SCENES=${OBS_SCENES:-cost service serviceall stall percreate large}
scene() { [[ " $SCENES " == *" $1 "* ]]; }
TW=$B/threadwatch L=$B/tests/twload OBSD=$B/threadwatch-observer BC=$B/tests/twbpfcost
[ -x "$TW" ] && [ -x "$L" ] && [ -x "$OBSD" ] || { echo "observer.sh: build $TW, $OBSD and $L first" >&2; exit 1; }
mkdir -p "$OUT"
# each scene's own files: NAME.*, NAME1.*, NAME_exits.* (not serviceall's for service)
for s in $SCENES; do rm -f "$OUT/$s".* "$OUT/$s"[0-9_]*.*; done
pids=()
stop_all() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; pids=(); }
trap stop_all EXIT
log() { echo "[observer] $*" >&2; }
ready() { # ready FILE: waits up to 120 s for twload's "ready"
	for _ in $(seq 1 1200); do grep -q ready "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "observer.sh: $1 never got ready" >&2
	exit 1
}
twl() { # twl NAME ARGS...: a twload in the background
	local n=$1
	shift
	"$L" "$@" --seconds 3600 >"$OUT/$n.out" 2>&1 &
	pids+=($!)
}
observe() { # observe NAME SECONDS [ARGS]: one window, its cost by wait4()
	local n=$1 s=$2
	shift 2
	python3 "$SRC/bench/rusage.py" --out "$OUT/$n.ru.json" --stdout "$OUT/$n.json" -- \
		"$TW" workloads --json --no-costs --for "${s}s" "$@" 2>/dev/null
}

if scene cost || scene service || scene serviceall; then
	log "cost: 50 processes of 200 threads and 5,000 creates/s"
	for i in $(seq 1 50); do twl "park$i" glibcstacks 199; done
	twl creator create 5000
	for i in $(seq 1 50); do ready "$OUT/park$i.out"; done
	ready "$OUT/creator.out"
	for r in $(seq 1 "$ROUNDS"); do
		scene cost || break
		log "cost round $r: a ${WIN} s window"
		observe "cost$r" "$WIN"
	done
	for sv in service serviceall; do
		scene "$sv" || continue
		log "$sv: threadwatch-observer, $((ROUNDS + 1)) windows of ${WIN} s"
		python3 "$SRC/bench/rusage.py" --out "$OUT/$sv.ru.json" --stdout "$OUT/$sv.jsonl" -- \
			"$OBSD" --stdout --windows $((ROUNDS + 1)) --window "${WIN}s" \
			$([ "$sv" = serviceall ] && echo --read-all-threads) 2>/dev/null
	done
	stop_all
fi

# lat_mark NAME: the sampler's figures since its last mark, as line NAME
lat_mark() {
	local n
	n=$(grep -c '^lat ' "$OUT/lat.out" || true)
	kill -USR1 "$LAT"
	for _ in $(seq 1 200); do [ "$(grep -c '^lat ' "$OUT/lat.out" || true)" -gt "$n" ] && break; sleep 0.05; done
	grep '^lat ' "$OUT/lat.out" | tail -n 1 | sed "s/^lat /$1 /" >>"$OUT/lat.txt"
}
if scene stall; then
	log "stall: a 10,000-thread process timing mmap and munmap"
	twl lat mmaplat 10000
	ready "$OUT/lat.out"
	LAT=${pids[0]}
	: >"$OUT/lat.txt"
	for r in $(seq 1 "$ROUNDS"); do
		lat_mark before # not counted
		sleep "$STALL"
		lat_mark without
		observe "stall$r" "$STALL" --by process
		lat_mark with
	done
	stop_all
fi

if scene percreate; then
	log "percreate: the BPF counter's cost to a create, end to end"
	taskset -c "$(($(nproc) - 1))" "$BC" 41 20000 >"$OUT/percreate.json" ||
		{ log "percreate: the BPF counter cannot load here"; rm -f "$OUT/percreate.json"; }
	# and with its exit program, as --no-event-filter attaches it
	taskset -c "$(($(nproc) - 1))" "$BC" 41 20000 --exits >"$OUT/percreate_exits.json" ||
		rm -f "$OUT/percreate_exits.json"
fi

if scene large; then
	room=$(($(cat /proc/sys/kernel/pid_max) < $(cat /proc/sys/kernel/threads-max) ?
		$(cat /proc/sys/kernel/pid_max) : $(cat /proc/sys/kernel/threads-max)))
	room=$((room - $(ls /proc/*/task 2>/dev/null | grep -c '^[0-9]') - 4000))
	nbig=$((room / 5000 < 20 ? room / 5000 : 20))
	log "large: $nbig processes of 5,000 threads (room for $room more tasks)"
	for i in $(seq 1 "$nbig"); do twl "big$i" glibcstacks 4999; done
	for i in $(seq 1 "$nbig"); do ready "$OUT/big$i.out"; done
	observe large "$WIN"
	stop_all
fi

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def run(n):
    d, ru = json.load(open(f"{out}/{n}.json")), json.load(open(f"{out}/{n}.ru.json"))
    cpu = ru.get("user_s", 0) + ru.get("sys_s", 0)
    wl = d["workloads"]
    # the BPF counter's run time in the kernel, in the threads it counts,
    # is the observer's cost too (its programs time a sixteenth of runs)
    ik = d["observer"].get("in_kernel_s", 0)
    return {"cpu_s": cpu, "in_kernel_s": ik, "wall_s": ru.get("wall_s"),
            "process_share_of_cpu": cpu / ru["wall_s"], "share_of_cpu": (cpu + ik) / ru["wall_s"],
            "counter": d["mechanisms"]["creates"].get("mechanism", {}).get("counter"),
            "self_share_of_cpu": d["observer"]["share_of_cpu"], "window_s": d["window_s"],
            "threads": sum(w["threads"] or 0 for w in wl),
            "creates_per_s": sum(w["creates_per_s"] or 0 for w in wl),
            "sweep_s": d["observer"]["sweep_s"], "max_rss_kb": d["observer"]["max_rss_kb"]}
import os
old = json.load(open(f"{out}/results.json")) if os.path.exists(f"{out}/results.json") else {}
res = dict(old)
if os.path.exists(f"{out}/cost1.json"):
    res["cost"] = [run(f"cost{r}") for r in range(1, rounds + 1)]
def service(name):
    # the first window reads every thread twice; the rest once each. The
    # steady share is the process's whole CPU (wait4) less the first
    # window's own, over the wall time after it: what it spends between
    # windows (the documents, their printing) is in it.
    docs = [json.loads(l) for l in open(f"{out}/{name}.jsonl") if l.strip()]
    ru = json.load(open(f"{out}/{name}.ru.json"))
    cpu = ru.get("user_s", 0) + ru.get("sys_s", 0)
    first = docs[0]["observer"]
    steady = [{"window_s": d["window_s"], "cpu_s": d["observer"]["cpu_s"],
               "in_kernel_s": d["observer"].get("in_kernel_s", 0),
               "counter": d["mechanisms"]["creates"].get("mechanism", {}).get("counter"),
               "share_of_cpu": d["observer"]["share_of_cpu"], "sweep_s": d["observer"]["sweep_s"],
               "threads_read": d["observer"]["threads_read"],
               "threads_not_read": ((d["mechanisms"]["switches"].get("quiet") or {}).get("tally")
                                    or {}).get("threads_not_read", 0),
               "threads": sum(w["threads"] or 0 for w in d["workloads"]),
               "creates_per_s": sum(w["creates_per_s"] or 0 for w in d["workloads"]),
               "exits_derived": d["mechanisms"]["creates"].get("exits", {}).get("event_filter")}
              for d in docs[1:]]
    return {"windows": len(docs), "first": {"cpu_s": first["cpu_s"], "wall_s": first["wall_s"],
                      "sweep_s": first["sweep_s"], "threads_read": first["threads_read"]},
                      "steady": steady, "cpu_s": cpu, "wall_s": ru["wall_s"],
                      "steady_in_kernel_s": sum(w["in_kernel_s"] for w in steady),
                      "steady_process_share_of_cpu": (cpu - first["cpu_s"]) / (ru["wall_s"] - first["wall_s"]),
                      "steady_share_of_cpu": (cpu - first["cpu_s"] + sum(w["in_kernel_s"] for w in steady))
                                             / (ru["wall_s"] - first["wall_s"]),
                      "max_rss_kb": ru.get("maxrss_kb")}
for name, key in (("service", "service"), ("serviceall", "service_all")):
    if os.path.exists(f"{out}/{name}.jsonl"):
        res[key] = service(name)
if os.path.exists(f"{out}/lat.txt"):
    marks = [l.split() for l in open(f"{out}/lat.txt")]
    fig = lambda m: dict(zip(m[1::2], map(float, m[2::2])))
    rows, cur = [], {}
    for m in marks:
        if m[0] in ("without", "with"):
            cur[m[0]] = fig(m)
        if m[0] == "with":
            rows.append(cur)
            cur = {}
    res["stall"] = rows
for n in ("percreate", "percreate_exits"):
    if os.path.exists(f"{out}/{n}.json"):
        res[n] = json.load(open(f"{out}/{n}.json"))
try:
    res["large"] = run("large")
    # the cost per thread read, carried to 100,000 threads (two reads each)
    lg = res["large"]
    per_thread = lg["sweep_s"] / (2 * lg["threads"])
    lg["sweep_s_at_100000"] = per_thread * 2 * 100000
    lg["share_of_cpu_at_100000"] = (lg["cpu_s"] + lg["in_kernel_s"] - lg["sweep_s"] + lg["sweep_s_at_100000"]) / lg["wall_s"]
except FileNotFoundError:
    pass
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
print(json.dumps(res, indent=1))
PY

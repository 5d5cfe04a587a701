#!/bin/bash
# bench/observer.sh: the workload observer's own cost, run by bench/run.sh
# (phase observer) or alone. Three scenes, each on services of known
# behaviour (tests/tools/twload):
#  cost    10,000 threads in 50 processes and a process creating 5,000
#          threads a second; `threadwatch workloads --for OBS_WINDOW_S`
#          OBS_ROUNDS times, its CPU taken by wait4() (bench/rusage.py);
#  stall   a process of 10,000 threads whose main thread times an mmap and
#          munmap every millisecond: its p99.9 over OBS_STALL_S without the
#          observer and over the same while the observer reads it, rounds
#          interleaved;
#  large   up to 100,000 threads in processes of 5,000, one window: as many
#          as pid_max and threads-max leave room for (with 4,000 spare), and
#          the cost per thread carried to 100,000 when fewer fit.
# Writes $OBS_OUT/results.json (and each run's raw output beside it).
#
# Environment: B (build dir), SRC; OBS_OUT [$B/bench/observer]; OBS_ROUNDS [3];
# OBS_WINDOW_S [60]; OBS_STALL_S [20]; OBS_SCENES ["cost stall large"].
set -euo pipefail
: "${B:?B (the build directory) must be set}"
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
OUT=${OBS_OUT:-$B/bench/observer}
ROUNDS=${OBS_ROUNDS:-3}
WIN=${OBS_WINDOW_S:-60}
STALL=${OBS_STALL_S:-20}
SCENES=${OBS_SCENES:-cost stall large}
scene() { [[ " $SCENES " == *" $1 "* ]]; }
TW=$B/threadwatch L=$B/tests/twload
[ -x "$TW" ] && [ -x "$L" ] || { echo "observer.sh: build $TW and $L first" >&2; exit 1; }
mkdir -p "$OUT"
for s in $SCENES; do rm -f "$OUT/$s"*.json; done
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

if scene cost; then
	log "cost: 50 processes of 200 threads and 5,000 creates/s"
	for i in $(seq 1 50); do twl "park$i" glibcstacks 199; done
	twl creator create 5000
	for i in $(seq 1 50); do ready "$OUT/park$i.out"; done
	ready "$OUT/creator.out"
	for r in $(seq 1 "$ROUNDS"); do
		log "cost round $r: a ${WIN} s window"
		observe "cost$r" "$WIN"
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
    return {"cpu_s": cpu, "wall_s": ru.get("wall_s"), "share_of_cpu": cpu / ru["wall_s"],
            "self_share_of_cpu": d["observer"]["share_of_cpu"], "window_s": d["window_s"],
            "threads": sum(w["threads"] or 0 for w in wl),
            "creates_per_s": sum(w["creates_per_s"] or 0 for w in wl),
            "sweep_s": d["observer"]["sweep_s"], "max_rss_kb": d["observer"]["max_rss_kb"]}
import os
old = json.load(open(f"{out}/results.json")) if os.path.exists(f"{out}/results.json") else {}
res = dict(old)
if os.path.exists(f"{out}/cost1.json"):
    res["cost"] = [run(f"cost{r}") for r in range(1, rounds + 1)]
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
try:
    res["large"] = run("large")
    # the cost per thread read, carried to 100,000 threads (two reads each)
    lg = res["large"]
    per_thread = lg["sweep_s"] / (2 * lg["threads"])
    lg["sweep_s_at_100000"] = per_thread * 2 * 100000
    lg["share_of_cpu_at_100000"] = (lg["cpu_s"] - lg["sweep_s"] + lg["sweep_s_at_100000"]) / lg["wall_s"]
except FileNotFoundError:
    pass
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
print(json.dumps(res, indent=1))
PY

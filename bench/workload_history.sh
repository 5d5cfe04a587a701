#!/bin/bash
# bench/workload_history.sh: what the workloads' history costs, measured,
# for doc/workloads.md and the closing figures of the daemon's side:
#  store  bytes a host-day takes: 30 services of known behaviour
#         (tests/tools/twload) beside the host's own, one observer window
#         of them, stored WH_DAY_WINDOWS times (a day of 60 s windows) at
#         workloads_top = 20 through the daemon's own code (tests/tools/twkeep);
#  idle   the daemon's and the observer's CPU while nothing else happens:
#         threadwatchd (no cycle due) taking the observer's default 60 s
#         windows for WH_IDLE_S seconds, each one's utime + stime from
#         /proc/PID/stat before and after.
# Prints one JSON document on standard output.
# Environment: B (build dir), SRC; WH_IDLE_S [600]; WH_DAY_WINDOWS [1440].
set -euo pipefail
: "${B:?B (the build directory) must be set}"
IDLE=${WH_IDLE_S:-600}
DAY=${WH_DAY_WINDOWS:-1440}
W=$(mktemp -d /tmp/tw-wh.XXXXXX)
pids=()
stop_all() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap stop_all EXIT
for i in $(seq 1 30); do
	"$B/tests/twload" glibcstacks 4 --name "twbench$i" --seconds 3600 >"$W/l$i.out" 2>&1 &
	pids+=($!)
done
for i in $(seq 1 30); do
	for _ in $(seq 1 100); do grep -q ready "$W/l$i.out" && break; sleep 0.1; done
done
"$B/threadwatch-observer" --once --window 5s >"$W/window.json" 2>/dev/null
store=$("$B/tests/twkeep" "$W/keep.db" "$DAY" 60 20 <"$W/window.json")
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null || true
pids=()

# ticks PID: utime + stime in clock ticks
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
mkdir -p "$W/probes" "$W/d"
for p in ctxsw threads map32 handoff stackmem createscale; do printf '#!/bin/sh\nexit 1\n' >"$W/probes/$p"; chmod 755 "$W/probes/$p"; done
: >"$W/empty.conf"
"$B/threadwatchd" --config "$W/empty.conf" --state-dir "$W/d" --port 0 --probe-dir "$W/probes" \
	--interval 365d --splay 0 --observer-socket "$W/obs.sock" >"$W/d.log" 2>&1 &
dpid=$!
pids+=($dpid)
for _ in $(seq 1 100); do [ -S "$W/obs.sock" ] && break; sleep 0.1; done
# its first cycle (the fake probes fail at once) is over before the window
sleep 5
"$B/threadwatch-observer" --push "$W/obs.sock" >"$W/obs.log" 2>&1 &
opid=$!
pids+=($opid)
sleep 5
d0=$(ticks "$dpid") o0=$(ticks "$opid") t0=$(date +%s.%N)
sleep "$IDLE"
d1=$(ticks "$dpid") o1=$(ticks "$opid") t1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
windows=$(sqlite3 "$W/d/threadwatch.db" 'SELECT count(*) FROM workload_windows' 2>/dev/null || echo null)
python3 - "$store" "$d0" "$d1" "$o0" "$o1" "$t0" "$t1" "$hz" "$windows" <<'PY'
import json, sys
store = json.loads(sys.argv[1])
d0, d1, o0, o1 = map(int, sys.argv[2:6])
t0, t1, hz = float(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8])
wall = t1 - t0
print(json.dumps({
    "store": store,
    "idle": {"seconds": round(wall, 1), "windows_stored": None if sys.argv[9] == "null" else int(sys.argv[9]),
             "threadwatchd_cpu_s": (d1 - d0) / hz, "threadwatchd_share_of_cpu": (d1 - d0) / hz / wall,
             "observer_cpu_s": (o1 - o0) / hz, "observer_share_of_cpu": (o1 - o0) / hz / wall},
}, indent=1))
PY

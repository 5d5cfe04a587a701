#!/bin/bash
# bench/run.sh: `make bench`. Measures threadwatch side by side with the
# tools people use today (perf bench, stress-ng, nginx) on this machine and
# writes bench/RESULTS.md. Every comparison runs in the same invocation,
# interleaved, and is reported as a ratio with its spread; the raw outputs
# stay in $BENCH_WORK for a second look.
#
# Environment (defaults in brackets; use small values while developing):
#   B, SRC                 build directory and source tree (set by make)
#   BENCH_RUNS [10]        interleaved rounds of ctxsw / perf bench / stress-ng --switch
#   BENCH_THREADS_RUNS [5] interleaved rounds of threads / stress-ng --pthread
#   BENCH_HANDOFF_RUNS [5] interleaved rounds of handoff / a futex and a pipe ping-pong on
#                          one CPU and on the probe's pair of CPUs (bench/pingpong.c)
#   BENCH_MAP32_RUNS [3]   standalone map32 runs (cost to the host)
#   BENCH_CYCLES [3]       full default cycles through `threadwatch run`
#   BENCH_PEER_S [3]       seconds of each perf bench / stress-ng run
#   BENCH_IDLE_S [600]     how long the idle daemon is watched
#   BENCH_SEED_DAYS [365]  days of history twseed writes, every BENCH_SEED_EVERY [5] minutes
#   BENCH_API_ROUNDS [5]   interleaved wrk rounds per endpoint, BENCH_API_S [4] s each,
#                          BENCH_API_CONN [16] connections, BENCH_API_THREADS [2] wrk threads
#   BENCH_QUERY_REPS [9]   timed repetitions of each storage query
#   BENCH_PROFILE_S [4]    seconds of each perf record of the daemon
#   BENCH_FLEET_SIZES ["200 1000"], BENCH_FLEET_ROUNDS [5]: targets and rounds of
#                          `threadwatch fleet` against fleet_stub.py (BENCH_FLEET_MAX [1000] ports)
#   BENCH_WORK [$B/bench]  raw outputs (emptied first); BENCH_KEEP_DB=1 keeps the databases
#   BENCH_OUT [$SRC/bench/RESULTS.md]
#   BENCH_CITIZEN_ROUNDS [5] interleaved rounds of the good-citizen phase: the neighbour
#                          (wrk, BENCH_CITIZEN_CONN [4] connections, on nginx) alone, beside a
#                          default cycle, beside perf bench and beside stress-ng for as long,
#                          and a default cycle with no neighbour (its own run queue)
#   BENCH_LOAD_MAX [0.3]   load1 per CPU above which a phase (or a citizen run) does not
#                          start; it waits up to BENCH_SETTLE_S [300] s for the load to fall,
#                          and one that still starts above it is refused in the report
#   BENCH_PHASES [all]     or some of: idle ctxsw handoff threads cycles seed api citizen fleet observer policy
#                          (api needs seed); a partial run writes its report to
#                          $BENCH_WORK/RESULTS.md and leaves bench/RESULTS.md as it is, but for
#                          fleet, handoff, observer and policy, whose sections of bench/RESULTS.md it rewrites
#                          (`make bench BENCH_PHASES=handoff`)
set -euo pipefail

: "${B:?B (the build directory) must be set}"
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
BENCH_RUNS=${BENCH_RUNS:-10}
BENCH_THREADS_RUNS=${BENCH_THREADS_RUNS:-5}
BENCH_HANDOFF_RUNS=${BENCH_HANDOFF_RUNS:-5}
BENCH_MAP32_RUNS=${BENCH_MAP32_RUNS:-3}
BENCH_CYCLES=${BENCH_CYCLES:-3}
BENCH_PEER_S=${BENCH_PEER_S:-3}
BENCH_IDLE_S=${BENCH_IDLE_S:-600}
BENCH_SEED_DAYS=${BENCH_SEED_DAYS:-365}
BENCH_SEED_EVERY=${BENCH_SEED_EVERY:-5}
BENCH_API_ROUNDS=${BENCH_API_ROUNDS:-5}
BENCH_API_S=${BENCH_API_S:-4}
BENCH_API_CONN=${BENCH_API_CONN:-16}
BENCH_API_THREADS=${BENCH_API_THREADS:-2}
BENCH_QUERY_REPS=${BENCH_QUERY_REPS:-9}
BENCH_PROFILE_S=${BENCH_PROFILE_S:-4}
BENCH_FLEET_SIZES=${BENCH_FLEET_SIZES:-200 1000}
BENCH_FLEET_ROUNDS=${BENCH_FLEET_ROUNDS:-5}
BENCH_FLEET_MAX=${BENCH_FLEET_MAX:-1000}
BENCH_CITIZEN_ROUNDS=${BENCH_CITIZEN_ROUNDS:-5}
BENCH_CITIZEN_CONN=${BENCH_CITIZEN_CONN:-4}
BENCH_LOAD_MAX=${BENCH_LOAD_MAX:-0.3}
BENCH_SETTLE_S=${BENCH_SETTLE_S:-300}
BENCH_PHASES=${BENCH_PHASES:-all}
W=${BENCH_WORK:-$B/bench}
OUT=${BENCH_OUT:-$SRC/bench/RESULTS.md}
HERE=$SRC/bench
PROBES=$B/probes
TWD=$B/threadwatchd
TWSEED=$B/tests/twseed
export LC_ALL=C

T0=$(date +%s)
log() { printf '[bench %4ds] %s\n' $(($(date +%s) - T0)) "$*" | tee -a "$W/run.log" >&2; }
die() { log "error: $*"; exit 1; }
ru() { python3 "$HERE/rusage.py" "$@"; } # ru --out F [--stdout F] [--sample S] -- CMD...
load_now() { cut -d' ' -f1-3 /proc/loadavg; }
psi_now() { sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null || true; }
want() { [ "$BENCH_PHASES" = all ] || [[ " $BENCH_PHASES " == *" $1 "* ]]; }
# quiet: waits up to BENCH_SETTLE_S for load1 per CPU to fall to BENCH_LOAD_MAX
# (other work, or the previous phase's own threads); 0 when it did.
quiet() {
	local i
	for i in $(seq "$BENCH_SETTLE_S"); do
		awk -v n="$(nproc)" -v m="$BENCH_LOAD_MAX" '{ exit !($1 / n <= m) }' /proc/loadavg && return 0
		sleep 1
	done
	return 1
}
# phase NAME: waits for a quiet host, then records the load the phase starts
# at (report.py refuses a phase that started above BENCH_LOAD_MAX).
phase() {
	local q=quiet
	case $1 in setup | report | idle-wait) ;; *) quiet || q=busy ;; esac
	log "== $1 (load $(load_now), CPU pressure $(psi_now)%, $q)"
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$(date +%s)" "$(load_now)" "$(psi_now)" "$q" >>"$W/phases.tsv"
}

# --- tools ------------------------------------------------------------------
# Debian packages the comparisons need; installed when missing and root.
need_pkgs() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "missing Debian packages; as root: apt-get install -y$missing"
	log "installing:$missing"
	# nginx-light would start a system nginx on port 80: keep services down.
	apt-get update -q >/dev/null
	RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
}

# --- processes this script starts (stopped on exit, by pid) -----------------
PIDS=()
NGINX_CONF=""
cleanup() {
	local p
	[ -n "$NGINX_CONF" ] && [ -f "$W/nginx/nginx.pid" ] &&
		nginx -p "$W/nginx" -c "$NGINX_CONF" -s stop 2>/dev/null || true
	for p in "${PIDS[@]}"; do stop_pid "$p"; done
}
stop_pid() {
	local p=$1 i
	kill -0 "$p" 2>/dev/null || return 0
	kill -TERM "$p" 2>/dev/null || true
	for i in $(seq 100); do
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$p" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_nginx: nginx on a free loopback port serving $W/www; sets NPORT, NG.
start_nginx() {
	NPORT=$(free_port)
	NGINX_CONF=$W/nginx/nginx.conf
	mkdir -p "$W/nginx/tmp"
	cat >"$NGINX_CONF" <<EOF
# nginx for the benchmark: the daemon's bytes as static files on loopback.
worker_processes 2;
user root;
pid $W/nginx/nginx.pid;
error_log $W/nginx/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 1000000;
	keepalive_timeout 60s;
	client_body_temp_path $W/nginx/tmp/body;
	proxy_temp_path $W/nginx/tmp/proxy;
	fastcgi_temp_path $W/nginx/tmp/fastcgi;
	uwsgi_temp_path $W/nginx/tmp/uwsgi;
	scgi_temp_path $W/nginx/tmp/scgi;
	server {
		listen 127.0.0.1:$NPORT;
		root $W/www;
		location = /api/v1/recommendation { default_type application/json; }
		location = /metrics { default_type "text/plain; version=0.0.4"; }
		location = / { default_type text/html; try_files /index.html =404; }
	}
}
EOF
	nginx -p "$W/nginx" -c "$NGINX_CONF" || die "nginx did not start"
	NG="http://127.0.0.1:$NPORT"
}
stop_nginx() {
	nginx -p "$W/nginx" -c "$NGINX_CONF" -s stop || true
	NGINX_CONF=""
}

# start_daemon NAME DB: threadwatchd on an ephemeral port; sets DPID, DPORT.
start_daemon() {
	local name=$1 db=$2 i
	rm -f "$W/$name.port"
	"$TWD" --foreground --config="$W/empty.conf" --database="$db" --port=0 \
		--port-file="$W/$name.port" --probe_dir="$PROBES" --probes_d= \
		--guard=off --log_level=info >"$W/$name.log" 2>&1 &
	DPID=$!
	PIDS+=("$DPID")
	for i in $(seq 1200); do
		[ -s "$W/$name.port" ] && break
		kill -0 "$DPID" 2>/dev/null || die "threadwatchd ($name) died: $(tail -3 "$W/$name.log")"
		sleep 0.1
	done
	[ -s "$W/$name.port" ] || die "threadwatchd ($name) did not listen within 120 s"
	DPORT=$(cat "$W/$name.port")
}

# CPU ticks of a process: "self children".
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13, $14 + $15}'; }

# ------------------------------------------------------------------------------
rm -rf "$W"
mkdir -p "$W"/{ctxsw,perf,sngsw,handoff,threads,sngpt,map32,cycle,api,query,prof,www/api/v1,nginx,citizen}
: >"$W/empty.conf"
: >"$W/run.log"
for f in "$PROBES/ctxsw" "$PROBES/threads" "$PROBES/map32" "$TWD" "$B/threadwatch" "$TWSEED"; do
	[ -x "$f" ] || die "\"$f\" is not built (run make B=$B all first)"
done
for p in $BENCH_PHASES; do
	case $p in all | idle | ctxsw | handoff | threads | cycles | seed | api | citizen | fleet | observer | policy) ;; *) die "unknown phase \"$p\" in BENCH_PHASES" ;; esac
done
want api && ! want seed && die "BENCH_PHASES: api needs seed (the year it queries)"
need_pkgs linux-perf stress-ng wrk nginx-light curl jq sqlite3 procps util-linux time python3

phase setup
{
	echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cpu_model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
	echo "cpus=$(nproc)"
	echo "sockets=$(lscpu | sed -n 's/^Socket(s): *//p')"
	echo "cores_per_socket=$(lscpu | sed -n 's/^Core(s) per socket: *//p')"
	echo "threads_per_core=$(lscpu | sed -n 's/^Thread(s) per core: *//p')"
	echo "hypervisor=$(lscpu | sed -n 's/^Hypervisor vendor: *//p')"
	echo "kernel=$(uname -r)"
	echo "glibc=$(getconf GNU_LIBC_VERSION | cut -d' ' -f2)"
	echo "mem_total_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)"
	echo "load_start=$(load_now)"
	echo "perf=$(perf --version 2>/dev/null)"
	echo "stress_ng=$(stress-ng --version 2>/dev/null | head -1)"
	echo "nginx=$(nginx -v 2>&1)"
	echo "wrk=$(dpkg-query -W -f='${Version}' wrk)"
	echo "sqlite=$(sqlite3 --version | cut -d' ' -f1)"
	echo "git=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo uncommitted)"
	for v in BENCH_RUNS BENCH_THREADS_RUNS BENCH_HANDOFF_RUNS BENCH_MAP32_RUNS BENCH_CYCLES BENCH_PEER_S \
		BENCH_IDLE_S BENCH_SEED_DAYS BENCH_SEED_EVERY BENCH_API_ROUNDS BENCH_API_S \
		BENCH_API_CONN BENCH_API_THREADS BENCH_QUERY_REPS BENCH_PROFILE_S BENCH_CITIZEN_ROUNDS \
		BENCH_CITIZEN_CONN BENCH_LOAD_MAX BENCH_SETTLE_S BENCH_FLEET_SIZES BENCH_FLEET_ROUNDS \
		BENCH_FLEET_MAX BENCH_PHASES; do
		echo "$v=${!v}"
	done
} >"$W/meta.env"
# The load through the whole run, every 5 s (the kernel's own period).
(while :; do printf '%s\t%s\t%s\n' "$(date +%s)" "$(load_now)" "$(psi_now)"; sleep 5; done) >"$W/load.tsv" &
PIDS+=($!)

# --- 1. the daemon's first cycle, then its idle time ---------------------------
if want idle; then
	phase daemon-cycle
	start_daemon d1 "$W/d1.db"
	D1=$DPID
	D1PORT=$DPORT
	read -r d1_self0 d1_child0 < <(cpu_ticks "$D1")
	for i in $(seq 600); do
		st=$(curl -sf "http://127.0.0.1:$D1PORT/api/v1/status" || true)
		[ -n "$st" ] && [ "$(jq -r '.last_cycle_status // empty' <<<"$st")" != "" ] &&
			[ "$(jq -r .cycle_running <<<"$st")" = false ] && break
		sleep 0.5
	done
	echo "$st" >"$W/d1-cycle.json"
	read -r d1_self1 d1_child1 < <(cpu_ticks "$D1")
	echo "{\"tick_hz\": $(getconf CLK_TCK), \"self_ticks\": $((d1_self1 - d1_self0)), \"children_ticks\": $((d1_child1 - d1_child0))}" >"$W/d1-cycle-cpu.json"
	log "daemon cycle: $(jq -c '.last_cycle | {status, duration_s}' "$W/d1-cycle.json")"
	# Watched while the rest runs: the benchmarks below never talk to it, and
	# its CPU time is its own (utime + stime of its threads).
	python3 "$HERE/watch.py" --pid "$D1" --seconds "$BENCH_IDLE_S" --interval 5 --out "$W/idle.json" &
	WATCH=$!
	PIDS+=("$WATCH")
fi

# --- 2. accuracy and precision: ctxsw vs perf bench vs stress-ng --switch ------
if want ctxsw; then
	phase ctxsw-peers
	# Loops for a perf bench run of about BENCH_PEER_S seconds.
	taskset -c 0 perf bench sched pipe -T -l 20000 >"$W/perf/calibrate.txt" 2>&1
	us=$(awk '/usecs\/op/ {print $1}' "$W/perf/calibrate.txt")
	LOOPS=$(awk -v us="$us" -v s="$BENCH_PEER_S" 'BEGIN {n = int(s * 1e6 / us); if (n < 20000) n = 20000; if (n > 5000000) n = 5000000; print n}')
	echo "$LOOPS" >"$W/perf/loops"
	# How many context switches one "op" is, counted by the kernel.
	perf stat -e context-switches -x, -o "$W/perf/switches-perf.csv" \
		taskset -c 0 perf bench sched pipe -T -l 50000 >"$W/perf/switches-perf.txt" 2>&1
	perf stat -e context-switches -x, -o "$W/sngsw/switches-sng.csv" \
		stress-ng --switch 1 --taskset 0 -t 1 --metrics-brief >"$W/sngsw/switches-sng.txt" 2>&1
	for i in $(seq "$BENCH_RUNS"); do
		n=$(printf %02d "$i")
		if [ $((i % 2)) = 1 ]; then order="ours perf sng"; else order="sng perf ours"; fi
		for t in $order; do
			case $t in
			ours) ru --out "$W/ctxsw/$n.ru.json" --stdout "$W/ctxsw/$n.json" -- \
				"$PROBES/ctxsw" --seed "$i" || log "ctxsw run $i failed" ;;
			perf) ru --out "$W/perf/$n.ru.json" --stdout "$W/perf/$n.txt" --stderr "$W/perf/$n.err" -- \
				taskset -c 0 perf bench sched pipe -T -l "$LOOPS" || log "perf run $i failed" ;;
			sng) ru --out "$W/sngsw/$n.ru.json" --stdout "$W/sngsw/$n.txt" --stderr "$W/sngsw/$n.txt" -- \
				stress-ng --switch 1 --taskset 0 -t "$BENCH_PEER_S" --metrics-brief ||
				log "stress-ng --switch run $i failed" ;;
			esac
		done
	done
fi

# --- 2b. hand-offs across CPUs: handoff vs a futex and a pipe ping-pong --------
# bench/pingpong.c runs on one CPU and on the pair the probe measured its
# nearest cross-CPU placement on (read from its document), each for about
# BENCH_PEER_S s, handing the turn over through a shared futex word and
# through pipes.
if want handoff; then
	phase handoff-peers
	PP=$B/bench-bin/pingpong
	[ -x "$PP" ] || die "$PP is not built (make bench builds it)"
	# pp_trips MODE A B: round trips for about BENCH_PEER_S s between CPUs A and B
	pp_trips() {
		local ns
		ns=$("$PP" "$1" "$2" "$3" 2000 | jq .ns_per_handoff) || die "pingpong $1 $2 $3 failed"
		awk -v ns="$ns" -v s="$BENCH_PEER_S" 'BEGIN {n = int(s * 1e9 / (2 * ns)); if (n < 2000) n = 2000; print n}'
	}
	pair=""
	declare -A TRIPS=()
	for i in $(seq "$BENCH_HANDOFF_RUNS"); do
		n=$(printf %02d "$i")
		if [ $((i % 2)) = 1 ]; then order="ours futex pipe"; else order="pipe futex ours"; fi
		[ -n "$pair" ] || order="ours futex pipe"
		for t in $order; do
			case $t in
			ours)
				ru --out "$W/handoff/$n.ru.json" --stdout "$W/handoff/$n.json" -- \
					"$PROBES/handoff" --seed "$i" || log "handoff run $i failed"
				if [ -z "$pair" ]; then
					pair=$(jq -r '.info[.info.cross_placement + "_cpus"] // empty' "$W/handoff/$n.json" 2>/dev/null | tr , ' ')
					[ -n "$pair" ] || { log "handoff measured no pair of CPUs: no ping-pong"; break 2; }
					set -- $pair
					A=$1 PB=$2
					for m in futex pipe; do
						TRIPS[$m-same]=$(pp_trips "$m" "$A" "$A")
						TRIPS[$m-cross]=$(pp_trips "$m" "$A" "$PB")
					done
					echo "$A $PB" >"$W/handoff/pair"
				fi ;;
			futex | pipe)
				"$PP" "$t" "$A" "$A" "${TRIPS[$t-same]}" >"$W/handoff/$n.$t-same.json" ||
					log "pingpong $t on CPU $A failed"
				"$PP" "$t" "$A" "$PB" "${TRIPS[$t-cross]}" >"$W/handoff/$n.$t-cross.json" ||
					log "pingpong $t $A-$PB failed" ;;
			esac
		done
	done
fi

# --- 3. thread creation: threads vs stress-ng --pthread ------------------------
if want threads; then
	phase threads-peers
	for i in $(seq "$BENCH_THREADS_RUNS"); do
		n=$(printf %02d "$i")
		if [ $((i % 2)) = 1 ]; then order="ours sng"; else order="sng ours"; fi
		for t in $order; do
			case $t in
			ours) ru --out "$W/threads/$n.ru.json" --stdout "$W/threads/$n.json" -- \
				"$PROBES/threads" --seed "$i" || log "threads run $i failed" ;;
			sng) ru --out "$W/sngpt/$n.ru.json" --stdout "$W/sngpt/$n.txt" --stderr "$W/sngpt/$n.txt" -- \
				stress-ng --pthread 1 -t "$BENCH_PEER_S" --metrics || log "stress-ng --pthread run $i failed" ;;
			esac
		done
	done
fi

# --- 4. cost to the host: map32, full cycles, the footprint of a cycle --------
if want cycles; then
	phase cycles
	for i in $(seq "$BENCH_MAP32_RUNS"); do
		n=$(printf %02d "$i")
		ru --out "$W/map32/$n.ru.json" --stdout "$W/map32/$n.json" -- \
			"$PROBES/map32" --seed "$i" || log "map32 run $i failed"
	done
	for i in $(seq "$BENCH_CYCLES"); do
		n=$(printf %02d "$i")
		ru --out "$W/cycle/$n.ru.json" --stdout "$W/cycle/$n.json" -- \
			"$B/threadwatch" run --json --probe-dir "$PROBES" || log "cycle $i failed"
	done
	# One more cycle with the process tree sampled every 50 ms (VmHWM, VMAs).
	ru --out "$W/cycle/footprint.ru.json" --stdout "$W/cycle/footprint.json" --sample 0.05 -- \
		"$B/threadwatch" run --json --probe-dir "$PROBES" || log "footprint cycle failed"
fi

# --- 5. storage: a year of history -------------------------------------------
if want seed; then
	phase seed
	SEED_ARGS=(--db "$W/year.db" --days "$BENCH_SEED_DAYS" --every "$BENCH_SEED_EVERY" --seed 1)
	# The daemon keeps documents and points for retention_raw_days (30): a seeder
	# that can write older cycles the way retention leaves them is told so.
	if "$TWSEED" --help 2>&1 | grep -q -- '--raw-days'; then
		SEED_ARGS+=(--raw-days 30)
	fi
	printf '%s\n' "${SEED_ARGS[@]}" >"$W/seed.args"
	ru --out "$W/seed.ru.json" --stdout "$W/seed.log" --stderr "$W/seed.log" -- "$TWSEED" "${SEED_ARGS[@]}" ||
		die "twseed failed: $(tail -3 "$W/seed.log")"
	{
		stat -c '%n %s' "$W/year.db"*
	} >"$W/db-files.txt"
	# Rows of every table (whatever the schema version), read-only.
	q="SELECT json_object('runs_pruned', (SELECT count(*) FROM runs WHERE pruned_ms IS NOT NULL),"
	q+=" 'page_size', (SELECT page_size FROM pragma_page_size),"
	q+=" 'page_count', (SELECT page_count FROM pragma_page_count),"
	q+=" 'freelist', (SELECT freelist_count FROM pragma_freelist_count)"
	for t in $(sqlite3 -readonly "$W/year.db" \
		"SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"); do
		q+=", '$t', (SELECT count(*) FROM \"$t\")"
	done
	sqlite3 -readonly "$W/year.db" "$q)" >"$W/db-counts.json" || log "counting rows failed"
	sqlite3 -readonly -json "$W/year.db" \
		"SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC" \
		>"$W/db-tables.json" 2>/dev/null || echo '[]' >"$W/db-tables.json"
fi

# --- 6. the API against nginx, and the storage queries --------------------------
if want api; then
	phase api
	t_start=$(date +%s.%N)
	start_daemon d2 "$W/year.db"
	D2=$DPID
	D2PORT=$DPORT
	for i in $(seq 2400); do
		curl -sf -o /dev/null "http://127.0.0.1:$D2PORT/healthz" && break
		sleep 0.05
	done
	echo "$t_start $(date +%s.%N)" >"$W/d2-start.txt"
	TW="http://127.0.0.1:$D2PORT"
	curl -sf "$TW/api/v1/recommendation" -o "$W/www/api/v1/recommendation" || die "no recommendation"
	curl -sf "$TW/metrics" -o "$W/www/metrics" || die "no /metrics"
	# The dashboard page is served from memory: the ceiling of a cached answer.
	curl -sf "$TW/" -o "$W/www/index.html" || die "no dashboard page"
	curl -sf -D "$W/api/headers-recommendation.txt" -o /dev/null "$TW/api/v1/recommendation"
	curl -sf -D "$W/api/headers-metrics.txt" -o /dev/null "$TW/metrics"

	start_nginx
	for path in /api/v1/recommendation /metrics /; do
		f=$W/www$path
		[ "$path" = / ] && f=$W/www/index.html
		cmp -s <(curl -sf "$NG$path") "$f" || die "nginx does not serve the bytes of $path"
	done
	wrk_run() { # OUTFILE URL
		wrk -t"$BENCH_API_THREADS" -c"$BENCH_API_CONN" -d"${BENCH_API_S}s" --latency "$2" >"$1" 2>&1 ||
			log "wrk failed on $2"
	}
	ep_path() {
		case $1 in recommendation) echo /api/v1/recommendation ;; metrics) echo /metrics ;; static) echo / ;; esac
	}
	for r in $(seq "$BENCH_API_ROUNDS"); do
		for ep in recommendation metrics static; do
			path=$(ep_path "$ep")
			if [ $((r % 2)) = 1 ]; then order="tw nginx"; else order="nginx tw"; fi
			for srv in $order; do
				case $srv in tw) base=$TW ;; nginx) base=$NG ;; esac
				wrk_run "$W/api/$(printf %02d "$r")-$ep-$srv.txt" "$base$path"
			done
		done
	done
	# The daemon's own profile under the same load (flat, by symbol).
	profile() { # NAME CMD... (runs CMD while recording the daemon)
		local name=$1
		shift
		perf record -F 999 -p "$D2" -o "$W/prof/$name.data" -- sleep "$BENCH_PROFILE_S" \
			>/dev/null 2>&1 &
		local rec=$!
		"$@" >/dev/null 2>&1 || true
		wait "$rec" || true
		perf report -i "$W/prof/$name.data" --stdio --no-children --sort dso,sym \
			--percent-limit 1 2>/dev/null | grep -v '^$' >"$W/prof/$name.txt" || true
		perf report -i "$W/prof/$name.data" --stdio --no-children --sort dso \
			2>/dev/null | grep -v '^$' >"$W/prof/$name-dso.txt" || true
		rm -f "$W/prof/$name.data"
	}
	for ep in recommendation metrics; do
		path=$(ep_path "$ep")
		profile "api-$ep" wrk -t"$BENCH_API_THREADS" -c"$BENCH_API_CONN" -d"${BENCH_PROFILE_S}s" "$TW$path"
	done

	# Storage queries, interleaved, each timed by curl.
	now=$(date +%s)
	since=$((now - BENCH_SEED_DAYS * 86400))
	SERIES="/api/v1/series?metric=ctxsw.high_ns&since=$since&until=$now&step=auto"
	RUNS="/api/v1/runs"
	REC="/api/v1/recommendation"
	curl -sf "$TW$SERIES" -o "$W/query/series.json" || log "the series query failed"
	curl -sf "$TW$RUNS" -o "$W/query/runs.json" || log "the runs query failed"
	printf '%s\n' "$SERIES" >"$W/query/series.url"
	# The daemon caches answers per data version: each repetition asks for a
	# range ending one second earlier, so series and runs are computed
	# afresh every time (the recommendation is served as a client sees it).
	for i in $(seq "$BENCH_QUERY_REPS"); do
		for q in series runs rec; do
			case $q in
			series) u="/api/v1/series?metric=ctxsw.high_ns&since=$since&until=$((now - i))&step=auto" ;;
			runs) u="$RUNS?until=$((now - i))" ;;
			rec) u=$REC ;;
			esac
			curl -s -o /dev/null -w "$q %{http_code} %{time_total} %{size_download}\n" "$TW$u" \
				>>"$W/query/times.txt"
		done
	done
	series_loop() {
		local end=$(($(date +%s) + BENCH_PROFILE_S))
		while [ "$(date +%s)" -lt "$end" ]; do curl -s -o /dev/null "$TW$SERIES"; done
	}
	profile series series_loop
	stop_nginx
	grep -E 'VmRSS|VmHWM|Threads' "/proc/$D2/status" >"$W/d2-status.txt" || true
	stop_pid "$D2"
fi

# --- 7. a good citizen: what one default cycle does to a neighbour ---------------
# The run queue (procs_running every 2 ms), the rise of load1 and the p99 of
# a co-running nginx (wrk, a few connections) during one default cycle,
# against the neighbour alone and beside perf bench and stress-ng for as
# long; each run waits for a quiet host (BENCH_LOAD_MAX) and records the
# load it started at, so that the report can refuse it.
if want citizen; then
	phase citizen
	[ -s "$W/www/index.html" ] || cp "$SRC/web/index.html" "$W/www/index.html"
	start_nginx
	# One cycle sets how long each run lasts.
	ru --out "$W/citizen/calibrate.ru.json" --stdout /dev/null -- \
		"$B/threadwatch" run --json --sched idle --nice 10 --probe-dir "$PROBES" || log "the calibration cycle failed"
	CD=$(jq -r '.wall_s | ceil' "$W/citizen/calibrate.ru.json")
	echo "$CD" >"$W/citizen/duration_s"
	log "a default cycle takes about $CD s"
	for r in $(seq "$BENCH_CITIZEN_ROUNDS"); do
		n=$(printf %02d "$r")
		if [ $((r % 2)) = 1 ]; then order="none cycle quiet perf sng"; else order="sng perf quiet cycle none"; fi
		for t in $order; do
			quiet || log "citizen $n $t: load still $(load_now) after $BENCH_SETTLE_S s"
			case $t in
			none) cmd=(sleep "$CD") ;;
			cycle | quiet) cmd=("$B/threadwatch" run --json --sched idle --nice 10 --probe-dir "$PROBES") ;;
			perf) cmd=(timeout -s INT "$CD" perf bench sched pipe -T -l 2000000000) ;;
			sng) cmd=(stress-ng --pthread 1 --switch 1 -t "${CD}s") ;;
			esac
			conn=$BENCH_CITIZEN_CONN
			[ "$t" = quiet ] && conn=0
			python3 "$HERE/citizen.py" --out "$W/citizen/$n-$t.json" --url "$NG/" \
				--conn "$conn" --duration "$CD" -- "${cmd[@]}" ||
				log "citizen run $n $t failed"
			log "citizen $n $t: $(jq -c '{peak: .runq.peak, runq_p99: .runq.p99, load1_rise, p99_ms: .neighbour.p99_ms}' \
				"$W/citizen/$n-$t.json" 2>/dev/null || echo none)"
		done
	done
	stop_nginx
fi

# --- 8. threadwatch fleet against one stub process on many ports ----------------
# One daemon's answers are recorded, then fleet_stub.py serves them on
# BENCH_FLEET_MAX consecutive loopback ports (one process, asyncio) and
# `threadwatch fleet --json` asks BENCH_FLEET_SIZES of them, interleaved,
# BENCH_FLEET_ROUNDS times. The stub shares the machine's CPUs with the CLI.
if want fleet; then
	phase fleet
	mkdir -p "$W/fleet"
	"$TWSEED" --db "$W/fleet/seed.db" --days 2 --quiet --seed 13 --linear-search ||
		die "twseed failed for the fleet phase"
	start_daemon fleet "$W/fleet/seed.db"
	FD=$DPID
	FBASE="http://127.0.0.1:$DPORT"
	run=$(curl -sf "$FBASE/api/v1/runs?probe=threads&status=ok&limit=1" | jq -r '.runs[0].id // empty')
	[ -n "$run" ] || die "the fleet daemon has no ok threads run"
	: >"$W/fleet/answers.parts"
	for p in /api/v1/status /api/v1/host /api/v1/recommendation /api/v1/headroom \
		'/api/v1/events?limit=1' '/api/v1/runs?probe=threads&status=ok&limit=1' "/api/v1/runs/$run"; do
		curl -sf "$FBASE$p" >"$W/fleet/answer.json" || continue
		jq -n --arg p "$p" --slurpfile b "$W/fleet/answer.json" '{($p): $b[0]}' >>"$W/fleet/answers.parts"
	done
	jq -s add "$W/fleet/answers.parts" >"$W/fleet/answers.json"
	stop_pid "$FD"
	for try in 1 2 3 4 5; do
		first=$((10000 + RANDOM % (32000 - BENCH_FLEET_MAX - 10000)))
		python3 "$SRC/tests/tools/fleet_stub.py" "$W/fleet/answers.json" "$first" "$BENCH_FLEET_MAX" \
			--lifetime 3600 >"$W/fleet/stub.out" 2>"$W/fleet/stub.err" &
		STUB=$!
		PIDS+=("$STUB")
		for i in $(seq 400); do
			grep -q ready "$W/fleet/stub.out" && break
			kill -0 "$STUB" 2>/dev/null || break
			sleep 0.05
		done
		grep -q ready "$W/fleet/stub.out" && break
		stop_pid "$STUB"
	done
	grep -q ready "$W/fleet/stub.out" || die "fleet_stub.py did not start: $(cat "$W/fleet/stub.err")"
	for i in $(seq 0 $((BENCH_FLEET_MAX - 1))); do echo "127.0.0.1:$((first + i))"; done >"$W/fleet/all.txt"
	for n in $BENCH_FLEET_SIZES; do
		[ "$n" -le "$BENCH_FLEET_MAX" ] || die "BENCH_FLEET_SIZES: $n is more than BENCH_FLEET_MAX"
	done
	for n in $BENCH_FLEET_SIZES; do head -n "$n" "$W/fleet/all.txt" >"$W/fleet/targets-$n.txt"; done
	sizes_rev=$(tr ' ' '\n' <<<"$BENCH_FLEET_SIZES" | tac | tr '\n' ' ')
	for r in $(seq "$BENCH_FLEET_ROUNDS"); do
		if [ $((r % 2)) = 1 ]; then order=$BENCH_FLEET_SIZES; else order=$sizes_rev; fi
		for n in $order; do
			f=$W/fleet/$(printf %02d "$r")-$n
			ru --out "$f.ru.json" --stdout "$f.json" -- "$B/threadwatch" fleet --json \
				--timeout 30s --file "$W/fleet/targets-$n.txt" || log "fleet of $n exited $?"
		done
	done
	stop_pid "$STUB"
	rm -f "$W/fleet/seed.db"*
fi

# --- 8b. the workload observer's own cost (bench/observer.sh) ---------------------
if want observer; then
	phase observer
	B="$B" SRC="$SRC" OBS_OUT="$W/observer" "$HERE/observer.sh" >"$W/observer.log" 2>&1 ||
		log "bench/observer.sh failed: $(tail -n 3 "$W/observer.log")"
fi

# --- 8c. the daemon's figures against threadwatch run's (bench/policy.sh) ----------
if want policy; then
	phase policy
	B="$B" SRC="$SRC" POL_OUT="$W/policy" "$HERE/policy.sh" >"$W/policy.log" 2>&1 ||
		log "bench/policy.sh failed: $(tail -n 3 "$W/policy.log")"
fi

# --- 9. the end of the idle window ---------------------------------------------
if want idle; then
	phase idle-wait
	wait "$WATCH" || log "the idle watcher failed"
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("cpu_pct", 0) > 0.1 else 1)' \
		"$W/idle.json"; then
		log "idle CPU above 0.1%: profiling the idle daemon for 30 s"
		perf record -F 999 -g -p "$D1" -o "$W/prof/idle.data" -- sleep 30 >/dev/null 2>&1 || true
		perf report -i "$W/prof/idle.data" --stdio --no-children --sort comm,dso,sym \
			--percent-limit 2 2>/dev/null | grep -v '^$' >"$W/prof/idle.txt" || true
		rm -f "$W/prof/idle.data"
	fi
	grep -E 'VmRSS|VmHWM|Threads' "/proc/$D1/status" >"$W/d1-status.txt" || true
	stop_pid "$D1"
fi

phase report
# The databases are large (about 1 GiB for a year); their figures are taken.
[ "${BENCH_KEEP_DB:-0}" = 1 ] || rm -f "$W"/year.db* "$W"/d1.db*
echo "load_end=$(load_now)" >>"$W/meta.env"
echo "elapsed_s=$(($(date +%s) - T0))" >>"$W/meta.env"
if [ "$BENCH_PHASES" != all ]; then
	python3 "$HERE/report.py" --work "$W" --out "$W/RESULTS.md" --src "$SRC" ||
		log "the partial report failed"
	if want fleet || want handoff || want observer || want policy; then
		for sect in fleet handoff observer policy; do
			want "$sect" && python3 "$HERE/report.py" --work "$W" --out "$OUT" --src "$SRC" --only "$sect"
		done
		log "partial run (BENCH_PHASES=$BENCH_PHASES): report in \"$W/RESULTS.md\"; of \"$OUT\", only the sections of $BENCH_PHASES rewritten"
	else
		log "partial run (BENCH_PHASES=$BENCH_PHASES): report in \"$W/RESULTS.md\", \"$OUT\" left as it is"
	fi
	exit 0
fi
python3 "$HERE/report.py" --work "$W" --out "$OUT" --src "$SRC"
log "wrote $OUT"

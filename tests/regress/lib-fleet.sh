# Helpers for the fleet regress scripts (sourced after lib.sh and
# lib-daemon.sh): three threadwatchd instances standing for three hosts,
# each on its own ephemeral port with its own database seeded by twseed.
#   h1  low stacks pay: switch-time ratio 0.80, and the daemon's workload
#       (100 threads) fits the MAP_32BIT window; one cycle, started over
#       the API, recomputes the recommendation with that workload (its
#       probe directory is empty, so the cycle records three error runs)
#       and writes the node_exporter textfile $FLEET_PROM.
#   h2  no benefit (ratio about 1) and a kernel change with a 10% step.
#   h3  a kernel whose MAP_32BIT search is linear (a knee in the threads
#       curve) and a cgroup near pids.max (a headroom warning).
# start_fleet sets FLEET_NAMES, FLEET_PORTS and FLEET_PIDS (arrays);
# stop_fleet stops them (each must exit 0).
SEED=$B/tests/twseed
[ -x "$SEED" ] || fail "\"$SEED\" is not built"
FLEET_NAMES=(h1 h2 h3)
FLEET_PORTS=()
FLEET_PIDS=()
FLEET_PROM=$TW_TMP/textfile/threadwatch.prom

# jq_true JSON [JQ-ARGS...] FILTER: the filter holds for JSON. Empty JSON
# never passes (jq -e alone accepts an empty input).
jq_true() {
	local j=$1
	shift
	[ -n "$j" ] && jq -e "$@" <<<"$j" >/dev/null
}

# FLEET_H1_ARGS: more arguments for h1's daemon.
FLEET_H1_ARGS=()
start_fleet() {
	local args i name
	mkdir -p "$TW_TMP/textfile"
	for i in 0 1 2; do
		name=${FLEET_NAMES[$i]}
		mkdir -p "$TW_TMP/$name"
		case $name in
		h1) args=(--seed 11 --ratio 0.80) ;;
		h2) args=(--seed 12 --kernel-change-at 4 --step 10) ;;
		h3) args=(--seed 13 --linear-search --near-limit) ;;
		esac
		"$SEED" --db "$TW_TMP/$name/threadwatch.db" --days 7 --quiet "${args[@]}" ||
			fail "twseed failed for $name"
		case $name in
		h1) args=(--workload-threads 100 --token "$TOKEN" --textfile-path "$FLEET_PROM"
			"${FLEET_H1_ARGS[@]}") ;;
		*) args=() ;;
		esac
		start_daemon "$name" "${args[@]}"
		FLEET_PIDS+=("$DPID")
		FLEET_PORTS+=("$PORT")
	done
	# h1: one cycle with the 100-thread workload.
	PORT=${FLEET_PORTS[0]}
	local before
	before=$(api /api/v1/status | jq -r '.last_cycle.id')
	api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" >/dev/null ||
		fail "could not start a cycle on h1"
	wait_cycle $((before + 1)) 30
	[ "$(api /api/v1/recommendation | jq -r .verdict)" = low ] ||
		fail "h1's verdict is not low: $(api /api/v1/recommendation | jq -c '{verdict, sentence}')"
}

stop_fleet() {
	local i
	for i in "${!FLEET_PIDS[@]}"; do
		DPID=${FLEET_PIDS[$i]}
		stop_daemon
	done
	FLEET_PIDS=()
}

# kill_fleet: for traps; ends whatever is still running, quietly.
kill_fleet() {
	local p
	for p in "${FLEET_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${FLEET_PIDS[@]}"; do wait "$p" 2>/dev/null; done
}

# record_answers PORT FILE: what the daemon on PORT answers to every GET
# that `threadwatch fleet` makes, as fleet_stub.py's ANSWERS (a JSON object
# of request target to body). Fails when the daemon has no ok threads run.
record_answers() {
	local port=$1 out=$2 run p
	run=$(curl -sf --max-time 10 "http://127.0.0.1:$port/api/v1/runs?probe=threads&status=ok&limit=1" |
		jq -r '.runs[0].id // empty')
	[ -n "$run" ] || fail "the daemon on port $port has no ok threads run to record"
	for p in /api/v1/status /api/v1/host /api/v1/recommendation /api/v1/headroom \
		'/api/v1/events?limit=1' '/api/v1/runs?probe=threads&status=ok&limit=1' "/api/v1/runs/$run"; do
		curl -sf --max-time 10 "http://127.0.0.1:$port$p" >"$out.part" ||
			continue # an endpoint this daemon does not have: the stub answers 404 too
		jq -n --arg p "$p" --slurpfile b "$out.part" '{($p): $b[0]}' >>"$out.parts"
	done
	jq -s 'add' "$out.parts" >"$out" || fail "could not record the answers of port $port"
	rm -f "$out.part" "$out.parts"
}

# start_stub ANSWERS COUNT [ARGS...]: fleet_stub.py on COUNT consecutive
# ports below the kernel's ephemeral range (another try elsewhere when one is
# taken); sets STUB_FIRST and STUB_PID (to be killed by the caller's trap).
start_stub() {
	local answers=$1 count=$2 try
	shift 2
	for try in 1 2 3 4 5; do
		STUB_FIRST=$(python3 -c 'import random; print(random.randrange(10000, 32000 - '"$count"'))')
		python3 "$SRC/tests/tools/fleet_stub.py" "$answers" "$STUB_FIRST" "$count" "$@" \
			>"$TW_TMP/stub.out" 2>"$TW_TMP/stub.err" &
		STUB_PID=$!
		for _ in $(seq 200); do
			grep -q ready "$TW_TMP/stub.out" && return 0
			kill -0 "$STUB_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill "$STUB_PID" 2>/dev/null
		wait "$STUB_PID" 2>/dev/null
	done
	fail "fleet_stub.py did not start: $(cat "$TW_TMP/stub.err")"
}

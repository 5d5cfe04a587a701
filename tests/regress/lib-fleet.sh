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
		h1) args=(--workload-threads 100 --token "$TOKEN" --textfile-path "$FLEET_PROM") ;;
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

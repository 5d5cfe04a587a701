#!/usr/bin/env bash
# 90-crash: threadwatchd is killed with SIGKILL at random moments while
# cycles of instant fake probes run back to back (started with POST
# /api/v1/runs), and restarted each time; some kills land during start-up.
# After every restart each run the API listed before the kill is still
# listed, unchanged, and the database passes PRAGMA integrity_check with no
# partial run (tests/regress/lib-store-check.sh): an ok run has its
# document, one sample per scalar and every point of every series, and the
# per-probe counters match. (59-daemon-crash kills 40 times, once per
# cycle, with lighter checks; `make soak` runs both far longer.) Goes on until both
# CRASH_KILLS kills (default 12) and CRASH_CYCLES cycles (default 60) are
# done. CRASH_SEED makes the moments reproducible.
# regress: long
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh"
KILLS=${CRASH_KILLS:-12}
CYCLES=${CRASH_CYCLES:-60}
SEED=${CRASH_SEED:-$$}
RANDOM=$SEED
echo "seed $SEED (CRASH_SEED=$SEED repeats these moments)"

for p in $TW_BUILTINS; do rich_probe "$TW_TMP/probes" "$p"; done
rich_probe "$TW_TMP/probes.d" extra
DB=$TW_TMP/c/threadwatch.db
ARGS=(--interval 1h --token "$TOKEN")

# listed_runs: "id probe status" of every run the API lists, by id.
listed_runs() {
	local cursor="" page
	while :; do
		page=$(api "/api/v1/runs?limit=500${cursor:+&cursor=$cursor}") ||
			fail "GET /api/v1/runs failed"
		jq -r '.runs[] | "\(.id) \(.probe) \(.status)"' <<<"$page" ||
			fail "bad /api/v1/runs page: $page"
		cursor=$(jq -r '.next_cursor // empty' <<<"$page")
		[ -n "$cursor" ] || break
	done | sort -n
}

# Starts cycles one after another until killed.
trigger_loop() {
	while :; do
		curl -s -o /dev/null --max-time 1 -X POST -H "Authorization: Bearer $TOKEN" \
			"http://127.0.0.1:$PORT/api/v1/runs"
		sleep 0.01
	done
}

# crash PID: the daemon dies at once with whatever children it has, as
# systemd kills a unit's whole cgroup: a child between fork and exec would
# otherwise still hold the database lock (close-on-exec) for a moment.
crash() {
	local c
	kill -STOP "$1" 2>/dev/null
	for c in $(ps -o pid= --ppid "$1"); do kill -KILL "$c" 2>/dev/null; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# rand_s MAX_MS: a random duration of 0..MAX_MS ms, in seconds.
rand_s() {
	local ms=$((RANDOM % ($1 + 1)))
	printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}

kills=0 startup_kills=0 rechecked=0 cycles=0 before=""
start_s=$SECONDS
start_daemon c "${ARGS[@]}"
while [ "$kills" -lt "$KILLS" ] || [ "$cycles" -lt "$CYCLES" ]; do
	[ $((SECONDS - start_s)) -lt 300 ] || fail "only $kills kills and $cycles cycles in 300 s"
	# What the API listed before the kill is all still there.
	after=$(listed_runs)
	if [ -n "$before" ]; then
		lost=$(comm -23 <(sort <<<"$before") <(sort <<<"$after"))
		[ -z "$lost" ] || fail "after kill $kills these runs are gone or changed: $lost"
		rechecked=$((rechecked + $(wc -l <<<"$before")))
	fi
	store_check "$DB"
	cycles=$CHECK_CYCLES

	trigger_loop &
	tpid=$!
	sleep "$(rand_s 500)"
	before=$(listed_runs)
	sleep "$(rand_s 60)"
	crash "$DPID"
	kill "$tpid"
	wait "$tpid" 2>/dev/null
	kills=$((kills + 1))

	# Every fifth time, a kill during start-up too (opening, checking and
	# migrating the database, the first cycle).
	if [ $((kills % 5)) = 0 ]; then
		env "${DAEMON_ENV[@]}" "$TWD" --foreground --config "$TW_TMP/empty.conf" \
			--state-dir "$TW_TMP/c" --port 0 --probe-dir "$TW_TMP/probes" \
			--probes-d "$TW_TMP/probes.d" --quick --guard off --splay 0 \
			"${ARGS[@]}" >>"$TW_TMP/c.log" 2>&1 &
		sleep "$(rand_s 150)"
		crash $!
		kills=$((kills + 1))
		startup_kills=$((startup_kills + 1))
	fi
	start_daemon c "${ARGS[@]}"
done
after=$(listed_runs)
lost=$(comm -23 <(sort <<<"$before") <(sort <<<"$after"))
[ -z "$lost" ] || fail "after the last kill these runs are gone or changed: $lost"
rechecked=$((rechecked + $(wc -l <<<"$before")))
stop_daemon
store_check "$DB"
errors=$(sqlite3 -readonly "$DB" "SELECT count(*) FROM runs WHERE status != 'ok'")
interrupted=$(sqlite3 -readonly "$DB" "SELECT count(*) FROM cycles WHERE ended_ms IS NULL")
[ "$errors" = 0 ] || fail "$errors runs of the instant probes are errors: $(sqlite3 -readonly \
	"$DB" "SELECT probe, reason FROM runs WHERE status != 'ok' LIMIT 5")"
ok "$kills kills survived ($startup_kills during start-up) in $((SECONDS - start_s)) s"
ok "$CHECK_CYCLES cycles ($interrupted cut short by a kill), $CHECK_RUNS runs with" \
	"$CHECK_SAMPLES samples and $CHECK_POINTS points: integrity ok, no partial run"
ok "$rechecked runs re-checked as still listed after a restart"

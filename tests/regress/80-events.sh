#!/usr/bin/env bash
# 80-events: regression detection on the real daemon. twseed writes 30 days
# of cycles in which a new kernel on day 20 makes switches and thread
# creation 10% dearer. At start-up the daemon judges the stored history:
# GET /api/v1/events lists the changes (one per figure, from the first run
# on the new kernel, found on the fast path within 2 cycles of it and named
# by it: "after the kernel upgrade to ..."), filters by metric and time and matches
# web/openapi.json; /metrics counts the events; the log has one line per
# event; threadwatch fleet shows them; a restart records nothing twice; and
# a version-1 database is migrated (sql/002-events.sql) and judged the same
# way.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
SEED=$B/tests/twseed
[ -x "$SEED" ] || fail "\"$SEED\" is not built"
mkdir -p "$TW_TMP/probes" "$TW_TMP/h"
DB=$TW_TMP/h/threadwatch.db
DAY=86400000
CYCLE=21600000 # twseed's default: a cycle every 6 hours

# The last seeded cycle ended a few minutes ago and the fingerprint is this
# host's, so the daemon runs no cycle: what it finds is in the history.
"$SEED" --db "$DB" --days 30 --kernel-change-at 20 --step 10 --seed 1 --quiet ||
	fail "twseed failed"
start_daemon h --interval 6h
# settled: events are listed and their number held for 0.3 s (the start-up
# judgement records figure after figure).
settled() {
	local a b
	a=$(api /api/v1/events | jq '.events | length')
	sleep 0.3
	b=$(api /api/v1/events | jq '.events | length')
	[ "$a" -gt 0 ] && [ "$a" = "$b" ]
}
wait_for settled || fail "no events after start-up: $(api /api/v1/events)"
EV=$(api /api/v1/events)
n=$(jq '.events | length' <<<"$EV")
# When the host got its new kernel (the newest fingerprint row).
change_ms=$(api /api/v1/host | jq '.history[0].first_seen_ms')

# One event per changed figure, each once, from the first cycle on the new
# kernel, rising 5 to 20%, significant, naming the kernel change.
jq -e '[.events[].metric] | (unique | length) == length' <<<"$EV" >/dev/null ||
	fail "a figure has two events: $(jq -c '[.events[].metric]' <<<"$EV")"
for m in ctxsw.low_ns ctxsw.high_ns; do
	jq -e --arg m "$m" '[.events[] | select(.metric == $m)] | length == 1' <<<"$EV" >/dev/null ||
		fail "no single event for $m: $(jq -c '[.events[].metric]' <<<"$EV")"
done
jq -e '[.events[].metric] | any(test("^threads\\.[a-z]+_median_ns_at_"))' <<<"$EV" >/dev/null ||
	fail "no create-cost event: $(jq -c '[.events[].metric]' <<<"$EV")"
bad=$(jq -c --argjson lo "$change_ms" --argjson hi "$((change_ms + CYCLE))" '[.events[] |
	select(.kind != "step" or .direction != "up" or .t_ms < $lo or .t_ms > $hi
	or .change_pct < 5 or .change_pct > 20 or .p_value > 0.05 or (.metric | test("^(map32|ctxsw.ratio|recommendation)"))
	or .path != "change" or .detected_ms > .t_ms + 2 * '"$CYCLE"' + 3600000
	or (.headline | startswith("after the kernel upgrade to ") | not)
	or .fingerprint_changed != true or (.fingerprint_diff | test("^kernel \\S+ → \\S+$") | not))]' <<<"$EV")
[ "$bad" = "[]" ] || fail "events that do not describe the seeded change: $bad"
ev=$(jq -c '.events[] | select(.metric == "ctxsw.high_ns") |
	{change_pct, p_value, fingerprint_diff, before: .before.n, after: .after.n}' <<<"$EV")
ok "$n events from the stored history, each once, within 2 cycles of the kernel change, naming it: $ev"

# Filters and errors.
[ "$(api '/api/v1/events?metric=ctxsw.high_ns' | jq '.events | length')" = 1 ] ||
	fail "?metric= does not filter"
[ "$(api "/api/v1/events?until=$(((change_ms - DAY) / 1000))" | jq '.events | length')" = 0 ] ||
	fail "?until= before the change still lists events"
[ "$(api "/api/v1/events?since=$(((change_ms - DAY) / 1000))&until=$(date +%s)" |
	jq '.events | length')" = "$n" ] || fail "?since=&until= around the change lost events"
[ "$(api '/api/v1/events?limit=1' | jq -c '[(.events | length), .more]')" = '[1,true]' ] ||
	fail "?limit=1 does not cut the list"
[ "$(http_code '/api/v1/events?metric=nope')" = 400 ] || fail "a bad metric is not a 400"
api '/api/v1/events?since=soon' | grep -q "'since'" || fail "a bad time does not name 'since'"
ok "filters by metric, since, until and limit; bad parameters are 400"

# The responses match the OpenAPI document.
api /api/v1/events >"$TW_TMP/events.json"
api '/api/v1/events?metric=nope' >"$TW_TMP/events-400.json"
python3 - "$SRC/tests/regress" "$SRC/web/openapi.json" "$TW_TMP/events.json" \
	"$TW_TMP/events-400.json" <<'EOF' || fail "GET /api/v1/events does not match web/openapi.json"
import json, sys
sys.path.insert(0, sys.argv[1])
from openapi_check import Checker
checker = Checker(json.load(open(sys.argv[2])))
errors = checker.response("GET", "/api/v1/events", "200", open(sys.argv[3]).read())
errors += checker.response("GET", "/api/v1/events", "400", open(sys.argv[4]).read())
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF
ok "GET /api/v1/events matches web/openapi.json"

# /metrics: a counter per figure and the time of the last event.
api /metrics >"$TW_TMP/metrics.txt"
grep -qxF 'threadwatch_regression_events_total{metric="ctxsw.high_ns"} 1' "$TW_TMP/metrics.txt" ||
	fail "/metrics does not count the ctxsw.high_ns event"
grep -qxF 'threadwatch_regression_events_total{metric="map32.slope"} 0' "$TW_TMP/metrics.txt" ||
	fail "/metrics lacks the zero count of an unchanged figure"
last=$(jq '[.events[].detected_ms] | max / 1000' <<<"$EV")
got=$(sed -n 's/^threadwatch_regression_last_event_timestamp_seconds //p' "$TW_TMP/metrics.txt")
[ "$(echo "$got == $last" | bc)" = 1 ] || fail "last event timestamp $got, expected $last"
total=$(awk '/^threadwatch_regression_events_total/ {s += $2} END {print s}' "$TW_TMP/metrics.txt")
[ "$total" = "$n" ] || fail "the counters add up to $total, not $n"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TW_TMP/metrics.txt" >"$TW_TMP/promtool.txt" 2>&1 ||
		fail "promtool: $(cat "$TW_TMP/promtool.txt")"
fi
ok "/metrics counts $total events by metric, the last at $got"

# One log line per event (the journal gets the same text with its MESSAGE_ID).
[ "$(grep -c 'after the kernel upgrade to .*: .* +[0-9.]*%, from ' "$TW_TMP/h.log")" = "$n" ] ||
	fail "expected $n event lines in the log: $(cat "$TW_TMP/h.log")"
grep -q 'after the kernel upgrade to .*: ctxsw.high_ns +.*; kernel .* → ' "$TW_TMP/h.log" ||
	fail "the log line lacks the kernel"
ok "the log has one line per event"

# threadwatch fleet: the EVENTS column and the JSON's count and newest event.
fleet_out=$("$B/threadwatch" fleet "http://127.0.0.1:$PORT") || fail "fleet failed: $fleet_out"
head -n1 <<<"$fleet_out" | grep -q 'EVENTS$' || fail "fleet has no EVENTS column: $fleet_out"
tail -n1 <<<"$fleet_out" | grep -Eq " $n, last [0-9dhm]+ ago\$" ||
	fail "fleet's EVENTS cell is not \"$n, last ... ago\": $fleet_out"
newest=$(jq -r '.events[0].metric' <<<"$EV")
"$B/threadwatch" fleet --json "http://127.0.0.1:$PORT" |
	jq -e --argjson n "$n" --arg m "$newest" '.hosts[0] | .events == $n and .last_event.metric == $m
		and .last_event.age_s > 0' >/dev/null || fail "fleet --json lacks the events"
ok "threadwatch fleet: $(tail -n1 <<<"$fleet_out" | awk '{print $(NF-3), $(NF-2), $(NF-1), $NF}')"

# A restart judges nothing twice.
stop_daemon
start_daemon h --interval 6h
sleep 1
[ "$(api /api/v1/events | jq '.events | length')" = "$n" ] || fail "a restart changed the events"
[ "$(grep -c 'after the kernel upgrade to .*, from ' "$TW_TMP/h.log")" = "$n" ] ||
	fail "a restart logged events again"
stop_daemon
ok "a restart records and logs nothing twice"

# A version-1 database (before events existed) is migrated and judged.
if command -v sqlite3 >/dev/null; then
	mkdir -p "$TW_TMP/m"
	cp "$DB" "$TW_TMP/m/threadwatch.db"
	sqlite3 "$TW_TMP/m/threadwatch.db" "DROP TABLE events; DROP TABLE workload_latest;
		DROP TABLE workload_figures; DROP TABLE workload_windows; DROP TABLE workloads;
		DROP TABLE workload_figure_names;
		DELETE FROM state WHERE key LIKE 'detect_through.%'; PRAGMA user_version = 1;" ||
		fail "cannot make a version-1 database"
	start_daemon m --interval 6h
	wait_for settled || fail "no events on the migrated database"
	[ "$(api /api/v1/events | jq -c '[.events[] | [.metric, .t_ms]] | sort')" = \
		"$(jq -c '[.events[] | [.metric, .t_ms]] | sort' <<<"$EV")" ] ||
		fail "the migrated database gave other events: $(api /api/v1/events | jq -c '[.events[].metric]')"
	stop_daemon
	# the newest schema version: the highest sql/NNN-*.sql
	latest=$(find "$SRC/sql" -name '[0-9][0-9][0-9]-*.sql' -printf '%f\n' | sort | tail -n 1 | sed 's/-.*//; s/^0*//')
	[ "$(sqlite3 "$TW_TMP/m/threadwatch.db" 'PRAGMA user_version')" = "$latest" ] ||
		fail "the database was not migrated to version $latest"
	ok "a version-1 database is migrated to $latest and gives the same $n events"
else
	echo "sqlite3 is not installed; the migration is not checked"
fi

#!/usr/bin/env bash
# 55-daemon-api: cycles on demand with the real built-in probes (--quick).
# POST /api/v1/runs needs the token (401 without, 403 when none is set),
# answers 202 with the cycle id and 409 while that cycle runs; the cycle's
# runs and a new recommendation follow, the node_exporter textfile is
# written after each cycle, and the quiet-host guard records its wait.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
for p in $TW_BUILTINS; do
	[ -x "$B/probes/$p" ] || fail "\"$B/probes/$p\" is not built"
done
fake_probe "$TW_TMP/probes.d" slow ok 1.5
PROM=$TW_TMP/textfile/threadwatch.prom
mkdir -p "$TW_TMP/textfile"

start_daemon d --probe-dir "$B/probes" --interval 1h --token "$TOKEN" --textfile-path "$PROM" \
	--workload-creates-per-second 50 --workload-switches-per-second 2e6
wait_cycle 1 120
[ "$(api /api/v1/status | jq -r .trigger_enabled)" = true ] || fail "trigger_enabled is not true"
rec1=$(api /api/v1/recommendation | jq -r .id)

# POST without or with a wrong token.
[ "$(http_code /api/v1/runs -X POST)" = 401 ] || fail "POST without a token was not 401"
[ "$(http_code /api/v1/runs -X POST -H 'Authorization: Bearer wrong-token-wrong-token')" = 401 ] ||
	fail "POST with a wrong token was not 401"

# With the token: 202 and the cycle id, then 409 while it runs.
out=$(api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" -w '\n%{http_code}')
[ "$(tail -n1 <<<"$out")" = 202 ] || fail "POST with the token: $out"
cycle=$(head -n1 <<<"$out" | jq -r .cycle_id)
[ "$cycle" = 2 ] || fail "expected cycle 2: $out"
[ "$(http_code /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN")" = 409 ] ||
	fail "a second POST while the cycle runs was not 409"
ok "POST: 401 without the token, 202 with cycle $cycle, then 409"
wait_cycle "$cycle" 120

last=$(api /api/v1/status | jq -c .last_cycle)
[ "$(jq -r .trigger <<<"$last")" = api ] || fail "the cycle's trigger is not api: $last"
runs=$(runs_json | jq -c --argjson c "$cycle" '[.[] | select(.cycle_id == $c)]')
# ok, or partial only because a timing probe found a loaded machine too busy
[ "$(jq -r .status <<<"$last")" = ok ] ||
	{ [ "$(jq -r .status <<<"$last")" = partial ] && jq -e "$JQ_RUN_BUSY"' all(run_busy(.probe; .status; .reason))' <<<"$runs" >/dev/null; } ||
	fail "the cycle did not end ok: $last; $(jq -c '[.[] | select(.status != "ok") | {probe, status, reason}]' <<<"$runs")"
want=$(printf '%s\n' $TW_BUILTINS slow | sort | paste -sd,)
[ "$(jq -r '[.[].probe] | sort | join(",")' <<<"$runs")" = "$want" ] ||
	fail "cycle $cycle's runs (want $want): $runs"
jq -e "$JQ_RUN_BUSY"' all(run_busy(.probe; .status; .reason))' <<<"$runs" >/dev/null || fail "a real probe failed: $runs"
rec2=$(api /api/v1/recommendation)
[ "$(jq -r .id <<<"$rec2")" -gt "$rec1" ] || fail "no new recommendation after the cycle"
ok "cycle $cycle: 4 ok runs; recommendation: $(jq -r .sentence <<<"$rec2")"
# The workload keys reach the recommendation: churn of 50 creates/s with
# 2e6 switches/s is 40,000 switches in a thread's life.
jq -e '.inputs.workload | .creates_per_second == 50 and .switches_per_second == 2000000' <<<"$rec2" >/dev/null ||
	fail "workload churn keys not in the inputs: $(jq -c .inputs.workload <<<"$rec2")"
jq -e '.figures.switches_per_thread == 40000' <<<"$rec2" >/dev/null ||
	fail "churn's switches per thread life: $(jq -c '.figures | {switches_per_thread}' <<<"$rec2")"
ok "workload churn: $(jq -c .inputs.workload <<<"$rec2")"

# The textfile for node_exporter.
[ -s "$PROM" ] || fail "no textfile at $PROM"
grep -q '^threadwatch_build_info' "$PROM" || fail "the textfile lacks threadwatch_build_info"
if command -v promtool >/dev/null; then
	promtool check metrics <"$PROM" || fail "promtool rejects the textfile"
fi
ok "textfile written ($(wc -l <"$PROM") lines)"
stop_daemon

# No token: POST is off (403) and the status says so.
start_daemon d2 --interval 1h
[ "$(http_code /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN")" = 403 ] ||
	fail "POST without a configured token was not 403"
api /api/v1/runs -X POST | jq -r .detail | grep -q 'set token or token_file in threadwatchd.conf, or --token' ||
	fail "the 403 does not name the setting: $(api /api/v1/runs -X POST)"
[ "$(api /api/v1/status | jq -r .trigger_enabled)" = false ] || fail "trigger_enabled is not false"
stop_daemon
ok "without a token POST is 403, naming the setting"

# A recommendation and a headroom not there yet say the wait in their 503
# (a script reads why it waits and until when, not "probe none yet"): a
# daemon whose first cycle waits an hour, so no read races its end.
start_daemon d3w --interval 1h --guard loadavg --guard-loadavg-per-cpu-max 0 --guard-wait-max 1h
wait_for sh -c "curl -s http://127.0.0.1:$PORT/api/v1/status >'$TW_TMP/wst.json' &&
	jq -e '.waiting_for_quiet_host != null' '$TW_TMP/wst.json'" ||
	fail "the status never showed the wait: $(api /api/v1/status)"
measure=$(jq -r .waiting_for_quiet_host.measure "$TW_TMP/wst.json")
for path in recommendation headroom; do
	http_code "/api/v1/$path" -D "$TW_TMP/$path.hdr" >/dev/null
	api "/api/v1/$path" >"$TW_TMP/$path.json"
	jq -e --arg m "$measure" '.status == 503 and (.detail | contains("; a cycle is waiting for a quiet host before its probes run: " + $m + " is ") and
		test("is [0-9.]+ per CPU, above 0\\.00 per CPU; it runs anyway at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z \\(in 3[0-9]{3} s\\)"))' \
		"$TW_TMP/$path.json" >/dev/null || fail "/api/v1/$path's 503 does not say the wait: $(cat "$TW_TMP/$path.json")"
	grep -qi '^retry-after: [0-9]' "$TW_TMP/$path.hdr" || fail "/api/v1/$path's 503 has no Retry-After"
done
stop_daemon
ok "while the first cycle waits for a quiet host, /api/v1/recommendation and /api/v1/headroom answer 503 naming the wait: $(jq -r .detail "$TW_TMP/headroom.json")"

# The quiet-host guard: a threshold no host can meet makes the start cycle
# wait for load_wait_max, and the cycle records the wait.
fake_builtins "$TW_TMP/probes"
start_daemon d3 --interval 1h --guard loadavg --guard-loadavg-per-cpu-max 0 --guard-wait-max 6s
# While it waits, the status says for what, the figure against the limit,
# and until when (a page showing "running" for an hour would hide it).
# (the status checked is the one read that showed the wait: on a loaded
# machine the wait may end between two reads)
wait_for sh -c "curl -s http://127.0.0.1:$PORT/api/v1/status >'$TW_TMP/wst.json' &&
	jq -e '.waiting_for_quiet_host != null' '$TW_TMP/wst.json'" ||
	fail "the status never showed the wait: $(api /api/v1/status)"
st=$(cat "$TW_TMP/wst.json")
jq -e '.cycle_running and (.waiting_for_quiet_host | (.measure | test("load average"; "i")) and .limit == 0
	and .value > 0 and .until_ms > (now * 1000) and .until_ms < (now * 1000 + 7000))' <<<"$st" >/dev/null ||
	fail "the wait in the status: $(jq -c .waiting_for_quiet_host <<<"$st")"
wait_cycle 1 30
waited=$(api /api/v1/status | jq -r .last_cycle.waited_s)
echo "$waited >= 5.9" | bc | grep -q 1 || fail "the cycle waited $waited s, expected 6"
grep -q 'waiting up to 6 s for a quiet host' "$TW_TMP/d3.log" || fail "the wait was not logged"
[ "$(api /api/v1/status | jq -c .waiting_for_quiet_host)" = null ] || fail "the wait outlived the cycle"
stop_daemon
ok "quiet-host guard: the status named the wait ($(jq -c '.waiting_for_quiet_host | [.measure, .value, .limit]' <<<"$st")); the cycle waited ${waited}s and recorded it"

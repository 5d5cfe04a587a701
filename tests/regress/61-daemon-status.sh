#!/usr/bin/env bash
# 61-daemon-status: no failed cycle is shown as ok. With every built-in probe
# missing the cycle is "failed", with one missing "partial", with all there
# "ok": in GET /api/v1/status, in /metrics (threadwatch_last_cycle_status),
# in the log, in the body of /healthz (which stays 200: it is about the
# daemon) and in `threadwatch fleet`. With no probe data there is no
# recommendation: the API says "not enough data yet" and the log says why.
# Also: a daemon started from a build tree with no flags uses the probes
# beside its executable; an installed one keeps the packaged directory.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"

# expect_cycle NAME STATUS: the last cycle's status everywhere it is shown.
expect_cycle() {
	local name=$1 want=$2 st m h f
	st=$(api /api/v1/status)
	[ "$(jq -r .last_cycle_status <<<"$st")" = "$want" ] &&
		[ "$(jq -r .last_cycle.status <<<"$st")" = "$want" ] ||
		fail "$name: /api/v1/status says $(jq -c '[.last_cycle_status, .last_cycle.status]' <<<"$st"), expected $want"
	m=$(api /metrics | grep '^threadwatch_last_cycle_status{')
	grep -qx "threadwatch_last_cycle_status{status=\"$want\"} 1" <<<"$m" ||
		fail "$name: /metrics has no status=\"$want\" 1: $m"
	[ "$(grep -c ' 1$' <<<"$m")" = 1 ] || fail "$name: more than one status is 1: $m"
	[ "$(http_code /healthz)" = 200 ] || fail "$name: /healthz is not 200 after a $want cycle"
	h=$(api /healthz)
	[ "$(jq -r '.status + " " + .last_cycle_status' <<<"$h")" = "ok $want" ] ||
		fail "$name: /healthz body $h"
	grep -q "Cycle 1 finished: $want" "$TW_TMP/$name.log" || fail "$name: the log does not say $want"
	f=$("$B/threadwatch" fleet "http://127.0.0.1:$PORT")
	if [ "$want" = ok ]; then
		grep -q "ago " <<<"$f" && ! grep -q '(ok)' <<<"$f" || fail "$name: fleet: $f"
	else
		grep -Eq "ago \($want(\)|: )" <<<"$f" || fail "$name: fleet does not show ($want): $f"
	fi
	ok "$name: a $want cycle is $want in the API, /metrics, /healthz, the log and fleet"
}

# During the first cycle the recommendation and the headroom are "not yet":
# 503 with Retry-After, naming the probe that runs (a 404 would read as a
# wrong URL); the page and fleet take that as nothing yet.
mkdir -p "$TW_TMP/probes" "$TW_TMP/probes.d"
fake_probe "$TW_TMP/slow" ctxsw ok 8
start_daemon first --interval 1h --probe-dir "$TW_TMP/slow"
wait_for sh -c "curl -s http://127.0.0.1:$PORT/api/v1/status | jq -e '.current_probe == \"ctxsw\"'" ||
	fail "the slow probe never showed as running: $(api /api/v1/status)"
for path in /api/v1/recommendation /api/v1/headroom; do
	out=$(curl -sS -D "$TW_TMP/first.h" --max-time 10 "http://127.0.0.1:$PORT$path")
	code=$(awk 'NR == 1 {print $2}' "$TW_TMP/first.h")
	[ "$code" = 503 ] || fail "$path during the first cycle: $code $out"
	grep -qi '^Retry-After: [1-9]' "$TW_TMP/first.h" || fail "$path: no Retry-After: $(cat "$TW_TMP/first.h")"
	jq -r .detail <<<"$out" | grep -q 'a cycle is running (probe ctxsw)' || fail "$path: $out"
done
f=$("$B/threadwatch" fleet "http://127.0.0.1:$PORT") || fail "fleet during the first cycle: $f"
! grep -qi 'error\|503' <<<"$f" || fail "fleet calls a daemon in its first cycle failed: $f"
grep -q 'not yet computed\|/api/v1/recommendation' "$TW_TMP/first.log" &&
	fail "a 'not yet' answer was logged as a failure: $(grep 503 "$TW_TMP/first.log")"
stop_daemon
ok "during the first cycle: 503 with Retry-After naming the running probe; fleet takes it as nothing yet"

# Every built-in probe missing: failed, and no recommendation from nothing.
start_daemon none --interval 1h
wait_cycle 1 60
expect_cycle none failed
# Every probe failed: the recommendation says so, naming each.
rec=$(api /api/v1/recommendation)
[ "$(jq -r '[.failed_probes[].probe] | sort | join(",")' <<<"$rec")" = ctxsw,map32,threads ] ||
	fail "the recommendation does not name the three failed probes: $(jq -c . <<<"$rec" | head -c 400)"
jq -r .sentence <<<"$rec" | grep -q "ctxsw's last run failed: probe .* not found" ||
	fail "the sentence does not say why: $(jq -r .sentence <<<"$rec")"
grep -q "$TW_NBUILTINS of $TW_NBUILTINS probes failed this cycle" "$TW_TMP/none.log" ||
	fail "the failures are not counted"
stop_daemon
ok "no probe data: the recommendation names every failed probe and why"

# One missing: partial; the recommendation says its window is assumed
# (the sentence too when it rests on the window: tests/unit/test_recommend.c).
fake_probe "$TW_TMP/probes" ctxsw ok
fake_probe "$TW_TMP/probes" threads ok
start_daemon one --interval 1h
wait_cycle 1 60
expect_cycle one partial
rec=$(api /api/v1/recommendation)
[ "$(jq -r .figures.window_assumed <<<"$rec")" = true ] || fail "map32 is missing but the window is not assumed"
jq -r '.reasons[]' <<<"$rec" | grep -q '^Assuming (no map32 figures)' ||
	fail "the reasons present the assumed window as measured: $(jq -c .reasons <<<"$rec")"
stop_daemon
# A restart keeps the last cycle's status (no new cycle is due for an hour).
start_daemon one --interval 1h
[ "$(api /healthz | jq -r .last_cycle_status)" = partial ] ||
	fail "after a restart /healthz says $(api /healthz)"
[ "$(api /api/v1/status | jq -r .last_cycle_status)" = partial ] || fail "after a restart the status forgot"
stop_daemon
ok "a restart keeps the last cycle's status"

fake_probe "$TW_TMP/probes" map32 ok
fake_probe "$TW_TMP/probes" handoff ok
fake_probe "$TW_TMP/probes" stackmem ok
fake_probe "$TW_TMP/probes" createscale ok
start_daemon all --interval 1h
wait_cycle 1 60
expect_cycle all ok
stop_daemon

# A build tree: threadwatchd beside probes/, no flags at all. (A copy of the
# daemon, so that the fake probes answer quickly.)
mkdir -p "$TW_TMP/tree/probes" "$TW_TMP/inst/sbin"
cp "$TWD" "$TW_TMP/tree/threadwatchd"
cp "$TWD" "$TW_TMP/inst/sbin/threadwatchd"
fake_builtins "$TW_TMP/tree/probes"
out=$(cd "$TW_TMP" && env -u STATE_DIRECTORY "$TW_TMP/tree/threadwatchd" --check-config) ||
	fail "--check-config with no flags: $out"
grep -qx "probe_dir = $TW_TMP/tree/probes *# beside the executable" <<<"$out" ||
	fail "a build-tree daemon does not use the probes beside it: $(grep probe_dir <<<"$out")"
[ "$("$B/threadwatchd" --check-config | sed -n 's/^probe_dir = \([^ ]*\).*/\1/p')" = "$B/probes" ] ||
	fail "build/threadwatchd does not find build/probes"
out=$("$TW_TMP/inst/sbin/threadwatchd" --check-config | grep '^probe_dir')
grep -q '# default$' <<<"$out" && ! grep -q "$TW_TMP" <<<"$out" ||
	fail "an installed daemon left the packaged directory: $out"
# it runs: the first cycle uses them (the port, the guard and the splay only
# so that the test neither collides with a running daemon nor waits on a
# busy host or on the start's splay)
mkdir -p "$TW_TMP/run"
(cd "$TW_TMP/run" && exec env -u STATE_DIRECTORY "$TW_TMP/tree/threadwatchd" --port 0 \
	--port-file "$TW_TMP/run/port" --guard off --splay 0 >"$TW_TMP/tree.log" 2>&1) &
DPID=$!
wait_for test -s "$TW_TMP/run/port" || fail "the build-tree daemon did not start: $(cat "$TW_TMP/tree.log")"
PORT=$(cat "$TW_TMP/run/port")
wait_cycle 1 60
[ "$(api /api/v1/status | jq -r .last_cycle.status)" = ok ] ||
	fail "the build-tree start cycle is not ok: $(cat "$TW_TMP/tree.log")"
[ -f "$TW_TMP/run/var/threadwatch.db" ] || fail "the database is not in ./var"
stop_daemon
ok "a build-tree daemon with no flags finds its probes; an installed one keeps $(sed 's/ *#.*//' <<<"$out")"

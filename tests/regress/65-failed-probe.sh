#!/usr/bin/env bash
# 65-failed-probe: a probe the recommendation needs crashes (a fake ctxsw
# that kills itself with SIGSEGV) and is named where people look: the
# recommendation of the API and of `threadwatch recommend` (which exits 3),
# the row of `threadwatch fleet` (which exits 3). Then probes_disabled:
# ctxsw switched off does not run, is shown as disabled and not failed, and
# the cycle is ok; an arm switched off reaches its probe as --skip-arm.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
TW=$B/threadwatch

P=$TW_TMP/probes
fake_probe "$P" ctxsw crash
fake_probe "$P" threads ok
fake_probe "$P" map32 ok
fake_probe "$P" handoff ok
fake_probe "$P" stackmem ok
fake_probe "$P" createscale ok
mkdir -p "$TW_TMP/probes.d"

# --- a crashing ctxsw ---------------------------------------------------------
start_daemon d --interval 1h --token "$TOKEN"
wait_cycle 1
[ "$(api /api/v1/status | jq -r .last_cycle.status)" = partial ] ||
	fail "a cycle whose ctxsw crashed is not partial: $(api /api/v1/status)"
rec=$(api /api/v1/recommendation)
jq -e '.failed_probes | length == 1' <<<"$rec" >/dev/null ||
	fail "the recommendation does not name one failed probe: $rec"
jq -e '.failed_probes[0] | .probe == "ctxsw" and .status == "error" and .kind == "crash"
	and .signal == "SIGSEGV" and (.reason | startswith("crashed with SIGSEGV"))
	and (.run_id | type) == "number" and (.t_ms | type) == "number"' <<<"$rec" >/dev/null ||
	fail "the failed probe is not ctxsw crashed with SIGSEGV: $(jq -c .failed_probes <<<"$rec")"
jq -e '.disabled_probes == []' <<<"$rec" >/dev/null || fail "disabled_probes: $rec"
jq -e '.sentence | contains("ctxsw'"'"'s last run failed: crashed with SIGSEGV")' <<<"$rec" >/dev/null ||
	fail "the sentence does not name the crash: $(jq -r .sentence <<<"$rec")"
jq -e '[.reasons[] | select(contains("no figures were given") or contains("were given,"))] == []' \
	<<<"$rec" >/dev/null || fail "a reason still says no figures were given: $rec"
ok "API: the recommendation names ctxsw crashed with SIGSEGV"
# The run itself says what it was as data (the runs table's failure and
# term_signal columns), and the others say nothing.
runs=$(api '/api/v1/runs?limit=10')
jq -e '[.runs[] | select(.probe == "ctxsw")][0] | .failure == "crash" and .signal == "SIGSEGV"' \
	<<<"$runs" >/dev/null || fail "the ctxsw run does not say crash, SIGSEGV: $(jq -c '.runs[0]' <<<"$runs")"
jq -e '[.runs[] | select(.probe != "ctxsw") | .failure, .signal] | all(. == null)' <<<"$runs" \
	>/dev/null || fail "an ok run has a failure: $runs"
ok "API: the run says failure crash, signal SIGSEGV"

# threadwatch recommend, from the API's inputs and from probes run now
api /api/v1/recommendation | jq .inputs >"$TW_TMP/inputs.json"
out=$("$TW" recommend --input "$TW_TMP/inputs.json")
rc=$?
[ "$rc" = 3 ] || fail "threadwatch recommend --input exited $rc, not 3, with a failed ctxsw: $out"
grep -q "ctxsw's last run failed: crashed with SIGSEGV" <<<"$out" ||
	fail "threadwatch recommend does not name the crash: $out"
out=$("$TW" recommend --input "$TW_TMP/inputs.json" --json)
rc=$?
[ "$rc" = 3 ] || fail "threadwatch recommend --json exited $rc, not 3"
jq -e '.result.failed_probes[0].probe == "ctxsw"' <<<"$out" >/dev/null ||
	fail "threadwatch recommend --json: no failed_probes: $out"
out=$(THREADWATCH_PROBE_DIR=$P "$TW" recommend --quick 2>&1)
rc=$?
[ "$rc" = 3 ] || fail "threadwatch recommend (probes run now) exited $rc, not 3: $out"
grep -q "ctxsw's last run failed: crashed with SIGSEGV" <<<"$out" ||
	fail "threadwatch recommend (probes run now) does not name the crash: $out"
grep -q 'no figures were given' <<<"$out" && fail "threadwatch recommend still says no figures were given"
ok "threadwatch recommend names the crash and exits 3"

# threadwatch fleet
out=$("$TW" fleet "http://127.0.0.1:$PORT")
rc=$?
[ "$rc" = 3 ] || fail "threadwatch fleet exited $rc, not 3, for a host whose ctxsw crashed: $out"
grep -qF 'partial: ctxsw crashed (SIGSEGV)' <<<"$out" || fail "the fleet row does not name the crash: $out"
out=$("$TW" fleet --json "http://127.0.0.1:$PORT")
rc=$?
[ "$rc" = 3 ] || fail "threadwatch fleet --json exited $rc, not 3"
jq -e '.hosts_probe_failed == 1 and .hosts[0].failed_probes[0].probe == "ctxsw"
	and .hosts[0].failed_probes[0].signal == "SIGSEGV"' <<<"$out" >/dev/null ||
	fail "threadwatch fleet --json: $out"
ok "threadwatch fleet names the crash and exits 3"
stop_daemon

# --- ctxsw disabled ---------------------------------------------------------------
"$TWD" --config "$TW_TMP/empty.conf" --probes-disabled 'ctxsw,  ctxsw.selector' --check-config |
	grep -qE '^probes_disabled = ctxsw, ctxsw.selector ' || fail "--check-config does not show probes_disabled"
err=$("$TWD" --config "$TW_TMP/empty.conf" --probes-disabled ctxsw.nosuch --check-config 2>&1) &&
	fail "an unknown arm was accepted"
grep -q '"ctxsw.nosuch" is not a built-in probe or arm' <<<"$err" || fail "unclear error: $err"

start_daemon d --interval 1h --token "$TOKEN" --probes-disabled ctxsw
id=$(api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" | jq -r .cycle_id)
wait_cycle "$id"
[ "$(api /api/v1/status | jq -r .last_cycle.status)" = ok ] ||
	fail "a cycle with ctxsw disabled is not ok: $(api /api/v1/status)"
[ "$(runs_json | jq '[.[] | select(.probe == "ctxsw")] | length')" = 1 ] ||
	fail "the disabled ctxsw ran again"
rec=$(api /api/v1/recommendation)
jq -e '.failed_probes == [] and .disabled_probes == ["ctxsw"]' <<<"$rec" >/dev/null ||
	fail "a disabled ctxsw is not shown as disabled (and only that): $rec"
jq -e '.sentence | contains("ctxsw is disabled in the configuration")' <<<"$rec" >/dev/null ||
	fail "the sentence does not say ctxsw is disabled: $(jq -r .sentence <<<"$rec")"
"$TW" fleet "http://127.0.0.1:$PORT" >/dev/null || fail "threadwatch fleet fails for a disabled probe"
ok "ctxsw disabled: not run, shown as disabled, the cycle ok, fleet exits 0"
stop_daemon

# --- an arm disabled: the probe gets --skip-arm ------------------------------------
fake_probe "$P" ctxsw ok
sed -i "2a echo \"\$*\" >$TW_TMP/ctxsw.args" "$P/ctxsw"
start_daemon d --interval 1h --token "$TOKEN" --probes-disabled ctxsw.selector
id=$(api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" | jq -r .cycle_id)
wait_cycle "$id"
grep -qx -- '--quick --skip-arm selector' "$TW_TMP/ctxsw.args" ||
	fail "ctxsw got \"$(cat "$TW_TMP/ctxsw.args")\", not --skip-arm selector"
stop_daemon
[ -x "$B/probes/map32" ] || fail "no build/probes/map32"
"$B/probes/map32" --help | grep -q -- '--skip-arm NAME' || fail "the probes do not take --skip-arm"
ok "ctxsw.selector disabled: the probe is run with --skip-arm selector"

#!/usr/bin/env bash
# 52-daemon-bad-probes: probes that crash, hang, print garbage, print
# nothing, print JSON of the wrong shape or 10 MB, are not executable, are
# missing, claim another name, or leave a grandchild behind. Each becomes an
# error run with its reason, no process of theirs survives, and the daemon
# keeps serving throughout.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"

P=$TW_TMP/probes
D=$TW_TMP/probes.d
fake_probe "$P" ctxsw ok
fake_probe "$P" threads ok
# map32 is missing from the probe directory
fake_probe "$D" crash crash
fake_probe "$D" hang hang
fake_probe "$D" garbage garbage
fake_probe "$D" nothing nothing
fake_probe "$D" shape shape
fake_probe "$D" flood flood
fake_probe "$D" notexec ok
chmod 644 "$D/notexec"
fake_probe "$D" wrongname ok
sed -i 's/"probe": "wrongname"/"probe": "other"/' "$D/wrongname"
# a grandchild that would outlive the probe unless its group is killed
fake_probe "$D" grandchild ok
sed -i "2a sh -c 'sleep 300; : tw-linger-$TW_TMP' >/dev/null 2>\&1 &" "$D/grandchild"
fake_probe "$D" README ok # not a probe name: ignored
mkdir "$D/subdir"         # not a file: ignored

# 5 s: the hang is cut there, and a loaded machine still floods 10 MB well within it
start_daemon d --probe-timeout 5s
# While the hang runs, the daemon serves.
wait_for grep -q 'Probe garbage error' "$TW_TMP/d.log" || fail "the cycle did not start"
[ "$(http_code /healthz)" = 200 ] || fail "not serving while the probes run"
wait_cycle 1 60
[ "$(http_code /healthz)" = 200 ] || fail "not serving after the cycle"

runs=$(runs_json)
# expect PROBE STATUS REASON-REGEX
expect() {
	local got
	got=$(jq -r --arg p "$1" '[.[] | select(.probe == $p)] | .[0] | "\(.status)\t\(.reason)"' \
		<<<"$runs")
	[ "${got%%$'\t'*}" = "$2" ] || fail "$1: status ${got%%$'\t'*}, expected $2 (${got#*$'\t'})"
	grep -Eq "$3" <<<"${got#*$'\t'}" || fail "$1: reason \"${got#*$'\t'}\" does not match /$3/"
	ok "$1: $2: ${got#*$'\t'}"
}
expect ctxsw ok null
expect threads ok null
expect map32 error 'not found|No such file'
expect crash error 'SIGSEGV|[Ss]egmentation'
expect hang error 'time limit'
expect garbage error 'invalid document'
expect nothing error 'empty output'
expect shape error 'invalid document'
expect flood error 'output exceeds'
expect notexec error '[Pp]ermission denied|not executable'
expect wrongname error 'from probe "other"'
expect grandchild ok null
jq -e '[.[] | select(.probe == "README" or .probe == "subdir")] | length == 0' <<<"$runs" \
	>/dev/null || fail "README or subdir was run as a probe"
# the built-ins and the 9 entries of probes.d that run
[ "$(jq length <<<"$runs")" = $((TW_NBUILTINS + 9)) ] ||
	fail "expected $((TW_NBUILTINS + 9)) runs, got $(jq length <<<"$runs")"

pgrep -f "tw-linger-$TW_TMP" >/dev/null && fail "the grandchild of a probe survived its run"
pgrep -f "$D/hang" >/dev/null && fail "the hanging probe survived its time limit"
ok "no process of any probe survives"

rss=$(awk '/^VmRSS/ {print $2}' "/proc/$DPID/status")
[ "$rss" -lt 204800 ] || fail "the daemon's RSS is $rss kB after a 10 MB flood"
ok "daemon RSS after the cycle: $rss kB"
stop_daemon

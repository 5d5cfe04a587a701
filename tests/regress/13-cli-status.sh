#!/usr/bin/env bash
# 13-cli-status: `threadwatch status` asks one daemon what it is doing.
#  - a real daemon whose first cycle waits for a quiet host (a load limit
#    of 0): the text names the wait, the measure and its limit;
#  - a real daemon (seeded history) running a slow probe: the text names
#    the probe, the host, the version and the verdict's plain sentence;
#    --json is /api/v1/status, key for key;
#  - a dead port exits 1 "unreachable", a port that takes the connection
#    and never answers exits 4 "no answer (connected, then silent)", a
#    server that is not a threadwatchd exits 5, bad usage exits 2;
#  - a hostile daemon's escapes, C1 and bidirectional controls and
#    newlines reach neither the text nor --json raw.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
TW=$B/threadwatch
SEED=$B/tests/twseed
[ -x "$TW" ] && [ -x "$SEED" ] || fail "threadwatch or twseed is not built"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
trap cleanup EXIT

# status ARGS...: runs threadwatch status; sets OUT, ERR and RC.
status() {
	OUT=$("$TW" status "$@" 2>"$TW_TMP/err")
	RC=$?
	ERR=$(cat "$TW_TMP/err")
}
# line LABEL: the text's line of that label, without it.
line() { sed -n "s/^$1  *//p" <<<"$OUT"; }

mkdir -p "$TW_TMP/probes" "$TW_TMP/probes.d"

# --- a daemon waiting for a quiet host --------------------------------------------
# No host meets a load average of 0 per CPU: the first cycle waits (up to
# 60 s, far beyond this test's look at it).
start_daemon wait --interval 1h --guard loadavg --guard-loadavg-per-cpu-max 0 --guard-wait-max 60s
PIDS+=("$DPID")
WAIT_PORT=$PORT
# the wait is in the status as soon as the cycle runs, not at the guard's
# second look (5 s later: the first went only to systemd and the store)
t_run=""
for _ in $(seq 1 300); do
	st=$(curl -s "http://127.0.0.1:$PORT/api/v1/status")
	now=$(date +%s.%N)
	if jq -e '.waiting_for_quiet_host != null' <<<"$st" >/dev/null 2>&1; then
		break
	fi
	[ -z "$t_run" ] && jq -e '.cycle_running == true' <<<"$st" >/dev/null 2>&1 && t_run=$now
	[ -n "$t_run" ] && awk -v a="$now" -v b="$t_run" 'BEGIN {exit !(a - b > 1.5)}' &&
		fail "the cycle ran for 1.5 s before its status named the wait: $st"
	sleep 0.1
done
# --- a daemon running a slow probe, with a recommendation from its history ------
fake_probe "$TW_TMP/slow" ctxsw ok 40
mkdir -p "$TW_TMP/run"
"$SEED" --db "$TW_TMP/run/threadwatch.db" --days 2 --quiet --seed 11 || fail "twseed failed"
start_daemon run --probe-dir "$TW_TMP/slow" --token "$TOKEN"
PIDS+=("$DPID")
RUN_PORT=$PORT
api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" >/dev/null || fail "could not start a cycle"

PORT=$WAIT_PORT
wait_for sh -c "curl -s http://127.0.0.1:$PORT/api/v1/status | jq -e '.waiting_for_quiet_host != null'" ||
	wait_for sh -c "curl -s http://127.0.0.1:$PORT/api/v1/status | jq -e '.waiting_for_quiet_host != null'" ||
	fail "the daemon never showed a wait: $(api /api/v1/status)"
status "127.0.0.1:$PORT"
echo "$OUT"
[ "$RC" = 0 ] || fail "status of a waiting daemon: exit $RC: $ERR"
line cycle | grep -Eq '^waiting for a quiet host: Load average \(1 min\) is [0-9.]+ per CPU, above its limit 0 per CPU; the cycle runs anyway in [0-9]+[sm]$' ||
	fail "the wait is not named: $(line cycle)"
[ "$(line 'last cycle')" = "none has ended yet" ] || fail "last cycle: $(line 'last cycle')"
line verdict | grep -q '^none yet' || fail "a first cycle's verdict: $(line verdict)"
ok "a waiting daemon: $(line cycle)"

PORT=$RUN_PORT
wait_for sh -c "curl -s http://127.0.0.1:$PORT/api/v1/status | jq -e '.current_probe == \"ctxsw\"'" ||
	fail "the slow probe never showed as running: $(api /api/v1/status)"
status "http://127.0.0.1:$PORT/"
echo "$OUT"
[ "$RC" = 0 ] || fail "status of a running daemon: exit $RC: $ERR"
[ "$(line cycle)" = "running: probe ctxsw" ] || fail "the running probe is not named: $(line cycle)"
host=$(api /api/v1/host | jq -r .current.fingerprint.hostname)
version=$(api /api/v1/status | jq -r .version)
[ "$(line daemon)" = "threadwatchd $version on $host (http://127.0.0.1:$PORT)" ] ||
	fail "the daemon line: $(line daemon)"
rec=$(api /api/v1/recommendation)
want="$(jq -r '.verdict + " (confidence: " + .confidence + "): " + .action' <<<"$rec")"
[ "$(line verdict)" = "$want" ] || fail "the verdict line: \"$(line verdict)\", expected \"$want\""
line 'last cycle' | grep -Eq '^ok, ended [0-9]+[smhd]' || fail "last cycle: $(line 'last cycle')"
[ "$(line store)" = "ok (the database takes writes)" ] || fail "store: $(line store)"
[ "$(wc -l <<<"$OUT")" = 6 ] || fail "expected 6 lines: $OUT"
ok "a running daemon: $(line cycle); $(line verdict)"

for p in "$WAIT_PORT" "$RUN_PORT"; do
	status --json "127.0.0.1:$p"
	[ "$RC" = 0 ] || fail "--json: exit $RC: $ERR"
	want=$(curl -sS --max-time 10 "http://127.0.0.1:$p/api/v1/status")
	[ "$(jq -c keys <<<"$OUT")" = "$(jq -c keys <<<"$want")" ] ||
		fail "--json's keys differ from /api/v1/status's: $(jq -c keys <<<"$OUT") $(jq -c keys <<<"$want")"
	[ "$(jq -c '[.version, .last_cycle, .store_error]' <<<"$OUT")" = "$(jq -c '[.version, .last_cycle, .store_error]' <<<"$want")" ] ||
		fail "--json differs from /api/v1/status: $OUT"
done
ok "--json is /api/v1/status, key for key: $(jq -c keys <<<"$OUT")"

# --- no daemon, a silent one, a foreign one, bad usage ------------------------------
dead=$(free_port)
status --timeout 5 "127.0.0.1:$dead"
[ "$RC" = 1 ] || fail "a dead port: exit $RC, expected 1: $OUT $ERR"
grep -q "^threadwatch status: http://127.0.0.1:$dead: unreachable: " <<<"$ERR" || fail "a dead port: $ERR"
[ -z "$OUT" ] || fail "a dead port printed: $OUT"
ok "a dead port: exit 1, $ERR"

silent=$(free_port)
silent_listener "$silent"
PIDS+=("$SILENT_PID")
status --timeout 1 "127.0.0.1:$silent"
[ "$RC" = 4 ] || fail "a silent port: exit $RC, expected 4: $ERR"
grep -q "^threadwatch status: http://127.0.0.1:$silent: no answer (connected, then silent): no answer within 1 s" <<<"$ERR" ||
	fail "a silent port: $ERR"
ok "a silent port: exit 4, $ERR"

# Without a URL: the daemon's default listen address, whatever is there.
out=$("$TW" status --timeout 1 2>&1)
grep -q 'http://127.0.0.1:8437' <<<"$out" || fail "no URL does not ask http://127.0.0.1:8437: $out"

for args in "a b" "--frob" "--timeout x" "ftp://127.0.0.1:$dead" "--insecure --cacert /dev/null"; do
	# shellcheck disable=SC2086
	status $args
	[ "$RC" = 2 ] || fail "status $args: exit $RC, expected 2"
	grep -q "^threadwatch status: " <<<"$ERR" && grep -q "^Try 'threadwatch status --help'" <<<"$ERR" ||
		fail "status $args: $ERR"
done
status a b
grep -q 'one daemon at a time' <<<"$ERR" || fail "two URLs: $ERR"
ok "bad usage: exit 2 with one line and \"Try --help\""

# --- a hostile daemon -------------------------------------------------------------
cat >"$TW_TMP/hostile.py" <<'PY'
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
I64 = 2**63 - 1
EVIL = "\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202e\nFORGED"
ANS = {
    "/api/v1/status": {"version": "9" + EVIL, "now_ms": I64, "last_cycle_ms": -I64 - 1,
                       "next_cycle_ms": None, "cycle_running": True, "last_cycle_status": "ok" + EVIL,
                       "current_probe": None, "store_error": "disk" + EVIL,
                       "waiting_for_quiet_host": {"measure": "load" + EVIL, "value": 1e308,
                                                  "limit": -1e308, "unit": EVIL, "until_ms": -I64 - 1},
                       "workloads_window_end_ms": I64},
    "/api/v1/host": {"current": {"fingerprint": {"hostname": "evil" + EVIL}}},
    "/api/v1/recommendation": {"verdict": "low" + EVIL, "confidence": "strong\r",
                               "action": "Act" + EVIL},
}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        body = json.dumps(ANS.get(self.path, {"error": {"status": 404, "message": "no" + EVIL}})).encode()
        self.send_response(200 if self.path in ANS else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.server_port)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.timeout = 1
import time
end = time.time() + 60
while time.time() < end:
    s.handle_request()
PY
python3 "$TW_TMP/hostile.py" "$TW_TMP/hostile.port" &
PIDS+=($!)
wait_for test -s "$TW_TMP/hostile.port" || fail "the hostile server did not start"
hp=$(cat "$TW_TMP/hostile.port")
# raw ARGS...: stdout and stderr of threadwatch status, as bytes in hex
raw() { "$TW" status "$@" 2>&1 | od -An -tx1 | tr -d ' \n'; }
for args in "127.0.0.1:$hp" "--json 127.0.0.1:$hp" "127.0.0.1:$hp/nothing"; do
	# shellcheck disable=SC2086
	hex=$(raw $args)
	[ -n "$hex" ] || fail "status $args printed nothing"
	# ESC, BEL, CR, C1 (U+009B as c2 9b), RLO (U+202E as e2 80 ae), anywhere
	for bad in 1b 07 0d c29b e280ae; do
		# even positions only: whole bytes
		grep -Eq "^(..)*$bad" <<<"$hex" && fail "status $args let the byte(s) $bad through"
	done
	# shellcheck disable=SC2086
	"$TW" status $args 2>&1 | grep -q '^FORGED' && fail "status $args let a newline through"
done
status "127.0.0.1:$hp"
echo "$OUT"
[ "$RC" = 0 ] && [ "$(wc -l <<<"$OUT")" = 6 ] || fail "a hostile daemon: exit $RC, $(wc -l <<<"$OUT") lines: $OUT $ERR"
status --json "127.0.0.1:$hp"
[ "$(jq -cS . <<<"$OUT")" = "$(curl -sS "http://127.0.0.1:$hp/api/v1/status" | jq -cS .)" ] ||
	fail "--json changed the hostile document: $OUT"
status "127.0.0.1:$hp/nothing"
[ "$RC" = 5 ] || fail "a server that is not a threadwatchd: exit $RC, expected 5: $ERR"
grep -q "not a threadwatchd API: GET /api/v1/status: HTTP 404: no?" <<<"$ERR" || fail "not a threadwatchd: $ERR"
ok "a hostile daemon: no escape, control or bidirectional character reaches the terminal; --json keeps its values; a foreign server exits 5"

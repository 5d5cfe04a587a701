#!/usr/bin/env bash
# 51-daemon-notify: threadwatchd under a stand-in for systemd's notify
# socket. READY=1 comes once it listens, STATUS= shows the last and next
# cycle (after an interrupted one: its retry), WATCHDOG=1 keeps coming at half of WATCHDOG_USEC, SIGHUP reloads
# (a bad file keeps the old configuration), and SIGTERM with a probe running
# kills the probe, records the run and exits 0 within 5 s after STOPPING=1.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }

fake_builtins "$TW_TMP/probes"
fake_probe "$TW_TMP/probes.d" zz-hang hang
NOTES=$TW_TMP/notify.txt
notify_receiver "$TW_TMP/notify.sock" "$NOTES"
printf 'interval = 1h\n' >"$TW_TMP/d.conf"

# The daemon's own pid must be in WATCHDOG_PID: the subshell execs it.
mkdir -p "$TW_TMP/d"
(
	export NOTIFY_SOCKET=$TW_TMP/notify.sock WATCHDOG_USEC=400000 WATCHDOG_PID=$BASHPID
	exec "$TWD" --foreground --config "$TW_TMP/d.conf" --state-dir "$TW_TMP/d" --port 0 \
		--port-file "$TW_TMP/d/port" --probe-dir "$TW_TMP/probes" \
		--probes-d "$TW_TMP/probes.d" --quick --guard off --splay 0 --probe-timeout 60s \
		>"$TW_TMP/d.log" 2>&1
) &
DPID=$!
wait_for grep -qx READY=1 "$NOTES" || fail "no READY=1: $(cat "$NOTES" "$TW_TMP/d.log")"
[ -s "$TW_TMP/d/port" ] || fail "READY=1 came before the port file"
PORT=$(cat "$TW_TMP/d/port")
[ "$(http_code /healthz)" = 200 ] || fail "not serving after READY=1"
ok "READY=1 after listening on port $PORT"

# The start cycle runs the three fakes, then hangs in zz-hang.
wait_for grep -q '^STATUS=Cycle [0-9]* running: probe zz-hang' "$NOTES" ||
	fail "no STATUS= naming the running probe: $(cat "$NOTES")"
ok "$(grep -m1 '^STATUS=Cycle.*zz-hang' "$NOTES")"

sleep 1.2
n=$(grep -cx WATCHDOG=1 "$NOTES")
[ "$n" -ge 3 ] || fail "only $n WATCHDOG=1 in 1.2 s at WATCHDOG_USEC=400000"
ok "$n WATCHDOG=1 so far (a probe is running within its time limit)"

# A bad reload keeps the old configuration and says why.
printf 'interval = 1h\nport = many\n' >"$TW_TMP/d.conf"
kill -HUP "$DPID"
wait_for grep -q 'Reloading the configuration failed, keeping the old one: .*d.conf:2: port' \
	"$TW_TMP/d.log" || fail "a bad reload was not reported: $(cat "$TW_TMP/d.log")"
[ "$(http_code /healthz)" = 200 ] || fail "not serving after a bad reload"
printf 'interval = 1h\nlog_level = debug\nhttp_threads = 3\n' >"$TW_TMP/d.conf"
kill -HUP "$DPID"
wait_for grep -q 'Reloaded the configuration' "$TW_TMP/d.log" || fail "a good reload failed"
grep -q 'take effect on restart only (http_threads)' "$TW_TMP/d.log" ||
	fail "a changed http_threads was not reported as needing a restart"
grep -qx RELOADING=1 "$NOTES" || fail "no RELOADING=1"
ok "SIGHUP: a bad file is refused with file:line, a good one applied"

# SIGTERM while zz-hang runs: killed, recorded, exit 0 within 5 s.
stop_daemon
grep -qx STOPPING=1 "$NOTES" || fail "no STOPPING=1"
ok "SIGTERM with a probe running: exit 0 in ${STOP_S}s"

# Restarted on the same database: the interrupted run is there with its
# reason, and STATUS= shows the interrupted cycle and its retry (a minute
# after it, not an interval).
: >"$NOTES"
DAEMON_ENV=(NOTIFY_SOCKET="$TW_TMP/notify.sock")
start_daemon d2 --database "$TW_TMP/d/threadwatch.db" --interval 1h
wait_for grep -Eq '^STATUS=Last cycle [0-9-]+ [0-9:]+ \(interrupted\); retry [0-9-]+ [0-9:]+$' \
	"$NOTES" || fail "no STATUS= with the interrupted cycle and its retry: $(cat "$NOTES")"
[ "$(api /api/v1/status | jq .next_cycle_retry)" = 1 ] || fail "no retry in /api/v1/status"
ok "$(grep -m1 '^STATUS=Last' "$NOTES")"
kill "$NPID"
runs=$(runs_json)
jq -e '[.[] | select(.probe == "zz-hang" and .status == "error" and
	(.reason | test("stopped")))] | length == 1' <<<"$runs" >/dev/null ||
	fail "the stopped probe is not an error run: $runs"
jq -e --argjson n "$TW_NBUILTINS" '[.[] | select(.status == "ok")] | length == $n' <<<"$runs" >/dev/null ||
	fail "the $TW_NBUILTINS fakes are not stored: $runs"
last=$(api /api/v1/status | jq -r .last_cycle.status)
ok "the stopped run is recorded; the cycle ended \"$last\""
stop_daemon

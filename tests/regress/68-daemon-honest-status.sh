#!/usr/bin/env bash
# 68-daemon-honest-status: the status never says "ok" when it is not.
# /healthz, /api/v1/status and /metrics read the
# scheduler's status from memory and say when the store fails:
#   - a database the daemon may not write (0444, run as nobody): it refuses
#     to start, exit 73 (EX_CANTCREAT), naming the file;
#   - a full disk (a 1 MiB tmpfs in a mount namespace of the daemon's own):
#     the cycle is "failed", not frozen at running/ok, next_cycle_ms moves
#     on, /healthz is 503 with the store's error, threadwatch_store_ok 0;
#     with space again, the next cycle is ok and /healthz 200;
#   - a store found corrupt while running: /healthz 503 once it was seen;
#   - a daemon killed during a cycle: after the restart that cycle is
#     recorded as interrupted, and every status says so.
# regress: long
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

[ "$(id -u)" = 0 ] || { echo "needs root (setpriv to nobody, a tmpfs in a mount namespace)"; exit 77; }
for c in setpriv unshare nsenter; do command -v $c >/dev/null || { echo "$c is not installed"; exit 77; }; done
fake_builtins "$TW_TMP/probes"
auth=(-H "Authorization: Bearer $TOKEN")
metric() { api /metrics | awk -v m="$1" '$1 == m { print $2 }'; }
status() { api /api/v1/status | jq -c "$1"; }
# trigger: POSTs a cycle and waits (30 s) until the in-memory status shows
# it ended; prints its status.
trigger() {
	local before i s
	before=$(status '.last_cycle_ms // 0')
	api /api/v1/runs -X POST "${auth[@]}" >/dev/null
	for i in $(seq 1 300); do
		s=$(api /api/v1/status) && [ "$(jq -r .cycle_running <<<"$s")" = false ] &&
			[ "$(jq -r '.last_cycle_ms // 0' <<<"$s")" -gt "$before" ] &&
			{ jq -r .last_cycle_status <<<"$s"; return 0; }
		sleep 0.1
	done
	fail "the triggered cycle did not end in 30 s: $(api /api/v1/status)"
}

# --- 5. a database the daemon may not write --------------------------------
mkdir -p "$TW_TMP/ro"
start_daemon ro
wait_cycle 1
stop_daemon
chmod 0711 "$TW_TMP" # nobody may pass through to its own directory
chown nobody "$TW_TMP/ro"
chmod 0444 "$TW_TMP/ro/threadwatch.db"
rm -f "$TW_TMP/ro/threadwatch.db.lock"
timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups "$TWD" --config /dev/null \
	--state-dir "$TW_TMP/ro" --port 0 --probe-dir "$TW_TMP/probes" --probes-d "" --splay 0 \
	>"$TW_TMP/ro.out" 2>&1
rc=$?
[ "$rc" = 73 ] || fail "a read-only database: exit $rc, not 73 (EX_CANTCREAT): $(cat "$TW_TMP/ro.out")"
grep -q 'ro/threadwatch.db" is not writable by this process (uid 65534)' "$TW_TMP/ro.out" ||
	fail "a read-only database: the error does not name it: $(cat "$TW_TMP/ro.out")"
ok "a database it may not write: exit 73, $(tail -n 1 "$TW_TMP/ro.out")"

# --- 6. a full disk -------------------------------------------------------
mkdir -p "$TW_TMP/full"
unshare -m --propagation private sh -c '
	mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec "$@"' sh "$TW_TMP/full" \
	"$TWD" --config "$TW_TMP/empty.conf" --state-dir "$TW_TMP/full" --port 0 \
	--port-file "$TW_TMP/full/port" --probe-dir "$TW_TMP/probes" --probes-d "" --quick \
	--guard off --splay 0 --trigger-min-interval 0 --probe-sched normal --token "$TOKEN" \
	>>"$TW_TMP/full.log" 2>&1 &
DPID=$!
wait_for nsenter -t "$DPID" -m test -s "$TW_TMP/full/port" || fail "the daemon on a tmpfs did not start: $(cat "$TW_TMP/full.log")"
PORT=$(nsenter -t "$DPID" -m cat "$TW_TMP/full/port")
wait_cycle 1
[ "$(http_code /healthz)" = 200 ] || fail "/healthz before the disk filled: $(api /healthz)"
[ "$(metric threadwatch_store_ok)" = 1 ] || fail "threadwatch_store_ok before the disk filled"
# Fill what is left (dd stops at ENOSPC).
nsenter -t "$DPID" -m dd if=/dev/zero of="$TW_TMP/full/filler" bs=4k 2>/dev/null
st=$(trigger)
[ "$st" = failed ] || fail "a cycle on a full disk: $st"
s=$(api /api/v1/status)
jq -e '.cycle_running == false and .last_cycle_status == "failed" and
	.next_cycle_ms > .now_ms and (.store_error | test("full|space"))' <<<"$s" >/dev/null ||
	fail "/api/v1/status on a full disk: $s"
[ "$(http_code /healthz)" = 503 ] || fail "/healthz on a full disk: $(api /healthz)"
api /healthz | jq -e '.status == 503 and .detail == "the store cannot be used: the disk is full"' >/dev/null ||
	fail "/healthz on a full disk: $(api /healthz)"
[ "$(metric threadwatch_store_ok)" = 0 ] || fail "threadwatch_store_ok on a full disk: $(metric threadwatch_store_ok)"
[ "$(metric 'threadwatch_last_cycle_status{status="failed"}')" = 1 ] ||
	fail "/metrics on a full disk: $(api /metrics | grep last_cycle_status)"
next=$(metric threadwatch_next_cycle_timestamp_seconds)
[ "$(echo "$next > $(date +%s)" | bc)" = 1 ] || fail "next_cycle_timestamp_seconds $next is in the past"
ok "a full disk: failed, $(jq -c '{store_error}' <<<"$s"), /healthz 503, store_ok 0"
nsenter -t "$DPID" -m rm -f "$TW_TMP/full/filler"
st=$(trigger)
[ "$st" = ok ] || fail "a cycle with space again: $st ($(api /api/v1/status))"
[ "$(http_code /healthz)" = 200 ] || fail "/healthz with space again: $(api /healthz)"
[ "$(metric threadwatch_store_ok)" = 1 ] || fail "threadwatch_store_ok with space again"
ok "space again: the next cycle ok, /healthz 200, store_ok 1"
stop_daemon

# --- 7. a store found corrupt while running ------------------------------
start_daemon bad --token "$TOKEN"
wait_cycle 1
trigger >/dev/null
stop_daemon
start_daemon bad --token "$TOKEN" --interval 1h
wait_cycle 2
size=$(stat -c %s "$TW_TMP/bad/threadwatch.db")
dd if=/dev/urandom of="$TW_TMP/bad/threadwatch.db" bs=4096 seek=2 count=$((size / 4096 - 2)) \
	conv=notrunc 2>/dev/null
for path in '/api/v1/runs?limit=500' /api/v1/host /api/v1/recommendation; do api "$path" >/dev/null; done
(trigger) >/dev/null 2>&1 || true
[ "$(http_code /healthz)" = 503 ] || fail "/healthz after the store turned corrupt: $(api /healthz)"
api /healthz | jq -e '.detail == "the store cannot be used: the database is corrupt"' >/dev/null ||
	fail "/healthz body after the store turned corrupt: $(api /healthz)"
ok "a store found corrupt: /healthz 503, $(api /healthz | jq -c .detail), status: $(api /api/v1/status | jq -c .store_error)"
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null

# --- 8. killed during a cycle ---------------------------------------------
fake_probe "$TW_TMP/probes" threads ok 30
start_daemon killed --token "$TOKEN" --interval 1h
for i in $(seq 1 100); do [ "$(status .cycle_running)" = true ] && break; sleep 0.1; done
[ "$(status .cycle_running)" = true ] || fail "no cycle started"
sleep 1
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
# The retry starts at once and takes 30 s: the status is read before it ends.
start_daemon killed --token "$TOKEN" --interval 1h
s=$(api /api/v1/status)
jq -e '.last_cycle_status == "interrupted" and .last_cycle.status == "interrupted"' <<<"$s" >/dev/null ||
	fail "after a kill during a cycle, /api/v1/status: $(jq -c '{last_cycle_status, last_cycle}' <<<"$s")"
api /healthz | jq -e '.last_cycle_status == "interrupted"' >/dev/null || fail "/healthz after the kill: $(api /healthz)"
[ "$(metric 'threadwatch_last_cycle_status{status="interrupted"}')" = 1 ] ||
	fail "/metrics after the kill: $(api /metrics | grep last_cycle_status)"
n=$(sqlite3 "file:$TW_TMP/killed/threadwatch.db?mode=ro" 'SELECT count(*) FROM cycles WHERE status IS NULL')
[ "$n" = 0 ] || fail "$n cycles keep no status after the restart"
ok "killed during a cycle: recorded and reported as interrupted"
stop_daemon

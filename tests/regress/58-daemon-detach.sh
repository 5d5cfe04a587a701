#!/usr/bin/env bash
# 58-daemon-detach: without --foreground (and not started by systemd)
# threadwatchd detaches: the command returns 0 once the daemon serves, or 1
# with the reason when it cannot start.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v ss >/dev/null || { echo "ss is not installed"; exit 77; }
fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/d"

# detached CMD...: runs threadwatchd without --foreground, outside systemd.
detached() {
	env -u NOTIFY_SOCKET -u INVOCATION_ID "$TWD" --config "$TW_TMP/empty.conf" \
		--state-dir "$TW_TMP/d" --port 0 --port-file "$TW_TMP/d/port" \
		--probe-dir "$TW_TMP/probes" --probes-d "" --quick --load-threshold 1000 "$@"
}

detached >"$TW_TMP/d.log" 2>&1 || fail "detaching failed: $(cat "$TW_TMP/d.log")"
# The parent returned after READY: the port file is already there.
[ -s "$TW_TMP/d/port" ] || fail "the parent returned before the daemon was ready"
PORT=$(cat "$TW_TMP/d/port")
DPID=$(ss -Htlnp "sport = :$PORT" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n1)
[ -n "$DPID" ] || fail "nothing listens on port $PORT"
[ "$(ps -o sid= -p "$DPID" | tr -d ' ')" = "$DPID" ] || fail "the daemon is not in a session of its own"
[ "$(http_code /healthz)" = 200 ] || fail "the detached daemon does not serve"
ok "detached daemon $DPID serves on port $PORT"
kill -TERM "$DPID"
for i in $(seq 1 50); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DPID" 2>/dev/null && fail "the detached daemon ignored SIGTERM"

# A start that fails is reported by the parent.
head -c 4096 /dev/urandom >"$TW_TMP/bad.db"
out=$(detached --database "$TW_TMP/bad.db" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "a failing detached start returned $rc: $out"
grep -q 'Cannot open the database' <<<"$out" || fail "no reason given: $out"
ok "a failing start returns 1: $out"

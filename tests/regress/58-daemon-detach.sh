#!/usr/bin/env bash
# 58-daemon-detach: threadwatchd is a new-style daemon (daemon(7)): with no
# flag and outside systemd (no NOTIFY_SOCKET, no INVOCATION_ID) it stays in
# the foreground and never forks itself away; detaching is the explicit
# --detach, whose command returns 0 once the daemon serves, or 1 with the
# reason when it cannot start.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v ss >/dev/null || { echo "ss is not installed"; exit 77; }
fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/d" "$TW_TMP/f"

# outside CMD...: threadwatchd outside systemd.
outside() {
	env -u NOTIFY_SOCKET -u INVOCATION_ID "$TWD" --config "$TW_TMP/empty.conf" \
		--port 0 --probe-dir "$TW_TMP/probes" --probes-d "" --quick --guard off --splay 0 "$@"
}

# No flag: the process started is the one that serves, in our session.
# (env execs the daemon, so $! is the daemon's pid)
env -u NOTIFY_SOCKET -u INVOCATION_ID "$TWD" --config "$TW_TMP/empty.conf" --port 0 \
	--probe-dir "$TW_TMP/probes" --probes-d "" --quick --guard off --splay 0 \
	--state-dir "$TW_TMP/f" --port-file "$TW_TMP/f/port" >"$TW_TMP/f.log" 2>&1 &
DPID=$!
wait_for test -s "$TW_TMP/f/port" || fail "the daemon did not start: $(cat "$TW_TMP/f.log")"
PORT=$(cat "$TW_TMP/f/port")
kill -0 "$DPID" 2>/dev/null || fail "the process started exited (it forked away?): $(cat "$TW_TMP/f.log")"
# A probe the daemon is starting holds the socket between fork() and
# exec() (where CLOEXEC closes it): only the daemon's own children may
# appear beside it.
serving() {
	local p
	for p in $(ss -Htlnp "sport = :$PORT" | grep -o 'pid=[0-9]*' | sort -u | cut -d= -f2); do
		[ "$p" = "$DPID" ] || [ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = "$DPID" ] ||
			[ ! -d "/proc/$p" ] || echo "$p"
	done
}
ss -Htlnp "sport = :$PORT" | grep -q "pid=$DPID," ||
	fail "port $PORT is not served by the process started ($DPID): $(ss -Htlnp "sport = :$PORT")"
[ -z "$(serving)" ] || fail "port $PORT is also held by $(serving), not children of $DPID: $(ss -Htlnp "sport = :$PORT")"
[ "$(ps -o sid= -p "$DPID" | tr -d ' ')" = "$(ps -o sid= -p $$ | tr -d ' ')" ] ||
	fail "the daemon left our session"
[ "$(ps -o ppid= -p "$DPID" | tr -d ' ')" = "$$" ] || fail "the daemon is not our child"
[ "$(http_code /healthz)" = 200 ] || fail "the daemon does not serve"
wait_cycle 1
stop_daemon
ok "with no flag the daemon stays in the foreground: pid $DPID serves port $PORT and stops on SIGTERM"

# --detach: the parent returns after READY, the child runs in a session of its own.
outside --detach --state-dir "$TW_TMP/d" --port-file "$TW_TMP/d/port" >"$TW_TMP/d.log" 2>&1 ||
	fail "detaching failed: $(cat "$TW_TMP/d.log")"
[ -s "$TW_TMP/d/port" ] || fail "the parent returned before the daemon was ready"
PORT=$(cat "$TW_TMP/d/port")
DPID=$(ss -Htlnp "sport = :$PORT" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n1)
[ -n "$DPID" ] || fail "nothing listens on port $PORT"
[ "$(ps -o sid= -p "$DPID" | tr -d ' ')" = "$DPID" ] || fail "the daemon is not in a session of its own"
[ "$(http_code /healthz)" = 200 ] || fail "the detached daemon does not serve"
ok "--detach: daemon $DPID serves on port $PORT"
kill -TERM "$DPID"
for i in $(seq 1 50); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DPID" 2>/dev/null && fail "the detached daemon ignored SIGTERM"

# A start that fails is reported by the parent.
head -c 4096 /dev/urandom >"$TW_TMP/bad.db"
out=$(outside --detach --state-dir "$TW_TMP/d" --database "$TW_TMP/bad.db" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "a failing detached start returned $rc: $out"
grep -q 'Cannot open the database' <<<"$out" || fail "no reason given: $out"
ok "a failing --detach start returns 1: $out"

#!/usr/bin/env bash
# 54-daemon-socket: socket activation under any launcher. systemd-socket-activate
# binds a port and passes it as fd 3 (LISTEN_FDS, LISTEN_PID); with neither
# NOTIFY_SOCKET nor INVOCATION_ID set, so nothing says "systemd", and no
# flag, threadwatchd serves on the passed socket instead of binding its own,
# and says so.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v systemd-socket-activate >/dev/null || { echo "systemd-socket-activate is missing"; exit 77; }
fake_builtins "$TW_TMP/probes"
# ctxsw also writes down the environment it got.
sed -i "2a env >\"$TW_TMP/probe.env\"" "$TW_TMP/probes/ctxsw"

PORT=$(free_port)
mkdir -p "$TW_TMP/d"
# The configured port (1) would fail to bind: only the passed socket works.
env -u NOTIFY_SOCKET -u INVOCATION_ID systemd-socket-activate -l "127.0.0.1:$PORT" \
	"$TWD" --config "$TW_TMP/empty.conf" \
	--state-dir "$TW_TMP/d" --port 1 --port-file "$TW_TMP/d/port" \
	--probe-dir "$TW_TMP/probes" --probes-d "" --quick --guard off --splay 0 \
	>"$TW_TMP/d.log" 2>&1 &
DPID=$!
# systemd-socket-activate starts the daemon on the first connection.
wait_for sh -c "ss -Htln 'sport = :$PORT' | grep -q ." || fail "systemd-socket-activate did not bind"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "http://127.0.0.1:$PORT/healthz")
[ "$code" = 200 ] || fail "GET /healthz through the passed socket: $code: $(cat "$TW_TMP/d.log")"
# (the first request may be answered before the daemon logs and writes its port)
wait_for grep -q 'Serving HTTP on the socket passed by the launcher' "$TW_TMP/d.log" ||
	fail "the daemon did not use the passed socket: $(cat "$TW_TMP/d.log")"
wait_for test -s "$TW_TMP/d/port" || fail "no port file"
[ "$(cat "$TW_TMP/d/port")" = "$PORT" ] || fail "port file $(cat "$TW_TMP/d/port"), expected $PORT"
wait_cycle 1
[ "$(runs_json | jq length)" = "$TW_NBUILTINS" ] || fail "the start cycle did not store its runs"
ok "served on the socket passed on port $PORT; the start cycle ran"
# systemd-socket-activate execs the daemon, and the daemon does not fork:
# DPID is the daemon itself, the only process listening.
listeners=$(ss -Htlnp "sport = :$PORT" | grep -o 'pid=[0-9]*' | sort -u)
[ "$listeners" = "pid=$DPID" ] || fail "the socket is held by $listeners, not by $DPID alone"
# The probes got no LISTEN_* variables: the daemon unset them when it took the socket.
[ -s "$TW_TMP/probe.env" ] || fail "the ctxsw probe wrote no environment"
grep -q '^LISTEN_' "$TW_TMP/probe.env" && fail "a probe inherited $(grep '^LISTEN_' "$TW_TMP/probe.env")"
stop_daemon
ok "the daemon that got the socket is the one that serves it, and it stops on SIGTERM"

# PrivateNetwork=yes without the socket unit: a service (INVOCATION_ID set)
# with no socket passed, in a network namespace of its own with loopback
# alone, binds where nobody can reach it, and says why once. Outside such a
# namespace, or with a socket passed (above), it says nothing.
# own_netns_daemon NAME [ENV...]: the daemon in a new network namespace, lo up.
own_netns_daemon() {
	local name=$1
	shift
	mkdir -p "$TW_TMP/$name"
	env -u LISTEN_FDS -u LISTEN_PID "$@" unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
		"$TWD" --config "$TW_TMP/empty.conf" --state-dir "$TW_TMP/$name" --port 0 \
		--port-file "$TW_TMP/$name/port" --probe-dir "$TW_TMP/probes" --probes-d "" --quick \
		--guard off --splay 0 --interval 1h >"$TW_TMP/$name.log" 2>&1 &
	DPID=$!
	wait_for test -s "$TW_TMP/$name/port" || fail "no port file ($name): $(cat "$TW_TMP/$name.log")"
}
grep -q 'No socket was passed' "$TW_TMP/d.log" && fail "a private-network warning with a socket passed"
if ! unshare -n true 2>/dev/null || ! command -v ip >/dev/null; then
	echo "skip: cannot make a network namespace (unshare -n, ip): not root?"
	exit 0
fi
own_netns_daemon pn INVOCATION_ID=0123456789abcdef0123456789abcdef
stop_daemon
n=$(grep -c 'No socket was passed (LISTEN_FDS) and this service.s network namespace has loopback alone (PrivateNetwork=yes)' "$TW_TMP/pn.log")
[ "$n" = 1 ] || fail "$n private-network warnings, expected 1: $(cat "$TW_TMP/pn.log")"
own_netns_daemon plain
stop_daemon
grep -q 'No socket was passed' "$TW_TMP/plain.log" && fail "a private-network warning outside a service"
if grep -qv '^ *\(lo\|Inter-\| face\)' /proc/self/net/dev; then
	DAEMON_ENV=(INVOCATION_ID=0123456789abcdef0123456789abcdef) start_daemon host
	stop_daemon
	grep -q 'No socket was passed' "$TW_TMP/host.log" &&
		fail "a private-network warning in the host's namespace: $(cat "$TW_TMP/host.log")"
fi
ok "a service in a loopback-only namespace with no socket passed warns once: $(grep -o 'listen_address [^ ]* port [0-9]*' "$TW_TMP/pn.log")"

# --- a port another program holds: the error says what to do ---
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1], "w").write(str(s.getsockname()[1])); time.sleep(30)' "$TW_TMP/held" &
HOLDER=$!
wait_for test -s "$TW_TMP/held" || fail "no port held"
out=$(timeout 20 "$TWD" --config "$TW_TMP/empty.conf" --state-dir "$TW_TMP/held-state" \
	--port "$(cat "$TW_TMP/held")" --probes-d "" --splay 0 2>&1)
rc=$?
kill "$HOLDER" 2>/dev/null
[ "$rc" = 1 ] || fail "a port in use: exit $rc: $out"
grep -q 'Address already in use. Another threadwatchd (or another program) may hold it: .*--port 8438 .*make run RUN_ARGS="--port 8438"' <<<"$out" ||
	fail "a port in use does not say what to do: $out"
ok "a port in use: exit 1, and the error names another threadwatchd and --port / make run RUN_ARGS"

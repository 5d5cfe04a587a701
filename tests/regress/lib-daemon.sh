# Helpers for the threadwatchd regress scripts (sourced after lib.sh): fake
# probes, a daemon on an ephemeral port with its database in $TW_TMP, its
# API, and a stand-in for systemd's notify socket.
TWD=$B/threadwatchd
TOKEN=tw-regress-token-0123456789abcdef
[ -x "$TWD" ] || fail "\"$TWD\" is not built"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
command -v curl >/dev/null || { echo "curl is not installed"; exit 77; }
: >"$TW_TMP/empty.conf"

# fake_probe DIR NAME KIND [ARG]: an executable probe script of that kind:
#   ok [SLEEP]   a valid document (after SLEEP seconds)
#   crash        dies of SIGSEGV
#   hang         never finishes
#   garbage      prints text that is not JSON
#   nothing      prints nothing and exits 0
#   shape        prints JSON of the wrong shape
#   flood        prints 10 MB of garbage
#   grandchild   leaves a background process behind, then a valid document
fake_probe() {
	local dir=$1 name=$2 kind=$3 arg=${4:-0} f
	mkdir -p "$dir"
	f=$dir/$name
	{
		echo '#!/bin/sh'
		echo "# fake probe \"$name\" ($kind) for the threadwatchd regress tests"
		case $kind in
		ok) echo "sleep $arg" ;;
		crash) echo 'kill -SEGV $$' ;;
		hang) echo 'exec sleep 3600' ;;
		garbage) echo 'echo "this is not a probe document"; exit 0' ;;
		nothing) echo 'exit 0' ;;
		shape) echo 'echo "{\"probe\": 1, \"hello\": [1, 2]}"; exit 0' ;;
		flood) echo 'dd if=/dev/zero bs=1M count=10 2>/dev/null; exit 0' ;;
		grandchild) echo "(exec -a tw-linger-$name sleep 300) >/dev/null 2>&1 &" ;;
		*) fail "fake_probe: unknown kind $kind" ;;
		esac
		cat <<EOF
cat <<'DOC'
{"probe": "$name", "protocol": 1, "status": "ok", "reason": null,
 "started_at": "2026-12-03T07:51:56.123Z", "started_unix": 1796284316.123,
 "duration_s": 0.01, "params": {"quick": true},
 "scalars": {"value": {"value": 42.5, "unit": "count"}},
 "series": {}, "info": {}}
DOC
EOF
	} >"$f"
	chmod 755 "$f"
}

# fake_builtins DIR: the three built-in probe names as quick valid fakes.
fake_builtins() {
	local p
	for p in $TW_BUILTINS; do fake_probe "$1" "$p" ok; done
}

# start_daemon NAME [ARGS...]: threadwatchd in the foreground on an ephemeral
# port, database in $TW_TMP/NAME, log in $TW_TMP/NAME.log, probes from
# $TW_TMP/probes and $TW_TMP/probes.d; sets DPID and PORT. The environment
# variables in DAEMON_ENV (an array) are passed on. Its probes compete for
# the CPU (DAEMON_SCHED: --probe-sched normal) so that a loaded machine does
# not starve them past their time limits under the SCHED_IDLE default;
# 64-daemon-sched empties it to check that default. Cycles may be POSTed
# back to back (--trigger-min-interval 0) unless ARGS say otherwise.
start_daemon() {
	local name=$1
	shift
	mkdir -p "$TW_TMP/$name"
	rm -f "$TW_TMP/$name/port"
	env "${DAEMON_ENV[@]}" "$TWD" --config "$TW_TMP/empty.conf" \
		--state-dir "$TW_TMP/$name" --port 0 --port-file "$TW_TMP/$name/port" \
		--probe-dir "$TW_TMP/probes" --probes-d "$TW_TMP/probes.d" --quick \
		--guard off --splay 0 --trigger-min-interval 0 "${DAEMON_SCHED[@]}" "$@" >>"$TW_TMP/$name.log" 2>&1 &
	DPID=$!
	if ! wait_for test -s "$TW_TMP/$name/port"; then
		cat "$TW_TMP/$name.log" >&2
		fail "threadwatchd ($name) did not start listening"
	fi
	PORT=$(cat "$TW_TMP/$name/port")
}
DAEMON_ENV=()
DAEMON_SCHED=(--probe-sched normal)

# stop_daemon: SIGTERM, then checks that it exits 0 within 15 s; sets STOP_S.
stop_daemon() {
	local start rc i
	start=$(date +%s.%N)
	kill -TERM "$DPID"
	for i in $(seq 1 150); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	STOP_S=$(echo "$(date +%s.%N) - $start" | bc)
	kill -0 "$DPID" 2>/dev/null && { kill -KILL "$DPID"; fail "threadwatchd still runs 15 s after SIGTERM (the unit's TimeoutStopSec)"; }
	wait "$DPID"
	rc=$?
	[ "$rc" = 0 ] || fail "threadwatchd exited with $rc after SIGTERM"
}

# api PATH [CURL ARGS...]: the body of a GET (or whatever the arguments say).
api() {
	local path=$1
	shift
	curl -sS --max-time 10 "$@" "http://127.0.0.1:$PORT$path"
}

# http_code PATH [CURL ARGS...]: only the status code.
http_code() {
	local path=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" "http://127.0.0.1:$PORT$path"
}

# wait_cycle ID [SECONDS]: until cycle ID (or a later one) has finished.
wait_cycle() {
	local id=$1 max=${2:-30} i s
	for i in $(seq 1 $((max * 10))); do
		s=$(api /api/v1/status 2>/dev/null) &&
			[ "$(jq -r '.cycle_running' <<<"$s")" = false ] &&
			[ "$(jq -r '.last_cycle.id // 0' <<<"$s")" -ge "$id" ] && return 0
		sleep 0.1
	done
	fail "cycle $id did not finish in $max s: $(api /api/v1/status)"
}

# runs_json: every run, newest first, as one array.
runs_json() {
	api '/api/v1/runs?limit=500' | jq '.runs'
}

# notify_receiver SOCKET OUT: a stand-in for systemd's notify socket that
# writes every message it gets to OUT; sets NPID.
notify_receiver() {
	python3 "$SRC/tests/regress/notify-receiver.py" "$1" "$2" &
	NPID=$!
	wait_for test -S "$1" || fail "the notify receiver did not start"
}

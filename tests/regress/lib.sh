# Helpers sourced by regress scripts: fail with a message, wait for a file
# or a port, pick a free port. Sourced first (as `. "$(dirname "$0")/lib.sh"`),
# it also gives a script run by hand (bash tests/regress/40-http.sh) what
# run.sh gives it: SRC the source tree the script is in, B its build/ and
# TW_TMP a fresh directory, removed on exit with any process left in it.
: "${SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${B:=$SRC/build}"
export SRC B
if [ -z "${TW_TMP:-}" ]; then
	TW_TMP=$(mktemp -d /tmp/tw-regress.XXXXXX) || exit 1
	export TW_TMP
	# The script runs again as a child, so that its own EXIT traps cannot
	# undo the clean-up here.
	bash "$0" "$@"
	rc=$?
	pkill -KILL -f "$TW_TMP" 2>/dev/null
	rm -rf "$TW_TMP"
	exit "$rc"
fi
# The built-in probes, as this build made them (the catalogue's list).
TW_BUILTINS=$(find "$B/probes" -maxdepth 1 -type f -perm -u+x ! -name '*.*' -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')
TW_BUILTINS=${TW_BUILTINS% }
TW_NBUILTINS=$(wc -w <<<"$TW_BUILTINS")
# A jq definition for tests of real probe runs: a run is good when ok, or
# when it is createscale's skip on a busy host (it runs only on CPUs the
# host leaves idle, and a loaded test machine may have none).
JQ_RUN_GOOD='def run_good($probe; $status; $reason): $status == "ok" or
  ($probe == "createscale" and $status == "skipped" and (($reason // "") | startswith("the host is busy: ")));'
# run_busy: good, or a timing probe that rightly gave up because the host was
# too busy (ctxsw, handoff): what a script that is not about the probes'
# figures accepts from real probes on a loaded machine; its cycle is then
# partial and says why.
JQ_RUN_BUSY="$JQ_RUN_GOOD"' def run_busy($probe; $status; $reason): run_good($probe; $status; $reason) or
  ($status == "error" and (($reason // "") | test("the host is too busy")));'
fail() { echo "FAIL: $*" >&2; exit 1; }
# npm_ci DIR FILE...: `npm ci` in DIR unless every FILE is there, holding a
# lock on DIR: scripts that run side by side share its node_modules (71
# and 79 tests/lint's, 60 and 83 tests/browser's). Fails on npm's error.
npm_ci() {
	local dir=$1 f need=0
	shift
	exec 9<"$dir"
	flock 9
	for f in "$@"; do [ -e "$f" ] || need=1; done
	if [ "$need" = 1 ] && ! npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund \
		>"$TW_TMP/npm.log" 2>&1; then
		cat "$TW_TMP/npm.log" >&2
		fail "npm ci in \"$dir\" failed"
	fi
	exec 9<&-
}
ok() { echo "ok: $*"; }
# wait_for CMD... : retries for up to 10 s
wait_for() {
	local i
	for i in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
# silent_listener PORT: a socket on 127.0.0.1:PORT that takes connections
# (the kernel's backlog) and never answers, for 60 s: a daemon that is up
# but stuck. Returns once it takes one; its pid in SILENT_PID.
silent_listener() {
	python3 - "$1" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)  # never accepts: connections complete, nothing answers
time.sleep(60)
EOF
	SILENT_PID=$!
	wait_for python3 -c "import socket; socket.create_connection(('127.0.0.1', $1))" ||
		fail "the silent listener on port $1 did not start"
}
# runq_gentle MS OUT CMD...: CMD under tests/tools/runq (procs_running every
# 2 ms, MS before and after, CMD's output in OUT), whose peak may exceed
# what the host ran alone (the higher of before and after) by at most 8.
# Other work comes and goes, so a miss is measured again, up to three
# times. Sets RUNQ_PEAK, RUNQ_P99 and RUNQ_HOST; fails on the third miss.
runq_gentle() {
	local ms=$1 out=$2 try line before after
	shift 2
	[ -x "$B/tests/runq" ] || fail "'$B/tests/runq' is not built"
	for try in 1 2 3; do
		line=$("$B/tests/runq" "$ms" "$ms" "$out" "$@") || fail "$* failed under runq"
		read -r _ before _ RUNQ_PEAK _ RUNQ_P99 _ after _ <<<"$line"
		RUNQ_HOST=$((before > after ? before : after))
		echo "try $try: $line"
		[ "$RUNQ_PEAK" -le $((RUNQ_HOST + 8)) ] && return 0
	done
	fail "run queue peak $RUNQ_PEAK during $*, $RUNQ_HOST without it"
}
# tree_manpath: a MANPATH of the tree's man pages in man(1)'s layout, for
# `systemd-analyze verify`, which runs man on each man: Documentation=
# entry of a unit (as the package installs them). Prints the path.
tree_manpath() {
	local m
	for m in "$SRC"/doc/man/*.[0-9]; do
		mkdir -p "$TW_TMP/man/man${m##*.}" && ln -sf "$m" "$TW_TMP/man/man${m##*.}/"
	done
	echo "$TW_TMP/man"
}
# twload_start NAME SECONDS ARGS...: tests/tools/twload (a service of known
# behaviour) in the background for SECONDS, its pid in $NAME and appended
# to the caller's pids array; its output in $TW_TMP/NAME.out and .err.
# marks NAME N: waits (10 s at most) until twload NAME has printed N lines
# of its truth: a SIGUSR1 reaches it at once, but a busy host may run its
# handler a while later
marks() {
	local _
	for _ in $(seq 1 200); do
		[ "$(grep -c '^t ' "$TW_TMP/$1.out")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "twload $1 printed $(grep -c '^t ' "$TW_TMP/$1.out") of $2 truth lines"
}
twload_start() {
	local n=$1 secs=$2
	shift 2
	"$B/tests/twload" "$@" --seconds "$secs" >"$TW_TMP/$n.out" 2>"$TW_TMP/$n.err" &
	pids+=($!)
	printf -v "$n" %s "$!"
	wait_for grep -q ready "$TW_TMP/$n.out" || fail "twload $* did not get ready: $(cat "$TW_TMP/$n.err")"
}

#!/usr/bin/env bash
# 41-http-dygraphs: the chart library's files are read and gzip-compressed
# once, not for every request (3.65 ms of CPU each, against 0.2 ms
# uncompressed), and a file that changes on disk (a libjs-dygraphs upgrade)
# is served new at once. The daemon's own CPU time (utime + stime of
# /proc/PID/stat) over 200 gzip requests must stay within 2.5 times that of
# 200 requests for the file as it is (compressing each time cost 18 times):
# CPU time, not wall time, so a loaded machine does not fail it, and
# against this host's own uncompressed cost, since a request's CPU differs
# by host (a PVM guest's system calls cost several times a KVM guest's).
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
fake_builtins "$TW_TMP/probes"
D=$TW_TMP/dygraphs
mkdir -p "$D"
# A chart library of the real one's size (dygraph.min.js is about 120 kB):
# text that compresses, as JavaScript does.
python3 -c 'import random; r = random.Random(7)
print("".join("var x%d = function(a, b) { return a * %d + b; };\n" % (i, r.randrange(1000)) for i in range(2500)))' \
	>"$D/dygraph.min.js"
start_daemon d --interval 1h --dygraphs-dir "$D"
wait_cycle 1
cpu() { awk '{print $14 + $15}' "/proc/$DPID/stat"; }
gz() { curl -sS --max-time 10 -H 'Accept-Encoding: gzip' "$@" "http://127.0.0.1:$PORT/dygraphs/dygraph.min.js"; }
plain() { curl -sS --max-time 10 "$@" "http://127.0.0.1:$PORT/dygraphs/dygraph.min.js"; }
hz=$(getconf CLK_TCK)
# per_request FN: the daemon's CPU per request of 200, in ms
per_request() {
	local t0 t1
	"$1" -o /dev/null
	t0=$(cpu)
	for _ in $(seq 1 200); do "$1" -o /dev/null || fail "GET /dygraphs/dygraph.min.js failed"; done
	t1=$(cpu)
	echo "scale=3; ($t1 - $t0) * 1000 / $hz / 200" | bc
}
plain_ms=$(per_request plain)
per_ms=$(per_request gz)
limit=$(echo "scale=3; 2.5 * $plain_ms + 0.05" | bc) # 0.05 ms: a tick's rounding over 200
[ "$(echo "$per_ms < $limit" | bc)" = 1 ] ||
	fail "$per_ms ms of the daemon's CPU per gzip request against $plain_ms uncompressed: compressed every time"
gz --compressed -o "$TW_TMP/got.js"
cmp -s "$TW_TMP/got.js" "$D/dygraph.min.js" || fail "the gzip copy does not unpack to the file"
ok "200 gzip requests: $per_ms ms of the daemon's CPU each, $plain_ms uncompressed; the copy unpacks to the file"
# A new version on disk is served at once, compressed afresh.
printf 'var upgraded = 1;\n%.0s' $(seq 1 200) >"$D/dygraph.min.js"
gz --compressed -o "$TW_TMP/got2.js"
cmp -s "$TW_TMP/got2.js" "$D/dygraph.min.js" || fail "a changed file was not served new"
ok "a changed file is served new"
stop_daemon

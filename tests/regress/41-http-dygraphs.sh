#!/usr/bin/env bash
# 41-http-dygraphs: the chart library's files are read and gzip-compressed
# once, not for every request (3.65 ms of CPU each, against 0.2 ms
# uncompressed), and a file that changes on disk (a libjs-dygraphs upgrade)
# is served new at once. The daemon's own CPU time (utime + stime of
# /proc/PID/stat) over 200 gzip requests must stay under 0.5 ms each (1.2
# under the sanitizers; it was 1.7 ms): CPU time, not wall time, so a
# loaded machine does not fail it.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh" # asan_build
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
gz -o /dev/null
t0=$(cpu)
for _ in $(seq 1 200); do gz -o /dev/null || fail "GET /dygraphs/dygraph.min.js failed"; done
t1=$(cpu)
hz=$(getconf CLK_TCK)
per_ms=$(echo "scale=3; ($t1 - $t0) * 1000 / $hz / 200" | bc)
limit=0.5
asan_build && limit=1.2 # the sanitizers' own cost; compressing each time cost 1.7 ms without them
[ "$(echo "$per_ms < $limit" | bc)" = 1 ] || fail "$per_ms ms of the daemon's CPU per gzip request: compressed every time"
gz --compressed -o "$TW_TMP/got.js"
cmp -s "$TW_TMP/got.js" "$D/dygraph.min.js" || fail "the gzip copy does not unpack to the file"
ok "200 gzip requests: $per_ms ms of the daemon's CPU each; the copy unpacks to the file"
# A new version on disk is served at once, compressed afresh.
printf 'var upgraded = 1;\n%.0s' $(seq 1 200) >"$D/dygraph.min.js"
gz --compressed -o "$TW_TMP/got2.js"
cmp -s "$TW_TMP/got2.js" "$D/dygraph.min.js" || fail "a changed file was not served new"
ok "a changed file is served new"
stop_daemon

#!/usr/bin/env bash
# 92-http-abuse: malformed and hostile HTTP against a live threadwatchd
# (tests/regress/http_abuse.py): overlong targets and headers, bad methods,
# bodies where none belongs, absurd parameter values, paths out of the web
# root, malformed request lines, HTTP/0.9, pipelined garbage, and slow
# clients (slowloris, ABUSE_SLOW_SECONDS, default 15). Each case gets a 4xx
# or a closed connection, never a 5xx or a hang; slow clients do not starve
# a client from another address; the daemon answers /healthz throughout
# and after, and its memory stays bounded.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
for p in $TW_BUILTINS; do rich_probe "$TW_TMP/probes" "$p"; done
# An idle timeout below the client's 8 s, so a request that never completes
# ends in a close rather than looking like a hang.
start_daemon a --interval 1h --token "$TOKEN" --http-timeout 2s
wait_cycle 1
rss() { awk '/^VmRSS/ {print $2}' "/proc/$DPID/status"; }
rss0=$(rss)
python3 "$SRC/tests/regress/http_abuse.py" "$PORT" --token "$TOKEN" \
	--slow-seconds "${ABUSE_SLOW_SECONDS:-15}" --slow-conns 100
rc=$?
kill -0 "$DPID" 2>/dev/null || fail "threadwatchd died: $(tail -n 20 "$TW_TMP/a.log")"
[ "$rc" = 0 ] || fail "some malformed requests were not refused cleanly (see above)"
rss1=$(rss)
asan_build || [ "$((rss1 - rss0))" -lt 65536 ] || fail "RSS grew from $rss0 kB to $rss1 kB"
[ "$(http_code /healthz)" = 200 ] || fail "/healthz after the storm"
[ "$(api /api/v1/runs | jq '.runs | length')" = "$TW_NBUILTINS" ] || fail "the runs are not served after the storm"
ok "the daemon serves after the storm; RSS $rss0 kB before, $rss1 kB after"
stop_daemon

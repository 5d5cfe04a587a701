#!/usr/bin/env bash
# 94-valgrind: threadwatchd under valgrind's memcheck: a start, a first
# cycle of instant fake probes plus bad ones (crash, hang past the time
# limit, 10 MB flood, wrong shape, garbage, not executable, missing), the
# API and /metrics read once each (with a few errors), a second cycle
# through POST /api/v1/runs, then SIGTERM. No memory error and no leak
# (definite or possible), and the daemon exits 0.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh"
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
if asan_build; then
	echo "a sanitizer build: valgrind does not run it"
	exit 77
fi
P=$TW_TMP/probes
D=$TW_TMP/probes.d
rich_probe "$P" ctxsw
rich_probe "$P" threads
# map32 is missing
for k in crash hang flood shape garbage; do fake_probe "$D" "$k" "$k"; done
fake_probe "$D" notexec ok
chmod 644 "$D/notexec"
VLOG=$TW_TMP/valgrind.log

mkdir -p "$TW_TMP/v"
start=$(date +%s.%N)
valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,possible --error-exitcode=99 --num-callers=30 \
	--child-silent-after-fork=yes \
	--log-file="$VLOG" "$TWD" --foreground --config "$TW_TMP/empty.conf" \
	--state-dir "$TW_TMP/v" --port 0 --port-file "$TW_TMP/v/port" --probe-dir "$P" \
	--probes-d "$D" --quick --guard off --splay 0 --interval 1h \
	--probe-timeout 1s --token "$TOKEN" >"$TW_TMP/v.log" 2>&1 &
DPID=$!
for i in $(seq 1 600); do [ -s "$TW_TMP/v/port" ] && break; sleep 0.1; done
[ -s "$TW_TMP/v/port" ] || fail "threadwatchd under valgrind did not listen in 60 s: $(tail "$VLOG")"
PORT=$(cat "$TW_TMP/v/port")
wait_cycle 1 120

for path in /api/v1/host /api/v1/recommendation /api/v1/runs '/api/v1/runs?probe=crash' \
	/api/v1/runs/1 /api/v1/runs/999 /api/v1/runs/abc '/api/v1/series?metric=ctxsw.ratio' \
	'/api/v1/series?metric=nope.x' '/api/v1/runs?limit=0' /api/v1/metrics /api/v1/headroom \
	/api/v1/status /api/v1/openapi.json /metrics /healthz / /app.js /nonexistent; do
	code=$(http_code "$path" -H 'Accept-Encoding: gzip')
	case $code in 200 | 400 | 404) ;; *) fail "GET $path under valgrind: $code" ;; esac
done
[ "$(http_code /api/v1/runs -X POST)" = 401 ] || fail "POST without the token"
out=$(api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN")
c=$(jq -r .cycle_id <<<"$out")
[ "$c" = 2 ] || fail "POST with the token: $out"
wait_cycle 2 120
runs=$(runs_json)
# two cycles of the built-ins (map32 and the others missing) and 6 entries of probes.d
want=$((2 * (TW_NBUILTINS + 6)))
[ "$(jq length <<<"$runs")" = "$want" ] || fail "expected $want runs in two cycles: $runs"
for p in crash hang flood shape garbage notexec map32; do
	[ "$(jq --arg p "$p" '[.[] | select(.probe == $p and .status == "error" and .reason != null)]
		| length' <<<"$runs")" = 2 ] || fail "$p did not fail twice with a reason: $runs"
done
jq -r '.[] | select(.cycle_id == 2) | "  \(.probe): \(.status) \(.reason // "")"' <<<"$runs"

kill -TERM "$DPID"
for i in $(seq 1 300); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DPID" 2>/dev/null && { kill -KILL "$DPID"; fail "no exit 30 s after SIGTERM"; }
wait "$DPID"
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc | cut -c1-5)
summary=$(grep -E 'in use at exit|All heap blocks|ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable' "$VLOG" |
	sed 's/^==[0-9]*== *//')
echo "$summary"
if [ "$rc" != 0 ]; then
	grep -A30 -E 'Invalid|uninitialised|definitely lost in|possibly lost in' "$VLOG" | head -80
	fail "valgrind: exit $rc (99: memory errors or leaks)"
fi
grep -q 'ERROR SUMMARY: 0 errors' "$VLOG" || fail "valgrind reported errors"
store_check "$TW_TMP/v/threadwatch.db"
ok "valgrind: start, 2 cycles of 9 probes (7 bad), 19 API requests, SIGTERM: exit 0," \
	"0 errors, no leak, in $secs s"

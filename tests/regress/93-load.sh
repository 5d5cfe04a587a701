#!/usr/bin/env bash
# 93-load: wrk on loopback against /api/v1/recommendation, /metrics and a
# one-year /api/v1/series query (a year of history at the default 6 h
# cadence, written by twseed), 64 connections in all for LOAD_SECONDS
# (default 10; `make soak` runs 300), while probe cycles of the real probes (--quick) run one
# after another. Zero errors (socket errors or statuses >= 400); prints the
# p50 and p99 latency of each endpoint and the daemon's RSS before and
# after (bounded growth: the SQLite page caches fill up, nothing more).
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh"
command -v wrk >/dev/null || { echo "wrk is not installed"; exit 77; }
SEED=$B/tests/twseed
[ -x "$SEED" ] || fail "\"$SEED\" is not built"
for p in $TW_BUILTINS; do
	[ -x "$B/probes/$p" ] || fail "\"$B/probes/$p\" is not built"
done
SECS=${LOAD_SECONDS:-10}
DB=$TW_TMP/l/threadwatch.db
mkdir -p "$TW_TMP/l"

t0=$(date +%s.%N)
"$SEED" --db "$DB" --days 365 --every 360 --quiet || fail "twseed failed"
ok "a year of history at 6 h cadence seeded in $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s" \
	"($(sqlite3 -readonly "$DB" 'SELECT count(*) FROM runs') runs, $(du -m "$DB" | cut -f1) MB)"

# All the load comes from one address: the per-address limit (64 by
# default) would turn the 65th connection away. The cycles must write while
# the API is saturated: start_daemon runs the probes at probe_sched =
# normal (under SCHED_IDLE, wrk and the daemon's threads would go first and
# ctxsw would rightly give up as "too busy").
start_daemon l --probe-dir "$B/probes" --interval 1h --token "$TOKEN" --per-ip-limit 0
now=$(date +%s)
SERIES="/api/v1/series?metric=ctxsw.ratio&since=$((now - 365 * 86400))&until=$now"
pts=$(api "$SERIES" | jq '.points | length')
[ "${pts:-0}" -gt 300 ] || fail "the one-year series has ${pts:-no} points: $(api "$SERIES" | head -c 300)"
[ "$(http_code /api/v1/recommendation)" = 200 ] || fail "no recommendation to load"

# Each wrk prints one line of figures from its done() hook.
cat >"$TW_TMP/report.lua" <<'LUA'
done = function(s, lat, req)
	local e = s.errors
	io.write(string.format("TW requests=%d connect=%d read=%d write=%d status=%d timeout=%d " ..
		"p50=%.1f p99=%.1f max=%.1f\n", s.requests, e.connect, e.read, e.write, e.status,
		e.timeout, lat:percentile(50) / 1000, lat:percentile(99) / 1000, lat.max / 1000))
end
LUA

# Cycles of the real probes throughout the load.
cycles_loop() {
	while :; do
		curl -s -o /dev/null --max-time 5 -X POST -H "Authorization: Bearer $TOKEN" \
			"http://127.0.0.1:$PORT/api/v1/runs"
		sleep 0.2
	done
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$DPID/status"; }
c0=$(api /api/v1/status | jq -r .last_cycle.id)
cycles_loop &
cpid=$!
wait_for grep -q "Cycle $((c0 + 1)) started" "$TW_TMP/l.log" || fail "no cycle started"
rss0=$(rss)
declare -A conns=([recommendation]=22 [metrics]=21 [series]=21)
declare -A paths=([recommendation]=/api/v1/recommendation [metrics]=/metrics [series]=$SERIES)
wpids=()
for e in recommendation metrics series; do
	wrk -t1 -c"${conns[$e]}" -d"${SECS}s" --timeout 10s -s "$TW_TMP/report.lua" \
		"http://127.0.0.1:$PORT${paths[$e]}" >"$TW_TMP/wrk-$e.txt" 2>&1 &
	wpids+=($!)
done
wait "${wpids[@]}"
kill "$cpid"
wait "$cpid" 2>/dev/null
rss1=$(rss)
# The cycle that started under the load wrote while it lasted; on a slow or
# busy machine it may still be running when wrk stops, so it is waited for
# (the store's writes overlapped the load either way).
for _ in $(seq 1 600); do
	grep -q "Cycle $((c0 + 1)) finished" "$TW_TMP/l.log" && break
	sleep 0.5
done
c1=$(api /api/v1/status | jq -r .last_cycle.id)

errors=0 total=0
for e in recommendation metrics series; do
	line=$(grep '^TW ' "$TW_TMP/wrk-$e.txt") || fail "wrk against $e: $(cat "$TW_TMP/wrk-$e.txt")"
	declare -A f=()
	for kv in ${line#TW }; do f[${kv%%=*}]=${kv#*=}; done
	err=$((f[connect] + f[read] + f[write] + f[status] + f[timeout]))
	errors=$((errors + err))
	total=$((total + f[requests]))
	echo "  $e (${conns[$e]} connections): ${f[requests]} requests, $err errors," \
		"p50 ${f[p50]} ms, p99 ${f[p99]} ms, max ${f[max]} ms"
	[ "$err" = 0 ] || fail "$e: $err errors under load: $(cat "$TW_TMP/wrk-$e.txt")"
	[ "${f[requests]}" -gt 0 ] || fail "$e: no request completed"
done
[ "$c1" -gt "$c0" ] || fail "the cycle started under the load never finished: $(tail -5 "$TW_TMP/l.log")"
# A probe may rightly give up as too busy under this load (a partial cycle,
# said so); a failed cycle, or one that says ok with a probe missing, is not.
status=$(sed -n "s/.*Cycle $c1 finished: \([a-z]*\).*/\1/p" "$TW_TMP/l.log")
case $status in
ok) ;;
partial) grep -i 'busy\|probe' "$TW_TMP/l.log" | tail -3 ;;
*) fail "cycle $c1 ended ${status:-without a status}: $(tail -5 "$TW_TMP/l.log")" ;;
esac
ok "$total requests in ${SECS} s on 64 connections, 0 errors, during cycles $((c0 + 1))..$c1 ($status)"
growth=$((rss1 - rss0))
ok "RSS $rss0 kB before, $rss1 kB after the load (${growth} kB)"
asan_build || [ "$growth" -lt 65536 ] || fail "RSS grew by $growth kB under load"
[ "$(http_code /healthz)" = 200 ] || fail "/healthz after the load"
stop_daemon

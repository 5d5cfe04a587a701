#!/usr/bin/env bash
# 60-browser: the dashboard in a real browser. twseed writes 30 days of
# realistic history (a kernel upgrade on day 20 that makes switches and
# creates 10% dearer, so regression events, a threads run killed by its
# time limit, a host near its pids.max) into a temporary database; one
# threadwatchd serves it, a second one an empty database and a third one a
# database with exactly one cycle (the first hour of a new host), all on
# ephemeral ports with probes that never finish, so no cycle changes what the
# test reads. tests/browser/dashboard.test.js then drives Debian's chromium
# through playwright-core (from tests/browser/package-lock.json; it never
# downloads a browser) and saves screenshots under tests/out/browser/.
# Also checks that the static files carry an ETag, revalidate with 304 and
# come gzip-compressed.
set -u
. "$(dirname "$0")/lib.sh"
[ -x "$B/threadwatchd" ] || { echo "threadwatchd is not built"; exit 77; }
[ -x "$B/tests/twseed" ] || { echo "twseed is not built"; exit 77; }
. "$SRC/tests/regress/lib-daemon.sh"

. "$SRC/tests/regress/lib-browser.sh"
browser_tools
OUT=$SRC/tests/out/browser

# Probes that never finish: should a cycle start, it changes nothing.
for p in $TW_BUILTINS; do fake_probe "$TW_TMP/probes" "$p" hang; done
mkdir -p "$TW_TMP/probes.d" "$TW_TMP/full"

"$B/tests/twseed" --db "$TW_TMP/full/threadwatch.db" --days 30 --every 360 --seed 6 --all-probes \
	--kernel-change-at 20 --step 10 --failed-run --linear-search --ratio 0.93 --near-limit ||
	fail "twseed could not write the history"

# A long interval and the last seeded cycle minutes ago: no cycle is due, and
# the seed recorded this host's own fingerprint, so no change starts one.
start_daemon full --database "$TW_TMP/full/threadwatch.db" --interval 365d
FULL_PID=$DPID FULL_PORT=$PORT
# Exactly one cycle, minutes ago: the first hour of a new host.
mkdir -p "$TW_TMP/one"
"$B/tests/twseed" --db "$TW_TMP/one/threadwatch.db" --days 1 --every 1440 --seed 7 --all-probes ||
	fail "twseed could not write one cycle"
start_daemon one --database "$TW_TMP/one/threadwatch.db" --interval 365d
ONE_PID=$DPID ONE_PORT=$PORT
# An empty database: its first cycle waits for a quiet host (load 0) all day.
start_daemon empty --interval 365d --guard loadavg --guard-loadavg-per-cpu-max 0 --guard-wait-max 1d
EMPTY_PID=$DPID EMPTY_PORT=$PORT
PORT=$FULL_PORT
cycles_before=$(api /api/v1/status | jq -r '.last_cycle.id')
[ "$(api /api/v1/status | jq -r '.cycle_running')" = false ] ||
	fail "the daemon on the seeded database started a cycle: $(api /api/v1/status)"

# Static files: ETag, 304 on revalidation, gzip when accepted.
for f in / /app.js /style.css; do
	etag=$(curl -sS -D - -o /dev/null "http://127.0.0.1:$PORT$f" | tr -d '\r' |
		sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
	[ -n "$etag" ] || fail "$f has no ETag"
	[ "$(http_code "$f" -H "If-None-Match: $etag")" = 304 ] || fail "$f does not revalidate with 304"
	curl -sS -D - -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$PORT$f" |
		grep -qi '^content-encoding: gzip' || fail "$f is not sent gzip-compressed"
done
ok "/, /app.js and /style.css carry an ETag, revalidate with 304 and come gzip-compressed"
weight=$(cat "$SRC"/web/index.html "$SRC"/web/app.js "$SRC"/web/style.css | wc -c)
[ "$weight" -lt 102400 ] || fail "the page's own files weigh $weight bytes"
ok "the page's own files weigh $weight bytes uncompressed"

# A new host whose first cycle runs now, each probe 3 s (the others of the
# built-ins at once): the page opened during it must show the runs as they
# land.
for p in $TW_BUILTINS; do
	case $p in ctxsw | threads | map32) fake_probe "$TW_TMP/liveprobes" "$p" ok 3 ;;
	*) fake_probe "$TW_TMP/liveprobes" "$p" ok ;;
	esac
done
start_daemon live --probe-dir "$TW_TMP/liveprobes" --interval 365d
LIVE_PID=$DPID LIVE_PORT=$PORT
PORT=$FULL_PORT

# The empty daemon's first cycle waits for a quiet host (a load of 0 no busy
# host meets): the page's empty state is checked against that wait.
wait_for sh -c "curl -s http://127.0.0.1:$EMPTY_PORT/api/v1/status |
	jq -e '.cycle_running and .waiting_for_quiet_host.limit == 0'" ||
	fail "the empty daemon does not wait for a quiet host: $(PORT=$EMPTY_PORT api /api/v1/status)"

rm -rf "$OUT"
node "$BROWSER_DIR/dashboard.test.js" --url "http://127.0.0.1:$FULL_PORT/" \
	--empty-url "http://127.0.0.1:$EMPTY_PORT/" --one-url "http://127.0.0.1:$ONE_PORT/" \
	--live-url "http://127.0.0.1:$LIVE_PORT/" --live-runs "$TW_NBUILTINS" --out "$OUT"
rc=$?
DPID=$LIVE_PID stop_daemon

[ "$(api /api/v1/status | jq -r '.last_cycle.id')" = "$cycles_before" ] ||
	fail "a cycle ran during the browser test"
DPID=$FULL_PID stop_daemon
DPID=$EMPTY_PID stop_daemon
DPID=$ONE_PID stop_daemon
[ "$rc" = 0 ] || fail "the browser test failed"
ok "the dashboard passed in chromium; screenshots in \"$OUT\""

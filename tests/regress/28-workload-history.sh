#!/usr/bin/env bash
# 28-workload-history: who pays for threads, on every surface, as a new
# user meets it. threadwatchd runs beside threadwatch-observer (root, its
# windows handed over the observer socket), a process that parks 200
# threads on stacks huge pages back (tests/tools/twload thpstacks), one
# named <i id=twx> and one named with a quote and a backslash. Within two
# windows GET /api/v1/workloads lists them, bounded to workloads_top plus
# "other"; each one's series grows window by window and survives a restart
# (its key holds no PID); /metrics has their figures labelled by workload
# alone, escaped, and passes `promtool check metrics`; `threadwatch fleet
# --workloads` names them with their host; the page shows them as text
# (tests/browser/workloads.test.js, axe-core clean). Bad refs and figures
# get a 404 and a 400 that say why.
# regress: long
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
[ "$(id -u)" = 0 ] || { echo "needs root (the observer reads every process)"; exit 77; }
OBS=$B/threadwatch-observer L=$B/tests/twload TW=$B/threadwatch
[ -x "$OBS" ] && [ -x "$L" ] && [ -x "$TW" ] || fail "threadwatch-observer, threadwatch or twload is not built"
since() { echo $(($(date +%s) - $1)); }
WINDOW=${WORKLOADS_WINDOW_S:-3}
TOP=1000 BOUND=2
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
start() { twload_start "$1" 600 "${@:2}"; } # start NAME ARGS...
thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)

fake_builtins "$TW_TMP/probes"
printf 'workloads_top = %s\n' "$TOP" >"$TW_TMP/wl.conf"
SOCK=$TW_TMP/observer.sock
start_daemon d --config "$TW_TMP/wl.conf" --interval 1h --observer-socket "$SOCK"
pids+=($DPID)
wait_for test -S "$SOCK" || fail "no observer socket: $(cat "$TW_TMP/d.log")"

# before any window: 503 with Retry-After, and the status says there is none
code=$(curl -s -o "$TW_TMP/body" -D "$TW_TMP/head" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/workloads")
[ "$code" = 503 ] && grep -qi '^retry-after: ' "$TW_TMP/head" ||
	fail "/api/v1/workloads before a window: $code $(cat "$TW_TMP/body")"
[ "$(api /api/v1/status | jq .workloads_window_end_ms)" = null ] || fail "the status names a window before any"
ok "before the first window: 503 with Retry-After ($(jq -r .detail "$TW_TMP/body" | cut -c1-60)...)"

start huge thpstacks 200 --name twthp
start markup glibcstacks 2 --name '<i id=twx>'
start quote glibcstacks 2 --name 'tw"q\x'
"$OBS" --push "$SOCK" --window "${WINDOW}s" >"$TW_TMP/obs.log" 2>&1 &
pids+=($!)

# by_pid PID: the kept workload that holds the process
by_pid() { api /api/v1/workloads | jq -c --argjson p "$1" '.workloads[]? | select((.pids // []) | index($p))'; }
t=$(date +%s)
until [ -n "$(by_pid "$huge")" ] && [ -n "$(by_pid "$markup")" ] && [ -n "$(by_pid "$quote")" ]; do
	# two windows, and room for a loaded machine
	[ "$(since "$t")" -lt $((WINDOW * 2 + 60)) ] ||
		fail "the workloads were not listed: $(api /api/v1/workloads | jq -c '[.workloads[]? | {name, pids}]') $(tail -3 "$TW_TMP/obs.log")"
	sleep 1
done
ok "within $(since "$t") s (windows of $WINDOW s) /api/v1/workloads lists the 200-thread process and <i id=twx>"

# dearest first: cpu_share never rises down the rows (other aside)
w=$(api /api/v1/workloads)
jq -e '[.workloads[] | select(.kind != "other") | .figures.cpu_share // -1] | . == (sort | reverse)' <<<"$w" >/dev/null ||
	fail "the workloads are not sorted by cost: $(jq -c '[.workloads[] | .figures.cpu_share]' <<<"$w")"
hw=$(by_pid "$huge")
[ "$(jq -r .comm <<<"$hw")" = twthp ] || fail "the 200-thread workload: $(jq -c '{name, comm}' <<<"$hw")"
[ "$(jq .figures.threads <<<"$hw")" -ge 201 ] || fail "the 200-thread workload has $(jq .figures.threads <<<"$hw") threads"
if [ "$thp" != never ] && [ -n "$thp" ]; then
	[ "$(jq '.figures.stack_thp_bytes' <<<"$hw")" -gt 0 ] ||
		fail "no stack bytes on huge pages (THP $thp): $(jq -c .stacks <<<"$hw")"
	jq -e '[.findings[].kind] | index("thp_stacks")' <<<"$hw" >/dev/null ||
		fail "no thp_stacks finding: $(jq -c .findings <<<"$hw")"
	thp_note="$(jq '.figures.stack_thp_bytes / 1048576 | floor' <<<"$hw") MiB of stacks on huge pages, a thp_stacks finding"
else
	thp_note="THP is off on this host: no stack on huge pages to find"
fi
ok "dearest first; twthp: $(jq .figures.threads <<<"$hw") threads, $thp_note"

# its series grows window by window
ref=$(jq -r .ref <<<"$hw")
series() { api "/api/v1/workloads/$ref/series?metric=$1&step=1" | jq '[.points[].n] | add // 0'; }
n1=$(series threads)
t=$(date +%s)
until [ "$(series threads)" -gt "$n1" ]; do
	[ "$(since "$t")" -lt $((WINDOW * 2 + 60)) ] || fail "the series did not grow from $n1 windows"
	sleep 1
done
ok "GET /api/v1/workloads/$ref/series?metric=threads grows: $n1, then $(series threads) windows"

# bad input: a ref that is not one, one never seen, a figure that does not exist
[ "$(http_code /api/v1/workloads/zz/series?metric=threads)" = 404 ] || fail "a malformed ref is not a 404"
[ "$(http_code /api/v1/workloads/0123456789abcdef/series?metric=threads)" = 404 ] || fail "an unknown ref is not a 404"
d=$(api "/api/v1/workloads/$ref/series?metric=bogus" | jq -r .detail)
[ "$(http_code "/api/v1/workloads/$ref/series?metric=bogus")" = 400 ] && [[ "$d" == *stack_thp_bytes* ]] ||
	fail "an unknown figure: $d"
[ "$(http_code "/api/v1/workloads?x=1")" = 400 ] || fail "/api/v1/workloads took an unknown parameter"
ok "bad refs 404, an unknown figure 400 naming them ($d)"

# /metrics: labelled by workload alone, at most TOP + 1 series a family,
# the quote and backslash escaped, the markup as it is; promtool is clean
curl -sS "http://127.0.0.1:$PORT/metrics" >"$TW_TMP/metrics.txt"
grep -q '^threadwatch_workload_threads{workload="twthp"} ' "$TW_TMP/metrics.txt" ||
	fail "no twthp series: $(grep '^threadwatch_workload_threads' "$TW_TMP/metrics.txt")"
if [ "$thp" != never ] && [ -n "$thp" ]; then
	v=$(sed -n 's/^threadwatch_workload_stack_thp_bytes{workload="twthp"} //p' "$TW_TMP/metrics.txt")
	[ -n "$v" ] && awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "threadwatch_workload_stack_thp_bytes of twthp: \"$v\""
fi
grep -qF 'threadwatch_workload_threads{workload="tw\"q\\x"}' "$TW_TMP/metrics.txt" ||
	fail "the quoted name is not escaped: $(grep '^threadwatch_workload_threads' "$TW_TMP/metrics.txt")"
grep -qF 'threadwatch_workload_threads{workload="<i id=twx>"}' "$TW_TMP/metrics.txt" ||
	fail "no <i id=twx> series"
grep '^threadwatch_workload_' "$TW_TMP/metrics.txt" | grep -v '^threadwatch_workload_[a-z_]*{workload="[^"]*\(\\"[^"]*\)*"} ' &&
	fail "a workload series has another label"
if command -v promtool >/dev/null; then
	out=$(promtool check metrics <"$TW_TMP/metrics.txt" 2>&1) || fail "promtool check metrics: $out"
	prom_note="promtool check metrics clean"
else
	prom_note="promtool is not installed: not run"
fi
ok "/metrics: workload=\"NAME\" alone, tw\\\"q\\\\x escaped; $prom_note"

# the fleet: the daemon as a target names the workloads with its host
"$TW" fleet --workloads --json "127.0.0.1:$PORT" >"$TW_TMP/fleet.json" 2>"$TW_TMP/fleet.err" ||
	fail "fleet --workloads: $(cat "$TW_TMP/fleet.err")"
jq -e '.workloads[] | select(.name == "twthp") | .url' "$TW_TMP/fleet.json" >/dev/null ||
	fail "fleet --workloads --json does not name twthp: $(head -c 600 "$TW_TMP/fleet.json")"
"$TW" fleet --workloads "127.0.0.1:$PORT" >"$TW_TMP/fleet.txt" 2>&1 || fail "fleet --workloads: $(cat "$TW_TMP/fleet.txt")"
grep -q "twthp" "$TW_TMP/fleet.txt" && grep -q "127.0.0.1:$PORT" "$TW_TMP/fleet.txt" ||
	fail "fleet --workloads text: $(cat "$TW_TMP/fleet.txt")"
ok "threadwatch fleet --workloads names twthp with its host ($(grep -c . "$TW_TMP/fleet.txt") lines)"

# the page: in a real browser, the names are text
if [ "${TW_NO_BROWSER:-}" != 1 ]; then
	. "$SRC/tests/regress/lib-browser.sh"
	browser_tools
	node "$BROWSER_DIR/workloads.test.js" --url "http://127.0.0.1:$PORT/" --names 'twthp|<i id=twx>' \
		--out "$SRC/tests/out/browser" || fail "the workloads panel in the browser"
	ok "the page's panel lists twthp and <i id=twx> as text; axe-core clean"
fi

# SIGKILL while windows come in every few seconds: the database is whole,
# at most the window being written is lost, and the restarted daemon (the
# same key, so the same ref) keeps the history and adds to it
before=$(series threads)
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
if command -v sqlite3 >/dev/null; then
	chk=$(sqlite3 "$TW_TMP/d/threadwatch.db" 'PRAGMA integrity_check') || fail "sqlite3 cannot read the database"
	[ "$chk" = ok ] || fail "integrity_check after SIGKILL: $chk"
fi
start_daemon d --config "$TW_TMP/wl.conf" --interval 1h --observer-socket "$SOCK"
pids+=($DPID)
[ "$(series threads)" -ge "$before" ] || fail "the restart lost windows: $(series threads) of $before"
t=$(date +%s)
until [ "$(series threads)" -gt "$before" ]; do
	[ "$(since "$t")" -lt $((WINDOW * 2 + 60)) ] || fail "no window after the restart: $(tail -3 "$TW_TMP/obs.log")"
	sleep 1
done
ok "SIGKILLed and restarted: integrity_check ok, ref $ref keeps its $before windows and gains more"

# bounded: workloads_top = BOUND keeps BOUND rows and "other", which sums
# the rest; a workload with a finding (stacks on huge pages) is kept
# however little CPU it costs; /metrics has at most BOUND + 1 series a family
stop_daemon
printf 'workloads_top = %s\n' "$BOUND" >"$TW_TMP/wl.conf"
start_daemon d --config "$TW_TMP/wl.conf" --interval 1h --observer-socket "$SOCK"
pids+=($DPID)
last=$(api /api/v1/status | jq -r .workloads_window_end_ms)
t=$(date +%s)
until [ "$(api /api/v1/status | jq -r .workloads_window_end_ms)" != "$last" ]; do
	[ "$(since "$t")" -lt $((WINDOW * 2 + 60)) ] || fail "no window under workloads_top $BOUND"
	sleep 1
done
w=$(api /api/v1/workloads)
n=$(jq '.workloads | length' <<<"$w")
seen=$(jq .seen <<<"$w")
[ "$seen" -gt "$BOUND" ] || fail "only $seen workloads seen"
[ "$n" = $((BOUND + 1)) ] || fail "$n rows kept of $seen under workloads_top $BOUND"
[ "$(jq -r '.workloads[-1] | "\(.kind) \(.workloads)"' <<<"$w")" = "other $((seen - BOUND))" ] ||
	fail "no \"other\" row summing $((seen - BOUND)) workloads: $(jq -c '.workloads[-1] | {kind, workloads}' <<<"$w")"
if [ "$thp" != never ] && [ -n "$thp" ]; then
	jq -e '.workloads[] | select(.comm == "twthp")' <<<"$w" >/dev/null ||
		fail "twthp (stacks on huge pages) was not kept: $(jq -c '[.workloads[] | {name, findings: [.findings[]?.kind]}]' <<<"$w")"
fi
curl -sS "http://127.0.0.1:$PORT/metrics" >"$TW_TMP/metrics.txt"
most=$(grep -o '^threadwatch_workload_[a-z_]*{' "$TW_TMP/metrics.txt" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
[ "${most:-0}" -le $((BOUND + 1)) ] || fail "a workload family has $most series, more than $((BOUND + 1))"
ok "workloads_top $BOUND: $n rows of $seen workloads, \"other\" sums $((seen - BOUND)); twthp kept for its finding; /metrics at most $most series a family"
stop_daemon

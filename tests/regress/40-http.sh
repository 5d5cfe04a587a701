#!/usr/bin/env bash
# 40-http: the HTTP side of a real threadwatchd on an ephemeral port. Fake
# probes that print realistic ctxsw, map32 and threads documents (and one
# that crashes) fill a temporary database through real cycles; then every
# endpoint is queried and each response is checked against web/openapi.json
# (tests/regress/openapi_check.py), with the error cases (400 naming the
# parameter, 404, 405 with Allow, 413, a body on GET), ETag and 304, gzip,
# the POST trigger (401, 202, 409) and /metrics through promtool.
set -u
. "$(dirname "$0")/lib.sh"
[ -x "$B/threadwatchd" ] || { echo "threadwatchd is not built"; exit 77; }
. "$SRC/tests/regress/lib-daemon.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
SPEC=$SRC/web/openapi.json
OUT=$TW_TMP/out
LIST=$TW_TMP/responses.txt
mkdir -p "$OUT"
: >"$LIST"

# doc_probe NAME SLEEP SCALARS SERIES: a fake probe printing a valid document.
doc_probe() {
	local f=$TW_TMP/probes/$1
	mkdir -p "$TW_TMP/probes"
	cat >"$f" <<EOF
#!/bin/sh
# fake "$1" probe for 40-http: a realistic document
sleep $2
cat <<'DOC'
{"probe": "$1", "protocol": 1, "status": "ok", "reason": null,
 "started_at": "2026-12-03T07:51:56.123Z", "started_unix": 1796284316.123,
 "duration_s": $2, "params": {"quick": true},
 "scalars": {$3}, "series": {$4}, "info": {}}
DOC
EOF
	chmod 755 "$f"
}
pts() { # pts X0 DX Y0 FACTOR N: [[x, y], ...] with y growing geometrically
	awk -v x="$1" -v dx="$2" -v y="$3" -v f="$4" -v n="$5" 'BEGIN {
		for (i = 0; i < n; i++) { printf "%s[%g, %.6g]", i ? ", " : "", x + i * dx, y; y *= f } }'
}
doc_probe ctxsw 1 '"low_ns": {"value": 760.0, "unit": "ns"}, "high_ns": {"value": 758.0, "unit": "ns"},
 "ratio": {"value": 1.003, "unit": "ratio"}, "ratio_ci_lo": {"value": 0.99, "unit": "ratio"},
 "ratio_ci_hi": {"value": 1.02, "unit": "ratio"}, "fsgsbase": {"value": 1, "unit": "bool"}' \
	"\"pair_ratio\": {\"x_unit\": \"count\", \"y_unit\": \"ratio\", \"points\": [$(pts 0 1 1.0 1.001 15)]}"
doc_probe map32 0 '"window_bytes": {"value": 1073741824, "unit": "bytes"},
 "capacity_stacks": {"value": 127, "unit": "count"}, "slope": {"value": 0.04, "unit": "slope"},
 "fail_ns_at_max": {"value": 1900, "unit": "ns"}' \
	"\"fail_median_ns\": {\"x_unit\": \"vmas\", \"y_unit\": \"ns\", \"points\": [$(pts 100 1000 1500 1.02 12)]}"
doc_probe threads 0 '"low_first_rate": {"value": 52000, "unit": "per_s"},
 "high_first_rate": {"value": 51000, "unit": "per_s"}, "low_knee": {"value": 4032, "unit": "threads"},
 "max_threads": {"value": 4096, "unit": "threads"}' \
	"\"low_median_ns\": {\"x_unit\": \"threads\", \"y_unit\": \"ns\", \"points\": [$(pts 64 64 19000 1.01 20)]},
 \"high_median_ns\": {\"x_unit\": \"threads\", \"y_unit\": \"ns\", \"points\": [$(pts 64 64 19500 1.0 20)]}"
fake_probe "$TW_TMP/probes.d" crashy crash

start_daemon h --token "$TOKEN" --interval 6h --observer-socket "$TW_TMP/obs.sock"
wait_cycle 1
ok "threadwatchd on port $PORT finished its first cycle"

# req NAME METHOD PATH-TEMPLATE URL-PATH [CURL ARGS...]: one request; the body
# goes to $OUT/NAME, the headers to $OUT/NAME.h, the code to $CODE, and the
# response is listed for openapi_check.
req() {
	local name=$1 method=$2 template=$3 path=$4
	shift 4
	CODE=$(curl -sS --max-time 10 -X "$method" -o "$OUT/$name" -D "$OUT/$name.h" \
		-w '%{http_code}' "$@" "http://127.0.0.1:$PORT$path") || fail "$method $path: curl failed"
	[ -s "$OUT/$name" ] || rm -f "$OUT/$name"
	echo "$method $template $CODE $([ -f "$OUT/$name" ] && echo "$OUT/$name" || echo -)" >>"$LIST"
}
expect() { # expect NAME CODE [TEXT]: the status, and TEXT in the body
	[ "$CODE" = "$2" ] || fail "$1: status $CODE, expected $2: $(cat "$OUT/$1" 2>/dev/null)"
	[ -z "${3:-}" ] || grep -qF -- "$3" "$OUT/$1" || fail "$1: no \"$3\" in $(cat "$OUT/$1")"
}
header() { # header NAME HEADER: its value
	grep -i "^$2:" "$OUT/$1.h" | head -1 | cut -d' ' -f2- | tr -d '\r'
}

# --- every endpoint with real data ------------------------------------
req host GET /api/v1/host /api/v1/host
expect host 200 '"hostname"'
req rec GET /api/v1/recommendation /api/v1/recommendation
expect rec 200 '"verdict"'
req runs GET /api/v1/runs '/api/v1/runs?limit=2'
expect runs 200 '"next_cursor"'
cursor=$(jq -r .next_cursor "$OUT/runs")
req runs2 GET /api/v1/runs "/api/v1/runs?limit=2&cursor=$cursor"
expect runs2 200
[ "$(jq '.runs[0].id' "$OUT/runs2")" -lt "$cursor" ] || fail "the cursor did not page on"
req runs-err GET /api/v1/runs '/api/v1/runs?status=error&probe=crashy&since=2000-01-01T00:00:00Z'
expect runs-err 200 'SIGSEGV'
id=$(jq '.runs[0].id' "$OUT/runs-err")
req run-err GET '/api/v1/runs/{id}' "/api/v1/runs/$id"
expect run-err 200 '"status":"error"'
id=$(jq '[.runs[] | select(.probe == "ctxsw")][0].id' <(api '/api/v1/runs?probe=ctxsw'))
req run GET '/api/v1/runs/{id}' "/api/v1/runs/$id"
expect run 200 '"pair_ratio"'
req series GET /api/v1/series '/api/v1/series?metric=ctxsw.ratio&step=auto'
expect series 200 '"avg":1.003'
req series-step GET /api/v1/series "/api/v1/series?metric=ctxsw.low_ns&since=$(($(date +%s) - 3600))&step=60"
expect series-step 200 '"step_ms":60000'
req metrics-cat GET /api/v1/metrics /api/v1/metrics
expect metrics-cat 200 '"ctxsw.ratio"'
req catalog GET /api/v1/catalog /api/v1/catalog
expect catalog 200 '"threadwatch_ctxsw_ratio"'
# The metric list's descriptions are the catalogue's.
[ "$(jq -c '[.metrics[] | select(.description) | [.name, .description]] | sort' "$OUT/metrics-cat")" = \
	"$(jq -c '[.metrics[] | select(.name | test("_at_[0-9]+$") | not) | [.name, .description]] | sort' \
		"$OUT/catalog")" ] || fail "/api/v1/metrics and /api/v1/catalog describe different metrics"
req headroom GET /api/v1/headroom /api/v1/headroom
expect headroom 200 '"limits"'
req status GET /api/v1/status /api/v1/status
expect status 200 '"trigger_enabled":true'
req events GET /api/v1/events '/api/v1/events?metric=ctxsw.ratio&since=2000-01-01T00:00:00Z&limit=5'
expect events 200 '"events"'
# the workloads: none until a window comes (503, Retry-After), then one
# handed over the observer socket as threadwatch-observer hands it
req wl-none GET /api/v1/workloads /api/v1/workloads
expect wl-none 503 'threadwatch-observer'
python3 - "$TW_TMP/obs.sock" >"$TW_TMP/push.txt" <<'PY'
import json, socket, sys
w = {"key": "unit:web.service", "kind": "unit", "unit": "web.service", "manager": None, "cgroup": "/system.slice/web.service",
     "comm": "web", "exe": "/usr/bin/web", "pids": [4242], "processes": 1, "threads": 12, "creates_per_s": 3.0,
     "exits_per_s": 3.0, "switches_per_s": {"total": 500.0, "voluntary": 480.0, "involuntary": 20.0},
     "migrations_per_s": 40.0, "switches_exact": True,
     "stacks": {"count": 12, "resident_bytes": 98304, "thp_backed": 0, "thp_bytes": 0}}
doc = {"window_s": 60, "processes": 1, "threads": 12, "workloads": [w], "mechanisms": {},
       "largest_vmas": {"pid": 4242, "comm": "web", "vmas": 80, "processes_scanned": 1, "processes_unreadable": 0}}
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(json.dumps(doc).encode())
s.shutdown(socket.SHUT_WR)
print(s.recv(300).decode().strip())
PY
grep -qx ok "$TW_TMP/push.txt" || fail "the window was not taken: $(cat "$TW_TMP/push.txt")"
wait_for sh -c "curl -sf http://127.0.0.1:$PORT/api/v1/workloads >/dev/null" || fail "no workloads after the window"
req wl GET /api/v1/workloads /api/v1/workloads
expect wl 200 '"web.service"'
ref=$(jq -r '.workloads[0].ref' "$OUT/wl")
req wl-series GET '/api/v1/workloads/{ref}/series' "/api/v1/workloads/$ref/series?metric=switches_per_second&step=1h"
expect wl-series 200 '"max":500'
req wl-bad GET '/api/v1/workloads/{ref}/series' "/api/v1/workloads/$ref/series?metric=ctxsw.ratio"
expect wl-bad 400 'stack_thp_bytes'
req wl-none2 GET '/api/v1/workloads/{ref}/series' "/api/v1/workloads/ffffffffffffffff/series?metric=threads"
expect wl-none2 404 'ffffffffffffffff'
req healthz GET /healthz /healthz
expect healthz 200 '"ok"'
req spec GET /api/v1/openapi.json /api/v1/openapi.json
expect spec 200 '"openapi"'
cmp -s "$OUT/spec" "$SPEC" || fail "/api/v1/openapi.json is not web/openapi.json"
req prom GET /metrics /metrics
expect prom 200 'threadwatch_build_info{version='
# threadwatch recommend --from: the daemon's latest inputs, not a new
# measurement; the same verdict unless a workload option changes it.
from=$("$B/threadwatch" recommend --json --from "127.0.0.1:$PORT" 2>"$TW_TMP/from.err") ||
	fail "recommend --from: exit $?: $(cat "$TW_TMP/from.err")"
[ "$(jq -r .result.verdict <<<"$from")" = "$(jq -r .verdict "$OUT/rec")" ] &&
	[ "$(jq -c .inputs.ctxsw <<<"$from")" = "$(jq -c .inputs.ctxsw "$OUT/rec")" ] ||
	fail "recommend --from gave other inputs or verdict: $(jq -c '.result.verdict, .inputs.ctxsw' <<<"$from")"
grep -q 'measuring' "$TW_TMP/from.err" && fail "recommend --from measured again: $(cat "$TW_TMP/from.err")"
[ "$("$B/threadwatch" recommend --json --from "127.0.0.1:$PORT" --threads 7 | jq .inputs.workload.threads)" = 7 ] ||
	fail "recommend --from --threads 7 did not apply the workload"
"$B/threadwatch" recommend --from "127.0.0.1:$(free_port)" >/dev/null 2>"$TW_TMP/from.err"
[ $? = 1 ] && grep -q -- '--from 127.0.0.1:[0-9]*: ' "$TW_TMP/from.err" || fail "recommend --from a dead port: $(cat "$TW_TMP/from.err")"
"$B/threadwatch" recommend --from "127.0.0.1:$PORT" --input x >/dev/null 2>&1
[ $? = 2 ] || fail "--from with --input was not a usage error"
ok "recommend --from takes the daemon's inputs (verdict $(jq -r .result.verdict <<<"$from")), applies --threads, names a dead daemon"
ok "every endpoint answers with data: $(jq '.runs | length' "$OUT/runs") runs per page," \
	"verdict $(jq -r .verdict "$OUT/rec"), $(jq '.points | length' "$OUT/series") series points"

# --- /metrics ---------------------------------------------------------
if command -v promtool >/dev/null; then
	promtool check metrics <"$OUT/prom" >"$OUT/promtool.txt" 2>&1 ||
		fail "promtool check metrics: $(cat "$OUT/promtool.txt")"
	ok "promtool check metrics: clean ($(grep -c '^threadwatch_' "$OUT/prom") samples)"
else
	echo "promtool is not installed; /metrics not linted"
fi
for want in 'threadwatch_ctxsw_ratio 1.003' 'threadwatch_ctxsw_switch_seconds{stack="low"} 7.6e-07' \
	'threadwatch_probe_failures_total{probe="crashy"} 1' \
	'threadwatch_map32_window_bytes 1073741824' 'threadwatch_recommendation_low_stacks ' \
	'threadwatch_probe_last_run_success{probe="crashy"} 0'; do
	grep -qF "$want" "$OUT/prom" || fail "/metrics lacks \"$want\""
done
[ "$(header prom Content-Type)" = "text/plain; version=0.0.4; charset=utf-8" ] ||
	fail "/metrics Content-Type: $(header prom Content-Type)"

# --- errors -----------------------------------------------------------
req e-limit GET /api/v1/runs '/api/v1/runs?limit=501'
expect e-limit 400 "'limit'"
req e-since GET /api/v1/runs '/api/v1/runs?since=yesterday'
expect e-since 400 "'since'"
req e-unknown GET /api/v1/runs '/api/v1/runs?colour=red'
expect e-unknown 400 "'colour'"
req e-metric GET /api/v1/series /api/v1/series
expect e-metric 400 "'metric'"
req e-step GET /api/v1/series '/api/v1/series?metric=ctxsw.ratio&step=0'
expect e-step 400 "'step'"
req e-nometric GET /api/v1/series '/api/v1/series?metric=nosuch.thing'
expect e-nometric 404 'nosuch.thing'
# A catalogued metric no run has stored yet (no handoff probe here) is an
# empty history, not an unknown name; a /metrics family name is told the
# API's name.
req series-none GET /api/v1/series '/api/v1/series?metric=handoff.aa_ns'
expect series-none 200 '"points":[]'
jq -e '.unit == "ns" and .metric == "handoff.aa_ns"' "$OUT/series-none" >/dev/null ||
	fail "an empty catalogued series: $(cat "$OUT/series-none")"
req e-promname GET /api/v1/series '/api/v1/series?metric=threadwatch_ctxsw_ratio'
expect e-promname 400 '\"ctxsw.ratio\" for threadwatch_ctxsw_ratio'
req e-events GET /api/v1/events '/api/v1/events?metric=ratio'
expect e-events 400 "'metric'"
# Unknown names follow the one rule web/openapi.json states (and doc/api.md):
# a list's filter that matches nothing is 200 and empty, a named thing
# nobody knows 404 (e-nometric, e-run), a malformed name 400 (e-events).
req runs-nosuch GET /api/v1/runs '/api/v1/runs?probe=nosuch'
expect runs-nosuch 200
jq -e '.runs == [] and .next_cursor == null' "$OUT/runs-nosuch" >/dev/null ||
	fail "runs?probe=nosuch: $(cat "$OUT/runs-nosuch")"
req events-nosuch GET /api/v1/events '/api/v1/events?metric=nosuch.x'
expect events-nosuch 200
jq -e '.events == []' "$OUT/events-nosuch" >/dev/null || fail "events?metric=nosuch.x: $(cat "$OUT/events-nosuch")"
jq -e '.info.description | contains("Unknown names follow one rule: a filter on a list (runs?probe=, events?metric=) that matches nothing answers 200 with an empty list; a request for one named thing (runs/{id}, series?metric=) that neither the catalogue nor the store knows answers 404; a malformed name or an impossible range")' \
	"$SRC/web/openapi.json" >/dev/null || fail "web/openapi.json's description does not state the unknown-name rule"
jq -e '[.paths["/api/v1/runs"].get.parameters[], .paths["/api/v1/events"].get.parameters[]] |
	map(select(.name == "probe" or .name == "metric") | .description | test("200 with an empty list, not 404")) |
	length == 2 and all' "$SRC/web/openapi.json" >/dev/null ||
	fail "web/openapi.json's probe= and metric= filters do not say what an unknown name answers"
grep -qF 'Unknown names follow one rule' "$SRC/doc/api.md" || fail "doc/api.md does not state the unknown-name rule"
ok "unknown names: runs?probe=nosuch and events?metric=nosuch.x are 200 and empty, as web/openapi.json and doc/api.md state"
# A 'since' in the future without 'until' is the same 400 on every range.
future=$(($(date +%s) + 3600))
for p in "runs runs?since=$future" "events events?since=$future&metric=ctxsw.high_ns" \
	"series series?metric=ctxsw.ratio&since=$future"; do
	n=${p%% *}
	req "e-future-$n" GET "/api/v1/$n" "/api/v1/${p#* }"
	expect "e-future-$n" 400 "parameter 'since' is in the future ('until' defaults to now)"
done
ok "a future since without until: 400 on runs, events and series alike"
req e-id GET '/api/v1/runs/{id}' /api/v1/runs/abc
expect e-id 400 "'id'"
req e-run GET '/api/v1/runs/{id}' /api/v1/runs/987654321
expect e-run 404 '987654321'
req e-404 GET /nope /nope
expect e-404 404 '"status":404'
req e-405 DELETE /api/v1/host /api/v1/host
expect e-405 405 'DELETE'
[ "$(header e-405 Allow)" = "GET, HEAD" ] || fail "405 Allow: $(header e-405 Allow)"
req e-405b PUT /api/v1/runs /api/v1/runs
expect e-405b 405
[ "$(header e-405b Allow)" = "GET, HEAD, POST" ] || fail "405 Allow: $(header e-405b Allow)"
req e-getbody GET /api/v1/host /api/v1/host --data-binary 'x=1'
expect e-getbody 400 'body'
head -c 100000 /dev/zero >"$TW_TMP/big"
req e-413 POST /api/v1/runs /api/v1/runs --data-binary @"$TW_TMP/big" \
	-H "Authorization: Bearer $TOKEN"
expect e-413 413 'limit'
req e-enc GET /nope '/api/v1/h%zzost'
expect e-enc 400 'percent-encoding'
ok "errors: 400 naming the parameter, 404, 405 with Allow, 413, a body on GET refused"

# --- static files: ETag, 304, gzip ------------------------------------
for path in / /api/v1/openapi.json /dygraphs/dygraph.min.js; do
	n=$(echo "$path" | tr -c 'a-z0-9\n' _)
	req "s$n" GET "$([ "$path" = /dygraphs/dygraph.min.js ] && echo '/dygraphs/{file}' || echo "$path")" "$path"
	if [ "$path" = / ] && [ "$CODE" = 404 ]; then echo "no dashboard in this build"; continue; fi
	if [ "$path" = /dygraphs/dygraph.min.js ] && [ "$CODE" = 404 ]; then
		echo "no dygraphs directory here"
		continue
	fi
	expect "s$n" 200
	# The type served is one the OpenAPI document lists for the path (issue
	# 36: it said application/octet-stream for text/javascript).
	ct=$(header "s$n" Content-Type | cut -d';' -f1 | tr -d ' ')
	spec=$([ "$path" = /dygraphs/dygraph.min.js ] && echo '/dygraphs/{file}' || echo "$path")
	jq -e --arg p "$spec" --arg ct "$ct" '.paths[$p].get.responses["200"].content | has($ct)' \
		"$SRC/web/openapi.json" >/dev/null || fail "$path is served as $ct, which web/openapi.json does not list"
	etag=$(header "s$n" ETag)
	[ -n "$etag" ] || fail "$path: no ETag"
	[ -n "$(header "s$n" Cache-Control)" ] || fail "$path: no Cache-Control"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "http://127.0.0.1:$PORT$path")
	[ "$code" = 304 ] || fail "$path with If-None-Match: $code, expected 304"
	curl -s --compressed -D "$OUT/gz.h" -o "$OUT/gz" "http://127.0.0.1:$PORT$path"
	grep -qi '^Content-Encoding: gzip' "$OUT/gz.h" || fail "$path: not gzip-compressed"
	cmp -s "$OUT/gz" "$OUT/s$n" || fail "$path: the gzip body differs from the plain one"
	ok "$path: ETag $etag, 304 on If-None-Match, gzip $(grep -i '^Content-Length' "$OUT/gz.h" |
		tr -d '\r' | cut -d' ' -f2) of $(stat -c %s "$OUT/s$n") bytes"
done
code=$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/dygraphs/../../../etc/passwd")
[ "$code" = 404 ] || fail "/dygraphs/../ gave $code"

# --- POST /api/v1/runs -----------------------------------------------
req p-none POST /api/v1/runs /api/v1/runs
expect p-none 401 'Authorization'
grep -qi '^WWW-Authenticate: Bearer' "$OUT/p-none.h" || fail "401 without WWW-Authenticate"
req p-wrong POST /api/v1/runs /api/v1/runs -H "Authorization: Bearer ${TOKEN}x"
expect p-wrong 401 'wrong token'
req p-ok POST /api/v1/runs /api/v1/runs -H "Authorization: Bearer $TOKEN"
expect p-ok 202 '"cycle_id"'
cycle=$(jq .cycle_id "$OUT/p-ok")
req p-busy POST /api/v1/runs /api/v1/runs -H "Authorization: Bearer $TOKEN"
expect p-busy 409 'already running'
wait_cycle "$cycle"
ok "POST: 401 without or with a wrong token, 202 started cycle $cycle, 409 while it ran"

python3 "$SRC/tests/regress/openapi_check.py" "$SPEC" "$LIST" >"$OUT/check.txt" 2>&1 ||
	fail "responses do not match web/openapi.json: $(grep -v '^ok' "$OUT/check.txt")"
ok "$(tail -1 "$OUT/check.txt")"
stop_daemon
ok "stopped cleanly in ${STOP_S}s"

#!/usr/bin/env bash
# 76-fleet: `threadwatch fleet` against three seeded daemons (see
# lib-fleet.sh), a dead port, a port that never answers, a web server that
# is not threadwatchd and a stand-in daemon whose host endpoint fails.
# Every table cell and JSON field is checked against the daemon's own API;
# the exit status is 1 while any host cannot be read and 0 with only live
# hosts; bad arguments and bad files exit 2. Then: file_sd JSON and YAML
# with labels; 300 hosts served by one fleet_stub.py process (answers
# recorded from h3), alone and mixed with dead ports; --concurrency;
# --token against the stub, which checks the header as the daemon's POST
# does; --cacert and --insecure against a daemon with a test certificate.
# regress: long
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-fleet.sh"
TW=$B/threadwatch
[ -x "$TW" ] || fail "\"$TW\" is not built"
OTHER_PIDS=()
cleanup() {
	kill_fleet
	for p in "${OTHER_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
trap cleanup EXIT

# h1's cycle only recomputes the recommendation for 100 threads from the
# seeded runs: its probes are switched off, not missing (a missing probe is
# a failed one, and fleet would exit 3).
FLEET_H1_ARGS=(--probes-disabled "$TW_BUILTINS")
start_fleet
U1=http://127.0.0.1:${FLEET_PORTS[0]}
U2=127.0.0.1:${FLEET_PORTS[1]}
U3=http://127.0.0.1:${FLEET_PORTS[2]}/
DEAD=http://127.0.0.1:$(free_port)

# fleet ARGS...: runs the command; sets OUT, ERR and RC.
fleet() {
	OUT=$("$TW" fleet "$@" 2>"$TW_TMP/err")
	RC=$?
	ERR=$(cat "$TW_TMP/err")
}
# row URL: the table row of that URL.
row() { awk -v u="$1" '$1 == u' <<<"$OUT"; }
# expect_cell URL COLUMN WANT: the cell under the header COLUMN.
expect_cell() {
	local hdr line start width cell
	hdr=$(head -n1 <<<"$OUT")
	line=$(row "$1")
	[ -n "$line" ] || fail "no row for $1 in:
$OUT"
	start=$(awk -v h="$hdr" -v c="$2" 'BEGIN { print index(h, c) }')
	[ "$start" -gt 0 ] || fail "no column $2 in: $hdr"
	cell=$(cut -c"$start"- <<<"$line" | sed -E 's/  .*//')
	[ "$cell" = "$3" ] || fail "$1: column $2 is \"$cell\", expected \"$3\"
$OUT"
}

# --- three live hosts and a dead port -------------------------------------------
fleet --timeout 5s "$U1" "$U2" "$U3" "$DEAD"
echo "$OUT"
[ "$RC" = 1 ] || fail "exit status $RC with a dead port, expected 1 (stderr: $ERR)"
[ "$(wc -l <<<"$OUT")" = 5 ] || fail "expected a header and 4 rows"
for col in URL HOST KERNEL GLIBC VERDICT CONFIDENCE RATIO KNEE "LAST CYCLE" HEADROOM; do
	grep -q "$col" <<<"$(head -n1 <<<"$OUT")" || fail "header lacks $col"
done
row "$DEAD" | grep -Eq "unreachable: .*(Couldn't connect|refused)" ||
	fail "the dead port's row does not say why: $(row "$DEAD")"

i=0
for u in "$U1" "$U2" "$U3"; do
	PORT=${FLEET_PORTS[$i]}
	i=$((i + 1))
	host=$(api /api/v1/host)
	rec=$(api /api/v1/recommendation)
	expect_cell "$u" HOST "$(jq -r .current.fingerprint.hostname <<<"$host")"
	expect_cell "$u" KERNEL "$(jq -r .current.fingerprint.kernel <<<"$host")"
	expect_cell "$u" GLIBC "$(jq -r .current.fingerprint.glibc <<<"$host")"
	expect_cell "$u" VERDICT "$(jq -r .verdict <<<"$rec")"
	expect_cell "$u" CONFIDENCE "$(jq -r .confidence <<<"$rec")"
	expect_cell "$u" RATIO "$(printf '%.3f' "$(jq -r .inputs.ctxsw.ratio <<<"$rec")")"
	run=$(api '/api/v1/runs?probe=threads&status=ok&limit=1' | jq -r '.runs[0].id')
	knee=$(api "/api/v1/runs/$run" |
		jq -r '[.samples[] | select(.metric == "threads.low_knee") | .value][0] // "none"')
	[ "$knee" = none ] || knee=$(printf '%.0f' "$knee")
	expect_cell "$u" KNEE "$knee"
	row "$u" | grep -Eq '[0-9]+[smhd]([0-9]+[mh])? ago' || fail "$u: no age of the last cycle"
done
expect_cell "$U1" VERDICT low
expect_cell "$U2" VERDICT high
expect_cell "$U1" HEADROOM ok
expect_cell "$U3" HEADROOM pids_max
expect_cell "$U1" KNEE none
row "$U3" | grep -Eq ' [0-9]{3,} ' || fail "h3 (linear search) shows no knee: $(row "$U3")"
ok "table: 3 rows match each daemon's API, the dead port says why, exit 1"

# The events column appears only when a daemon offers /api/v1/events.
PORT=${FLEET_PORTS[0]}
if [ "$(http_code /api/v1/events)" = 200 ]; then
	head -n1 <<<"$OUT" | grep -q EVENTS || fail "/api/v1/events answers but no EVENTS column"
else
	head -n1 <<<"$OUT" | grep -q EVENTS && fail "an EVENTS column without /api/v1/events"
	ok "no /api/v1/events: no EVENTS column, and its 404 is no error"
fi

# --- the same as JSON ------------------------------------------------------------
fleet --json "$U1" "$U2" "$U3" "$DEAD"
[ "$RC" = 1 ] || fail "--json: exit status $RC, expected 1"
jq_true "$OUT" '.hosts_total == 4 and .hosts_unreachable == 1 and .hosts_failed == 1' ||
	fail "--json: wrong totals: $(jq -c '{hosts_total, hosts_unreachable}' <<<"$OUT")"
jq_true "$OUT" --arg u "$DEAD" \
	'.hosts[3] | .url == $u and .reachable == false and (.error | length > 0)' || fail "--json: the dead host: $(jq -c '.hosts[3]' <<<"$OUT")"
for i in 0 1 2; do
	PORT=${FLEET_PORTS[$i]}
	h=$(jq -c ".hosts[$i]" <<<"$OUT")
	rec=$(api /api/v1/recommendation)
	st=$(api /api/v1/status)
	jq_true "$h" --argjson rec "$rec" --argjson st "$st" '
		.reachable and .error == null and
		.verdict == $rec.verdict and .confidence == $rec.confidence and
		.ctxsw_ratio == $rec.inputs.ctxsw.ratio and
		.last_cycle_ms == $st.last_cycle_ms and .last_cycle_age_s >= 0 and
		(.knee | has("default") and has("low") and has("high")) and
		(.headroom_warnings | type == "array")' ||
		fail "--json: host $i differs from its API: $h"
done
jq_true "$OUT" \
	'.hosts[2].headroom_warnings[0].limit == "pids_max" and (.hosts[2].knee.low | type == "number")' ||
	fail "--json: h3's warning or knee: $(jq -c '.hosts[2]' <<<"$OUT")"
ok "--json: one document, every field as the daemons say"

# --- only live hosts, from a file --------------------------------------------------
cat >"$TW_TMP/hosts.txt" <<EOF
# the fleet
$U1
  $U2   # a comment after the URL

$U3
EOF
fleet --file "$TW_TMP/hosts.txt"
[ "$RC" = 0 ] || fail "only live hosts: exit status $RC, expected 0: $OUT $ERR"
[ "$(wc -l <<<"$OUT")" = 4 ] || fail "--file: expected a header and 3 rows: $OUT"
grep -q unreachable <<<"$OUT" && fail "--file: a live host was unreachable: $OUT"
ok "--file with comments: 3 live hosts, exit 0"

# --- hosts that hang or are not threadwatchd ---------------------------------------
silent=$(free_port)
silent_listener "$silent"
OTHER_PIDS+=("$SILENT_PID")
# A web server that is not threadwatchd (404 everywhere), and one whose
# status answers but whose host endpoint fails.
cat >"$TW_TMP/fake-api.py" <<'EOF'
import http.server, json, sys
mode = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if mode == "broken" and self.path == "/api/v1/status":
            code, body = 200, {"version": "0.1.0", "now_ms": 1, "last_cycle_ms": None}
        elif mode == "broken":
            code, body = 500, {"error": {"status": 500, "message": "disk on fire"}}
        else:
            code, body = 404, {"detail": "nothing here"}
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
web=$(free_port)
python3 "$TW_TMP/fake-api.py" "$web" foreign &
OTHER_PIDS+=($!)
broken=$(free_port)
python3 "$TW_TMP/fake-api.py" "$broken" broken &
OTHER_PIDS+=($!)
wait_for curl -s "http://127.0.0.1:$web/" || fail "the foreign web server did not start"
wait_for curl -sf "http://127.0.0.1:$broken/api/v1/status" || fail "the broken daemon did not start"
start=$(date +%s.%N)
fleet --timeout 1 "$U1" "127.0.0.1:$silent" "127.0.0.1:$web" "127.0.0.1:$broken"
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "$OUT"
[ "$RC" = 1 ] || fail "a silent host: exit status $RC, expected 1"
# It took the connection (the kernel's backlog) and said nothing: up but
# stuck, not "unreachable" as a refused or unroutable host is.
row "127.0.0.1:$silent" | grep -q "no answer (connected, then silent): no answer within 1 s" ||
	fail "the silent host's row: $(row "127.0.0.1:$silent")"
row "127.0.0.1:$web" | grep -q "not a threadwatchd API: GET /api/v1/status: HTTP 404" ||
	fail "the web server's row: $(row "127.0.0.1:$web")"
row "127.0.0.1:$broken" | grep -q "  error: GET /api/v1/host: HTTP 500: disk on fire" ||
	fail "the broken daemon's row: $(row "127.0.0.1:$broken")"
expect_cell "$U1" VERDICT low
# The budget is per host and hosts are asked at once: far less than 2 budgets.
[ "$(echo "$secs < 3" | bc)" = 1 ] || fail "--timeout 1 took $secs s"
fleet --json "127.0.0.1:$silent" "127.0.0.1:$broken" --timeout 1
jq_true "$OUT" '.hosts_unreachable == 1 and .hosts_failed == 2 and .hosts[1].reachable and
	.hosts[0].failure == "no answer (connected, then silent)" and .hosts[1].failure == "error"' ||
	fail "--json: a broken daemon is reachable but failed: $OUT"
# Every host failing: the table keeps its columns (EVENTS too).
fleet --timeout 1 "127.0.0.1:$silent" "$DEAD"
grep -q '^URL .*EVENTS' <<<"$OUT" || fail "with every host failing the EVENTS column went: $(head -1 <<<"$OUT")"
ok "a silent host times out after its own budget (${secs}s in all); a foreign server and a failing endpoint are named; with every host failing the columns stay"

# --- file_sd JSON and YAML, with labels ----------------------------------------------
H1=127.0.0.1:${FLEET_PORTS[0]}
H2=127.0.0.1:${FLEET_PORTS[1]}
H3=127.0.0.1:${FLEET_PORTS[2]}
cat >"$TW_TMP/sd.json" <<JSON
[
  {"targets": ["$H1", "$H2"], "labels": {"env": "prod", "team": "db"}},
  {"targets": ["$H3"], "labels": {"env": "test", "__scheme__": "http", "__meta_x": "hidden"}},
  {"targets": ["$DEAD"]}
]
JSON
# As Prometheus's own tools write it (indentless lists), and by hand.
cat >"$TW_TMP/sd.yml" <<YAML
# file_sd as YAML
---
- targets:
  - $H1
  - '$H2'
  labels:
    env: prod
    "team": db   # a comment
- targets: ["$H3"]
  labels: {env: test, __scheme__: http, __meta_x: hidden}
- targets:
    - $DEAD
YAML
for f in sd.json sd.yml; do
	fleet --file "$TW_TMP/$f"
	[ "$RC" = 1 ] || fail "--file $f: exit status $RC with a dead port, expected 1: $ERR"
	head -n1 <<<"$OUT" | grep -q LABELS || fail "--file $f: no LABELS column: $OUT"
	[ "$(wc -l <<<"$OUT")" = 5 ] || fail "--file $f: expected a header and 4 rows: $OUT"
	expect_cell "$H1" LABELS env=prod,team=db
	expect_cell "$H2" LABELS env=prod,team=db
	expect_cell "$H3" LABELS env=test
	expect_cell "$H1" VERDICT low
	expect_cell "$H3" HEADROOM pids_max
	row "$DEAD" | grep -Eq "^$DEAD +- +unreachable: " || fail "--file $f: dead row: $(row "$DEAD")"
	fleet --json --file "$TW_TMP/$f"
	jq_true "$OUT" --arg h1 "$H1" --arg h3 "$H3" '
		.hosts_total == 4 and .hosts_unreachable == 1 and
		.hosts[0].url == $h1 and .hosts[0].labels == {"env": "prod", "team": "db"} and
		.hosts[2].url == $h3 and .hosts[2].labels == {"env": "test"} and
		.hosts[3].labels == {} and [.hosts[0,1].verdict] == ["low", "high"]' ||
		fail "--json --file $f: $(jq -c '.hosts[] | {url, labels, verdict}' <<<"$OUT")"
done
ok "file_sd JSON and YAML: targets with their labels (LABELS column, labels object), __ labels hidden"

# Bad files exit 2 and name FILE:LINE.
bad_file() { # NAME WANT-IN-MESSAGE CONTENT
	printf '%s' "$3" >"$TW_TMP/$1"
	fleet --file "$TW_TMP/$1"
	[ "$RC" = 2 ] || fail "--file $1: exit status $RC, expected 2 ($ERR)"
	[ -z "$OUT" ] || fail "--file $1 printed a report"
	grep -qF -- "$2" <<<"$ERR" || fail "--file $1: expected \"$2\" in: $ERR"
}
bad_file bad1.json "bad1.json:3: " $'[\n  {"targets": ["a:1"]},\n  {"targets": ["b:2"],}\n]\n'
bad_file bad2.json "bad2.json:2: \"targets\" must be a list" $'[\n {"targets": "a:1"}]'
bad_file bad3.json "bad3.json:1: unknown key \"target\"" '[{"target": ["a:1"]}]'
bad_file bad4.json "bad4.json: no targets" '[]'
bad_file bad5.json "bad5.json:1: label \"1x\"" '[{"targets": ["a:1"], "labels": {"1x": "y"}}]'
bad_file bad6.json "bad6.json:1: label \"n\": the value must be a string" \
	'[{"targets": ["a:1"], "labels": {"n": 1}}]'
bad_file bad1.yml "bad1.yml:3: did not find expected key" $'- targets:\n    - a:1\n  - b:2\n'
bad_file bad2.yml "bad2.yml:2: unknown key \"label\"" $'- targets: [a:1]\n  label: {a: b}\n'
bad_file bad3.yml "bad3.yml:4: expected a string" \
	$'# label values are strings\n- targets: [a:1]\n  labels:\n    env: !!int 1\n'
bad_file bad4.yml "bad4.yml:2: found character that cannot start any token" $'- targets:\n\t- a:1\n'
bad_file bad5.yml "bad5.yml:2: did not find expected ',' or ']'" $'- targets: [a:1\n'
bad_file bad6.yml "bad6.yml:1: __scheme__ \"ftp\"" $'- targets: [a:1]\n  labels: {__scheme__: ftp}\n'
bad_file bad7.yml "bad7.yml:1: a group without targets" $'- labels: {a: b}\n'
bad_file empty.txt "empty.txt: no targets" $'# nothing but a comment\n\n'
bad_file words.txt "words.txt:2: one URL a line" $'http://a:1\nhttp://b:2 http://c:3\n'
mkdir -p "$TW_TMP/adir"
fleet --file "$TW_TMP/adir"
[ "$RC" = 2 ] && grep -q "adir" <<<"$ERR" || fail "--file DIR: exit status $RC: $ERR"
ok "bad files: exit 2 with FILE:LINE and what is wrong"

# --- many hosts: one stub process on many ports, answering as h3 does ------------------
record_answers "${FLEET_PORTS[2]}" "$TW_TMP/answers.json"
N=300
start_stub "$TW_TMP/answers.json" "$N"
OTHER_PIDS+=("$STUB_PID")
for i in $(seq 0 $((N - 1))); do echo "127.0.0.1:$((STUB_FIRST + i))"; done >"$TW_TMP/many.txt"
FIELDS='{kernel, glibc, verdict, confidence, ctxsw_ratio, knee, headroom_warnings, threads_run_id}'
fleet --timeout 30s --json "$U3"
ref=$(jq -c ".hosts[0] | $FIELDS" <<<"$OUT")
[ "$(jq -r .verdict <<<"$ref")" != null ] || fail "no reference row from h3: $OUT"
fleet --timeout 30s --json --file "$TW_TMP/many.txt"
[ "$RC" = 0 ] || fail "$N stub hosts: exit status $RC, expected 0: $ERR"
jq_true "$OUT" --argjson n "$N" --argjson ref "$ref" --argjson first "$STUB_FIRST" "
	.hosts_total == \$n and .hosts_unreachable == 0 and .hosts_failed == 0 and
	([.hosts[] | $FIELDS] | unique) == [\$ref] and
	[.hosts[].url] == [range(\$n) | \"127.0.0.1:\(\$first + .)\"]" ||
	fail "$N stub hosts: rows differ from h3's: $(jq -c '[.hosts[] | {url, error, verdict}] | .[0:3]' <<<"$OUT")"
fleet --timeout 30s --concurrency 7 --file "$TW_TMP/many.txt"
[ "$RC" = 0 ] && [ "$(wc -l <<<"$OUT")" = $((N + 1)) ] ||
	fail "--concurrency 7: exit status $RC, $(wc -l <<<"$OUT") lines"
for u in "127.0.0.1:$STUB_FIRST" "127.0.0.1:$((STUB_FIRST + N - 1))"; do
	expect_cell "$u" VERDICT "$(jq -r .verdict <<<"$ref")"
	expect_cell "$u" HEADROOM pids_max
done
ok "$N hosts of one stub: all read, every row as h3 answers, in order; also 7 at a time"

# A mix with dead ports: exit 1, each dead one named, the rest read.
dead=()
while [ "${#dead[@]}" -lt 20 ]; do
	p=$(free_port)
	[ -n "$p" ] || fail "free_port gave nothing"
	[[ " ${dead[*]} " == *" $p "* ]] || dead+=("$p")
done
{
	cat "$TW_TMP/many.txt"
	for p in "${dead[@]}"; do echo "127.0.0.1:$p"; done
} | shuf >"$TW_TMP/mix.txt"
fleet --timeout 30s --json --file "$TW_TMP/mix.txt"
[ "$RC" = 1 ] || fail "a mix with dead ports: exit status $RC, expected 1"
jq_true "$OUT" --argjson n "$N" \
	'.hosts_total == $n + 20 and .hosts_unreachable == 20 and .hosts_failed == 20' ||
	fail "a mix: wrong totals: $(jq -c '{hosts_total, hosts_unreachable, hosts_failed}' <<<"$OUT")"
got=$(jq -r '.hosts[] | select(.reachable | not) | .url | sub(".*:"; "")' <<<"$OUT" | sort -n)
[ "$got" = "$(printf '%s\n' "${dead[@]}" | sort -n)" ] ||
	fail "a mix: the unreachable ones are not the dead ports"
jq_true "$OUT" '[.hosts[] | select(.reachable | not) | .error | test("Couldn.t connect|refused")] | all' ||
	fail "a mix: a dead port's error does not say why"
jq_true "$OUT" '[.hosts[] | select(.reachable) | .verdict] | unique | length == 1' ||
	fail "a mix: the live hosts differ"
ok "$N stub hosts and 20 dead ports: exit 1, exactly the dead ones unreachable, with the reason"
kill "$STUB_PID"
wait "$STUB_PID" 2>/dev/null

# --concurrency limits the hosts in flight: 6 hosts that each take 7 answers
# of 0.1 s, 2 at a time, cannot take less than 3 x 0.7 s (a lower bound only).
start_stub "$TW_TMP/answers.json" 6 --delay 0.1
OTHER_PIDS+=("$STUB_PID")
for i in 0 1 2 3 4 5; do echo "127.0.0.1:$((STUB_FIRST + i))"; done >"$TW_TMP/six.txt"
start=$(date +%s.%N)
fleet --timeout 30s --concurrency 2 --file "$TW_TMP/six.txt"
secs=$(echo "$(date +%s.%N) - $start" | bc)
[ "$RC" = 0 ] || fail "--concurrency 2: exit status $RC: $OUT $ERR"
[ "$(echo "$secs >= 2.0" | bc)" = 1 ] ||
	fail "--concurrency 2 took only $secs s: more than 2 hosts in flight"
ok "--concurrency 2: 6 slow hosts took ${secs}s (at least 3 rounds)"
kill "$STUB_PID"
wait "$STUB_PID" 2>/dev/null

# --- --token: sent as Authorization: Bearer ------------------------------------------------
printf 'fleet-token-0123456789abcdef\nsecond line ignored\n' >"$TW_TMP/token"
chmod 600 "$TW_TMP/token"
start_stub "$TW_TMP/answers.json" 3 --token fleet-token-0123456789abcdef \
	--headers "$TW_TMP/headers.jsonl"
OTHER_PIDS+=("$STUB_PID")
S0=127.0.0.1:$STUB_FIRST
S1=127.0.0.1:$((STUB_FIRST + 1))
fleet --timeout 20s --token "$TW_TMP/token" --token-over-http "$S0" "$S1"
[ "$RC" = 0 ] || fail "--token: exit status $RC: $OUT $ERR"
jq -e -s 'length >= 12 and all(.headers.authorization == "Bearer fleet-token-0123456789abcdef")' \
	"$TW_TMP/headers.jsonl" >/dev/null ||
	fail "--token: not every request had the header: $(head -3 "$TW_TMP/headers.jsonl")"
fleet "$S0"
[ "$RC" = 1 ] && row "$S0" |
	grep -q "HTTP error: GET /api/v1/status: HTTP 401: missing 'Authorization: Bearer TOKEN'" ||
	fail "no token: $OUT"
printf 'not-the-token-0123456789\n' >"$TW_TMP/wrong"
chmod 640 "$TW_TMP/wrong"
fleet --token "$TW_TMP/wrong" --token-over-http "$S0"
[ "$RC" = 1 ] && row "$S0" | grep -q "HTTP 401: wrong token" || fail "a wrong token: $OUT"
kill "$STUB_PID"
wait "$STUB_PID" 2>/dev/null
: >"$TW_TMP/empty-token"
chmod 600 "$TW_TMP/empty-token"
printf 'fleet-token-0123456789abcdef\n' >"$TW_TMP/public-token"
chmod 644 "$TW_TMP/public-token"
printf 'two words\n' >"$TW_TMP/space-token"
chmod 600 "$TW_TMP/space-token"
for t in empty-token:"first line is empty" public-token:"readable by everyone" \
	space-token:"no spaces" missing-token:"cannot read"; do
	fleet --token "$TW_TMP/${t%%:*}" "$S0"
	[ "$RC" = 2 ] && grep -q "${t#*:}" <<<"$ERR" || fail "--token ${t%%:*}: exit status $RC: $ERR"
done
ok "--token: every request carries 'Authorization: Bearer'; a missing or wrong one is named; bad token files exit 2"

# --- TLS: --cacert and --insecure against a daemon with a test certificate ----------------
if ! command -v openssl >/dev/null; then
	echo "openssl is not installed: TLS not tested"
else
	mkdir -p "$TW_TMP/creds"
	(cd "$TW_TMP/creds" &&
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
			-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout tls.key \
			-out tls.crt 2>/dev/null &&
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
			-subj /CN=other -keyout other.key -out other.crt 2>/dev/null) ||
		fail "openssl could not make a certificate"
	mkdir -p "$TW_TMP/tls"
	"$SEED" --db "$TW_TMP/tls/threadwatch.db" --days 2 --quiet --seed 21 || fail "twseed failed for tls"
	start_daemon tls --interval 1h --tls-cert "$TW_TMP/creds/tls.crt" --tls-key "$TW_TMP/creds/tls.key"
	FLEET_PIDS+=("$DPID")
	TLS=127.0.0.1:$PORT
	want=$(curl -sS --max-time 10 --cacert "$TW_TMP/creds/tls.crt" \
		"https://$TLS/api/v1/recommendation" | jq -r .verdict)
	[ -n "$want" ] && [ "$want" != null ] || fail "the TLS daemon gives no verdict to curl"
	for u in "https://$TLS" "$TLS"; do
		fleet --scheme https --cacert "$TW_TMP/creds/tls.crt" "$u"
		[ "$RC" = 0 ] || fail "--cacert $u: exit status $RC: $OUT $ERR"
		expect_cell "$u" VERDICT "$want"
		fleet --insecure --scheme https "$u"
		[ "$RC" = 0 ] || fail "--insecure $u: exit status $RC: $OUT $ERR"
		expect_cell "$u" VERDICT "$want"
	done
	# file_sd: __scheme__ picks https for one group; the other stays http.
	printf -- '- targets: [%s]\n  labels: {__scheme__: https, role: db}\n- targets: [%s]\n' \
		"$TLS" "$H1" >"$TW_TMP/tls.yml"
	fleet --cacert "$TW_TMP/creds/tls.crt" --file "$TW_TMP/tls.yml"
	[ "$RC" = 0 ] || fail "__scheme__ https next to plain http: exit status $RC: $OUT $ERR"
	expect_cell "$TLS" VERDICT "$want"
	expect_cell "$TLS" LABELS role=db
	expect_cell "$H1" VERDICT low
	fleet "https://$TLS"
	[ "$RC" = 1 ] && row "https://$TLS" | grep -qi "TLS error: .*certificate" ||
		fail "a self-signed daemon without --cacert: $OUT"
	fleet --cacert "$TW_TMP/creds/other.crt" "https://$TLS"
	[ "$RC" = 1 ] && row "https://$TLS" | grep -qi "TLS error: .*certificate" ||
		fail "--cacert with the wrong CA: $OUT"
	fleet --timeout 3s --cacert "$TW_TMP/creds/tls.crt" "$TLS"
	[ "$RC" = 1 ] || fail "HOST:PORT without --scheme https is plain HTTP: exit status $RC"
	# A scheme that does not match the port is named as such, not "unreachable".
	row "$TLS" | grep -q "no HTTP answer (an HTTPS port? try --scheme https): " ||
		fail "plain HTTP to the TLS port: $(row "$TLS")"
	fleet --timeout 3s --cacert "$TW_TMP/creds/tls.crt" "https://$H1"
	[ "$RC" = 1 ] && row "https://$H1" | grep -q "TLS error: " ||
		fail "HTTPS to a plain HTTP port: $(row "https://$H1")"
	fleet --json --timeout 3s --cacert "$TW_TMP/creds/tls.crt" "$TLS" "https://$H1"
	jq_true "$OUT" '[.hosts[].failure] == ["no HTTP answer (an HTTPS port? try --scheme https)", "TLS error"]' ||
		fail "--json: the TLS mismatches' failure: $OUT"
	for args in "--cacert $TW_TMP/creds/tls.crt --insecure $U1" "--cacert $TW_TMP/missing.crt $U1" \
		"--scheme ftp $U1" "--scheme"; do
		# shellcheck disable=SC2086
		fleet $args
		[ "$RC" = 2 ] || fail "fleet $args: exit status $RC, expected 2"
	done
	ok "TLS: --cacert and --insecure read a self-signed daemon (https://, --scheme https, __scheme__); an unknown CA is refused"
fi

# --- bad arguments ------------------------------------------------------------------
printf 'http://a:1 http://b:2\n' >"$TW_TMP/two.txt"
for args in "" "--bogus $U1" "--timeout 0 $U1" "--concurrency 0 $U1" "--concurrency x $U1" \
	"--token" "--insecure=1 $U1" "--timeout x $U1" "--json=yes $U1" \
	"ftp://127.0.0.1/" "http://a/?q=1" "--file $TW_TMP/missing.txt" "--file $TW_TMP/two.txt" \
	"--timeout" "--timeout 2h $U1" "--time 5 $U1"; do
	# shellcheck disable=SC2086
	fleet $args
	[ "$RC" = 2 ] || fail "fleet $args: exit status $RC, expected 2"
	grep -q "usage: threadwatch fleet\|threadwatch fleet:" <<<"$ERR" ||
		fail "fleet $args: no message: $ERR"
	[ -z "$OUT" ] || fail "fleet $args printed a report"
done
fleet --help
[ "$RC" = 0 ] && grep -q "usage: threadwatch fleet" <<<"$OUT" || fail "fleet --help"
fleet -h
[ "$RC" = 0 ] && grep -q "usage: threadwatch fleet" <<<"$OUT" || fail "fleet -h"
ok "bad arguments: exit 2 with a message; --help: exit 0"

stop_fleet
ok "the three daemons stopped cleanly"

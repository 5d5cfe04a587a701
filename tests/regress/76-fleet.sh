#!/usr/bin/env bash
# 76-fleet: `threadwatch fleet` against three seeded daemons (see
# lib-fleet.sh), a dead port, a port that never answers, a web server that
# is not threadwatchd and a stand-in daemon whose host endpoint fails.
# Every table cell and JSON field is checked against the daemon's own API;
# the exit status is 1 while any host cannot be read and 0 with only live
# hosts; bad arguments exit 2.
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
python3 - "$silent" "$TW_TMP/silent" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)  # never accepts: connections complete, nothing answers
time.sleep(60)
EOF
OTHER_PIDS+=($!)
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
wait_for python3 -c "import socket; socket.create_connection(('127.0.0.1', $silent))" ||
	fail "the silent listener did not start"
start=$(date +%s.%N)
fleet --timeout 1 "$U1" "127.0.0.1:$silent" "127.0.0.1:$web" "127.0.0.1:$broken"
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "$OUT"
[ "$RC" = 1 ] || fail "a silent host: exit status $RC, expected 1"
row "127.0.0.1:$silent" | grep -q "unreachable: no answer within 1 s" ||
	fail "the silent host's row: $(row "127.0.0.1:$silent")"
row "127.0.0.1:$web" | grep -q "unreachable: GET /api/v1/status: HTTP 404" ||
	fail "the web server's row: $(row "127.0.0.1:$web")"
row "127.0.0.1:$broken" | grep -q "  error: GET /api/v1/host: HTTP 500: disk on fire" ||
	fail "the broken daemon's row: $(row "127.0.0.1:$broken")"
expect_cell "$U1" VERDICT low
# The budget is per host and hosts are asked at once: far less than 2 budgets.
[ "$(echo "$secs < 3" | bc)" = 1 ] || fail "--timeout 1 took $secs s"
fleet --json "127.0.0.1:$silent" "127.0.0.1:$broken" --timeout 1
jq_true "$OUT" '.hosts_unreachable == 1 and .hosts_failed == 2 and .hosts[1].reachable' ||
	fail "--json: a broken daemon is reachable but failed: $OUT"
ok "a silent host times out after its own budget (${secs}s in all); a foreign server and a failing endpoint are named"

# --- bad arguments ------------------------------------------------------------------
printf 'http://a:1 http://b:2\n' >"$TW_TMP/two.txt"
for args in "" "--bogus $U1" "--timeout 0 $U1" "--timeout x $U1" "--json=yes $U1" \
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

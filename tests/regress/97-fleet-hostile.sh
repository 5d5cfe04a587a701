#!/usr/bin/env bash
# 97-fleet-hostile: `threadwatch fleet` against hosts that lie, served by a
# small Python server:
#  - escape sequences, C1 controls and newlines in the answers reach the
#    table as '?': no terminal title, no forged row;
#  - absurd integers (now_ms and t_ms at the ends of int64) make no
#    overflow (UBSan would say) and no crash;
#  - an endless answer is cut at 256 KiB and the CLI stays small;
#  - --token is not sent over plain HTTP unless --token-over-http;
#  - an explicit --scheme overrides a file_sd group's __scheme__.
set -u
. "$(dirname "$0")/lib.sh"
TW=$B/threadwatch
[ -x "$TW" ] || fail "\"$TW\" is not built"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
PORTF=$TW_TMP/port
cat >"$TW_TMP/hostile.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
I64 = 2**63 - 1
ANS = {
    "/api/v1/status": {"version": "9\u001b]0;pwned\u0007", "now_ms": I64, "last_cycle_ms": -I64 - 1,
                       "last_cycle_status": "ok\u009b2J", "cycle_running": False},
    "/api/v1/host": {"current": {"fingerprint": {"hostname": "evil\u001b]0;pwned\u0007host",
                                                 "kernel": "6.1\nFORGED ROW ok\u202e", "glibc": "2.36\u2066\u007f"}}},
    "/api/v1/recommendation": {"verdict": "low\r", "confidence": "high\u0085",
                               "inputs": {"failed_probes": [{"probe": "ctxsw", "kind": "error",
                                          "reason": "gone\u001b]0;pwned\u0007\nFORGED\u202e"}]}},
    "/api/v1/events": {"events": [{"metric": "m", "t_ms": -I64 - 1, "message": "x"}], "total": 1},
}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        path = self.path.split("?")[0]
        if self.headers.get("Authorization"):
            open(sys.argv[2], "a").write("token seen on %s\n" % path)
        if self.server.server_port == int(sys.argv[3]) and path == "/api/v1/host":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                self.wfile.write(b'{"current": {"fingerprint": {"hostname": "')
                for _ in range(4096):  # 64 MiB, never finished
                    self.wfile.write(b"a" * 16384)
            except OSError:
                pass
            return
        body = json.dumps(ANS.get(path, {"error": {"status": 404, "message": "no"}})).encode()
        self.send_response(200 if path in ANS else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
a = ThreadingHTTPServer(("127.0.0.1", 0), H)
b = ThreadingHTTPServer(("127.0.0.1", 0), H)
sys.argv[3] = str(b.server_port)
open(sys.argv[1] + ".tmp", "w").write("%d %d\n" % (a.server_port, b.server_port))
import os, threading
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Thread(target=b.serve_forever, daemon=True).start()
a.serve_forever()
PY
python3 "$TW_TMP/hostile.py" "$PORTF" "$TW_TMP/seen" 0 &
SRV=$!
trap 'kill $SRV 2>/dev/null' EXIT
wait_for test -s "$PORTF" || fail "the hostile server did not start"
read -r P1 P2 <"$PORTF"

out=$(/usr/bin/time -f '%M' -o "$TW_TMP/rss" "$TW" fleet --timeout 10s \
	"http://127.0.0.1:$P1" "http://127.0.0.1:$P2" 2>&1)
echo "$out" | cat -v
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$out" || LC_ALL=C grep -q $'\xc2[\x80-\x9f]' <<<"$out"; then
	fail "control characters reached the terminal"
fi
grep -q '^FORGED' <<<"$out" && fail "a newline in kernel forged a row"
[ "$(wc -l <<<"$out")" = 3 ] || fail "not a title and two rows: $(wc -l <<<"$out") lines"
grep -q 'evil?\]0;pwned?host' <<<"$out" || fail "the hostname is not shown with '?' for the controls"
ok "controls in every cell are '?': $(grep -o 'evil[^ ]*' <<<"$out")"
# Bidi controls (U+202E, U+2066) reorder what follows on the line.
bidi() { LC_ALL=C grep -q $'\xe2\x80[\x8e\x8f\xaa-\xae]\|\xe2\x81[\xa6-\xa9]' <<<"$1"; }
bidi "$out" && fail "a bidi control reached the table"
# --by prints the hosts' own values as cohort names: the same rule.
for field in hostname kernel glibc; do
	by=$("$TW" fleet --timeout 10s --by "$field" "http://127.0.0.1:$P1" 2>&1)
	echo "$by" | cat -v
	if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$by" || LC_ALL=C grep -q $'\xc2[\x80-\x9f]' <<<"$by" ||
		bidi "$by"; then
		fail "fleet --by $field: control characters reached the terminal"
	fi
	grep -q '^FORGED' <<<"$by" && fail "fleet --by $field: a newline forged a row"
done
ok "fleet --by hostname, kernel and glibc print the values with '?' for controls and bidi marks"
grep -q "larger than 256 KiB" <<<"$out" || fail "the endless answer was not cut at 256 KiB"
rss=$(tail -n 1 "$TW_TMP/rss")
[ "$rss" -lt 65536 ] || fail "the CLI reached $rss kB RSS"
ok "an endless answer is cut at 256 KiB; the CLI peaked at $rss kB"

# recommend --from prints a failed probe's reason, as the daemon wrote it,
# in its text: the same rule
rec=$("$TW" recommend --from "http://127.0.0.1:$P1" 2>&1)
echo "$rec" | cat -v
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$rec" || bidi "$rec"; then
	fail "recommend --from: control characters reached the terminal"
fi
grep -q 'gone?\]0;pwned?' <<<"$rec" || fail "recommend --from does not show the reason with '?': $rec"
grep -q '^FORGED' <<<"$rec" && fail "recommend --from: a newline in a reason forged a line"
ok "recommend --from shows a daemon's failed-probe reason with '?' for its controls"

printf 'tw-fleet-token-0123456789abcdef\n' >"$TW_TMP/token"
chmod 600 "$TW_TMP/token"
out=$("$TW" fleet --timeout 10s --token "$TW_TMP/token" "http://127.0.0.1:$P1" 2>&1)
[ ! -e "$TW_TMP/seen" ] || fail "the token went over plain HTTP: $(cat "$TW_TMP/seen")"
grep -q "not sending the token over plain HTTP" <<<"$out" || fail "no word on the withheld token: $out"
"$TW" fleet --timeout 10s --token "$TW_TMP/token" --token-over-http "http://127.0.0.1:$P1" >/dev/null 2>&1
[ -e "$TW_TMP/seen" ] || fail "--token-over-http did not send the token"
ok "--token goes over plain HTTP only with --token-over-http"

printf -- '- targets: ["127.0.0.1:%s"]\n  labels: {__scheme__: http}\n' "$P1" >"$TW_TMP/sd.yml"
out=$("$TW" fleet --json --timeout 5s --scheme https --insecure --file "$TW_TMP/sd.yml" 2>&1)
jq -e '.hosts[0].error | test("SSL|TLS|ssl|tls|wrong version")' <<<"$out" >/dev/null ||
	jq -e '.. | objects | select(has("error")) | .error | strings | test("SSL|TLS|ssl|tls")' <<<"$out" >/dev/null ||
	fail "--scheme https did not override __scheme__ http: $out"
ok "--scheme https overrides a file_sd __scheme__ http (the plain server fails the TLS handshake)"

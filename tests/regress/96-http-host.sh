#!/usr/bin/env bash
# 96-http-host: what the HTTP server answers and for how long it waits.
#  - DNS rebinding: a Host that is not localhost, a loopback address, the
#    listen address or in allowed_hosts gets 421 (the page of another site
#    that reached 127.0.0.1 through its own name reads nothing).
#  - Strict framing: HTTP/1.1 without Host, a doubled Host, Content-Length
#    with Transfer-Encoding (the pipelined request behind it is not
#    served) are 400.
#  - Slow clients: 64 loopback connections that send a header line every
#    second neither lock /healthz out (loopback is not held to
#    per_ip_limit) nor stay longer than http_header_timeout.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
fake_builtins "$TW_TMP/probes"
start_daemon h --interval 1h --allowed-hosts "tw.example, Other.Example" \
	--http-header-timeout 3s --http-timeout 30s
wait_cycle 1

code_for() { http_code /api/v1/host -H "Host: $1"; }
for h in rebind.attacker.example "rebind.attacker.example:$PORT" localhost.attacker.example \
	"127.0.0.1.nip.io:$PORT" "tw.example.evil:$PORT"; do
	c=$(code_for "$h")
	[ "$c" = 421 ] || fail "Host: $h got $c, not 421"
done
body=$(api /api/v1/host -H "Host: rebind.attacker.example")
! grep -q '"fingerprint"' <<<"$body" || fail "the 421 answer carries the fingerprint: $body"
for h in localhost "localhost:$PORT" "127.0.0.1:$PORT" 127.0.0.2 "[::1]:$PORT" \
	"tw.example:$PORT" OTHER.example LOCALHOST.; do
	c=$(code_for "$h")
	[ "$c" = 200 ] || fail "Host: $h got $c, not 200"
done
ok "Host: 421 for rebinding names, 200 for localhost, loopback addresses and allowed_hosts"

python3 - "$PORT" <<'PY' || fail "strict framing (see above)"
import socket, sys
port = int(sys.argv[1])
def ask(raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(raw)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except socket.timeout:
        pass
    s.close()
    return out
bad = 0
cases = {
    "HTTP/1.1 without Host": b"GET /api/v1/host HTTP/1.1\r\nConnection: close\r\n\r\n",
    "two Host headers": b"GET /api/v1/host HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    "Content-Length with Transfer-Encoding": b"POST /api/v1/runs HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/v1/host HTTP/1.1\r\nHost: localhost\r\n\r\n",
}
for name, raw in cases.items():
    out = ask(raw)
    first = out.split(b"\r\n", 1)[0]
    served = out.count(b"HTTP/1.1 200")
    if not first.startswith(b"HTTP/1.1 400") or served:
        print("FAIL: %s: %r (%d answers 200)" % (name, first, served))
        bad += 1
    else:
        print("ok: %s: %s" % (name, first.decode()))
sys.exit(1 if bad else 0)
PY
ok "strict framing: 400 without Host, for a doubled Host and for Content-Length with Transfer-Encoding"

python3 - "$PORT" <<'PY' || fail "slow clients (see above)"
import socket, sys, time, urllib.request
port = int(sys.argv[1])
slow = []
for i in range(64):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
    slow.append(s)
def healthz():
    t = time.monotonic()
    with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=5) as r:
        return r.status, time.monotonic() - t
st, took = healthz()
print("ok: /healthz %d in %.2f s beside 64 slow clients" % (st, took))
# Keep trickling a header line a second; the deadline is 3 s.
closed = set()
deadline = time.monotonic() + 15
while time.monotonic() < deadline and len(closed) < len(slow):
    for i, s in enumerate(slow):
        if i in closed:
            continue
        try:
            s.sendall(b"X-Slow: %d\r\n" % i)
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed.add(i)
            except BlockingIOError:
                pass
            finally:
                s.setblocking(True)
        except OSError:
            closed.add(i)
    time.sleep(1)
took = 15 - (deadline - time.monotonic())
if len(closed) < len(slow):
    print("FAIL: %d of 64 slow clients still open after %.0f s (http_header_timeout 3s)" % (len(slow) - len(closed), took))
    sys.exit(1)
print("ok: all 64 slow clients closed within %.1f s" % took)
st, took = healthz()
print("ok: /healthz %d after" % st)
PY
ok "slow clients: /healthz answers beside 64 of them, and they are closed after http_header_timeout"
stop_daemon
# Defence in depth (item 11): every answer carries a Content-Security-Policy.
start_daemon csp --interval 1h
for p in / /app.js /api/v1/status /nope; do
	csp=$(curl -sS -D - -o /dev/null --max-time 10 "http://127.0.0.1:$PORT$p" | tr -d '\r' |
		sed -n 's/^content-security-policy: //Ip')
	grep -q "default-src 'self'" <<<"$csp" && grep -q "frame-ancestors 'none'" <<<"$csp" ||
		fail "GET $p: Content-Security-Policy '$csp'"
done
ok "Content-Security-Policy on pages, scripts, API answers and errors: $csp"
stop_daemon

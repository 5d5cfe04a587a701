#!/usr/bin/env python3
"""http_framing: request framing and abandoned requests against a live
threadwatchd, from raw sockets on loopback.

usage: http_framing.py PORT TOKEN [--flood-seconds N]

Each case sends bytes, reads until the server closes (or a time limit),
and checks the status lines it got: smuggling attempts get 400 and a close
before the bytes meant as a body can run as a second request; unknown
transfer codings 501; a target over the limits 414 at once; an
absolute-form target whose authority is not ours 421; a body whose client
closed (FIN) frees its connection within 2 s. Then a flood of abandoned
bodies, 20 a second, while /healthz must answer within 2 s throughout.
Prints one line per case; exits 1 when any fails.
"""
import socket
import sys
import threading
import time

HOST = b"Host: localhost\r\n"


def exchange(port, data, fin=False, limit=6.0):
    """(closed, status lines, seconds until the close or the limit)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(limit)
    start = time.monotonic()
    buf = b""
    closed = False
    try:
        s.sendall(data)
        if fin:
            s.shutdown(socket.SHUT_WR)
        while True:
            b = s.recv(65536)
            if not b:
                closed = True
                break
            buf += b
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    finally:
        s.close()
    lines = [l.decode("latin-1") for l in buf.split(b"\r\n") if l.startswith(b"HTTP/1.")]
    return closed, [l.split(" ")[1] for l in lines], round(time.monotonic() - start, 2)


def cases(token):
    smug = b"GET /api/v1/host HTTP/1.1\r\n" + HOST + b"\r\n"
    post = b"POST /api/v1/runs HTTP/1.1\r\n" + HOST
    auth = b"Authorization: Bearer " + token.encode() + b"\r\n"
    n = len(smug)
    return [
        # name, bytes, FIN after them, the statuses wanted, longest wait
        ("a body abandoned with FIN", post + b"Content-Length: 4096\r\n\r\nab", True, [], 2.0),
        ("60,000 '&' in the query", b"GET /api/v1/runs?" + b"&" * 60000 + b" HTTP/1.1\r\n" + HOST + b"\r\n",
         False, ["414"], 2.0),
        ("5,000 parameters", b"GET /api/v1/runs?" + b"&".join(b"a%d=1" % i for i in range(5000)) +
         b" HTTP/1.1\r\n" + HOST + b"\r\n", False, ["414"], 2.0),
        ("Transfer-Encoding: xchunked", post + b"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", False, ["400"], 2.0),
        ("Transfer-Encoding: identity", post + b"Transfer-Encoding: identity\r\n\r\n", False, ["400"], 2.0),
        ("Transfer-Encoding: gzip, chunked", post + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
         False, ["501"], 2.0),
        ("Transfer-Encoding: chunked, identity", post + b"Transfer-Encoding: chunked, identity\r\n\r\n",
         False, ["400"], 2.0),
        ("Content-Length with a space before the colon",
         post + b"Content-Length : %d\r\n\r\n" % n + smug, False, ["400"], 2.0),
        ("a second Content-Length hidden that way",
         post + b"Content-Length: 0\r\nContent-Length : %d\r\n\r\n" % n + smug, False, ["400"], 2.0),
        ("Content-Length with Transfer-Encoding : chunked",
         post + b"Content-Length: %d\r\nTransfer-Encoding : chunked\r\n\r\n" % n + smug, False, ["400"], 2.0),
        ("two Transfer-Encoding headers",
         post + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n" + smug,
         False, ["400"], 2.0),
        ("Host : evil beside Host: localhost",
         b"GET /api/v1/host HTTP/1.1\r\n" + HOST + b"Host : evil\r\n\r\n", False, ["400"], 2.0),
        ("an absolute-form target of another site",
         b"GET http://evil.example/api/v1/host HTTP/1.1\r\n" + HOST + b"\r\n", False, ["421"], 2.0),
        ("an absolute-form target of ours",
         b"GET http://localhost/healthz HTTP/1.1\r\n" + HOST + b"Connection: close\r\n\r\n", False, ["200"], 2.0),
        ("a chunked POST still works",
         post + auth + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n", False,
         ["202", "409", "429"], 5.0),
    ]


def healthz_ms(port):
    start = time.monotonic()
    closed, statuses, _ = exchange(port, b"GET /healthz HTTP/1.1\r\n" + HOST + b"Connection: close\r\n\r\n",
                                   limit=5.0)
    return (time.monotonic() - start) * 1000 if statuses == ["200"] else None


def flood(port, seconds):
    """20 abandoned bodies a second for `seconds`, /healthz probed every
    half second; returns the worst /healthz time (None: a failure)."""
    stop = time.monotonic() + seconds
    socks = []

    def abandon():
        try:
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /api/v1/runs HTTP/1.1\r\n" + HOST + b"Content-Length: 4096\r\n\r\nab")
            s.shutdown(socket.SHUT_WR)
            socks.append(s)
        except OSError:
            pass

    worst = 0.0
    next_probe = time.monotonic()
    while time.monotonic() < stop:
        for _ in range(2):
            threading.Thread(target=abandon, daemon=True).start()
        if time.monotonic() >= next_probe:
            ms = healthz_ms(port)
            if ms is None:
                return None, len(socks)
            worst = max(worst, ms)
            next_probe += 0.5
        time.sleep(0.1)
    for s in socks:
        s.close()
    return worst, len(socks)


def main():
    port, token = int(sys.argv[1]), sys.argv[2]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--flood-seconds" else 15.0
    bad = 0
    for name, data, fin, want, limit in cases(token):
        closed, got, secs = exchange(port, data, fin)
        good = closed and secs <= limit and (got == want or (len(want) > 1 and len(got) == 1 and got[0] in want))
        print("%s: %s: %s, %s after %.2f s" % ("ok" if good else "FAIL", name, got or "no answer",
                                               "closed" if closed else "still open", secs))
        bad += not good
    worst, n = flood(port, seconds)
    good = worst is not None and worst <= 2000
    print("%s: %d abandoned bodies over %.0f s (20 a second): /healthz worst %s" %
          ("ok" if good else "FAIL", n, seconds, "no answer" if worst is None else "%.0f ms" % worst))
    bad += not good
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

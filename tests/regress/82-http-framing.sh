#!/usr/bin/env bash
# 82-http-framing: request framing and abandoned requests, from raw sockets
# on loopback (tests/regress/http_framing.py): a
# body whose client closed frees its connection at once; a target with
# thousands of parameters gets 414 at once; an unknown transfer coding 501;
# smuggled framing (whitespace before a colon, a hidden second
# Content-Length, Transfer-Encoding twice or beside Content-Length) 400 and
# a close before the would-be second request runs; an absolute-form target
# is checked against allowed_hosts (421). Then abandoned bodies, 20 a second
# for FRAMING_FLOOD_SECONDS (20, past what 256 connections held for 30 s
# would allow; make soak: 60), while /healthz answers
# within 2 s throughout.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
fake_builtins "$TW_TMP/probes"
start_daemon a --interval 1h --token "$TOKEN"
wait_cycle 1
python3 "$SRC/tests/regress/http_framing.py" "$PORT" "$TOKEN" --flood-seconds "${FRAMING_FLOOD_SECONDS:-20}"
rc=$?
kill -0 "$DPID" 2>/dev/null || fail "threadwatchd died: $(tail -n 20 "$TW_TMP/a.log")"
[ "$rc" = 0 ] || fail "some requests were framed or held wrongly (above)"
[ "$(http_code /healthz)" = 200 ] || fail "/healthz after the flood"
ok "framing refused, abandoned bodies freed, /healthz served throughout"
stop_daemon

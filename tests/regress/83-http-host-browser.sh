#!/usr/bin/env bash
# 83-http-host-browser: the Host allow-list of 96-http-host against a real
# DNS-rebinding page in Debian's chromium (tests/browser/rebind.test.js).
# Chromium resolves rebind.test to 127.0.0.1, as an attacker's rebound name
# would; the attacker's page is a static file served by python3 -m
# http.server on a port of its own. A fetch, a frame and a navigation to
# http://rebind.test:PORT/ get 421 and the page's script reads no host
# fingerprint, while http://127.0.0.1:PORT/ still serves the dashboard and
# the API. Skips (77) when chromium, node or python3 is missing.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
. "$SRC/tests/regress/lib-browser.sh"
browser_tools
fake_builtins "$TW_TMP/probes"
start_daemon h --interval 1h
wait_cycle 1

# The attacker's site: one static page, on its own port.
mkdir -p "$TW_TMP/site"
printf '<!doctype html><title>attacker</title><p>nothing to see\n' >"$TW_TMP/site/attack.html"
APORT=$(free_port)
python3 -m http.server "$APORT" --bind 127.0.0.1 --directory "$TW_TMP/site" \
	>"$TW_TMP/site.log" 2>&1 &
SITE_PID=$!
wait_for curl -sf -o /dev/null "http://127.0.0.1:$APORT/attack.html" ||
	fail "the attacker's page server did not start: $(cat "$TW_TMP/site.log")"

node "$BROWSER_DIR/rebind.test.js" --port "$PORT" --attacker-port "$APORT"
rc=$?
kill "$SITE_PID"
wait "$SITE_PID" 2>/dev/null
stop_daemon
[ "$rc" = 0 ] || fail "the rebinding page in chromium (see above)"
ok "chromium: 421 for a rebound name (fetch, frame, navigation; no fingerprint read); 127.0.0.1 served"

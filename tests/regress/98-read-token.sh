#!/usr/bin/env bash
# 98-read-token: read_token closes every route but /healthz.
#  - Without the token: 401 problem+json with WWW-Authenticate on the API,
#    /metrics, the page and its files; /healthz stays 200.
#  - With "Authorization: Bearer TOKEN": 200. A wrong token: 401.
#  - The dashboard's way in: GET /?token=TOKEN sets an HttpOnly,
#    SameSite=Strict cookie (not the token itself) and redirects to /; with
#    that cookie the page, its script and the API answer.
#  - read_token_file, and a warning at start when a secret file
#    (read_token_file, tls_key, ...) is readable by group or others.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
fake_builtins "$TW_TMP/probes"
RTOKEN='tw-read-token-0123456789abcdef'
closed="/api/v1/host /api/v1/status /api/v1/runs /metrics / /app.js /api/v1/openapi.json"

check_read_token() {
	local p code jar=$TW_TMP/jar
	[ "$(http_code /healthz)" = 200 ] || fail "/healthz is not open"
	for p in $closed; do
		code=$(curl -s -o "$TW_TMP/body" -D "$TW_TMP/head" -w '%{http_code}' --max-time 10 \
			"http://127.0.0.1:$PORT$p")
		[ "$code" = 401 ] || fail "$p without the token: $code"
		grep -qi '^content-type: application/problem+json' "$TW_TMP/head" ||
			fail "$p: 401 is not problem+json: $(cat "$TW_TMP/head")"
		grep -qi '^www-authenticate: Bearer' "$TW_TMP/head" || fail "$p: no WWW-Authenticate"
		jq -e '.status == 401' "$TW_TMP/body" >/dev/null || fail "$p: $(cat "$TW_TMP/body")"
		[ "$(http_code "$p" -H "Authorization: Bearer ${RTOKEN}x")" = 401 ] ||
			fail "$p with a wrong token was not 401"
		[ "$(http_code "$p" -H "Authorization: Bearer $RTOKEN")" = 200 ] ||
			fail "$p with the token was not 200"
	done
	[ "$(http_code "/?token=wrong-token-0123456789")" = 401 ] || fail "/?token=wrong was not 401"
	rm -f "$jar"
	code=$(http_code "/?token=$RTOKEN" -c "$jar" -D "$TW_TMP/head")
	[ "$code" = 303 ] || fail "/?token= gave $code"
	grep -qi '^location: /\s*$' "$TW_TMP/head" || fail "no redirect to /: $(cat "$TW_TMP/head")"
	grep -i '^set-cookie:' "$TW_TMP/head" | grep -i httponly | grep -qi 'samesite=strict' ||
		fail "the cookie is not HttpOnly and SameSite=Strict: $(cat "$TW_TMP/head")"
	grep -q "$RTOKEN" "$TW_TMP/head" && fail "the cookie holds the token itself"
	# A lifetime, and a MAC rather than the token in hex.
	grep -i '^set-cookie:' "$TW_TMP/head" | grep -qi 'max-age=43200' ||
		fail "the cookie has no Max-Age of 12 h: $(cat "$TW_TMP/head")"
	grep -qi "$(printf %s "$RTOKEN" | od -An -tx1 | tr -d ' \n')" "$TW_TMP/head" &&
		fail "the cookie is the token in hex"
	for p in / /app.js /api/v1/status; do
		[ "$(http_code "$p" -b "$jar")" = 200 ] || fail "$p with the cookie was not 200"
	done
	# A cookie made the same way but expired an hour ago (Python's hmac): 401.
	old=$(python3 -c 'import hmac, hashlib, sys, time
e = int(time.time()) - 3600
print("%d.%s" % (e, hmac.new(sys.argv[1].encode(), b"threadwatch read cookie v2 %d" % e, hashlib.sha256).hexdigest()))' "$RTOKEN")
	[ "$(http_code /api/v1/status -b "tw_read=$old")" = 401 ] || fail "an expired cookie was taken"
	fresh=$(python3 -c 'import hmac, hashlib, sys, time
e = int(time.time()) + 600
print("%d.%s" % (e, hmac.new(sys.argv[1].encode(), b"threadwatch read cookie v2 %d" % e, hashlib.sha256).hexdigest()))' "$RTOKEN")
	[ "$(http_code /api/v1/status -b "tw_read=$fresh")" = 200 ] || fail "a fresh cookie made by HMAC-SHA256 was refused"
}

start_daemon tok --interval 1h --read-token "$RTOKEN"
check_read_token
stop_daemon
grep -q 'readable by group or others' "$TW_TMP/tok.log" && fail "a warning without secret files"
# A token on the command line is in /proc/PID/cmdline for every user.
grep -q 'read_token was given on the command line (--read[-_]token): every local user can read it with ps; put it in read_token_file' \
	"$TW_TMP/tok.log" || fail "no warning for --read-token on the command line: $(cat "$TW_TMP/tok.log")"
ok "read_token: 401 problem+json without it or with a wrong one on $closed; 200 with it;" \
	"/healthz open; GET /?token= gives an HttpOnly SameSite=Strict cookie (an HMAC of its expiry, Max-Age 12 h) that opens the dashboard, expired it does not"

mkdir -p "$TW_TMP/creds"
printf '%s\n' "$RTOKEN" >"$TW_TMP/creds/read-token"
chmod 644 "$TW_TMP/creds/read-token"
start_daemon tokfile --interval 1h --read-token-file "$TW_TMP/creds/read-token"
check_read_token
stop_daemon
grep -q "read_token_file \"$TW_TMP/creds/read-token\" is readable by group or others (mode 0644)" \
	"$TW_TMP/tokfile.log" || fail "no warning for a 0644 read_token_file: $(cat "$TW_TMP/tokfile.log")"
chmod 600 "$TW_TMP/creds/read-token"
start_daemon tokfile600 --interval 1h --read-token-file "$TW_TMP/creds/read-token"
stop_daemon
grep -q 'readable by group or others' "$TW_TMP/tokfile600.log" &&
	fail "a warning for a 0600 file: $(cat "$TW_TMP/tokfile600.log")"
grep -q 'given on the command line' "$TW_TMP/tokfile600.log" &&
	fail "a command-line warning for a token file: $(cat "$TW_TMP/tokfile600.log")"
ok "read_token_file works; a 0644 one is warned about at start, a 0600 one is not; --read-token is warned about"

#!/usr/bin/env bash
# 95-security: who may talk to threadwatchd and what reaches SQLite.
#  - The default address is 127.0.0.1: the configuration says so and a
#    daemon started without one listens on loopback only (ss), refusing a
#    connection to the host's other addresses.
#  - POST /api/v1/runs is off (403) without a token; with one, a missing,
#    wrong, shorter or longer token is 401 and the right one 202, also when
#    the token comes from a systemd credential ($CREDENTIALS_DIRECTORY).
#    A second POST within trigger_min_interval is 429 with Retry-After.
#    The token is never compared with strcmp/memcmp (daemon/http.c, http_auth.c).
#  - HTTPS through libmicrohttpd and GnuTLS with a self-signed certificate
#    (openssl), the key given as a file and as a systemd credential: curl
#    --cacert works, plain HTTP on that port gets no answer, a key that does
#    not match the certificate is refused at start.
#  - No SQL is built by pasting strings: only the store's parts
#    (daemon/store*.c, daemon/storep.h) call SQLite, each checked on its
#    own; every statement comes from the constant table in store.c, none of
#    them has a positional parameter, no value is bound by position, no
#    printf-style call formats SQL, and hostile text from a probe is stored
#    and read back verbatim.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh"
for p in $TW_BUILTINS; do rich_probe "$TW_TMP/probes" "$p"; done

# --- default address -----------------------------------------------------
def=$("$TWD" --check-config --config "$TW_TMP/empty.conf" 2>&1 | grep -E '^listen_address *=')
grep -q '127\.0\.0\.1' <<<"$def" || fail "the default listen_address is not 127.0.0.1: $def"
start_daemon addr --interval 1h
listen=$(ss -Hltnp | grep "pid=$DPID," | awk '{print $4}')
[ "$listen" = "127.0.0.1:$PORT" ] || fail "the daemon listens on: $listen"
refused_on=""
for ip in $(hostname -I 2>/dev/null); do
	case $ip in 127.* | ::1) continue ;; *:*) url="http://[$ip]:$PORT/healthz" ;;
	*) url="http://$ip:$PORT/healthz" ;; esac
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$url")
	[ "$code" = 000 ] || fail "$url answered $code"
	refused_on="$refused_on $ip"
done
ok "default address: $def; listening on $listen only; refused on${refused_on:- (no other address)}"

# --- the POST token ------------------------------------------------------
code=$(curl -s -o "$TW_TMP/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
	"http://127.0.0.1:$PORT/api/v1/runs")
[ "$code" = 403 ] && jq -e '.error.message' "$TW_TMP/body" >/dev/null ||
	fail "POST without a configured token: $code $(cat "$TW_TMP/body")"
stop_daemon
post_code() { http_code /api/v1/runs -X POST "$@"; }
check_tokens() {
	local t
	wait_cycle 1 # the start cycle: a POST during it would be 409
	[ "$(post_code)" = 401 ] || fail "POST without Authorization was not 401"
	for t in "wrong-token-wrong-token" "${TOKEN%?}" "${TOKEN}x" "x$TOKEN" "${TOKEN^^}" ""; do
		[ "$(post_code -H "Authorization: Bearer $t")" = 401 ] || fail "token \"$t\" was not 401"
	done
	[ "$(post_code -H "Authorization: Basic $TOKEN")" = 401 ] || fail "Basic was not 401"
	[ "$(post_code -H "Authorization: Bearer $TOKEN")" = 202 ] || fail "the right token was not 202"
}
start_daemon tok --interval 1h --token "$TOKEN" --trigger-min-interval 1h
check_tokens
# A second cycle asked for within trigger_min_interval: 429, Retry-After.
code=$(curl -s -o "$TW_TMP/body" -D "$TW_TMP/head" -w '%{http_code}' --max-time 10 -X POST \
	-H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/runs")
[ "$code" = 429 ] && grep -qiE '^retry-after: [0-9]+' "$TW_TMP/head" ||
	fail "a POST within trigger_min_interval: $code $(cat "$TW_TMP/head" "$TW_TMP/body")"
stop_daemon
mkdir -p "$TW_TMP/creds"
printf '%s\n' "$TOKEN" >"$TW_TMP/creds/tw-token"
DAEMON_ENV=(CREDENTIALS_DIRECTORY="$TW_TMP/creds")
start_daemon cred --interval 1h --token-file tw-token
check_tokens
stop_daemon
DAEMON_ENV=()
cmp=$(grep -nE '(strn?(case)?cmp|memcmp|bcmp|strcoll)[[:space:]]*\([^)]*token' "$SRC/daemon/http.c" "$SRC/daemon/http_auth.c")
[ -z "$cmp" ] || fail "daemon/http*.c compare the token with a short-circuiting call: $cmp"
ok "POST: 403 with no token configured; 401 for 8 bad tokens and 202 for the right one," \
	"from --token and from the credential \$CREDENTIALS_DIRECTORY/tw-token"

# --- TLS -----------------------------------------------------------------
if ! command -v openssl >/dev/null; then
	echo "openssl is not installed: TLS not tested"
else
	cd "$TW_TMP/creds" || fail "cd"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout tls.key \
		-out tls.crt 2>/dev/null || fail "openssl could not make a certificate"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=other -keyout other.key -out other.crt 2>/dev/null || fail "openssl"
	cd - >/dev/null || fail "cd"
	tls_check() {
		local body i
		# Over HTTPS, until the start cycle is over.
		for i in $(seq 1 300); do
			body=$(curl -sS --max-time 10 --cacert "$TW_TMP/creds/tls.crt" \
				"https://127.0.0.1:$PORT/api/v1/status") || fail "HTTPS failed"
			jq -e '.last_cycle.id and .cycle_running == false' <<<"$body" >/dev/null && break
			sleep 0.1
		done
		jq -e .version <<<"$body" >/dev/null || fail "HTTPS status: $body"
		[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert \
			"$TW_TMP/creds/tls.crt" -X POST -H "Authorization: Bearer $TOKEN" \
			"https://127.0.0.1:$PORT/api/v1/runs")" = 202 ] || fail "POST over HTTPS"
		curl -s --max-time 10 "https://127.0.0.1:$PORT/healthz" >/dev/null &&
			fail "HTTPS with an unknown CA was accepted by curl"
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PORT/healthz")
		[ "$code" = 000 ] || fail "plain HTTP on the HTTPS port answered $code"
	}
	start_daemon tls --interval 1h --token "$TOKEN" --tls-cert "$TW_TMP/creds/tls.crt" \
		--tls-key "$TW_TMP/creds/tls.key"
	tls_check
	stop_daemon
	DAEMON_ENV=(CREDENTIALS_DIRECTORY="$TW_TMP/creds")
	start_daemon tlscred --interval 1h --token "$TOKEN" --tls-cert tls.crt --tls-key tls.key
	tls_check
	stop_daemon
	DAEMON_ENV=()
	out=$(timeout 20 "$TWD" --foreground --config "$TW_TMP/empty.conf" --state-dir "$TW_TMP/bad" \
		--port 0 --probe-dir "$TW_TMP/probes" --tls-cert "$TW_TMP/creds/tls.crt" \
		--tls-key "$TW_TMP/creds/other.key" 2>&1)
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a mismatched key: exit $rc: $out"
	ok "HTTPS: curl --cacert works (GET, POST 202), an unknown CA fails, plain HTTP gets" \
		"no answer; key as a file and as a credential; a mismatched key: exit $rc: $out"

	# /metrics behind TLS and a bearer token (the remote-scrape set-up of
	# doc/fleet.md): 401 without or with a wrong token, the rest of the API open,
	# and a real Prometheus scrapes it with a CA file and a credentials file.
	MTOKEN=tw-metrics-token-0123456789abcdef
	printf '%s\n' "$MTOKEN" >"$TW_TMP/creds/tw-metrics-token"
	DAEMON_ENV=(CREDENTIALS_DIRECTORY="$TW_TMP/creds")
	start_daemon mtok --interval 1h --tls-cert tls.crt --tls-key tls.key \
		--metrics-token-file tw-metrics-token
	m() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$TW_TMP/creds/tls.crt" \
		"$@" "https://127.0.0.1:$PORT/metrics"; }
	[ "$(m)" = 401 ] || fail "/metrics without a token: $(m)"
	[ "$(m -H "Authorization: Bearer wrong-token-0123456789")" = 401 ] || fail "wrong metrics token"
	[ "$(m -H "Authorization: Bearer $MTOKEN")" = 200 ] || fail "right metrics token"
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$TW_TMP/creds/tls.crt" \
		"https://127.0.0.1:$PORT/api/v1/status")" = 200 ] || fail "the API should stay open"
	if command -v prometheus >/dev/null; then
		pport=$(free_port)
		cat >"$TW_TMP/prom.yml" <<PROM
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: threadwatch
    scheme: https
    tls_config: {ca_file: "$TW_TMP/creds/tls.crt"}
    authorization: {credentials_file: "$TW_TMP/creds/tw-metrics-token"}
    static_configs: [{targets: ["127.0.0.1:$PORT"]}]
PROM
		prometheus --config.file="$TW_TMP/prom.yml" --storage.tsdb.path="$TW_TMP/promdb" \
			--web.listen-address="127.0.0.1:$pport" --log.level=warn >"$TW_TMP/prom.log" 2>&1 &
		ppid=$!
		up=""
		for i in $(seq 1 150); do
			up=$(curl -s "http://127.0.0.1:$pport/api/v1/query?query=up" |
				jq -r '.data.result[0].value[1] // empty' 2>/dev/null)
			[ "$up" = 1 ] && break
			sleep 0.2
		done
		kill "$ppid"
		wait "$ppid" 2>/dev/null
		[ "$up" = 1 ] || fail "Prometheus could not scrape /metrics over TLS with the token: $(cat "$TW_TMP/prom.log")"
	fi
	stop_daemon
	DAEMON_ENV=()
	ok "/metrics with metrics_token_file over HTTPS: 401 without or with a wrong token, 200" \
		"with it, the API still open; Prometheus scrapes it (tls_config, credentials_file)"
fi

# --- SQL only through bound parameters -------------------------------------
# The store's parts (daemon/store*.c and their private daemon/storep.h) are
# the only SQLite users; each of them is checked on its own.
store_files=$(ls "$SRC"/daemon/store*.c)
others=$(grep -lE 'sqlite3_|<sqlite3\.h>' "$SRC"/daemon/*.c "$SRC"/daemon/*.h "$SRC"/probes/*.c \
	"$SRC"/probes/lib/*.[ch] "$SRC"/lib/*.[ch] "$SRC"/cli/*.[ch] "$SRC"/tests/tools/*.c 2>/dev/null |
	grep -vE '/daemon/store[a-z_]*\.c$|/daemon/storep\.h$')
[ -z "$others" ] || fail "SQLite is called outside daemon/store*.c: $others"
# shellcheck disable=SC2086 # one argument per file
python3 - $store_files <<'PY' || fail "the store builds SQL from strings (above)"
import os, re, sys
bad = []
sql = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|ATTACH|VALUES|WHERE)\b")
tables = []
by_name = False
for path in sys.argv[1:]:
    name = os.path.basename(path)
    code = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    for fn in ("sqlite3_mprintf", "sqlite3_vmprintf", "sqlite3_snprintf", "sqlite3_vsnprintf",
               "sqlite3_str_appendf", "sqlite3_str_new"):
        if fn in code:
            bad.append("%s: uses %s" % (name, fn))
    # Every prepared statement comes from the constant table.
    for m in re.finditer(r"sqlite3_prepare\w*\s*\(\s*[^,]+,\s*([^,]+),", code):
        if not re.fullmatch(r"queries\[\w+\]", m.group(1).strip()):
            bad.append("%s: prepares %s" % (name, m.group(1).strip()))
    # printf-style calls whose format holds SQL.
    for m in re.finditer(r"\b\w*printf\w*\s*\(([^;]*)\);", code, flags=re.S):
        lits = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
        if sql.search(lits):
            bad.append("%s: formats SQL: %s" % (name, " ".join(m.group(0).split())[:120]))
    # A value bound by position (a literal index) rather than by name.
    for m in re.finditer(r"\bsqlite3_bind_\w+\s*\(\s*[^,]+,\s*(\d+)\s*,", code):
        bad.append("%s: binds parameter %s by position" % (name, m.group(1)))
    if "sqlite3_bind_parameter_index" in code:
        by_name = True
    table = re.search(r"queries\[Q__COUNT\]\s*=\s*\{(.*?)\n\};", code, flags=re.S)
    if table:
        tables.append((name, table.group(1)))
# The one table: no positional parameters, values only as :name binds.
if len(tables) != 1:
    bad.append("%d queries[Q__COUNT] tables (%s), not one" % (
        len(tables), " ".join(n for n, _ in tables)))
for name, body in tables:
    text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body))
    if re.search(r"\?\d*", text):
        bad.append("%s: a positional ? parameter in the queries" % name)
    names = set(re.findall(r"(?<![:\w]):([a-z_][a-z0-9_]*)", text))
    print("%s: %d statements in the table, %d named parameters (%s)" % (
        name, len(re.findall(r"\[Q_\w+\]\s*=", body)), len(names),
        " ".join(":" + n for n in sorted(names))))
if not by_name:
    bad.append("binds are not looked up by name")
print("checked %d files: %s" % (len(sys.argv) - 1,
      " ".join(os.path.basename(p) for p in sys.argv[1:])))
for b in bad:
    print("store:", b)
sys.exit(1 if bad else 0)
PY
# Hostile text from a probe goes in and comes back verbatim.
mkdir -p "$TW_TMP/probes.d"
cat >"$TW_TMP/probes.d/hostile" <<'EOF'
#!/bin/sh
# fake probe for 95-security: quotes and SQL in its reason and params
cat <<'DOC'
{"probe": "hostile", "protocol": 1, "status": "error",
 "reason": "x'); DROP TABLE runs; -- \" ' ; SELECT * FROM state; /* :id ?1 %s %n",
 "started_at": "2026-12-03T07:51:56.123Z", "started_unix": 1796284316.123,
 "duration_s": 0.01, "params": {"quick": true, "note": "a' OR '1'='1"},
 "scalars": {}, "series": {}, "info": {}}
DOC
exit 1
EOF
chmod 755 "$TW_TMP/probes.d/hostile"
start_daemon sql --interval 1h
wait_cycle 1
want="x'); DROP TABLE runs; -- \" ' ; SELECT * FROM state; /* :id ?1 %s %n"
got=$(runs_json | jq -r '.[] | select(.probe == "hostile") | .reason')
[ "$got" = "$want" ] || fail "the hostile reason came back as: $got"
[ "$(api "/api/v1/runs?probe=x%27%20OR%20%271%27%3D%271" -o /dev/null -w '%{http_code}')" = 400 ] ||
	fail "a quoted probe filter was not refused"
stop_daemon
store_check "$TW_TMP/sql/threadwatch.db"
ok "SQL: only daemon/store*.c call SQLite, from one constant table with named binds;" \
	"a hostile reason is stored verbatim ($CHECK_RUNS runs intact)"

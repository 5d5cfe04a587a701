#!/usr/bin/env bash
# 99-tls: what HTTPS accepts and what it tells about its certificate.
#  - The default tls_priorities allow TLS 1.2 and 1.3 only: openssl
#    s_client with -tls1_1 (its own floor lowered) is refused, -tls1_2 and
#    -tls1_3 connect. tls_priorities narrowed to 1.3 refuses -tls1_2; a
#    priority string GnuTLS does not take stops the start.
#  - threadwatch_tls_cert_expiry_timestamp_seconds is the certificate's
#    notAfter (as openssl x509 -enddate reads it).
#  - A tls_key readable by group or others is warned about at start.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v openssl >/dev/null || { echo "skip: openssl is not installed"; exit 77; }
fake_builtins "$TW_TMP/probes"
C=$TW_TMP/creds
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$C/tls.key" \
	-out "$C/tls.crt" 2>/dev/null || fail "openssl could not make a certificate"
chmod 600 "$C/tls.key"

# s_client VERSION: 0 when the handshake at that version completes.
s_client() {
	timeout 20 openssl s_client -connect "127.0.0.1:$PORT" "-$1" -cipher 'DEFAULT:@SECLEVEL=0' \
		-CAfile "$C/tls.crt" </dev/null >"$TW_TMP/s_client.$1" 2>&1
}

start_daemon tls --interval 1h --tls-cert "$C/tls.crt" --tls-key "$C/tls.key"
s_client tls1_1 && fail "TLS 1.1 was accepted: $(grep -E 'Protocol|Cipher' "$TW_TMP/s_client.tls1_1")"
s_client tls1_2 || fail "TLS 1.2 was refused: $(tail -5 "$TW_TMP/s_client.tls1_2")"
s_client tls1_3 || fail "TLS 1.3 was refused: $(tail -5 "$TW_TMP/s_client.tls1_3")"
want=$(date -u -d "$(openssl x509 -enddate -noout -in "$C/tls.crt" | cut -d= -f2)" +%s)
got=$(curl -sS --max-time 10 --cacert "$C/tls.crt" "https://127.0.0.1:$PORT/metrics" |
	awk '$1 == "threadwatch_tls_cert_expiry_timestamp_seconds" {print $2}')
[ -n "$got" ] && [ "$(printf '%.0f' "$got")" = "$want" ] ||
	fail "threadwatch_tls_cert_expiry_timestamp_seconds: \"$got\", expected $want"
stop_daemon
grep -q 'readable by group or others' "$TW_TMP/tls.log" && fail "a warning for a 0600 key"
ok "default priorities: TLS 1.1 refused, 1.2 and 1.3 accepted; certificate expiry $got"

chmod 644 "$C/tls.key"
start_daemon tls13 --interval 1h --tls-cert "$C/tls.crt" --tls-key "$C/tls.key" \
	--tls-priorities 'NORMAL:-VERS-ALL:+VERS-TLS1.3'
s_client tls1_2 && fail "TLS 1.2 was accepted under tls_priorities 1.3 only"
s_client tls1_3 || fail "TLS 1.3 was refused: $(tail -5 "$TW_TMP/s_client.tls1_3")"
stop_daemon
grep -q "tls_key \"$C/tls.key\" is readable by group or others (mode 0644)" "$TW_TMP/tls13.log" ||
	fail "no warning for a 0644 key: $(cat "$TW_TMP/tls13.log")"
out=$(timeout 20 "$TWD" --foreground --config "$TW_TMP/empty.conf" --state-dir "$TW_TMP/bad" \
	--port 0 --probe-dir "$TW_TMP/probes" --tls-cert "$C/tls.crt" --tls-key "$C/tls.key" \
	--tls-priorities 'NOT-A-PRIORITY' 2>&1)
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a bad tls_priorities: exit $rc: $out"
ok "tls_priorities 1.3 only refuses TLS 1.2; a 0644 key is warned about; a bad string: exit $rc"

#!/usr/bin/env bash
# 99-tls: what HTTPS accepts and what it tells about its certificate.
#  - The default tls_priorities allow TLS 1.2 and 1.3 only: openssl
#    s_client with -tls1_1 (its own floor lowered) is refused, -tls1_2 and
#    -tls1_3 connect. tls_priorities narrowed to 1.3 refuses -tls1_2; a
#    priority string GnuTLS does not take stops the start.
#  - threadwatch_tls_cert_expiry_timestamp_seconds is the certificate's
#    notAfter (as openssl x509 -enddate reads it).
#  - A tls_key readable by group or others is warned about at start.
#  - SIGHUP re-reads tls_cert and tls_key: the next handshake presents the
#    new certificate and the metric follows it, on the same listening
#    socket and in the same process. A bad pair (a key of another
#    certificate, garbage) keeps the certificate served, with one error
#    logged per reload. Two pairs swapped back and forth keep one copy
#    each: RSS stays flat over 120 reloads (TLS_SWAPS pairs of them).
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh" # asan_build
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
curl -sS -D "$TW_TMP/hsts" -o /dev/null --max-time 10 --cacert "$C/tls.crt" "https://127.0.0.1:$PORT/healthz"
grep -qi '^strict-transport-security: max-age=63072000' "$TW_TMP/hsts" ||
	fail "no HSTS over HTTPS: $(cat "$TW_TMP/hsts")"
stop_daemon
grep -q 'readable by group or others' "$TW_TMP/tls.log" && fail "a warning for a 0600 key"
ok "default priorities: TLS 1.1 refused, 1.2 and 1.3 accepted; HSTS; certificate expiry $got"

# Mozilla's intermediate profile: with an RSA certificate, TLS
# 1.2 takes ECDHE with AES-GCM or ChaCha20 only, in the server's order;
# static RSA key exchange and CBC (SHA-1 or SHA-2 MACs) are refused.
openssl req -x509 -newkey rsa:2048 -nodes -days 3 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$C/rsa.key" -out "$C/rsa.crt" 2>/dev/null ||
	fail "openssl could not make an RSA certificate"
chmod 600 "$C/rsa.key"
start_daemon rsa --interval 1h --tls-cert "$C/rsa.crt" --tls-key "$C/rsa.key"
suite() {
	timeout 20 openssl s_client -connect "127.0.0.1:$PORT" -tls1_2 -cipher "$1:@SECLEVEL=0" \
		-CAfile "$C/rsa.crt" </dev/null 2>/dev/null | sed -n 's/^New, TLSv1.2, Cipher is //p'
}
for c in AES128-GCM-SHA256 AES256-GCM-SHA384 AES256-SHA AES128-CCM ECDHE-RSA-AES128-SHA ECDHE-RSA-AES256-SHA384; do
	got=$(suite "$c")
	[ -z "$got" ] || fail "$c was accepted: $got"
done
for c in ECDHE-RSA-AES128-GCM-SHA256 ECDHE-RSA-AES256-GCM-SHA384 ECDHE-RSA-CHACHA20-POLY1305; do
	[ "$(suite "$c")" = "$c" ] || fail "$c was refused"
done
got=$(suite 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384')
[ "$got" = ECDHE-RSA-AES256-GCM-SHA384 ] || fail "the client's order won: $got"
stop_daemon
ok "intermediate profile: static RSA, CCM and CBC refused; ECDHE with AES-GCM or ChaCha20 taken, in the server's order"

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

# --- SIGHUP reloads the certificate --------------------------------------------------
# new_pair NAME DAYS: a fresh key and self-signed certificate in $C/NAME.*.
new_pair() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$2" \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$C/$1.key" \
		-out "$C/$1.crt" 2>/dev/null || fail "openssl could not make certificate $1"
	chmod 600 "$C/$1.key"
}
# install_pair NAME: copies the pair over the files the daemon was started with.
install_pair() { cat "$C/$1.crt" >"$C/live.crt" && cat "$C/$1.key" >"$C/live.key"; }
fpr_file() { openssl x509 -noout -fingerprint -sha256 -in "$1" | cut -d= -f2; }
# fpr_served: the SHA-256 fingerprint of the certificate a new handshake presents.
fpr_served() {
	timeout 20 openssl s_client -connect "127.0.0.1:$PORT" </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2
}
expiry_metric() { # expiry_metric CAFILE
	curl -sS --max-time 10 --cacert "$1" "https://127.0.0.1:$PORT/metrics" |
		awk '$1 == "threadwatch_tls_cert_expiry_timestamp_seconds" {printf "%.0f\n", $2}'
}
not_after() { date -u -d "$(openssl x509 -enddate -noout -in "$1" | cut -d= -f2)" +%s; }
reloads() { grep -c 'Reloaded the configuration' "$TW_TMP/reload.log"; }
# hup: SIGHUP, and waits for the reload to be logged.
hup() {
	local n
	n=$(reloads)
	kill -HUP "$DPID"
	for _ in $(seq 1 100); do [ "$(reloads)" -gt "$n" ] && return 0; sleep 0.1; done
	fail "no reload logged after SIGHUP: $(tail -5 "$TW_TMP/reload.log")"
}
new_pair a 3
new_pair b 40
new_pair c 50
install_pair a
start_daemon reload --interval 1h --tls-cert "$C/live.crt" --tls-key "$C/live.key"
pid=$DPID port=$PORT
[ "$(fpr_served)" = "$(fpr_file "$C/a.crt")" ] || fail "the daemon does not serve certificate A"
[ "$(expiry_metric "$C/a.crt")" = "$(not_after "$C/a.crt")" ] || fail "the metric is not A's notAfter"

install_pair b
hup
got=$(fpr_served)
[ "$got" = "$(fpr_file "$C/b.crt")" ] ||
	fail "after SIGHUP the handshake presents $got, not B ($(fpr_file "$C/b.crt")); A is $(fpr_file "$C/a.crt")"
m=$(expiry_metric "$C/b.crt")
[ "$m" = "$(not_after "$C/b.crt")" ] && [ "$m" != "$(not_after "$C/a.crt")" ] ||
	fail "threadwatch_tls_cert_expiry_timestamp_seconds is \"$m\" after SIGHUP, B's notAfter is $(not_after "$C/b.crt")"
grep -q 'Reloaded the TLS certificate' "$TW_TMP/reload.log" || fail "no notice of the new certificate"
ok "SIGHUP: the next handshake presents B, the expiry metric moved to $m"

# A key that belongs to another certificate, then garbage: B stays.
cat "$C/c.key" >"$C/live.key"
hup
printf 'not a key\n' >"$C/live.key"
hup
[ "$(fpr_served)" = "$(fpr_file "$C/b.crt")" ] || fail "a bad pair replaced the certificate served"
[ "$(expiry_metric "$C/b.crt")" = "$(not_after "$C/b.crt")" ] || fail "a bad pair moved the metric"
errs=$(grep -c 'Reloading the TLS certificate failed' "$TW_TMP/reload.log")
[ "$errs" = 2 ] || fail "$errs errors logged for two bad reloads: $(cat "$TW_TMP/reload.log")"
kill -0 "$pid" 2>/dev/null && [ "$DPID" = "$pid" ] && [ "$(cat "$TW_TMP/reload/port")" = "$port" ] ||
	fail "the daemon was restarted or lost its port"

# Two pairs swapped back and forth (300 reloads grew RSS by
# 1.7 MiB, every replaced pair kept for good): one copy of each pair, and
# a replaced one freed once no handshake can hold it.
rss() { awk '/^VmRSS/ {print $2}' "/proc/$DPID/status"; }
swap() { for _ in $(seq 1 "$1"); do install_pair a; hup; install_pair c; hup; done; }
swap 10
rss0=$(rss)
swap "${TLS_SWAPS:-60}"
rss1=$(rss)
[ "$((rss1 - rss0))" -lt 256 ] || asan_build ||
	fail "$((2 * ${TLS_SWAPS:-60})) reloads of two pairs grew RSS from $rss0 to $rss1 kB"
[ "$(fpr_served)" = "$(fpr_file "$C/c.crt")" ] || fail "after the swaps C is not served"
ok "$((2 * ${TLS_SWAPS:-60})) reloads of two pairs: RSS $rss0 kB before, $rss1 kB after; C served"
stop_daemon
ok "a mismatched and a garbage key: B still served, one error each ($(grep -m1 'Reloading the TLS' "$TW_TMP/reload.log" | sed 's/.*Reloading/Reloading/')); PID $pid, port $port kept"

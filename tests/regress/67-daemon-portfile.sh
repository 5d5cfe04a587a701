#!/usr/bin/env bash
# 67-daemon-portfile: --port-file never writes through a symlink.
#  - Symlinks planted at PATH.tmp (the old fixed temporary name) and at
#    PATH itself, pointing at a file of the user's, leave that file as it
#    was; PATH ends up a regular file holding the port.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
fake_builtins "$TW_TMP/probes"
d=$TW_TMP/pf
mkdir -p "$d"
echo "precious" >"$TW_TMP/victim"
echo "precious too" >"$TW_TMP/victim2"
ln -s "$TW_TMP/victim" "$d/port.tmp"
ln -s "$TW_TMP/victim2" "$d/port"
"$TWD" --config "$TW_TMP/empty.conf" --state-dir "$d" --port 0 --port-file "$d/port" \
	--probe-dir "$TW_TMP/probes" --probes-d "$TW_TMP/probes.d" --quick --guard off --splay 0 \
	--interval 1h >>"$TW_TMP/pf.log" 2>&1 &
DPID=$!
wait_for test -f "$d/port" -a ! -L "$d/port" || fail "no port file: $(cat "$TW_TMP/pf.log")"
PORT=$(cat "$d/port")
[ "$(http_code /healthz)" = 200 ] || fail "the port file holds \"$PORT\", which does not answer"
stop_daemon
[ "$(cat "$TW_TMP/victim")" = precious ] || fail "the port file was written through PATH.tmp"
[ "$(cat "$TW_TMP/victim2")" = "precious too" ] || fail "the port file was written through PATH"
leftover=$(find "$d" -maxdepth 1 -name '.port.*')
[ -z "$leftover" ] || fail "temporary files left: $leftover"
ok "--port-file: symlinks at PATH.tmp and PATH are not followed; port $PORT"

#!/usr/bin/env bash
# 63-daemon-dropins: threadwatchd.conf.d/*.conf beside the configuration
# file, read after it in name order, a later file winning. An unknown key
# in a drop-in (a key of a newer version, say) is a warning with its file
# and line and is otherwise ignored; --check-config still fails on it. A
# bad value in a drop-in stops the start as one in the file does. SIGHUP
# reads the drop-ins again.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/probes.d" "$TW_TMP/etc/threadwatchd.conf.d"
CONF=$TW_TMP/etc/threadwatchd.conf
DIR=$CONF.d
printf 'interval = 1h\nnice = 5\n' >"$CONF"
printf 'interval = 2h\nnice = 3\n' >"$DIR/10-site.conf"
printf '# from a newer version\ninterval = 3h\nfuture_key = 1\n' >"$DIR/20-cm.conf"
printf 'interval = 9h\n' >"$DIR/30-old.conf.dpkg-old"

out=$("$TWD" --check-config --config "$CONF" 2>&1)
[ $? = 78 ] || fail "--check-config accepted an unknown key in a drop-in: $out"
grep -q "$DIR/20-cm.conf:3: unknown key \"future_key\"" <<<"$out" || fail "--check-config: $out"
ok "--check-config fails on the unknown key: $out"

start_daemon d --config "$CONF"
wait_cycle 1
grep -q "$DIR/20-cm.conf:3: unknown key \"future_key\", ignored" "$TW_TMP/d.log" ||
	fail "no warning with file and line: $(cat "$TW_TMP/d.log")"
# interval: 3h from 20-cm.conf (over 10-site.conf's 2h and the file's 1h;
# the .dpkg-old file is not read); splay is 0
plan() { api /api/v1/status | jq '(.next_cycle_ms - .last_cycle_ms) / 1000 | round'; }
gap=$(plan)
[ "$gap" -ge $((3 * 3600 - 60)) ] && [ "$gap" -le $((3 * 3600 + 60)) ] ||
	fail "the next cycle is $gap s after the last, expected 3h (20-cm.conf wins)"
ok "a later drop-in wins: the next cycle is ${gap}s after the last"

# SIGHUP reads them again: a new drop-in changes a restart-only key, which
# the reload names, and the unknown key is warned about again.
printf 'http_threads = 3\n' >"$DIR/40-late.conf"
kill -HUP "$DPID"
wait_for grep -q 'Reloaded the configuration' "$TW_TMP/d.log" || fail "no reload"
grep -q 'take effect on restart only (http_threads)' "$TW_TMP/d.log" ||
	fail "the reload did not read 40-late.conf: $(cat "$TW_TMP/d.log")"
[ "$(grep -c 'unknown key "future_key", ignored' "$TW_TMP/d.log")" = 2 ] || fail "the reload did not warn again"
stop_daemon
ok "SIGHUP re-reads the drop-ins"

# A bad value in a drop-in is an error with its file and line.
printf 'nice = 99\n' >"$DIR/50-bad.conf"
out=$(timeout 20 "$TWD" --config "$CONF" --state-dir "$TW_TMP/bad" --port 0 2>&1)
[ $? = 78 ] || fail "a bad value in a drop-in did not stop the start: $out"
grep -q "$DIR/50-bad.conf:1: nice: 99 is out of range" <<<"$out" || fail "no file and line: $out"
ok "a bad value in a drop-in stops the start: $out"

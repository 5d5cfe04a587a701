#!/usr/bin/env bash
# 56-daemon-units: systemd/threadwatchd.service and .socket. `systemd-analyze
# verify` prints nothing on stderr (on copies whose ExecStart= names the
# built binary, since verify wants it to exist), the socket's port is the
# daemon's default, TasksMax= is set and CPUQuota= is not, and the offline
# security exposure stays at or below 2.5.
set -u
. "$(dirname "$0")/lib.sh"
command -v systemd-analyze >/dev/null || { echo "systemd-analyze is missing"; exit 77; }
[ -x "$B/threadwatchd" ] || fail "threadwatchd is not built"
U=$TW_TMP/units
mkdir -p "$U"
sed "s|^ExecStart=/usr/sbin/threadwatchd|ExecStart=$B/threadwatchd|" \
	"$SRC/systemd/threadwatchd.service" >"$U/threadwatchd.service"
cp "$SRC/systemd/threadwatchd.socket" "$U/"
grep -q "^ExecStart=$B/threadwatchd" "$U/threadwatchd.service" || fail "no ExecStart= to rewrite"

systemd-analyze verify "$U/threadwatchd.socket" "$U/threadwatchd.service" >"$TW_TMP/verify.out" \
	2>"$TW_TMP/verify.err" || fail "systemd-analyze verify failed: $(cat "$TW_TMP/verify.err")"
[ -s "$TW_TMP/verify.err" ] && fail "systemd-analyze verify printed: $(cat "$TW_TMP/verify.err")"
ok "systemd-analyze verify: no output on stderr"

: >"$TW_TMP/empty.conf"
port=$("$B/threadwatchd" --check-config --config "$TW_TMP/empty.conf" | sed -n 's/^port = \([0-9]*\).*/\1/p')
grep -qx "ListenStream=127.0.0.1:$port" "$U/threadwatchd.socket" ||
	fail "the socket does not listen on 127.0.0.1:$port, the daemon's default"
grep -q '^TasksMax=[0-9]' "$U/threadwatchd.service" || fail "TasksMax= is not set"
grep -q '^CPUQuota=' "$U/threadwatchd.service" && fail "CPUQuota= distorts the timings"
grep -q '^Type=notify$' "$U/threadwatchd.service" || fail "not Type=notify"
ok "socket on 127.0.0.1:$port; TasksMax= set; no CPUQuota="

out=$(systemd-analyze security --offline=yes "$U/threadwatchd.service" 2>&1) ||
	fail "systemd-analyze security failed: $out"
level=$(sed -n 's/.*Overall exposure level for threadwatchd.service: \([0-9.]*\).*/\1/p' <<<"$out")
[ -n "$level" ] || fail "no exposure level in: $out"
echo "$level <= 2.5" | bc | grep -q 1 || fail "exposure $level is above 2.5"
ok "systemd-analyze security --offline=yes: exposure $level"

#!/usr/bin/env bash
# 56-daemon-units: systemd/threadwatchd.service and .socket. `systemd-analyze
# verify` prints nothing on stderr (on copies whose ExecStart= names the
# built binary, since verify wants it to exist), the socket's port is the
# daemon's default, TasksMax= is set and CPUQuota= is not, the unit runs no
# program outside the package and essential ones (no /bin/kill), the
# service requires and follows its socket, and the offline security
# exposure stays at or below 2.5.
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

MANPATH=$(tree_manpath) systemd-analyze verify "$U/threadwatchd.socket" "$U/threadwatchd.service" >"$TW_TMP/verify.out" \
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

# Every program the service runs is the daemon or the shell: an essential
# package, while /bin/kill (procps) is missing on a minimal system and the
# package does not depend on it (tests/regress/72-systemd.sh reloads there).
progs=$(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$U/threadwatchd.service")
for p in $progs; do
	[ "$p" = "$B/threadwatchd" ] || [ "$p" = /bin/sh ] || fail "the unit runs $p (not the daemon or /bin/sh)"
done
grep -q '^ExecReload=/bin/sh -c .kill -HUP' "$U/threadwatchd.service" || fail "no ExecReload= sending SIGHUP"
# The socket before the service, whoever starts it (issue: the postinst
# started the service first and the socket failed).
grep -qx 'Requires=threadwatchd.socket' "$U/threadwatchd.service" || fail "no Requires=threadwatchd.socket"
grep -qx 'After=threadwatchd.socket' "$U/threadwatchd.service" || fail "no After=threadwatchd.socket"
ok "programs run: $(echo $progs | sed "s|$B/|build/|g"); Requires= and After= its socket"

out=$(systemd-analyze security --offline=yes "$U/threadwatchd.service" 2>&1) ||
	fail "systemd-analyze security failed: $out"
level=$(sed -n 's/.*Overall exposure level for threadwatchd.service: \([0-9.]*\).*/\1/p' <<<"$out")
[ -n "$level" ] || fail "no exposure level in: $out"
echo "$level <= 2.5" | bc | grep -q 1 || fail "exposure $level is above 2.5"
ok "systemd-analyze security --offline=yes: exposure $level"

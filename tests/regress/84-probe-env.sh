#!/usr/bin/env bash
# 84-probe-env: what a probe inherits and what it can write into the log.
#  - A probes.d probe dumps its environment: the daemon's
#    CREDENTIALS_DIRECTORY and a secret variable do not reach it; PATH,
#    LANG, LC_*, TZ and LD_PRELOAD (how the test doubles get in) do.
#  - Its reason and its stderr hold a newline and an escape sequence that
#    try to forge a "Cycle 1 finished: ok" line: the log shows them
#    escaped on the probe's own line, and the only such line is the
#    daemon's.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/probes.d" "$TW_TMP/creds"
cat >"$TW_TMP/probes.d/forger" <<EOF2
#!/bin/sh
# fake probe for 84-probe-env: dumps its environment, forges log lines
env >"$TW_TMP/forger.env"
cat <<'DOC'
{"probe": "forger", "protocol": 1, "status": "error",
 "reason": "bad\nCycle 1 finished: ok\u001b[2J",
 "started_at": "2026-12-03T07:51:56.123Z", "started_unix": 1796284316.123,
 "duration_s": 0.01, "params": {"quick": true},
 "scalars": {}, "series": {}, "info": {}}
DOC
exit 1
EOF2
printf '%s\n' '#!/bin/sh' '# fake probe for 84-probe-env: forges a line on stderr' \
	"printf 'oops\\rCycle 1 finished: ok\\033]0;owned\\007\\n' >&2" 'exit 3' \
	>"$TW_TMP/probes.d/stderrforger"
chmod 755 "$TW_TMP/probes.d/forger" "$TW_TMP/probes.d/stderrforger"
DAEMON_ENV=(CREDENTIALS_DIRECTORY="$TW_TMP/creds" TW_SECRET_TOKEN=hunter2-hunter2
	LANG=C.UTF-8 LC_NUMERIC=C TZ=UTC LD_PRELOAD=)
start_daemon env --interval 1h
wait_cycle 1
stop_daemon
DAEMON_ENV=()
[ -s "$TW_TMP/forger.env" ] || fail "the forger probe did not run: $(cat "$TW_TMP/env.log")"
for v in CREDENTIALS_DIRECTORY TW_SECRET_TOKEN; do
	grep -q "^$v=" "$TW_TMP/forger.env" && fail "$v reached the probe: $(cat "$TW_TMP/forger.env")"
done
for v in PATH LANG LC_NUMERIC TZ LD_PRELOAD; do
	grep -q "^$v=" "$TW_TMP/forger.env" || fail "$v did not reach the probe: $(cat "$TW_TMP/forger.env")"
done
ok "a probe's environment: $(cut -d= -f1 "$TW_TMP/forger.env" | sort | tr '\n' ' ')"

log=$TW_TMP/env.log
n=$(grep -cE '^([0-9]{4}-[0-9T:.+-]+ )?(threadwatchd: )?Cycle 1 finished' "$log")
[ "$n" = 1 ] || fail "$n lines say \"Cycle 1 finished\" (one is the daemon's): $(cat "$log")"
grep -q $'\033' "$log" && fail "an escape character reached the log: $(cat -v "$log")"
line=$(grep 'Probe forger' "$log")
grep -qF 'bad\nCycle 1 finished: ok\x1b[2J' <<<"$line" || fail "the reason is not escaped: $line"
line2=$(grep 'Probe stderrforger' "$log")
grep -qF '(stderr: oops\rCycle 1 finished: ok\x1b]0;owned\x07)' <<<"$line2" ||
	fail "the stderr line is not escaped: $(cat -v <<<"$line2")"
ok "probe text escaped in the log: $line; $line2"

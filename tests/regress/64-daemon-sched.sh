#!/usr/bin/env bash
# 64-daemon-sched: how gently threadwatchd runs its probes. By default
# (probe_sched = idle) each probe runs under SCHED_IDLE, at nice +10, in the
# idle I/O class; probe_sched = normal keeps the daemon's own policy at the
# configured nice. A probe in probes.d reports what it got: the policy is
# field 41 of /proc/PID/stat (5: SCHED_IDLE), read back through the API.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/probes.d"
cat >"$TW_TMP/probes.d/prio" <<'PROBE'
#!/bin/sh
pol=$(cut -d' ' -f41 /proc/$$/stat)
io=$(ionice -p $$ | cut -d: -f1)
[ "$io" = idle ] && io=1 || io=0
printf '{"probe":"prio","protocol":1,"status":"ok","reason":null,"started_at":"2026-01-01T00:00:00Z","started_unix":1,"duration_s":0,"scalars":{"policy":{"value":%s,"unit":"count"},"nice":{"value":%s,"unit":"count"},"idle_io":{"value":%s,"unit":"count"}}}\n' "$pol" "$(nice)" "$io"
PROBE
chmod 755 "$TW_TMP/probes.d/prio"

# [policy, nice, idle I/O] of the newest prio run
prio_of() {
	local id
	id=$(api '/api/v1/runs?probe=prio&limit=1' | jq -r '.runs[0].id')
	api "/api/v1/runs/$id" | jq -c '.doc.scalars | [.policy.value, .nice.value, .idle_io.value]'
}
base_nice=$(nice)
want() { local n=$(($1 + base_nice)); [ $n -gt 19 ] && n=19; echo "[$2,$n,1]"; }

DAEMON_SCHED=() # the daemon's own default
start_daemon idle --interval 1h
wait_cycle 1 60
got=$(prio_of)
stop_daemon
[ "$got" = "$(want 10 5)" ] || fail "default: [policy, nice, idle I/O] $got, expected $(want 10 5)"

start_daemon normal --interval 1h --probe-sched normal --nice 4
wait_cycle 1 60
got2=$(prio_of)
stop_daemon
[ "$got2" = "$(want 4 "$(cut -d' ' -f41 /proc/$$/stat)")" ] ||
	fail "probe_sched = normal, nice = 4: $got2"
ok "probes run under SCHED_IDLE at nice +10 in the idle I/O class ($got); probe_sched = normal at nice 4: $got2"

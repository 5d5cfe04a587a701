#!/usr/bin/env bash
# 64-daemon-sched: how gently threadwatchd runs its probes. By default
# (probe_sched = priced) each probe runs under SCHED_IDLE, at nice +10, in
# the idle I/O class, but a probe whose times price the services (handoff
# here) at SCHED_OTHER, nice 19, as the normal threads it prices;
# probe_sched = normal keeps the daemon's own policy at the configured nice. By default (probe_cpu = quiet) each probe is pinned to one
# CPU, never CPU 0 when another is allowed; probe_cpu = all leaves it every
# CPU. A probe in probes.d reports what it got: the policy is field 41 of
# /proc/PID/stat (5: SCHED_IDLE), the CPUs come from Cpus_allowed_list in
# /proc/PID/status (nproc counts them), read back through the API.
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
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$$/status)
case $cpu in *[!0-9]*) cpu=-1 ;; esac
printf '{"probe":"prio","protocol":1,"status":"ok","reason":null,"started_at":"2026-01-01T00:00:00Z","started_unix":1,"duration_s":0,"scalars":{"policy":{"value":%s,"unit":"count"},"nice":{"value":%s,"unit":"count"},"idle_io":{"value":%s,"unit":"count"},"cpus":{"value":%s,"unit":"count"},"cpu":{"value":%s,"unit":"count"}}}\n' "$pol" "$(nice)" "$io" "$(nproc)" "$cpu"
PROBE
chmod 755 "$TW_TMP/probes.d/prio"
# the same report from a built-in the catalogue marks priced
sed 's/"probe":"prio"/"probe":"handoff"/' "$TW_TMP/probes.d/prio" >"$TW_TMP/probes/handoff"
chmod 755 "$TW_TMP/probes/handoff"

# [policy, nice, idle I/O] of the newest prio run; [CPUs allowed, the CPU]
prio_of() {
	local id
	id=$(api "/api/v1/runs?probe=${1:-prio}&limit=1" | jq -r '.runs[0].id')
	api "/api/v1/runs/$id" | jq -c '.doc.scalars | [.policy.value, .nice.value, .idle_io.value]'
}
cpus_of() {
	local id
	id=$(api '/api/v1/runs?probe=prio&limit=1' | jq -r '.runs[0].id')
	api "/api/v1/runs/$id" | jq -c '.doc.scalars | [.cpus.value, .cpu.value]'
}
ncpu=$(nproc)
base_nice=$(nice)
want() { local n=$(($1 + base_nice)); [ $n -gt 19 ] && n=19; echo "[$2,$n,1]"; }

DAEMON_SCHED=() # the daemon's own default
start_daemon idle --interval 1h
wait_cycle 1 60
got=$(prio_of)
priced=$(prio_of handoff)
pin=$(cpus_of)
stop_daemon
[ "$priced" = "[0,19,1]" ] || fail "default: the priced handoff ran at [policy, nice, idle I/O] $priced, expected [0,19,1]"
[ "$got" = "$(want 10 5)" ] || fail "default: [policy, nice, idle I/O] $got, expected $(want 10 5)"
cpu=$(jq -r '.[1]' <<<"$pin")
[ "$(jq -r '.[0]' <<<"$pin")" = 1 ] && [ "$cpu" -ge 0 ] ||
	fail "default: the probe may run on $pin CPUs ([count, CPU]), expected one"
[ "$ncpu" -eq 1 ] || [ "$cpu" -ne 0 ] || fail "default: pinned to CPU 0 with $ncpu CPUs allowed"
grep -q "Probe prio ok in [0-9.]* s, on CPU $cpu\$" "$TW_TMP/idle.log" ||
	fail "default: the journal does not say the probe ran on CPU $cpu: $(grep 'Probe prio' "$TW_TMP/idle.log")"

start_daemon normal --interval 1h --probe-sched normal --nice 4 --probe-cpu all
wait_cycle 1 60
got2=$(prio_of)
pin2=$(cpus_of)
stop_daemon
[ "$(jq -r '.[0]' <<<"$pin2")" = "$ncpu" ] ||
	fail "probe_cpu = all: the probe may run on $pin2 CPUs ([count, CPU]), expected $ncpu"
[ "$got2" = "$(want 4 "$(cut -d' ' -f41 /proc/$$/stat)")" ] ||
	fail "probe_sched = normal, nice = 4: $got2"
ok "probes run under SCHED_IDLE at nice +10 in the idle I/O class ($got), the priced handoff at SCHED_OTHER nice 19 ($priced), pinned to CPU $cpu of $ncpu; probe_sched = normal at nice 4: $got2, probe_cpu = all: $pin2"

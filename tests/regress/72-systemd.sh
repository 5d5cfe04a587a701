#!/usr/bin/env bash
# 72-systemd: the package under a real PID-1 systemd. Boots a minimal
# Debian 12 container with systemd-nspawn (its root built once with
# debootstrap and cached, see lib-nspawn.sh), installs the freshly built
# .deb with apt-get and checks, with systemctl, journalctl and the API
# inside it: no failed unit; the socket started first and handed to the
# service; the first cycle ok within a minute, its probes reaching 4096
# threads and a full MAP_32BIT window inside the unit; the online security
# exposure (at most 1.5); reload (a bad file keeps the old configuration);
# restart keeps the history; the sandbox refuses writes outside the state
# directory; doc/fleet.md's set-up (the remote-scrape drop-in; the
# textfile in /run/threadwatch) works; a probe longer than WatchdogSec causes no restart while a
# SIGSTOPped daemon is restarted; regression events in the journal with
# their MESSAGE_ID, probe lines with PROBE= and RUN_ID=, each at its
# priority; upgrade, remove (history kept) and purge (history gone); and a
# reboot during the first cycle, after which the cycle is retried within
# minutes. The test's drop-in turns the quiet-host guard off (the build
# machine is busy) and the splay off, and shortens WatchdogSec to 10 s. Needs root; skips
# when nspawn, debootstrap or namespaces are missing.
# regress: long
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-nspawn.sh"
[ "$(id -u)" = 0 ] || { echo "not root: booting a container needs root"; exit 77; }
nspawn_preflight || exit 77
for c in dpkg-buildpackage dpkg-deb jq bc; do
	command -v "$c" >/dev/null || { echo "$c is not installed"; exit 77; }
done
[ -x "$B/tests/twseed" ] || fail "\"$B/tests/twseed\" is not built"
T0=$(date +%s)
since() { echo $(($(date +%s) - $1)); }

# --- the package, and a copy of it with a higher version for the upgrade ----------
# TW_DEB names a package to test; else 70-deb's, when it ran before in
# this run of the suite (tests/regress/run.sh's TW_RUN), else one is built.
[ -z "${TW_DEB:-}" ] && [ -n "${TW_RUN:-}" ] && TW_DEB=$(ls "$TW_RUN"/deb/threadwatch_*_amd64.deb 2>/dev/null)
how="built"
if [ -n "${TW_DEB:-}" ]; then
	deb=$TW_DEB how="taken from ${TW_DEB%/*}"
else
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$SRC" deb B="$TW_TMP/b" >"$TW_TMP/deb.log" 2>&1 ||
		{ tail -n 40 "$TW_TMP/deb.log" >&2; fail "make deb failed"; }
	deb=$(ls "$TW_TMP"/b/deb/threadwatch_*.deb)
fi
[ -f "$deb" ] || fail "no single threadwatch_*.deb: $deb"
version=$(dpkg-deb -f "$deb" Version)
up_version=$version+systemdtest1
mkdir "$TW_TMP/up"
dpkg-deb -R "$deb" "$TW_TMP/up/pkg"
sed -i "s/^Version: .*/Version: $up_version/" "$TW_TMP/up/pkg/DEBIAN/control"
dpkg-deb -b "$TW_TMP/up/pkg" "$TW_TMP/up/threadwatch_${up_version}_amd64.deb" >/dev/null ||
	fail "repacking the .deb as $up_version failed"
ok "$(basename "$deb") $how; $up_version repacked for the upgrade ($(since "$T0") s)"

# --- the container --------------------------------------------------------------------
nspawn_root "$(dpkg-deb -f "$deb" Depends)" || fail "no container root"
nspawn_copy "$TW_TMP/root" || fail "copying the container root failed"
R=$TW_TMP/root
trap nspawn_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
nspawn_works || exit 77
mkdir -p "$R/etc/systemd/system/threadwatchd.service.d"
cat >"$R/etc/systemd/system/threadwatchd.service.d/50-test.conf" <<'EOF'
# 72-systemd: the quiet-host guard off (the build machine is busy), no
# splay (the first cycle now, not up to 36 minutes later) and a short
# watchdog, so that the watchdog checks take seconds.
[Service]
ExecStart=
ExecStart=/usr/sbin/threadwatchd --guard=off --splay=0
WatchdogSec=10s
EOF
cp "$deb" "$TW_TMP/up/threadwatch_${up_version}_amd64.deb" "$R/root/"
t=$(date +%s)
nspawn_boot || fail "the container did not boot: $(tail -n 20 "$TW_TMP/console.log")"
ok "booted systemd $(in_ct systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p') in the container to \"$(in_ct systemctl is-system-running)\" in $(since "$t") s"
in_ct test ! -e /bin/kill -a ! -e /usr/bin/kill || fail "the container has a kill program (procps)"

api() { in_ct curl -sf --max-time 10 "http://127.0.0.1:8437$1"; }
status() { api /api/v1/status | jq -r "$1"; }
show() { in_ct systemctl show threadwatchd.service -p "$1" --value; }
# failed_units: none, or fail naming them
no_failed_units() {
	local f
	f=$(in_ct systemctl --failed --plain --no-legend)
	[ -z "$f" ] || fail "$1: failed units: $f $(in_ct journalctl -b --no-pager -n 30)"
}
# The journal of the service, as JSON lines.
jlog() { in_ct journalctl -u threadwatchd.service -o json --no-pager; }
count_msg() { jlog | jq -r .MESSAGE | grep -c -- "$1"; }
wait_secs() { # wait_secs N CMD...: retries CMD every second for N seconds
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
	return 1
}
# Conditions for wait_secs.
status_is() { [ "$(status "$1")" = "$2" ]; }
msg_more() { [ "$(count_msg "$1")" -gt "$2" ]; }
svc_active() { [ "$(in_ct systemctl is-active threadwatchd.service)" = active ]; }
restarts_more() { [ "$(show NRestarts)" -gt "$1" ]; }
apt_in() {
	in_ct env DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends "$@"
}

# --- install ------------------------------------------------------------------------------
t=$(date +%s)
apt_in install "/root/$(basename "$deb")" >"$TW_TMP/install.log" 2>&1 ||
	{ cat "$TW_TMP/install.log" >&2; fail "apt-get install failed"; }
grep -q 'Could not execute systemctl' "$TW_TMP/install.log" && fail "postinst: $(cat "$TW_TMP/install.log")"
t_install=$(since "$t")
no_failed_units "after install"
[ "$(in_ct systemctl is-active threadwatchd.socket threadwatchd.service | tr '\n' ' ')" = "active active " ] ||
	fail "socket and service are not both active: $(in_ct systemctl status threadwatchd.socket threadwatchd.service --no-pager)"
sock_t=$(in_ct systemctl show threadwatchd.socket -p ActiveEnterTimestampMonotonic --value)
svc_t=$(show ExecMainStartTimestampMonotonic)
[ "$sock_t" -le "$svc_t" ] || fail "the socket became active (${sock_t} us) after the service started (${svc_t} us)"
jlog | jq -r .MESSAGE | grep -q 'Serving HTTP on the socket passed by the launcher' ||
	fail "the service did not get its socket from systemd: $(jlog | jq -r .MESSAGE)"
ok "installed in $t_install s; no failed unit; socket active first, service socket-activated"

# --- the first cycle: ok within a minute, in the unit's limits ---------------------------
wait_secs 60 status_is .last_cycle_status ok ||
	fail "no ok cycle a minute after install: $(api /api/v1/status) $(jlog | jq -r .MESSAGE)"
t_cycle=$(since "$t")
[ "$(status .last_cycle.trigger)" = start ] || fail "the first cycle's trigger: $(status .last_cycle.trigger)"
ok "first cycle ok $t_cycle s after the install began ($(status .last_cycle.duration_s) s long)"

runs=$(api '/api/v1/runs?limit=10')
tid=$(jq -r '.runs[] | select(.probe == "threads") | .id' <<<"$runs")
mid=$(jq -r '.runs[] | select(.probe == "map32") | .id' <<<"$runs")
th=$(api "/api/v1/runs/$tid" | jq -c '.doc.info | {d: .default_live_max, h: .high_live_max,
	l: .low_live_max, why: [.default_stopped_by, .high_stopped_by, .low_stopped_by] | unique}')
[ "$th" = '{"d":4096,"h":4096,"l":4096,"why":["target"]}' ] ||
	fail "the threads probe did not reach 4096 live threads per policy inside the unit: $th"
win=$(api "/api/v1/runs/$mid" | jq -r '.doc.info.window_stopped_by')
[ "$win" = window_full ] || fail "map32 did not fill the MAP_32BIT window inside the unit: $win"
limits="TasksMax=$(show TasksMax) LimitNPROC=$(show LimitNPROC) TasksCurrent=$(show TasksCurrent)"
ok "inside the unit ($limits): 4096 live threads under each stack policy; MAP_32BIT window filled"

# --- security, online ---------------------------------------------------------------------
sec=$(in_ct systemd-analyze security threadwatchd.service --no-pager 2>&1)
level=$(sed -n 's/.*Overall exposure level for threadwatchd.service: \([0-9.]*\).*/\1/p' <<<"$sec")
[ -n "$level" ] || fail "no exposure level in: $sec"
[ "$(echo "$level <= 1.5" | bc)" = 1 ] || fail "online exposure $level is above 1.5: $sec"
ok "systemd-analyze security (online, the running unit): exposure $level"

# --- the journal: probe lines with PROBE= and RUN_ID=, at their priority ------------------
jl=$(jlog | jq -c 'select(.PROBE != null) | {m: .MESSAGE, p: .PROBE, r: .RUN_ID, pr: .PRIORITY}')
# createscale may be skipped on a busy host, which is a warning (4).
for p in $TW_BUILTINS; do
	jq -se --arg p "$p" 'any(.[]; .p == $p and (.r | test("^[0-9]+$")) and
		((.pr == "6" and (.m | startswith("Probe " + $p + " ok"))) or
		 ($p == "createscale" and .pr == "4" and (.m | startswith("Probe createscale skipped: the host is busy: ")))))' <<<"$jl" >/dev/null ||
		fail "no \"Probe $p ok\" line with PROBE=$p, RUN_ID= at priority 6: $jl"
done
jlog | jq -se 'any(.[]; (.MESSAGE | startswith("Cycle 1 finished: ok")) and .PRIORITY == "6")' >/dev/null ||
	fail "no \"Cycle 1 finished: ok\" at priority 6"
ok "journal: probe lines carry PROBE= and RUN_ID= at priority 6 (info)"

# --- reload: a good file takes effect, a bad one keeps the old --------------------------
CONF=$R/etc/threadwatch/threadwatchd.conf
pid=$(show MainPID)
printf '\n# 72-systemd\ninterval = 3h\n' >>"$CONF"
n=$(count_msg 'Reloaded the configuration')
in_ct systemctl reload threadwatchd.service || fail "systemctl reload failed: $(jlog | jq -r .MESSAGE | tail -n 5)"
wait_secs 10 msg_more 'Reloaded the configuration' "$n" || fail "no reload in the journal"
wait_secs 10 svc_active
next=$(status .next_cycle_ms)
last=$(status .last_cycle_ms)
# Rounded: last_cycle_ms is read off the wall clock at the cycle's end, while
# next_cycle_ms is the monotonic plan turned into wall time later, so the two
# may disagree by a few milliseconds either way (10799.998 s is 3 h).
gap=$(((next - last + 500) / 1000))
[ "$gap" -ge 10800 ] && [ "$gap" -le 11880 ] || fail "after interval = 3h the next cycle is $((next - last)) ms after the last"
sed -i 's/^interval = 3h$/interval = banana/' "$CONF"
n=$(count_msg 'Reloading the configuration failed, keeping the old one: .*threadwatchd.conf:[0-9]*: interval')
in_ct systemctl reload threadwatchd.service || fail "systemctl reload (bad file) failed"
wait_secs 10 msg_more 'Reloading the configuration failed, keeping the old one: .*threadwatchd.conf:[0-9]*: interval' "$n" ||
	fail "no refusal of the bad file in the journal: $(jlog | jq -r .MESSAGE | tail -n 5)"
[ "$(status .next_cycle_ms)" = "$next" ] || fail "the bad file changed the plan"
[ "$(show MainPID)" = "$pid" ] || fail "reload changed the main PID"
wait_secs 10 svc_active || fail "not active after reloads"
sed -i 's/^interval = banana$/interval = 3h/' "$CONF"
ok "reload: interval = 3h planned the next cycle $gap s after the last; \"interval = banana\" refused, old plan and PID kept"

# --- restart keeps the history (and applies a token and quick probes) -------------------
TOKEN=systemd-test-token-0123456789abcdef
printf 'token = %s\nquick = yes\n' "$TOKEN" >>"$CONF"
before=$(api '/api/v1/runs?limit=100' | jq -c '[.runs[].id]')
in_ct systemctl restart threadwatchd.service || fail "systemctl restart failed"
[ "$(show MainPID)" != "$pid" ] || fail "restart kept the main PID"
wait_secs 10 api /api/v1/status || fail "no API after restart"
after=$(api '/api/v1/runs?limit=100' | jq -c '[.runs[].id]')
[ "$after" = "$before" ] || fail "restart changed the history: $before -> $after"
sleep 2
[ "$(status .cycle_running)" = false ] && [ "$(status .last_cycle.id)" = 1 ] ||
	fail "restart started a cycle although the last one is recent: $(api /api/v1/status)"
no_failed_units "after restart"
ok "restart: new PID, the same $(jq length <<<"$after") runs, no new cycle"

# --- the sandbox and a long, legitimate probe (longer than WatchdogSec) ----------------
PD=$R/usr/lib/threadwatch/probes.d
cat >"$PD/zz-sandbox" <<'EOF'
#!/bin/sh
# 72-systemd's probe: where it may write from inside the unit, then a wait
# longer than WatchdogSec, then a valid document.
for p in /etc /usr/lib /var/lib /var/cache /root /home /run "$STATE_DIRECTORY"; do
	if touch "$p/tw-sandbox" 2>/dev/null; then echo "$p writable"; rm -f "$p/tw-sandbox"; else echo "$p refused"; fi
done >"$STATE_DIRECTORY/sandbox.txt"
sleep 15
echo '{"probe":"zz-sandbox","protocol":1,"status":"ok","reason":null,"started_at":"2026-12-03T07:51:56.123Z","started_unix":1796284316.123,"duration_s":15,"params":{},"scalars":{"v":{"value":1,"unit":"count"}},"series":{},"info":{}}'
EOF
chmod 0755 "$PD/zz-sandbox"
pid=$(show MainPID)
nr=$(show NRestarts)
t=$(date +%s)
cid=$(in_ct curl -sf -X POST -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8437/api/v1/runs | jq -r .cycle_id)
[ -n "$cid" ] && [ "$cid" != null ] || fail "POST /api/v1/runs did not start a cycle"
wait_secs 120 status_is .last_cycle.id "$cid" || fail "cycle $cid did not finish"
t_long=$(since "$t")
[ "$(status .last_cycle_status)" = ok ] || fail "cycle $cid: $(api /api/v1/status)"
[ "$(show NRestarts)" = "$nr" ] && [ "$(show MainPID)" = "$pid" ] ||
	fail "the watchdog restarted the daemon during a long probe: NRestarts $(show NRestarts), PID $(show MainPID)"
zz=$(api '/api/v1/runs?limit=10' | jq -r '.runs[] | select(.probe == "zz-sandbox") | "\(.status) \(.duration_s)"')
[[ "$zz" == "ok 1"[5-9]* ]] || fail "the long probe's run: $zz"
sb=$(cat "$R/var/lib/private/threadwatch/sandbox.txt")
[ "$(grep -c refused <<<"$sb")" = 7 ] && grep -qx "/var/lib/threadwatch writable" <<<"$sb" ||
	fail "the sandbox: $sb"
rm -f "$PD/zz-sandbox" "$R/var/lib/private/threadwatch/sandbox.txt"
ok "cycle $cid with a 15 s probe (WatchdogSec=10s) took $t_long s: no restart (NRestarts $nr)"
ok "sandbox: a probe may write only its state directory: $(grep refused <<<"$sb" | cut -d' ' -f1 | tr '\n' ' ')refused"

# --- the watchdog: a stopped daemon is restarted -----------------------------------------
pid=$(show MainPID)
t=$(date +%s)
in_ct sh -c "kill -STOP $pid"
wait_secs 40 restarts_more "$nr" || fail "a SIGSTOPped daemon was not restarted within 40 s"
t_wd=$(since "$t")
wait_secs 20 svc_active || fail "not active after the watchdog"
[ "$(show MainPID)" != "$pid" ] || fail "the same PID after the watchdog"
in_ct journalctl -u threadwatchd.service --no-pager -o cat | grep -q 'Watchdog timeout' ||
	fail "no watchdog timeout in the journal"
[ "$t_wd" -le 25 ] || fail "the restart took $t_wd s (WatchdogSec=10s, RestartSec=5s)"
ok "watchdog: SIGSTOP, restarted after $t_wd s (WatchdogSec=10s + RestartSec=5s); NRestarts $(show NRestarts)"

# --- doc/fleet.md's set-up: remote scrape and the textfile ---------------------------
# The packaged remote-scrape drop-in, installed with doc/fleet.md's one line:
# the socket listens on every address (here: [::1] as well) and allows
# loopback and the Prometheus server. The textfile goes to the runtime
# directory (/run/threadwatch, 0755), and a symlink in node_exporter's
# directory points at it: an unprivileged reader gets the metrics through
# it, and the daemon needs no write access outside its own directories.
TF=/var/lib/prometheus/node-exporter
in_ct sh -c "sed 's|@PROMETHEUS@|192.0.2.10|' /usr/share/threadwatch/remote-scrape.conf |
	install -D -m 0644 /dev/stdin /etc/systemd/system/threadwatchd.socket.d/remote-scrape.conf" ||
	fail "doc/fleet.md's remote-scrape line failed"
in_ct mkdir -p "$TF"
in_ct ln -sf /run/threadwatch/threadwatch.prom "$TF/threadwatch.prom"
echo "textfile_path = /run/threadwatch/threadwatch.prom" >>"$CONF"
pid=$(show MainPID)
in_ct systemctl daemon-reload
# Restarting the socket restarts the service that requires it.
in_ct systemctl restart threadwatchd.socket || fail "restarting the socket failed"
no_failed_units "after restarting the socket"
[ "$(show MainPID)" != "$pid" ] || fail "the service did not restart with its socket"
allow=$(in_ct systemctl show threadwatchd.socket -p IPAddressAllow --value)
case $allow in
*192.0.2.10*) ;;
*) fail "the socket's IPAddressAllow is \"$allow\", without the Prometheus server" ;;
esac
[ "$(in_ct systemctl show threadwatchd.socket -p IPAddressDeny --value)" != "" ] ||
	fail "the socket denies nothing"
wait_secs 10 api /api/v1/status || fail "no API after the fleet drop-ins"
in_ct curl -sf --max-time 10 -o /dev/null 'http://[::1]:8437/healthz' || fail "no answer on [::1]:8437"
cid=$(in_ct curl -sf -X POST -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8437/api/v1/runs | jq -r .cycle_id)
wait_secs 60 status_is .last_cycle.id "$cid" || fail "cycle $cid did not finish"
prom=$(in_ct stat -L -c '%a' "$TF/threadwatch.prom") ||
	fail "no textfile: $(jlog | jq -r .MESSAGE | grep -i textfile)"
[ "$prom" = 644 ] || fail "the textfile is mode $prom, not 644"
in_ct setpriv --reuid=65534 --regid=65534 --clear-groups grep -q '^threadwatch_' "$TF/threadwatch.prom" ||
	fail "an unprivileged reader cannot read threadwatch_ metrics through $TF/threadwatch.prom"
ok "fleet set-up: remote-scrape.conf (IPAddressAllow=$allow), the socket's restart restarted" \
	"the service, [::1]:8437 answers; /run/threadwatch/threadwatch.prom mode $prom, read by" \
	"nobody through $TF"

# --- the observer: the privileged half, as packaged ------------------------------------------
# threadwatch-observer.service runs with CAP_NET_ADMIN, CAP_SYS_PTRACE,
# CAP_PERFMON and CAP_BPF alone and hands its windows to threadwatchd, whose headroom then counts
# VMAs through it: every process in the container, where threadwatchd's own
# sandbox (ProtectProc=invisible under a dynamic user) shows it its own.
osvc() { in_ct systemctl show threadwatch-observer.service -p "$1" --value; }
[ "$(in_ct systemctl is-active threadwatch-observer.service)" = active ] ||
	fail "the observer is not active: $(in_ct systemctl status threadwatch-observer.service --no-pager)"
[ "$(osvc CapabilityBoundingSet)" = "cap_net_admin cap_sys_ptrace cap_perfmon cap_bpf" ] ||
	fail "the observer's capabilities: $(osvc CapabilityBoundingSet)"
ocaps=$(in_ct grep CapEff "/proc/$(osvc MainPID)/status" | awk '{print $2}')
# CAP_SYS_PTRACE (bit 19), and CAP_NET_ADMIN (12), CAP_PERFMON (38) and
# CAP_BPF (39) where the container's bounding set has them
(((0x$ocaps & ~0xC000081000) == 0 && (0x$ocaps & 0x80000) != 0)) || fail "the observer's effective capabilities: $ocaps"
# by_observer: a cycle now, then whether its headroom took the observer's
# window (taken by then). Which process is largest is the host's business:
# threadwatchd's own threads may well make it so.
by_observer() {
	local c
	c=$(in_ct curl -sf -X POST -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8437/api/v1/runs | jq -r .cycle_id)
	[ -n "$c" ] && [ "$c" != null ] || return 1
	wait_secs 40 status_is .last_cycle.id "$c" || return 1
	[ "$(api /api/v1/headroom | jq -r .headroom.vmas_seen_by)" = observer ]
}
t=$(date +%s)
until by_observer; do
	# the observer's first 60 s window, then a cycle: minutes on a loaded machine
	[ "$(since "$t")" -lt 300 ] || fail "the headroom never took the observer's window: $(api /api/v1/headroom) $(in_ct journalctl -u threadwatch-observer.service --no-pager -n 20)"
	sleep 5
done
# more processes than threadwatchd's unit holds, and the largest one real
hs=$(api /api/v1/headroom | jq -c '.headroom | [.processes_scanned, .largest_vmas_pid, .largest_vmas, .largest_vmas_comm]')
own=$(in_ct systemctl show threadwatchd.service -p TasksCurrent --value)
all=$(in_ct sh -c 'ls -d /proc/[0-9]* | wc -l')
scanned=$(jq '.[0]' <<<"$hs")
[ "$scanned" -gt 2 ] && [ "$scanned" -le "$all" ] ||
	fail "the observer's headroom scanned $scanned processes ($all in the container; threadwatchd's unit $own tasks): $hs"
[ "$(jq '.[2] > 0' <<<"$hs")" = true ] || fail "no VMA count through the observer: $hs"
in_ct journalctl -u threadwatch-observer.service --no-pager -o cat | grep -q 'threadwatchd takes the windows' ||
	fail "the observer never logged its windows taken"
osec=$(in_ct systemd-analyze security threadwatch-observer.service --no-pager 2>&1 |
	sed -n 's/.*Overall exposure level for threadwatch-observer.service: \([0-9.]*\).*/\1/p')
ok "observer: CapEff $ocaps (of NET_ADMIN, SYS_PTRACE, PERFMON, BPF), exposure $osec; the headroom through it" \
	"[scanned, pid, vmas, comm] $hs of $all processes in the container"
# two units running the same program are two workloads
in_ct systemd-run --quiet --unit=tw-a /bin/sleep 600 && in_ct systemd-run --quiet --unit=tw-b /bin/sleep 600 ||
	fail "systemd-run failed"
wl=$(in_ct threadwatch workloads --json --for 2s --no-costs 2>/dev/null)
jq -e '[.workloads[] | select(.kind == "unit" and (.unit == "tw-a.service" or .unit == "tw-b.service") and
	.comm == "sleep" and .processes == 1)] | length == 2' <<<"$wl" >/dev/null ||
	fail "tw-a and tw-b are not two workloads: $(jq -c '[.workloads[] | {key, kind, comm}]' <<<"$wl")"
jq -e '[.workloads[] | select(.unit == "threadwatchd.service")] | length == 1' <<<"$wl" >/dev/null ||
	fail "threadwatchd.service is not a workload: $(jq -c '[.workloads[] | .key]' <<<"$wl")"
ok "two units of one program are two workloads ($(jq -r .mechanisms.cgroup_hierarchy <<<"$wl") hierarchy): $(jq -c '[.workloads[] | select(.kind == "unit") | .unit]' <<<"$wl")"
# ... and so the daemon keeps them, through the packaged observer (its
# window shortened to 5 s by a drop-in): two rows of /api/v1/workloads with
# their own refs, two workload labels on /metrics, two rows on the page
mkdir -p "$R/etc/systemd/system/threadwatch-observer.service.d"
printf '[Service]\nExecStart=\nExecStart=/usr/lib/threadwatch/threadwatch-observer --push /run/threadwatch/observer.sock --window 5s\n' \
	>"$R/etc/systemd/system/threadwatch-observer.service.d/window.conf"
in_ct systemctl daemon-reload && in_ct systemctl restart threadwatch-observer.service ||
	fail "the observer did not restart with a 5 s window"
two_units() { api /api/v1/workloads | jq -e '[.workloads[] | select(.name == "tw-a.service" or .name == "tw-b.service") | .ref] | length == 2 and .[0] != .[1]' >/dev/null; }
t=$(date +%s)
until two_units; do
	[ "$(since "$t")" -lt 90 ] || fail "/api/v1/workloads never listed tw-a and tw-b: $(api /api/v1/workloads | jq -c '[.workloads[]? | .name]')"
	sleep 2
done
m=$(api /metrics | grep -c '^threadwatch_workload_threads{workload="tw-[ab].service"}')
[ "$m" = 2 ] || fail "/metrics has $m series of tw-a and tw-b: $(api /metrics | grep '^threadwatch_workload_threads')"
page_note="the page not checked (no browser tools)"
if [ "${TW_NO_BROWSER:-}" != 1 ] && [ -n "${NSPAWN_LEADER:-}" ]; then
	. "$SRC/tests/regress/lib-browser.sh"
	(browser_tools) >"$TW_TMP/browser-tools.log" 2>&1 && browser_tools >/dev/null 2>&1 && {
		# chromium from this host, in the container's network namespace
		nsenter -t "$NSPAWN_LEADER" -n node "$BROWSER_DIR/workloads.test.js" --url http://127.0.0.1:8437/ \
			--names 'tw-a.service|tw-b.service' --out "$SRC/tests/out/browser/container" >"$TW_TMP/page.log" 2>&1 ||
			fail "the page in the container: $(cat "$TW_TMP/page.log")"
		page_note="the page lists both (chromium in the container's network namespace)"
	}
fi
in_ct systemctl stop tw-a.service tw-b.service
ok "the daemon keeps tw-a.service and tw-b.service apart: two refs in /api/v1/workloads, two series on /metrics; $page_note"

# --- regression events in the journal -------------------------------------------------------
STEP_ID=78d06f1af1ac4ee9afec21ee1a5d4526
SD=$R/var/lib/private/threadwatch
# Stopping the socket stops the service that requires it.
in_ct systemctl stop threadwatchd.socket
[ "$(in_ct systemctl is-active threadwatchd.service)" = inactive ] || fail "the service outlived its socket"
rm -f "$SD"/threadwatch.db*
"$B/tests/twseed" --db "$SD/threadwatch.db" --days 30 --kernel-change-at 20 --step 10 --seed 1 --quiet ||
	fail "twseed failed"
chown --reference="$SD" "$SD"/threadwatch.db*
in_ct systemctl start threadwatchd.service || fail "start with the seeded database failed"
ev() { in_ct journalctl MESSAGE_ID=$STEP_ID -o json --no-pager; }
# logged and their number held for a second (they come one after another)
events_settled() {
	local a
	a=$(ev | wc -l)
	sleep 1
	[ "$a" -gt 0 ] && [ "$(ev | wc -l)" = "$a" ]
}
wait_secs 30 events_settled || fail "no MESSAGE_ID=$STEP_ID in the journal"
evj=$(ev | jq -c '{m: .MESSAGE, pr: .PRIORITY, k: .EVENT_KIND, metric: .METRIC, p: .PROBE, r: .RUN_ID}')
bad=$(jq -c 'select(.pr != "5" or .k != "step" or .metric == null or .p == null or .r == null or
	(.p as $p | .metric | startswith($p + ".") | not) or (.r | test("^[0-9]+$") | not))' <<<"$evj") ||
	fail "jq: $bad"
[ -z "$bad" ] || fail "regression events without PRIORITY=5, EVENT_KIND=step, METRIC=, PROBE=, RUN_ID=: $bad"
n_ev=$(wc -l <<<"$evj")
[ "$(api /api/v1/events | jq '.events | length')" = "$n_ev" ] || fail "the journal and the API disagree"
ok "journalctl MESSAGE_ID=$STEP_ID: $n_ev events at priority 5 (notice), e.g. $(head -n 1 <<<"$evj")"

# --- upgrade, remove, purge -----------------------------------------------------------------
pid=$(show MainPID)
apt_in install "/root/threadwatch_${up_version}_amd64.deb" >"$TW_TMP/upgrade.log" 2>&1 ||
	{ cat "$TW_TMP/upgrade.log" >&2; fail "the upgrade failed"; }
grep -q 'Could not execute systemctl' "$TW_TMP/upgrade.log" && fail "upgrade: $(cat "$TW_TMP/upgrade.log")"
[ "$(in_ct dpkg-query -W -f '${Version}' threadwatch)" = "$up_version" ] || fail "not upgraded"
no_failed_units "after the upgrade"
[ "$(in_ct systemctl is-active threadwatchd.socket threadwatchd.service | tr '\n' ' ')" = "active active " ] ||
	fail "after the upgrade: $(in_ct systemctl status threadwatchd.socket threadwatchd.service --no-pager)"
[ "$(show MainPID)" != "$pid" ] || fail "the upgrade did not restart the daemon"
wait_secs 10 api /api/v1/status || fail "no API after the upgrade"
[ "$(api /api/v1/events | jq '.events | length')" = "$n_ev" ] || fail "the upgrade lost events"
grep -q "^token = $TOKEN" "$CONF" || fail "the upgrade lost the configuration change"
ok "upgrade to $up_version: restarted, no failed unit, database ($n_ev events) and configuration kept"

apt_in remove threadwatch >"$TW_TMP/remove.log" 2>&1 || fail "remove: $(cat "$TW_TMP/remove.log")"
no_failed_units "after remove"
for u in threadwatchd.socket threadwatchd.service threadwatch-observer.service; do
	[ "$(in_ct systemctl is-active "$u")" != active ] || fail "$u is still active after remove"
done
in_ct curl -s --max-time 3 http://127.0.0.1:8437/ >/dev/null && fail "port 8437 still answers after remove"
[ -s "$SD/threadwatch.db" ] && [ -f "$CONF" ] || fail "remove deleted the database or the configuration"
apt_in purge threadwatch >"$TW_TMP/purge.log" 2>&1 || fail "purge: $(cat "$TW_TMP/purge.log")"
no_failed_units "after purge"
for p in /var/lib/private/threadwatch /var/lib/threadwatch /etc/threadwatch; do
	[ ! -e "$R$p" ] && [ ! -L "$R$p" ] || fail "purge left $p"
done
left=$(find "$R/etc/systemd/system" \( -name 'threadwatchd.*' -o -name 'threadwatch-observer.*' \) ! -name '*.d') # drop-in directories are the admin's
[ -z "$left" ] || fail "purge left unit links: $left"
ok "remove: units stopped, nothing on port 8437, database and configuration kept; purge: both gone"

# --- a reboot during the first cycle ------------------------------------------------------
apt_in install "/root/$(basename "$deb")" >"$TW_TMP/install2.log" 2>&1 ||
	fail "reinstalling failed: $(cat "$TW_TMP/install2.log")"
wait_secs 30 status_is .current_probe threads ||
	fail "the first cycle's threads probe did not start: $(api /api/v1/status) $(in_ct systemctl status threadwatchd.socket threadwatchd.service --no-pager)"
# A retry waits min(1 min, interval) (sched_retry_delay): a 20 s interval
# after the reboot keeps the wait short.
printf '\n# 72-systemd\ninterval = 20s\n' >>"$CONF"
in_ct systemctl reboot 2>/dev/null # the bus goes away under it
t=$(date +%s)
nspawn_wait_exit 60 || fail "the container did not go down for the reboot"
[ "$NSPAWN_RC" = 133 ] || fail "systemd-nspawn exited with $NSPAWN_RC, not 133 (reboot)"
nspawn_boot || fail "the container did not come back: $(tail -n 20 "$TW_TMP/console.log")"
t_boot=$(since "$t")
no_failed_units "after the reboot"
wait_secs 20 api /api/v1/status || fail "no API after the reboot"
st=$(api /api/v1/status)
[ "$(jq -r .last_cycle_status <<<"$st")" = interrupted ] || fail "after the reboot: $st"
[ "$(jq -r .next_cycle_retry <<<"$st")" = 1 ] || fail "no retry planned: $st"
wait_in=$((($(jq .next_cycle_ms <<<"$st") - $(jq .now_ms <<<"$st")) / 1000))
[ "$wait_in" -le 21 ] || fail "the retry is $wait_in s away with interval = 20s: $st"
stline=$(show StatusText)
[[ "$stline" == *"(interrupted); retry "* ]] || fail "STATUS= does not say retry: $stline"
wait_secs 120 status_is .last_cycle_status ok || fail "no cycle within 120 s of the reboot: $(api /api/v1/status)"
[ "$(status .last_cycle.trigger)" = retry ] || fail "the cycle after the reboot: $(status .last_cycle)"
[ "$(status .next_cycle_retry)" = 0 ] || fail "still retrying after an ok cycle"
t_retry=$(since "$t")
ok "reboot during the first cycle: up again in $t_boot s, STATUS=\"$stline\"; the retry ran ok $t_retry s after the reboot"

nspawn_halt || fail "the container did not power off"
ok "powered off; the whole test took $(since "$T0") s"

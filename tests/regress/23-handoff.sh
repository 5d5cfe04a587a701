#!/usr/bin/env bash
# 23-handoff: the cross-CPU hand-off probe. On this host: a document that
# keeps the protocol, each placement the host has with its ratio inside
# its CI, the A/A control, and what the idle settings imply; under one CPU,
# skipped with the reason; `threadwatch run` gives it the CPUs it needs
# (it pins its own threads). The placements come from sysfs, so a tree of
# the test's own (--sysfs-root) that calls the two allowed CPUs SMT
# siblings, or two NUMA nodes, makes the probe measure that placement.
# The run queue stays within 8 of the host's own during a default run.
# No figure is asserted: hosts differ (a KVM guest with haltpoll pays 10-30
# times a switch, bare metal with idle=poll about once).
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
H=$B/probes/handoff
[ -x "$H" ] || fail "\"$H\" is not built"

cpus=$(taskset -pc $$ | sed 's/.*: *//')
two=$(python3 -c 'import os; print(",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2]))')
CHECKS='
def check(c; m): if c then empty else m end;
def sc($n): .scalars[$n].value;
def ratio($p):
  check(sc($p + "_ratio_ci_lo") <= sc($p + "_ratio") and sc($p + "_ratio") <= sc($p + "_ratio_ci_hi"); "\($p)_ratio outside its CI"),
  check(sc($p + "_ns") > 0 and .scalars[$p + "_ns"].unit == "ns"; "\($p)_ns");
check(.probe == "handoff" and .protocol == 1; "not a handoff document"),
check(.status == "ok"; "status \(.status): \(.reason)"),
check(sc("same_cpu_ns") > 0 and sc("same_cpu_ci_lo") <= sc("same_cpu_ns") and sc("same_cpu_ns") <= sc("same_cpu_ci_hi"); "same_cpu_ns and its CI"),
check(sc("blocks") >= 15; "fewer than 15 blocks"),
ratio("aa"),
check(.info.aa_biased == ((sc("aa_ratio_ci_lo") <= 1 and 1 <= sc("aa_ratio_ci_hi")) | not); "aa_biased"),
(.info.cross_placement as $p | check($p | IN("smt", "llc", "cross_llc", "cross_node"); "cross_placement \($p)"),
  ratio($p), check(sc("cross_ratio") == sc($p + "_ratio"); "cross_ratio is not \($p)_ratio")),
([.info | to_entries[] | select(.key | endswith("_cpus")) | select(.value != null) | .key] | length) as $n |
  check($n >= 2; "fewer than two placements"),
check(.info.cpuidle_driver == null or (.info.cpuidle_driver | type) == "string"; "cpuidle_driver"),
check(.info.idle_param | type == "string"; "idle_param"),
# where idle vCPUs halt at once and a hand-off is dear, the fix is named
(if .info.cpuidle_driver == "haltpoll" and .info.haltpoll_guest_halt_poll_ns == "0" and sc("cross_ratio") > 4 then
   check(.info.fix | type == "string" and contains("guest_halt_poll_ns"); "no fix for a halting vCPU: \(.info.fix)")
 elif (.info.cpuidle_driver != "haltpoll") then check(.info.fix == null; "a fix without haltpoll: \(.info.fix)")
 else empty end)
'
verify() {
	local bad
	bad=$(jq -r "$CHECKS" "$1") || fail "jq failed on $1"
	[ -z "$bad" ] || fail "$(basename "$1"): $bad: $(jq -c '{status, reason, scalars: (.scalars | map_values(.value)), info}' "$1" | head -c 1500)"
}

if [ "$(nproc)" -lt 2 ] || [ "${two#*,}" = "$two" ]; then
	echo "one CPU allowed ($cpus): the placements across CPUs cannot be measured here"
else
	"$H" --quick >"$TW_TMP/h.json" || fail "handoff exited $?"
	verify "$TW_TMP/h.json"
	ok "this host ($cpus): $(jq -c '{placement: .info.cross_placement, same_ns: (.scalars.same_cpu_ns.value | floor),
		ratio: [.scalars.cross_ratio_ci_lo.value, .scalars.cross_ratio.value, .scalars.cross_ratio_ci_hi.value] | map(. * 100 | round / 100),
		driver: .info.cpuidle_driver, poll_ns: .info.haltpoll_guest_halt_poll_ns, mechanism: .info.mechanism}' "$TW_TMP/h.json")"

	# threadwatch run pins a probe to one quiet CPU, but not this one.
	"$B/threadwatch" run --quick --json handoff >"$TW_TMP/run.json" || fail "threadwatch run handoff exited $?"
	jq -e '.probes.handoff.status == "ok"' "$TW_TMP/run.json" >/dev/null ||
		fail "threadwatch run handoff: $(jq -c '.probes.handoff | {status, reason}' "$TW_TMP/run.json")"
	ok "threadwatch run leaves the handoff probe the CPUs it needs"
	# The hypervisor it names is the one the fingerprint's CPUID names.
	jq -e '(.fingerprint.virtualization_sources.cpuid // "none") == .probes.handoff.info.hypervisor' \
		"$TW_TMP/run.json" >/dev/null ||
		fail "hypervisor: $(jq -c '[.fingerprint.virtualization_sources, .probes.handoff.info.hypervisor]' "$TW_TMP/run.json")"
	ok "the hypervisor behind a hand-off: $(jq -r .probes.handoff.info.hypervisor "$TW_TMP/run.json")"

	# A topology of the test's own over the two allowed CPUs.
	fake() { # fake DIR KIND: the two CPUs as SMT siblings, or on two nodes
		local d=$1 kind=$2 c
		for c in ${two/,/ }; do
			mkdir -p "$d/cpu/cpu$c/topology" "$d/cpu/cpu$c/cache/index0"
			if [ "$kind" = smt ]; then echo "$two" >"$d/cpu/cpu$c/topology/thread_siblings_list"
			else echo "$c" >"$d/cpu/cpu$c/topology/thread_siblings_list"; fi
			echo 3 >"$d/cpu/cpu$c/cache/index0/level"
			echo Unified >"$d/cpu/cpu$c/cache/index0/type"
			if [ "$kind" = smt ]; then echo "$two" >"$d/cpu/cpu$c/cache/index0/shared_cpu_list"
			else echo "$c" >"$d/cpu/cpu$c/cache/index0/shared_cpu_list"; fi
		done
		# CPUs below the two (absent from the tree) make topo_read stop early
		for ((c = 0; c < ${two%%,*}; c++)); do
			mkdir -p "$d/cpu/cpu$c/topology"; echo "$c" >"$d/cpu/cpu$c/topology/thread_siblings_list"
		done
		if [ "$kind" = nodes ]; then
			mkdir -p "$d/node/node0" "$d/node/node1"
			echo "${two%%,*}" >"$d/node/node0/cpulist"; echo "${two#*,}" >"$d/node/node1/cpulist"
		fi
	}
	for kind in smt nodes; do
		fake "$TW_TMP/sys-$kind" "$kind"
		"$H" --quick --sysfs-root "$TW_TMP/sys-$kind" >"$TW_TMP/h-$kind.json" || fail "handoff under $kind exited $?"
		verify "$TW_TMP/h-$kind.json"
		want=$([ "$kind" = smt ] && echo smt || echo cross_node)
		jq -e --arg w "$want" --arg two "$two" '.info.cross_placement == $w and .info[$w + "_cpus"] == $two' \
			"$TW_TMP/h-$kind.json" >/dev/null ||
			fail "under a $kind tree: $(jq -c '.info | with_entries(select(.key | endswith("_cpus") or . == "cross_placement"))' "$TW_TMP/h-$kind.json")"
		ok "a sysfs tree of $kind: the pair $two measured as $want"
	done
fi

# One allowed CPU: nothing to hand off to, and the probe says so.
one=${two%%,*}
taskset -c "$one" "$H" --quick >"$TW_TMP/one.json" || fail "handoff on one CPU exited $?"
jq -e '.status == "skipped" and (.reason | test("needs two allowed CPUs; this process may run on 1$"))' \
	"$TW_TMP/one.json" >/dev/null || fail "on one CPU: $(jq -c '{status, reason}' "$TW_TMP/one.json")"
ok "on one CPU: $(jq -r .reason "$TW_TMP/one.json")"

# A good citizen: the run queue during a default handoff run stays
# within 8 of what the host ran without it (tests/regress/lib.sh).
if [ "${two#*,}" != "$two" ]; then
	runq_gentle 500 "$TW_TMP/runq.json" "$H"
	jq -e '.status == "ok"' "$TW_TMP/runq.json" >/dev/null || fail "the run under runq: $(jq -c '{status, reason}' "$TW_TMP/runq.json")"
	ok "run queue during a default handoff run: peak $RUNQ_PEAK, $RUNQ_HOST without it"
fi

# No topology at all: skipped, with the place it looked.
"$H" --quick --sysfs-root "$TW_TMP/none" >"$TW_TMP/none.json" || fail "handoff without a tree exited $?"
jq -e '.status == "skipped" and (.reason | contains("no CPU topology under"))' "$TW_TMP/none.json" >/dev/null ||
	fail "without a tree: $(jq -c '{status, reason}' "$TW_TMP/none.json")"
ok "without a topology: $(jq -r .reason "$TW_TMP/none.json")"

if "$H" --sysfs-root "" >/dev/null 2>"$TW_TMP/err"; then fail "--sysfs-root \"\" succeeded"; fi
grep -q usage "$TW_TMP/err" || fail "--sysfs-root \"\": no usage message"
ok "bad arguments refused"

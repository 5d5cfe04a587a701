#!/usr/bin/env bash
# 25-createscale: thread creation by several creators at once. The document
# keeps the protocol and has, for each count of creators up to the CPUs it
# may use (at most 4), the rate per creator with and without glibc's stack
# cache, and the scaling efficiency with its CI; the copy of the probe that
# runs without the cache really runs with GLIBC_TUNABLES (it says so in its
# own environment). Under one CPU it is skipped with the reason. Creators
# run only on CPUs the host leaves idle: CPUs of its own that were busy
# (cpuN lines that moved between two files, --proc-stat FIRST,LATER) skip the run, or leave the
# creators the idle ones, whatever the host-wide count; without moving
# cpuN lines, a /proc/stat with more runnable tasks than CPUs skips the
# run, one with fewer creators' room limits them,
# and the measured runs read a quiet /proc/stat (this host may be busy with
# other tests); the host's own /proc/stat gives either a run or a skip that
# says what ran. The run queue stays within 8 of the host's own during a
# default run. No figure is asserted: contention differs by kernel, glibc
# and host.
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
P=$B/probes/createscale
[ -x "$P" ] || fail "\"$P\" is not built"

# stat FILE N: a /proc/stat with procs_running N (the probe's own thread
# counts as one).
stat() { printf 'cpu  1 2 3 4 5 6 7 8 9 10\nprocs_running %s\nprocs_blocked 0\n' "$2" >"$1"; }
stat "$TW_TMP/quiet" 1
# The two ways a busy host is told: the CPUs' own time (/proc/stat's cpuN
# lines moved), or else the host-wide count of runnable tasks.
BUSY_RE='^the host is busy: ([0-9]+ of the [0-9]+ CPUs this process may use idle over 0.1 s \(busy under half of it, by their time in /proc/stat\)|[0-9.]+ other tasks runnable on [0-9]+ CPUs \(median of procs_running over 21 samples in 0.1 s\))'
# stat2 NAME RUNNING BUSY: two readings of /proc/stat, as the kernel's
# show_stat() gives them 0.1 s apart, for --proc-stat FIRST,LATER
# ($TW_TMP/NAME.0,$TW_TMP/NAME.1): a cpuN line per allowed CPU, 10 jiffies
# on in the later one, of which the CPUs in the list BUSY were busy for all
# 10 and the others for 1; procs_running RUNNING in both. Prints the
# option's value.
stat2() {
	local f=$TW_TMP/$1 c lines0="" lines1=""
	for c in $(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))'); do
		lines0+="cpu$c 100 0 50 1000 5 0 0 0 0 0"$'\n'
		if [[ ",$3," == *",$c,"* ]]; then
			lines1+="cpu$c 108 0 52 1000 5 0 0 0 0 0"$'\n'
		else
			lines1+="cpu$c 101 0 50 1009 5 0 0 0 0 0"$'\n'
		fi
	done
	printf 'cpu  1 2 3 4 5 6 7 8 9 10\n%sprocs_running %s\n' "$lines0" "$2" >"$f.0"
	printf 'cpu  1 2 3 4 5 6 7 8 9 10\n%sprocs_running %s\n' "$lines1" "$2" >"$f.1"
	echo "$f.0,$f.1"
}

two=$(python3 -c 'import os; print(",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2]))')
if [ "${two#*,}" = "$two" ]; then
	echo "one CPU allowed: concurrent creators cannot be measured here"
else
	"$P" --quick --proc-stat "$TW_TMP/quiet" >"$TW_TMP/c.json" || fail "createscale exited $?"
	bad=$(jq -r '
	def check(c; m): if c then empty else m end;
	def sc($n): .scalars[$n].value;
	check(.probe == "createscale" and .status == "ok"; "status \(.status): \(.reason)"),
	(.params.max_creators as $m | check($m >= 2 and $m <= 4; "max_creators \($m)"),
	 (["cached", "nocache"][] as $c |
	  (range(1; $m + 1) | tostring) as $n |
	  check(sc("\($c)_\($n)_rate") > 0 and .scalars["\($c)_\($n)_rate"].unit == "per_s"; "\($c)_\($n)_rate"),
	  (if $n != "1" then
	     check(sc("\($c)_\($n)_efficiency_ci_lo") <= sc("\($c)_\($n)_efficiency") and
	           sc("\($c)_\($n)_efficiency") <= sc("\($c)_\($n)_efficiency_ci_hi"); "\($c)_\($n)_efficiency outside its CI"),
	     check(sc("\($c)_\($n)_efficiency") > 0; "\($c)_\($n)_efficiency")
	   else empty end))),
	check(.info.creator_cpus | type == "string"; "creator_cpus"),
	check(.info.others_running == 0; "others_running \(.info.others_running)")' "$TW_TMP/c.json") || fail "jq failed"
	[ -z "$bad" ] || fail "$bad: $(jq -c '{status, reason, scalars: (.scalars | map_values(.value)), info}' "$TW_TMP/c.json")"
	ok "creators on $(jq -r .info.creator_cpus "$TW_TMP/c.json"): $(jq -c '{
		cached: [.scalars.cached_1_rate.value, .scalars.cached_2_rate.value] | map(floor),
		nocache: [.scalars.nocache_1_rate.value, .scalars.nocache_2_rate.value] | map(floor),
		eff_cached: [.scalars.cached_2_efficiency_ci_lo.value, .scalars.cached_2_efficiency.value, .scalars.cached_2_efficiency_ci_hi.value] | map(. * 100 | round / 100),
		eff_nocache: [.scalars.nocache_2_efficiency_ci_lo.value, .scalars.nocache_2_efficiency.value, .scalars.nocache_2_efficiency_ci_hi.value] | map(. * 100 | round / 100)}' "$TW_TMP/c.json")"

	# The copy without the cache runs with the tunable: glibc reads it at
	# start-up, and the copy reports its own environment.
	jq -e '.info.nocache_tunables == "glibc.pthread.stack_cache_size=0"' "$TW_TMP/c.json" >/dev/null ||
		fail "the copy without the stack cache saw tunables $(jq -c .info.nocache_tunables "$TW_TMP/c.json")"
	ok "the copy without the stack cache ran with glibc.pthread.stack_cache_size=0"

	# The host's own /proc/stat: a run, or a skip that says what it ran.
	"$B/threadwatch" run --quick --json createscale >"$TW_TMP/run.json" || fail "threadwatch run createscale exited $?"
	jq -e --arg re "$BUSY_RE" '.probes.createscale | .status == "ok" or (.status == "skipped" and (.reason | test($re)))' \
		"$TW_TMP/run.json" >/dev/null ||
		fail "threadwatch run createscale: $(jq -c '.probes.createscale | {status, reason}' "$TW_TMP/run.json")"
	ok "threadwatch run leaves createscale the CPUs it needs: $(jq -c '.probes.createscale | {status, reason}' "$TW_TMP/run.json")"

	# A busy host: no idle CPU for two creators.
	ncpu=$(getconf _NPROCESSORS_ONLN)
	stat "$TW_TMP/busy" $((ncpu + 1))
	"$P" --quick --proc-stat "$TW_TMP/busy" >"$TW_TMP/busy.json" || fail "createscale on a busy host exited $?"
	jq -e --arg re "$BUSY_RE" '.status == "skipped" and (.reason | test($re)) and .scalars == {}' \
		"$TW_TMP/busy.json" >/dev/null || fail "a busy host: $(jq -c '{status, reason, scalars}' "$TW_TMP/busy.json")"
	ok "a busy host ($ncpu other tasks runnable): $(jq -r .reason "$TW_TMP/busy.json")"

	# Room for two creators only, where four were allowed.
	if [ "$ncpu" -ge 3 ] && [ "$(jq .params.max_creators "$TW_TMP/c.json")" -ge 3 ]; then
		stat "$TW_TMP/half" $((ncpu - 1))
		"$P" --quick --proc-stat "$TW_TMP/half" >"$TW_TMP/half.json" || fail "createscale with room for two exited $?"
		jq -e '.status == "ok" and .params.max_creators == 2 and (.info.quiet_check | test("2 creators at most"))' \
			"$TW_TMP/half.json" >/dev/null || fail "room for two: $(jq -c '{status, reason, params, info}' "$TW_TMP/half.json")"
		ok "room for two creators: $(jq -r .info.quiet_check "$TW_TMP/half.json")"
	fi
	# A process confined to some CPUs of a host busy elsewhere: its own CPUs
	# were idle, so it runs there, whatever the host-wide count says.
	"$P" --quick --proc-stat "$(stat2 cpuset $((ncpu + 5)) "")" >"$TW_TMP/cpuset.json" ||
		fail "createscale on idle CPUs of a busy host exited $?"
	jq -e '.status == "ok" and .params.max_creators >= 2 and .info.idle_cpus >= 2 and
		(.info.quiet_check | test("^[0-9]+ of the [0-9]+ CPUs this process may use idle over 0.1 s; [0-9.]+ other tasks runnable on the host$"))' \
		"$TW_TMP/cpuset.json" >/dev/null || fail "idle CPUs of a busy host: $(jq -c '{status, reason, params, info}' "$TW_TMP/cpuset.json")"
	ok "its own CPUs idle on a host with $((ncpu + 4)) other tasks runnable: $(jq -r .info.quiet_check "$TW_TMP/cpuset.json")"
	# Its own CPUs busy on a host that looks quiet: all but one busy, skipped.
	busy=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[1:])))')
	"$P" --quick --proc-stat "$(stat2 owncpus 1 "$busy")" >"$TW_TMP/owncpus.json" || fail "createscale on busy CPUs exited $?"
	jq -e --arg re "$BUSY_RE" '.status == "skipped" and (.reason | test($re)) and
		(.reason | startswith("the host is busy: 1 of the ")) and .info.idle_cpus == 1 and .scalars == {}' \
		"$TW_TMP/owncpus.json" >/dev/null || fail "busy CPUs of its own: $(jq -c '{status, reason, info}' "$TW_TMP/owncpus.json")"
	ok "its CPUs $busy busy, with procs_running quiet: $(jq -r .reason "$TW_TMP/owncpus.json")"
	# With three or more, the creators go to the idle ones.
	if [ "$ncpu" -ge 3 ]; then
		first=${two%%,*}
		"$P" --quick --proc-stat "$(stat2 pick 1 "$first")" >"$TW_TMP/pick.json" || fail "createscale with one busy CPU exited $?"
		jq -e --arg c "$first" '.status == "ok" and (.info.creator_cpus | split(",") | index($c) == null)' \
			"$TW_TMP/pick.json" >/dev/null || fail "one busy CPU: $(jq -c '{status, reason, info}' "$TW_TMP/pick.json")"
		ok "CPU $first busy: creators on $(jq -r .info.creator_cpus "$TW_TMP/pick.json")"
	fi
	printf 'cpu 1 2 3\n' >"$TW_TMP/none"
	"$P" --quick --proc-stat "$TW_TMP/none" >"$TW_TMP/none.json" || fail "createscale without procs_running exited $?"
	jq -e '.status == "ok" and .params.max_creators == 2 and (.info.quiet_check | test("^not made: .*: No data available$"))' \
		"$TW_TMP/none.json" >/dev/null || fail "no procs_running: $(jq -c '{status, reason, params, info}' "$TW_TMP/none.json")"
	ok "no procs_running to read: two creators, and it says so ($(jq -r .info.quiet_check "$TW_TMP/none.json"))"
fi

taskset -c "${two%%,*}" "$P" --quick >"$TW_TMP/one.json" || fail "createscale on one CPU exited $?"
jq -e '.status == "skipped" and (.reason | test("need two allowed CPUs; this process may run on 1$"))' \
	"$TW_TMP/one.json" >/dev/null || fail "on one CPU: $(jq -c '{status, reason}' "$TW_TMP/one.json")"
ok "on one CPU: $(jq -r .reason "$TW_TMP/one.json")"

# A good citizen: the run queue during a default createscale run (its quiet check passed) stays
# within 8 of what the host ran without it (tests/regress/lib.sh).
if [ "${two#*,}" != "$two" ]; then
	runq_gentle 500 "$TW_TMP/runq.json" "$P" --proc-stat "$TW_TMP/quiet"
	jq -e '.status == "ok"' "$TW_TMP/runq.json" >/dev/null || fail "the run under runq: $(jq -c '{status, reason}' "$TW_TMP/runq.json")"
	ok "run queue during a default createscale run (its quiet check passed): peak $RUNQ_PEAK, $RUNQ_HOST without it"
fi

for args in "--bogus" "--proc-stat ,$TW_TMP/quiet" "--proc-stat $TW_TMP/quiet," "--proc-stat="; do
	# shellcheck disable=SC2086
	if "$P" $args >/dev/null 2>"$TW_TMP/err"; then fail "createscale $args succeeded"; fi
	grep -q usage "$TW_TMP/err" || fail "createscale $args: no usage message"
done
ok "bad arguments refused"

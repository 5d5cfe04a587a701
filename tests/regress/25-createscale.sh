#!/usr/bin/env bash
# 25-createscale: thread creation by several creators at once. The document
# keeps the protocol and has, for each count of creators up to the CPUs it
# may use (at most 4), the rate per creator with and without glibc's stack
# cache, and the scaling efficiency with its CI; the copy of the probe that
# runs without the cache really runs with GLIBC_TUNABLES (it says so in its
# own environment). Under one CPU it is skipped with the reason. Creators
# run only on CPUs the host leaves idle: a /proc/stat with more runnable
# tasks than that skips the run, one with fewer creators' room limits them,
# and the measured runs read a quiet /proc/stat (this host may be busy with
# other tests); the host's own /proc/stat gives either a run or a skip that
# says what ran. The run queue stays within 8 of the host's own during a
# default run. No figure is asserted: contention differs by kernel, glibc
# and host.
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
P=$B/probes/createscale
[ -x "$P" ] || fail "\"$P\" is not built"

# stat FILE N: a /proc/stat with procs_running N (the probe's own thread
# counts as one).
stat() { printf 'cpu  1 2 3 4 5 6 7 8 9 10\nprocs_running %s\nprocs_blocked 0\n' "$2" >"$1"; }
stat "$TW_TMP/quiet" 1
BUSY_RE='^the host is busy: [0-9.]+ other tasks runnable on [0-9]+ CPUs \(median of procs_running over 21 samples in 0.1 s\)'

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

if "$P" --bogus >/dev/null 2>"$TW_TMP/err"; then fail "--bogus succeeded"; fi
grep -q usage "$TW_TMP/err" || fail "--bogus: no usage message"
ok "bad arguments refused"

#!/usr/bin/env bash
# 25-createscale: thread creation by several creators at once. The document
# keeps the protocol and has, for each count of creators up to the CPUs it
# may use (at most 4), the rate per creator with and without glibc's stack
# cache, and the scaling efficiency with its CI; the copy of the probe that
# runs without the cache really runs with GLIBC_TUNABLES (it says so in its
# own environment). Under one CPU it is skipped with the reason. No figure
# is asserted: contention differs by kernel, glibc and host.
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
P=$B/probes/createscale
[ -x "$P" ] || fail "\"$P\" is not built"

two=$(python3 -c 'import os; print(",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2]))')
if [ "${two#*,}" = "$two" ]; then
	echo "one CPU allowed: concurrent creators cannot be measured here"
else
	"$P" --quick >"$TW_TMP/c.json" || fail "createscale exited $?"
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
	check(.info.creator_cpus | type == "string"; "creator_cpus")' "$TW_TMP/c.json") || fail "jq failed"
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

	"$B/threadwatch" run --quick --json createscale >"$TW_TMP/run.json" || fail "threadwatch run createscale exited $?"
	jq -e '.probes.createscale.status == "ok"' "$TW_TMP/run.json" >/dev/null ||
		fail "threadwatch run createscale: $(jq -c '.probes.createscale | {status, reason}' "$TW_TMP/run.json")"
	ok "threadwatch run leaves createscale the CPUs it needs"
fi

taskset -c "${two%%,*}" "$P" --quick >"$TW_TMP/one.json" || fail "createscale on one CPU exited $?"
jq -e '.status == "skipped" and (.reason | test("need two allowed CPUs; this process may run on 1$"))' \
	"$TW_TMP/one.json" >/dev/null || fail "on one CPU: $(jq -c '{status, reason}' "$TW_TMP/one.json")"
ok "on one CPU: $(jq -r .reason "$TW_TMP/one.json")"

if "$P" --bogus >/dev/null 2>"$TW_TMP/err"; then fail "--bogus succeeded"; fi
grep -q usage "$TW_TMP/err" || fail "--bogus: no usage message"
ok "bad arguments refused"

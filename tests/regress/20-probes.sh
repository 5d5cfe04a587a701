#!/usr/bin/env bash
# 20-probes: the threads and map32 probes. Runs each with --quick and
# checks its document against the probe protocol and the names the rest of
# threadwatch reads; checks that the map32 capacity matches its window; then
# runs both under the linear-search shim (tests/shim/linear_map32.c) and
# checks that they show the 2008 cliff: a knee in the `low` policy and the
# `linear` class.
set -u
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
THREADS=$B/probes/threads
MAP32=$B/probes/map32
SHIM=$B/tests/linear_map32.so
for f in "$THREADS" "$MAP32" "$SHIM"; do [ -e "$f" ] || fail "'$f' is not built"; done

# run BIN OUT [VAR=VALUE...] [-- ARGS...]: runs a probe with --quick in
# that environment, keeps its document in OUT, fails on a non-zero exit or
# output that is not one JSON object.
run() {
	local bin=$1 out=$2 start end
	local -a envs=() args=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	args=("$@")
	start=$(date +%s.%N)
	env "${envs[@]}" "$bin" --quick "${args[@]}" >"$out" 2>"$out.err" ||
		fail "$(basename "$bin") ${envs[*]} ${args[*]}: exit $? ($(cat "$out.err"))"
	end=$(date +%s.%N)
	jq -e 'type == "object"' "$out" >/dev/null || fail "$(basename "$bin"): output is not a JSON object"
	echo "ran $(basename "$bin") ${envs[*]} ${args[*]} in $(echo "$end - $start" | bc) s" \
		"(duration_s $(jq .duration_s "$out"))"
}

# jq checks print one line per violated rule; `verify FILE PROGRAM` fails
# if there is any.
CHECKS='
def check(cond; msg): if cond then empty else msg end;
def units: ["ns","cycles","ratio","bytes","count","hz","per_s","threads","vmas","bool","address","slope","s"];
def goodname: type == "string" and test("^[A-Za-z0-9_.-]{1,64}$");
def finite: type == "number" and . == . and (. < 1e308) and (. > -1e308);
def protocol($probe):
  check(.probe == $probe; "probe is \(.probe)"),
  check(.protocol == 1; "protocol is \(.protocol)"),
  check(.status == "ok" or .status == "skipped" or .status == "error"; "status \(.status)"),
  check((.status == "ok" and .reason == null) or (.status != "ok" and (.reason | type) == "string" and (.reason | length) > 0); "reason \(.reason) for \(.status)"),
  check(.started_at | type == "string" and test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$"); "started_at \(.started_at)"),
  check(.started_unix | finite and . > 1e9; "started_unix"),
  check(.duration_s | finite and . >= 0; "duration_s"),
  check(.params | type == "object" and all(.[]; type == "number" or type == "string" or type == "boolean" or type == "null"); "params"),
  check(.info | type == "object" and all(.[]; type != "array" and type != "object"); "info values"),
  (.scalars | to_entries[] |
    check(.key | goodname; "scalar name \(.key)"),
    check(.value.value | finite; "scalar \(.key) value"),
    check(.value.unit as $u | units | index($u) != null; "scalar \(.key) unit \(.value.unit)")),
  (.series | to_entries[] |
    check(.key | goodname; "series name \(.key)"),
    check(.value.x_unit as $u | units | index($u) != null; "series \(.key) x_unit"),
    check(.value.y_unit as $u | units | index($u) != null; "series \(.key) y_unit"),
    check((.value.points | type) == "array" and all(.value.points[]; type == "array" and length == 2 and (.[0] | finite) and (.[1] | finite)); "series \(.key) points"),
    check([.value.points[]?[0]?] as $x | all(range(1; $x | length); $x[.] >= $x[. - 1]); "series \(.key): x decreases"));
def scalar($n; $u): check(.scalars[$n].unit == $u; "scalar \($n) missing or not in \($u)");
def series($n; $xu; $yu): check(.series[$n].x_unit == $xu and .series[$n].y_unit == $yu and (.series[$n].points | length) > 0; "series \($n) missing, empty or in the wrong units");
def class_of: if . < 0.2 then "flat" elif . > 0.7 then "linear" else "sublinear" end;
'
verify() {
	local file=$1 prog=$2 bad
	bad=$(jq -r "$CHECKS $prog" "$file") || fail "jq failed on '$file'"
	[ -z "$bad" ] || fail "$(basename "$file"): $bad"
}

THREADS_NAMES='
  (("default", "low", "high") as $p |
    series("\($p)_rate"; "threads"; "per_s"), series("\($p)_median_ns"; "threads"; "ns"),
    series("\($p)_p99_ns"; "threads"; "ns"),
    scalar("\($p)_first_rate"; "per_s"), scalar("\($p)_last_rate"; "per_s"),
    scalar("\($p)_min_rate"; "per_s"), scalar("\($p)_map32_failures"; "count"),
    check(.scalars["\($p)_min_rate"].value > 0; "\($p)_min_rate not positive"),
    check(.scalars["\($p)_min_rate"].value <= .scalars["\($p)_first_rate"].value; "\($p)_min_rate above first"),
    check(if .scalars["\($p)_knee"] then .scalars["\($p)_knee"].unit == "threads" and .info["\($p)_knee"] == .scalars["\($p)_knee"].value
          else .info | has("\($p)_knee") and .["\($p)_knee"] == null end; "\($p)_knee inconsistent"),
    check([.series["\($p)_rate"].points[]?[0]] == [.series["\($p)_median_ns"].points[]?[0]]; "\($p) series x differ")),
  scalar("max_threads"; "threads"), scalar("stack_bytes"; "bytes"),
  scalar("default_stack_lo"; "address"), scalar("default_stack_hi"; "address"),
  check(.scalars.max_threads.value >= 1; "max_threads"),
  check(.info.clamp_reason | type == "string" and length > 0; "clamp_reason"),
  check(.info.default_stack_range | type == "string" and test("^0x[0-9a-f]+-0x[0-9a-f]+$"); "default_stack_range"),
  check(.info.default_stacks_low | type == "boolean"; "default_stacks_low"),
  check(.scalars.default_stack_lo.value < .scalars.default_stack_hi.value; "default stack range empty"),
  check(.info.default_stacks_low == (.scalars.default_stack_hi.value <= 4294967296); "default_stacks_low disagrees with the range"),
  check(.scalars.default_map32_failures.value == 0 and .scalars.high_map32_failures.value == 0; "MAP_32BIT failures outside the low policy"),
  # More stacks than fit in 1 GiB: the window must have run out.
  check((.info.low_live_max * (.scalars.stack_bytes.value + 4096) <= 1073741824) or .scalars.low_map32_failures.value > 0; "low policy never fell back")
'

MAP32_NAMES='
  (("fail", "fallback", "plain") as $c | ("median", "p99") as $s |
    series("\($c)_\($s)_ns"; "vmas"; "ns"),
    check([.series["\($c)_\($s)_ns"].points[]?[0]] == [.series.fail_median_ns.points[]?[0]]; "\($c)_\($s)_ns x differ")),
  (("window_lo", "window_hi") as $n | scalar($n; "address")),
  scalar("window_bytes"; "bytes"), scalar("stack_bytes"; "bytes"), scalar("capacity_stacks"; "count"),
  scalar("slope"; "slope"), scalar("slope_ci_lo"; "slope"), scalar("slope_ci_hi"; "slope"),
  scalar("fail_ns_at_max"; "ns"), scalar("max_vmas"; "vmas"), scalar("start_vmas"; "vmas"),
  check(.info.window_stopped_by == "window_full"; "window stopped by \(.info.window_stopped_by)"),
  check(.info.ladder_stopped_by | IN("window_full", "max_map_count", "budget", "target", "enomem"); "ladder_stopped_by \(.info.ladder_stopped_by)"),
  check(.info.class | IN("flat", "sublinear", "linear"); "class \(.info.class)"),
  check(.info.class == (.scalars.slope.value | class_of); "class \(.info.class) for slope \(.scalars.slope.value)"),
  check(.scalars.slope_ci_lo.value <= .scalars.slope.value and .scalars.slope.value <= .scalars.slope_ci_hi.value; "slope outside its CI"),
  check(.info.reps | type == "string" and test("^[0-9]+(,[0-9]+)*$"); "reps \(.info.reps)"),
  check((.info.reps // "" | split(",") | length) == (.series.fail_median_ns.points // [] | length); "one rep count per rung"),
  check(.scalars.window_lo.value < .scalars.window_hi.value and .scalars.window_hi.value <= 4294967296; "window outside the low 4 GiB"),
  check(.scalars.window_bytes.value == .scalars.window_hi.value - .scalars.window_lo.value; "window_bytes"),
  check(.scalars.start_vmas.value < .scalars.max_vmas.value and .scalars.max_vmas.value <= .info.max_map_count; "VMA ladder"),
  check(.scalars.fail_ns_at_max.value == (.series.fail_median_ns.points // [])[-1][1]; "fail_ns_at_max is not the last rung")
'

# --- threads and map32 as they are on this host --------------------------
run "$THREADS" "$TW_TMP/threads.json"
if [ "$(jq -r .status "$TW_TMP/threads.json")" = skipped ]; then
	verify "$TW_TMP/threads.json" 'protocol("threads")'
	echo "threads skipped: $(jq -r .reason "$TW_TMP/threads.json")"
	exit 77
fi
jq -e '.status == "ok"' "$TW_TMP/threads.json" >/dev/null ||
	fail "threads: $(jq -c '{status, reason}' "$TW_TMP/threads.json")"
verify "$TW_TMP/threads.json" "protocol(\"threads\"), $THREADS_NAMES"
ok "threads document: $(jq -c '{max_threads: .scalars.max_threads.value, clamp: .info.clamp_reason,
	low_knee: .info.low_knee, low_failures: .scalars.low_map32_failures.value,
	stacks: .info.default_stack_range, low: .info.default_stacks_low}' "$TW_TMP/threads.json")"

run "$MAP32" "$TW_TMP/map32.json"
jq -e '.status == "ok"' "$TW_TMP/map32.json" >/dev/null ||
	fail "map32: $(jq -c '{status, reason}' "$TW_TMP/map32.json")"
verify "$TW_TMP/map32.json" "protocol(\"map32\"), $MAP32_NAMES"
# The capacity is the window over stack plus guard; the kernel starts its
# MAP_32BIT search at a random point of the window's first 32 MiB, which
# can leave a few holes no stack fits in.
verify "$TW_TMP/map32.json" '
  ((.scalars.stack_bytes.value + .info.guard_bytes) as $len |
   (.scalars.window_bytes.value / $len | floor) as $fit |
   check(.scalars.capacity_stacks.value <= $fit and .scalars.capacity_stacks.value >= $fit - 1 - ($fit / 20 | floor);
         "capacity \(.scalars.capacity_stacks.value) for room for \($fit)"))'
ok "map32 document: $(jq -c '{window: [.info.window_lo, .info.window_hi], capacity: .scalars.capacity_stacks.value,
	slope: .scalars.slope.value, class: .info.class, fail_ns_at_max: .scalars.fail_ns_at_max.value,
	vmas: [.scalars.start_vmas.value, .scalars.max_vmas.value], reps: .info.reps}' "$TW_TMP/map32.json")"
# Kernels since 3.8 find free space in O(log n).
kver=$(uname -r | sed 's/[^0-9.].*//')
if [ "$(printf '%s\n3.8\n' "$kver" | sort -V | head -n1)" = 3.8 ]; then
	jq -e '.info.class == "flat"' "$TW_TMP/map32.json" >/dev/null ||
		fail "map32 on kernel $kver: class $(jq -r .info.class "$TW_TMP/map32.json"), expected flat"
	ok "kernel $kver: flat"
fi

# --- the same binaries on a simulated linear-search kernel ----------------
# More threads than --quick's default, so that the ramp runs well past the
# window; the probe's own budget still bounds the run.
# Under AddressSanitizer (make check-sanitize) its own cost per thread
# create hides the shim's: the threads document is checked there, its
# cliff only in an ordinary build.
asan=0
nm "$THREADS" 2>/dev/null | grep -q __asan_init && asan=1
run "$THREADS" "$TW_TMP/threads-shim.json" LD_PRELOAD="$SHIM" -- --max-threads 4096
verify "$TW_TMP/threads-shim.json" "protocol(\"threads\"), $THREADS_NAMES"
cap=$(jq .scalars.capacity_stacks.value "$TW_TMP/map32.json")
[ "$asan" = 1 ] || verify "$TW_TMP/threads-shim.json" "
  check(.scalars.low_knee != null; \"no knee in the low policy under the shim\"),
  check(.scalars.low_map32_failures.value > 0; \"no MAP_32BIT failures under the shim\"),
  check((.scalars.low_knee.value // 0) >= $cap - 64; \"knee at \(.scalars.low_knee.value) before the window (\($cap) stacks) was full\"),
  check(.info.default_knee == null and .info.high_knee == null; \"a knee outside the low policy\")"
ok "threads under the shim: $(jq -c '{low_knee: .scalars.low_knee.value, first: .scalars.low_first_rate.value,
	last: .scalars.low_last_rate.value, live: .info.low_live_max, stopped_by: .info.low_stopped_by}' "$TW_TMP/threads-shim.json")"

run "$MAP32" "$TW_TMP/map32-shim.json" LD_PRELOAD="$SHIM"
verify "$TW_TMP/map32-shim.json" "protocol(\"map32\"), $MAP32_NAMES"
verify "$TW_TMP/map32-shim.json" 'check(.info.class == "linear"; "class \(.info.class) under the shim")'
ok "map32 under the shim: $(jq -c '{slope: .scalars.slope.value, ci: [.scalars.slope_ci_lo.value, .scalars.slope_ci_hi.value],
	class: .info.class, fail_ns_at_max: .scalars.fail_ns_at_max.value, reps: .info.reps}' "$TW_TMP/map32-shim.json")"

# --- bad arguments get a usage message and a failure ----------------------
for args in "--max-threads 0" "--max-threads x" "--stack-size 1" "--bogus"; do
	# shellcheck disable=SC2086
	if "$THREADS" $args >/dev/null 2>"$TW_TMP/err"; then fail "threads $args succeeded"; fi
	grep -q usage "$TW_TMP/err" || fail "threads $args: no usage message"
done
# shellcheck disable=SC2086
if "$MAP32" --stack-size -5 >/dev/null 2>"$TW_TMP/err"; then fail "map32 --stack-size -5 succeeded"; fi
grep -q usage "$TW_TMP/err" || fail "map32 --stack-size -5: no usage message"
ok "bad arguments refused"
exit 0

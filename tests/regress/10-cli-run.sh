#!/usr/bin/env bash
# 10-cli-run: `threadwatch run` end to end: a real quick ctxsw run as one
# JSON document with every contract figure, a whole quick cycle within the
# run-queue bound, the readable table, usage
# errors (exit 2), and bad probes from --probe-dir and
# $THREADWATCH_PROBE_DIR reported as errors (exit 1).
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
TW=$B/threadwatch
[ -x "$TW" ] || fail "$TW not built"

# --- a real probe, as JSON ------------------------------------------------
out=$TW_TMP/run.json
"$TW" run --quick --json ctxsw >"$out" 2>"$TW_TMP/run.err" ||
	fail "run --quick --json ctxsw exited $?: $(cat "$TW_TMP/run.err")"
jq -e . "$out" >/dev/null || fail "output is not one JSON document"
[ "$(jq -r '.probes.ctxsw.status' "$out")" = ok ] ||
	fail "ctxsw not ok: $(jq -c '.probes.ctxsw | {status, reason}' "$out")"
for s in low_ns high_ns low_cycles high_cycles low_mad_ns high_mad_ns low_ci_lo low_ci_hi \
	high_ci_lo high_ci_hi ratio ratio_ci_lo ratio_ci_hi pairs switches_per_pair tsc_hz \
	fsgsbase low_fs_base high_fs_base low_stack high_stack; do
	jq -e --arg s "$s" '.probes.ctxsw.scalars[$s].value | numbers' "$out" >/dev/null ||
		fail "ctxsw scalar $s missing"
done
jq -e '.probes.ctxsw.series.pair_ratio.points | length >= 15' "$out" >/dev/null ||
	fail "ctxsw series pair_ratio has fewer than 15 pairs"
# The A/A control, equivalence, the selector arm, order, cycles,
# ring. The selector arm's figures where this host loads a selector; where
# it does not, the reason instead.
sel_scalars=""
if jq -e '.probes.ctxsw.info.selector_arm == true' "$out" >/dev/null; then
	sel_scalars="selector_ns selector_ratio selector_ratio_ci_lo selector_ratio_ci_hi"
else
	jq -e '.probes.ctxsw.info.selector | test("^(unavailable|failed while measured): ")' \
		"$out" >/dev/null || fail "no selector arm and no reason: $(jq -c .probes.ctxsw.info.selector "$out")"
fi
for s in aa_ratio aa_ratio_ci_lo aa_ratio_ci_hi equivalence_margin equivalent $sel_scalars; do
	jq -e --arg s "$s" '.probes.ctxsw.scalars[$s].value | numbers' "$out" >/dev/null ||
		fail "ctxsw scalar $s missing"
done
for i in selector order cycles_source; do
	jq -e --arg i "$i" '.probes.ctxsw.info[$i] | strings' "$out" >/dev/null ||
		fail "ctxsw info.$i missing"
done
jq -e '[.probes.ctxsw.series.ring_ns.points[][0]] | contains([2, 8, 64])' "$out" >/dev/null ||
	fail "ctxsw series ring_ns lacks 2, 8 or 64 threads"
for f in hostname kernel kernel_version glibc arch virtualization ncpus vulnerabilities \
	cpu.vendor cpu.family cpu.model cpu.stepping cpu.microcode cpu.model_name cpu.fsgsbase \
	limits.threads_max limits.pid_max limits.nproc_soft limits.stack_soft limits.pids_max \
	limits.max_map_count limits.overcommit_memory; do
	jq -e ".fingerprint | has(\"${f%%.*}\")" "$out" >/dev/null || fail "fingerprint.$f missing"
	case $f in *.*) jq -e ".fingerprint.${f%%.*} | has(\"${f#*.}\")" "$out" >/dev/null ||
		fail "fingerprint.$f missing" ;; esac
done
jq -e '.recommendation.result.verdict | test("^(low|high)$")' "$out" >/dev/null ||
	fail "no verdict: $(jq -c '.recommendation' "$out" | head -c 300)"
ok "run --quick --json ctxsw: ratio $(jq -r '.probes.ctxsw.scalars.ratio.value' "$out")" \
	"[$(jq -r '.probes.ctxsw.scalars.ratio_ci_lo.value' "$out"), $(jq -r \
		'.probes.ctxsw.scalars.ratio_ci_hi.value' "$out")]," \
	"verdict $(jq -r '.recommendation.result.verdict' "$out")"

# --- the table --------------------------------------------------------------
"$TW" run --quick ctxsw >"$TW_TMP/table.txt" || fail "run --quick ctxsw exited $?"
grep -Eq '^ctxsw +ok +[0-9.]+ s +low [0-9]+ ns' "$TW_TMP/table.txt" ||
	fail "no ctxsw row in the table: $(cat "$TW_TMP/table.txt")"
ok "table: $(grep '^ctxsw' "$TW_TMP/table.txt")"

# --- map32 and threads feed the recommendation's extra create cost ----------
# map32.fail_ns against the VMAs in the window, map32.retry_ns and
# plain_ns against all VMAs, and E from them (source "map32"), with the
# threads probe's own low - high beside it where it measured that far.
"$TW" run --quick --json map32 threads >"$TW_TMP/m.json" 2>"$TW_TMP/m.err" ||
	fail "run --quick --json map32 threads exited $?: $(cat "$TW_TMP/m.err") $(jq -c '.probes | map_values({status, reason})' "$TW_TMP/m.json" 2>&1 | head -c 600)"
jq -e '.recommendation.inputs.map32 as $m |
  ($m.fail_ns | length) >= 3 and ($m.retry_ns | length) >= 3 and ($m.plain_ns | length) >= 3 and
  $m.fail_ns[0][0] == .probes.map32.scalars.window_vmas.value and
  $m.retry_ns[-1][0] == .probes.map32.scalars.retry_max_vmas.value and $m.window_bytes > 0 and
  $m.window_vmas == .probes.map32.scalars.window_vmas.value and
  $m.outside_vmas == .probes.map32.scalars.start_vmas.value - .probes.map32.scalars.window_vmas.value and
  ($m.fill_ns | length) >= 3' \
	"$TW_TMP/m.json" >/dev/null || fail "map32 inputs: $(jq -c '.recommendation.inputs.map32' "$TW_TMP/m.json" | head -c 400)"
jq -e '.recommendation.result.figures | .extra_create_source == "map32" and
  .extra_create_fail_vmas == 2 * .window_stacks and
  .extra_create_vmas == .extra_create_window_vmas + .extra_create_outside_vmas + 2 * (.extra_create_at_threads - .window_stacks) and
  (.extra_total_ns - (.extra_ramp_ns + .extra_beyond_ns) | fabs) < 1e-3 * .extra_total_ns + 1e-6 and
  (.extra_create_ns | numbers) >= 0' "$TW_TMP/m.json" >/dev/null ||
	fail "E: $(jq -c '.recommendation.result.figures' "$TW_TMP/m.json" | head -c 600)"
"$TW" run --quick map32 >"$TW_TMP/m.txt" || fail "run --quick map32 exited $?"
grep -Eq '^map32 +ok .*fail (flat|sublinear|linear), retry (flat|sublinear|linear)' "$TW_TMP/m.txt" ||
	fail "no map32 row with both classes: $(cat "$TW_TMP/m.txt")"
ok "map32 feeds E: $(jq -c '.recommendation.result.figures | with_entries(select(.key | startswith("extra_create")))' "$TW_TMP/m.json")"

# The fingerprint's capabilities and hypervisor views, whatever
# this host is; without ctxsw nothing is probed; the table prints the same
# virtualization text as the JSON.
for f in virtualization_sources.cpuid virtualization_sources.kernel virtualization_sources.dmi \
	virtualization_sources.hypervisor_flag capabilities.ia32_emulation capabilities.thp \
	capabilities.pmu capabilities.constant_tsc capabilities.nonstop_tsc capabilities.clocksource \
	probed.ia32_int80 probed.selector_gdt probed.selector_ldt probed.cpus_allowed; do
	jq -e ".fingerprint.${f%%.*} | has(\"${f#*.}\")" "$TW_TMP/m.json" >/dev/null ||
		fail "fingerprint.$f missing"
done
jq -e '.fingerprint.probed | all(.[]; . == null)' "$TW_TMP/m.json" >/dev/null ||
	fail "probed without ctxsw: $(jq -c '.fingerprint.probed' "$TW_TMP/m.json")"
jq -e '.fingerprint | .virtualization_sources as $s | .virtualization as $v |
  if $s.cpuid == null then ($v | test("^unknown \\(CPUID") | not)
  elif ($v | startswith("unknown")) then ($v | startswith("unknown (CPUID says \($s.cpuid)"))
  else $v == $s.cpuid end' "$TW_TMP/m.json" >/dev/null ||
	fail "virtualization vs its sources: $(jq -c '.fingerprint | {virtualization, virtualization_sources}' "$TW_TMP/m.json")"
jq -e '.fingerprint.capabilities.pmu | . == null or . == "pmu" or . == "none"' "$TW_TMP/m.json" \
	>/dev/null || fail "capabilities.pmu: $(jq -c '.fingerprint.capabilities' "$TW_TMP/m.json")"
virt=$(jq -r '.fingerprint.virtualization' "$TW_TMP/m.json")
grep -qF "virtualization $virt, fsgsbase" "$TW_TMP/m.txt" || fail "the table's virtualization is not \"$virt\""
grep -q '^host capabilities: ia32 emulation .*, thp .*, pmu .*, clocksource ' "$TW_TMP/m.txt" ||
	fail "no host capabilities line: $(head -3 "$TW_TMP/m.txt")"
grep -q '^ctxsw proved' "$TW_TMP/m.txt" && fail "a ctxsw line without ctxsw"
ok "fingerprint: virtualization $virt; $(jq -c '.fingerprint.capabilities' "$TW_TMP/m.json")"

# --- a whole cycle, a good citizen ---------------------------------------
# Every built-in probe one after another, as a cycle runs them: the run
# queue stays within 8 of what the host ran without it (the bound of
# probes/PROTOCOL.md), and each probe is ok (createscale may be skipped on
# a busy host, which it says).
runq_gentle 500 "$TW_TMP/cycle.json" "$TW" run --quick --json
jq -e --arg want "$TW_BUILTINS" "$JQ_RUN_GOOD"' (.probes | keys | sort) == ($want | split(" ") | sort) and
	all(.probes | to_entries[]; run_good(.key; .value.status; .value.reason))' "$TW_TMP/cycle.json" >/dev/null ||
	fail "a whole quick cycle: $(jq -c '.probes | map_values({status, reason})' "$TW_TMP/cycle.json")"
ok "a whole quick cycle of $TW_NBUILTINS probes: run queue peak $RUNQ_PEAK, $RUNQ_HOST without it"

# --- usage errors exit 2 ----------------------------------------------------
expect_usage() {
	local rc
	"$TW" run "$@" >"$TW_TMP/usage.out" 2>"$TW_TMP/usage.err"
	rc=$?
	[ "$rc" = 2 ] || fail "run $* exited $rc, expected 2"
	grep -q "Try 'threadwatch run --help'" "$TW_TMP/usage.err" || fail "run $*: no pointer to --help"
	[ -s "$TW_TMP/usage.out" ] && fail "run $*: printed on stdout"
	return 0
}
expect_usage nosuchprobe
expect_usage ctxsw nosuchprobe
expect_usage --frobnicate
expect_usage -x
expect_usage --timeout
expect_usage --timeout abc
expect_usage --timeout -1
expect_usage --json=yes
expect_usage 'Bad/Name'
expect_usage --timeout 0s
expect_usage --timeout 2d
expect_usage --sched fifo
expect_usage --nice 20
expect_usage --nice -1
expect_usage --cpu
expect_usage --cpu -1
expect_usage --cpu first
expect_usage --cpu 8192
expect_usage --time 5 # no abbreviations
grep -q 'unknown option "--time"' "$TW_TMP/usage.err" || fail "--time: $(cat "$TW_TMP/usage.err")"
# "--" ends the options: what follows is a probe name, even with dashes
expect_usage -- --quick
grep -q 'unknown probe "--quick"' "$TW_TMP/usage.err" || fail "-- --quick: $(cat "$TW_TMP/usage.err")"
ok "unknown probes and bad flags exit 2 with a usage message"

# --- -h and --help: the usage on stdout, exit 0 ---------------------------------
for h in -h --help "--quick -h"; do
	# shellcheck disable=SC2086
	"$TW" run $h >"$TW_TMP/help.out" 2>"$TW_TMP/help.err" || fail "run $h exited $?"
	grep -q "usage: threadwatch run" "$TW_TMP/help.out" || fail "run $h: no usage on stdout"
	grep -q -- "--timeout DURATION" "$TW_TMP/help.out" || fail "run $h: no --timeout"
	[ -s "$TW_TMP/help.err" ] && fail "run $h wrote to stderr"
done
ok "run -h and --help print the usage"

# A duration with a unit is a time limit; options may follow the probe name.
"$TW" run ctxsw --quick --timeout 2m --json >"$TW_TMP/unit.json" 2>"$TW_TMP/unit.err" ||
	fail "run ctxsw --quick --timeout 2m: $(cat "$TW_TMP/unit.err")"
jq -e '.probes | length == 1' "$TW_TMP/unit.json" >/dev/null ||
	fail "--timeout 2m: not one probe document: $(head -c 300 "$TW_TMP/unit.json")"
ok "--timeout 2m after the probe name"

# --- bad probes from a probe directory --------------------------------------
pd=$TW_TMP/probes
mkdir -p "$pd"
printf '#!/bin/sh\nsleep 1000 &\nwhile :; do sleep 0.1; done\n' >"$pd/hang"
printf '#!/bin/sh\nkill -SEGV $$\n' >"$pd/crash"
cat >"$pd/hello" <<'EOF'
#!/bin/sh
printf '{"probe":"hello","protocol":1,"status":"ok","reason":null,"started_at":"2026-01-01T00:00:00Z","started_unix":1,"duration_s":0,"scalars":{"answer":{"value":42,"unit":"count"}}}\n'
EOF
chmod 755 "$pd/hang" "$pd/crash" "$pd/hello"

# --- how gently probes run: the idle I/O class at the caller's policy and
# niceness by default (an operator asked for figures now; the CLI has no
# quiet-host guard); --sched idle and --nice N (the daemon's defaults are
# idle and 10) when asked. The policy is field 41 of /proc/PID/stat (5: SCHED_IDLE).
cat >"$pd/prio" <<'EOF'
#!/bin/sh
pol=$(cut -d' ' -f41 /proc/$$/stat)
io=$(ionice -p $$ | cut -d: -f1)
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$$/status)
printf '{"probe":"prio","protocol":1,"status":"ok","reason":null,"started_at":"2026-01-01T00:00:00Z","started_unix":1,"duration_s":0,"scalars":{"policy":{"value":%s,"unit":"count"},"nice":{"value":%s,"unit":"count"}},"info":{"io":"%s","cpus":"%s"}}\n' "$pol" "$(nice)" "$io" "$cpus"
EOF
chmod 755 "$pd/prio"
base_nice=$(nice)
prio() {
	"$TW" run --json --probe-dir "$pd" "$@" prio | jq -c '.probes.prio | [.scalars.policy.value, .scalars.nice.value, .info.io]'
}
want() { local n=$(($1 + base_nice)); [ $n -gt 19 ] && n=19; echo "[$2,$n,\"idle\"]"; }
[ "$(prio)" = "$(want 0 "$(cut -d' ' -f41 /proc/$$/stat)")" ] || fail "default: $(prio)"
[ "$(prio --sched idle --nice 3)" = "$(want 3 5)" ] ||
	fail "--sched idle --nice 3: $(prio --sched idle --nice 3), expected $(want 3 5)"
# Each document records what it was measured under (a SCHED_IDLE switch
# costs more than a normal one): the built-in stackmem, which runs briefly.
cond=$("$TW" run --json --quick --sched idle --nice 3 stackmem | jq -c '.probes.stackmem.info | [.sched_policy, .nice, .cpus_allowed != null]')
[ "$cond" = "[\"idle\",$(want 3 5 | jq '.[1]'),true]" ] || fail "the document's run conditions: $cond"
ok "probes run in the idle I/O class at the caller's policy and nice; --sched idle --nice 3: SCHED_IDLE at nice +3, which the document records"

# Where: by default each probe is pinned to one CPU, not CPU 0 when another
# is allowed (the kernel's Cpus_allowed_list); --cpu all leaves the caller's
# set; --cpu N pins to N; a CPU outside the set is the probe's error.
cpus_of() { "$TW" run --json --probe-dir "$pd" "$@" prio | jq -r '.probes.prio.info.cpus // .probes.prio.reason'; }
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$$/status)
last=$(taskset -pc $$ | sed 's/.*: //; s/.*[,-]//')
pinned=$(cpus_of)
[[ $pinned =~ ^[0-9]+$ ]] || fail "default: the probe may run on CPUs $pinned, expected one"
[ "$(nproc)" -eq 1 ] || [ "$pinned" -ne 0 ] || fail "default: pinned to CPU 0 with $(nproc) CPUs"
[ "$(cpus_of --cpu all)" = "$mine" ] || fail "--cpu all: $(cpus_of --cpu all), expected $mine"
[ "$(cpus_of --cpu "$last")" = "$last" ] || fail "--cpu $last: $(cpus_of --cpu "$last")"
# A CPU outside the set is a usage error before any probe starts.
"$TW" run --json --probe-dir "$pd" --cpu 8191 prio >"$TW_TMP/cpu.json" 2>"$TW_TMP/cpu.err"
rc=$?
[ $rc -eq 2 ] || fail "--cpu 8191 (not allowed): exit $rc, expected 2"
[ -s "$TW_TMP/cpu.json" ] && fail "--cpu 8191: a probe ran: $(cat "$TW_TMP/cpu.json")"
grep -q -- "--cpu 8191: this process may run only on CPUs" "$TW_TMP/cpu.err" ||
	fail "--cpu 8191: $(cat "$TW_TMP/cpu.err")"
ok "probes pinned to CPU $pinned by default; --cpu all: $mine; --cpu $last; --cpu 8191 refused"

"$TW" run --json --timeout 1 --probe-dir "$pd" hang >"$TW_TMP/hang.json"
rc=$?
[ "$rc" = 1 ] || fail "a hanging probe gave exit $rc, expected 1"
reason=$(jq -r '.probes.hang.reason' "$TW_TMP/hang.json")
[ "$(jq -r '.probes.hang.status' "$TW_TMP/hang.json")" = error ] || fail "hang not an error"
[ "$reason" = "killed after the 1 s time limit" ] || fail "hang reason: $reason"
ok "hanging probe: error \"$reason\""

THREADWATCH_PROBE_DIR=$pd "$TW" run crash hello >"$TW_TMP/mixed.txt"
rc=$?
[ "$rc" = 1 ] || fail "crash + hello gave exit $rc, expected 1"
grep -Eq '^crash +error .*crashed with SIGSEGV' "$TW_TMP/mixed.txt" ||
	fail "no crash row: $(cat "$TW_TMP/mixed.txt")"
grep -Eq '^hello +ok .*answer 42' "$TW_TMP/mixed.txt" ||
	fail "no hello row: $(cat "$TW_TMP/mixed.txt")"
THREADWATCH_PROBE_DIR=$pd "$TW" run hello >/dev/null || fail "a good user probe gave exit $?"
ok "THREADWATCH_PROBE_DIR: crash reported, a user's own probe ran"

# Two selector figures, each named by what it compares: the table's
# selector/high (in-process) and selector/control (against a child process,
# the one the reasons use), so neither reads as the other.
sd=$TW_TMP/selprobe
mkdir -p "$sd"
cat >"$sd/ctxsw" <<'EOF'
#!/bin/sh
s() { printf '"%s": {"value": %s, "unit": "%s"}' "$1" "$2" "$3"; }
printf '{"probe":"ctxsw","protocol":1,"status":"ok","reason":null,"started_at":"2026-01-01T00:00:00Z","started_unix":1,"duration_s":1,"info":{"fsgsbase":"on"},"scalars":{%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s}}\n' \
	"$(s low_ns 1800 ns)" "$(s high_ns 1801 ns)" "$(s ratio 0.9995 ratio)" "$(s ratio_ci_lo 0.998 ratio)" \
	"$(s ratio_ci_hi 1.001 ratio)" "$(s selector_ratio 1.002 ratio)" "$(s selector_ratio_ci_lo 1.000 ratio)" \
	"$(s selector_ratio_ci_hi 1.005 ratio)" "$(s selector_child_ratio 1.004 ratio)" \
	"$(s selector_child_ratio_ci_lo 1.001 ratio)" "$(s selector_child_ratio_ci_hi 1.006 ratio)"
EOF
chmod 755 "$sd/ctxsw"
out=$(THREADWATCH_PROBE_DIR=$sd "$TW" run ctxsw 2>&1)
grep -q 'selector/high 1.002 \[1.000, 1.005\]' <<<"$out" && grep -q 'selector/control 1.004 \[1.001, 1.006\]' <<<"$out" ||
	fail "the table does not name both selector comparisons: $out"
tr '\n' ' ' <<<"$out" | tr -s ' ' | grep -q 'switch at 1.004 times the time of high stacks sampled the same way, in a child process' ||
	fail "the reasons do not use selector/control's figure: $out"
ok "two selector figures, each named: selector/high and selector/control (the reasons')"

# Each create rate in the table says what it measures: the threads probe's
# creates of threads it keeps alive (by stack policy), createscale's create
# and join in turn; no rate is named by a bare policy or cache word.
rd=$TW_TMP/rateprobes
mkdir -p "$rd"
cat >"$rd/threads" <<'EOF'
#!/bin/sh
s() { printf '"%s": {"value": %s, "unit": "%s"}' "$1" "$2" "$3"; }
printf '{"probe":"threads","protocol":1,"status":"ok","reason":null,"started_at":"2026-01-01T00:00:00Z","started_unix":1,"duration_s":1,"info":{},"scalars":{%s,%s,%s,%s}}\n' \
	"$(s default_first_rate 69925 per_s)" "$(s low_first_rate 65347 per_s)" "$(s high_first_rate 64000 per_s)" \
	"$(s max_threads 10000 threads)"
EOF
cat >"$rd/createscale" <<'EOF'
#!/bin/sh
s() { printf '"%s": {"value": %s, "unit": "%s"}' "$1" "$2" "$3"; }
printf '{"probe":"createscale","protocol":1,"status":"ok","reason":null,"started_at":"2026-01-01T00:00:00Z","started_unix":1,"duration_s":1,"info":{},"scalars":{%s,%s,%s}}\n' \
	"$(s cached_1_rate 53712 per_s)" "$(s nocache_1_rate 30000 per_s)" "$(s nocache_2_efficiency 0.6 ratio)"
EOF
chmod 755 "$rd/threads" "$rd/createscale"
out=$(THREADWATCH_PROBE_DIR=$rd "$TW" run threads createscale 2>&1)
grep -Eq '^threads +ok .*kept alive, default 69,?925/s, kept alive, low 65,?347/s' <<<"$out" &&
	grep -Eq '^createscale +ok .*create\+join, cached 53,?712/s' <<<"$out" ||
	fail "the table does not say what each create rate measures: $out"
grep -Eq '(  |/s, )(low|high|default|cached|nocache) [0-9,]+/s' <<<"$out" &&
	fail "a create rate named by a bare word: $out"
ok "each create rate says what it measures: $(grep -E '^(threads|createscale) ' <<<"$out" | tr -s ' ' | tr '\n' ';')"

# Every built-in probe fails: no verdict from assumptions alone.
mkdir -p "$TW_TMP/failing"
for p in $TW_BUILTINS; do printf '#!/bin/sh\nexit 3\n' >"$TW_TMP/failing/$p"; chmod +x "$TW_TMP/failing/$p"; done
out=$(THREADWATCH_PROBE_DIR=$TW_TMP/failing "$TW" run 2>&1)
[ $? = 1 ] || fail "all probes failing did not exit 1: $out"
# The verdict stays at glibc's default with no confidence, and names each
# failed probe and why.
grep -q "^verdict: high stacks (glibc's default, MAP_STACK), confidence: none" <<<"$out" ||
	fail "a confident verdict without data: $out"
grep -q '^Nothing to change until the probes have answered' <<<"$out" || fail "the plain sentence: $out"
for p in ctxsw threads map32; do
	grep -q "^  - $p: exited with status 3 without a document" <<<"$out" || fail "$p's failure is not named: $out"
done
grep -q "threads' last run failed" <<<"$out" || fail "no plural possessive: $out"
out=$(THREADWATCH_PROBE_DIR=$TW_TMP/failing "$TW" recommend 2>&1)
# recommend exits 3 when a probe it needed failed.
[ $? = 3 ] && grep -q "^  - ctxsw: exited with status 3" <<<"$out" || fail "recommend without data: $out"
ok "no probe data: \"not enough data yet\", no verdict"
# The CLI is built from cli/ and lib/ only: it links no daemon library.
if command -v ldd >/dev/null; then
	libs=$(ldd "$TW" | grep -E 'libsystemd|libmicrohttpd|libsqlite3')
	[ -z "$libs" ] || fail "threadwatch links a daemon library: $libs"
	ok "ldd threadwatch: no libsystemd, libmicrohttpd or libsqlite3"
fi
exit 0

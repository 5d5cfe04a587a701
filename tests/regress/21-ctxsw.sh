#!/usr/bin/env bash
# 21-ctxsw: the ctxsw probe's document. Every field it must
# carry; `equivalent` agreeing with its CI; the A/A control's CI holding
# 1.0; the selector arm run with info.selector set and its threads' FS
# really loaded from that selector where this host loads selectors, and
# missing with the fault named where it does not (tests/tools/segcheck finds
# out which, without the probe's code); the run times of --quick and of the
# default run; then the CLI and a daemon cycle on a host whose descriptors
# are written but fault when loaded (tests/shim/seg_not_present.c, issue
# 23), which must still succeed. Every other kind of host (no segment path,
# the LDT fallback, paths refused before or after the proof, no PMU, no
# FSGSBASE) is 22-hostkinds' matrix.
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
CTXSW=$B/probes/ctxsw
NOTPRESENT=$B/tests/seg_not_present.so
for f in "$CTXSW" "$NOTPRESENT" "$B/tests/segcheck"; do [ -e "$f" ] || fail "'$f' is not built"; done
[ "$(uname -m)" = x86_64 ] || { echo "the segment arm exists only on x86-64"; exit 77; }

# What this host does with selectors: HOST_SEL is the check a native run
# must pass, selector_ran where a GDT (int $0x80) or LDT selector loads.
"$B/tests/segcheck" >"$TW_TMP/segcheck" || fail "segcheck failed"
seg() { awk -v k="$1" '$1 == k { print $2 }' "$TW_TMP/segcheck"; }
if [ "$(seg int80)" = ok ] || [ "$(seg ldt_load)" = ok ]; then
	HOST_SEL=selector_ran
else
	HOST_SEL=selector_missing
fi
echo "this host: $(tr '\n' ' ' <"$TW_TMP/segcheck")-> $HOST_SEL"

# run OUT [ENV...] -- ARGS: runs ctxsw, keeps its document, fails unless ok.
run() {
	local out=$1
	local -a envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	env "${envs[@]}" "$CTXSW" "$@" >"$out" 2>"$out.err" ||
		fail "ctxsw ${envs[*]} $*: exit $? ($(cat "$out.err"))"
	jq -e '.status == "ok"' "$out" >/dev/null ||
		fail "ctxsw ${envs[*]} $*: $(jq -c '{status, reason}' "$out")"
}

# jq checks print one line per violated rule; `verify FILE PROGRAM` fails
# if there is any.
CHECKS='
def check(cond; msg): if cond then empty else msg end;
def sc($n): .scalars[$n].value;
def scalar($n; $u): check(.scalars[$n].unit == $u and (.scalars[$n].value | type) == "number"; "scalar \($n) missing or not in \($u)");
def series($n; $xu; $yu): check(.series[$n].x_unit == $xu and .series[$n].y_unit == $yu and (.series[$n].points | length) > 0; "series \($n) missing, empty or in the wrong units");
def in_ci($p): check(sc("\($p)ratio_ci_lo") <= sc("\($p)ratio") and sc("\($p)ratio") <= sc("\($p)ratio_ci_hi"); "\($p)ratio outside its CI");
# equivalent is read from the 90% CI (a TOST at alpha 0.05): where the
# probe gives that CI it must agree exactly; where only the 95% CI is
# given, one inside the margin must say equivalent and one wholly outside
# it must not.
def equiv($p): (sc("equivalence_margin")) as $m |
  if .scalars["\($p)ratio_ci90_lo"] then
    check(sc("\($p)equivalent") == (if sc("\($p)ratio_ci90_lo") >= 1 - $m and sc("\($p)ratio_ci90_hi") <= 1 + $m then 1 else 0 end);
          "\($p)equivalent \(sc("\($p)equivalent")) disagrees with its 90% CI [\(sc("\($p)ratio_ci90_lo")), \(sc("\($p)ratio_ci90_hi"))] at margin \($m)")
  else
    check((sc("\($p)ratio_ci_lo") >= 1 - $m and sc("\($p)ratio_ci_hi") <= 1 + $m | not) or sc("\($p)equivalent") == 1;
          "\($p)equivalent 0 though its 95% CI lies inside the margin"),
    check((sc("\($p)ratio_ci_lo") > 1 + $m or sc("\($p)ratio_ci_hi") < 1 - $m | not) or sc("\($p)equivalent") == 0;
          "\($p)equivalent 1 though its 95% CI lies outside the margin")
  end;
def arm($a; $ratio):
  scalar("\($a)_ns"; "ns"), scalar("\($a)_mad_ns"; "ns"), scalar("\($a)_ci_lo"; "ns"), scalar("\($a)_ci_hi"; "ns"),
  (if .info.cycles_source != "none" then scalar("\($a)_cycles"; "cycles") else empty end),
  (if $ratio then
    (if $a == "low" then "" else "\($a)_" end) as $p |
    scalar("\($p)ratio"; "ratio"), scalar("\($p)ratio_ci_lo"; "ratio"), scalar("\($p)ratio_ci_hi"; "ratio"),
    scalar("\($p)equivalent"; "bool"), series("\($p)pair_ratio"; "count"; "ratio"),
    check(.info["\($p)signed_rank_p"] | type == "number" and . >= 0 and . <= 1; "\($p)signed_rank_p"),
    check(.info["\($p)tost_p"] | type == "number" and . >= 0 and . <= 1; "\($p)tost_p"),
    in_ci($p), equiv($p)
  else empty end);
def common:
  arm("low"; true), arm("high"; false), arm("aa"; true),
  scalar("equivalence_margin"; "ratio"), check(sc("equivalence_margin") == 0.02; "margin \(sc("equivalence_margin")), default 0.02"),
  scalar("pairs"; "count"), check(sc("pairs") >= 15; "fewer than 15 blocks"),
  series("ring_ns"; "threads"; "ns"),
  check([.series.ring_ns.points[][0]] | contains([2, 8, 64]); "ring_ns lacks 2, 8 or 64 threads"),
  # A hop takes at least one switch (the next thread is switched in);
  # from 4 threads a woken thread may preempt its waker: more than one.
  # Without schedstat the probe says the switches were not counted.
  (if .series.ring_switches_per_hop then
     series("ring_switches_per_hop"; "threads"; "ratio"),
     check([.series.ring_switches_per_hop.points[][1]] | all(. >= 0.95 and . < 4); "switches per hop \(.series.ring_switches_per_hop.points)"),
     check(.info.ring_switches | startswith("counted"); "info.ring_switches \(.info.ring_switches)")
   else check(.info.ring_switches | startswith("not counted"); "no ring_switches_per_hop and no reason") end),
  check(.info.order | IN("abba", "random"); "order \(.info.order)"),
  check(.info.cycles_source | IN("perf", "tsc", "none"); "cycles_source \(.info.cycles_source)"),
  check(.info.cycles_source == "perf" or (.info.cycles_why | type == "string"); "no cycles_why for \(.info.cycles_source)"),
  check(.info.cpu | type == "number"; "info.cpu"),
  check(.info.smt_siblings | type == "string" and length > 0; "info.smt_siblings"),
  check(.info.cpu_choice | type == "string"; "info.cpu_choice"),
  check(.info.main_cpu != .info.cpu; "the main thread shares the measured CPU"),
  check(.info.aa_biased == ((sc("aa_ratio_ci_lo") <= 1 and 1 <= sc("aa_ratio_ci_hi")) | not); "aa_biased disagrees with the A/A CI"),
  check(.info.aa_verdict | type == "string" and test("^(the A/A CI excludes 1.0: a bias of this size is possible, or a 1-in-20 chance|no bias shown: )"); "aa_verdict"),
  check(sc("low_fs_base") < 4294967296 and sc("high_fs_base") >= 4294967296; "FS bases on the wrong side of 4 GiB"),
  check(.info.low_fs_is_self and .info.high_fs_is_self and .info.aa_fs_is_self; "an FS base is not its thread");
def selector_ran:
  arm("selector"; true),
  # Its control: high stacks sampled in a child process the same way, and
  # the selector read against it.
  arm("child"; true),
  scalar("selector_child_ratio"; "ratio"), scalar("selector_child_ratio_ci_lo"; "ratio"),
  scalar("selector_child_ratio_ci_hi"; "ratio"), series("selector_child_pair_ratio"; "count"; "ratio"),
  in_ci("selector_child_"),
  check(.info.child_biased == ((sc("child_ratio_ci_lo") <= 1 and 1 <= sc("child_ratio_ci_hi")) | not); "child_biased disagrees with the child CI"),
  check(.info.child_fs_selector == "0x0" and .info.child_fs_is_self and (sc("child_fs_base") >= 4294967296); "the child arm is not high stacks with a plain FS"),
  series("ring_selector_ns"; "threads"; "ns"),
  check(.info.selector_arm == true; "selector_arm is not true"),
  check(.info.selector | test("^0x[0-9a-f]+$"); "info.selector \(.info.selector)"),
  check(.info.selector_fs_selector == .info.selector and .info.selector_fs_selector_b != "0x0"; "selector threads run with FS \(.info.selector_fs_selector), \(.info.selector_fs_selector_b)"),
  check(.info.selector_fs_is_self and .info.selector_fs_is_self_b; "a selector thread FS base is not its TCB"),
  check(.info.selector_fs_base | ltrimstr("0x") | length <= 8; "the selector FS base is above 4 GiB"),
  check(.info.low_fs_selector == "0x0" and .info.high_fs_selector == "0x0"; "a plain thread has an FS selector"),
  check(.info.selector_path | type == "string"; "selector_path");
def selector_missing:
  check(.info.selector_arm == false; "selector_arm \(.info.selector_arm) where no selector loads"),
  check(.info.selector | test("^unavailable: GDT: .*; LDT: "); "info.selector: \(.info.selector)"),
  check(.info.selector_ldt | test("loading selector 0x7 into %fs: the test process was killed by SIG|modify_ldt: "); "info.selector_ldt: \(.info.selector_ldt)"),
  check(.info.ia32_int80 | test("^(works|faults: the test process was killed by SIG)"); "info.ia32_int80: \(.info.ia32_int80)"),
  check(.scalars.selector_ns == null and .scalars.selector_ratio == null and .series.ring_selector_ns == null; "selector figures without a selector arm"),
  check(.scalars.child_ns == null and .scalars.selector_child_ratio == null; "a selector control without a selector arm");
def proved:
  check(.info.selector_gdt | type == "string"; "info.selector_gdt"),
  check(.info.selector_ldt | type == "string"; "info.selector_ldt"),
  check(.info.ia32_int80 | type == "string"; "info.ia32_int80");
'
verify() {
	local file=$1 prog=$2 bad
	bad=$(jq -r "$CHECKS $prog" "$file") || fail "jq failed on '$file'"
	[ -z "$bad" ] || fail "$(basename "$file"): $bad"
}
summary() {
	jq -c '{d: .duration_s, blocks: .scalars.pairs.value,
		ratio: [.scalars.ratio_ci_lo.value, .scalars.ratio.value, .scalars.ratio_ci_hi.value],
		aa: [.scalars.aa_ratio_ci_lo.value, .scalars.aa_ratio.value, .scalars.aa_ratio_ci_hi.value],
		sel: [.scalars.selector_ratio_ci_lo.value, .scalars.selector_ratio.value, .scalars.selector_ratio_ci_hi.value],
		child: [.scalars.child_ratio_ci_lo.value, .scalars.child_ratio.value, .scalars.child_ratio_ci_hi.value],
		sel_child: [.scalars.selector_child_ratio_ci_lo.value, .scalars.selector_child_ratio.value, .scalars.selector_child_ratio_ci_hi.value],
		ns: [.scalars.high_ns.value, .scalars.selector_ns.value], cycles: [.scalars.high_cycles.value, .scalars.selector_cycles.value],
		equivalent: .scalars.equivalent.value, ring: .series.ring_ns.points, src: .info.cycles_source, sel_path: .info.selector_path}' "$1"
}

# --- quick runs: every field; the A/A control -----------------------------
# A 95% CI misses the truth in 5% of unbiased runs, so one run whose A/A CI
# excludes 1.0 shows nothing; three such runs in a row (a chance of 1 in
# 8000 without bias) do. Every run must also keep its A/A ratio within 5%
# of 1.0, far wider than any CI seen here, and label itself consistently.
aa_held=0
for seed in 1 2 3; do
	out=$TW_TMP/ctxsw-$seed.json
	run "$out" -- --quick --seed "$seed"
	verify "$out" "common, proved, $HOST_SEL"
	verify "$out" 'check((sc("aa_ratio") - 1) | fabs < 0.05; "A/A ratio \(sc("aa_ratio")) is more than 5% off 1.0")'
	verify "$out" 'check(.duration_s < 10; "--quick took \(.duration_s) s")'
	ok "quick, seed $seed: $(summary "$out")"
	if jq -e '.info.aa_biased == false' "$out" >/dev/null; then aa_held=1; break; fi
done
[ "$aa_held" = 1 ] || fail "the A/A CI excluded 1.0 in three runs in a row: the design is biased"
ok "the A/A CI holds 1.0"

# --- the default run: within 10 s -----------------------------------------
out=$TW_TMP/ctxsw-default.json
run "$out" --
verify "$out" "common, proved, $HOST_SEL"' , check(.duration_s <= 10; "the default run took \(.duration_s) s")'
ok "default: $(summary "$out")"

# --- written but not loadable: the arm is missing, the run ok ----
LD_PRELOAD="$NOTPRESENT" "$B/tests/segcheck" >"$TW_TMP/segcheck-np"
grep -qx 'ldt_present 0' "$TW_TMP/segcheck-np" || fail "the seg_not_present double left the P bit set: $(cat "$TW_TMP/segcheck-np")"
# --- the CLI and a daemon cycle under the same double ------------------------
LD_PRELOAD="$NOTPRESENT" "$B/threadwatch" run --quick --json ctxsw >"$TW_TMP/cli-np.json" ||
	fail "threadwatch run under seg_not_present exited $?"
jq -e '.probes.ctxsw.status == "ok" and .probes.ctxsw.info.selector_arm == false and
	(.probes.ctxsw.scalars.high_ns.value | numbers)' "$TW_TMP/cli-np.json" >/dev/null ||
	fail "threadwatch run under seg_not_present: $(jq -c '.probes.ctxsw | {status, reason, sel: .info.selector}' "$TW_TMP/cli-np.json")"
ok "threadwatch run under seg_not_present: ctxsw ok, $(jq -c .probes.ctxsw.info.selector_ldt "$TW_TMP/cli-np.json")"
. "$(dirname "$0")/lib-daemon.sh"
fake_probe "$TW_TMP/probes" threads ok
fake_probe "$TW_TMP/probes" map32 ok
fake_probe "$TW_TMP/probes" handoff ok
fake_probe "$TW_TMP/probes" stackmem ok
fake_probe "$TW_TMP/probes" createscale ok
ln -s "$CTXSW" "$TW_TMP/probes/ctxsw"
DAEMON_ENV=(LD_PRELOAD="$NOTPRESENT")
start_daemon np
wait_cycle 1 120
st=$(api /api/v1/status | jq -r .last_cycle_status)
run=$(runs_json | jq -c '[.[] | select(.probe == "ctxsw")][0]')
[ "$st" = ok ] || fail "the daemon's cycle under seg_not_present: $st; ctxsw $run"
jq -e '.status == "ok"' <<<"$run" >/dev/null || fail "the daemon's ctxsw run: $run"
# What ctxsw proved is on the host card as soon as the cycle ended (issue
# 36: it lagged until the next fingerprint check, a minute later).
doc_ldt=$(api "/api/v1/runs/$(jq -r .id <<<"$run")" | jq -r .doc.info.selector_ldt)
host_ldt=$(api /api/v1/host | jq -r .current.fingerprint.probed.selector_ldt)
[ "$host_ldt" = "$doc_ldt" ] || fail "/api/v1/host right after the cycle: selector_ldt \"$host_ldt\", the run proved \"$doc_ldt\""
stop_daemon
ok "a daemon cycle under seg_not_present: $st, ctxsw $(jq -c '{status}' <<<"$run")"

# --- arms switched off (probes_disabled = ctxsw.selector, ctxsw.aa) ---------
out=$TW_TMP/ctxsw-skip.json
run "$out" -- --quick --skip-arm selector --skip-arm aa
jq -e '.params.skip_arms == "selector,aa" and .info.selector == "disabled (--skip-arm selector)" and
	.info.selector_arm == false and .info.selector_gdt == null and .info.aa == "disabled (--skip-arm aa)" and
	.scalars.aa_ns == null and .scalars.aa_ratio == null and .scalars.selector_ns == null and
	(.scalars.low_ns.value | numbers) and (.scalars.ratio.value | numbers)' "$out" >/dev/null ||
	fail "ctxsw --skip-arm selector --skip-arm aa: $(jq -c '{params, sel: .info.selector, aa: .info.aa, aa_ns: .scalars.aa_ns}' "$out")"
ok "arms switched off: only low and high measured, each skipped arm said so"

# --- bad arguments ----------------------------------------------------------
for args in "--margin 0" "--margin 0.5" "--margin x" "--bogus"; do
	# shellcheck disable=SC2086
	if "$CTXSW" $args >/dev/null 2>"$TW_TMP/err"; then fail "ctxsw $args succeeded"; fi
	grep -q usage "$TW_TMP/err" || fail "ctxsw $args: no usage message"
done
ok "bad arguments refused"
# --- the run queue: a 64-thread ring starts and ends one thread at a time
# procs_running sampled every 2 ms (tests/tools/runq) around a quick run,
# whose ring reaches 64 threads, pinned to one CPU as the runner pins it
# (probe_cpu = quiet): at most 8 runnable tasks above what the host runs
# without it. Its start once put 64 there; then its end did, each joined
# thread still queued on the CPU while the joiner went on to the next
# (procs_running 66 on a 2-CPU KVM guest, kernel 6.18; probes/lib/joinq.h).
cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
runq_gentle 500 "$TW_TMP/ctxsw-runq.json" taskset -c "$cpu" "$CTXSW" --quick
jq -e '.status == "ok"' "$TW_TMP/ctxsw-runq.json" >/dev/null ||
	fail "the run under runq: $(jq -c '{status, reason}' "$TW_TMP/ctxsw-runq.json")"
ok "run queue during ctxsw --quick on CPU $cpu (ring of 64): peak $RUNQ_PEAK, $RUNQ_HOST without it"
exit 0

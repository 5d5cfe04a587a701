#!/usr/bin/env bash
# 22-hostkinds: the host-kind matrix. Every kind of host the
# fleet has, as a set of faithful doubles (tests/shim/*.c, each citing the
# kernel function it follows), runs the ctxsw probe on whatever host this
# is, and each must give the outcome that kind gives: the path taken, why
# the other was not, what is missing and why, and an ok run with its low,
# high and A/A figures whatever is missing.
#
# What this host can do decides what a double can stand on: a kind that
# needs a selector to really load (the measurement is the load) cannot be
# modelled where no selector loads, and is said so, not skipped silently.
# On the three kinds known so far: everything runs on an Intel Xeon or AMD
# Zen 4 KVM guest (int $0x80 and LDT loads work); on the AMD EPYC PVM guest
# the kinds that need a loading selector are reported as not modelled.
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "the segment paths exist only on x86-64"; exit 77; }
CTXSW=$B/probes/ctxsw
for f in "$CTXSW" "$B/tests/segcheck"; do [ -e "$f" ] || fail "'$f' is not built"; done
so() { local f=$B/tests/$1.so; [ -e "$f" ] || fail "'$f' is not built"; printf '%s' "$f"; }
NOSEG=$(so no_segments) NOTPRESENT=$(so seg_not_present) TLS=$(so tls_refused)
NOPMU=$(so no_pmu) NOFSGS=$(so no_fsgsbase)

# This host, found without the probe's code (tests/tools/segcheck).
"$B/tests/segcheck" >"$TW_TMP/segcheck" || fail "segcheck failed"
seg() { awk -v k="$1" '$1 == k { print $2 }' "$TW_TMP/segcheck"; }
H_INT80=$([ "$(seg int80)" = ok ] && echo 1 || echo 0)
H_LDT=$([ "$(seg ldt_load)" = ok ] && echo 1 || echo 0)
# tls_refused answers through the real gate where there is one, else with
# the errno do_set_thread_area()'s checks give before any gate is needed.
GATE=$([ "$H_INT80" = 1 ] && echo real || echo model)
echo "this host: $(tr '\n' ' ' <"$TW_TMP/segcheck")"

CHECKS='
def check(c; m): if c then empty else m end;
def sc($n): .scalars[$n].value;
def base: check(.status == "ok"; "status \(.status): \(.reason)"),
  check([sc("low_ns"), sc("high_ns"), sc("aa_ns"), sc("ratio")] | all(type == "number"); "low, high or A/A figures missing"),
  check(.info.selector_gdt | type == "string"; "no info.selector_gdt"),
  check(.info.selector_ldt | type == "string"; "no info.selector_ldt"),
  check(.info.ia32_int80 | type == "string"; "no info.ia32_int80");
def ran($path; $sel): check(.info.selector_arm == true; "no selector arm: \(.info.selector)"),
  check(.info.selector == $sel; "selector \(.info.selector), not \($sel)"),
  check(.info.selector_path | startswith($path); "path \(.info.selector_path), not \($path)"),
  check(.info.selector_fs_selector == $sel; "selector threads ran with FS \(.info.selector_fs_selector)"),
  check(sc("selector_ns") | type == "number"; "no selector_ns");
def missing: check(.info.selector_arm == false; "a selector arm where none loads"),
  check(.info.selector | startswith("unavailable: GDT: "); "selector \(.info.selector)"),
  check(sc("selector_ns") == null; "selector figures without an arm");
def lost($re): check(.info.selector_arm == false; "the arm survived"),
  check(.info.selector | test("^failed while measured: " + $re); "selector \(.info.selector), not /\($re)/"),
  check(sc("selector_ns") == null; "selector figures from a lost arm");
def has($k; $re): check(.info[$k] | type == "string" and test($re); "\($k): \(.info[$k]), not /\($re)/");
'
# kind NAME "WHAT" "PRELOAD..." "ENV..." JQ: runs ctxsw --quick under the
# kind's doubles and checks the document against base and JQ.
pass=0
kind() {
	local name=$1 what=$2 pre=$3 envs=$4 prog=$5 out=$TW_TMP/$1.json bad
	# shellcheck disable=SC2086
	env LD_PRELOAD="$pre" $envs "$CTXSW" --quick >"$out" 2>"$out.err" ||
		fail "$name ($what): ctxsw exited $? ($(cat "$out.err"))"
	bad=$(jq -r "$CHECKS base, $prog" "$out") || fail "$name: jq failed on $out"
	[ -z "$bad" ] || fail "$name ($what): $bad"
	ok "$name ($what): $(jq -c '.info | {selector, why: (.selector_path_why // null), gdt: .selector_gdt, ldt: .selector_ldt}' "$out")"
	pass=$((pass + 1))
}
not_here() { echo "not modelled on this host: $1 ($2): $3"; }
# What the LDT fallback gives here: the arm on LDT selectors, or missing
# with the host's own fault (a PVM guest).
if [ "$H_LDT" = 1 ]; then LDT_OK='ran("LDT"; "0x7")'; else LDT_OK='missing'; fi

# --- GDT through int $0x80 works: the Intel Xeon and AMD Zen 4 KVM guests -
if [ "$H_INT80" = 1 ]; then
	kind gdt "GDT via int \$0x80 works" "" "" \
		'ran("GDT"; "0x63"), has("selector_path_why"; "^GDT: the first way tried"), has("ia32_int80"; "^works$")'
else
	not_here gdt "GDT via int \$0x80 works" "no int \$0x80 gate here, and the selector load is what the arm measures"
fi

# --- no IA32 emulation, LDT written but its load faults: the PVM guest ---
# The load of a not-present descriptor faults as the host's kernel reports
# it: #NP, which exc_segment_not_present() turns into SIGBUS, on bare metal
# and KVM guests; a #GP (SIGSEGV, "general protection fault" in the kernel's
# log) on a PVM guest's kernel, whose LDT the hypervisor keeps. Either is
# the load faulting; the double leaves the answer to the kernel.
kind pvm "no IA32 emulation; LDT written, load faults" "$NOSEG $NOTPRESENT" "NO_SEGMENTS_KEEP_LDT=1" \
	'missing, has("ia32_int80"; "^faults: the test process was killed by SIGSEGV"),
	 has("selector_ldt"; "^written, but loading selector 0x7 into %fs: the test process was killed by SIG(BUS|SEGV)"),
	 has("selector_gdt"; "no IA32 emulation")'

# --- set_thread_area refused from the start: the LDT fallback, said why ---
for e in esrch:"No such process \\\\(no free TLS slot" einval:"Invalid argument \\\\(the descriptor was refused: tls_desc_okay"; do
	kind "gdt-refused-${e%%:*}" "set_thread_area -${e%%:*} from the start" "$TLS" "TLS_REFUSED=${e%%:*} TLS_REFUSED_GATE=$GATE" \
		"$LDT_OK, has(\"selector_gdt\"; \"^set_thread_area through int \\\\\$0x80: ${e#*:}\"),
		 if .info.selector_arm then has(\"selector_path_why\"; \"^LDT, because the GDT way does not work: set_thread_area.*${e#*:}\") else empty end"
done

# --- set_thread_area refused after the proof: the arm is dropped, said why -
if [ "$H_INT80" = 1 ]; then
	for e in esrch:"No such process" einval:"Invalid argument"; do
		rm -f "$TW_TMP/tls-count"
		kind "gdt-refused-${e%%:*}-later" "set_thread_area -${e%%:*} after the proof" "$TLS" \
			"TLS_REFUSED=${e%%:*} TLS_REFUSED_AFTER=2 TLS_REFUSED_COUNT=$TW_TMP/tls-count" \
			"lost(\"cannot load an FS selector in a selector thread: ${e#*:}\"), has(\"selector_gdt\"; \"^loads\")"
	done
	# A GDT host whose descriptors turn not present: the kernel refuses
	# them (tls_desc_okay()), it never faults.
	rm -f "$TW_TMP/np-count"
	kind gdt-not-present-later "GDT descriptors not present after the proof" "$NOTPRESENT" \
		"SEG_NOT_PRESENT_AFTER=4 SEG_NOT_PRESENT_COUNT=$TW_TMP/np-count" \
		'lost("cannot load an FS selector in a selector thread: Invalid argument")'
else
	not_here gdt-refused-later "set_thread_area refused after the proof" "the proof needs a GDT selector that loads"
fi

# --- an LDT host whose selectors stop loading after the proof: SIGBUS -----
if [ "$H_LDT" = 1 ]; then
	rm -f "$TW_TMP/np-count"
	kind ldt-not-present-later "LDT descriptors not present after the proof" "$TLS $NOTPRESENT" \
		"TLS_REFUSED=esrch TLS_REFUSED_GATE=$GATE SEG_NOT_PRESENT_AFTER=3 SEG_NOT_PRESENT_COUNT=$TW_TMP/np-count" \
		'lost("the selector arm.s process was killed by SIGBUS")'
else
	not_here ldt-not-present-later "LDT selectors fault after the proof" "no LDT selector loads here to begin with"
fi

# --- modify_ldt missing (ENOSYS), IA32 emulation on ----------------------
if [ "$H_INT80" = 1 ]; then GDT_OK='ran("GDT"; "0x63")'; else GDT_OK='missing'; fi
kind no-modify-ldt "modify_ldt ENOSYS" "$NOSEG" "NO_SEGMENTS_KEEP_INT80=1" \
	"$GDT_OK, has(\"selector_ldt\"; \"^modify_ldt: Function not implemented\")"

# --- no IA32 emulation, modify_ldt works ---------------------------------
kind no-ia32 "no IA32 emulation, LDT kept" "$NOSEG" "NO_SEGMENTS_KEEP_LDT=1" \
	"$LDT_OK, has(\"ia32_int80\"; \"^faults: the test process was killed by SIGSEGV\"),
	 if .info.selector_arm then has(\"selector_path_why\"; \"no IA32 emulation\") else empty end"

# --- neither way ---------------------------------------------------------
kind no-segments "neither int \$0x80 nor modify_ldt" "$NOSEG" "" \
	'missing, has("selector"; "int \\$0x80.*modify_ldt: Function not implemented")'

# --- no PMU: the TSC counts, and says why --------------------------------
kind no-pmu "no core PMU" "$NOPMU" "" \
	'check(.info.cycles_source != "perf"; "perf counted without a PMU"),
	 has("cycles_why"; "perf_event_open\\(PERF_COUNT_HW_CPU_CYCLES\\): No such file or directory")'

# --- no FSGSBASE for user space ------------------------------------------
# Modelled as the kernel tells it (AT_HWCAP2); the CPU underneath keeps
# wrfsbase, so the figures stay this host's (tests/shim/no_fsgsbase.c).
kind no-fsgsbase "no FSGSBASE (HWCAP2)" "$NOFSGS" "" \
	'check(sc("fsgsbase") == 0; "fsgsbase \(sc("fsgsbase"))"),
	 if .info.selector_arm then has("selector_switch"; "^no FSGSBASE") else empty end'

ok "$pass host kinds gave their outcome on this host"

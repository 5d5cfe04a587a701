#!/usr/bin/env bash
# 24-stackmem: the memory an idle thread holds, by stack kind. The document
# keeps the protocol and has every kind at both sizes; what it says follows
# from what it proved about this host, not from one host's figures, and from
# how the kernel lets THP back a stack: thp_vma_allowable_orders()
# (include/linux/huge_mm.h) and __thp_vma_allowable_orders()
# (mm/huge_memory.c), which probes/stackmem.c follows above kinds[]:
#  - a VM_NOHUGEPAGE mapping gets no huge page, so a kernel that maps
#    MAP_STACK so (the "nh" flag the probe read from /proc/self/smaps) gives
#    MAP_STACK stacks no AnonHugePages;
#  - AnonHugePages counts PMD-size (2 MiB) pages, a size that follows THP
#    enabled while hugepages-2048kB/enabled is "inherit", its default:
#    "never" gives no stack one, "madvise" none but the MADV_HUGEPAGE kind
#    (VM_HUGEPAGE); the khugepaged sentence names the mode;
#  - resident memory per thread holds its huge pages (Rss >= AnonHugePages).
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
S=$B/probes/stackmem
[ -x "$S" ] || fail "\"$S\" is not built"

"$S" --quick >"$TW_TMP/s.json" || fail "stackmem exited $?"
bad=$(jq -r '
def check(c; m): if c then empty else m end;
def sc($n): .scalars[$n].value;
check(.probe == "stackmem" and .status == "ok"; "status \(.status): \(.reason)"),
# the huge-page kind is left out, saying why, when memory is short
check(.info.huge_skipped == null or (.scalars.huge_bytes_per_thread == null); "huge measured though skipped"),
(["glibc", "map_stack", "plain", "huge"][] as $k | select($k != "huge" or .info.huge_skipped == null) |
  ["", "_2m"][] as $s | ($k + $s) as $a |
  check((sc($a + "_bytes_per_thread") | type) == "number" and .scalars[$a + "_bytes_per_thread"].unit == "bytes"; "\($a)_bytes_per_thread"),
  check(sc($a + "_huge_bytes_per_thread") >= 0; "\($a)_huge_bytes_per_thread"),
  check(sc($a + "_bytes_per_thread") >= 0.9 * sc($a + "_huge_bytes_per_thread"); "\($a): Rss below its huge pages"),
  # the lowest and highest of the rounds: a CI of the median
  check(sc($a + "_bytes_per_thread_ci_lo") <= sc($a + "_bytes_per_thread") and
        sc($a + "_bytes_per_thread") <= sc($a + "_bytes_per_thread_ci_hi"); "\($a)_bytes_per_thread outside its CI")),
(if .info.map_stack_nohugepage == true then
   check(sc("map_stack_huge_bytes_per_thread") == 0 and sc("map_stack_2m_huge_bytes_per_thread") == 0; "MAP_STACK stacks on huge pages where MAP_STACK is VM_NOHUGEPAGE")
 else empty end),
(if .info.thp_enabled == "never" then
   check([.scalars | to_entries[] | select(.key | endswith("_huge_bytes_per_thread")) | .value.value] | all(. == 0); "huge pages under THP never"),
   check(.info.khugepaged | startswith("THP never"); "khugepaged: \(.info.khugepaged)")
 elif .info.thp_enabled == "madvise" then
   check(sc("glibc_huge_bytes_per_thread") == 0 and sc("plain_huge_bytes_per_thread") == 0; "huge pages without MADV_HUGEPAGE under THP madvise"),
   check(.info.khugepaged | startswith("THP madvise"); "khugepaged: \(.info.khugepaged)")
 elif .info.thp_enabled == "always" then
   check(.info.khugepaged | startswith("THP always: khugepaged may later collapse"); "khugepaged: \(.info.khugepaged)")
 else empty end),
check(.info.mthp_sizes | type == "string"; "mthp_sizes"),
# huge pages named with their cost and the fix, wherever a stack gets them
(if (sc("glibc_huge_bytes_per_thread") > 0 or sc("plain_huge_bytes_per_thread") > 0 or
     (sc("huge_bytes_per_thread") // 0) >= 1048576) then
   check(.info.huge_pages | type == "string" and test("[0-9]+ KiB"); "huge_pages: \(.info.huge_pages)"),
   check(.info.fix | type == "string" and contains("glibc.pthread.stack_hugetlb=0"); "fix: \(.info.fix)")
 else check(.info.fix == null; "a fix without huge pages: \(.info.fix)") end)
' "$TW_TMP/s.json") || fail "jq failed"
[ -z "$bad" ] || fail "$bad: $(jq -c '{scalars: (.scalars | map_values(.value)), info}' "$TW_TMP/s.json")"
ok "per idle thread: $(jq -c '{glibc: .scalars.glibc_bytes_per_thread.value, map_stack: .scalars.map_stack_bytes_per_thread.value,
	plain: .scalars.plain_bytes_per_thread.value, huge: .scalars.huge_bytes_per_thread.value,
	thp: .info.thp_enabled, nh: .info.map_stack_nohugepage} | map_values(if type == "number" then (. / 1024 | floor | tostring) + " KiB" else . end)' "$TW_TMP/s.json")"

"$B/threadwatch" run --quick --json stackmem >"$TW_TMP/run.json" || fail "threadwatch run stackmem exited $?"
jq -e '.probes.stackmem.status == "ok"' "$TW_TMP/run.json" >/dev/null ||
	fail "threadwatch run stackmem: $(jq -c '.probes.stackmem | {status, reason}' "$TW_TMP/run.json")"
ok "threadwatch run stackmem: ok"

# A good citizen: a default run pinned to one CPU, as the runner pins it,
# keeps the run queue within 8 of what the host ran without it
# (tests/regress/lib.sh). Its batches of 16 once started all at once and
# were woken all at once: procs_running peaked at 16 on a 2-CPU guest.
cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
runq_gentle 500 "$TW_TMP/runq.json" taskset -c "$cpu" "$S"
jq -e '.status == "ok"' "$TW_TMP/runq.json" >/dev/null || fail "the run under runq: $(jq -c '{status, reason}' "$TW_TMP/runq.json")"
ok "run queue during a default stackmem run on CPU $cpu: peak $RUNQ_PEAK, $RUNQ_HOST without it"

if "$S" --bogus >/dev/null 2>"$TW_TMP/err"; then fail "--bogus succeeded"; fi
grep -q usage "$TW_TMP/err" || fail "--bogus: no usage message"
ok "bad arguments refused"

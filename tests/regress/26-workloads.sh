#!/usr/bin/env bash
# 26-workloads: `threadwatch workloads` finds services of known behaviour
# (tests/tools/twload, which counts its own truth) beside unrelated load,
# as a new user would run it: a process creating 2,000 threads a second,
# two threads handing a futex word across CPUs, 200 threads on stacks that
# huge pages back, 200 on glibc's stacks, and a process named with a
# terminal escape and markup, counted by the BPF counter where it can load
# and by the proc connector. Then the paths this host may not take: no
# PAGEMAP_SCAN (a double of the pre-6.7 kernel), no CAP_BPF, no
# CAP_NET_ADMIN, and a PID namespace of its own, where both are deaf.
# (WORKLOADS_WINDOW, default 8s, sets the main window.)
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
TW=$B/threadwatch L=$B/tests/twload
[ -x "$TW" ] && [ -x "$L" ] || fail "threadwatch or twload is not built"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
start() { twload_start "$1" 150 "${@:2}"; } # start NAME ARGS...
# bad input: a clear message and exit 2, before any window
for args in "--by nonsense" "--for 0" "--for 2d" "--top x" "--costs $TW_TMP/none.json" "extra"; do
	# shellcheck disable=SC2086
	"$TW" workloads $args >"$TW_TMP/bad.out" 2>"$TW_TMP/bad.err"
	rc=$?
	[ "$rc" = 2 ] && [ -s "$TW_TMP/bad.err" ] && [ ! -s "$TW_TMP/bad.out" ] ||
		fail "workloads $args: exit $rc, \"$(cat "$TW_TMP/bad.err")\""
done
echo '[1, 2]' | "$TW" workloads --costs - 2>"$TW_TMP/bad.err" && fail "--costs took an array"
grep -q 'not a JSON object' "$TW_TMP/bad.err" || fail "--costs -: $(cat "$TW_TMP/bad.err")"
ok "bad options and bad --costs: exit 2 with a message, nothing on standard output"

# truth NAME FIELD: FIELD per second between the process's last two
# SIGUSR1 lines, its own count
truth() {
	awk -v f="$2" '$1 == "t" {n++; for (i = 1; i < NF; i++) if ($i == f) v[n] = $(i + 1); t[n] = $2}
		END {printf "%.3f", (v[n] - v[n - 1]) / (t[n] - t[n - 1])}' "$TW_TMP/$1.out"
}
thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)

# unrelated load: a busy loop at nice 19
nice -n 19 bash -c 'while :; do :; done' &
pids+=($!)
start creator create 2000
start pinger pingpong 1000
[ "$thp" = never ] || [ -z "$thp" ] || start huge thpstacks 200
start glibc glibcstacks 200 --name glibcpark
start evil glibcstacks 2 --name $'\e[31m<i id=x>"}'

# the window, as a new user runs it; each service's truth is taken at the
# window's two ends, which the command names on standard error (the probes
# it runs after the window load the host, and slow a service that cannot
# keep its pace, as under the sanitizers)
"$TW" workloads --json --by process --for "${WORKLOADS_WINDOW:-8s}" >"$TW_TMP/w.json" 2>"$TW_TMP/w.err" &
wp=$!
wait_for grep -q 'watching for' "$TW_TMP/w.err" || fail "workloads did not start: $(cat "$TW_TMP/w.err")"
kill -USR1 "$creator" "$pinger"
for _ in $(seq 1 300); do
	grep -q "measuring this host's costs" "$TW_TMP/w.err" && break
	kill -0 "$wp" 2>/dev/null || break
	sleep 0.1
done
kill -USR1 "$creator" "$pinger"
wait "$wp" || fail "workloads exited $?: $(cat "$TW_TMP/w.err")"
marks creator 2
marks pinger 2
cr=$(truth creator creates) sw=$(truth pinger switches) wsw=$(truth creator switches)
# the same with taskstats: the switches of the threads that ended too;
# counted by the proc connector rather than the BPF counter
kill -USR1 "$creator"
"$TW" workloads --json --by process --for 4s --no-costs --exact-switches --no-bpf >"$TW_TMP/x.json" 2>"$TW_TMP/x.err" ||
	fail "workloads --exact-switches exited $?: $(cat "$TW_TMP/x.err")"
kill -USR1 "$creator"
marks creator 4
csw=$(truth creator switches) xcr=$(truth creator creates)
echo "truth: $cr creates/s, $sw switches/s; THP $thp"

bad=$(jq -r --argjson c "$creator" --argjson p "$pinger" --argjson g "$glibc" \
	--argjson h "${huge:-0}" --argjson cr "$cr" --argjson sw "$sw" '
def check(c; m): if c then empty else m end;
def w($pid): [.workloads[] | select(.pids | index($pid))][0];
check(.mechanisms.creates.available == true; "neither counter counted: \(.mechanisms.creates.why)"),
check((w($c).creates_per_s - $cr | fabs) <= 0.1 * $cr; "creates_per_s \(w($c).creates_per_s), truth \($cr)"),
check((w($c).exits_per_s - $cr | fabs) <= 0.1 * $cr; "exits_per_s \(w($c).exits_per_s), truth \($cr)"),
check((w($p).switches_per_s.total - $sw | fabs) <= 0.25 * $sw; "switches_per_s \(w($p).switches_per_s.total), truth \($sw)"),
check(w($p).switches_per_s.voluntary + w($p).switches_per_s.involuntary - w($p).switches_per_s.total | fabs < 1e-6; "voluntary + involuntary != total"),
check(w($p).threads == 2 and w($g).threads == 201; "threads \(w($p).threads), \(w($g).threads)"),
check(w($g).stacks.count >= 200 and w($g).stacks.resident_bytes > 0; "glibc stacks \(w($g).stacks)"),
check(w($g).kind == "process" and w($g).comm == "glibcpark" and (w($g).exe | endswith("twload")); "glibc workload \(w($g) | {kind, comm, exe})"),
check([.workloads[] | .costs and .findings and (.switches_per_s != 0)] | all; "a workload without costs or findings"),
check(.mechanisms | (.switches.source and .stacks.source and .migrations.what); "mechanisms incomplete"),
check(.observer.share_of_cpu >= 0 and .observer.threads_read > 200; "observer cost \(.observer)"),
(if $h > 0 then
  check(w($h).stacks.thp_backed >= 180; "\(w($h).stacks.thp_backed) of 200 stacks on huge pages"),
  check((w($h).stacks.thp_bytes / w($h).stacks.thp_backed - 2097152 | fabs) <= 0.15 * 2097152; "thp_bytes \(w($h).stacks.thp_bytes) for \(w($h).stacks.thp_backed) stacks"),
  check([w($h).findings[] | select(.kind == "thp_stacks" and (.finding | test("huge pages")) and (.fix | test("MAP_STACK")))] | length == 1; "no huge-page finding: \(w($h).findings)")
 else empty end)
' "$TW_TMP/w.json")
[ -z "$bad" ] || fail "$bad"
ok "creates, exits, switches and stacks match their truth ($cr creates/s, $sw switches/s; counted by $(jq -r '.mechanisms.creates.mechanism.counter' "$TW_TMP/w.json"))"
# the BPF counter (root here holds CAP_BPF and CAP_PERFMON): the host's own
# count of created tasks agrees with what it counted, and its run time in
# the kernel is in the observer's cost
if [ "$(id -u)" = 0 ]; then
	jq -e '.mechanisms.creates | .mechanism.counter == "bpf" and .mechanism.lost == 0 and
		.thread_creates_heard > 0 and (.missed | fabs) <= 0.01 * .host_tasks_created + 5 and
		.exits.event_filter == true and (.exits.source | test("derived"))' "$TW_TMP/w.json" >/dev/null ||
		fail "the BPF counter: $(jq -c '.mechanisms.creates' "$TW_TMP/w.json")"
	jq -e '.observer.in_kernel_s > 0 and .observer.share_of_cpu * .observer.wall_s >= .observer.cpu_s + .observer.in_kernel_s - 1e-6' \
		"$TW_TMP/w.json" >/dev/null || fail "the BPF counter's run time is not in the cost: $(jq -c .observer "$TW_TMP/w.json")"
	ok "the BPF counter agrees with /proc/stat and its run time is in the observer's cost"
	# the parked processes ran nothing: taskstats's sums tell them quiet,
	# and their threads are not read at the end
	jq -e --argjson g "$glibc" '([.workloads[] | select(.pids | index($g))][0].quiet_processes == 1) and
		(.mechanisms.switches.quiet | .available and .tally.threads_not_read >= 201)' "$TW_TMP/w.json" >/dev/null ||
		fail "the glibc park was not found quiet: $(jq -c '.mechanisms.switches.quiet' "$TW_TMP/w.json")"
	ok "quiet processes' threads not read: $(jq -c '.mechanisms.switches.quiet.tally' "$TW_TMP/w.json")"
fi

# threads that end take their switches with them, unless taskstats reports
# them: a lower bound, said so; then exact, within 10% of the truth
jq -e --argjson c "$creator" --argjson t "$wsw" '[.workloads[] | select(.pids | index($c))][0] |
	.switches_exact == false and .switches_per_s.total < $t' "$TW_TMP/w.json" >/dev/null ||
	fail "without taskstats the creator's switches are not a lower bound said so (truth $wsw)"
if jq -e '.mechanisms.switches.exited_threads.available' "$TW_TMP/x.json" >/dev/null; then
	xs=$(jq --argjson c "$creator" '[.workloads[] | select(.pids | index($c))][0] | [.switches_exact, .switches_per_s.total]' "$TW_TMP/x.json")
	jq -e --argjson t "$csw" '.[0] == true and ((.[1] - $t) | fabs) <= 0.1 * $t' <<<"$xs" >/dev/null ||
		fail "with taskstats the creator's switches [exact, per s] are $xs, truth $csw"
	ok "switches of threads that end: a lower bound without taskstats, exact with it ($(jq -c . <<<"$xs") against $csw)"
else
	ok "taskstats is not to be had here: $(jq -r .mechanisms.switches.exited_threads.why "$TW_TMP/x.json")"
fi

# the connector's filter (cn_filter(), Linux 6.6): FORK and EXEC alone, the
# exits derived from each process's threads (the main window's exits,
# checked against the truth above, were those where the kernel filters);
# then a listener the kernel ignores, as cn_proc_mcast_ctl() before 6.6
# ignores a struct proc_input (its length is not the bare op's): every
# event comes, EXIT too, and the exits are heard
kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2)
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -ge 6 ]; }; then
	jq -e '.mechanisms.creates | .mechanism.counter == "connector" and .exits.event_filter == true and
		.thread_exits_heard == null and (.exits.source | test("derived"))' "$TW_TMP/x.json" >/dev/null ||
		fail "Linux $(uname -r) did not filter: $(jq -c '.mechanisms.creates.exits' "$TW_TMP/x.json")"
fi
jq -e --argjson c "$creator" --argjson t "$xcr" '[.workloads[] | select(.pids | index($c))][0] |
	((.creates_per_s - $t) | fabs) <= 0.1 * $t and ((.exits_per_s - $t) | fabs) <= 0.1 * $t' "$TW_TMP/x.json" >/dev/null ||
	fail "the connector's creates and exits (truth $xcr/s): $(jq -c --argjson c "$creator" '[.workloads[] | select(.pids | index($c))][0] | [.creates_per_s, .exits_per_s]' "$TW_TMP/x.json")"
# (without CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN, where setpriv can
# drop them: the BPF counter cannot load, and the connector counts)
nobpf=-bpf,-perfmon,-sys_admin
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	drop=(setpriv --bounding-set=$nobpf --inh-caps=$nobpf) nobpf_opt=()
else
	drop=(env) nobpf_opt=(--no-bpf)
fi
kill -USR1 "$creator"
THREADWATCH_TEST_CN_FILTER_LEN=12 "${drop[@]}" "$TW" workloads --json --by process --for 2s --no-costs "${nobpf_opt[@]}" >"$TW_TMP/f.json" 2>"$TW_TMP/f.err" ||
	fail "workloads with an ignored filter exited $?: $(cat "$TW_TMP/f.err")"
kill -USR1 "$creator"
marks creator 6
fcr=$(truth creator creates)
jq -e --argjson c "$creator" --argjson t "$fcr" '(.mechanisms.creates | .exits.event_filter == false and
	(.exits.why_not_filtered | test("6[.]6")) and .thread_exits_heard > 0) and
	([.workloads[] | select(.pids | index($c))][0] | ((.exits_per_s - $t) | fabs) <= 0.1 * $t)' \
	"$TW_TMP/f.json" >/dev/null ||
	fail "an ignored filter (truth $fcr/s): $(jq -c --argjson c "$creator" '[.mechanisms.creates.exits, ([.workloads[] | select(.pids | index($c))][0] | .exits_per_s)]' "$TW_TMP/f.json")"
ok "exits derived where the kernel filters EXIT out, heard where it ignores the filter ($fcr/s)"

# glibc's stacks get no huge page, unless THP is always and the kernel
# predates MAP_STACK's VM_NOHUGEPAGE (6.8): then they may, truly
if [ "$thp" != always ] || [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -ge 8 ]; }; then
	n=$(jq --argjson g "$glibc" '[.workloads[] | select(.pids | index($g))][0].stacks.thp_backed' "$TW_TMP/w.json")
	[ "$n" = 0 ] || fail "$n glibc stacks on huge pages (THP $thp)"
	ok "no glibc stack on huge pages"
fi

# the text: a table dearest first, the hostile name escaped
"$TW" workloads --by process --for 1s --costs "$TW_TMP/w.json" --top 0 >"$TW_TMP/w.txt" 2>&1 ||
	fail "workloads (text) exited $?"
! grep -q $'\e' "$TW_TMP/w.txt" || fail "a raw ESC byte in the text"
grep -qF '\x1b[31m<i id=x>' "$TW_TMP/w.txt" || fail "the escaped name is not in the table: $(cat "$TW_TMP/w.txt")"
grep -q '^WORKLOAD ' "$TW_TMP/w.txt" || fail "no table header"
ok "the text holds no control byte and shows the name escaped"
jq -e --argjson e "$evil" '[.workloads[] | select(.pids | index($e))][0].comm == "\u001b[31m<i id=x>\"}"' \
	"$TW_TMP/w.json" >/dev/null || fail "the JSON does not carry the name as written"
ok "the JSON carries the name as written"

# by unit (the default): the twloads named twload are one workload here,
# where no unit or cgroup of their own holds them; with --no-event-filter
# the BPF counter's exit program counts each thread's exit
kill -USR1 "$creator"
"$TW" workloads --json --for 2s --no-costs --no-event-filter >"$TW_TMP/u.json" 2>/dev/null ||
	fail "workloads --by unit"
kill -USR1 "$creator"
marks creator 8
ucr=$(truth creator creates)
jq -e --argjson c "$creator" --argjson p "$pinger" \
	'[.workloads[] | select((.pids | index($c)) and (.pids | index($p)))] | length == 1' \
	"$TW_TMP/u.json" >/dev/null || fail "the creator and the pinger are not one workload by default"
ok "workloads group processes by executable and comm where no unit holds them"
# (as root the BPF counter loads here, as in the main window)
if [ "$(id -u)" = 0 ]; then
	jq -e '.mechanisms.creates | .mechanism.counter == "bpf" and .exits.event_filter == false and
		.thread_exits_heard > 0' "$TW_TMP/u.json" >/dev/null ||
		fail "the exit program: $(jq -c '.mechanisms.creates' "$TW_TMP/u.json")"
	jq -e --argjson c "$creator" --argjson t "$ucr" '[.workloads[] | select(.pids | index($c))][0] |
		((.creates_per_s - $t) | fabs) <= 0.1 * $t and ((.exits_per_s - $t) | fabs) <= 0.1 * $t' \
		"$TW_TMP/u.json" >/dev/null ||
		fail "exits counted one by one (truth $ucr/s): $(jq -c --argjson c "$creator" '[.workloads[] | select(.pids | index($c))][0] | [.creates_per_s, .exits_per_s]' "$TW_TMP/u.json")"
	ok "with --no-event-filter the BPF counter counts each exit ($ucr/s)"
fi

# SIGINT ends the window early, with a document; on a kernel before 6.7
# (a double: no PAGEMAP_SCAN) smaps of the stack mappings instead
pre=()
[ -z "${huge:-}" ] || pre=(env LD_PRELOAD="$B/tests/no_pagemap_scan.so")
"${pre[@]}" "$TW" workloads --json --by process --for 60s --no-costs >"$TW_TMP/i.json" 2>/dev/null &
p=$!
sleep 1.5
kill -INT $p
wait $p || fail "workloads exited $? after SIGINT"
jq -e '.window_s < 30 and (.workloads | length) > 0' "$TW_TMP/i.json" >/dev/null || fail "no document after SIGINT"
ok "SIGINT ends the window early and the document still comes"
if [ -n "${huge:-}" ]; then
	jq -e --argjson h "$huge" '(.mechanisms.stacks.source | test("smaps")) and
		([.workloads[] | select(.pids | index($h))][0].stacks.thp_backed >= 180)' "$TW_TMP/i.json" >/dev/null ||
		fail "the smaps fallback: $(jq -c '.mechanisms.stacks' "$TW_TMP/i.json")"
	ok "without PAGEMAP_SCAN the smaps fallback finds the same huge-page stacks"
fi

# the BPF counter could not load for the ignored filter's window above
# (no CAP_BPF and CAP_PERFMON): the proc connector counted, and says why;
# without CAP_NET_ADMIN too, creates and exits are unseen, and said so,
# not zeros
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	jq -e '.mechanisms.creates | .available and .mechanism.counter == "connector" and
		(.mechanism.bpf_why | test("CAP_BPF and CAP_PERFMON"))' "$TW_TMP/f.json" >/dev/null ||
		fail "without CAP_BPF: $(jq -c '.mechanisms.creates' "$TW_TMP/f.json")"
	ok "without CAP_BPF and CAP_PERFMON the proc connector counts, and says why"
	# a kernel without bpf(2), and one without the raw tracepoints (doubles:
	# tests/shim/no_bpf.c): the connector counts, and bpf_why says which
	for m in nosys notp; do
		TW_NO_BPF=$m LD_PRELOAD="$B/tests/no_bpf.so" "$TW" workloads --json --for 1s --no-costs \
			>"$TW_TMP/nb.json" 2>/dev/null || fail "workloads on a kernel without BPF ($m) exited $?"
		want=$([ $m = nosys ] && echo "no bpf\\(2\\)" || echo "no such raw tracepoint")
		jq -e --arg w "$want" '.mechanisms.creates | .available and .mechanism.counter == "connector" and
			(.mechanism.bpf_why | test($w))' "$TW_TMP/nb.json" >/dev/null ||
			fail "without BPF ($m): $(jq -c '.mechanisms.creates' "$TW_TMP/nb.json")"
	done
	ok "without bpf(2) or its raw tracepoints (doubles) the proc connector counts, and says why"
	setpriv --bounding-set=$nobpf,-net_admin --inh-caps=$nobpf,-net_admin "$TW" workloads --json --for 1s --no-costs \
		>"$TW_TMP/n.json" 2>/dev/null || fail "workloads without CAP_NET_ADMIN exited $?"
	jq -e '(.mechanisms.creates.available == false) and (.mechanisms.creates.why | test("CAP_NET_ADMIN") and test("CAP_BPF")) and
		([.workloads[].creates_per_s] | all(. == null)) and ([.workloads[].switches_per_s] | any(. != null))' \
		"$TW_TMP/n.json" >/dev/null || fail "without CAP_NET_ADMIN: $(jq -c '.mechanisms.creates' "$TW_TMP/n.json")"
	jq -e '.mechanisms.switches.quiet | .available == false and (.why | test("CAP_NET_ADMIN")) and (.tally == null)' \
		"$TW_TMP/n.json" >/dev/null || fail "without CAP_NET_ADMIN, quiet: $(jq -c '.mechanisms.switches.quiet' "$TW_TMP/n.json")"
	ok "without CAP_NET_ADMIN and CAP_BPF creates are null, and why; every thread is read"
	# a PID namespace of its own: cn_proc ignores the listener
	if unshare --pid --fork --mount-proc true 2>/dev/null; then
		unshare --pid --fork --mount-proc "$TW" workloads --json --for 1s --no-costs >"$TW_TMP/c.json" 2>/dev/null ||
			fail "workloads in a PID namespace exited $?"
		jq -e '(.mechanisms.creates.available == false) and (.mechanisms.creates.why | test("namespace")) and
			([.workloads[].creates_per_s] | all(. == null)) and (.workloads | length) >= 1' "$TW_TMP/c.json" >/dev/null ||
			fail "in a PID namespace: $(jq -c '.mechanisms.creates' "$TW_TMP/c.json")"
		ok "in a PID namespace of its own the deaf connector is named, not counted as zero"
	fi
fi

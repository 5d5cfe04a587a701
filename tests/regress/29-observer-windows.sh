#!/usr/bin/env bash
# 29-observer-windows: threadwatch-observer window after window, as the
# service runs. Each window's end is the next one's start: after the
# first, a window takes the threads it knew (`threads_carried`) from the
# last one's end instead of reading them again, and keeps one open file
# per thread between windows, no more; yet every window's figures
# match the services' own truth (tests/tools/twload: a process creating
# 1,000 threads a second, two threads switching, 200 parked threads).
# The parked process is quiet in windows 1 and 3 (taskstats's sums of its
# threads unchanged: they are not read again) and wakes every thread once
# in window 2, which must count each of those switches.
# --stdout prints each window as a line of JSON, --windows N stops.
# Alone: the two switching threads' rate swings with other scripts' load,
# and a window's truth is marked up to a second off the observer's reads.
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root (the observer's connector and other users' files)"; exit 77; }
OBS=$B/threadwatch-observer
[ -x "$OBS" ] || fail "threadwatch-observer is not built"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

for bad in 0 -1 x 1e3 ""; do
	"$OBS" --stdout --windows "$bad" >"$TW_TMP/bad.out" 2>"$TW_TMP/bad.err"
	rc=$?
	[ "$rc" = 2 ] && [ -s "$TW_TMP/bad.err" ] && [ ! -s "$TW_TMP/bad.out" ] ||
		fail "--windows '$bad': exit $rc, \"$(cat "$TW_TMP/bad.err")\""
done
ok "a bad --windows: exit 2 with a message"

# truth NAME FIELD K: FIELD per second between the process's SIGUSR1 lines
# K and K + 1, its own count
truth() {
	awk -v f="$2" -v k="$3" '$1 == "t" {n++; for (i = 1; i < NF; i++) if ($i == f) v[n] = $(i + 1); t[n] = $2}
		END {printf "%.3f", (v[k + 1] - v[k]) / (t[k + 1] - t[k])}' "$TW_TMP/$1.out"
}
twload_start creator 120 create 1000
twload_start pinger 120 pingpong 1000
twload_start park 120 glibcstacks 200 --name obspark

"$OBS" --stdout --windows 3 --window 3s --by-process >"$TW_TMP/w.jsonl" 2>"$TW_TMP/w.err" &
op=$!
# each window's truth: the services mark their counts as the first window
# starts and as each window's line comes (a loaded host slows the creator
# from one window to the next); and the observer's open files during the
# third window: one per thread it keeps, at most
wait_for grep -q 'windows of' "$TW_TMP/w.err" || fail "the observer did not start: $(cat "$TW_TMP/w.err")"
kill -USR1 "$creator" "$pinger"
seen=0 fds=0
for _ in $(seq 1 1500); do
	n=$(wc -l <"$TW_TMP/w.jsonl")
	if [ "$n" -gt "$seen" ]; then
		kill -USR1 "$creator" "$pinger"
		seen=$n
		[ "$n" = 2 ] && sleep 1.5 && fds=$(find /proc/$op/fd -mindepth 1 2>/dev/null | wc -l)
		if [ "$n" = 1 ]; then # window 2: the park's truth around its wake-up
			sleep 0.3
			kill -USR1 "$park"
			marks park 1
			kill -USR2 "$park"
			sleep 0.3
			kill -USR1 "$park"
			marks park 2
		fi
	fi
	[ "$seen" -ge 3 ] && break
	kill -0 $op 2>/dev/null || break
	sleep 0.02
done
wait $op || fail "threadwatch-observer exited $?: $(cat "$TW_TMP/w.err")"
marks creator 4
marks pinger 4
cr=() sw=()
for k in 1 2 3; do
	cr+=("$(truth creator creates $k)") sw+=("$(truth pinger switches $k)")
done
crs=$(printf '%s\n' "${cr[@]}" | jq -s -c .) sws=$(printf '%s\n' "${sw[@]}" | jq -s -c .)
# the park's switches in window 2, by its own count: its wake-up's and
# the two marks'
woke=$(awk '$1 == "t" {for (i = 1; i < NF; i++) if ($i == "switches") v[++n] = $(i + 1)}
	END {print v[2] - v[1]}' "$TW_TMP/park.out")
[ "$(wc -l <"$TW_TMP/w.jsonl")" = 3 ] || fail "$(wc -l <"$TW_TMP/w.jsonl") lines for 3 windows"
# the threads it read at the ends of windows 2 and 3 bound what it holds
# (a leak would hold the creator's 3,000 threads a window)
reads=$(jq -s '.[1].observer.threads_read + .[2].observer.threads_read' "$TW_TMP/w.jsonl")
[ "$fds" -gt 200 ] && [ "$fds" -le $((reads + 64)) ] ||
	fail "$fds open files in the third window, for $reads threads read in windows 2 and 3"
ok "three windows, three lines; $fds open files in the third"

# counters that cannot count here (another PID namespace: a container)
# leaves creates and exits null, and says why; the rest still holds
if ! jq -se '.[0].mechanisms.creates.available' "$TW_TMP/w.jsonl" >/dev/null; then
	echo "neither counter counts here: $(jq -rs '.[0].mechanisms.creates.why' "$TW_TMP/w.jsonl")"
	crs='[null,null,null]'
fi
bad=$(jq -rs --argjson c "$creator" --argjson p "$pinger" --argjson k "$park" \
	--argjson cr "$crs" --argjson sw "$sws" --argjson woke "$woke" '
def check(c; m): if c then empty else m end;
def w($d; $pid): [$d.workloads[] | select(.pids | index($pid))][0];
. as $all |
check($all[0].observer.threads_carried == 0 and
      ([$all[1, 2].observer | .threads_carried >= 203] | all);
      "threads carried from the last window, and read: \([$all[].observer | [.threads_carried, .threads_read]])"),
(range(0; 3) as $i | $all[$i] as $d |
 (if $cr[$i] == null then
   check(w($d; $c).creates_per_s == null and w($d; $c).exits_per_s == null; "window \($i + 1): a deaf connector counted creates")
  else
   check((w($d; $c).creates_per_s - $cr[$i] | fabs) <= 0.15 * $cr[$i]; "window \($i + 1): creates_per_s \(w($d; $c).creates_per_s), truth \($cr[$i])"),
   check((w($d; $c).exits_per_s - $cr[$i] | fabs) <= 0.15 * $cr[$i]; "window \($i + 1): exits_per_s \(w($d; $c).exits_per_s), truth \($cr[$i])")
  end),
 check((w($d; $p).switches_per_s.total - $sw[$i] | fabs) <= 0.25 * $sw[$i]; "window \($i + 1): switches_per_s \(w($d; $p).switches_per_s.total), truth \($sw[$i])"),
 check(w($d; $k).threads == 201 and w($d; $k).comm == "obspark" and w($d; $k).stacks.count >= 200;
       "window \($i + 1): the park \(w($d; $k) | {threads, comm, stacks})"),
 if $i == 1 then
   check((w($d; $k).switches_per_s.total * $d.window_s - $woke | fabs) <= 0.1 * $woke + 3 and $woke >= 200;
         "window 2: the park woke its threads, \($woke) switches by its count, \(w($d; $k).switches_per_s.total * $d.window_s) seen"),
   check(w($d; $k).quiet_processes == 0; "window 2: the park that woke was taken as quiet")
 else
   check(w($d; $k).switches_per_s.total < 20; "window \($i + 1): 200 parked threads switch \(w($d; $k).switches_per_s.total)/s"),
   check(w($d; $k).quiet_processes == 1 and
         $d.mechanisms.switches.quiet.tally.threads_not_read >= 201;
         "window \($i + 1): the park was not found quiet: \($d.mechanisms.switches.quiet)")
 end)
' "$TW_TMP/w.jsonl")
[ -z "$bad" ] || fail "$bad"
ok "each window matches its truth (creates/s $crs, switches/s $sws; the park's wake-up: $woke switches); threads carried and read: $(jq -sc '[.[].observer | [.threads_carried, .threads_read]]' "$TW_TMP/w.jsonl"); quiet threads not read: $(jq -sc '[.[].mechanisms.switches.quiet.tally.threads_not_read]' "$TW_TMP/w.jsonl")"

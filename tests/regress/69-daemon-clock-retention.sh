#!/usr/bin/env bash
# 69-daemon-clock-retention: a wall-clock jump must not erase the history.
# Twenty days are seeded (80 cycles, 240 runs, every
# document kept), then the daemon starts with its clock moved by the
# clockshift shim (tests/shim/clockshift.c):
#  - 800 days ahead with probes that fail: retention does not run after a
#    failed cycle;
#  - 800 and 31 days ahead with probes that work, for three cycles:
#    retention is held (logged once, threadwatch_retention_held 1,
#    threadwatch_retention_skipped_total counts) and nothing is deleted;
#  - 800 days behind: the clock is behind the stored data, retention is
#    held, nothing is deleted;
#  - no shift: retention runs as before (the raw documents of the cycles
#    older than retention_raw_days go), logging nothing about the clock.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
SHIM=$B/tests/clockshift.so
[ -x "$B/tests/twseed" ] || fail "\"$B/tests/twseed\" is not built"
[ -e "$SHIM" ] || fail "\"$SHIM\" is not built"
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed"; exit 77; }
SHIFT=$TW_TMP/shift
DAEMON_ENV=(LD_PRELOAD="$SHIM" TW_CLOCKSHIFT_FILE="$SHIFT"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
DAY=86400

seed() { # NAME
	mkdir -p "$TW_TMP/$1"
	"$B/tests/twseed" --db "$TW_TMP/$1/threadwatch.db" --days 20 --every 360 --seed 3 \
		--quiet || fail "twseed failed"
}
q() { sqlite3 "$TW_TMP/$1/threadwatch.db" "$2"; }
seeded_runs() { q "$1" "SELECT count(*) FROM runs WHERE cycle_id <= 80"; }
seeded_docs() { q "$1" "SELECT count(*) FROM run_docs d JOIN runs r ON r.id = d.run_id WHERE r.cycle_id <= 80"; }
metric() { api /metrics | awk -v m="$1" '$1 == m {print $2}'; }

# run_shifted NAME SECONDS KIND CYCLES: the seeded daemon NAME with its
# clock moved by SECONDS and probes of KIND, until CYCLES cycles finished.
run_shifted() {
	local name=$1 secs=$2 kind=$3 cycles=$4 p
	seed "$name"
	rm -rf "$TW_TMP/probes"
	for p in $TW_BUILTINS; do fake_probe "$TW_TMP/probes" "$p" "$kind"; done
	echo "$secs" >"$SHIFT"
	RUNS0=$(seeded_runs "$name") DOCS0=$(seeded_docs "$name")
	[ "$RUNS0" = 240 ] && [ "$DOCS0" = 240 ] || fail "seeded $RUNS0 runs, $DOCS0 documents"
	start_daemon "$name" --interval 2s --retention-raw-days 30
	wait_cycle "$((80 + cycles))" 60
	stop_daemon
	RUNS1=$(seeded_runs "$name") DOCS1=$(seeded_docs "$name")
}

run_shifted fail $((800 * DAY)) crash 1
[ "$RUNS1" = 240 ] && [ "$DOCS1" = 240 ] ||
	fail "after a failed cycle 800 days ahead $RUNS1 of 240 runs and $DOCS1 of 240 documents are left"
ok "800 days ahead, a failed cycle: the 240 runs and their documents are kept"

for days in 800 31; do
	run_shifted "ahead$days" $((days * DAY)) ok 3
	[ "$RUNS1" = 240 ] && [ "$DOCS1" = 240 ] ||
		fail "after 3 ok cycles $days days ahead $RUNS1 of 240 runs and $DOCS1 of 240 documents are left"
	n=$(grep -c 'Retention held' "$TW_TMP/ahead$days.log")
	[ "$n" = 1 ] || fail "$days days ahead: 'Retention held' logged $n times, not once: $(grep -i retention "$TW_TMP/ahead$days.log")"
	ok "$days days ahead, 3 ok cycles: the 240 runs and their documents are kept, logged once"
done

# The metrics while it is held (a daemon that stays up).
seed metrics
echo $((800 * DAY)) >"$SHIFT"
start_daemon metrics --interval 2s
wait_cycle 82 60
held=$(metric threadwatch_retention_held) skipped=$(metric threadwatch_retention_skipped_total)
stop_daemon
[ "$held" = 1 ] && [ "${skipped:-0}" -ge 2 ] ||
	fail "held 800 days ahead: threadwatch_retention_held '$held', threadwatch_retention_skipped_total '$skipped'"
ok "held: threadwatch_retention_held 1, threadwatch_retention_skipped_total $skipped"

run_shifted behind $((-800 * DAY)) ok 2
[ "$RUNS1" = 240 ] && [ "$DOCS1" = 240 ] ||
	fail "after 2 ok cycles 800 days behind $RUNS1 of 240 runs and $DOCS1 of 240 documents are left"
grep -q 'Retention held.*behind' "$TW_TMP/behind.log" ||
	fail "800 days behind: no 'Retention held ... behind' line: $(grep -i retention "$TW_TMP/behind.log")"
ok "800 days behind: the history is kept and the hold logged"

# Without a shift retention still works: with retention_raw_days 10 the
# documents of the cycles older than 10 days go, the runs stay.
run_shifted now 0 ok 1
start_daemon now --interval 2s --retention-raw-days 10
wait_cycle 82 60
stop_daemon
RUNS1=$(seeded_runs now) DOCS1=$(seeded_docs now)
[ "$RUNS1" = 240 ] && [ "$DOCS1" -gt 100 ] && [ "$DOCS1" -lt 140 ] ||
	fail "retention_raw_days 10 without a shift: $RUNS1 runs, $DOCS1 documents left"
! grep -q 'Retention held' "$TW_TMP/now.log" || fail "held without a clock jump: $(grep 'Retention held' "$TW_TMP/now.log")"
ok "no shift: retention_raw_days 10 pruned to $DOCS1 documents of 240, kept the 240 runs"

#!/usr/bin/env bash
# 57-daemon-clock: the scheduler waits on CLOCK_MONOTONIC, so stepping the
# wall clock a day forward and then two days back neither starts a storm of
# cycles nor stalls them. The step is made for the daemon alone by the
# clockshift shim (tests/shim/clockshift.c), not for the host.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
SHIM=$B/tests/clockshift.so
[ -e "$SHIM" ] || fail "\"$SHIM\" is not built"
fake_builtins "$TW_TMP/probes"
SHIFT=$TW_TMP/shift
echo 0 >"$SHIFT"
# A sanitizer build wants its runtime first; the shim only wraps clocks.
DAEMON_ENV=(LD_PRELOAD="$SHIM" TW_CLOCKSHIFT_FILE="$SHIFT"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")

finished() { grep -c 'Cycle [0-9]* finished' "$TW_TMP/d.log"; }
# started: cycles begun. A stall is about the plan (no cycle begins), so it
# is judged on starts: on a loaded machine a begun cycle may take seconds.
started() { grep -c 'Cycle [0-9]* started' "$TW_TMP/d.log"; }

start_daemon d --interval 2s
wait_cycle 1
t0=$(date +%s.%N)
echo 86400 >"$SHIFT"
sleep 0.5
skew=$(($(api /api/v1/status | jq -r .now_ms) - $(date +%s%3N)))
[ "$skew" -gt 86000000 ] && [ "$skew" -lt 86800000 ] ||
	fail "the shim did not move the daemon's clock (skew $skew ms)"
ok "the daemon's wall clock is a day ahead (skew $skew ms)"
sleep 2.5
before=$(started)
echo -86400 >"$SHIFT"
# A stall (waiting for a wall-clock time now two days ahead) begins no cycle
# again; on a loaded machine the one running may take a while to end, so
# the next start is waited for up to 30 s, beyond any 2 s interval.
for _ in $(seq 1 60); do
	sleep 0.5
	[ "$(started)" -gt "$before" ] && [ "$(echo "$(date +%s.%N) - $t0 >= 8.5" | bc)" = 1 ] && break
done
after=$(started)
n=$(finished)
secs=$(echo "$(date +%s.%N) - $t0" | bc)
[ "$((after - before))" -ge 1 ] ||
	fail "no cycle began in 30 s after the wall clock stepped back: $(grep Cycle "$TW_TMP/d.log")"
# Every 2 s: about one start per 2 s since t0, plus the first. A storm
# begins many more.
most=$(echo "$secs / 2 + 2" | bc)
[ "$n" -ge 2 ] && [ "$after" -le "$most" ] ||
	fail "$n cycles in ${secs}s with a 2 s interval across the clock steps: $(grep Cycle "$TW_TMP/d.log")"
ok "$n cycles ended and $after began in ${secs}s ($((after - before)) begun after the step back) across a +1 day and a -2 day step of the wall clock"
stop_daemon

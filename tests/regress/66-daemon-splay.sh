#!/usr/bin/env bash
# 66-daemon-splay: a fleet started at once does not probe in step (issue
# 27). Twenty daemons, launched together with fake quick probes, an
# interval of 1 h and a splay of 20 s: each one's first cycle starts within
# 20 s (and some slack for a loaded machine) of its own launch, and the
# first cycles spread over more than 5 s (twenty uniform draws from 20 s
# fall within 5 s of each other with a chance of about 1e-10). Before the
# fix, every first cycle started as the daemon began listening.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
N=20
SPLAY_S=20
SLACK_S=15
for p in $TW_BUILTINS; do fake_probe "$TW_TMP/probes" "$p" ok 0; done
mkdir -p "$TW_TMP/probes.d"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT

declare -A LAUNCH
for i in $(seq 1 "$N"); do
	mkdir -p "$TW_TMP/d$i"
	LAUNCH[$i]=$(date +%s%3N)
	"$TWD" --config "$TW_TMP/empty.conf" --state-dir "$TW_TMP/d$i" --port 0 \
		--port-file "$TW_TMP/d$i/port" --probe-dir "$TW_TMP/probes" \
		--probes-d "$TW_TMP/probes.d" --quick --guard off --probe-sched normal \
		--interval 1h --splay "${SPLAY_S}s" >>"$TW_TMP/d$i.log" 2>&1 &
	PIDS+=($!)
done
for i in $(seq 1 "$N"); do
	wait_for test -s "$TW_TMP/d$i/port" || { cat "$TW_TMP/d$i.log" >&2; fail "daemon $i did not listen"; }
done

# Each daemon's first cycle: its start relative to the daemon's launch.
offsets=()
deadline=$(($(date +%s) + SPLAY_S + SLACK_S + 30))
for i in $(seq 1 "$N"); do
	PORT=$(cat "$TW_TMP/d$i/port")
	started=null
	while [ "$(date +%s)" -lt "$deadline" ]; do
		started=$(api /api/v1/status | jq -r '.last_cycle.started_ms // null')
		[ "$started" != null ] && break
		sleep 0.5
	done
	[ "$started" != null ] || fail "daemon $i ran no cycle in time: $(cat "$TW_TMP/d$i.log")"
	grep -q "Cycle 1 started (start)" "$TW_TMP/d$i.log" || fail "daemon $i: no start cycle: $(cat "$TW_TMP/d$i.log")"
	offsets+=($((started - LAUNCH[$i])))
done
printf '%s\n' "${offsets[@]}" | sort -n | tr '\n' ' '
echo "(ms after each launch)"
lo=$(printf '%s\n' "${offsets[@]}" | sort -n | head -n1)
hi=$(printf '%s\n' "${offsets[@]}" | sort -n | tail -n1)
[ "$lo" -ge 0 ] || fail "a first cycle started before its daemon: $lo ms"
[ "$hi" -le $(((SPLAY_S + SLACK_S) * 1000)) ] ||
	fail "a first cycle started $hi ms after its launch, beyond the ${SPLAY_S} s splay"
[ $((hi - lo)) -gt 5000 ] || fail "the first cycles of $N daemons started within $((hi - lo)) ms of each other"
grep -q "A cycle (start) is due in [0-9]* s, within the splay" "$TW_TMP/d1.log" ||
	fail "the log does not say when the first cycle is due: $(cat "$TW_TMP/d1.log")"
ok "$N daemons started at once: first cycles from $lo to $hi ms after launch, within the ${SPLAY_S} s splay"

# --- the log says when the first cycle is due, and only names a splay it has:
# with --splay 0 no "within the splay"; after a restart with
# history, when the next regular cycle is.
for p in $TW_BUILTINS; do fake_probe "$TW_TMP/probes" "$p" ok; done
start_daemon nosplay --interval 1h
wait_cycle 1
stop_daemon
grep -q "A cycle (start) is due in 0 s$" "$TW_TMP/nosplay.log" ||
	fail "with --splay 0: $(grep 'is due' "$TW_TMP/nosplay.log")"
start_daemon nosplay --interval 1h
stop_daemon
grep -q "The next cycle is due in 3[0-9][0-9][0-9] s (the interval after the last one)" "$TW_TMP/nosplay.log" ||
	fail "a restart with history does not say when the next cycle is due: $(grep -i 'due' "$TW_TMP/nosplay.log")"
ok "the log: 'due in 0 s' with no splay named, and after a restart when the next cycle is due"

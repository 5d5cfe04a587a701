#!/usr/bin/env bash
# 27-observer-link: the privilege separation without systemd. threadwatchd
# runs as nobody (as the packaged unit runs it, blind to other users'
# processes); threadwatch-observer runs as root and hands it each window
# over --observer-socket. The headroom's process with the most mappings,
# a root process here, comes through the observer, and only then; a window
# from another user, or one that is not a window, is refused and named.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"
[ "$(id -u)" = 0 ] || { echo "needs root (a daemon as nobody, an observer as root)"; exit 77; }
command -v setpriv >/dev/null || { echo "setpriv is not installed"; exit 77; }
OBS=$B/threadwatch-observer L=$B/tests/twload
[ -x "$OBS" ] && [ -x "$L" ] || fail "threadwatch-observer or twload is not built"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

# a root process with more mappings than any other here: 1,500 threads
"$L" glibcstacks 1500 --seconds 300 >"$TW_TMP/hog.out" 2>&1 &
HOG=$!
pids+=($HOG)
wait_for grep -q ready "$TW_TMP/hog.out" || fail "twload did not get ready"

chmod 755 "$TW_TMP"
fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/d" "$TW_TMP/run" && chown 65534:65534 "$TW_TMP/d" "$TW_TMP/run"
SOCK=$TW_TMP/run/observer.sock
printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups %s "$@"\n' "$B/threadwatchd" \
	>"$TW_TMP/twd-nobody"
chmod 755 "$TW_TMP/twd-nobody"
TWD=$TW_TMP/twd-nobody start_daemon d --token "$TOKEN" --observer-socket "$SOCK"
pids+=($DPID)
wait_for test -S "$SOCK" || fail "no observer socket: $(cat "$TW_TMP/d.log")"
[ "$(stat -c %U "$SOCK")" = nobody ] || fail "the socket is not the daemon's: $(stat -c %U "$SOCK")"
wait_cycle 1 60
pid=$(api /api/v1/headroom | jq .headroom.largest_vmas_pid)
[ "$pid" != "$HOG" ] || fail "a daemon as nobody read root's maps"
ok "the daemon alone, as nobody, cannot see the root process's mappings (largest: pid $pid)"

# another user's window is refused, and named in the daemon's log
setpriv --reuid=65533 --regid=65533 --clear-groups "$OBS" --push "$SOCK" --window 1s \
	>"$TW_TMP/other.log" 2>&1 &
other=$!
pids+=($other)
wait_for grep -q "only root or threadwatchd's own user" "$TW_TMP/other.log" ||
	fail "another user's window was not refused: $(cat "$TW_TMP/other.log")"
kill "$other"
ok "a window from another user is refused"

# a window that is not one
python3 - "$SOCK" >"$TW_TMP/bad.txt" <<'PY'
import socket, sys
for doc in (b'not json', b'{"window_s": 5}', b'{"window_s": -1, "workloads": []}'):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(doc)
    s.shutdown(socket.SHUT_WR)
    print(s.recv(300).decode().strip())
PY
[ "$(grep -c '^error: ' "$TW_TMP/bad.txt")" = 3 ] || fail "malformed windows were taken: $(cat "$TW_TMP/bad.txt")"
ok "malformed windows answered with why: $(tr '\n' ';' <"$TW_TMP/bad.txt")"

# the observer, as root, hands its windows; the next cycle's headroom has
# the root process
"$OBS" --push "$SOCK" --window 1s >"$TW_TMP/obs.log" 2>&1 &
pids+=($!)
wait_for grep -q "threadwatchd takes the windows" "$TW_TMP/obs.log" ||
	fail "the observer's windows were not taken: $(cat "$TW_TMP/obs.log")"
cycle=$(api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" | jq .cycle_id)
wait_cycle "$cycle" 60
h=$(api /api/v1/headroom | jq .headroom)
hog=$(wc -l </proc/$HOG/maps)
big=$(jq .largest_vmas_pid <<<"$h")
# the root process, or a larger one this host runs: one nobody cannot read
[ "$(jq .largest_vmas <<<"$h")" -ge "$hog" ] || fail "the headroom missed the root process's $hog mappings: $h"
! setpriv --reuid=65534 --regid=65534 --clear-groups cat "/proc/$big/maps" >/dev/null 2>&1 ||
	fail "the headroom's process $big is one the daemon could read itself: $h"
ok "through the observer the headroom names a process the daemon cannot read ($(jq -c '[.largest_vmas_pid, .largest_vmas, .largest_vmas_comm]' <<<"$h"); the root process has $hog)"
stop_daemon
[ ! -e "$SOCK" ] || fail "the daemon left its observer socket behind"
ok "stopped, and the socket removed"

#!/usr/bin/env bash
# 91-faults: threadwatchd under faults it must survive without losing data.
#  1. Disk full: the database lives on a small tmpfs (as root; otherwise the
#     daemon runs under RLIMIT_FSIZE). Cycles are started until the store
#     says "No space left on device": each such cycle is refused (503) or
#     ends failed, the API keeps serving what it has, nothing stored before
#     is lost, and once space returns the next cycle stores every run. The
#     database is then whole (tests/regress/lib-store-check.sh).
#  2. Bad probes, cycle after cycle: a probe that crashes, hangs with a
#     grandchild, floods 10 MB, prints the wrong shape or garbage, is not
#     executable, is missing, or leaves a grandchild behind. Every run is an
#     error with its reason (or ok for the lingering one), no process of a
#     probe survives, and the daemon's RSS stays bounded from the first to
#     the last cycle.
#  3. Damaged databases that 53-daemon-store does not cover (another
#     program's SQLite file, a foreign application_id, a header alone): a
#     clear error, a non-zero exit, the file byte for byte unchanged.
# Clock steps are 57-daemon-clock's (tests/shim/clockshift.c).
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-store-check.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
MNT=$TW_TMP/small
cleanup() {
	[ -n "${DPID:-}" ] && kill -KILL "$DPID" 2>/dev/null
	mountpoint -q "$MNT" 2>/dev/null && umount -l "$MNT"
}
trap cleanup EXIT

post() { # post: the status code of POST /api/v1/runs, the body in $TW_TMP/post
	curl -s -o "$TW_TMP/post" -w '%{http_code}' --max-time 20 -X POST \
		-H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/runs"
}
listed() { api '/api/v1/runs?limit=500' | jq -r '.runs[] | "\(.id) \(.probe) \(.status)"' | sort; }

# --- 1. disk full --------------------------------------------------------
for p in $TW_BUILTINS; do rich_probe "$TW_TMP/probes" "$p"; done
# A probe with a bulky document: 2000 points, about 150 KB in the store.
mkdir -p "$TW_TMP/probes.d"
cat >"$TW_TMP/probes.d/bulky" <<'EOF'
#!/usr/bin/env python3
# fake probe for 91-faults: a valid document with 2000 points
import json
print(json.dumps({"probe": "bulky", "protocol": 1, "status": "ok", "reason": None,
    "started_at": "2026-12-03T07:51:56.123Z", "started_unix": 1796284316.123,
    "duration_s": 0.01, "params": {"quick": True},
    "scalars": {"points": {"value": 2000, "unit": "count"}},
    "series": {"curve": {"x_unit": "count", "y_unit": "ns",
        "points": [[i, 1000.0 + i * 0.37] for i in range(2000)]}}, "info": {}}))
EOF
chmod 755 "$TW_TMP/probes.d/bulky"

mode=tmpfs
mkdir -p "$MNT"
[ "${FAULTS_MODE:-}" = rlimit ] && mode=rlimit
if [ "$mode" = tmpfs ] && ! { [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=3m tmpfs "$MNT"; }; then
	mode=rlimit
fi
# Under RLIMIT_FSIZE the daemon ignores SIGXFSZ (inherited) and sees EFBIG.
[ "$mode" = rlimit ] && trap '' XFSZ
start_daemon full --interval 1h --token "$TOKEN" --database "$MNT/tw.db"
wait_cycle 1
before=$(listed)
# the built-ins and bulky
[ "$(wc -l <<<"$before")" = $((TW_NBUILTINS + 1)) ] ||
	fail "expected $((TW_NBUILTINS + 1)) runs after the first cycle: $before"

if [ "$mode" = tmpfs ]; then
	# Leave 64 KiB: the next cycle begins but cannot store all of its runs.
	avail=$(df -k --output=avail "$MNT" | tail -1)
	dd if=/dev/zero of="$MNT/filler" bs=1k count=$((avail - 64)) 2>/dev/null
	space="tmpfs of 3 MiB, used/avail kB $(df -k --output=used,avail "$MNT" | tail -1 | xargs)"
else
	# A soft limit only, so that it can be raised again: 64 KiB more than
	# the write-ahead log holds now.
	limit=$(($(stat -c %s "$MNT/tw.db-wal") + 65536))
	prlimit --pid "$DPID" --fsize="$limit": || fail "prlimit could not set RLIMIT_FSIZE"
	space="RLIMIT_FSIZE of $limit bytes"
fi
refused=0 failed=0 tries=0
while [ "$tries" -lt 12 ]; do
	tries=$((tries + 1))
	code=$(post)
	if [ "$code" = 503 ]; then
		grep -q 'No space left' "$TW_TMP/post" || fail "503 without the reason: $(cat "$TW_TMP/post")"
		refused=$((refused + 1))
		[ "$refused" -ge 2 ] && break
		continue
	fi
	[ "$code" = 202 ] || fail "POST while the disk fills: $code $(cat "$TW_TMP/post")"
	cycle=$(jq -r .cycle_id "$TW_TMP/post")
	for _ in $(seq 1 100); do
		grep -q "Cycle $cycle finished" "$TW_TMP/full.log" && break
		sleep 0.1
	done
	grep -q "Cycle $cycle finished: failed" "$TW_TMP/full.log" && failed=$((failed + 1))
done
[ "$refused" -ge 2 ] || fail "$tries cycles on a full disk and the store never refused one"
grep -q 'No space left on device' "$TW_TMP/full.log" || fail "the log does not say the disk is full"
ok "disk full ($space): $tries cycles tried," \
	"$failed ended failed, $refused refused with 503 \"No space left on device\""

# The API keeps serving what it has; /healthz says the store fails (503:
# a daemon that cannot store its runs is not healthy).
for path in /api/v1/runs /api/v1/recommendation /api/v1/status /metrics \
	'/api/v1/series?metric=ctxsw.ratio' /api/v1/host; do
	code=$(http_code "$path")
	[ "$code" = 200 ] || fail "GET $path on a full disk: $code"
done
[ "$(http_code /healthz)" = 503 ] || fail "GET /healthz on a full disk: $(http_code /healthz), not 503"
during=$(listed)
lost=$(comm -23 <(echo "$before") <(echo "$during"))
[ -z "$lost" ] || fail "runs lost on a full disk: $lost"
ok "the API serves on a full disk (6 endpoints 200, /healthz 503, all $(wc -l <<<"$before") earlier runs listed)"

# Space returns: the next cycle stores everything.
if [ "$mode" = tmpfs ]; then
	rm -f "$MNT/filler"
else
	prlimit --pid "$DPID" --fsize=unlimited: || fail "prlimit could not raise the limit"
	trap - XFSZ
fi
code=$(post)
[ "$code" = 202 ] || fail "POST once space returned: $code $(cat "$TW_TMP/post")"
cycle=$(jq -r .cycle_id "$TW_TMP/post")
wait_cycle "$cycle"
[ "$(api /api/v1/status | jq -r .last_cycle.status)" = ok ] ||
	fail "the cycle after the disk was freed: $(api /api/v1/status | jq -c .last_cycle)"
runs=$(runs_json | jq -c --argjson c "$cycle" '[.[] | select(.cycle_id == $c) | .status]')
jq -e --argjson n $((TW_NBUILTINS + 1)) 'length == $n and all(.[]; . == "ok")' <<<"$runs" >/dev/null ||
	fail "cycle $cycle after the disk was freed: $runs"
[ "$(http_code /healthz)" = 200 ] || fail "GET /healthz once space returned: $(api /healthz)"
ok "space returned: cycle $cycle stored its $((TW_NBUILTINS + 1)) runs, /healthz 200"
stop_daemon
DPID=
store_check "$MNT/tw.db"
ok "after the full disk: integrity ok, no partial run ($CHECK_RUNS runs, $CHECK_CYCLES cycles)"
cleanup

# --- 2. bad probes, cycle after cycle ------------------------------------
P=$TW_TMP/bad-probes
D=$TW_TMP/bad-probes.d
MARK=tw-fault-marker-$$
rich_probe "$P" ctxsw
rich_probe "$P" threads
# map32 is missing
fake_probe "$D" crash crash
fake_probe "$D" flood flood
fake_probe "$D" shape shape
fake_probe "$D" garbage garbage
fake_probe "$D" notexec ok
chmod 644 "$D/notexec"
# hangs after starting a grandchild that would outlive a killed probe
cat >"$D/hang" <<EOF
#!/bin/sh
# fake probe for 91-faults: a grandchild, then a hang
sh -c 'sleep 300; : $MARK' >/dev/null 2>&1 &
exec sleep 3600
EOF
chmod 755 "$D/hang"
# a valid document, but a grandchild left running
fake_probe "$D" linger ok
sed -i "2a sh -c 'sleep 300; : $MARK' >/dev/null 2>\&1 &" "$D/linger"

rss() { awk '/^VmRSS/ {print $2}' "/proc/$DPID/status"; }
start_daemon bad --interval 1h --token "$TOKEN" --probe-dir "$P" --probes-d "$D" \
	--probe-timeout 3s # the hang's limit; the shell probes need well under it, even on a loaded host
wait_cycle 1 30
rss0=$(rss)
declare -A want=(
	[ctxsw]='ok	null'
	[threads]='ok	null'
	[map32]='error	not found|No such file'
	[crash]='error	SIGSEGV|[Ss]egmentation'
	[hang]='error	time limit'
	[flood]='error	output exceeds'
	[shape]='error	invalid document'
	[garbage]='error	invalid document'
	[notexec]='error	[Pp]ermission denied|not executable'
	[linger]='ok	null'
)
# the other built-ins are missing too
for p in $TW_BUILTINS; do [ -n "${want[$p]:-}" ] || want[$p]='error	not found|No such file'; done
CYCLES=${FAULT_CYCLES:-4}
for n in $(seq 2 "$CYCLES"); do
	code=$(post)
	[ "$code" = 202 ] || fail "POST for bad-probe cycle $n: $code $(cat "$TW_TMP/post")"
	c=$(jq -r .cycle_id "$TW_TMP/post")
	wait_cycle "$c" 30
	[ "$(http_code /healthz)" = 200 ] || fail "not serving after bad-probe cycle $c"
	runs=$(runs_json | jq -c --argjson c "$c" '[.[] | select(.cycle_id == $c)]')
	[ "$(jq length <<<"$runs")" = ${#want[@]} ] || fail "cycle $c has runs: $runs"
	for p in "${!want[@]}"; do
		got=$(jq -r --arg p "$p" '.[] | select(.probe == $p) | "\(.status)\t\(.reason)"' <<<"$runs")
		[ "${got%%$'\t'*}" = "${want[$p]%%$'\t'*}" ] || fail "cycle $c, $p: $got"
		grep -Eq "${want[$p]#*$'\t'}" <<<"${got#*$'\t'}" || fail "cycle $c, $p: reason $got"
	done
	if pgrep -f "$MARK" >/dev/null; then
		fail "a probe's grandchild survived cycle $c: $(pgrep -af "$MARK")"
	fi
	pgrep -f "$D/hang" >/dev/null && fail "the hanging probe survived cycle $c"
done
rss1=$(rss)
growth=$((rss1 - rss0))
asan_build || [ "$growth" -lt 16384 ] ||
	fail "RSS grew by $growth kB over $((CYCLES - 1)) bad-probe cycles"
ok "$CYCLES cycles of ${#want[@]} probes (8 bad): each error with its reason, no stray process;" \
	"RSS $rss0 kB after the first, $rss1 kB after the last (${growth} kB)"
stop_daemon
DPID=

# --- 3. damaged databases ------------------------------------------------
# refuse NAME REGEX: the daemon refuses $TW_TMP/NAME.db, saying REGEX, and
# leaves it byte for byte as it was.
refuse() {
	local f=$TW_TMP/$1.db out rc sum
	sum=$(sha256sum "$f")
	out=$(timeout 20 "$TWD" --foreground --config "$TW_TMP/empty.conf" --database "$f" \
		--port 0 --probe-dir "$P" 2>&1)
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "$1: exit $rc: $out"
	grep -qE "$2" <<<"$out" || fail "$1: unclear message: $out"
	[ "$(sha256sum "$f")" = "$sum" ] || fail "$1: the file was changed"
	[ ! -e "$f-wal" ] || fail "$1: a -wal file was left beside it"
	ok "$1 refused (exit $rc): $(head -c 300 <<<"$out")"
	REFUSED=$out
}
sqlite3 "$TW_TMP/other.db" 'CREATE TABLE t (a); INSERT INTO t VALUES (1)'
refuse other 'not a threadwatch database'
cp "$TW_TMP/bad/threadwatch.db" "$TW_TMP/foreign.db"
sqlite3 "$TW_TMP/foreign.db" 'PRAGMA application_id = 12345' || fail "sqlite3"
refuse foreign 'not a threadwatch database'
head -c 100 "$TW_TMP/bad/threadwatch.db" >"$TW_TMP/header.db"
refuse header 'damaged|truncated|not a'
grep -q 'Recovering the database' <<<"$REFUSED" ||
	fail "the refusal of a damaged file does not say how to recover: $REFUSED"
# The refusal points at DIAGNOSTICS in threadwatchd(8), which has the
# subsection it names.
sed -n '/^\.SH DIAGNOSTICS/,/^\.SH /p' "$SRC/doc/man/threadwatchd.8" | grep -q '^\.SS Recovering the database' ||
	fail "the daemon points to \"Recovering the database\" in threadwatchd(8), whose DIAGNOSTICS has no such subsection"
ok "threadwatchd(8) has the subsection \"Recovering the database\" that the refusal names"

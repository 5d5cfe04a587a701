#!/usr/bin/env bash
# 53-daemon-store: the daemon and its database. A restart keeps the history
# and does not re-run a recent cycle; a second daemon on the same file
# refuses to start; a database that is not one, is truncated or damaged, or
# has a newer schema is refused with a clear message and left untouched.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed"; exit 77; }
fake_builtins "$TW_TMP/probes"
DB=$TW_TMP/d/threadwatch.db

start_daemon d --interval 1h
wait_cycle 1
before=$(runs_json | jq -c '[.[] | {id, probe, status}]')
[ "$(jq length <<<"$before")" = "$TW_NBUILTINS" ] || fail "expected $TW_NBUILTINS runs: $before"
[ "$(api /api/v1/recommendation | jq -r '.verdict // .recommendation.verdict')" != null ] ||
	fail "no recommendation after the cycle: $(api /api/v1/recommendation)"

# A second daemon on the same database refuses, naming the reason.
out=$("$TWD" --foreground --config "$TW_TMP/empty.conf" --database "$DB" --port 0 2>&1)
rc=$?
[ "$rc" != 0 ] || fail "a second daemon started on the same database"
grep -q 'in use by another threadwatchd' <<<"$out" || fail "unclear message: $out"
ok "second daemon refused (exit $rc): $out"
stop_daemon

# Restart: the history is there and the recent cycle is not run again.
start_daemon d --interval 1h
sleep 1
after=$(runs_json | jq -c '[.[] | {id, probe, status}]')
[ "$after" = "$before" ] || fail "the history changed across a restart: $before -> $after"
[ "$(api /api/v1/status | jq -r .last_cycle.id)" = 1 ] || fail "a cycle ran at restart"
ok "restart keeps $(jq length <<<"$after") runs and does not re-run the recent cycle"
stop_daemon
# A restart after the interval has passed runs a start cycle at once.
start_daemon d --interval 1s
wait_cycle 2
[ "$(api /api/v1/status | jq -r .last_cycle.trigger)" = start ] || fail "no start cycle"
stop_daemon
ok "a restart after the interval runs a cycle at once"

# refuse NAME TEXT: the daemon must refuse $TW_TMP/NAME.db with TEXT in the
# message and leave the file byte for byte as it was.
refuse() {
	local f=$TW_TMP/$1.db out rc sum
	sum=$(sha256sum "$f")
	out=$(timeout 20 "$TWD" --foreground --config "$TW_TMP/empty.conf" --database "$f" \
		--port 0 --probe-dir "$TW_TMP/probes" 2>&1)
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "$1: exit $rc: $out"
	grep -qE "$2" <<<"$out" || fail "$1: unclear message: $out"
	[ "$(sha256sum "$f")" = "$sum" ] || fail "$1: the file was changed"
	ok "$1 refused (exit $rc): $out"
}
head -c 5000 /dev/urandom >"$TW_TMP/random.db"
refuse random 'damaged|not a'
printf 'port = 1\n' >"$TW_TMP/text.db"
refuse text 'damaged|not a'
cp "$DB" "$TW_TMP/newer.db"
sqlite3 "$TW_TMP/newer.db" 'PRAGMA user_version = 999' || fail "sqlite3"
refuse newer 'newer'
cp "$DB" "$TW_TMP/truncated.db"
sqlite3 "$TW_TMP/truncated.db" 'PRAGMA journal_mode = DELETE' >/dev/null
truncate -s 8192 "$TW_TMP/truncated.db"
refuse truncated 'damaged|truncated'
cp "$DB" "$TW_TMP/damaged.db"
sqlite3 "$TW_TMP/damaged.db" 'PRAGMA journal_mode = DELETE' >/dev/null
size=$(stat -c %s "$TW_TMP/damaged.db")
# scribble over the middle pages, keeping the header and the size
dd if=/dev/urandom of="$TW_TMP/damaged.db" bs=4096 seek=3 count=$((size / 4096 - 4)) \
	conv=notrunc 2>/dev/null
refuse damaged 'damaged|malformed|not a'

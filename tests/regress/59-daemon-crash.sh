#!/usr/bin/env bash
# 59-daemon-crash: crash safety. The daemon is killed with SIGKILL at a
# random moment of a probe cycle, again and again (TW_CRASH_KILLS, default
# 40; `make soak` kills 1000 times), and restarted on the same database each time. After every kill:
# PRAGMA integrity_check is ok, no run lacks its samples and no sample its
# run, and every run the API reported just before the kill is still there.
# Prints the number of kills, of cycles begun and of runs checked.
# regress: long
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed"; exit 77; }
KILLS=${TW_CRASH_KILLS:-40}
fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/d"
DB=$TW_TMP/d/threadwatch.db
checked=0

for i in $(seq 1 "$KILLS"); do
	rm -f "$TW_TMP/d/port"
	"$TWD" --foreground --config "$TW_TMP/empty.conf" --database "$DB" --port 0 \
		--port-file "$TW_TMP/d/port" --probe-dir "$TW_TMP/probes" --probes-d "" --quick \
		--guard off --splay 0 --interval 1h --token "$TOKEN" >>"$TW_TMP/d.log" 2>&1 &
	DPID=$!
	for _ in $(seq 1 500); do
		[ -s "$TW_TMP/d/port" ] && break
		kill -0 "$DPID" 2>/dev/null || fail "restart $i failed: $(tail -n 3 "$TW_TMP/d.log")"
		sleep 0.01
	done
	PORT=$(cat "$TW_TMP/d/port")
	# What the API reports as stored; a cycle now (the first start runs one
	# anyway); then a kill within 40 ms, while its probes run or are stored.
	seen=$(curl -s --max-time 5 "http://127.0.0.1:$PORT/api/v1/runs?limit=20" |
		jq -r '.runs[] | "\(.id)|\(.probe)|\(.status)"')
	curl -s -o /dev/null --max-time 5 -X POST -H "Authorization: Bearer $TOKEN" \
		"http://127.0.0.1:$PORT/api/v1/runs"
	sleep "0.0$(printf '%02d' $((RANDOM % 40)))"
	kill -KILL "$DPID"
	wait "$DPID" 2>/dev/null

	out=$(sqlite3 "$DB" "PRAGMA integrity_check;
		SELECT count(*) FROM runs r WHERE r.status = 'ok' AND
			NOT EXISTS (SELECT 1 FROM samples s WHERE s.run_id = r.id);
		SELECT count(*) FROM samples s WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id);
		SELECT id || '|' || probe || '|' || status FROM runs ORDER BY id DESC LIMIT 100;") ||
		fail "kill $i: sqlite3 cannot read the database"
	[ "$(sed -n 1p <<<"$out")" = ok ] || fail "kill $i: integrity_check: $out"
	[ "$(sed -n 2p <<<"$out")" = 0 ] || fail "kill $i: an ok run without its samples"
	[ "$(sed -n 3p <<<"$out")" = 0 ] || fail "kill $i: samples without their run"
	stored=$(sed -n '4,$p' <<<"$out")
	while IFS= read -r run; do
		[ -z "$run" ] && continue
		grep -qxF "$run" <<<"$stored" || fail "kill $i: run $run, reported before the kill, is gone"
		checked=$((checked + 1))
	done <<<"$seen"
done

cycles=$(sqlite3 "$DB" 'SELECT count(*) FROM cycles')
cut=$(sqlite3 "$DB" "SELECT count(*) FROM cycles c WHERE c.ended_ms IS NULL OR c.status <> 'ok'
	OR (SELECT count(*) FROM runs r WHERE r.cycle_id = c.id) < 3")
runs=$(sqlite3 "$DB" 'SELECT count(*) FROM runs')
[ "$cycles" -ge "$KILLS" ] || fail "only $cycles cycles begun in $KILLS lives"
ok "$KILLS SIGKILLs survived: $cycles cycles begun ($cut cut short by the kill), $runs runs stored, $checked reported runs checked after the kills"

# The last database still serves after a clean start.
start_daemon d --database "$DB" --interval 1h --token "$TOKEN"
# On a loaded machine every kill may have cut its cycle short: then no run
# is stored, and the died cycle's retry is minutes away (1, 5, then 30 min),
# so a cycle is asked for now and waited for, up to 120 s.
api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" >/dev/null
for _ in $(seq 1 240); do
	[ "$(runs_json | jq length)" -gt 0 ] && break
	sleep 0.5
done
[ "$(runs_json | jq length)" -gt 0 ] || fail "no runs after the last restart"
stop_daemon

#!/usr/bin/env bash
# The node_exporter textfile route, as doc/fleet.md sets it up under the
# packaged unit: the daemon writes textfile_path in its runtime directory
# (mode 0644, readable by node_exporter's user), a symlink in the
# collector's directory points at it, and Debian's prometheus-node-exporter
# serves the figures: the same samples as the daemon's /metrics, and no
# textfile scrape error.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
NE=$(command -v prometheus-node-exporter || command -v node_exporter) ||
	{ echo "prometheus-node-exporter is not installed"; exit 77; }

fake_builtins "$TW_TMP/probes"
mkdir -p "$TW_TMP/run" "$TW_TMP/textfile"
start_daemon d --textfile-path "$TW_TMP/run/threadwatch.prom" --interval 1h
wait_for test -s "$TW_TMP/run/threadwatch.prom" || { cat "$TW_TMP/d.log"; fail "no textfile written"; }
mode=$(stat -c %a "$TW_TMP/run/threadwatch.prom")
[ "$mode" = 644 ] || fail "the textfile has mode $mode, not 644"
ln -s "$TW_TMP/run/threadwatch.prom" "$TW_TMP/textfile/threadwatch.prom"
ok "the daemon wrote $TW_TMP/run/threadwatch.prom with mode 644"

nport=$(free_port)
"$NE" --web.listen-address="127.0.0.1:$nport" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$TW_TMP/textfile" >"$TW_TMP/ne.log" 2>&1 &
NEPID=$!
trap 'kill $NEPID 2>/dev/null; kill $DPID 2>/dev/null' EXIT
wait_for curl -sf "http://127.0.0.1:$nport/metrics" || { cat "$TW_TMP/ne.log"; fail "node_exporter did not start"; }
# Every threadwatch sample of the file, as node_exporter serves it: the same
# names with the same number of samples each (node_exporter reorders labels),
# as "NAME COUNT" lines in C order for comm. The daemon rewrites the file
# when its first cycle ends (a slow build's may end between the scrape and
# the file's read), so the two are compared until they agree, 10 s at most.
count() { grep '^threadwatch_' "$1" | sed 's/[{ ].*//' | LC_ALL=C sort | uniq -c | awk '{print $2, $1}'; }
for _ in $(seq 1 50); do
	curl -sf "http://127.0.0.1:$nport/metrics" >"$TW_TMP/ne.txt" || fail "cannot scrape node_exporter"
	count "$TW_TMP/run/threadwatch.prom" >"$TW_TMP/want"
	count "$TW_TMP/ne.txt" >"$TW_TMP/got"
	missing=$(LC_ALL=C comm -23 "$TW_TMP/want" "$TW_TMP/got")
	[ -s "$TW_TMP/want" ] && [ -z "$missing" ] && break
	sleep 0.2
done
grep -q '^node_textfile_scrape_error 0$' "$TW_TMP/ne.txt" || fail "textfile scrape error: $(grep textfile "$TW_TMP/ne.txt")"
[ -s "$TW_TMP/want" ] || fail "the textfile has no threadwatch samples"
[ -z "$missing" ] || fail "node_exporter does not serve (name, samples): $missing"
grep -q '^threadwatch_build_info{' "$TW_TMP/ne.txt" || fail "no threadwatch_build_info via node_exporter"
ok "node_exporter serves all $(wc -l <"$TW_TMP/want") threadwatch metrics of the textfile, sample for sample, no scrape error"
stop_daemon

# A restart writes the file at once, though its next cycle is an hour away.
rm -f "$TW_TMP/run/threadwatch.prom"
start_daemon d --textfile-path "$TW_TMP/run/threadwatch.prom" --interval 1h
wait_for test -s "$TW_TMP/run/threadwatch.prom" || fail "a restarted daemon wrote no textfile"
[ "$(api /api/v1/status | jq .last_cycle.id)" = 1 ] || fail "a second cycle ran: $(api /api/v1/status)"
ok "a restarted daemon writes the textfile before its next cycle"
stop_daemon

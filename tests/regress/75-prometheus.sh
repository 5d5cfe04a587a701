#!/usr/bin/env bash
# 75-prometheus: Debian's prometheus server on loopback scrapes three
# threadwatchd instances standing for three hosts (lib-fleet.sh), each with
# its own instance label. Through Prometheus's HTTP API, PromQL finds every
# host's recommendation gauge and switch-time ratio (equal to what each
# daemon's API says) and counts the hosts where low stacks pay. One host
# then gets a "kernel upgrade" (restarted under setarch --uname-2.6, with a
# ctxsw probe that measures a better ratio): the Grafana dashboard's panel
# of hosts whose figures changed after a kernel upgrade must list exactly
# that host, and every other dashboard query must be valid PromQL. Also:
# the node_exporter textfile is written, equals /metrics and passes
# `promtool check metrics`; contrib/prometheus.yml passes `promtool check
# config`. The cohort recording rules group the hosts by
# threadwatch_host_info's labels. Stops everything it started.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-fleet.sh"
for c in prometheus promtool setarch; do
	command -v "$c" >/dev/null || { echo "$c is not installed"; exit 77; }
done
DASH=$SRC/contrib/grafana/threadwatch.json
PROM_PID=""
cleanup() {
	if [ -n "$PROM_PID" ]; then kill -TERM "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; fi
	kill_fleet
}
trap cleanup EXIT

out=$(promtool check config "$SRC/contrib/prometheus.yml" 2>&1) || fail "contrib/prometheus.yml: $out"
jq_true "$(cat "$DASH")" '.panels | length > 0 and ([.[].title] | length == (unique | length))' ||
	fail "\"$DASH\" is not a dashboard with distinct panel titles"
ok "contrib/prometheus.yml passes promtool; the Grafana dashboard is JSON"

start_fleet

# --- the node_exporter textfile (h1 ran a cycle with textfile_path set) ------------
[ -s "$FLEET_PROM" ] || fail "the textfile \"$FLEET_PROM\" was not written"
out=$(promtool check metrics <"$FLEET_PROM" 2>&1) || fail "promtool check metrics: $out"
[ -z "$out" ] || fail "promtool check metrics complains: $out"
PORT=${FLEET_PORTS[0]}
# The same text as /metrics but the process_* families, which node_exporter
# has of its own.
api /metrics | sed '/^# HELP process_/,$d' | cmp -s - "$FLEET_PROM" ||
	fail "the textfile differs from h1's /metrics"
! grep -q '^process_' "$FLEET_PROM" || fail "the textfile carries process_* families"
[ "$(ls -A "$(dirname "$FLEET_PROM")")" = "$(basename "$FLEET_PROM")" ] ||
	fail "temporary files left beside the textfile: $(ls -A "$(dirname "$FLEET_PROM")")"
[ "$(stat -c %a "$FLEET_PROM")" = 644 ] || fail "the textfile is not mode 644"
grep -q '^threadwatch_recommendation_low_stacks 1$' "$FLEET_PROM" ||
	fail "the textfile lacks h1's verdict"
ok "textfile: $(wc -l <"$FLEET_PROM") lines, passes promtool, equals /metrics, no leftovers"

# --- Prometheus ------------------------------------------------------------------------
PPORT=$(free_port)
{
	echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
	echo "rule_files: [\"$SRC/contrib/prometheus/threadwatch.rules.yml\"]"
	echo "scrape_configs:"
	echo "  - job_name: threadwatch"
	echo "    scrape_interval: 1s"
	echo "    scrape_timeout: 1s"
	echo "    static_configs:"
	for i in 0 1 2; do
		echo "      - targets: [\"127.0.0.1:${FLEET_PORTS[$i]}\"]"
		echo "        labels: {instance: ${FLEET_NAMES[$i]}}"
	done
} >"$TW_TMP/prometheus.yml"
out=$(promtool check config "$TW_TMP/prometheus.yml" 2>&1) || fail "generated config: $out"
prometheus --config.file="$TW_TMP/prometheus.yml" --storage.tsdb.path="$TW_TMP/prometheus" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TW_TMP/prometheus.log" 2>&1 &
PROM_PID=$!
wait_for curl -sf "http://127.0.0.1:$PPORT/-/ready" || {
	cat "$TW_TMP/prometheus.log" >&2
	fail "prometheus did not become ready"
}

# promql QUERY: an instant query; sets PQ to its result array (fails, in
# this shell, on an error) and BYI to {"h1": value, ...}.
promql() {
	local r
	r=$(curl -sS --max-time 10 -G --data-urlencode "query=$1" \
		"http://127.0.0.1:$PPORT/api/v1/query") || fail "prometheus did not answer"
	[ "$(jq -r .status <<<"$r")" = success ] || fail "PromQL failed: $1
$r"
	PQ=$(jq -c .data.result <<<"$r")
	BYI=$(jq -c 'map(select(.metric.instance != null) | {(.metric.instance): (.value[1] | tonumber)}) | add // {}' <<<"$PQ")
}
# wait_promql QUERY JQ-TEST: up to 20 s until the result passes the test.
wait_promql() {
	local i
	for i in $(seq 1 200); do
		promql "$1"
		jq_true "$PQ" "$2" && return 0
		sleep 0.1
	done
	fail "after 20 s, $1 gives $PQ"
}

wait_promql 'threadwatch_recommendation_low_stacks' 'length == 3'
t0=$(date +%s.%N)
promql 'up{job="threadwatch"}'
[ "$BYI" = '{"h1":1,"h2":1,"h3":1}' ] || fail "targets not all up: $BYI"

promql 'threadwatch_recommendation_low_stacks'
low=$BYI
[ "$low" = '{"h1":1,"h2":0,"h3":0}' ] || fail "recommendation gauges: $low"
ok "every host's recommendation gauge, by instance label: $low"

promql 'threadwatch_ctxsw_ratio'
ratios=$BYI
[ "$(jq length <<<"$ratios")" = 3 ] || fail "ctxsw ratios: $ratios"
for i in 0 1 2; do
	PORT=${FLEET_PORTS[$i]}
	want=$(api /api/v1/recommendation | jq .inputs.ctxsw.ratio)
	jq_true "$ratios" --arg h "${FLEET_NAMES[$i]}" --argjson w "$want" \
		'(.[$h] - $w) | fabs < 1e-12' ||
		fail "${FLEET_NAMES[$i]}: Prometheus has ratio $(jq --arg h "${FLEET_NAMES[$i]}" '.[$h]' <<<"$ratios"), the API $want"
done
ok "every host's switch-time ratio equals its API's: $ratios"

promql 'count(threadwatch_recommendation_low_stacks == 1)'
n=$(jq -r '.[0].value[1]' <<<"$PQ")
[ "$n" = 1 ] || fail "hosts where low stacks pay: $n, expected 1"
promql 'count by (verdict) (threadwatch_recommendation_info)'
info=$(jq -c 'map({(.metric.verdict): .value[1]}) | add' <<<"$PQ")
[ "$info" = '{"low":"1","high":"2"}' ] || [ "$info" = '{"high":"2","low":"1"}' ] ||
	fail "verdicts by label: $info"
promql 'sum by (instance) (threadwatch_headroom_warning)'
warn=$BYI
jq_true "$warn" '.h3 == 1 and .h1 == 0 and .h2 == 0' || fail "headroom warnings: $warn"
promql 'threadwatch_threads_knee{policy="low"}'
knee=$BYI
# Only a host with a knee has the series: no NaN for a knee that did not occur.
jq_true "$knee" 'keys == ["h3"] and .h3 > 0' || fail "low-stack knees: $knee"
promql '{__name__=~"threadwatch_.+"}'
jq_true "$PQ" 'length > 50 and all(.value[1] != "NaN")' || fail "NaN samples in Prometheus: $PQ"
# The renamed live-thread maximum under both names, and the daemon's own
# process figures.
promql 'threadwatch_threads_live_max == threadwatch_threads_max'
[ "$(jq length <<<"$PQ")" = 3 ] || fail "threads_live_max and its old name differ: $PQ"
promql 'time() - process_start_time_seconds{job="threadwatch"} >= 0 and process_open_fds > 0 and process_resident_memory_bytes > 0 and process_cpu_seconds_total >= 0'
[ "$(jq length <<<"$PQ")" = 3 ] || fail "process_* of the three daemons: $PQ"
ok "low stacks pay on $n host; verdicts $info; headroom warnings $warn; knees $knee; no NaN; process_* of every daemon"

# --- a kernel upgrade on h2 ------------------------------------------------------------
# fake_ctxsw DIR RATIO LOW_NS HIGH_NS: a ctxsw probe that "measures" these.
fake_ctxsw() {
	mkdir -p "$1"
	cat >"$1/ctxsw" <<EOF
#!/bin/sh
# fake ctxsw for 75-prometheus: ratio $2, $3 ns low, $4 ns high.
cat <<'DOC'
{"probe": "ctxsw", "protocol": 1, "status": "ok", "reason": null,
 "started_at": "2026-12-03T07:51:56.123Z", "started_unix": 1796284316.123,
 "duration_s": 0.01, "params": {"quick": true},
 "scalars": {"low_ns": {"value": $3, "unit": "ns"}, "high_ns": {"value": $4, "unit": "ns"},
   "ratio": {"value": $2, "unit": "ratio"},
   "ratio_ci_lo": {"value": $(printf %.3f "$(echo "$2 - 0.01" | bc)"), "unit": "ratio"},
   "ratio_ci_hi": {"value": $(printf %.3f "$(echo "$2 + 0.01" | bc)"), "unit": "ratio"},
   "pairs": {"value": 15, "unit": "count"}},
 "series": {}, "info": {}}
DOC
EOF
	chmod 755 "$1/ctxsw"
}

sleep 3 # a few scrapes of the figures before the upgrade
t1=$(date +%s.%N)
old_ratio=$(jq .h2 <<<"$ratios")

# h1's figures change too, but on the same kernel: the kernel-upgrade panel
# must leave it out.
fake_ctxsw "$TW_TMP/probes" 0.70 1050 1500
PORT=${FLEET_PORTS[0]}
last=$(api /api/v1/status | jq -r .last_cycle.id)
api /api/v1/runs -X POST -H "Authorization: Bearer $TOKEN" >/dev/null || fail "no cycle on h1"
wait_cycle $((last + 1)) 30
[ "$(api /api/v1/host | jq '.history | length')" = 1 ] || fail "h1's identity changed"
wait_promql 'threadwatch_ctxsw_ratio{instance="h1"}' '.[0].value[1] == "0.7"'

DPID=${FLEET_PIDS[1]}
PORT=${FLEET_PORTS[1]}
last=$(api /api/v1/status | jq -r .last_cycle.id)
stop_daemon
fake_ctxsw "$TW_TMP/h2-probes" 0.85 1275 1500
cat >"$TW_TMP/threadwatchd-uname26" <<EOF
#!/bin/sh
# threadwatchd seeing a 2.6 kernel release: a changed kernel for 75-prometheus.
exec setarch "$(uname -m)" --uname-2.6 "$B/threadwatchd" "\$@"
EOF
chmod 755 "$TW_TMP/threadwatchd-uname26"
TWD=$TW_TMP/threadwatchd-uname26 start_daemon h2 --port "${FLEET_PORTS[1]}" \
	--probe-dir "$TW_TMP/h2-probes"
FLEET_PIDS[1]=$DPID
[ "$PORT" = "${FLEET_PORTS[1]}" ] || fail "h2 came back on port $PORT"
wait_cycle $((last + 1)) 30
diff=$(api /api/v1/host | jq -r '.history[0].diff')
grep -q "kernel" <<<"$diff" || fail "h2 did not record a kernel change: $diff"
new_ratio=$(api /api/v1/recommendation | jq .inputs.ctxsw.ratio)
[ "$new_ratio" = 0.85 ] || fail "h2's new ratio is $new_ratio"
ok "h2 restarted on a \"new kernel\" ($diff) and measured ratio $new_ratio (was $old_ratio)"
wait_promql 'threadwatch_ctxsw_ratio{instance="h2"}' '.[0].value[1] == "0.85"'

# dash_expr JQ-PATH WINDOW: a dashboard query with Grafana's variables filled in.
dash_expr() {
	jq -r "$1" "$DASH" | sed -e 's/\$instance/.*/g' -e 's/\$job/.*/g' -e "s/\\\$window/$2/g" \
		-e 's/\$min_change/5/g' -e 's/\$__range/1h/g'
}
# The window reaches back to the middle of the scrapes before the upgrade.
w=$(echo "($(date +%s.%N) - ($t0 + $t1) / 2 + 0.999) / 1" | bc)s
panel='.panels[] | select(.title == "Hosts whose figures changed after a kernel upgrade")'
[ "$(jq "[$panel] | length" "$DASH")" = 1 ] || fail "no single kernel-upgrade panel"
promql "$(dash_expr "$panel | .targets[0].expr" "$w")"
res=$PQ
echo "kernel-upgrade panel (window $w): $res"
jq_true "$res" 'map(.metric.instance) | unique == ["h2"]' ||
	fail "the kernel-upgrade panel should list h2 only: $res"
want=$(echo "100 * (0.85 / $old_ratio - 1)" | bc -l)
jq_true "$res" --argjson w "$want" 'map(select(.metric.figure == "switch-time ratio low/high"))
	| length == 1 and ((.[0].value[1] | tonumber) - $w | fabs) < 1e-6' ||
	fail "the kernel-upgrade panel's ratio change is not $want %: $res"
# Without the host-change condition h1 would be listed as well.
expr=$(dash_expr "$panel | .targets[0].expr" "$w" | sed '/^  and on(instance) (changes(/d')
promql "$expr"
jq_true "$PQ" 'map(.metric.instance) | unique == ["h1", "h2"]' ||
	fail "h1's change on the same kernel is not what the panel leaves out: $PQ"
panel2='.panels[] | select(.title == "Host changes in the window")'
[ "$(jq "[$panel2] | length" "$DASH")" = 1 ] || fail "no single panel \"Host changes in the window\""
promql "$(dash_expr "$panel2 | .targets[0].expr" "$w")"
res=$PQ
jq_true "$res" 'map(.metric.instance) == ["h2"]' ||
	fail "the host-change panel should list h2 only: $res"
ok "the kernel-upgrade panels list h2 only (ratio $(printf '%.1f' "$want") %), not h1 (changed on the same kernel)"

# The cohort recording rules on the real fleet: after the upgrade h2 is a
# kernel cohort of its own, and the one cpu cohort's median switch-time
# ratio is the median of the three hosts' ratios.
wait_promql 'kernel:threadwatch_hosts:count' 'length == 2 and (map(.value[1]) | sort == ["1", "2"])'
promql 'threadwatch_host_info{instance="h2"}'
k2=$(jq -r '.[0].metric.kernel' <<<"$PQ")
promql 'kernel:threadwatch_hosts:count'
jq_true "$PQ" --arg k "$k2" 'map(select(.metric.kernel == $k) | .value[1]) == ["1"]' ||
	fail "h2's kernel $k2 is not a cohort of one: $PQ"
promql 'threadwatch_ctxsw_ratio'
want=$(jq -c 'map(.value[1] | tonumber) | sort | .[1]' <<<"$PQ")
wait_promql 'cpu:threadwatch_ctxsw_ratio:median' \
	"length == 1 and ((.[0].value[1] | tonumber) - $want | fabs) < 1e-12"
ok "cohort rules: h2 alone on kernel $k2, the cpu cohort's median ratio $want"

# Every query of the dashboard is valid PromQL and every variable is known.
n=0
while IFS= read -r q; do
	q=$(sed -e 's/\$instance/.*/g' -e 's/\$job/.*/g' -e "s/\\\$window/$w/g" -e 's/\$min_change/5/g' \
		-e 's/\$__range/1h/g' <<<"$q")
	[[ "$q" == *'$'[a-z_]* ]] && fail "unknown variable in: $q"
	promql "$q"
	n=$((n + 1))
done < <(jq -r '.panels[].targets[].expr | gsub("\n"; " ")' "$DASH")
[ "$n" -ge 10 ] || fail "only $n dashboard queries"
ok "all $n dashboard queries are valid PromQL on Prometheus $(prometheus --version 2>&1 | awk 'NR == 1 {print $3}')"

# The shipped alerting rules evaluate cleanly on real daemons' metrics: the
# host near its pids.max raises ThreadwatchHeadroomLow (pending for its 5
# minutes), h1's probes whose last two runs failed (its cycle ran with no
# probes, after a seeded failure) raise ThreadwatchProbeFailing, and
# nothing else is pending or firing.
for i in $(seq 1 100); do
	rules=$(curl -sS "http://127.0.0.1:$PPORT/api/v1/rules") || fail "no /api/v1/rules"
	jq -e '[.data.groups[].rules[] | select(.lastEvaluation | startswith("0001"))] | length == 0' \
		<<<"$rules" >/dev/null && jq -e '[.data.groups[].rules[].alerts[]?] | length > 0' \
		<<<"$rules" >/dev/null && break
	sleep 0.1
done
jq_true "$rules" '[.data.groups[].rules[]] | length >= 7 and all(.health == "ok")' ||
	fail "the shipped rules do not all evaluate: $rules"
alerts=$(jq -c '[.data.groups[].rules[].alerts[]? | {alert: .labels.alertname, instance: .labels.instance, probe: .labels.probe, state}]' <<<"$rules")
PORT=${FLEET_PORTS[0]}
failing=()
for p in $TW_BUILTINS; do
	last2=$(api "/api/v1/runs?probe=$p&limit=2" | jq -c '[.runs[].status]')
	[ "$last2" = '["error","error"]' ] && failing+=("$p")
done
want=$(printf '%s\n' "ThreadwatchHeadroomLow h3 -" "${failing[@]/#/ThreadwatchProbeFailing h1 }" |
	jq -R . | jq -sc 'sort')
jq_true "$alerts" --argjson w "$want" \
	'map(.alert + " " + .instance + " " + (.probe // "-")) | sort == $w' ||
	fail "the shipped rules raised $alerts, expected $want"
ok "the shipped alerting rules evaluate on the fleet: $alerts"

kill -TERM "$PROM_PID"
wait "$PROM_PID"
rc=$?
PROM_PID=""
[ "$rc" = 0 ] || fail "prometheus exited with $rc"
stop_fleet
ok "prometheus and the three daemons stopped"

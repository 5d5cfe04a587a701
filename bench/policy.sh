#!/bin/bash
# bench/policy.sh: the daemon's figures against `threadwatch run`'s on one
# host, run by bench/run.sh (phase policy) or alone. The daemon prices the
# services with its switch and hand-off times, so they must be what a
# normal thread pays. Each round, interleaved: one daemon cycle at its
# defaults (probe_sched = priced: ctxsw and handoff at SCHED_OTHER, nice
# 19), `threadwatch run ctxsw handoff` at the caller's normal policy, and
# the same under --sched idle --nice 10 (the daemon's old default, for the
# difference SCHED_IDLE makes). All --quick, each pinned to the quiet CPU.
# Writes $POL_OUT/results.json: per round, per setting, ctxsw's high_ns and
# handoff's same_cpu_ns with their 95% CIs and the policy the document
# recorded.
#
# A run's CI is of its own samples and does not hold what changes between
# runs (which physical CPU a vCPU is on, what else the host runs), so the
# settings are also compared as runs: each setting's POL_ROUNDS figures,
# their median and its distribution-free CI (bench/report_policy.py).
#
# Environment: B (build dir), SRC; POL_OUT [$B/bench/policy]; POL_ROUNDS [6].
set -euo pipefail
: "${B:?B (the build directory) must be set}"
OUT=${POL_OUT:-$B/bench/policy}
ROUNDS=${POL_ROUNDS:-6}
TW=$B/threadwatch TWD=$B/threadwatchd
[ -x "$TW" ] && [ -x "$TWD" ] || { echo "policy.sh: build $TW and $TWD first" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/d"
TOKEN=policy-bench-token-$$-$RANDOM
: >"$OUT/empty.conf"
"$TWD" --config "$OUT/empty.conf" --state-dir "$OUT/d" --port 0 --port-file "$OUT/d/port" \
	--probe-dir "$B/probes" --probes-d "" --quick --guard off --splay 0 --interval 1d \
	--trigger-min-interval 0 --token "$TOKEN" >"$OUT/daemon.log" 2>&1 &
DPID=$!
trap 'kill $DPID 2>/dev/null; wait $DPID 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do [ -s "$OUT/d/port" ] && break; sleep 0.1; done
PORT=$(cat "$OUT/d/port")
api() { curl -sS --max-time 30 "$@"; }
status() { api "http://127.0.0.1:$PORT/api/v1/status"; }
# cycle N: waits for cycle N (started at start-up, or POSTed) to end.
cycle() {
	for _ in $(seq 1 1200); do
		[ "$(status | jq -r '.last_cycle.id // 0')" -ge "$1" ] &&
			[ "$(status | jq -r .cycle_running)" = false ] && return 0
		sleep 0.5
	done
	echo "policy.sh: cycle $1 did not end" >&2
	exit 1
}
# figures: {ctxsw: [v, lo, hi, policy, nice, cpu], handoff: [...]} from documents
# on standard input ({probe: document}).
figures() {
	jq -c '{ctxsw: (.ctxsw | [.scalars.high_ns.value, .scalars.high_ci_lo.value,
	          .scalars.high_ci_hi.value, .info.sched_policy, .info.nice, .info.cpu]),
	        handoff: (.handoff | [.scalars.same_cpu_ns.value, .scalars.same_cpu_ci_lo.value,
	          .scalars.same_cpu_ci_hi.value, .info.sched_policy, .info.nice, .info.cpu])}'
}
daemon_docs() {
	local p id
	for p in ctxsw handoff; do
		id=$(api "http://127.0.0.1:$PORT/api/v1/runs?probe=$p&limit=1" | jq -r '.runs[0].id')
		api "http://127.0.0.1:$PORT/api/v1/runs/$id" | jq -c --arg p "$p" '{($p): .doc}'
	done | jq -s 'add'
}
cycle 1 # the start-up cycle
rounds=()
for r in $(seq 1 "$ROUNDS"); do
	[ "$r" = 1 ] || {
		api -X POST -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/runs" >/dev/null
		cycle "$r"
	}
	d=$(daemon_docs | figures)
	n=$("$TW" run --json --quick ctxsw handoff 2>/dev/null | jq '.probes' | figures)
	i=$("$TW" run --json --quick --sched idle --nice 10 ctxsw handoff 2>/dev/null | jq '.probes' | figures)
	echo "[policy] round $r: daemon $d; run $n; idle $i" >&2
	rounds+=("{\"daemon\": $d, \"run\": $n, \"idle\": $i}")
done
printf '%s\n' "${rounds[@]}" | jq -s '{rounds: .}' >"$OUT/results.json"

# Helpers for the reliability tests (sourced after lib.sh): fake probes that
# print documents with scalars and series, and a check of a threadwatch
# database from outside with the sqlite3 command-line tool: PRAGMA
# integrity_check, foreign keys, and no partial run (an ok run stores its
# document, one sample per scalar and every point of every series; an error
# run stores none; nothing is left without its run; the per-probe counters
# match the runs).
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed"; exit 77; }

# rich_probe DIR NAME: an instant fake probe whose document has three
# scalars and two series (5 and 3 points), named as the real NAME prints
# them where it is a built-in.
rich_probe() {
	local dir=$1 name=$2 f=$1/$2 scalars series
	case $name in
	ctxsw)
		scalars='"low_ns": {"value": 760.5, "unit": "ns"}, "high_ns": {"value": 758, "unit": "ns"},
 "ratio": {"value": 1.003, "unit": "ratio"}'
		series='"pair_ratio": {"x_unit": "count", "y_unit": "ratio",
  "points": [[0, 1.0], [1, 1.01], [2, 0.99], [3, 1.0], [4, 1.02]]},
 "extra": {"x_unit": "count", "y_unit": "ratio", "points": [[0, 1], [1, 2], [2, 3]]}' ;;
	map32)
		scalars='"window_bytes": {"value": 1073741824, "unit": "bytes"},
 "capacity_stacks": {"value": 127, "unit": "count"}, "slope": {"value": 0.04, "unit": "slope"}'
		series='"fail_median_ns": {"x_unit": "vmas", "y_unit": "ns",
  "points": [[100, 1500], [1100, 1530], [2100, 1560], [3100, 1590], [4100, 1620]]},
 "plain_median_ns": {"x_unit": "vmas", "y_unit": "ns", "points": [[100, 900], [1100, 910], [2100, 920]]}' ;;
	*)
		scalars='"max_threads": {"value": 4096, "unit": "threads"},
 "low_first_rate": {"value": 52000, "unit": "per_s"}, "high_first_rate": {"value": 51000, "unit": "per_s"}'
		series='"low_median_ns": {"x_unit": "threads", "y_unit": "ns",
  "points": [[64, 19000], [128, 19100], [192, 19200], [256, 19300], [320, 19400]]},
 "high_median_ns": {"x_unit": "threads", "y_unit": "ns", "points": [[64, 19500], [128, 19500], [192, 19600]]}' ;;
	esac
	mkdir -p "$dir"
	cat >"$f" <<EOF
#!/bin/sh
# fake "$name" probe for the reliability tests: an instant, valid document
cat <<'DOC'
{"probe": "$name", "protocol": 1, "status": "ok", "reason": null,
 "started_at": "2026-12-03T07:51:56.123Z", "started_unix": 1796284316.123,
 "duration_s": 0.01, "params": {"quick": true},
 "scalars": {$scalars},
 "series": {$series}, "info": {}}
DOC
EOF
	chmod 755 "$f"
}

# The checks, each "name|count of offending rows", read in one transaction
# so that a daemon writing at the same time is seen at one instant.
STORE_CHECK_SQL="
BEGIN;
SELECT 'integrity|' || group_concat(integrity_check, '; ') FROM pragma_integrity_check;
SELECT 'foreign_keys|' || count(*) FROM pragma_foreign_key_check;
SELECT 'ok_without_document|' || count(*) FROM runs r WHERE r.status IN ('ok', 'skipped')
 AND r.pruned_ms IS NULL AND NOT EXISTS (SELECT 1 FROM run_docs d WHERE d.run_id = r.id
 AND d.doc IS NOT NULL);
SELECT 'ok_samples_missing|' || count(*) FROM runs r JOIN run_docs d ON d.run_id = r.id
 WHERE r.status = 'ok' AND d.doc IS NOT NULL AND (SELECT count(*) FROM samples s
 WHERE s.run_id = r.id) != (SELECT count(*) FROM json_each(d.doc, '\$.scalars'));
SELECT 'ok_series_missing|' || count(*) FROM runs r JOIN run_docs d ON d.run_id = r.id
 WHERE r.status = 'ok' AND d.doc IS NOT NULL AND (SELECT count(*) FROM series s
 WHERE s.run_id = r.id) != (SELECT count(*) FROM json_each(d.doc, '\$.series'));
SELECT 'points_missing|' || count(*) FROM series s JOIN run_docs d ON d.run_id = s.run_id
 WHERE d.doc IS NOT NULL AND (SELECT count(*) FROM points p WHERE p.series_id = s.id)
 != json_array_length(d.doc, '\$.series.\"' || s.name || '\".points');
SELECT 'error_with_samples|' || count(*) FROM runs r WHERE r.status != 'ok'
 AND (EXISTS (SELECT 1 FROM samples s WHERE s.run_id = r.id)
 OR EXISTS (SELECT 1 FROM series s WHERE s.run_id = r.id));
SELECT 'samples_without_run|' || count(*) FROM samples WHERE run_id NOT IN (SELECT id FROM runs);
SELECT 'series_without_run|' || count(*) FROM series WHERE run_id NOT IN (SELECT id FROM runs);
SELECT 'points_without_series|' || count(*) FROM points WHERE series_id NOT IN (SELECT id FROM series);
SELECT 'docs_without_run|' || count(*) FROM run_docs WHERE run_id NOT IN (SELECT id FROM runs);
SELECT 'runs_without_cycle|' || count(*) FROM runs WHERE cycle_id IS NOT NULL
 AND cycle_id NOT IN (SELECT id FROM cycles);
SELECT 'totals_mismatch|' || count(*) FROM (SELECT probe, status, count(*) AS c FROM runs
 GROUP BY probe, status) x LEFT JOIN run_totals t USING (probe, status) WHERE t.n IS NOT x.c;
SELECT 'runs|' || count(*) FROM runs;
SELECT 'samples|' || count(*) FROM samples;
SELECT 'points|' || count(*) FROM points;
SELECT 'cycles|' || count(*) FROM cycles;
COMMIT;"

# store_check DB: fails unless every check passes; sets CHECK_RUNS,
# CHECK_SAMPLES, CHECK_POINTS and CHECK_CYCLES to what the database holds.
# Reads only (the daemon may be running and writing).
store_check() {
	local db=$1 out line name val bad=""
	out=$(sqlite3 -readonly -batch "$db" "$STORE_CHECK_SQL" 2>&1) ||
		fail "sqlite3 cannot read \"$db\": $out"
	while IFS= read -r line; do
		name=${line%%|*}
		val=${line#*|}
		case $name in
		integrity) [ "$val" = ok ] || bad="$bad integrity_check: $val;" ;;
		runs) CHECK_RUNS=$val ;;
		samples) CHECK_SAMPLES=$val ;;
		points) CHECK_POINTS=$val ;;
		cycles) CHECK_CYCLES=$val ;;
		*) [ "$val" = 0 ] || bad="$bad $name: $val;" ;;
		esac
	done <<<"$out"
	[ -z "$bad" ] || fail "\"$db\" is inconsistent:$bad"
	[ -n "${CHECK_RUNS:-}" ] || fail "store_check read nothing from \"$db\": $out"
}

# asan_build: true when threadwatchd is built with AddressSanitizer (make
# check-sanitize), whose quarantine of freed memory makes RSS no measure of
# leaks; the tests then print RSS but do not bound it.
asan_build() { nm "$TWD" 2>/dev/null | grep -q __asan_init; }

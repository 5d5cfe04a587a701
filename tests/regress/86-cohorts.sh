#!/usr/bin/env bash
# 86-cohorts: `threadwatch fleet --by FIELD` over seven daemons seeded by
# twseed with the project's two kinds of test machine and arm64 hosts:
# three Intel guests (a switch about 0.8 us, FSGSBASE), three AMD guests
# (about 3.5 us, PTI) and one arm64 host. --by cpu puts the AMD cohort's
# switch at about 4x the Intel cohort's, each with a bootstrap CI, and
# flags the two as differing beyond their CIs by cpu; --by arch shows the
# arm64 host with map32 not applicable; --where keeps one CPU model;
# --json gives the cohorts as objects.
#
# A daemon records the fingerprint of the machine it runs on, so each host
# is served by fleet_stub.py with what a daemon over the seeded database
# answers, its fingerprint and recommendation being the seeded host's.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
. "$SRC/tests/regress/lib-fleet.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed"; exit 77; }
TW=$B/threadwatch
STUBS=()
trap 'for p in "${STUBS[@]}"; do kill -TERM "$p" 2>/dev/null; done' EXIT
URLS=()
n=0
for kind in intel intel intel amd amd amd arm64; do
	n=$((n + 1))
	name=$kind-$n
	db=$TW_TMP/$name/threadwatch.db
	mkdir -p "$TW_TMP/$name"
	"$SEED" --db "$db" --days 2 --quiet --seed "$n" --host-kind "$kind" --all-probes ||
		fail "twseed --host-kind $kind failed"
	cp "$db" "$TW_TMP/$name.seeded.db"
	start_daemon "$name" --interval 6h
	record_answers "$PORT" "$TW_TMP/$name.rec.json"
	stop_daemon
	sdb=$TW_TMP/$name.seeded.db
	jq --argjson fp "$(sqlite3 "$sdb" 'SELECT full FROM fingerprints ORDER BY id DESC LIMIT 1')" \
		--argjson res "$(sqlite3 "$sdb" 'SELECT result FROM recommendations ORDER BY id DESC LIMIT 1')" \
		--argjson in "$(sqlite3 "$sdb" 'SELECT inputs FROM recommendations ORDER BY id DESC LIMIT 1')" \
		'.["/api/v1/host"].current.fingerprint = $fp
		 | .["/api/v1/recommendation"] += ($res + {inputs: $in})' \
		"$TW_TMP/$name.rec.json" >"$TW_TMP/$name.answers.json" || fail "cannot patch $name's answers"
	start_stub "$TW_TMP/$name.answers.json" 1 --lifetime 300
	STUBS+=("$STUB_PID")
	URLS+=("127.0.0.1:$STUB_FIRST")
done

out=$("$TW" fleet --by cpu "${URLS[@]}") || fail "fleet --by cpu exited $?: $out"
echo "$out"
doc=$("$TW" fleet --json --by cpu "${URLS[@]}") || fail "fleet --json --by cpu exited $?"
co() { jq -c --arg v "$1" '.cohorts.cohorts[] | select(.values.cpu | startswith($v))' <<<"$doc"; }
# The figures a fleet compares are the catalogue's, the newer probes' too:
# each cohort has all five, and the table gives the three beyond the first
# two a line each.
FIGS='["createscale_nocache_2_efficiency","ctxsw_high_ns","ctxsw_ratio","handoff_cross_ratio","stackmem_glibc_bytes_per_thread"]'
jq -e --argjson f "$FIGS" '(.cohorts.fleet_median | keys) == $f and
	all(.cohorts.cohorts[] | select(.values.cpu | test("Intel|AMD")); (.figures | keys) == $f and all(.figures[]; .n == 3))' \
	<<<"$doc" >/dev/null || fail "the cohorts' figures: $(jq -c '.cohorts.fleet_median' <<<"$doc")"
for f in handoff.cross_ratio stackmem.glibc_bytes_per_thread createscale.nocache_2_efficiency; do
	grep -qE "^  $f +[0-9.]+( B)? \[" <<<"$out" || fail "fleet --by cpu prints no line for $f: $out"
done
ok "cohorts compare the five key figures of the fleet: $(jq -c '.cohorts.fleet_median | map_values(. * 1000 | round / 1000)' <<<"$doc")"
intel=$(co Intel)
amd=$(co AMD)
[ "$(jq .hosts <<<"$intel")/$(jq .hosts <<<"$amd")" = 3/3 ] || fail "cohort sizes: $intel $amd"
ratio=$(jq -n --argjson a "$amd" --argjson i "$intel" \
	'$a.figures.ctxsw_high_ns.median / $i.figures.ctxsw_high_ns.median')
jq -e -n --argjson r "$ratio" '$r > 3.5 and $r < 5' >/dev/null ||
	fail "the AMD cohort's switch is $ratio x the Intel cohort's, not about 4"
jq -e '.figures.ctxsw_high_ns | (.ci95[0] <= .median and .median <= .ci95[1] and .ci95[0] > 0)' \
	<<<"$amd" >/dev/null || fail "the AMD cohort's CI: $amd"
jq -e '[.flags[] | select(.figure == "ctxsw_high_ns" and .field == "cpu" and (.versus | startswith("Intel")))] | length == 1' \
	<<<"$amd" >/dev/null || fail "the AMD cohort is not flagged against the Intel one: $amd"
grep -q 'ctxsw_high_ns differs beyond the CIs from cpu = Intel' <<<"$out" ||
	fail "the table does not flag the cohorts"
ok "--by cpu: AMD/Intel switch time $(printf %.2f "$ratio")x, CIs $(jq -c .figures.ctxsw_high_ns.ci95 <<<"$intel") and $(jq -c .figures.ctxsw_high_ns.ci95 <<<"$amd") ns, flagged by cpu"

out=$("$TW" fleet --by arch "${URLS[@]}") || fail "fleet --by arch exited $?"
echo "$out"
grep -E '^aarch64 +1 .*not applicable$' <<<"$out" >/dev/null || fail "--by arch: no arm64 cohort with map32 not applicable"
grep -E '^x86_64 +6 .*measured$' <<<"$out" >/dev/null || fail "--by arch: no x86_64 cohort of 6 measured hosts"
ok "--by arch: the arm64 host's map32 is not applicable"

doc=$("$TW" fleet --json --by kernel --where 'cpu=AMD EPYC 7B12 64-Core Processor' "${URLS[@]}") ||
	fail "fleet --where exited $?"
[ "$(jq '.hosts | length' <<<"$doc")" = 3 ] || fail "--where cpu=AMD kept $(jq '.hosts | length' <<<"$doc") hosts"
[ "$(jq -c '[.cohorts.cohorts[] | {k: .values.kernel, hosts}]' <<<"$doc")" = '[{"k":"6.1.0-21-amd64","hosts":3}]' ] ||
	fail "--by kernel --where cpu=AMD: $(jq -c .cohorts <<<"$doc")"
"$TW" fleet --where cpu "${URLS[0]}" >/dev/null 2>&1 && fail "--where without = was accepted"
ok "--where cpu=AMD keeps the three AMD hosts, one kernel cohort"

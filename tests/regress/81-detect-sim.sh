#!/usr/bin/env bash
# 81-detect-sim: regression detection at the config's defaults meets the
# fleet targets of doc/regression.md on a small simulated fleet (fixed
# seed, 100 hosts x 90 days, every key figure): at most 1 false event per
# 1,000 host-days over the grid of noise (CV 2, 3, 5% x phi 0, 0.5 x no
# episodes, episodes, two modes), 95% of 10% steps with a kernel change
# found within 2 cycles at CV 2% and 3% (fast path) and 95% of those
# without one within 16 cycles at CV 2% (slow path), each path reported
# apart. The simulator can fail: detect_k_sustained 3 raises false events
# on the episodic fleet. Same seed, same report; bad options exit 2 with a
# message.
set -u
. "$(dirname "$0")/lib.sh"
T=$B/threadwatch
[ -x "$T" ] || fail "\"$T\" is not built"
SIM=(--hosts 100 --days 90 --seed 7)

ar1=$("$T" detect-sim "${SIM[@]}" --noise ar1 --cv 5% --phi 0.5 --json) || fail "detect-sim ar1 failed"
for f in host_days false_events false_per_1000_host_days steps detected_steps median_delay_cycles \
	contended_runs paths; do
	jq -e --arg f "$f" 'has($f)' <<<"$ar1" >/dev/null || fail "--json lacks $f: $ar1"
done
jq -e '.host_days == 9000 and .steps == 0 and .simulation.noise == "ar1" and .detect.k == 3
	and .detect.k_sustained == 12 and .simulation.episode_visible == 0.5' \
	<<<"$ar1" >/dev/null || fail "unexpected ar1 report: $ar1"

# The false-event grid of doc/regression.md, small: CV 2, 3, 5% x phi 0, 0.5
# x no episodes, episodes (3% of cycles start one of 4 cycles, 5-15%) and
# two modes (30% of cycles 10% slower), every key figure of 100 hosts over
# 90 days (9,000 host-days): at most 1 false event per 1,000 host-days.
grid=
for cv in 2% 3% 5%; do
	for phi in 0 0.5; do
		for noise in iid "episodic --episode-rate 3% --episode-cycles 4 --episode-size 10%" \
			"bimodal --mode-gap 10% --mode-p 0.3"; do
			# shellcheck disable=SC2086 # the noise's options are words
			out=$("$T" detect-sim "${SIM[@]}" --noise $noise --cv "$cv" --phi "$phi" --json) ||
				fail "detect-sim --noise $noise --cv $cv --phi $phi failed"
			jq -e '.false_per_1000_host_days <= 1' <<<"$out" >/dev/null ||
				fail "--noise $noise --cv $cv --phi $phi: $(jq .false_per_1000_host_days <<<"$out") false events per 1,000 host-days"
			grid="$grid ${noise%% *}/$cv/$phi:$(jq .false_events <<<"$out")"
		done
	done
done
ok "false events in 9,000 host-days (noise/CV/phi:count):$grid"

# Steps of 10% with a kernel change at CV 2% and 3%: 95% found within 2
# cycles, on the fast path; without one at CV 2%: 95% within 16 cycles, on
# the slow path; half and half: each kind counted apart.
for cv in 2% 3%; do
	fp=$("$T" detect-sim "${SIM[@]}" --cv "$cv" --step 10% --with-fingerprint-change --json) ||
		fail "detect-sim with a fingerprint change failed"
	jq -e '.paths.change as $c | $c.steps == 100 * .figures and $c.in_time >= 0.95 * $c.steps
		and $c.within_cycles == 2 and $c.by_path.change == $c.detected and .paths.sustained.steps == 0
		and .false_events <= .steps / 100' <<<"$fp" >/dev/null ||
		fail "10% steps with a kernel change at CV $cv: $(jq -c .paths.change <<<"$fp")"
	ok "10% steps with a kernel change at CV $cv: $(jq -r '.paths.change | "\(.in_time) of \(.steps) within 2 cycles, median delay \(.median_delay_cycles)"' <<<"$fp")"
done
st=$("$T" detect-sim "${SIM[@]}" --cv 2% --step 10% --json) || fail "detect-sim step failed"
jq -e '.paths.sustained as $s | $s.steps == 100 * .figures and $s.in_time >= 0.95 * $s.steps
	and $s.within_cycles == 16 and $s.median_delay_cycles == 11 and $s.by_path.sustained == $s.detected
	and .false_events <= .steps / 100' <<<"$st" >/dev/null ||
	fail "10% steps with no change at CV 2%: $(jq -c .paths.sustained <<<"$st")"
ok "10% steps with no change at CV 2%: $(jq -r '.paths.sustained | "\(.in_time) of \(.steps) within 16 cycles, median delay \(.median_delay_cycles)"' <<<"$st")"
mix=$("$T" detect-sim --hosts 20 --seed 7 --cv 2% --step 10% --fingerprint-change-share 0.5 --json) ||
	fail "detect-sim --fingerprint-change-share failed"
jq -e '.paths.change.steps == 10 * .figures and .paths.sustained.steps == 10 * .figures
	and .paths.change.median_delay_cycles == 2 and .paths.sustained.median_delay_cycles == 11' \
	<<<"$mix" >/dev/null || fail "half the steps with a kernel change: $(jq -c .paths <<<"$mix")"
"$T" detect-sim --hosts 20 --seed 7 --cv 2% --step 10% --fingerprint-change-share 0.5 |
	grep -q 'with a kernel change: .* found by the change path' || fail "the text report lacks the paths"
ok "half the steps with a kernel change: each path reported apart"

# The targets can be missed: with detect_k_sustained 3 an episode of 4
# cycles is a step; so is one the contention readings never show.
k3=$("$T" detect-sim "${SIM[@]}" --noise episodic --cv 5% --phi 0.5 --detect-k 3 --detect-k-sustained 3 \
	--json) || fail "detect-sim k 3 failed"
jq -e '.false_per_1000_host_days > 1' <<<"$k3" >/dev/null ||
	fail "detect_k_sustained 3 met the episodic target too: $(jq .false_per_1000_host_days <<<"$k3")"
ok "detect_k_sustained 3 misses it: $(jq .false_per_1000_host_days <<<"$k3") per 1,000 host-days"
vis=$("$T" detect-sim --hosts 20 --seed 7 --noise episodic --episode-visible 1 --json)
[ "$(jq '.contended_runs > 0' <<<"$vis")" = true ] || fail "--episode-visible 1 marked no run contended"
[ "$("$T" detect-sim --hosts 20 --seed 7 --noise episodic --episode-visible 0 --json | jq .contended_runs)" = 0 ] ||
	fail "--episode-visible 0 marked runs contended"
ok "--episode-visible 1 marks $(jq .contended_runs <<<"$vis") runs contended, 0 none"

one=$("$T" detect-sim --hosts 50 --seed 3 --noise episodic --cv 5% --phi 0.5 --detect-k 3 --detect-k-sustained 3 --json)
two=$("$T" detect-sim --hosts 50 --seed 3 --noise episodic --cv 5% --phi 0.5 --detect-k 3 --detect-k-sustained 3 --json)
other=$("$T" detect-sim --hosts 50 --seed 4 --noise episodic --cv 5% --phi 0.5 --detect-k 3 --detect-k-sustained 3 --json)
[ "$one" = "$two" ] || fail "the same seed gave another report"
[ "$one" != "$other" ] || fail "another seed gave the same report"
"$T" detect-sim --hosts 20 --days 30 --noise bimodal --mode-gap 10% --mode-p 0.3 | grep -q '^false events: ' ||
	fail "no text report"
ok "same seed, same report, another seed another; the text report and the bimodal model"

# --every in the units the help names: 90m, 1d, 30s, plain seconds.
for e in 90m:5400 1d:86400 30s:30 7200:7200 1h30m:5400; do
	ev=$("$T" detect-sim --hosts 2 --days 2 --every "${e%%:*}" --json) || fail "--every ${e%%:*} failed"
	jq -e --argjson s "${e#*:}" '.simulation.every_s == $s' <<<"$ev" >/dev/null ||
		fail "--every ${e%%:*}: every_s $(jq .simulation.every_s <<<"$ev"), not ${e#*:}"
done
ok "--every 90m, 1d, 30s, 7200 and 1h30m"

bad() {
	local want=$1 out rc
	shift
	out=$("$T" detect-sim "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 2 ] || fail "detect-sim $* exited $rc, not 2"
	grep -q -- "$want" <<<"$out" || fail "detect-sim $*: \"$out\" does not say \"$want\""
}
bad 'unknown option "--bogus"' --bogus
bad 'invalid value "loud" for --noise' --noise loud
bad '--hosts needs N' --hosts
bad 'invalid value "-3" for --hosts' --hosts -3
bad '--cv: 2 is not in 0..0.3' --cv 2
bad '--phi: 1 is not in \[0, 1)' --phi 1
bad 'invalid value "6x" for --every' --every 6x
bad '--step-day: 100 is not inside the 90 simulated days' --step 10% --step-day 100
bad 'detect_alpha: 0.0001 cannot be reached' --detect-alpha 0.0001
bad 'unexpected argument "extra"' extra
bad '--episode-visible and --fingerprint-change-share must be in 0..1' --episode-visible 2
bad 'detect_k_sustained: 2 is not in 3 (detect_k)..64' --detect-k-sustained 2
ok "bad options exit 2 with a message"

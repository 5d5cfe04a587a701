#!/usr/bin/env bash
# 81-detect-sim: regression detection at the config's defaults meets the
# fleet targets of doc/regression.md on a small simulated fleet (fixed
# seeds, 200 hosts x 90 days, every key figure): at most 1 false event per
# 1,000 host-days with AR(1) noise (CV 5%, phi 0.5), the same with
# noisy-neighbour episodes, and 95% of 10% steps found within 4 cycles at
# CV 2%. The simulator can fail: detect_k 3 raises false events on the
# episodic fleet. Same seed, same report; bad options exit 2 with a message.
set -u
. "$SRC/tests/regress/lib.sh"
T=$B/threadwatch
[ -x "$T" ] || fail "\"$T\" is not built"
SIM=(--hosts 200 --days 90 --seed 7)

ar1=$("$T" detect-sim "${SIM[@]}" --noise ar1 --cv 5% --phi 0.5 --json) || fail "detect-sim ar1 failed"
for f in host_days false_events false_per_1000_host_days steps detected_steps median_delay_cycles; do
	jq -e --arg f "$f" 'has($f)' <<<"$ar1" >/dev/null || fail "--json lacks $f: $ar1"
done
jq -e '.host_days == 18000 and .steps == 0 and .simulation.noise == "ar1" and .detect.k == 5' \
	<<<"$ar1" >/dev/null || fail "unexpected ar1 report: $ar1"
jq -e '.false_per_1000_host_days <= 1' <<<"$ar1" >/dev/null ||
	fail "AR(1) noise: $(jq .false_per_1000_host_days <<<"$ar1") false events per 1,000 host-days"
ok "AR(1) noise, CV 5%, phi 0.5: $(jq .false_per_1000_host_days <<<"$ar1") false events per 1,000 host-days"

ep=$("$T" detect-sim "${SIM[@]}" --noise episodic --cv 5% --phi 0.5 --episode-rate 2% \
	--episode-cycles 4 --episode-size 10% --json) || fail "detect-sim episodic failed"
jq -e '.false_per_1000_host_days <= 1' <<<"$ep" >/dev/null ||
	fail "episodes: $(jq .false_per_1000_host_days <<<"$ep") false events per 1,000 host-days"
ok "the same with noisy-neighbour episodes: $(jq .false_per_1000_host_days <<<"$ep") per 1,000 host-days"

st=$("$T" detect-sim "${SIM[@]}" --cv 2% --step 10% --step-day 60 --json) || fail "detect-sim step failed"
jq -e '.steps == 200 * .figures and .detected_in_time >= 0.95 * .steps and .within_cycles == 4
	and .median_delay_cycles <= 4 and .false_events <= .steps / 100' <<<"$st" >/dev/null ||
	fail "10% steps at CV 2%: $(jq -c '{steps, detected_steps, detected_in_time, median_delay_cycles}' <<<"$st")"
ok "10% steps at CV 2%: $(jq -r '"\(.detected_in_time) of \(.steps) found within 4 cycles, median delay \(.median_delay_cycles)"' <<<"$st")"
fp=$("$T" detect-sim --hosts 50 --seed 7 --cv 2% --step 10% --with-fingerprint-change --json) ||
	fail "detect-sim with a fingerprint change failed"
jq -e '.detected_in_time >= 0.95 * .steps' <<<"$fp" >/dev/null ||
	fail "10% steps with a kernel change: $(jq -c '{steps, detected_in_time}' <<<"$fp")"
ok "the same with a kernel change: $(jq -r '"\(.detected_in_time) of \(.steps)"' <<<"$fp")"

# The targets can be missed: with k = 3 an episode of 4 cycles is a step.
k3=$("$T" detect-sim "${SIM[@]}" --noise episodic --cv 5% --phi 0.5 --detect-k 3 --json) ||
	fail "detect-sim k 3 failed"
jq -e '.false_per_1000_host_days > 1' <<<"$k3" >/dev/null ||
	fail "detect_k 3 met the episodic target too: $(jq .false_per_1000_host_days <<<"$k3")"
ok "detect_k 3 misses it: $(jq .false_per_1000_host_days <<<"$k3") per 1,000 host-days"

one=$("$T" detect-sim --hosts 50 --seed 3 --noise episodic --cv 5% --phi 0.5 --detect-k 3 --json)
two=$("$T" detect-sim --hosts 50 --seed 3 --noise episodic --cv 5% --phi 0.5 --detect-k 3 --json)
other=$("$T" detect-sim --hosts 50 --seed 4 --noise episodic --cv 5% --phi 0.5 --detect-k 3 --json)
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
ok "bad options exit 2 with a message"

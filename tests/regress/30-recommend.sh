#!/usr/bin/env bash
# threadwatch recommend: verdicts from input files (the 2008 P4 figures in
# tests/data), workload overrides, stdin and `run --json` output as input,
# and exit 2 with the field named for every kind of bad input.
set -u
. "$(dirname "$0")/lib.sh"
TW="$B/threadwatch"
D="$SRC/tests/data"
[ -x "$TW" ] || fail "no $TW"
command -v jq >/dev/null || { echo "jq missing"; exit 77; }

# verdict FILE ARGS...: prints "verdict confidence rule" from --json output
verdict() {
	local f=$1
	shift
	"$TW" recommend --input "$f" --json "$@" | jq -r '.result | "\(.verdict) \(.confidence) \(.rule)"'
}
# figure FILE NAME ARGS...
figure() {
	local f=$1 n=$2
	shift 2
	"$TW" recommend --input "$f" --json "$@" | jq -r ".result.figures.$n"
}
# bad EXPECTED-STDERR-TEXT ARGS...: exit 2, the text on stderr, nothing on stdout
bad() {
	local want=$1 rc
	shift
	"$TW" recommend "$@" >"$TW_TMP/out" 2>"$TW_TMP/err"
	rc=$?
	[ "$rc" = 2 ] || fail "recommend $* exited $rc, not 2"
	grep -qF -- "$want" "$TW_TMP/err" || fail "recommend $*: no \"$want\" in: $(cat "$TW_TMP/err")"
	[ ! -s "$TW_TMP/out" ] || fail "recommend $*: printed a result"
	ok "recommend $* -> 2: $(head -1 "$TW_TMP/err")"
}

few="$D/recommend-p4-few-threads.json"
linear="$D/recommend-p4-linear-search.json"

# --- verdicts ---------------------------------------------------------------
"$TW" recommend --input "$few" >"$TW_TMP/text" || fail "text output failed"
[ "$(head -1 "$TW_TMP/text")" = "Change: low (MAP_32BIT) thread stacks pay on this host." ] ||
	fail "P4, few threads, the plain sentence: $(head -1 "$TW_TMP/text")"
grep -q '^verdict: low stacks (MAP_32BIT), confidence: strong$' "$TW_TMP/text" || fail "P4, few threads: $(head -2 "$TW_TMP/text")"
"$TW" recommend --input "$few" --json | jq -r '.result.reasons[]' |
	grep -qF 'floor(1,073,741,824 / (8,388,608 + 4096)) = 127 stacks' ||
	fail "the window reason lacks its arithmetic"
ok "P4, 100 threads: low, strong, with the window arithmetic"

[ "$(verdict "$linear")" = "high strong break_even" ] || fail "P4 linear search: $(verdict "$linear")"
be=$(figure "$linear" break_even_switches)
# the creates with 4,100 to 9,999 alive cost 8,321,666 ns more each, the 68
# on the steep segment from 4,000 to 4,100 about 121.6 ms more: 49.22 s in
# all over 4,032 x 600 ns (doc/recommendation.md)
[ "$(printf '%.0f' "$be")" = 20346 ] || fail "break-even $be, expected 49,219,401,105 / (4032 * 600) = 20346"
ok "P4, 10,000 threads, linear search, 1,000 switches: high, break-even $be"

# --- overrides ----------------------------------------------------------------
[ "$(verdict "$linear" --switches 100000)" = "low strong break_even" ] || fail "--switches 100000"
[ "$(verdict "$linear" --switches unknown)" = "high weak switches_unknown" ] || fail "--switches unknown"
[ "$(verdict "$linear" --threads 3000)" = "low strong fits" ] || fail "--threads 3000"
[ "$(figure "$linear" window_stacks --stack-size 8M)" = 127 ] || fail "--stack-size 8M"
[ "$(figure "$linear" window_stacks --stack-size 8388608)" = 127 ] || fail "--stack-size 8388608"
[ "$(figure "$linear" window_stacks --stack-size 64K)" = 15420 ] || fail "--stack-size 64K"
# the shared size parser (lib/units): other spellings of the same sizes
[ "$(figure "$linear" window_stacks --stack-size=8MiB)" = 127 ] || fail "--stack-size=8MiB"
[ "$(figure "$linear" window_stacks --stack-size 0.0625M)" = 15420 ] || fail "--stack-size 0.0625M"
[ "$(figure "$few" threads --threads=0)" = 0 ] || fail "--threads=0"
[ "$(verdict "$few" --threads 0)" = "high weak no_threads" ] || fail "--threads 0"
ok "--switches, --threads and --stack-size override the workload"
# Churn: 50 creates and 1,000,000 switches a second are 20,000
# switches per thread life, under the break-even of 20,346: high, and the
# same per second (a rate without creates is refused).
[ "$(figure "$linear" switches_per_thread --creates-per-second 50 --switches-per-second 1000000)" = 20000 ] ||
	fail "--creates-per-second, --switches-per-second"
[ "$(verdict "$linear" --creates-per-second 50 --switches-per-second 1000000)" = "high weak break_even" ] ||
	fail "churn: $(verdict "$linear" --creates-per-second 50 --switches-per-second 1000000)"
[ "$(figure "$linear" break_even_switches_per_second --creates-per-second 50 --switches-per-second 1000000 | cut -d. -f1)" = 1017283 ] ||
	fail "churn: break-even per second"
ok "churn: 50 creates/s, 1e6 switches/s: high, break-even $(figure "$linear" break_even_switches_per_second --creates-per-second 50 --switches-per-second 1) switches/s"

# --- the two walks of the old kernels: the failing call and the retry ------------
# E = fail(2C in-window VMAs) + retry(2C + 2(n - C) VMAs) - plain, each from its own
# map32 curve, with the threads probe's low - high beside it where it
# reaches n; here 1,000 threads, C = 127.
walks="$SRC/tests/fuzz/corpus/recommend/valid-map32-walks.json"
jq '.workload.threads = 1000' "$walks" >"$TW_TMP/walks.json"
"$TW" recommend --input "$TW_TMP/walks.json" --json >"$TW_TMP/walks-out.json" || fail "recommend on the walks failed"
jq -e '.result.figures | .extra_create_source == "map32" and .window_stacks == 127 and
  .extra_create_fail_vmas == 254 and .extra_create_vmas == 2000 and .extra_create_extrapolated == false and
  (.extra_create_ns - (.extra_create_fail_ns + .extra_create_retry_ns - .extra_create_plain_ns) | fabs) < 1e-6 and
  .extra_create_measured_ns == null' "$TW_TMP/walks-out.json" >/dev/null ||
	fail "walks at 1,000 threads: $(jq -c '.result.figures' "$TW_TMP/walks-out.json")"
# At 960 threads, where the threads curves end, the cross-check is made.
[ "$(figure "$walks" extra_create_source)" = map32 ] || fail "walks: source"
vs=$(figure "$walks" extra_create_vs_measured)
[ "$vs" != null ] || fail "walks at 960 threads: no cross-check"
# Beyond the retry curve's last point (2,352 VMAs) E is extrapolated, and says so.
[ "$(figure "$walks" extra_create_extrapolated --threads 4000)" = true ] || fail "walks at 4,000 threads: not extrapolated"
"$TW" recommend --input "$walks" --threads 4000 | tr -s " \n" "  " | grep -q "extrapolated linearly" || fail "no extrapolation note"
ok "the two walks: E = fail + retry - plain, cross-check $vs at 960 threads, extrapolation noted"

# --- every symbol defined ------------------------------------------------------
# The text a reader gets names things in words: no letter stands alone (as
# "E is 0.82 times that" and "create k's mmap" did) unless it is the article
# a, a unit after a number (13.6 s), an option's argument (--switches N) or
# defined before its use ("the knee (K)", "K = ...", "K is the ...").
jq 'del(.map32.fail_ns, .map32.retry_ns, .map32.plain_ns, .threads)' "$walks" >"$TW_TMP/nocurves.json"
jq '.map32.fill_ns = [[1, 900], [100, 960]]' "$walks" >"$TW_TMP/fill.json"
for args in "$few" "$linear --threads 2000" "$walks" "$walks --threads 4000" \
	"$TW_TMP/fill.json --switches 50 --threads 300" "$TW_TMP/nocurves.json --threads 2000"; do
	# shellcheck disable=SC2086
	"$TW" recommend --input $args >"$TW_TMP/words" || fail "recommend --input $args failed"
	python3 - "$TW_TMP/words" <<'PY' || fail "recommend --input $args uses a symbol it never defines"
import re, sys
t = " ".join(open(sys.argv[1], encoding="utf-8").read().split())
bad = []
for m in re.finditer(r"(?<![A-Za-z0-9_./'\-\u00b5])([A-Za-z])(?![A-Za-z0-9_/\-])", t):
    c, i = m.group(1), m.start(1)
    if c in "aA" or (c == "s" and re.search(r"[0-9] $", t[:i])) or re.search(r"--[a-z][a-z-]* $", t[:i]):
        continue
    if any(f.format(c) in t[: i + 2] for f in ("({})", "{} = ", "{} is the ", "{}, the ")):
        continue
    bad.append(t[max(0, i - 50) : i + 30])
for b in bad:
    print("undefined symbol: ..." + b + "...")
sys.exit(1 if bad else 0)
PY
done
ok "recommend's text uses no one-letter symbol it does not define, over six inputs"

# --- stdin and `threadwatch run --json` output ----------------------------------
[ "$("$TW" recommend --input - --json <"$few" | jq -r .result.verdict)" = low ] || fail "stdin"
jq '{fingerprint: {}, probes: {}, recommendation: {inputs: .}}' "$linear" >"$TW_TMP/run.json"
[ "$(verdict "$TW_TMP/run.json")" = "high strong break_even" ] || fail "run --json output as input"
ok "inputs from stdin and from run --json output"

"$TW" recommend --help | grep -q -- '--stack-size' || fail "--help"
"$TW" recommend -h | grep -q -- '--stack-size' || fail "-h"

# --- bad input: exit 2, the field named ------------------------------------------
bad "threads.low_create_ns[3]: x must increase" --input "$D/recommend-bad-x.json"
echo '{"ctxsw":{"low_ns":"fast","high_ns":1}}' >"$TW_TMP/type.json"
bad "ctxsw.low_ns: must be a number" --input "$TW_TMP/type.json"
echo '{"ctxsw":{"low_ns":1,"high_ns":-5}}' >"$TW_TMP/neg.json"
bad "ctxsw.high_ns: must not be negative" --input "$TW_TMP/neg.json"
echo '{"ctxsw":{"low_ns":NaN,"high_ns":1}}' >"$TW_TMP/nan.json"
bad "cannot read" --input "$TW_TMP/nan.json"
echo '{"map32":{"fail_ns":[[1,2],[2]]}}' >"$TW_TMP/pair.json"
bad "map32.fail_ns[1]: must be an [x, y] pair" --input "$TW_TMP/pair.json"
echo '{"map32":{"retry_ns":[[5,2],[5,3]]}}' >"$TW_TMP/retry.json"
bad "map32.retry_ns[1]: x must increase" --input "$TW_TMP/retry.json"
echo '{"workload":{"threads":1.5}}' >"$TW_TMP/frac.json"
bad "workload.threads: must be a whole number" --input "$TW_TMP/frac.json"
echo '[]' >"$TW_TMP/array.json"
bad "inputs: must be a JSON object" --input "$TW_TMP/array.json"
printf '{"ctxsw":' >"$TW_TMP/cut.json"
bad "cannot read" --input "$TW_TMP/cut.json"
bad "cannot read \"$TW_TMP/absent.json\"" --input "$TW_TMP/absent.json"
# Without --input the probes run now (quick versions) and feed the verdict.
out=$("$B/threadwatch" recommend --quick --threads 100 --json 2>"$TW_TMP/progress") || fail "recommend without --input failed"
echo "$out" | jq -e '.inputs.ctxsw.ratio > 0 and .inputs.workload.threads == 100 and (.result.verdict | test("^(low|high)$"))' >/dev/null \
	|| fail "recommend without --input: no measured inputs in $out"
# It says what it is doing, on stderr: the probes take seconds.
grep -q '^threadwatch recommend: measuring this host first' "$TW_TMP/progress" &&
	for p in ctxsw threads map32; do
		grep -q "^threadwatch recommend: measuring with the $p probe" "$TW_TMP/progress" &&
			grep -q "^threadwatch recommend: $p done in" "$TW_TMP/progress" || exit 1
	done || fail "recommend without --input does not say what it does: $(cat "$TW_TMP/progress")"
ok "recommend without --input ran the probes, saying so probe by probe on stderr"
bad "invalid value \"lots\" for --threads" --input "$few" --threads lots
bad "invalid value \"5000000\" for --threads" --input "$few" --threads 5000000
bad "invalid value \"8Q\" for --stack-size" --input "$few" --stack-size 8Q
bad "invalid value \"0\" for --stack-size" --input "$few" --stack-size 0
bad "invalid value \"-3\" for --switches" --input "$few" --switches -3
bad "workload.switches_per_second: needs workload.creates_per_second" --input "$few" --switches-per-second 10
bad "unknown option \"--thread\"" --input "$few" --thread 5
bad "--input needs FILE|-" --input
bad "--json takes no value" --input "$few" --json=yes
bad "unexpected argument \"extra\"" --input "$few" -- extra
exit 0

#!/usr/bin/env bash
# 12-cli-usage: what a new user hits first on the command line:
# a usage error is one line and "Try ... --help", not the whole usage; the
# top-level help names run's --sched, --nice and --cpu; `run --cpu N` for a
# CPU this process may not use is a usage error (exit 2) before any probe
# starts; `recommend` reads without the raw figures and says a missing
# --input once; `fleet HOST` asks the daemon's port 8437; threadwatchd
# --help spells keys with dashes and still takes the underscore spelling.
# No probe runs and no daemon serves: every case fails or exits early.
set -u
. "$(dirname "$0")/lib.sh"
TW=$B/threadwatch
TWD=$B/threadwatchd
[ -x "$TW" ] && [ -x "$TWD" ] || fail "threadwatch or threadwatchd is not built"

# cli ARGS...: runs threadwatch; sets OUT, ERR and RC.
cli() {
	OUT=$("$TW" "$@" 2>"$TW_TMP/err")
	RC=$?
	ERR=$(cat "$TW_TMP/err")
}

# --- a usage error is one line and a pointer to --help ----------------------------
for args in "" "frob" "--frob" "run --bogus" "run --nice 40" "recommend --thread 5" \
	"fleet --bogus" "fleet" "detect-sim --hosts x" "fleet --by color x" "fleet --where colour=red x" \
	"run --probe-dir /nonexistent"; do
	# shellcheck disable=SC2086
	cli $args
	[ "$RC" = 2 ] || fail "threadwatch $args: exit status $RC, expected 2"
	[ "$(wc -l <<<"$ERR")" = 2 ] && grep -q "^Try 'threadwatch.* --help' for more information\.$" <<<"$ERR" ||
		fail "threadwatch $args: not one line and \"Try --help\":
$ERR"
	grep -q "usage:" <<<"$ERR" && fail "threadwatch $args printed the usage: $ERR"
	[ -z "$OUT" ] || fail "threadwatch $args printed to stdout: $OUT"
done
ok "usage errors: one line and \"Try '... --help'\", exit 2"
cli fleet --by color x
grep -q 'no fingerprint field "color": use kernel, cpu, virt, arch, mitigations, glibc, vendor, or a path such as cpu/family' <<<"$ERR" ||
	fail "fleet --by color does not name the fields: $ERR"
cli run --probe-dir /nonexistent
grep -q '/nonexistent.*No such file or directory' <<<"$ERR" || fail "run --probe-dir /nonexistent: $ERR"
ok "fleet --by names the fields; run --probe-dir names a directory that is not there"

# --- the top-level help names run's scheduling options ------------------------------
cli --help
for o in --sched --nice --cpu; do
	grep -q -- "$o" <<<"$OUT" || fail "threadwatch --help does not name $o: $OUT"
done
ok "threadwatch --help names --sched, --nice and --cpu"

# --- --cpu of a CPU this process may not use: exit 2 before any probe ---------------
if command -v taskset >/dev/null; then
	OUT=$(taskset -c 0 "$TW" run --cpu 1 --probe-dir "$TW_TMP/none" 2>"$TW_TMP/err")
	RC=$?
	ERR=$(cat "$TW_TMP/err")
	[ "$RC" = 2 ] || fail "run --cpu 1 on CPU 0 alone: exit status $RC, expected 2: $ERR"
	grep -q -- "--cpu 1: this process may run only on CPUs 0$" <<<"$ERR" ||
		fail "run --cpu 1 on CPU 0 alone: $ERR"
	[ "$(wc -l <<<"$ERR")" = 2 ] && [ -z "$OUT" ] || fail "run --cpu 1: more than the usage error: $OUT $ERR"
	ok "run --cpu 1 with only CPU 0 allowed: a usage error up front"
else
	echo "taskset is missing: --cpu not checked"
fi
cli run --cpu 8191
[ "$RC" = 2 ] && grep -q -- "--cpu 8191: this process may run only on CPUs" <<<"$ERR" ||
	fail "run --cpu 8191: exit status $RC: $ERR"

# --- recommend: no raw figures; a missing --input said once -----------------------------
cli recommend --input "$SRC/tests/data/recommend-p4-few-threads.json"
[ "$RC" = 0 ] || fail "recommend --input: exit status $RC: $ERR"
grep -q '^verdict: ' <<<"$OUT" || fail "recommend: no verdict: $OUT"
grep -q '^figures:' <<<"$OUT" && fail "recommend prints the raw figures: $OUT"
grep -q 'null' <<<"$OUT" && fail "recommend prints null figures: $OUT"
grep -q -- '--json' <<<"$OUT" || fail "recommend does not say where the figures are: $OUT"
ok "recommend: verdict, reasons and break-even, no raw figures ($(wc -l <<<"$OUT") lines)"
cli recommend --input "$TW_TMP/nonexistent"
[ "$RC" = 2 ] || fail "recommend --input missing: exit status $RC"
[ "$ERR" = "threadwatch recommend: cannot read \"$TW_TMP/nonexistent\": No such file or directory" ] ||
	fail "recommend --input missing: $ERR"
ok "recommend --input of a missing file: one plain line"

# --- fleet HOST: the daemon's port ----------------------------------------------------
# localhost: whether or not a daemon listens there, the row names port 8437.
cli fleet --json --timeout 2s localhost
jq -e '.hosts[0] | .reachable or (.error | test("port 8437"))' <<<"$OUT" >/dev/null ||
	fail "fleet localhost did not ask port 8437: $OUT $ERR"
cli fleet --json --timeout 2s http://localhost
jq -e '.hosts[0] | .reachable or (.error | test("port 80\\b"))' <<<"$OUT" >/dev/null ||
	fail "fleet http://localhost is not port 80: $OUT $ERR"
ok "fleet localhost asks port 8437; a URL with a scheme keeps its port"

# --- threadwatchd --help: dashes; the old spelling still works -------------------------
help=$("$TWD" --help) || fail "threadwatchd --help failed"
grep -q -- '--listen-address=' <<<"$help" || fail "threadwatchd --help lacks --listen-address"
grep -q -- '^  --[a-z-]*_' <<<"$help" && fail "threadwatchd --help spells a flag with underscores"
for f in --listen_address --listen-address; do
	out=$("$TWD" --check-config --state-dir "$TW_TMP/state" "$f=127.0.0.2" 2>&1) ||
		fail "threadwatchd $f: $out"
	grep -q '127.0.0.2' <<<"$out" || fail "threadwatchd $f not applied: $out"
done
ok "threadwatchd --help spells --listen-address; --listen_address is still accepted"

# --- the exit codes each --help gives are the ones the code returns
"$B/threadwatchd" --help | grep -q 'exit (0: valid; 78, EX_CONFIG: not)' || fail "threadwatchd --help: --check-config's codes"
printf 'interval = often\n' >"$TW_TMP/bad.conf"
"$B/threadwatchd" --check-config --config "$TW_TMP/bad.conf" >/dev/null 2>&1
[ "$?" = 78 ] || fail "--check-config of a bad file does not exit 78"
cli fleet --help
grep -q '3 every host was' <<<"$OUT" || fail "fleet --help lists no exit status 3: $OUT"
cli recommend --help
grep -q 'Exit status: 0 the verdict; 1 .*; *$' <<<"$OUT" || grep -q '^Exit status: 0 the verdict' <<<"$OUT" ||
	fail "recommend --help lists no exit codes: $OUT"
grep -q '3 the verdict, but a probe' <<<"$OUT" || fail "recommend --help lists no exit status 3"
ok "--help: threadwatchd --check-config 0/78 (and 78 it is), fleet 0-3, recommend 0-3"

# --- each command's summary is said once: the top-level help and the
# command's own --help give the same line --------------------------
cli --help
top=$OUT
for c in run recommend fleet detect-sim; do
	cli "$c" --help
	line=$(awk 'blank && NF { print; exit } !NF { blank = 1 }' <<<"$OUT")
	[ -n "$line" ] && grep -qF "      $line" <<<"$top" || fail "$c: \"$line\" is not the summary threadwatch --help gives"
done
ok "each command's --help opens with the summary threadwatch --help lists"

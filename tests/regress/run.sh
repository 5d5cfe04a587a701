#!/usr/bin/env bash
# Runs every tests/regress/NN-*.sh against the real binaries.
# Each script gets B (build dir), SRC (source dir) and TW_TMP (a fresh
# temporary directory, removed afterwards) and exits 0 (pass), 77 (skip)
# or anything else (fail). Prints one "N passed, N failed" line at the end.
# REGRESS_ONLY="TEXT..." runs only the scripts whose name holds one of the
# words (none matching is an error);
# REGRESS_SKIP="NAME..." skips the scripts with those names (NN-name).
# TW_RUN is a directory for the whole run, where one script may leave what
# a later one can reuse rather than make again (70-deb's package for
# 72-systemd); each script still works alone without it.
#
# Most scripts wait more than they compute (daemons, timers, a container
# booting), so REGRESS_JOBS of them (4 by default) run at once, each one's
# output printed whole when it ends. A script whose head holds the line
# "# regress: alone" (it measures the host, or changes what the whole
# machine shares, such as the dpkg database) runs with no other: those run
# first, one by one in number order; then the rest, in number order except
# that those marked "# regress: long" start first, so that the longest do
# not end the run alone. Each line "-- PASS" gives the script's wall time
# and the CPU time it and its children used.
# REGRESS_BESIDE="COMMAND" runs COMMAND at nice 19 beside the scripts that
# share the machine, once those that run alone have ended (make test
# builds the sanitizer tier there, on the CPU those scripts leave idle);
# its output goes to $B/regress-beside.log, and the run waits for it.
set -u
: "${B:?B must name the build directory}" "${SRC:?SRC must name the source directory}"
TW_RUN=$(mktemp -d /tmp/tw-regress-run.XXXXXX)
trap 'rm -rf "$TW_RUN"' EXIT
export B SRC TW_RUN
jobs_max=${REGRESS_JOBS:-4}
[[ "$jobs_max" =~ ^[1-9][0-9]?$ ]] || { echo "REGRESS_JOBS must be 1 to 99, not \"$jobs_max\""; exit 2; }
pass=0 fail=0 skip=0 failed=""
only=${REGRESS_ONLY:-}
declare -A job_name=() job_tmp=() job_start=()

# picked NAME: is the script one of those asked for?
picked() {
	local w
	[ -z "$only" ] && return 0
	for w in $only; do [[ "$1" == *"$w"* ]] && return 0; done
	return 1
}
# marked SCRIPT WORD: does its head hold the line "# regress: WORD"?
marked() { head -n 40 "$1" | grep -qx "# regress: $2"; }

# one SCRIPT OUT: runs a script in its own TW_TMP and appends the CPU time
# (user + system, its own and its children's) as the output's last line.
one() {
	bash "$1" >"$2" 2>&1
	local rc=$?
	# A builtin's redirection does not fork: times here reads this shell.
	times >"$2.cpu"
	echo "TW_CPU $(tail -n 1 "$2.cpu")" >>"$2"
	return "$rc"
}

# cpu_of OUT: the seconds of CPU from one()'s "TW_CPU 1m2.5s 0m3.1s" line.
cpu_of() {
	awk '$1 == "TW_CPU" { s = 0; for (i = 2; i <= 3; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }
		printf "%.1f", s }' "$1"
}

# finish PID RC: prints an ended script's output and verdict, cleans up.
finish() {
	local pid=$1 rc=$2 name=${job_name[$1]} tmp=${job_tmp[$1]} secs cpu out
	out=$TW_RUN/out.$name
	secs=$(echo "$(date +%s.%N) - ${job_start[$pid]}" | bc 2>/dev/null || echo "?")
	cpu=$(cpu_of "$out")
	echo "== regress $name"
	grep -v '^TW_CPU ' "$out"
	case $rc in
	0) pass=$((pass + 1)); echo "-- PASS $name (${secs}s, cpu ${cpu}s)" ;;
	77) skip=$((skip + 1)); echo "-- SKIP $name" ;;
	*) fail=$((fail + 1)); failed="$failed $name"; echo "-- FAIL $name (exit $rc, ${secs}s)" ;;
	esac
	# A test that left processes behind in its directory is cleaned up here.
	pkill -KILL -f "$tmp" 2>/dev/null
	rm -rf "$tmp"
	unset "job_name[$pid]" "job_tmp[$pid]" "job_start[$pid]"
}

# reap: waits for any one running script and finishes it.
reap() {
	local pid rc
	wait -n -p pid
	rc=$?
	finish "$pid" "$rc"
}

# start SCRIPT: runs it in the background in a fresh TW_TMP.
start() {
	local name
	name=$(basename "$1" .sh)
	TW_TMP=$(mktemp -d /tmp/tw-regress.XXXXXX)
	export TW_TMP
	one "$1" "$TW_RUN/out.$name" &
	job_name[$!]=$name job_tmp[$!]=$TW_TMP job_start[$!]=$(date +%s.%N)
}

# The scripts asked for, by kind.
alone_list=() long_list=() rest_list=()
for t in "$SRC"/tests/regress/[0-9]*.sh; do
	name=$(basename "$t" .sh)
	picked "$name" || continue
	if [[ " ${REGRESS_SKIP:-} " == *" $name "* ]]; then
		skip=$((skip + 1))
		echo "-- SKIP $name (REGRESS_SKIP)"
		continue
	fi
	if marked "$t" alone; then
		alone_list+=("$t")
	elif marked "$t" long; then
		long_list+=("$t")
	else
		rest_list+=("$t")
	fi
done
for t in "${alone_list[@]}"; do
	start "$t"
	reap
done
beside=""
if [ -n "${REGRESS_BESIDE:-}" ]; then
	nice -n 19 sh -c "$REGRESS_BESIDE" >"$B/regress-beside.log" 2>&1 &
	beside=$!
fi
for t in "${long_list[@]}" "${rest_list[@]}"; do
	while [ ${#job_name[@]} -ge "$jobs_max" ]; do reap; done
	start "$t"
done
while [ ${#job_name[@]} -gt 0 ]; do reap; done
if [ -n "$beside" ] && ! wait "$beside"; then
	echo "regress: the command beside the scripts failed ($REGRESS_BESIDE): $(tail -n 5 "$B/regress-beside.log")"
fi
[ -n "$failed" ] && echo "failed:$failed"
if [ -n "$only" ] && [ $((pass + fail + skip)) = 0 ]; then
	echo "regress: no script matches \"$only\""
	exit 2
fi
echo "regress: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]

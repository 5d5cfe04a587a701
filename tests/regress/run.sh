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
set -u
: "${B:?B must name the build directory}" "${SRC:?SRC must name the source directory}"
TW_RUN=$(mktemp -d /tmp/tw-regress-run.XXXXXX)
trap 'rm -rf "$TW_RUN"' EXIT
export B SRC TW_RUN
pass=0 fail=0 skip=0 failed=""
only=${REGRESS_ONLY:-}
# picked NAME: is the script one of those asked for?
picked() {
	local w
	[ -z "$only" ] && return 0
	for w in $only; do [[ "$1" == *"$w"* ]] && return 0; done
	return 1
}
for t in "$SRC"/tests/regress/[0-9]*.sh; do
	name=$(basename "$t" .sh)
	picked "$name" || continue
	if [[ " ${REGRESS_SKIP:-} " == *" $name "* ]]; then
		skip=$((skip + 1))
		echo "-- SKIP $name (REGRESS_SKIP)"
		continue
	fi
	TW_TMP=$(mktemp -d /tmp/tw-regress.XXXXXX)
	export TW_TMP
	start=$(date +%s.%N)
	echo "== regress $name"
	bash "$t"
	rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
	case $rc in
	0) pass=$((pass + 1)); echo "-- PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "-- SKIP $name" ;;
	*) fail=$((fail + 1)); failed="$failed $name"; echo "-- FAIL $name (exit $rc, ${secs}s)" ;;
	esac
	# A test that left processes behind in its directory is cleaned up here.
	pkill -KILL -f "$TW_TMP" 2>/dev/null
	rm -rf "$TW_TMP"
done
[ -n "$failed" ] && echo "failed:$failed"
if [ -n "$only" ] && [ $((pass + fail + skip)) = 0 ]; then
	echo "regress: no script matches \"$only\""
	exit 2
fi
echo "regress: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# Runs every fuzz harness tests/fuzz/fuzz_NAME.c in two ways:
#  1. replay: $B/tests/replay_fuzz_NAME (an ordinary build) over the seed
#     corpus tests/fuzz/corpus/NAME/, as a regression test;
#  2. fuzz: when clang with libFuzzer works, the harness built with
#     -fsanitize=fuzzer,address,undefined into $B/fuzz/fuzz_NAME and run for
#     FUZZ_SECONDS on a copy of the corpus; prints the executions and fails
#     on a crash, a leak or a timeout.
# Environment: B (build dir), SRC (source dir), FUZZ_SECONDS (default 20),
# FUZZ_CC (default clang), FUZZ_PKGS (pkg-config names; default: the
# Makefile's LIBS_ALL). Ends with "fuzz: N passed, N failed".
set -u
: "${B:?B must name the build directory}" "${SRC:?SRC must name the source directory}"
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_CC=${FUZZ_CC:-clang}
# The libraries the shared code links, as the Makefile names them.
PKGS=${FUZZ_PKGS:-$(sed -n 's/^LIBS_ALL *:= *//p' "$SRC/Makefile")}
PKGS=${PKGS:-libmicrohttpd sqlite3 libsystemd jansson libcurl zlib}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# The compile-time paths the daemon sources expect; nothing is installed.
DEFS="-D_GNU_SOURCE -DTW_VERSION=\"fuzz\" -DTW_PROBEDIR=\"/nonexistent\" \
-DTW_PROBESDDIR=\"/nonexistent\" -DTW_SYSCONFDIR=\"/nonexistent\" \
-DTW_DYGRAPHS_DIR=\"/nonexistent\""
CFLAGS_FUZZ="-std=gnu11 -g -O1 -pthread $DEFS -I$SRC/lib -I$SRC/daemon -I$SRC/probes/lib -I$SRC/cli -I$B \
$(pkg-config --cflags $PKGS 2>/dev/null)"
LIBS_FUZZ="$(pkg-config --libs $PKGS 2>/dev/null) -lm"

pass=0 fail=0 failed=""
note_fail() { fail=$((fail + 1)); failed="$failed $1"; }

# Does clang build and run a libFuzzer target here?
libfuzzer_works() {
	local d rc
	d=$(mktemp -d /tmp/tw-fuzzcheck.XXXXXX)
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
		>"$d/t.c"
	"$FUZZ_CC" -fsanitize=fuzzer "$d/t.c" -o "$d/t" >/dev/null 2>&1 &&
		"$d/t" -runs=1 >/dev/null 2>&1
	rc=$?
	rm -rf "$d"
	return $rc
}

# Compiles one source of the shared code into $B/fuzz/obj (run by xargs).
compile_one() {
	local src=$1 name
	name=${src#"$SRC"/}
	name=${name#"$B"/}
	name=${name//\//_}
	# shellcheck disable=SC2086
	"$FUZZ_CC" $CFLAGS_FUZZ $SAN -fsanitize=fuzzer-no-link -c "$src" \
		-o "$B/fuzz/obj/${name%.c}.o" || { echo "fuzz: cannot compile $src"; return 255; }
}
export -f compile_one
export B SRC FUZZ_CC CFLAGS_FUZZ SAN

# Compiles the shared code once, instrumented for coverage and sanitizers;
# each harness links against these objects.
build_objects() {
	local src
	rm -rf "$B/fuzz/obj" "$B/fuzz/libfuzzshared.a" && mkdir -p "$B/fuzz/obj" || return 1
	if [ ! -f "$B/daemon/builtin.c" ]; then
		echo "fuzz: $B/daemon/builtin.c missing (run make first)"
		return 1
	fi
	# and the CLI's --file readers, which fuzz_fleet_sd drives.
	for src in "$SRC"/lib/*.c "$SRC"/daemon/*.c "$SRC"/probes/lib/*.c "$B/daemon/builtin.c" \
		"$SRC"/cli/fleet_targets.c "$SRC"/cli/fleet_sd_*.c; do
		case "$src" in */daemon/threadwatchd.c) continue ;; esac
		printf '%s\n' "$src"
	done | xargs -P "$(nproc)" -I{} bash -c 'compile_one "$1"' _ {} || return 1
	# An archive, so a harness pulls in only what it uses.
	ar rcs "$B/fuzz/libfuzzshared.a" "$B"/fuzz/obj/*.o
}

fuzz_one() {
	local name=$1 harness=$2 corpus=$3 bin=$B/fuzz/fuzz_$1 work=$B/fuzz/corpus-$1
	local log=$B/fuzz/fuzz_$1.log execs rc
	if ! "$FUZZ_CC" $CFLAGS_FUZZ $SAN -fsanitize=fuzzer "$harness" "$B/fuzz/libfuzzshared.a" \
		$LIBS_FUZZ -o "$bin" >"$log" 2>&1; then
		echo "fuzz $name: build failed:"
		tail -n 20 "$log"
		return 1
	fi
	rm -rf "$work" && mkdir -p "$work"
	[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
	"$bin" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$B/fuzz/$name-" "$work" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	if [ "$rc" != 0 ]; then
		echo "fuzz $name: FAILED after ${execs:-?} executions (exit $rc); log $log:"
		grep -E 'ERROR|SUMMARY|Test unit written|runtime error|^ +#[0-9]+ 0x' "$log" | head -n 24
		return 1
	fi
	echo "fuzz $name: ${execs:-?} executions in ${FUZZ_SECONDS} s, no crash"
	return 0
}

harnesses=("$SRC"/tests/fuzz/fuzz_*.c)
if [ ! -e "${harnesses[0]}" ]; then
	echo "fuzz: no harnesses"
	echo "fuzz: 0 passed, 0 failed"
	exit 0
fi

# 1. Replay every seed corpus with the ordinary build.
declare -A replay_ok
for h in "${harnesses[@]}"; do
	base=$(basename "$h" .c)
	name=${base#fuzz_}
	corpus=$SRC/tests/fuzz/corpus/$name
	replay=$B/tests/replay_$base
	replay_ok[$name]=0
	if [ ! -x "$replay" ]; then
		echo "replay $name: $replay missing"
		continue
	fi
	if [ ! -d "$corpus" ]; then
		echo "replay $name: no seed corpus in $corpus"
		continue
	fi
	if out=$("$replay" "$corpus" 2>&1); then
		echo "replay $name: ${out##*$'\n'}"
		replay_ok[$name]=1
	else
		echo "replay $name: FAILED"
		printf '%s\n' "$out" | tail -n 20
	fi
done

# 2. Fuzz each harness for a bounded time when libFuzzer is there.
have_fuzzer=0
if [ "$FUZZ_SECONDS" != 0 ] && command -v "$FUZZ_CC" >/dev/null 2>&1 && libfuzzer_works; then
	mkdir -p "$B/fuzz"
	t0=$SECONDS
	if build_objects; then
		echo "fuzz: instrumented build of the shared code took $((SECONDS - t0)) s"
		have_fuzzer=1
	else
		echo "fuzz: building the instrumented objects failed"
		for h in "${harnesses[@]}"; do b=$(basename "$h" .c); replay_ok[${b#fuzz_}]=0; done
	fi
else
	echo "fuzz: $FUZZ_CC with libFuzzer not available (or FUZZ_SECONDS=0); replay only"
fi

for h in "${harnesses[@]}"; do
	base=$(basename "$h" .c)
	name=${base#fuzz_}
	ok=${replay_ok[$name]}
	if [ "$have_fuzzer" = 1 ] && ! fuzz_one "$name" "$h" "$SRC/tests/fuzz/corpus/$name"; then
		ok=0
	fi
	if [ "$ok" = 1 ]; then pass=$((pass + 1)); else note_fail "$name"; fi
done

[ -n "$failed" ] && echo "failed:$failed"
echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# 85-arm64: the arm64 tier. Cross-builds the tree for arm64 (make
# DEB_HOST_ARCH=arm64 into ARM_B, build-arm64/ by default) with Debian's
# cross toolchain and multiarch -dev packages, then runs under qemu-user:
# the unit tests, each probe's --quick, and one daemon cycle answering the
# API; with ARM_DEB=1 (make check-cross) the arm64 package too. On arm64 map32 is not applicable, threads runs its default and high
# policies with low not applicable, ctxsw runs with its selector arm not
# applicable, and the recommendation says so. Timing checks are skipped:
# under emulation a time measures qemu, not the host.
#
# Each program runs as `qemu-aarch64-static -L / PROGRAM`: the loader and
# libc both come from libc6:arm64, which the multiarch -dev packages bring
# along with the libraries threadwatch links. (-L /usr/aarch64-linux-gnu
# would pair the cross toolchain's ld.so with libc6:arm64's libc.so.6 when
# their versions differ, and pthread_create then loops for ever in glibc's
# stack cache.) Skipped (77), saying why, when the toolchain or qemu is
# missing and cannot be installed (not root).
# regress: long
set -u
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { echo "jq is not installed"; exit 77; }
ARM_B=${ARM_B:-$SRC/build-arm64}
QEMU=(qemu-aarch64-static -L /)

have_cross() {
	command -v aarch64-linux-gnu-gcc && command -v aarch64-linux-gnu-pkg-config &&
		command -v qemu-aarch64-static && [ -e /lib/ld-linux-aarch64.so.1 ] &&
		aarch64-linux-gnu-pkg-config --exists jansson sqlite3 libmicrohttpd libsystemd \
			libcurl zlib cmocka gnutls yaml-0.1
} >/dev/null 2>&1

if ! have_cross; then
	if [ "$(id -u)" != 0 ]; then
		echo "the arm64 cross toolchain or qemu-user-static is missing and installing it needs root:"
		echo "  make deps-cross DEB_HOST_ARCH=arm64"
		exit 77
	fi
	make -C "$SRC" -s deps-cross DEB_HOST_ARCH=arm64 >"$TW_TMP/deps.log" 2>&1 || {
		tail -5 "$TW_TMP/deps.log"
		echo "cannot install the arm64 cross toolchain here (see above)"
		exit 77
	}
	have_cross || fail "make deps-cross did not install the arm64 toolchain"
fi

# The cross tree, and the unit tests in it. Under `make test` those whose
# code can differ by architecture (what the fingerprint and the
# recommendation say of one, how probes are run and pinned, the topology,
# the fault isolation, floating point in the statistics, the store's and the
# protocol's encodings, the /proc parsers); ARM_UNITS=all runs every one.
ARM_UNITS=${ARM_UNITS:-test_fingerprint test_recommend test_recommend_costs test_runner test_topology
	test_isolate test_stats test_analysis test_protocol test_store test_observe_parse test_sysinfo
	test_clock test_contention test_units}
if [ "$ARM_UNITS" = all ]; then
	units=$(cd "$SRC/tests/unit" && ls test_*.c | sed 's/\.c$//')
else
	units=$ARM_UNITS
fi
make -C "$SRC" -s -j2 DEB_HOST_ARCH=arm64 B="$ARM_B" all $(printf "$ARM_B/tests/%s " $units) \
	>"$TW_TMP/build.log" 2>&1 || { tail -30 "$TW_TMP/build.log"; fail "the arm64 cross build failed"; }
for f in "$ARM_B/threadwatchd" "$ARM_B/threadwatch" "$ARM_B"/probes/{ctxsw,threads,map32}; do
	file -b "$f" | grep -q 'ARM aarch64' || fail "$f is not an aarch64 program: $(file -b "$f")"
done
ok "cross-built for arm64 in $ARM_B: the daemon, the CLI and the probes are aarch64 programs"

# The unit tests under qemu (a test of what qemu does not emulate, such as
# seccomp filters, skips itself and says so).
for t in $units; do
	# qemu-user answers /proc/self/stat itself (linux-user/syscall.c,
	# open_self_stat), with 0 for the resident size: the daemon's own
	# process figures are checked on the build host's tier instead.
	if [ "$t" = test_metrics_procself ]; then
		echo "skip $t under qemu: qemu-user emulates /proc/self/stat (rss 0)"
		continue
	fi
	(cd "$TW_TMP" && timeout 300 "${QEMU[@]}" "$ARM_B/tests/$t") >"$TW_TMP/$t.log" 2>&1
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 77 ] || { tail -20 "$TW_TMP/$t.log"; fail "$t failed under qemu ($rc)"; }
done
ok "unit tests pass under qemu-aarch64"

# Each probe's --quick.
echo "timing checks skipped: under qemu-user a time measures the emulator, not the host"
probe() { timeout 300 "${QEMU[@]}" "$ARM_B/probes/$1" --quick; }
doc=$(probe map32) || fail "map32 --quick exited $?"
[ "$(jq -r .status <<<"$doc")" = not_applicable ] || fail "map32 on arm64: $(jq -c '{status, reason}' <<<"$doc")"
jq -e '.reason | test("no MAP_32BIT window on aarch64")' <<<"$doc" >/dev/null ||
	fail "map32's reason: $(jq .reason <<<"$doc")"
ok "map32: not_applicable: $(jq -r .reason <<<"$doc")"

doc=$(probe threads) || fail "threads --quick exited $?"
jq -e '.status == "ok" and .info.low_policy == "not applicable"
	and (.scalars.default_first_rate.value > 0) and (.scalars.high_first_rate.value > 0)
	and (.scalars | has("low_first_rate") | not)' <<<"$doc" >/dev/null ||
	fail "threads on arm64: $(jq -c '{status, reason, low: .info.low_policy, s: (.scalars | keys)}' <<<"$doc")"
ok "threads: default and high measured, low $(jq -r '.info.low_policy + " (" + .info.low_policy_reason + ")"' <<<"$doc")"

doc=$(probe ctxsw) || fail "ctxsw --quick exited $?"
jq -e '.status == "ok" and (.scalars.high_ns.value > 0) and (.scalars.aa_ratio.value > 0)
	and (.series | length > 0) and (.info.selector | startswith("not applicable"))
	and .info.selector_arm == false' <<<"$doc" >/dev/null ||
	fail "ctxsw on arm64: $(jq -c '{status, reason, selector: .info.selector, s: (.scalars | keys)}' <<<"$doc")"
ok "ctxsw: high, A/A and the ring measured; selector $(jq -r .info.selector <<<"$doc")"

# One daemon cycle. The daemon runs under qemu; it starts each probe
# through a wrapper that runs the arm64 probe under qemu too (no binfmt).
mkdir -p "$TW_TMP/probes" "$TW_TMP/probes.d" "$TW_TMP/d"
for p in $TW_BUILTINS; do
	printf '#!/bin/sh\nexec qemu-aarch64-static -L / "%s" "$@"\n' "$ARM_B/probes/$p" >"$TW_TMP/probes/$p"
	chmod +x "$TW_TMP/probes/$p"
done
: >"$TW_TMP/empty.conf"
"${QEMU[@]}" "$ARM_B/threadwatchd" --config "$TW_TMP/empty.conf" --state-dir "$TW_TMP/d" \
	--port 0 --port-file "$TW_TMP/d/port" --probe-dir "$TW_TMP/probes" \
	--probes-d "$TW_TMP/probes.d" --quick --guard off --splay 0 --probe-sched normal \
	--interval 1h >"$TW_TMP/d.log" 2>&1 &
DPID=$!
trap 'kill -TERM $DPID 2>/dev/null' EXIT
for i in $(seq 1 300); do [ -s "$TW_TMP/d/port" ] && break; sleep 0.1; done
[ -s "$TW_TMP/d/port" ] || { cat "$TW_TMP/d.log"; fail "threadwatchd (arm64) did not listen"; }
PORT=$(cat "$TW_TMP/d/port")
api() { curl -sS --max-time 20 "http://127.0.0.1:$PORT$1"; }
for i in $(seq 1 600); do
	st=$(api /api/v1/status 2>/dev/null) && [ "$(jq -r '.last_cycle.status // empty' <<<"$st")" != "" ] && break
	sleep 0.5
done
runs=$(api '/api/v1/runs?limit=20' | jq -c '[.runs[] | {probe, status, reason}] | sort_by(.probe)')
# Under emulation a timing probe may rightly give up as too busy (qemu on a
# machine busy with other tests): that cycle is partial, and says why.
case $(jq -r .last_cycle.status <<<"$st") in
ok) ;;
partial) jq -e "$JQ_RUN_BUSY"' all(.[]; .probe == "map32" or run_busy(.probe; .status; .reason))' <<<"$runs" >/dev/null ||
	{ tail -20 "$TW_TMP/d.log"; fail "the arm64 cycle was partial for more than a busy host: $runs"; } ;;
*) tail -20 "$TW_TMP/d.log"; fail "the arm64 cycle did not end ok: $(jq -c .last_cycle <<<"$st")" ;;
esac
jq -e --arg want "$TW_BUILTINS" "$JQ_RUN_BUSY"' ([.[].probe] | sort) == ($want | split(" ") | sort) and
	all(.[]; if .probe == "map32" then .status == "not_applicable" else run_busy(.probe; .status; .reason) end)' \
	<<<"$runs" >/dev/null || fail "the arm64 cycle's runs: $runs"
[ "$(api '/api/v1/runs?status=not_applicable' | jq -r '.runs[0].reason')" != null ] ||
	fail "the not_applicable run has no reason"
rec=$(api /api/v1/recommendation)
jq -e '.applicable == false and .rule == "not_applicable"
	and (.sentence | test("not applicable on this architecture \\(aarch64\\)"))' <<<"$rec" >/dev/null ||
	fail "the arm64 recommendation: $(jq -c '{verdict, rule, applicable, sentence}' <<<"$rec")"
[ "$(api /api/v1/host | jq -r '.. | .arch? // empty' | head -1)" = aarch64 ] ||
	fail "the host's fingerprint does not say aarch64: $(api /api/v1/host | jq -c .)"
ok "threadwatchd (arm64) cycle: $runs; $(jq -r .sentence <<<"$rec")"
kill -TERM $DPID
wait $DPID || fail "threadwatchd (arm64) exited $? after SIGTERM"
trap - EXIT

# The package: make deb DEB_HOST_ARCH=arm64 (into build-arm64/), with
# aarch64 programs inside, and lintian-clean where lintian is installed.
# A second whole cross build: `make check-cross` (ARM_UNITS=all) makes it,
# and ARM_DEB=1 asks for it here; `make test` leaves it out for time.
ARM_DEB=${ARM_DEB:-$([ "$ARM_UNITS" = all ] && echo 1 || echo 0)}
if [ "$ARM_DEB" != 1 ]; then
	echo "the arm64 package is not built here: make check-cross builds it (or ARM_DEB=1)"
	exit 0
fi
make -C "$SRC" -s deb DEB_HOST_ARCH=arm64 B="$ARM_B" >"$TW_TMP/deb.log" 2>&1 ||
	{ tail -30 "$TW_TMP/deb.log"; fail "make deb DEB_HOST_ARCH=arm64 failed"; }
deb=$(ls "$ARM_B"/deb/threadwatch_*_arm64.deb) || fail "no arm64 .deb in $ARM_B/deb"
[ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || fail "$deb is not labelled arm64"
dpkg-deb -x "$deb" "$TW_TMP/x"
for f in usr/sbin/threadwatchd usr/bin/threadwatch usr/lib/threadwatch/probes/{ctxsw,threads,map32}; do
	file -b "$TW_TMP/x/$f" | grep -q 'ARM aarch64' || fail "$f in $deb: $(file -b "$TW_TMP/x/$f")"
done
if command -v lintian >/dev/null; then
	out=$(lintian "$deb" 2>&1 | grep -v '^running with root')
	[ -z "$out" ] || fail "lintian on $deb: $out"
	ok "$(basename "$deb"): aarch64 programs, lintian-clean"
else
	ok "$(basename "$deb"): aarch64 programs (lintian is not installed)"
fi

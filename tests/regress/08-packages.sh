#!/usr/bin/env bash
# 08-packages: the Makefile's package lists bring everything the build, the
# cross build and the tests use to a fresh machine. This machine
# may keep what an earlier session installed by hand, so a green suite
# proves nothing about a new one; tests/tools/check_packages.py resolves
# each pkg-config module, system header and command the scripts run to its
# Debian package and fails on one that no list brings. Then it checks
# itself: the lists with zlib1g-dev:arm64 and jq taken out must fail.
set -u
. "$(dirname "$0")/lib.sh"

command -v dpkg-query >/dev/null || { echo "not a Debian system: no package to resolve to"; exit 77; }
make -s -C "$SRC" --no-print-directory print-packages >"$TW_TMP/lists" || fail "make print-packages failed"
# the self-check (below) runs beside the check itself: each mostly waits
# for dpkg-query
sed 's/ zlib1g-dev:arm64//g; s/ jq / /g' "$TW_TMP/lists" >"$TW_TMP/lists-short"
python3 "$SRC/tests/tools/check_packages.py" "$TW_TMP/lists-short" "$SRC" >"$TW_TMP/out-short" 2>&1 &
short=$!
python3 "$SRC/tests/tools/check_packages.py" "$TW_TMP/lists" "$SRC" >"$TW_TMP/out" 2>&1
rc=$?
cat "$TW_TMP/out"
[ "$rc" = 0 ] || fail "a package that the build or the tests need is in no list (above)"
ok "every module, header and command resolves to a package the lists bring"

wait "$short" && fail "the check passed lists without zlib1g-dev:arm64 and jq"
grep -q 'MISSING: pkg-config module zlib: zlib1g-dev:arm64 is not in the cross list' "$TW_TMP/out-short" ||
	fail "the check missed zlib1g-dev:arm64: $(grep MISSING "$TW_TMP/out-short")"
grep -q 'MISSING: command jq .*from jq' "$TW_TMP/out-short" ||
	fail "the check missed jq: $(grep MISSING "$TW_TMP/out-short")"
ok "lists short of zlib1g-dev:arm64 and jq fail the check"

#!/usr/bin/env bash
# The README tells the truth: its configuration table is the one the daemon
# generates from its key table, and every API path it lists is routed.
set -u
. "$(dirname "$0")/lib.sh"

readme="$SRC/README.md"
sed -n '/<!-- config-table:begin -->/,/<!-- config-table:end -->/p' "$readme" \
	| sed '1d;$d' >"$TW_TMP/readme-table.md"
"$B/threadwatchd" --dump-config-doc >"$TW_TMP/daemon-table.md" || fail "--dump-config-doc failed"
diff -u "$TW_TMP/daemon-table.md" "$TW_TMP/readme-table.md" \
	|| fail "README configuration table differs from threadwatchd --dump-config-doc"
ok "README configuration table matches the daemon's key table ($(grep -c '^| `' "$TW_TMP/daemon-table.md") keys)"

# Every /api/v1 path the README's API table names appears in the OpenAPI
# document that the daemon serves and the tests check.
missing=0
for path in $(grep -o '`\(GET\|POST\) /api/v1/[a-z{}/]*' "$readme" | awk '{print $2}' | sort -u); do
	jq -e --arg p "$path" '.paths | has($p)' "$SRC/web/openapi.json" >/dev/null \
		|| { echo "README names $path, which web/openapi.json lacks"; missing=1; }
done
[ "$missing" = 0 ] || fail "README API table and OpenAPI document disagree"
ok "README API paths are all in web/openapi.json"

grep -q '^make run' "$readme" && grep -q '^make test' "$readme" || fail "README lacks the two commands"
ok "README shows make run and make test"

# doc/fleet.md is the README's fleet section, kept as a page of its own.
sed -n '/<!-- fleet:begin -->/,/<!-- fleet:end -->/p' "$readme" | sed '1d;$d' >"$TW_TMP/fleet.md"
diff -u <(printf '## On a fleet\n\n'; cat "$TW_TMP/fleet.md") "$SRC/doc/fleet.md" >/dev/null ||
	fail "doc/fleet.md differs from the README's fleet section: run make docs"
ok "doc/fleet.md is the README's fleet section"

# The README names the configuration file a source build reads, as the
# daemon built from this tree says it (issue 36: it gave only the package's).
src_conf=$("$B/threadwatchd" --help | sed -n 's/.*configuration file (default \([^;]*\);.*/\1/p')
[ -n "$src_conf" ] || fail "threadwatchd --help does not name its configuration file"
case "$src_conf" in
/etc/*) ;; # a build with PREFIX=/usr reads the package's file
*) grep -qF "\`$src_conf\` when built from" "$readme" ||
	fail "the README does not name $src_conf, the file a source build reads" ;;
esac
grep -qF '`/etc/threadwatch/threadwatchd.conf` when installed from' "$readme" ||
	fail "the README does not name the package's configuration file"
ok "the README names both configuration files: the package's and this build's ($src_conf)"

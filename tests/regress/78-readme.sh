#!/usr/bin/env bash
# The README tells the truth and stays a newcomer's page: at most 300
# lines, its links resolve and reach every page of doc/, the API page's
# paths are routed, and it names both configuration files.
set -u
. "$(dirname "$0")/lib.sh"

readme="$SRC/README.md"

# A newcomer's page: short, and the details live in doc/ and the man pages.
n=$(wc -l <"$readme")
[ "$n" -le 300 ] || fail "the README has $n lines; at most 300"
ok "the README has $n lines"

# Every relative link of the README resolves, and every page of doc/ is
# linked from it (the README is where a reader finds them).
for l in $(grep -o '](\([A-Za-z][A-Za-z0-9_./-]*\))' "$readme" | sed 's/^](//;s/)$//' | grep -v '^https\?:' | sort -u); do
	[ -e "$SRC/$l" ] || fail "the README links to $l, which does not exist"
done
for page in "$SRC"/doc/*.md; do
	grep -qF "](doc/$(basename "$page"))" "$readme" || fail "the README does not link to doc/$(basename "$page")"
done
ok "the README's links resolve and it links every page of doc/"

# Every /api/v1 path the API page's table names appears in the OpenAPI
# document that the daemon serves and the tests check.
missing=0
api="$SRC/doc/api.md"
for path in $(grep -o '`\(GET\|POST\) /api/v1/[a-z{}/]*' "$api" | awk '{print $2}' | sort -u); do
	jq -e --arg p "$path" '.paths | has($p)' "$SRC/web/openapi.json" >/dev/null \
		|| { echo "doc/api.md names $path, which web/openapi.json lacks"; missing=1; }
done
[ "$missing" = 0 ] || fail "doc/api.md's API table and the OpenAPI document disagree"
ok "doc/api.md's API paths are all in web/openapi.json"

grep -q '^make run' "$readme" && grep -q '^make test' "$readme" || fail "README lacks the two commands"
ok "README shows make run and make test"

# The configuration keys are listed once, in threadwatchd.conf(5) (77-man
# checks it against the daemon): no page keeps a copy of the table.
if grep -l '^| `listen_address` |' "$readme" "$SRC"/doc/*.md; then
	fail "a page copies the configuration table; it lives in threadwatchd.conf(5)"
fi
ok "the configuration table lives in threadwatchd.conf(5) alone"

# The README names the configuration file a source build reads, as the
# daemon built from this tree says it (it gave only the package's).
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

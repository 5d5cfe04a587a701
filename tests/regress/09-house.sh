#!/usr/bin/env bash
# 09-house: the habits a maintainer relies on hold for the whole tree:
#  - every regress script has a number of its own;
#  - no source file, test or document cites an issue of the tracker by its
#    number (the tracker is not part of the tree: say what and why);
#  - no source file is over 1,200 lines (one job per file);
#  - nothing a user reads writes microseconds "us": the programs' strings,
#    the page and the documents write µs, as the figures are shown;
#  - the licence the package declares (debian/copyright) is in LICENSE.
set -u
. "$(dirname "$0")/lib.sh"

dups=$(ls "$SRC"/tests/regress/[0-9]*.sh | sed 's#.*/##; s/-.*//' | sort | uniq -d)
[ -z "$dups" ] || fail "regress test numbers used twice: $(echo $dups)"
ok "every regress test has a number of its own ($(ls "$SRC"/tests/regress/[0-9]*.sh | wc -l) scripts)"

# The tree's own files: every file but git's, the build trees, installed
# node modules, test output and fuzz corpora.
files() {
	(cd "$SRC" && find . \( -name .git -o -name 'build*' -o -name node_modules -o -path ./tests/out \
		-o -path ./tests/fuzz/corpus -o -path ./var \) -prune -o -type f -print) | sed "s#^\./#$SRC/#"
}
cited=$(files | grep -v '/tests/fuzz/corpus/' | tr '\n' '\0' |
	xargs -0 grep -I -n -i -E '\bissues? [0-9]+|\bissue_?[0-9]+\b' 2>/dev/null | grep -v '/tests/regress/09-house.sh:' | head -5)
[ -z "$cited" ] || fail "a file cites a tracker issue by number: $cited"
ok "no file cites a tracker issue by number"

long=$(files | grep -E '\.(c|h|js|py|sh)$' | grep -v '/node_modules/' | tr '\n' '\0' |
	xargs -0 wc -l | awk '$2 != "total" && $1 > 1200 {print $2 " (" $1 " lines)"}')
[ -z "$long" ] || fail "source files over 1,200 lines: $long"
ok "no source file is over 1,200 lines"

# Microseconds are "µs" wherever a user reads them: the documents, the page
# and the strings of the programs and probes (a comment may say "us"). A
# number, a printf conversion or a ${...} before " us" is the unit.
US='([0-9]|%[-+ #0-9.]*[a-z]+|\})( |\\u00a0|&nbsp;)us\b'
us_docs=$(files | grep -E '/(doc/.*\.(md|1)|README\.md|web/[^/]+\.(html|json))$' | tr '\n' '\0' |
	xargs -0 grep -n -E "$US" 2>/dev/null | head -5)
us_strs=$(files | grep -E "^$SRC/((lib|daemon|cli|probes|probes/lib)/[^/]+\.[ch]|web/[^/]+\.js)\$" |
	grep -v '/web/dygraph' | tr '\n' '\0' |
	xargs -0 grep -n -E "[\"'\`][^\"'\`]*$US" 2>/dev/null | head -5)
[ -z "$us_docs$us_strs" ] || fail "microseconds written \"us\", not µs: $us_docs $us_strs"
ok "no document, page or program string writes microseconds \"us\""

[ -f "$SRC/LICENSE" ] || fail "no LICENSE"
grep -q '^License: MIT' "$SRC/debian/copyright" && grep -q '^MIT License' "$SRC/LICENSE" ||
	fail "LICENSE does not hold the licence debian/copyright declares"
# the same holder and year, and word for word the same text
holder=$(sed -n 's/^Copyright: //p' "$SRC/debian/copyright" | head -n1)
grep -qxF "Copyright (c) $holder" "$SRC/LICENSE" || fail "LICENSE does not name $holder"
diff <(sed -n '/^License: MIT/,/^[^ ]/p' "$SRC/debian/copyright" | sed -n '/^ /p' | sed 's/^ //; s/^\.$//') \
	<(sed '1,/^Copyright (c)/d' "$SRC/LICENSE" | sed '1{/^$/d}') >/dev/null ||
	fail "LICENSE's text differs from debian/copyright's"
ok "LICENSE holds the MIT licence, holder and text that debian/copyright declares"

# doc/DESIGN.md is a map a maintainer can work from: it names every source
# file of the programs (by its name without .c).
unnamed="" n=0
for f in $(files | sed "s#^$SRC/##" | grep -E '^(daemon|cli|lib|probes|probes/lib)/[^/]+\.c$'); do
	n=$((n + 1))
	b=$(basename "$f" .c)
	grep -qw -- "$b" "$SRC/doc/DESIGN.md" || unnamed="$unnamed $f"
done
[ "$n" -gt 100 ] || fail "found only $n source files to look for in doc/DESIGN.md"
[ -z "$unnamed" ] || fail "doc/DESIGN.md does not name:$unnamed"
ok "doc/DESIGN.md names every source file ($n)"

# Includes kept honest: no project header included without a name taken
# from it (the check `make check-format` runs).
out=$(cd "$SRC" && python3 tests/tools/check_includes.py . $(files | sed "s#^$SRC/##" |
	grep -E '^(daemon|cli|lib|probes|probes/lib)/[^/]+\.c$') 2>&1) || fail "unused includes: $out"
ok "$out"


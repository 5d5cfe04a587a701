#!/usr/bin/env bash
# 77-man: the manual pages agree with the programs. threadwatchd.conf(5)
# documents exactly the keys of `threadwatchd --dump-config-doc`, each with
# its default; threadwatchd(8) names every option of `threadwatchd --help`;
# threadwatch(1) has a section for every subcommand of `threadwatch --help`
# naming each of its options; threadwatch-observer(8) names every option of
# its --help; and man(1) renders all four without a warning.
set -u
. "$(dirname "$0")/lib.sh"
command -v man >/dev/null || { echo "man is not installed"; exit 77; }
MAN=$SRC/doc/man
for p in threadwatchd threadwatch; do [ -x "$B/$p" ] || fail "\"$B/$p\" is not built"; done

for page in "$MAN/threadwatch.1" "$MAN/threadwatchd.8" "$MAN/threadwatchd.conf.5" "$MAN/threadwatch-observer.8"; do
	[ -f "$page" ] || fail "no \"$page\""
	err=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
	[ -z "$err" ] || fail "$(basename "$page"): $err"
done
ok "the four pages render without warnings"

"$B/threadwatchd" --dump-config-doc >"$TW_TMP/keys.md" || fail "--dump-config-doc failed"
python3 - "$TW_TMP/keys.md" "$MAN/threadwatchd.conf.5" <<'EOF' || exit 1
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| `")]
keys = {}
for r in rows:
    cells = [c.strip() for c in r.strip().strip("|").split("|")]
    keys[cells[0].strip("`")] = cells[2].strip("`")
page = open(sys.argv[2]).read()
entries = dict(re.findall(r'^\.BI "([a-z_]+) = " "[^"]*"\n(.*?)(?=^\.(?:TP|SH))', page, re.M | re.S))
plain = lambda s: re.sub(r"\\f[BIRP]", "", s).replace("\\:", "").replace("\\-", "-").replace("\\e", "\\")
bad = []
for k in sorted(set(keys) - set(entries)):
    bad.append("key %s is not documented" % k)
for k in sorted(set(entries) - set(keys)):
    bad.append("documented key %s does not exist" % k)
for k, default in keys.items():
    if k not in entries:
        continue
    want = re.sub(r"^/usr/(local/)?", "", default)  # the prefix differs per install
    if "Default: " not in plain(entries[k]) or want not in plain(entries[k]).split("Default: ", 1)[1]:
        bad.append("key %s: the page does not give the default %s" % (k, default))
if bad:
    print("FAIL: threadwatchd.conf.5: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: threadwatchd.conf.5 documents all %d keys with their defaults" % len(keys))
EOF

# mentions PAGE OPTION...: every --option appears (dashes escaped) in PAGE.
mentions() {
	local page=$1 o
	shift
	for o in "$@"; do
		grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$page" || fail "$(basename "$page") lacks $o"
	done
}
flags=$("$B/threadwatchd" --help | sed -n '/^Options:/,/^$/p' | grep -o '^  --[a-z-]*' | tr -d ' ')
[ "$(wc -w <<<"$flags")" -ge 5 ] || fail "threadwatchd --help lists no options"
# shellcheck disable=SC2086
mentions "$MAN/threadwatchd.8" $flags
ok "threadwatchd.8 names all $(wc -w <<<"$flags") options:" $flags

oflags=$("$B/threadwatch-observer" --help | sed -n '/^Options:/,/^$/p' | grep -o '^  [-a-z, ]*--[a-z-]*' | grep -o -- '--[a-z-]*')
[ "$(wc -w <<<"$oflags")" -ge 4 ] || fail "threadwatch-observer --help lists no options"
# shellcheck disable=SC2086
mentions "$MAN/threadwatch-observer.8" $oflags
ok "threadwatch-observer.8 names all $(wc -w <<<"$oflags") options:" $oflags

cmds=$("$B/threadwatch" --help | awk '$1 == "threadwatch" && $2 !~ /^-/ {print $2}')
[ -n "$cmds" ] || fail "threadwatch --help lists no commands"
for c in $cmds; do
	grep -qx "\.SS threadwatch $c" "$MAN/threadwatch.1" || fail "threadwatch.1 has no section for $c"
	opts=$("$B/threadwatch" "$c" --help | grep -o '^  --[a-z-]*' | tr -d ' ')
	# The subcommand's own section (up to the next .SS or .SH).
	awk -v c="$c" '/^\.S[SH] / { on = ($0 == ".SS threadwatch " c) } on' "$MAN/threadwatch.1" \
		>"$TW_TMP/threadwatch.1, section $c"
	# shellcheck disable=SC2086
	mentions "$TW_TMP/threadwatch.1, section $c" ${opts//--help/}
	ok "threadwatch.1: $c with" $opts
done

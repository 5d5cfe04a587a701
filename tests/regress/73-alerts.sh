#!/usr/bin/env bash
# The shipped Prometheus alerting rules and the remote-scrape drop-in:
#  - contrib/prometheus/threadwatch.rules.yml passes `promtool check rules`
#    and its unit tests (threadwatch.rules.test.yml: each alert fires on the
#    series that should raise it and stays quiet on the others);
#  - each rule's runbook_url points at its anchor in doc/fleet.md's
#    "Alerts" section and its dashboard link is absolute, both from external labels
#    (threadwatch_runbook_url, grafana_url);
#  - contrib/remote-scrape.conf, with the Prometheus address filled in,
#    loads cleanly beside the packaged socket unit (`systemd-analyze
#    verify`), and left unfilled it is refused line by line, so a forgotten
#    edit leaves the socket on loopback only.
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || { echo "promtool is not installed"; exit 77; }

rules=$SRC/contrib/prometheus/threadwatch.rules.yml
out=$(promtool check rules "$rules" 2>&1) || fail "promtool check rules: $out"
n=$(printf '%s\n' "$out" | sed -n 's/.*SUCCESS: \([0-9]*\) rules found.*/\1/p')
[ "${n:-0}" -ge 7 ] || fail "expected at least 7 rules: $out"
ok "promtool check rules: $n rules"

out=$(cd "$SRC/contrib/prometheus" && promtool test rules threadwatch.rules.test.yml 2>&1) ||
	fail "promtool test rules: $out"
ok "promtool test rules: every alert fires and stays quiet as its tests say"

# A broken rule must make the unit tests fail: raise the headroom threshold.
mkdir -p "$TW_TMP/mut"
sed 's/threadwatch_headroom_ratio > 0.9/threadwatch_headroom_ratio > 0.99/' "$rules" \
	>"$TW_TMP/mut/threadwatch.rules.yml"
cp "$SRC/contrib/prometheus/threadwatch.rules.test.yml" "$TW_TMP/mut/"
if (cd "$TW_TMP/mut" && promtool test rules threadwatch.rules.test.yml >/dev/null 2>&1); then
	fail "the rule tests pass on a mutated headroom rule"
fi
ok "a mutated rule fails its unit tests"

# Every alert's runbook_url points at a doc/fleet.md anchor of its name, and its
# dashboard link is absolute (Grafana's address from an external label).
for a in $(sed -n 's/^ *- alert: //p' "$rules"); do
	id=$(tr 'A-Z' 'a-z' <<<"$a")
	grep -qF "runbook_url: \"{{ \$externalLabels.threadwatch_runbook_url }}#$id\"" "$rules" ||
		fail "$a has no runbook_url"
	grep -q "^- <a id=\"$id\"></a>\*\*$a\*\*" "$SRC/doc/fleet.md" ||
		fail "doc/fleet.md's Alerts section lacks an anchor for $a"
done
n=$(grep -c '^ *dashboard: "{{ $externalLabels.grafana_url }}/d/threadwatch-fleet/' "$rules")
[ "$n" = "$(grep -c '^ *- alert: ' "$rules")" ] || fail "$n absolute dashboard links"
! grep -Eq '^ *(runbook|dashboard): "[^{]' "$rules" || fail "a relative runbook or dashboard link"
ok "every alert has a runbook_url anchor in doc/fleet.md and an absolute dashboard link"

# The remote-scrape drop-in.
command -v systemd-analyze >/dev/null || { echo "systemd-analyze is not installed"; exit 77; }
u=$TW_TMP/units
mkdir -p "$u/threadwatchd.socket.d"
cp "$SRC/systemd/threadwatchd.socket" "$SRC/systemd/threadwatchd.service" "$u/"
sed -i "s|^ExecStart=.*|ExecStart=$(command -v true)|" "$u/threadwatchd.service"
sed 's|@PROMETHEUS@|192.0.2.10 198.51.100.0/24|' "$SRC/contrib/remote-scrape.conf" \
	>"$u/threadwatchd.socket.d/remote-scrape.conf"
out=$(cd "$u" && MANPATH=$(tree_manpath) SYSTEMD_UNIT_PATH="$u:" systemd-analyze verify threadwatchd.socket 2>&1)
[ -z "$out" ] || fail "the filled-in drop-in does not verify: $out"
cp "$SRC/contrib/remote-scrape.conf" "$u/threadwatchd.socket.d/remote-scrape.conf"
out=$(cd "$u" && MANPATH=$(tree_manpath) SYSTEMD_UNIT_PATH="$u:" systemd-analyze verify threadwatchd.socket 2>&1)
case $out in
*"@PROMETHEUS@"*) ;;
*) fail "an unfilled drop-in was not refused: $out" ;;
esac
ok "remote-scrape.conf verifies once filled in; unfilled, systemd refuses its address"

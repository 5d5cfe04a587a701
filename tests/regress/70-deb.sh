#!/usr/bin/env bash
# 70-deb: the Debian package. Builds it with `make deb` in a temporary build
# directory, shows lintian's output (no errors, no warnings allowed; every
# override needs a comment), installs it with apt-get, checks that the
# installed `threadwatch run --quick` works and the unit files pass
# `systemd-analyze verify` silently, reports the `systemd-analyze security`
# exposure of threadwatchd.service (at most 2.5), then reinstalls (the
# upgrade path), removes (the database and the configuration stay) and
# purges (both go) the package, and checks that nothing of it is left.
# Needs root; leaves an existing threadwatch installation alone.
# regress: alone
set -u
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "not root: the package test needs root"; exit 77; }
for c in dpkg-buildpackage dh lintian apt-get systemd-analyze readelf; do
	command -v "$c" >/dev/null || { echo "$c is not installed"; exit 77; }
done
# Temporary files in the script's own directory, removed after it: lintian
# leaves its ELF cache (mldbm-elf-*) in the temporary directory.
export TMPDIR=$TW_TMP
if dpkg-query -W -f='${Status}' threadwatch 2>/dev/null | grep -q 'ok installed'; then
	echo "the threadwatch package is installed on this machine; not touching it"
	exit 77
fi
STATE=/var/lib/private/threadwatch
if [ -e "$STATE" ] || [ -e /var/lib/threadwatch ] || [ -e /etc/threadwatch ]; then
	echo "\"$STATE\", /var/lib/threadwatch or /etc/threadwatch exists: not touching it"
	exit 77
fi
[ -x "$B/tests/twseed" ] || fail "\"$B/tests/twseed\" is not built"
INSTALLED=0
MADE_PRIVATE=0
cleanup() {
	[ "$INSTALLED" = 1 ] && dpkg --purge threadwatch >/dev/null 2>&1
	[ "$INSTALLED" = 1 ] && rm -rf "$STATE" /var/lib/threadwatch
	[ "$MADE_PRIVATE" = 1 ] && rmdir /var/lib/private 2>/dev/null
}
trap cleanup EXIT

# --- build ------------------------------------------------------------------------
# As Debian builds it: no variables of a calling make (CC=, SANITIZE=, ...).
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$SRC" deb B="$TW_TMP/b" \
	>"$TW_TMP/deb.log" 2>&1; then
	tail -n 40 "$TW_TMP/deb.log" >&2
	fail "make deb failed"
fi
deb=$(ls "$TW_TMP"/b/deb/threadwatch_*.deb)
[ -f "$deb" ] || fail "no single threadwatch_*.deb: $deb"
ok "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
# 72-systemd installs the same package: it need not build it again.
[ -n "${TW_RUN:-}" ] && mkdir -p "$TW_RUN/deb" && cp "$deb" "$TW_RUN/deb/"

# --- lintian ------------------------------------------------------------------------
ov=$SRC/debian/threadwatch.lintian-overrides
if [ -f "$ov" ]; then
	awk '/^[^#[:space:]]/ && prev !~ /^#/ { print "override without a comment above it: " $0; bad = 1 }
		{ prev = $0 } END { exit bad }' "$ov" || fail "undocumented lintian override"
fi
lint=$(lintian --display-info --show-overrides --fail-on error,warning "$deb" 2>&1)
rc=$?
lint=$(grep -v '^running with root privileges is not recommended!$' <<<"$lint")
echo "lintian $(lintian --version | awk '{print $2}') on $(basename "$deb"):"
echo "${lint:-(no output: no errors, no warnings, no notes)}"
[ "$rc" = 0 ] || fail "lintian failed (exit $rc)"
grep -Eq '^[EW]: ' <<<"$lint" && fail "lintian reports errors or warnings"
ok "lintian: no errors, no warnings"

# --- what the package holds --------------------------------------------------------
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/threadwatch ./usr/sbin/threadwatchd ./usr/lib/threadwatch/probes/ctxsw \
	./usr/lib/threadwatch/probes/threads ./usr/lib/threadwatch/probes/map32 \
	./usr/lib/threadwatch/probes.d/ ./lib/systemd/system/threadwatchd.service \
	./usr/lib/threadwatch/threadwatch-observer ./lib/systemd/system/threadwatch-observer.service \
	./lib/systemd/system/threadwatchd.socket ./etc/threadwatch/threadwatchd.conf \
	./etc/threadwatch/threadwatchd.conf.d/ \
	./usr/share/man/man1/threadwatch.1.gz ./usr/share/man/man8/threadwatchd.8.gz \
	./usr/share/man/man5/threadwatchd.conf.5.gz; do
	grep -qxF "$f" <<<"$contents" || fail "the package lacks $f"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles | grep -qx /etc/threadwatch/threadwatchd.conf ||
	fail "threadwatchd.conf is not a conffile"
dpkg-deb -f "$deb" Depends | grep -q 'libjs-dygraphs' || fail "no dependency on libjs-dygraphs"
for lib in libmicrohttpd libsqlite3 libjansson libcurl libsystemd; do
	dpkg-deb -f "$deb" Depends | grep -q "$lib" || fail "no dependency on $lib"
done
ok "binaries, probes, probes.d, units, conffile, man pages (1, 5, 8); Depends: $(dpkg-deb -f "$deb" Depends)"

# --- install -----------------------------------------------------------------------
INSTALLED=1
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$TW_TMP/apt.log" 2>&1; then
	cat "$TW_TMP/apt.log" >&2
	fail "apt-get install failed"
fi
dpkg -L threadwatch | sort >"$TW_TMP/files"
ok "installed with apt-get: $(wc -l <"$TW_TMP/files") paths"

# Hardening (hardening=+all): PIE, full RELRO, BIND_NOW, stack protector, fortify.
for f in /usr/bin/threadwatch /usr/sbin/threadwatchd /usr/lib/threadwatch/threadwatch-observer \
	/usr/lib/threadwatch/probes/ctxsw; do
	readelf -h "$f" | grep -q 'Type:.*DYN' || fail "$f is not PIE"
	readelf -lW "$f" | grep -q GNU_RELRO || fail "$f has no RELRO"
	readelf -dW "$f" | grep -Eq 'BIND_NOW|FLAGS_1.*NOW' || fail "$f is not linked with -z now"
done
readelf -sW /usr/sbin/threadwatchd | grep -q '__stack_chk_fail' || fail "threadwatchd has no stack protector"
readelf -sW /usr/sbin/threadwatchd | grep -q '_chk@' || fail "threadwatchd uses no fortified functions"
ok "hardened: PIE, RELRO, BIND_NOW, stack protector, _FORTIFY_SOURCE"

# Every Documentation= of the installed units names a page or file the
# package installed: man:PAGE(N) a manual page, file:PATH a file as it is
# (not one dh_compress renamed to PATH.gz).
ndoc=0
# doc_installed UNIT ENTRY: the entry names what the package installed
doc_installed() {
	local u=$1 d=$2 page sec
	case $d in
	man:*)
		page=${d#man:} sec=${page##*(} sec=${sec%)} page=${page%(*}
		[ -f "/usr/share/man/man$sec/$page.$sec.gz" ] || fail "$u: $d is not installed"
		;;
	file:*) [ -f "${d#file:}" ] || fail "$u: $d is not installed" ;;
	*) fail "$u: unexpected Documentation=$d" ;;
	esac
	ndoc=$((ndoc + 1))
}
for u in /lib/systemd/system/threadwatchd.service /lib/systemd/system/threadwatchd.socket; do
	docs=$(sed -n 's/^Documentation=//p' "$u")
	for d in $docs; do doc_installed "$u" "$d"; done
	for want in 'man:threadwatchd(8)' 'man:threadwatchd.conf(5)' 'file:/usr/share/doc/threadwatch/README.md'; do
		grep -qwF "$want" <<<"$docs" || fail "$u: no Documentation=$want"
	done
done
# The observer's unit names its page, the command's and doc/workloads.md.
u=/lib/systemd/system/threadwatch-observer.service
for d in $(sed -n 's/^Documentation=//p' "$u"); do doc_installed "$u" "$d"; done
grep -q '^Documentation=man:threadwatch-observer(8)' "$u" || fail "$u: no Documentation=man:threadwatch-observer(8)"
# The documents the README links to are installed beside it, where its
# relative links point.
for l in $(grep -o '](doc/[a-z_-]*\.md)' "$SRC/README.md" | sort -u | sed 's/^](//;s/)$//'); do
	[ -f "/usr/share/doc/threadwatch/$l" ] || fail "the README links to $l, which is not installed"
done
for l in doc/recommendation.md doc/fleet.md; do
	[ -f "/usr/share/doc/threadwatch/$l" ] || fail "/usr/share/doc/threadwatch/$l is not installed"
done
ok "$ndoc Documentation= entries of the units and the README's linked documents are installed"

# The enablement dh_installsystemd arranges (no running systemd is needed).
[ -L /etc/systemd/system/multi-user.target.wants/threadwatchd.service ] ||
	fail "threadwatchd.service is not enabled"
[ -L /etc/systemd/system/multi-user.target.wants/threadwatch-observer.service ] ||
	fail "threadwatch-observer.service is not enabled"
ok "threadwatchd.service and threadwatch-observer.service are enabled"

# --- the installed programs ---------------------------------------------------------
out=$(threadwatch run --quick --json 2>"$TW_TMP/run.err") || {
	cat "$TW_TMP/run.err" >&2
	fail "the installed \`threadwatch run --quick\` failed"
}
st=$(jq -c '.probes | map_values({status, reason})' <<<"$out")
jq -e --arg want "$TW_BUILTINS" "$JQ_RUN_GOOD"' (keys | sort) == ($want | split(" ") | sort) and
	all(to_entries[]; run_good(.key; .value.status; .value.reason))' \
	<<<"$st" >/dev/null || fail "probe statuses: $st (built-ins: $TW_BUILTINS)"
jq -r '.recommendation.result.sentence // .recommendation.sentence // empty' <<<"$out" | grep -q . ||
	fail "no recommendation in the installed run's output"
ok "installed \`threadwatch run --quick\`: $st"
threadwatchd --check-config >"$TW_TMP/check.out" 2>&1 ||
	fail "threadwatchd --check-config on the packaged file: $(cat "$TW_TMP/check.out")"
grep -q '/usr/lib/threadwatch/probes' "$TW_TMP/check.out" ||
	fail "the installed daemon does not look for its probes in /usr/lib/threadwatch/probes"
ok "installed threadwatchd accepts the packaged configuration"

err=$(systemd-analyze verify /lib/systemd/system/threadwatchd.service \
	/lib/systemd/system/threadwatchd.socket 2>&1 >/dev/null)
rc=$?
[ "$rc" = 0 ] && [ -z "$err" ] || fail "systemd-analyze verify (exit $rc): $err"
ok "systemd-analyze verify: the installed units pass, nothing on stderr"

sec=$(systemd-analyze security --offline=yes /lib/systemd/system/threadwatchd.service 2>&1)
level=$(sed -n 's/.*Overall exposure level for threadwatchd.service: \([0-9.]*\).*/\1/p' <<<"$sec")
[ -n "$level" ] || fail "no exposure level in: $sec"
echo "systemd-analyze security --offline=yes: $(grep 'Overall exposure' <<<"$sec")"
[ "$(echo "$level <= 2.5" | bc)" = 1 ] || fail "exposure $level is above 2.5"
ok "exposure level $level (at most 2.5)"

# --- upgrade, remove, purge ----------------------------------------------------------
# A database where systemd keeps a DynamicUser= service's state.
[ -d /var/lib/private ] || MADE_PRIVATE=1
mkdir -p "$STATE"
ln -s private/threadwatch /var/lib/threadwatch
"$B/tests/twseed" --db "$STATE/threadwatch.db" --days 2 --quiet || fail "twseed failed"
sum=$(sha256sum "$STATE/threadwatch.db" | cut -d' ' -f1)
echo "# an operator's change" >>/etc/threadwatch/threadwatchd.conf
echo "interval = 12h" >/etc/threadwatch/threadwatchd.conf.d/50-cm.conf

DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$TW_TMP/upgrade.log" 2>&1 ||
	fail "reinstalling (the upgrade path) failed: $(cat "$TW_TMP/upgrade.log")"
[ "$(sha256sum "$STATE/threadwatch.db" | cut -d' ' -f1)" = "$sum" ] ||
	fail "the upgrade changed the database"
grep -q "an operator's change" /etc/threadwatch/threadwatchd.conf || fail "the upgrade lost the conffile change"
grep -qx "interval = 12h" /etc/threadwatch/threadwatchd.conf.d/50-cm.conf || fail "the upgrade lost the drop-in"
/usr/sbin/threadwatchd --check-config | grep -q '^interval = 12h .*50-cm.conf:1' ||
	fail "the installed daemon does not read the drop-in: $(/usr/sbin/threadwatchd --check-config | grep interval)"
ok "upgrade: database, configuration and drop-in kept"

dpkg --remove threadwatch >"$TW_TMP/remove.log" 2>&1 || fail "dpkg --remove: $(cat "$TW_TMP/remove.log")"
[ ! -e /usr/sbin/threadwatchd ] || fail "remove left /usr/sbin/threadwatchd"
[ "$(sha256sum "$STATE/threadwatch.db" | cut -d' ' -f1)" = "$sum" ] || fail "remove changed the database"
[ -f /etc/threadwatch/threadwatchd.conf ] || fail "remove deleted the configuration"
ok "remove: programs gone, database and configuration kept"
rm /etc/threadwatch/threadwatchd.conf.d/50-cm.conf # the operator's own file: dpkg leaves it

dpkg --purge threadwatch >"$TW_TMP/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$TW_TMP/purge.log")"
INSTALLED=0
for p in "$STATE" /var/lib/threadwatch /etc/threadwatch; do
	[ ! -e "$p" ] && [ ! -L "$p" ] || fail "purge left \"$p\""
done
left=""
while IFS= read -r p; do
	[ "$p" != /. ] || continue
	[ -e "$p" ] || [ -L "$p" ] || continue
	# Directories other packages share (/usr/bin, /lib/systemd/system, ...)
	# and merged-/usr links (/lib -> usr/lib) stay.
	[ -d "$p" ] && [ ! -L "$p" ] && dpkg -S "$p" >/dev/null 2>&1 && continue
	[ -L "$p" ] && [ -d "$p" ] && [[ "$p" =~ ^/[^/]+$ ]] && continue
	left="$left $p"
done <"$TW_TMP/files"
[ -z "$left" ] || fail "purge left package files:$left"
leftover=$(find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
	/var/lib/systemd/deb-systemd-helper-masked -name '*threadwatchd*' 2>/dev/null)
[ -z "$leftover" ] || fail "purge left systemd links or state: $leftover"
ok "purge: database, configuration, every packaged path and the unit links are gone"

# A Debian 12 container booted with systemd-nspawn, for regress scripts
# that need systemd as PID 1 (sourced after lib.sh; uses TW_TMP).
#
# The root is built once with debootstrap (minbase, systemd, dbus, curl and
# the packages the caller names) from the mirror apt already uses, and
# cached in NSPAWN_CACHE under a key of the suite, the mirror, the package
# list and NSPAWN_SETUP_REV, so that a changed list builds a new root and
# the stale one is removed. Each run boots a copy of it (the cache stays
# clean), with its own network namespace (loopback only: no port of the
# host is taken and nothing is downloaded), and nspawn_cleanup stops it.
NSPAWN_SUITE=bookworm
NSPAWN_BASE_PKGS="systemd systemd-sysv dbus curl"
NSPAWN_CACHE=${TW_NSPAWN_CACHE:-/var/tmp/threadwatch-nspawn-root}
# Raise when the set-up below changes, so that cached roots are rebuilt.
NSPAWN_SETUP_REV=1
NSPAWN_NAME=tw-test-$$
NSPAWN_DIR=""
NSPAWN_PID=""
NSPAWN_LEADER=""
NSPAWN_RC=""

# 0 when the container can run; else 1 with the reason on stdout.
nspawn_preflight() {
	local c
	for c in systemd-nspawn debootstrap nsenter flock unshare; do
		command -v "$c" >/dev/null ||
			{ echo "$c is missing (Debian: systemd-container, debootstrap, util-linux)"; return 1; }
	done
	if ! unshare --mount --uts --ipc --net --pid --fork true 2>"$TW_TMP/unshare.err"; then
		echo "namespaces are unavailable: $(cat "$TW_TMP/unshare.err")"
		return 1
	fi
}

# The mirror of the suite in apt's sources (deb822 .sources first, then
# one-line entries); TW_DEBIAN_MIRROR wins; deb.debian.org otherwise.
nspawn_mirror() {
	local m
	if [ -n "${TW_DEBIAN_MIRROR:-}" ]; then
		echo "$TW_DEBIAN_MIRROR"
		return
	fi
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$NSPAWN_SUITE" '
		BEGIN { RS = ""; FS = "\n" }
		{ uri = ""; deb = 0; hit = 0
		  for (i = 1; i <= NF; i++) {
			split($i, kv, ":[ \t]*")
			key = kv[1]; val = substr($i, length(kv[1]) + 2); gsub(/^[ \t]+/, "", val)
			if (key == "Types" && val ~ /(^| )deb( |$)/) deb = 1
			if (key == "URIs") { split(val, u, " "); uri = u[1] }
			if (key == "Suites") { n = split(val, s, " "); for (j = 1; j <= n; j++) if (s[j] == suite) hit = 1 }
		  }
		  if (deb && hit && uri != "") { print uri; exit } }')
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -n "s/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\)[[:space:]]\+${NSPAWN_SUITE}[[:space:]].*/\2/p" |
		head -n 1)
	echo "${m:-http://deb.debian.org/debian}"
}

# nspawn_root DEPENDS: sets NSPAWN_ROOT to a cached root that also holds
# the packages of a Depends: field (names only: the first of alternatives,
# no versions), building it when missing. 1 on failure.
nspawn_root() {
	local mirror pkgs key dir
	mirror=$(nspawn_mirror)
	pkgs=$( (printf '%s\n' $NSPAWN_BASE_PKGS
		tr ',' '\n' <<<"$1" | sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g') |
		grep . | sort -u | paste -sd, -)
	key=$(printf '%s\n' "$NSPAWN_SUITE" "$mirror" "$pkgs" "$NSPAWN_SETUP_REV" | sha256sum | cut -c1-16)
	dir=$NSPAWN_CACHE/$key
	mkdir -p "$NSPAWN_CACHE"
	exec 9>"$NSPAWN_CACHE/lock"
	flock -w 900 9 || { echo "the cache $NSPAWN_CACHE stays locked" >&2; return 1; }
	if [ ! -f "$dir.ok" ]; then
		# Roots of other keys are stale: a package list changed.
		find "$NSPAWN_CACHE" -mindepth 1 -maxdepth 1 -regextype posix-extended \
			-regex '.*/[0-9a-f]{16}(\.ok|\.tmp)?' ! -name "$key*" -exec rm -rf {} +
		rm -rf "$dir" "$dir.tmp"
		echo "building the container root: debootstrap --variant=minbase --include=$pkgs $NSPAWN_SUITE $dir $mirror"
		local t=$SECONDS
		if ! debootstrap --variant=minbase --include="$pkgs" "$NSPAWN_SUITE" "$dir.tmp" "$mirror" \
			>"$TW_TMP/debootstrap.log" 2>&1; then
			tail -n 20 "$TW_TMP/debootstrap.log" >&2
			rm -rf "$dir.tmp"
			flock -u 9
			return 1
		fi
		# Set-up (NSPAWN_SETUP_REV): a host name of its own, no package
		# files left in apt's cache (each run copies the root).
		echo tw-test >"$dir.tmp/etc/hostname"
		rm -f "$dir.tmp"/var/cache/apt/archives/*.deb
		mv "$dir.tmp" "$dir" && touch "$dir.ok"
		echo "built in $((SECONDS - t)) s ($(du -sm "$dir" | cut -f1) MB)"
	fi
	flock -u 9
	NSPAWN_ROOT=$dir
}

# nspawn_copy DIR: the root of this run, a copy of the cached one (a
# reflink where the file system can), under a shared lock so that no
# other run removes the root as stale meanwhile.
nspawn_copy() {
	local rc
	NSPAWN_DIR=$1
	flock -s -w 900 9 || return 1
	cp -a --reflink=auto "$NSPAWN_ROOT" "$NSPAWN_DIR"
	rc=$?
	flock -u 9
	return $rc
}

# The options that register the container: none on a host without systemd
# as PID 1 (this one keeps the caller's cgroup); a host that runs systemd
# gives it a scope of its own.
nspawn_opts() {
	if [ -d /run/systemd/system ]; then echo --register=no; else echo --register=no --keep-unit; fi
}

# 0 when systemd-nspawn can run a command in NSPAWN_DIR (no boot); else 1
# with its complaint on stdout (no namespaces, no cgroups, ...).
nspawn_works() {
	# shellcheck disable=SC2046
	systemd-nspawn -q $(nspawn_opts) --private-network --machine="$NSPAWN_NAME" -D "$NSPAWN_DIR" \
		/bin/true </dev/null >"$TW_TMP/nspawn-true.log" 2>&1 && return 0
	echo "systemd-nspawn cannot run a container here: $(tail -n 3 "$TW_TMP/nspawn-true.log")"
	rm -rf "/run/systemd/nspawn/propagate/$NSPAWN_NAME"
	return 1
}

# Runs a command inside the container, as root, with a clean environment.
in_ct() {
	nsenter -t "$NSPAWN_LEADER" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 SYSTEMD_PAGER=cat SYSTEMD_COLORS=0 "$@"
}

# Boots NSPAWN_DIR and waits (up to 90 s) until systemd says the boot is
# over. Sets NSPAWN_PID (systemd-nspawn) and NSPAWN_LEADER (the
# container's PID 1 as the host sees it). 1 when it does not come up.
nspawn_boot() {
	local i st
	# shellcheck disable=SC2046
	systemd-nspawn $(nspawn_opts) --private-network --machine="$NSPAWN_NAME" -D "$NSPAWN_DIR" \
		-b --console=pipe </dev/null >>"$TW_TMP/console.log" 2>&1 &
	NSPAWN_PID=$!
	NSPAWN_LEADER=""
	for ((i = 0; i < 300; i++)); do
		NSPAWN_LEADER=$(pgrep -P "$NSPAWN_PID" | head -n 1)
		[ -n "$NSPAWN_LEADER" ] && [ "$(cat "/proc/$NSPAWN_LEADER/comm" 2>/dev/null)" = systemd ] && break
		kill -0 "$NSPAWN_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	[ -n "$NSPAWN_LEADER" ] || return 1
	for ((i = 0; i < 90; i++)); do
		st=$(in_ct systemctl is-system-running 2>/dev/null)
		case $st in running | degraded) return 0 ;; esac
		kill -0 "$NSPAWN_PID" 2>/dev/null || return 1
		sleep 1
	done
	return 1
}

# nspawn_wait_exit SECONDS: waits for systemd-nspawn to exit; its status
# goes to NSPAWN_RC (133: the container rebooted). 1 on timeout.
nspawn_wait_exit() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		if ! kill -0 "$NSPAWN_PID" 2>/dev/null; then
			wait "$NSPAWN_PID"
			NSPAWN_RC=$?
			NSPAWN_PID=""
			return 0
		fi
		sleep 0.1
	done
	return 1
}

nspawn_halt() {
	in_ct systemctl poweroff >/dev/null 2>&1
	nspawn_wait_exit 60
}

# The EXIT trap: the container is powered off (or killed), nothing of it
# stays mounted, its nspawn directory under /run goes, and the copy is
# removed. Keeps the script's exit status.
nspawn_cleanup() {
	local rc=$? left
	if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
		nspawn_halt || {
			kill -TERM "$NSPAWN_PID" 2>/dev/null
			nspawn_wait_exit 15 || { kill -KILL "$NSPAWN_PID" "$NSPAWN_LEADER" 2>/dev/null; nspawn_wait_exit 5; }
		}
	fi
	rm -rf "/run/systemd/nspawn/propagate/$NSPAWN_NAME"
	if [ -n "$NSPAWN_DIR" ]; then
		left=$(grep -F " $NSPAWN_DIR" /proc/self/mountinfo)
		if [ -n "$left" ]; then
			echo "FAIL: mounts left under $NSPAWN_DIR: $left" >&2
			rc=1
		else
			rm -rf "$NSPAWN_DIR"
		fi
	fi
	exit "$rc"
}

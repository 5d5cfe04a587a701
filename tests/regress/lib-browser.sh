# Helpers for the regress scripts that drive Debian's chromium through
# playwright-core (tests/browser/): browser_tools makes sure chromium, node
# and playwright-core are there (installing them when root, as make test
# does), or skips (77) saying what is missing. Sets CHROMIUM and BROWSER_DIR.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$SRC/tests/browser
export CHROMIUM PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

tools_present() {
	command -v node >/dev/null && command -v npm >/dev/null && [ -x "$CHROMIUM" ]
}

browser_tools() {
	if ! tools_present; then
		if [ "$(id -u)" != 0 ]; then
			echo "chromium, nodejs or npm is missing; make test installs them when run as root"
			exit 77
		fi
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium nodejs npm ||
			fail "cannot install chromium, nodejs and npm"
		tools_present || fail "chromium, node or npm is still missing after apt-get"
	fi
	npm_ci "$BROWSER_DIR" "$BROWSER_DIR/node_modules/playwright-core/package.json" \
		"$BROWSER_DIR/node_modules/axe-core/package.json"
}

#!/usr/bin/env bash
# Published formats checked with their own tools, from tests/lint's npm
# lockfile: the Grafana dashboard against Grafana's dashboard schema
# (@grafana/schema, through tests/lint/grafana-check.js), and the OpenAPI
# document with Spectral's spectral:oas ruleset, which must report no
# errors and no warnings.
. "$(dirname "$0")/lib.sh"
LINT=$SRC/tests/lint
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "node or npm is missing; make test installs them when run as root"
	exit 77
fi
npm_ci "$LINT" "$LINT/node_modules/.bin/spectral" "$LINT/node_modules/@grafana/schema" \
	"$LINT/node_modules/.bin/prism"

out=$(node "$LINT/grafana-check.js" "$SRC/contrib/grafana/threadwatch.json" 2>&1) || fail "$out"
ok "$out"
# The checker must refuse a dashboard that breaks the schema.
jq '.panels[0].gridPos.w = "wide"' "$SRC/contrib/grafana/threadwatch.json" >"$TW_TMP/bad.json"
node "$LINT/grafana-check.js" "$TW_TMP/bad.json" >/dev/null 2>&1 &&
	fail "grafana-check accepted a panel width that is a string"
ok "grafana-check refuses a dashboard that breaks the schema"

out=$(cd "$LINT" && node_modules/.bin/spectral lint --ruleset .spectral.yaml --fail-severity warn \
	"$SRC/web/openapi.json" 2>&1) || fail "spectral: $out"
ok "spectral (spectral:oas): web/openapi.json has no errors and no warnings"

#!/usr/bin/env bash
# 71-prism: every request web/openapi.json documents, sent to a live
# threadwatchd through Stoplight's Prism proxy (@stoplight/prism-cli, from
# tests/lint's npm lockfile) with --errors: Prism checks each request and
# each response against the document and answers an error for any
# violation, so every documented GET (each path with a real run id and a
# real chart file), POST /api/v1/runs and a request the API refuses must
# pass it. The daemon serves a seeded database of one cycle.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
LINT=$SRC/tests/lint
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "node or npm is missing; make test installs them when run as root"
	exit 77
fi
[ -x "$B/tests/twseed" ] || fail "twseed is not built"
npm_ci "$LINT" "$LINT/node_modules/.bin/prism" "$LINT/node_modules/.bin/spectral" \
	"$LINT/node_modules/@grafana/schema"
for p in $TW_BUILTINS; do fake_probe "$TW_TMP/probes" "$p" hang; done
mkdir -p "$TW_TMP/seed"
"$B/tests/twseed" --db "$TW_TMP/seed/threadwatch.db" --days 2 --every 720 --seed 7 ||
	fail "twseed could not write the history"
start_daemon seed --database "$TW_TMP/seed/threadwatch.db" --interval 365d --token "$TOKEN"
PPORT=$(free_port)
(cd "$LINT" && exec node_modules/.bin/prism proxy --errors -h 127.0.0.1 -p "$PPORT" \
	"$SRC/web/openapi.json" "http://127.0.0.1:$PORT") >"$TW_TMP/prism.log" 2>&1 &
PRISM=$!
trap 'kill $PRISM 2>/dev/null' EXIT
wait_for curl -s -o /dev/null "http://127.0.0.1:$PPORT/healthz" ||
	wait_for curl -s -o /dev/null "http://127.0.0.1:$PPORT/healthz" ||
	fail "prism did not start: $(tail -5 "$TW_TMP/prism.log")"

run_id=$(api '/api/v1/runs?limit=1' | jq -r '.runs[0].id')
ref=$(api /api/v1/workloads | jq -r '.workloads[0].ref')
# The documented GETs, their templates filled: {id} a real run, {ref} a
# seeded workload, {file} the chart library.
mapfile -t paths < <(jq -r '.paths | to_entries[] | select(.value.get) | .key' "$SRC/web/openapi.json")
n=0 bad=""
for tpl in "${paths[@]}"; do
	path=${tpl//\{id\}/$run_id}
	path=${path//\{file\}/dygraph.min.js}
	path=${path//\{ref\}/$ref}
	case $path in
	/api/v1/series) path="$path?metric=ctxsw.ratio&step=1h" ;;
	*/series) path="$path?metric=threads&step=1h" ;;
	/api/v1/runs) path="$path?limit=5&status=ok" ;;
	/api/v1/events) path="$path?limit=5" ;;
	esac
	code=$(curl -s -o "$TW_TMP/body" -D "$TW_TMP/head" -w '%{http_code}' --max-time 20 "http://127.0.0.1:$PPORT$path")
	if [ "$code" -ge 400 ] || grep -qi '^sl-violations:' "$TW_TMP/head"; then
		bad="$bad
GET $path: $code $(grep -i '^sl-violations:' "$TW_TMP/head") $(head -c 400 "$TW_TMP/body")"
	fi
	n=$((n + 1))
done
# A POST, and a request the API refuses (its 4xx is documented too).
code=$(curl -s -o "$TW_TMP/body" -D "$TW_TMP/head" -w '%{http_code}' -X POST \
	-H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PPORT/api/v1/runs")
{ [ "$code" = 202 ] || [ "$code" = 409 ]; } && ! grep -qi '^sl-violations:' "$TW_TMP/head" ||
	bad="$bad
POST /api/v1/runs: $code $(head -c 400 "$TW_TMP/body")"
code=$(curl -s -o "$TW_TMP/body" -D "$TW_TMP/head" -w '%{http_code}' "http://127.0.0.1:$PPORT/api/v1/runs/999999")
{ [ "$code" = 404 ] && ! grep -qi '^sl-violations:' "$TW_TMP/head"; } ||
	bad="$bad
GET /api/v1/runs/999999: $code $(head -c 400 "$TW_TMP/body")"
[ -z "$bad" ] || fail "Prism found requests or responses that break web/openapi.json:$bad"
[ "$n" -ge 14 ] || fail "only $n documented GETs"
ok "Prism (--errors) passes all $n documented GETs, POST /api/v1/runs and a 404 against web/openapi.json"

# Prism itself must catch a response that breaks the document: a copy that
# says /healthz answers a number is refused.
jq '.components.schemas.Health = {"type": "number"}' "$SRC/web/openapi.json" >"$TW_TMP/broken.json"
kill "$PRISM" 2>/dev/null
wait "$PRISM" 2>/dev/null
(cd "$LINT" && exec node_modules/.bin/prism proxy --errors -h 127.0.0.1 -p "$PPORT" \
	"$TW_TMP/broken.json" "http://127.0.0.1:$PORT") >"$TW_TMP/prism2.log" 2>&1 &
PRISM=$!
wait_for curl -s -o /dev/null "http://127.0.0.1:$PPORT/api/v1/status" ||
	fail "prism did not start on the broken copy"
code=$(curl -s -o /dev/null -D "$TW_TMP/head" -w '%{http_code}' "http://127.0.0.1:$PPORT/healthz")
[ "$code" -ge 400 ] || grep -qi '^sl-violations:' "$TW_TMP/head" ||
	fail "Prism let a response through that breaks the document ($code)"
ok "Prism refuses a response that breaks the document ($code)"
stop_daemon

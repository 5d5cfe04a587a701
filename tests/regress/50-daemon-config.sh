#!/usr/bin/env bash
# 50-daemon-config: threadwatchd's configuration without starting the
# daemon. --check-config on good and bad files (file:line in the message,
# exit 78, the file untouched), bad flags (exit 2), --help naming every key,
# and the committed etc/threadwatchd.conf and the Markdown table
# matching what the key table generates.
set -u
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/regress/lib-daemon.sh"
cd "$TW_TMP" || exit 1

# check_bad NAME LINE TEXT CONTENT: the file must be refused with
# "NAME.conf:LINE:" and TEXT in the message, exit 78 (EX_CONFIG), and stay as it was.
check_bad() {
	local name=$1 line=$2 text=$3 out rc sum
	printf '%b' "$4" >"$name.conf"
	sum=$(sha256sum "$name.conf")
	out=$("$TWD" --check-config --config "$name.conf" 2>&1)
	rc=$?
	[ "$rc" = 78 ] || fail "$name: exit $rc, expected 78, EX_CONFIG ($out)"
	grep -qF "$name.conf:$line:" <<<"$out" || fail "$name: no \"$name.conf:$line:\" in: $out"
	grep -qF "$text" <<<"$out" || fail "$name: no \"$text\" in: $out"
	[ "$(sha256sum "$name.conf")" = "$sum" ] || fail "$name: the file was changed"
	ok "$name refused: $out"
}

check_bad unknown 3 'unknown key "prot"' '# c\nport = 8437\nprot = 1\n'
check_bad range 2 'out of range 0..65535' 'interval = 1h\nport = 70000\n'
check_bad duration 1 'is not a duration' 'interval = 6x\n'
check_bad twice 4 'interval is already set on line 1' 'interval = 1h\n\n# x\ninterval = 2h\n'
check_bad noeq 2 'expected "key = value"' 'quick = yes\njust words\n'
check_bad bool 1 'is not a boolean' 'quick = maybe\n'
check_bad quote 1 'closing quote is missing' 'token = "abc\n'
check_bad address 1 'not an IPv4 or IPv6 address' 'listen_address = localhost\n'
check_bad token 1 'must be 16 to 256 characters' 'token = short\n'
check_bad splay 2 'splay: longer than interval' 'interval = 1h\nsplay = 2h\n'
check_bad retention 1 'less than retention_raw_days' \
	'retention_samples_days = 7\nretention_raw_days = 30\n'
check_bad churn 1 'workload_switches_per_second: needs workload_creates_per_second' \
	'workload_switches_per_second = 5000\n'
check_bad tls 1 'tls_cert and tls_key must be given together' 'tls_cert = /etc/hostname\n'
check_bad tokenfile 1 'cannot read' 'token_file = /nonexistent/token\n'

# A good file: comments, quotes, inline comments and units; flags win.
cat >good.conf <<'EOF'
# a comment
   listen_address = ::1
port=9
interval = 1h30m   # inline comment
splay = "5m"
quick = yes
token_file = tok
workload_stack_size = 2M
log_level = debug
EOF
echo "abcdefghijklmnopqrstuvwxyz012345" >tok
out=$("$TWD" --check-config --config good.conf --port 8080 --load-threshold=0.5) ||
	fail "good.conf refused: $out"
for want in 'listen_address = ::1' 'port = 8080  *# --port' 'interval = 1h30m  *# good.conf:4' \
	'splay = 5m' 'quick = yes' 'workload_stack_size = 2M' 'guard_loadavg_per_cpu_max = 0.5' \
	'#token = (set, not shown)' "database = $TW_TMP/x/threadwatch.db"; do
	[[ $want == database* ]] && out=$("$TWD" --check-config --config good.conf --state-dir "$TW_TMP/x")
	grep -q -- "^$want" <<<"$out" || fail "good.conf: no \"$want\" in:
$out"
done
grep -q abcdefghijklmnop <<<"$out" && fail "--check-config printed the token"
ok "good.conf accepted with the flags winning"

# No configuration at all: the defaults, the database under $STATE_DIRECTORY.
out=$(STATE_DIRECTORY=/var/lib/tw-x "$TWD" --check-config --config empty.conf) || fail "empty file refused"
grep -q '^database = /var/lib/tw-x/threadwatch.db' <<<"$out" || fail "no default database: $out"
grep -q '^port = 8437 ' <<<"$out" || fail "the default port is not 8437: $out"
grep -q '^listen_address = 127.0.0.1 ' <<<"$out" || fail "the default address is not 127.0.0.1"

# Flags: a bad value exits 78 naming the flag, a bad option 2.
out=$("$TWD" --check-config --config empty.conf --port abc 2>&1)
[ $? = 78 ] && grep -q -- '--port: "abc" is not an integer' <<<"$out" || fail "--port abc: $out"
out=$("$TWD" --check-config --config empty.conf --no-such-thing 2>&1)
[ $? = 2 ] && grep -q 'unknown option "--no-such-thing"' <<<"$out" || fail "unknown option: $out"
out=$("$TWD" --check-config --config empty.conf --interval 2>&1)
[ $? = 2 ] && grep -q -- '--interval needs a value' <<<"$out" || fail "missing value: $out"
out=$("$TWD" --check-config --config missing.conf 2>&1)
[ $? = 78 ] && grep -q 'missing.conf' <<<"$out" || fail "missing --config file: $out"
ok "bad flags refused"

# --help names every key of the table.
help=$("$TWD" --help) || fail "--help failed"
keys=$("$TWD" --dump-config-file | sed -n 's/^#\([a-z_]*\) = .*/\1/p')
[ "$(wc -l <<<"$keys")" -ge 29 ] || fail "fewer keys than expected: $keys"
for k in $keys; do
	grep -q -- "--${k//_/-}=" <<<"$help" || fail "--help does not name --${k//_/-}"
	"$TWD" --dump-config-doc | grep -q "^| \`$k\` |" || fail "the Markdown table lacks $k"
done
"$TWD" --version | grep -q '^threadwatchd [0-9]' || fail "--version"
ok "--help and the Markdown table name all $(wc -l <<<"$keys") keys"

# The committed default file is what the table generates (the three keys
# whose defaults come from the build's PREFIX are compared without values)
# and parses as a valid configuration.
mask='s/^#\(probe_dir\|probes_d\|dygraphs_dir\) = .*/#\1 = (build default)/'
diff <("$TWD" --dump-config-file | sed "$mask") <(sed "$mask" "$SRC/etc/threadwatchd.conf") ||
	fail "etc/threadwatchd.conf is stale: regenerate it with threadwatchd --dump-config-file"
"$TWD" --check-config --config "$SRC/etc/threadwatchd.conf" >/dev/null ||
	fail "etc/threadwatchd.conf does not validate"
# Uncommented, every default is accepted as a value.
sed -n 's/^#\([a-z_]* = .*\)/\1/p' "$SRC/etc/threadwatchd.conf" >all.conf
"$TWD" --check-config --config all.conf >/dev/null || fail "the documented defaults do not validate"
ok "etc/threadwatchd.conf matches the key table"

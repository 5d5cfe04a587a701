# Helpers sourced by regress scripts: fail with a message, wait for a file
# or a port, pick a free port.
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
# wait_for CMD... : retries for up to 10 s
wait_for() {
	local i
	for i in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

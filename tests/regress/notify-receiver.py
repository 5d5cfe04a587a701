#!/usr/bin/env python3
"""notify-receiver: stands in for systemd's notify socket in the regress
tests. Binds a datagram socket at argv[1] and appends each assignment of
every message it receives ("READY=1", "STATUS=...") to argv[2], one per
line, until it is killed."""
import socket
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    with open(out, "a", buffering=1, encoding="utf-8") as f:
        while True:
            data = sock.recv(65536)
            for line in data.decode("utf-8", "replace").splitlines():
                f.write(line + "\n")


if __name__ == "__main__":
    main()

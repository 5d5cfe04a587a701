#!/usr/bin/env python3
"""fleet_stub: many threadwatchd stand-ins in one process, for testing and
measuring `threadwatch fleet` against a large fleet on one machine.

It listens on COUNT consecutive loopback ports from FIRST and answers every
GET with the body that a real threadwatchd gave for the same path and query
(ANSWERS is a JSON object {"/api/v1/status": {...}, ...}, recorded from a
daemon by the caller), with HTTP/1.1 keep-alive as libmicrohttpd does. A
path it has no answer for gets 404 with the daemon's error body. It prints
"ready" once every port listens, and stops on SIGTERM or after --lifetime
seconds, so that it never outlives its test.

Usage: fleet_stub.py ANSWERS FIRST COUNT [--lifetime S] [--delay S]
"""
import argparse
import asyncio
import json
import resource
import signal
import sys


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("answers")
    p.add_argument("first", type=int)
    p.add_argument("count", type=int)
    p.add_argument("--lifetime", type=float, default=120.0)
    p.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    return p.parse_args()


def response(status, body):
    reason = {200: "OK", 404: "Not Found", 400: "Bad Request"}.get(status, "Error")
    data = body.encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n")
    return head.encode() + data


async def serve(answers, delay, reader, writer):
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            parts = line.decode("latin-1").split()
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            target = parts[1] if len(parts) >= 2 else "/"
            if delay:
                await asyncio.sleep(delay)
            if target in answers:
                writer.write(response(200, json.dumps(answers[target])))
            else:
                body = {"error": {"status": 404, "message": "no such resource"}}
                writer.write(response(404, json.dumps(body)))
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main():
    args = parse_args()
    with open(args.answers) as f:
        answers = json.load(f)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, args.count * 4 + 256)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    servers = []
    for port in range(args.first, args.first + args.count):
        servers.append(await asyncio.start_server(
            lambda r, w: serve(answers, args.delay, r, w), "127.0.0.1", port, backlog=64))
    print("ready", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), args.lifetime)
    except asyncio.TimeoutError:
        pass
    for s in servers:
        s.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except OSError as e:
        print(f"fleet_stub: {e}", file=sys.stderr)
        sys.exit(1)

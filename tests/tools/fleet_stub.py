#!/usr/bin/env python3
"""fleet_stub: many threadwatchd stand-ins in one process, for testing and
measuring `threadwatch fleet` against a large fleet on one machine.

It listens on COUNT consecutive loopback ports from FIRST and answers every
GET with the body that a real threadwatchd gave for the same path and query
(ANSWERS is a JSON object {"/api/v1/status": {...}, ...}, recorded from a
daemon by the caller), with HTTP/1.1 keep-alive as libmicrohttpd does. A
path it has no answer for gets 404 with the daemon's error body. With
--token T, a request without "Authorization: Bearer T" gets 401 with the
body and WWW-Authenticate header that threadwatchd's h_trigger() (daemon/
http.c) sends for POST /api/v1/runs, as a daemon whose GETs need the token
would; --headers FILE appends each request's headers to FILE as one JSON
line. It prints
"ready" once every port listens, and stops on SIGTERM or after --lifetime
seconds, so that it never outlives its test.

Usage: fleet_stub.py ANSWERS FIRST COUNT [--lifetime S] [--delay S]
                     [--token T] [--headers FILE]
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
    p.add_argument("--token", help="answer 401 unless 'Authorization: Bearer TOKEN' is sent")
    p.add_argument("--headers", help="append each request's headers to this file (JSON lines)")
    return p.parse_args()


def response(status, body, extra=""):
    reason = {200: "OK", 404: "Not Found", 400: "Bad Request",
              401: "Unauthorized"}.get(status, "Error")
    data = body.encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(data)}\r\n\r\n")
    return head.encode() + data


def unauthorized(token, headers):
    """h_trigger()'s check: None when the token matches, else the 401."""
    auth = headers.get("authorization")
    if auth is not None and auth[:7].lower() == "bearer " and auth[7:] == token:
        return None
    message = "wrong token" if auth is not None else "missing 'Authorization: Bearer TOKEN'"
    body = {"error": {"status": 401, "message": message}}
    return response(401, json.dumps(body), 'WWW-Authenticate: Bearer realm="threadwatch"\r\n')


async def serve(args, answers, reader, writer):
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            parts = line.decode("latin-1").split()
            headers = {}
            while (h := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = h.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            target = parts[1] if len(parts) >= 2 else "/"
            if args.headers:
                with open(args.headers, "a") as f:
                    f.write(json.dumps({"target": target, "headers": headers}) + "\n")
            if args.delay:
                await asyncio.sleep(args.delay)
            denied = unauthorized(args.token, headers) if args.token else None
            if denied:
                writer.write(denied)
            elif target in answers:
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
            lambda r, w: serve(args, answers, r, w), "127.0.0.1", port, backlog=64))
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

#!/usr/bin/env python3
"""Echo and broadcast endpoints on Python `websockets` (asyncio): the comparison server that
BENCHMARKS.md measures in the same run as Huddle's `--bench` endpoints, with the same
`huddle-loadtest echo` and `broadcast` commands.

    /echo       every text or binary message straight back to its sender
    /broadcast  every message to every open connection, the sender included

Usage: python_ws_server.py [--host 127.0.0.1] [--port 9002] [--compression]

Compression (permessage-deflate) is off unless asked for, as in the raw runs against Huddle
(`huddle-loadtest --no-compression`). One process, one thread: asyncio's event loop. Needs
`websockets` (15.x): `python3 -m venv .build/bench-venv && .build/bench-venv/bin/pip install websockets==15.0.1`.
"""

import argparse
import asyncio
import http

from websockets.asyncio.server import broadcast, serve

# Open connections on /broadcast. broadcast() writes to each without waiting, as the Huddle
# endpoint does; a connection that cannot keep up is closed by its own keepalive timeout.
SUBSCRIBERS = set()


async def echo(connection):
    async for message in connection:
        await connection.send(message)


async def fan_out(connection):
    SUBSCRIBERS.add(connection)
    try:
        async for message in connection:
            broadcast(SUBSCRIBERS, message)
    finally:
        SUBSCRIBERS.discard(connection)


ROUTES = {"/echo": echo, "/broadcast": fan_out}


def refuse_unknown_paths(connection, request):
    if request.path not in ROUTES:
        return connection.respond(http.HTTPStatus.NOT_FOUND, "no such endpoint\n")
    return None


async def handler(connection):
    await ROUTES[connection.request.path](connection)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9002)
    parser.add_argument("--compression", action="store_true", help="negotiate permessage-deflate")
    arguments = parser.parse_args()
    async with serve(
        handler,
        arguments.host,
        arguments.port,
        process_request=refuse_unknown_paths,
        compression="deflate" if arguments.compression else None,
        max_size=16 * 1024 * 1024,
        # The harness opens thousands of connections at once; the default backlog is 100.
        backlog=4096,
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening ws://{arguments.host}:{port} (/echo, /broadcast)", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())

"""Interop fan-out check: N Python `websockets` clients on Huddle's /broadcast.

Every client publishes M numbered messages; every client must receive every message of every
publisher exactly once, each publisher's in order. Prints one JSON line with the counts.
"""
import argparse
import asyncio
import json
import sys

from websockets.asyncio.client import connect


async def client(url: str, index: int, clients: int, messages: int, compression: bool, ready: asyncio.Barrier):
    expected = clients * messages
    seen = {}
    async with connect(url, compression="deflate" if compression else None) as ws:
        await ready.wait()
        for n in range(messages):
            await ws.send(f"{index}:{n}:" + "x" * 200)
        received = 0
        while received < expected:
            message = await asyncio.wait_for(ws.recv(), 10)
            publisher, number, _ = message.split(":", 2)
            publisher, number = int(publisher), int(number)
            if seen.get(publisher, -1) != number - 1:
                raise AssertionError(f"client {index}: from {publisher} got {number} after {seen.get(publisher)}")
            seen[publisher] = number
            received += 1
    return received


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--compression", choices=["on", "off"], default="on")
    args = parser.parse_args()
    ready = asyncio.Barrier(args.clients)
    try:
        counts = await asyncio.gather(*[
            client(args.url, i, args.clients, args.messages, args.compression == "on", ready)
            for i in range(args.clients)
        ])
    except Exception as error:  # noqa: BLE001 - the result line carries it to the Swift test
        print(json.dumps({"ok": False, "error": repr(error)}))
        return 1
    print(json.dumps({"ok": True, "received": sum(counts)}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

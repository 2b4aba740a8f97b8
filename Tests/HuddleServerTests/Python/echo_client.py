"""Interop client: Python `websockets` talking to Huddle's /echo.

Sends text and binary messages of several sizes, checks every echo byte for byte and type,
then closes cleanly. Prints one JSON line: what was negotiated and what was checked.
"""
import argparse
import asyncio
import json
import os
import ssl
import sys

from websockets.asyncio.client import connect


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--compression", choices=["on", "off"], default="on")
    parser.add_argument("--ca", help="CA file to trust for wss://")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()

    context = None
    if args.url.startswith("wss://"):
        context = ssl.create_default_context(cafile=args.ca)
    sizes = [0, 1, 125, 126, 1000, 65535, 65536, 300_000]
    checked = 0
    async with connect(
        args.url,
        ssl=context,
        compression="deflate" if args.compression == "on" else None,
        max_size=2**24,
        open_timeout=10,
    ) as ws:
        extensions = [type(e).__name__ for e in ws.protocol.extensions]
        for round_ in range(args.rounds):
            for size in sizes:
                # Compressible text and incompressible binary: both paths of the deflater.
                text = ("huddle %d " % round_ * (size // 8 + 1))[:size]
                await ws.send(text)
                echoed = await ws.recv()
                if echoed != text:
                    print(json.dumps({"ok": False, "error": f"text mismatch at size {size}"}))
                    return 1
                data = os.urandom(size)
                await ws.send(data)
                echoed = await ws.recv()
                if echoed != data or not isinstance(echoed, bytes):
                    print(json.dumps({"ok": False, "error": f"binary mismatch at size {size}"}))
                    return 1
                checked += 2
        # A fragmented message: websockets sends an iterable as fragments.
        await ws.send(["frag", "mented", " message"])
        if await ws.recv() != "fragmented message":
            print(json.dumps({"ok": False, "error": "fragmented message mismatch"}))
            return 1
        checked += 1
        pong_waiter = await ws.ping(b"are you there")
        await asyncio.wait_for(pong_waiter, 5)
    print(json.dumps({
        "ok": True,
        "checked": checked,
        "extensions": extensions,
        "close_code": ws.close_code,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

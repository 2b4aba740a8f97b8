#!/usr/bin/env python3
"""Acknowledged publishes per second: C connections, each with one publish in flight.

Connections are split over P client processes (so one Python process is not the bottleneck);
each signs up a user per connection, then all start together, publish to a room of their own
for the warm-up plus the measured seconds, and count ok replies inside the measured window.
`rate_limited` replies (the server allows 50 requests/s per connection, bursts of 100) are
counted separately; the connection then waits the `retry_after_ms` it was given.

    python3 bench/throughput.py ws://127.0.0.1:PORT --connections 100 --procs 2 --seconds 10

Several URLs (the nodes of a cluster): connection i goes to URL i mod n. `--pids` names server
processes (nodes, redis-server) whose CPU time inside the measured window is reported too.
Prints one JSON line: acks/s, refusals, and each client process's CPU use (percent of one core).
"""
import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time

from websockets.asyncio.client import connect

from huddle_session import Session


async def connection(url, name, start_at, measure_from, measure_to, counts):
    async with connect(url + "/v1", subprotocols=["huddle.v1"], compression=None, max_queue=None) as ws:
        session = Session(ws)
        request = session.request
        await session.signup(name)
        await asyncio.sleep(max(0, start_at - time.time()))
        channel = "room:" + name
        n = 0
        while time.time() < measure_to:
            n += 1
            reply = await request("publish", channel=channel, data={"n": n, "text": "throughput"})
            now = time.time()
            inside = measure_from <= now < measure_to
            if reply.get("ok"):
                if inside:
                    counts["acks"] += 1
            else:
                code = reply["error"]["code"]
                if inside:
                    counts[code] = counts.get(code, 0) + 1
                await asyncio.sleep(reply["error"].get("retry_after_ms", 10) / 1000)


def cpu_seconds(pid):
    # utime + stime (fields 14 and 15 of /proc/PID/stat, after the parenthesised name).
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def part(args):
    counts = {"acks": 0}
    tag = "%06x" % random.randrange(1 << 24)
    measure_from = args.start_at + args.warmup
    measure_to = measure_from + args.seconds

    async def cpu_meter():
        # This process's CPU use inside the measured window only; part 0 also the servers'.
        await asyncio.sleep(max(0, measure_from - time.time()))
        before = os.times()
        servers_before = [cpu_seconds(pid) for pid in args.pids]
        await asyncio.sleep(max(0, measure_to - time.time()))
        after = os.times()
        servers_after = [cpu_seconds(pid) for pid in args.pids]
        used = (after.user - before.user) + (after.system - before.system)
        counts["cpu_percent"] = round(100 * used / args.seconds, 1)
        if args.pids:
            counts["server_cpu_seconds"] = [round(b - a, 2) for a, b in zip(servers_before, servers_after)]

    first = int(args.part) * args.connections  # this part's connections' global numbers
    await asyncio.gather(cpu_meter(), *[
        connection(args.url[(first + i) % len(args.url)], "tp%s%s_%d" % (tag, args.part, i), args.start_at, measure_from, measure_to, counts)
        for i in range(args.connections)])
    print(json.dumps(counts))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url", nargs="+")
    parser.add_argument("--pids", type=lambda text: [int(p) for p in text.split(",") if p], default=[])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--part")
    parser.add_argument("--start-at", type=float)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    if args.part is not None:
        asyncio.run(part(args))
        return
    start_at = time.time() + 3 + args.connections * 0.01  # time for every signup
    per = [args.connections // args.procs + (1 if i < args.connections % args.procs else 0) for i in range(args.procs)]
    children = [subprocess.Popen([sys.executable, __file__, *args.url, "--connections", str(n), "--part", str(i),
                                  "--start-at", str(start_at), "--seconds", str(args.seconds), "--warmup", str(args.warmup)]
                                 + (["--pids", ",".join(map(str, args.pids))] if i == 0 else []),
                                 stdout=subprocess.PIPE, text=True) for i, n in enumerate(per)]
    results = []
    for child in children:
        out, _ = child.communicate()
        results.append(json.loads(out.strip().splitlines()[-1]))
    acks = sum(r["acks"] for r in results)
    refused = {}
    for r in results:
        for key, value in r.items():
            if key not in ("acks", "cpu_percent", "server_cpu_seconds"):
                refused[key] = refused.get(key, 0) + value
    print(json.dumps({"label": args.label, "connections": args.connections, "seconds": args.seconds,
                      "acks": acks, "acks_per_second": round(acks / args.seconds), "refused": refused,
                      "client_cpu_percent": [r["cpu_percent"] for r in results],
                      "server_cpu_seconds": results[0].get("server_cpu_seconds", [])}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Publish round-trip latency, split by whether the server's snapshot thread was working.

C connections each sign up and publish to a room of their own at a fixed rate (under the
server's 50 requests/s per connection limit), one request in flight. Each publish's latency is
measured from the moment it was *scheduled* (so a stall that delays later sends counts against
them too, no coordinated omission) to its ok reply.

With --pid, a sampler reads /proc/PID/task/*/schedstat (on-CPU nanoseconds) of the thread
named "huddle-snapshot" every 2 ms; a publish counts as "during a snapshot" when that thread
ran at any time between the publish's scheduled start and its reply.

    python3 bench/publish_latency.py ws://127.0.0.1:PORT --seconds 30 --pid PID

Prints one JSON line. Needs `websockets` (the test venv has it: .build/test-venv/bin/python).
"""
import argparse
import asyncio
import json
import os
import random
import threading
import time

from websockets.asyncio.client import connect

from huddle_session import Session


def percentiles(values):
    if not values:
        return {"count": 0}
    ordered = sorted(values)

    def at(q):
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)

    return {"count": len(ordered), "p50_ms": at(0.50), "p90_ms": at(0.90), "p99_ms": at(0.99),
            "p999_ms": at(0.999), "max_ms": round(ordered[-1] * 1000, 2)}


class SnapshotSampler(threading.Thread):
    """Intervals (monotonic seconds) during which the snapshot thread was on a CPU."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.active = []  # (start, end) of sample intervals in which the thread ran
        self.core = []  # (time, on-CPU seconds) of the core thread, every sample
        self.stop = False
        self.tid = None

    def find(self, name="huddle-snapshot"):
        for tid in os.listdir("/proc/%d/task" % self.pid):
            try:
                with open("/proc/%d/task/%s/comm" % (self.pid, tid)) as f:
                    if f.read().strip() == name:
                        return tid
            except OSError:
                pass
        return None

    def core_cpu(self, start, end):
        """Seconds the core thread spent on a CPU between two moments (by samples)."""
        inside = [cpu for t, cpu in self.core if start <= t <= end]
        return (max(inside) - min(inside)) if len(inside) > 1 else 0.0

    def run(self):
        self.tid = self.find()
        if self.tid is None:
            return
        path = "/proc/%d/task/%s/schedstat" % (self.pid, self.tid)
        core_tid = self.find("huddle-core")
        core_path = "/proc/%d/task/%s/schedstat" % (self.pid, core_tid) if core_tid else None
        last_time = time.monotonic()
        with open(path) as f:
            last_cpu = int(f.read().split()[0])
        while not self.stop:
            time.sleep(0.002)
            try:
                with open(path) as f:
                    cpu = int(f.read().split()[0])
            except OSError:
                return
            now = time.monotonic()
            if core_path:
                try:
                    with open(core_path) as f:
                        self.core.append((now, int(f.read().split()[0]) / 1e9))
                except OSError:
                    pass
            if cpu != last_cpu:
                self.active.append((last_time, now))
            last_time, last_cpu = now, cpu


def overlaps(intervals, start, end):
    # intervals are sorted by start; binary search the first that ends after start
    lo, hi = 0, len(intervals)
    while lo < hi:
        mid = (lo + hi) // 2
        if intervals[mid][1] < start:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(intervals) and intervals[lo][0] <= end


async def publisher(url, index, tag, rate, deadline, samples, errors):
    name = "lat%s%d" % (tag, index)
    async with connect(url + "/v1", subprotocols=["huddle.v1"], compression=None) as ws:
        session = Session(ws)
        request = session.request
        await session.signup(name)
        interval = 1.0 / rate
        scheduled = time.monotonic() + random.random() * interval
        n = 0
        while scheduled < deadline:
            delay = scheduled - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            n += 1
            reply = await request("publish", channel="room:lat-%s-%d" % (tag, index),
                                  data={"n": n, "text": "latency probe %d" % n})
            done = time.monotonic()
            if reply.get("ok"):
                samples.append((scheduled, done))
            else:
                errors[reply["error"]["code"]] = errors.get(reply["error"]["code"], 0) + 1
            scheduled += interval


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--rate", type=float, default=40, help="publishes per second per connection")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    tag = "%06x" % random.randrange(1 << 24)
    sampler = SnapshotSampler(args.pid) if args.pid else None
    if sampler:
        sampler.start()
    samples, errors = [], {}
    started = time.monotonic()
    cpu_started = os.times()
    deadline = started + args.seconds
    await asyncio.gather(*[publisher(args.url, i, tag, args.rate, deadline, samples, errors) for i in range(args.connections)])
    wall = time.monotonic() - started
    cpu = os.times()
    if sampler:
        sampler.stop = True
        sampler.join()
    latencies = [end - start for start, end in samples]
    result = {"label": args.label, "all": percentiles(latencies), "errors": errors,
              "client_cpu_percent": round(100 * ((cpu.user - cpu_started.user) + (cpu.system - cpu_started.system)) / wall, 1)}
    if sampler and sampler.tid:
        intervals = sampler.active
        during = [end - start for start, end in samples if overlaps(intervals, start, end)]
        outside = [end - start for start, end in samples if not overlaps(intervals, start, end)]
        busy = sum(end - start for start, end in intervals)
        result.update({"during_snapshot": percentiles(during), "outside_snapshot": percentiles(outside),
                       "snapshot_thread_busy_fraction": round(busy / wall, 3)})
        # Where the slowest publishes fall: seconds after the start of the snapshot run they
        # overlap (a run starts where the thread wakes after > 0.5 s idle).
        starts = [a for k, (a, b) in enumerate(intervals) if k == 0 or a - intervals[k - 1][1] > 0.5]
        slowest = sorted(samples, key=lambda s: s[0] - s[1])[:8]
        result["slowest"] = [
            {"ms": round((end - start) * 1000, 1),
             "s_after_snapshot_start": round(start - max([t for t in starts if t <= end] or [float("nan")]), 3),
             "core_thread_cpu_ms": round(sampler.core_cpu(start, end) * 1000, 1)}
            for start, end in slowest]
        result["snapshot_starts"] = len(starts)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())

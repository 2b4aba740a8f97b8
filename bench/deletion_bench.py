#!/usr/bin/env python3
"""Issue 16: deleting a heavy user while others chat. How long the core is busy with the deletion
(the server's `account erased` / `erasure chunk` log lines, `core_us`), and the chat acks of other
users during it against the same acks without it.

    .build/test-venv/bin/python bench/deletion_bench.py [--bin .build/release/huddle]
        [--friends 10 (at most 35)] [--messages 10000] [--photos 100] [--posts 100] [--room-messages 500]
        [--pairs 50] [--rate 10] [--window 5] [--via op,api] [--background-messages 0]

A release server on a free loopback port with its own temporary data directory (killed after),
`--fsync everysec`, request limits lifted so the set-up is quick. For each deletion in `--via`
(`op`: `account_delete` with the password; `api`: `DELETE /api/v1/users/NAME`) a heavy user is
built over the wire: FRIENDS friends, MESSAGES chat messages spread over their rooms (half the
heavy user's, half the friends'), PHOTOS photos (4 KiB each) in memories of 10 points, PHOTOS
places capped at 20, POSTS posts each liked and commented on by a friend plus a like and a comment
of theirs on a friend's post, ROOM_MESSAGES in a `room:` with other writers. BACKGROUND_MESSAGES
are published by the chatting pairs first (the server's other history, which the erasure scans).
Then PAIRS pairs chat, one publish per pair RATE times a second (open loop), for WINDOW seconds
before the deletion and WINDOW after. Figures: the acks of publishes sent in the WINDOW before
(baseline) and in the first second from the deletion's request (during); p50/p99/max each.
"""
import argparse
import asyncio
import http.client
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abuse  # noqa: E402
from abuse import Client, PASSWORD, befriend, chat_room, percentile  # noqa: E402

API_KEY = "deletion-bench-operator-key"


class Server(abuse.Server):
    """abuse.py's server, with the operator's API and the request limits lifted for the set-up."""

    def __init__(self, binary):
        super().__init__(binary, 1000, "everysec", prefix="huddle-deletion.", extra=[
            "--api-key", API_KEY, "--rate-limit", "100000", "--user-rate-limit", "100000",
            "--user-publish-bytes", "1000000000", "--user-read-bytes", "1000000000"])

    def read_log(self):
        with open(self.log.name) as f:
            return f.read()

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.process.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def signed_up(url, name):
    """Signs up `name`, retrying while the server hashes other sign-ups from this address."""
    client = await Client.open(url, compression=None)
    while True:
        reply = await client.request("signup", username=name, email=name + "@example.com", password=PASSWORD)
        retry = reply.get("error", {}).get("retry_after_ms")
        if reply.get("ok") or retry is None:
            break
        await asyncio.sleep(retry / 1000)
    if not reply.get("ok"):
        raise RuntimeError("signup %s: %r" % (name, reply))
    client.token = reply["result"]["token"]
    client.name = name
    return client


async def pipelined(client, requests, window=256):
    """Sends (op, args) requests with WINDOW in flight; raises on the first refusal."""
    in_flight = set()
    for op, args in requests:
        in_flight.add(asyncio.ensure_future(await client.send(op, **args)))
        if len(in_flight) >= window:
            done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                if not future.result().get("ok"):
                    raise RuntimeError("%s: %r" % (op, future.result()))
    for future in asyncio.as_completed(in_flight):
        reply = await future
        if not reply.get("ok"):
            raise RuntimeError("refused: %r" % reply)


def http_request(port, method, path, token, body=b""):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request(method, path, body=body, headers={"Authorization": "Bearer " + token})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    if response.status >= 300:
        raise RuntimeError("%s %s: %d %r" % (method, path, response.status, data[:200]))
    return json.loads(data) if data else {}


async def build_heavy_user(server, name, args):
    """The heavy user and what they hold; returns their client (still connected)."""
    heavy = await signed_up(server.url, name)
    friends = [await signed_up(server.url, "%sf%d" % (name, index)) for index in range(args.friends)]
    # A user may ask 20 and be asked 15 (protocol.md, "Limits"): past 20 friends, they ask.
    for index, friend in enumerate(friends):
        if index < 20:
            await befriend(heavy, friend, heavy.name, friend.name)
        else:
            await befriend(friend, heavy, friend.name, heavy.name)
    # Chat: half from the heavy user, half from the friend, spread over the rooms.
    per_room = args.messages // max(args.friends, 1)
    for friend in friends:
        room = chat_room(heavy.name, friend.name)
        text = {"text": "a message of some ordinary length, like most chat messages are"}
        await asyncio.gather(
            pipelined(heavy, [("publish", dict(channel=room, data=text)) for _ in range(per_room // 2)]),
            pipelined(friend, [("publish", dict(channel=room, data=text)) for _ in range(per_room - per_room // 2)]))
    # Photos, each in a point of a memory (10 points per memory).
    hashes = []
    for index in range(args.photos):
        body = (b"\xff\xd8\xff\xe0" + ("%s photo %d " % (name, index)).encode()) * 200
        hashes.append(await asyncio.to_thread(http_request, server.port, "PUT", "/api/v1/photos", heavy.token, body))
    for first in range(0, len(hashes), 10):
        memory = (await heavy.ok("memory_create", title="trip %d" % first, date="2026-07-01"))["memory"]["id"]
        await pipelined(heavy, [("point_add", dict(memory=memory, time=1780000000000 + index, photos=[hashes[index]["hash"]]))
                                for index in range(first, min(first + 10, len(hashes)))])
    await pipelined(heavy, [("place_set", dict(label="place %d" % index, lat=48.0 + index / 100, lon=2.0, radius=100))
                            for index in range(min(args.photos, 20))])
    # Posts, liked and commented on by a friend; and the heavy user's likes and comments on a friend's post.
    posts = []
    for index in range(args.posts):
        posts.append((await heavy.ok("post", text="post %d" % index))["post"]["id"])
    if friends:
        await pipelined(friends[0], [("like", dict(post=post, liked=True)) for post in posts]
                        + [("comment", dict(post=post, text="nice")) for post in posts])
        theirs = (await friends[0].ok("post", text="a friend's post"))["post"]["id"]
        await heavy.ok("like", post=theirs, liked=True)
        await pipelined(heavy, [("comment", dict(post=theirs, text="comment %d" % index)) for index in range(args.posts)])
    # A room others write in too.
    if args.room_messages:
        room = "room:%s-club" % name
        data = {"text": "a room message"}
        others = friends[:2]
        await pipelined(heavy, [("publish", dict(channel=room, data=data)) for _ in range(args.room_messages)])
        for other in others:
            await pipelined(other, [("publish", dict(channel=room, data=data)) for _ in range(args.room_messages // 4)])
    for friend in friends:
        await friend.close()
    return heavy


class Pair:
    def __init__(self, writer, reader):
        self.writer, self.reader = writer, reader
        self.room = chat_room(writer.name, reader.name)
        self.acks = []  # (sent at, seconds to the ack)
        self.failures = 0

    async def publish_once(self):
        sent = time.monotonic()
        try:
            reply = await self.writer.request("publish", channel=self.room, data={"text": "hello there"})
            if reply.get("ok"):
                self.acks.append((sent, time.monotonic() - sent))
            else:
                self.failures += 1
        except ConnectionError:
            self.failures += 1

    async def chat(self, rate, stop):
        interval = 1 / rate
        start = time.monotonic()
        sent = 0
        tasks = []
        while not stop.is_set():
            tasks.append(asyncio.ensure_future(self.publish_once()))
            sent += 1
            delay = start + sent * interval - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except asyncio.TimeoutError:
                    pass
        await asyncio.gather(*tasks)


def stats(latencies):
    if not latencies:
        return dict(count=0, p50=None, p99=None, max=None)
    return dict(count=len(latencies), p50=percentile(latencies, 0.50), p99=percentile(latencies, 0.99),
                max=max(latencies) * 1000)


async def delete(server, heavy, via):
    if via == "op":
        reply = await heavy.request("account_delete", password=PASSWORD)
        if not reply.get("ok"):
            raise RuntimeError("account_delete: %r" % reply)
    else:
        await asyncio.to_thread(http_request, server.port, "DELETE", "/api/v1/users/" + heavy.name, API_KEY)


def core_lines(log):
    """The server's log lines about erasing an account, with their core microseconds."""
    return [line for line in log.splitlines() if "account erased" in line or "erasure chunk" in line or "erasure finished" in line]


async def run(args):
    server = Server(args.bin)
    try:
        print("server on port %d, data %s" % (server.port, server.dir), file=sys.stderr)
        started = time.monotonic()
        heavies = {}
        for via in args.via.split(","):
            heavies[via] = await build_heavy_user(server, "heavy" + via, args)
        pairs = []
        for index in range(args.pairs):
            writer = await signed_up(server.url, "writer%d" % index)
            reader = await signed_up(server.url, "reader%d" % index)
            await befriend(writer, reader, writer.name, reader.name)
            pairs.append(Pair(writer, reader))
        if args.background_messages and pairs:
            per_pair = args.background_messages // len(pairs)
            await asyncio.gather(*(pipelined(pair.writer, [("publish", dict(channel=pair.room, data={"text": "earlier message"}))
                                                          for _ in range(per_pair)]) for pair in pairs))
        print("set up in %.1f s, RSS %.0f MiB" % (time.monotonic() - started, server.rss_mib()), file=sys.stderr)
        results = []
        for via, heavy in heavies.items():
            for pair in pairs:
                pair.acks.clear()
            stop = asyncio.Event()
            chatting = [asyncio.ensure_future(pair.chat(args.rate, stop)) for pair in pairs]
            await asyncio.sleep(1 + args.window)  # 1 s of warm-up, then the baseline window
            load = os.getloadavg()[0]
            cpu_before = server.cpu_seconds()
            log_before = len(server.read_log())
            deleted_at = time.monotonic()
            await delete(server, heavy, via)
            answered = time.monotonic() - deleted_at
            await asyncio.sleep(args.window)
            stop.set()
            await asyncio.gather(*chatting)
            cpu = server.cpu_seconds() - cpu_before
            acks = [ack for pair in pairs for ack in pair.acks]
            baseline = [seconds for sent, seconds in acks if deleted_at - args.window <= sent < deleted_at]
            during = [seconds for sent, seconds in acks if deleted_at <= sent < deleted_at + 1]
            # The erasure's steps end within the first 200 ms; the snapshot after it starts at a
            # 250 ms tick: the two parts of the first second apart.
            early = [seconds for sent, seconds in acks if deleted_at <= sent < deleted_at + 0.2]
            late = [seconds for sent, seconds in acks if deleted_at + 0.2 <= sent < deleted_at + 1]
            await asyncio.sleep(0.5)
            lines = core_lines(server.read_log()[log_before:])
            core = [int(m.group(1)) / 1000 for m in (re.search(r"core_us=([0-9]+)", line) for line in lines) if m]
            results.append(dict(via=via, answered_ms=answered * 1000, baseline=stats(baseline), during=stats(during),
                                early=stats(early), late=stats(late),
                                failures=sum(pair.failures for pair in pairs), core_turns=len(core),
                                core_max_ms=max(core) if core else None, core_total_ms=sum(core) if core else None,
                                server_cpu_s=cpu, load=load, log=lines if len(lines) <= 6 else lines[:3] + ["…"] + lines[-3:]))
        return results
    finally:
        server.stop()


def fmt(value, digits=1):
    return "–" if value is None else ("%.*f" % (digits, value))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=".build/release/huddle")
    parser.add_argument("--friends", type=int, default=10)
    parser.add_argument("--messages", type=int, default=10000)
    parser.add_argument("--photos", type=int, default=100)
    parser.add_argument("--posts", type=int, default=100)
    parser.add_argument("--room-messages", type=int, default=500)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--rate", type=float, default=10)
    parser.add_argument("--window", type=float, default=5)
    parser.add_argument("--via", default="op,api")
    parser.add_argument("--background-messages", type=int, default=0)
    args = parser.parse_args()
    results = asyncio.run(run(args))
    print("| deletion | core turns | longest turn (ms) | core total (ms) | reply (ms) | baseline acks p50 / p99 / max (ms) | "
          "acks in the 1st second p50 / p99 / max (ms) | failed | load |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|")
    for r in results:
        b, d = r["baseline"], r["during"]
        print("| %s | %d | %s | %s | %s | %s / %s / %s (%d) | %s / %s / %s (%d) | %d | %.1f |" % (
            r["via"], r["core_turns"], fmt(r["core_max_ms"], 2), fmt(r["core_total_ms"], 1), fmt(r["answered_ms"]),
            fmt(b["p50"]), fmt(b["p99"]), fmt(b["max"]), b["count"], fmt(d["p50"]), fmt(d["p99"]), fmt(d["max"]), d["count"],
            r["failures"], r["load"]))
    for r in results:
        e, l = r["early"], r["late"]
        print("%s: the first 200 ms p99 / max %s / %s ms (%d), the rest of the first second %s / %s ms (%d)" % (
            r["via"], fmt(e["p99"]), fmt(e["max"]), e["count"], fmt(l["p99"]), fmt(l["max"]), l["count"]))
    for r in results:
        for line in r["log"]:
            print("    %s" % line[:300], file=sys.stderr)


if __name__ == "__main__":
    main()

"""Export archive of a heavy user (issue 16): sets up a user with MESSAGES chat messages (split
over two friends' rooms: a chat room keeps 10,000) and PHOTOS photos of PHOTO_BYTES each, then
takes `GET /api/v1/export` with a fast reader and with a slow one, and reports the archive's
size, the seconds to its first and last byte, the server's CPU seconds during it and its
resident memory (before, peak sampled every 10 ms, after).

    python bench/export_bench.py ws://127.0.0.1:PORT --pid SERVER_PID [--messages 10000]
        [--photos 100] [--photo-bytes 200000] [--slow-rate 2000000] [--repeat 1]

The server must run with --export-interval 0 (two exports of one user) and rate limits high
enough for the setup (bench/export_bench.sh starts it so).
"""
import argparse
import asyncio
import json
import os
import socket
import tarfile
import threading
import time
import hashlib
import io

import websockets

from huddle_session import Session

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_bytes(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class RSSSampler(threading.Thread):
    """The server's peak RSS while a download runs."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.running = pid, rss_bytes(pid), True

    def run(self):
        while self.running:
            self.peak = max(self.peak, rss_bytes(self.pid))
            time.sleep(0.01)


def http(port, method, path, token, body=b""):
    sock = socket.create_connection(("127.0.0.1", port))
    head = "%s %s HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n" % (method, path, token, len(body))
    sock.sendall(head.encode() + body)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), payload


async def pipeline(session, requests):
    """Sends every request, then reads every reply (events skipped); fails on an error."""
    ids = []
    for op, args in requests:
        session.counter += 1
        rid = str(session.counter)
        ids.append(rid)
        await session.ws.send(json.dumps(dict(id=rid, op=op, **args)))
    waiting = set(ids)
    while waiting:
        message = json.loads(await session.ws.recv())
        if message.get("id") in waiting:
            if not message.get("ok"):
                raise RuntimeError("%r" % message)
            waiting.discard(message["id"])


async def setup(url, messages, photos, photo_bytes):
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    name = "heavy%d" % (time.time() * 1000 % 1000000)
    async with websockets.connect(url + "/v1", max_size=None) as ws:
        heavy = Session(ws)
        token = (await heavy.signup(name))["result"]["token"]
        friends = []
        for index in range(2):
            friend_name = "%sf%d" % (name, index)
            async with websockets.connect(url + "/v1") as friend_ws:
                friend = Session(friend_ws)
                await friend.signup(friend_name)
                await heavy.request("friend_request", user=friend_name)
                reply = await friend.request("friend_accept", user=name)
                assert reply.get("ok"), reply
            friends.append(friend_name)
        started = time.time()
        per_room = messages // len(friends)
        for friend_name in friends:
            room = "chat:" + "~".join(sorted([name, friend_name]))
            for first in range(0, per_room, 200):
                batch = [("publish", dict(channel=room, data={"text": "message %d of a heavy user's chat" % n}))
                         for n in range(first, min(per_room, first + 200))]
                await pipeline(heavy, batch)
        print("setup: %d messages in %.1f s" % (per_room * len(friends), time.time() - started))
    started = time.time()
    for index in range(photos):
        body = b"\xff\xd8\xff\xe0" + os.urandom(photo_bytes - 4)
        status, answer = http(port, "PUT", "/api/v1/photos", token, body)
        assert status in (200, 201), (status, answer)
    print("setup: %d photos of %d bytes in %.1f s" % (photos, photo_bytes, time.time() - started))
    return port, token


def export(port, token, pid, slow_rate=None):
    """One export; returns the archive and its figures."""
    sampler = RSSSampler(pid)
    before_rss, before_cpu = rss_bytes(pid), cpu_seconds(pid)
    sampler.start()
    started = time.time()
    sock = socket.create_connection(("127.0.0.1", port))
    if slow_rate:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    sock.sendall(("GET /api/v1/export HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer %s\r\n\r\n" % token).encode())
    data, first_byte = bytearray(), None
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        if first_byte is None:
            first_byte = time.time() - started
        data += chunk
        if slow_rate:
            time.sleep(len(chunk) / slow_rate)
    seconds = time.time() - started
    sock.close()
    sampler.running = False
    sampler.join()
    cpu = cpu_seconds(pid) - before_cpu
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return body, dict(first_byte=first_byte, seconds=seconds, cpu=cpu, rss_before=before_rss,
                      rss_peak=sampler.peak, rss_after=rss_bytes(pid))


def check(body, messages, photos):
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        members = archive.getmembers()
        document = json.load(archive.extractfile("export.json"))
        for member in members[1:]:
            digest = hashlib.sha256(archive.extractfile(member).read()).hexdigest()
            assert member.name.startswith("photos/" + digest), member.name
    assert len(document["messages"]) == messages, len(document["messages"])
    assert len(members) == photos + 1, len(members)
    return members[0].size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--messages", type=int, default=10000)
    parser.add_argument("--photos", type=int, default=100)
    parser.add_argument("--photo-bytes", type=int, default=200000)
    parser.add_argument("--slow-rate", type=int, default=2_000_000, help="bytes/s the slow reader takes")
    parser.add_argument("--repeat", type=int, default=1, help="fast readers after the first two (does the RSS keep growing?)")
    args = parser.parse_args()
    port, token = asyncio.run(setup(args.url, args.messages, args.photos, args.photo_bytes))
    runs = [("fast reader", None), ("slow reader (%d B/s)" % args.slow_rate, args.slow_rate)]
    runs += [("fast reader again", None)] * (args.repeat - 1)
    for label, rate in runs:
        body, figures = export(port, token, args.pid, rate)
        json_size = check(body, args.messages, args.photos)
        mib = 1 << 20
        print("RESULT %s: archive %d bytes (%.1f MiB; export.json %.2f MiB), first byte %.3f s, last byte %.2f s, "
              "server CPU %.2f s, RSS before %.1f MiB, peak %.1f MiB (+%.1f MiB), after %.1f MiB" % (
                  label, len(body), len(body) / mib, json_size / mib, figures["first_byte"], figures["seconds"], figures["cpu"],
                  figures["rss_before"] / mib, figures["rss_peak"] / mib, (figures["rss_peak"] - figures["rss_before"]) / mib,
                  figures["rss_after"] / mib))


if __name__ == "__main__":
    main()

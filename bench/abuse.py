#!/usr/bin/env python3
"""Issue 12's attack classes against a fresh `huddle`, each while an honest pair chats.

For each class: a release server on a free loopback port with its own temporary data directory;
two honest users (friends) `alice`/`bob` subscribe to their `chat:` room; then for --seconds the
attack runs in one process while, in another, alice publishes to the room --probe-rate times a
second and the time until bob's connection receives it is the **chat round trip** (a message
not received within 5 s, a refused publish or a lost connection is a **failure**). A third
thread samples the server's RSS from /proc every 50 ms: before is the last sample before the
attack, growth is the peak while it lasts (and 1 s after) minus before. The server is killed
(SIGKILL) after each class; every attack is bounded in connections, messages and time.

    .build/test-venv/bin/python bench/abuse.py [--bin .build/release/huddle] [--seconds 12] [--only a,c]

Prints a markdown table (the one in BENCHMARKS.md) on stdout and one JSON line per class on
stderr. Targets: chat p99 < 250 ms with no failure, RSS growth < 100 MiB, and in (c) every
honest login (one a second, on a fresh connection) answered within 1 s.
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

P99_TARGET_MS = 250
RSS_TARGET_MIB = 100
LOGIN_TARGET_MS = 1000  # (c): an honest login, one PBKDF2 at the production cost, stays under 1 s
KIB16 = "x" * (16 * 1024 - 64)  # a `data` string just under the 16 KiB publication limit
PASSWORD = "correct-horse-battery"
BIG_REPLY = re.compile(rb'\{"id":\s*"([^"]*)",\s*"ok":\s*(true|false)')


# ---------------------------------------------------------------- the server and its memory

class Server:
    def __init__(self, binary, kdf_iterations, fsync, extra=(), prefix="huddle-abuse."):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.log = open(os.path.join(self.dir, "server.log"), "w+")
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", "0", "--kdf-iterations", str(kdf_iterations),
             "--fsync", fsync, "--data-dir", os.path.join(self.dir, "data"), *extra],
            stdout=self.log, stderr=self.log, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            with open(self.log.name) as f:
                found = re.search(r"url=ws://127\.0\.0\.1:(\d+)", f.read())
            if found:
                self.port = int(found.group(1))
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the server did not start")
            time.sleep(0.05)
        self.url = "ws://127.0.0.1:%d/v1" % self.port

    def rss_mib(self):
        try:
            with open("/proc/%d/status" % self.process.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class RSSSampler(threading.Thread):
    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.samples, self.running = server, [], True

    def run(self):
        while self.running:
            rss = self.server.rss_mib()
            if rss is not None:
                self.samples.append((time.monotonic(), rss))
            time.sleep(0.05)

    def last_before(self, moment):
        before = [rss for t, rss in self.samples if t <= moment]
        return before[-1] if before else None

    def peak(self, start, end):
        inside = [rss for t, rss in self.samples if start <= t <= end]
        return max(inside) if inside else None


# ---------------------------------------------------------------- protocol helpers

class Client:
    """Request/reply over one connection; events go to `on_event`. Replies are matched by id so
    several requests may be in flight."""

    def __init__(self, ws, on_event=None):
        self.ws, self.on_event, self.counter, self.waiting = ws, on_event, 0, {}
        self.reader = asyncio.ensure_future(self._read())

    # The source address of the honest clients (`--honest-address`); None: the system's choice.
    honest_address = None

    @classmethod
    async def open(cls, url, on_event=None, compression="deflate", headers=None, from_address=None):
        extra = {"local_addr": (from_address, 0)} if from_address else {}
        ws = await connect(url, subprotocols=["huddle.v1"], compression=compression,
                           max_size=None, max_queue=None, open_timeout=30,
                           additional_headers=headers, ping_interval=None, **extra)
        return cls(ws, on_event)

    async def _read(self):
        try:
            while True:
                # Bytes, not text, and big replies (history pages) not parsed whole: the
                # attackers must read as fast as loopback allows, not as fast as Python parses.
                raw = await self.ws.recv(decode=False)
                if len(raw) > 65536 and raw.startswith(b'{"id":'):
                    head = BIG_REPLY.match(raw)
                    message = {"id": head.group(1).decode(), "ok": head.group(2) == b"true", "result": {}} if head else json.loads(raw)
                else:
                    message = json.loads(raw)
                future = self.waiting.pop(message.get("id"), None) if "id" in message else None
                if future is not None and not future.done():
                    future.set_result(message)
                elif "event" in message and self.on_event:
                    self.on_event(message)
        except (ConnectionClosed, OSError):
            pass
        finally:
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("closed %s" % self.close_code()))
            self.waiting.clear()

    def close_code(self):
        return self.ws.close_code

    async def send(self, op, **args):
        """Sends a request; returns a future of its reply."""
        self.counter += 1
        rid = str(self.counter)
        future = asyncio.get_running_loop().create_future()
        self.waiting[rid] = future
        await self.ws.send(json.dumps(dict(id=rid, op=op, **args)))
        return future

    async def request(self, op, **args):
        return await (await self.send(op, **args))

    async def ok(self, op, **args):
        reply = await self.request(op, **args)
        if not reply.get("ok"):
            raise RuntimeError("%s: %r" % (op, reply))
        return reply["result"]

    async def close(self):
        await self.ws.close()
        self.reader.cancel()


async def signed_up(url, name, **options):
    client = await Client.open(url, **options)
    result = await client.ok("signup", username=name, email=name + "@example.com", password=PASSWORD)
    client.token = result["token"]
    return client


async def signed_in(url, token, **options):
    """A connection authenticated by the Authorization header (no request of its own)."""
    return await Client.open(url, headers={"Authorization": "Bearer " + token}, **options)


def chat_room(a, b):
    return "chat:%s~%s" % tuple(sorted((a, b)))


async def befriend(a, b, name_a, name_b):
    await a.ok("friend_request", user=name_b)
    await b.ok("friend_accept", user=name_a)


async def paced(rate, seconds, action):
    """Calls `action(i)` rate times a second for seconds, open loop (a late tick is not skipped)."""
    start = time.monotonic()
    i = 0
    while True:
        due = start + i / rate
        if due > start + seconds:
            return
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await action(i)
        i += 1


# ---------------------------------------------------------------- the honest pair

async def probe(url, alice_token, bob_token, seconds, rate, with_logins, results):
    """alice publishes, bob receives: round trip per message; optionally a fresh login per second."""
    sent, latencies, failures = {}, [], {"count": 0, "why": {}}
    login_failures = {}
    received = asyncio.Event()

    def fail(why):
        failures["count"] += 1
        failures["why"][why] = failures["why"].get(why, 0) + 1

    def on_bob_event(event):
        if event.get("event") == "publication" and isinstance(event.get("data"), dict):
            sequence = event["data"].get("probe")
            started = sent.pop(sequence, None)
            if started is not None:
                latencies.append(time.monotonic() - started)
                received.set()

    room = chat_room("alice", "bob")
    honest = Client.honest_address
    alice = await signed_in(url, alice_token, from_address=honest)
    bob = await signed_in(url, bob_token, on_event=on_bob_event, from_address=honest)
    await bob.ok("subscribe", channel=room)
    logins = []
    login_started = []

    async def login_loop():
        while True:
            started = time.monotonic()
            login_started[:] = [started]
            try:
                client = await Client.open(url, from_address=honest)
                reply = await asyncio.wait_for(client.request("login", login="alice", password=PASSWORD), 30)
                await client.close()
                if reply.get("ok"):
                    logins.append(time.monotonic() - started)
                else:
                    login_failures[reply["error"]["code"]] = login_failures.get(reply["error"]["code"], 0) + 1
            except Exception as error:  # a refused or dropped connection is what is measured
                login_failures[type(error).__name__] = login_failures.get(type(error).__name__, 0) + 1
            login_started.clear()
            await asyncio.sleep(max(0, 1 - (time.monotonic() - started)))

    login_task = asyncio.ensure_future(login_loop()) if with_logins else None

    async def publish(i):
        nonlocal alice
        sent[i] = time.monotonic()
        try:
            future = await alice.send("publish", channel=room, data={"probe": i, "text": "hi bob"})
        except ConnectionClosed:
            future = None
        if future is None:
            sent.pop(i, None)
            fail("alice's connection closed")
            alice = await signed_in(url, alice_token, from_address=honest)
            return

        def replied(f):
            if f.cancelled():
                return
            reply = None if f.exception() else f.result()
            if reply is None or not reply.get("ok"):
                if sent.pop(i, None) is not None:
                    fail("publish " + (reply["error"]["code"] if reply else "no reply (%s)" % f.exception()))
        future.add_done_callback(replied)

    async def expire():
        while True:
            await asyncio.sleep(0.25)
            now = time.monotonic()
            for sequence, started in list(sent.items()):
                if now - started > 5:
                    sent.pop(sequence, None)
                    fail("not received in 5 s")
            if bob.reader.done():
                fail("bob's connection closed %s" % bob.close_code())
                bob_new = await signed_in(url, bob_token, on_event=on_bob_event, from_address=honest)
                await bob_new.ok("subscribe", channel=room)
                bob.__dict__.update(bob_new.__dict__)

    expiry = asyncio.ensure_future(expire())
    await paced(rate, seconds, publish)
    deadline = time.monotonic() + 5
    while sent and time.monotonic() < deadline:
        received.clear()
        try:
            await asyncio.wait_for(received.wait(), 0.5)
        except asyncio.TimeoutError:
            pass
    expiry.cancel()
    if login_task:
        login_task.cancel()
        if login_started:  # the one still waiting counts, with how long it has waited so far
            logins.append(time.monotonic() - login_started[0])
            login_failures["still waiting at the end"] = 1
    for _ in list(sent):
        fail("not received in 5 s")
    results.put({"latencies": latencies, "failures": failures, "logins": logins, "login_failures": login_failures})


# ---------------------------------------------------------------- the attacks

class Tally:
    """What the server answered the attackers (ok or error code), and how it closed them."""

    def __init__(self, note):
        self.note = note
        note["replies"] = {}

    def add(self, key, field="replies"):
        counts = self.note.setdefault(field, {})
        counts[key] = counts.get(key, 0) + 1

    def count(self, future):
        if future.cancelled():
            return
        if future.exception():
            return self.add("no reply (%s)" % future.exception())
        reply = future.result()
        self.add("ok" if reply.get("ok") else reply["error"]["code"])


async def persistent(attacker, deadline, tally):
    """Runs `attacker(deadline)` — one connection's loop — again on a new connection whenever
    the server closes it, until the deadline: an attacker reconnects."""
    while time.monotonic() < deadline:
        try:
            await attacker(deadline)
        except (ConnectionClosed, ConnectionError, OSError) as error:
            code = getattr(getattr(error, "rcvd", None), "code", None) or str(error).replace("closed ", "")[:40]
            tally.add(str(code), "attacker connections closed")
            await asyncio.sleep(0.1)


async def drained(futures, tally):
    """Counts every reply of a connection's requests (or why it got none)."""
    for future in futures:
        future.add_done_callback(tally.count)
    await asyncio.gather(*futures, return_exceptions=True)


async def send_paced(client, rate, deadline, request, futures):
    """Sends `request(i)` at `rate` a second until the deadline (open loop)."""
    start = time.monotonic()
    i = 0
    while True:
        due = start + i / rate
        if due > deadline:
            return
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        op, args = request(i)
        futures.append(await client.send(op, **args))
        i += 1


async def attack_fanout(url, deadline, note):
    """(a) One user, 8 connections, each publishing 16 KiB into one room as fast as the rate
    limit lets through (a burst of 100 at once, then 50/s), with an honest fast reader. A refused
    publish (`rate_limited`, `busy`) does not slow an attacker down: it keeps sending at that rate,
    more often than any `retry_after_ms` allows. Every publish answered `ok` must reach the reader
    (`reader lost` counts those that did not) and the reader must not be closed."""
    tally = Tally(note)
    reader_seen = {"publications": 0}

    def on_reader_event(event):
        if event.get("event") == "publication":
            reader_seen["publications"] += 1

    reader = await signed_up(url, "reader", on_event=on_reader_event)
    await reader.ok("subscribe", channel="room:burst")
    mallory = await signed_up(url, "mallory")

    async def burst(deadline):
        client = await signed_in(url, mallory.token)
        futures = [await client.send("publish", channel="room:burst", data=KIB16) for _ in range(100)]
        await send_paced(client, 50, deadline, lambda i: ("publish", dict(channel="room:burst", data=KIB16)), futures)
        await drained(futures, tally)

    await asyncio.gather(*(persistent(burst, deadline, tally) for _ in range(8)))
    # Every accepted publication must reach the reader: wait (bounded) for the last ones in flight.
    wait_until = time.monotonic() + 5
    while reader_seen["publications"] < note["replies"].get("ok", 0) and time.monotonic() < wait_until:
        await asyncio.sleep(0.1)
    note["reader received"] = "%d of %d published" % (reader_seen["publications"], note["replies"].get("ok", 0))
    note["reader closed"] = reader.close_code() or "no"
    note["reader lost"] = note["replies"].get("ok", 0) - reader_seen["publications"]


async def attack_friend_spam(url, deadline, note):
    """(b) Four strangers loop friend_request / friend_cancel at bob as fast as the server
    answers (backing off as `retry_after_ms` says)."""
    tally = Tally(note)
    tokens = [(await signed_up(url, "stranger%d" % i)).token for i in range(4)]

    def stranger(token):
        async def loop(deadline):
            client = await signed_in(url, token)
            while time.monotonic() < deadline:
                for op in ("friend_request", "friend_cancel"):
                    future = await client.send(op, user="bob")
                    future.add_done_callback(tally.count)
                    reply = await future
                    if reply.get("error", {}).get("code") == "rate_limited":
                        await asyncio.sleep(reply["error"].get("retry_after_ms", 100) / 1000)
        return loop

    await asyncio.gather(*(persistent(stranger(t), deadline, tally) for t in tokens))


async def attack_signups(url, deadline, note):
    """(c) 60 anonymous connections from one address, each keeping an invalid signup (a bad
    email) in flight, one after another."""
    tally = Tally(note)

    def intruder(i):
        async def loop(deadline):
            client = await Client.open(url)
            while time.monotonic() < deadline:
                future = await client.send("signup", username="intruder%d" % i, email="not-an-email", password=PASSWORD)
                future.add_done_callback(tally.count)
                reply = await future
                if "retry_after_ms" in reply.get("error", {}):
                    await asyncio.sleep(reply["error"]["retry_after_ms"] / 1000)
            await client.close()
        return loop

    await asyncio.gather(*(persistent(intruder(i), deadline, tally) for i in range(60)))


async def attack_pending_signin(url, deadline, note):
    """(d) 48 compressed connections: each sends an invalid signup (hashed while pending), then
    100 `ping`s padded to 60 KiB (about 100 B each on the wire) that queue behind it; again
    once everything is answered."""
    tally = Tally(note)
    padding = "z" * (60 * 1024)

    async def queuer(deadline):
        client = await Client.open(url, compression="deflate")
        while time.monotonic() < deadline:
            futures = [await client.send("signup", username="queuer", email="not-an-email", password=PASSWORD)]
            for _ in range(100):
                futures.append(await client.send("ping", padding=padding))
            await drained(futures, tally)
            if client.reader.done():
                raise ConnectionError("closed %s" % client.close_code())
        await client.close()

    await asyncio.gather(*(persistent(queuer, deadline, tally) for _ in range(48)))


async def attack_uploads(url, deadline, note, port):
    """(e) 24 photo uploads of 10 MiB held one byte short (raw HTTP); one that the server ends
    is started again until time is up."""
    mallory = await signed_up(url, "mallory")
    size = 10 * 1024 * 1024
    body = b"\xff" * (size - 1)
    tally = Tally(note)

    async def upload(deadline):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(("PUT /api/v1/photos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                          "Content-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % (mallory.token, size)).encode())
            writer.write(body)
            await writer.drain()
            status = await asyncio.wait_for(reader.readline(), max(0.1, deadline - time.monotonic()))
            tally.add(status.decode(errors="replace").strip() or "closed", "uploads")
        except asyncio.TimeoutError:
            tally.add("held until the end", "uploads")
        finally:
            writer.close()

    await asyncio.gather(*(persistent(upload, deadline, tally) for _ in range(24)))
    del note["replies"]


async def attack_history(url, deadline, note):
    """(f) A room holding 100 × 16 KiB; 8 connections of one user each ask `history` limit 100
    at the permitted rate (a burst of 100, then 50/s), reading every reply."""
    tally = Tally(note)
    mallory = await signed_up(url, "mallory", compression=None)
    for _ in range(4):
        await asyncio.gather(*[await mallory.send("publish", channel="room:heavy", data=KIB16) for _ in range(25)])

    async def reader(deadline):
        client = await signed_in(url, mallory.token, compression=None)
        futures = [await client.send("history", channel="room:heavy", limit=100) for _ in range(100)]
        await send_paced(client, 50, deadline, lambda i: ("history", dict(channel="room:heavy", limit=100)), futures)
        await drained(futures, tally)
        if client.reader.done():
            raise ConnectionError("closed %s" % client.close_code())

    await asyncio.gather(*(persistent(reader, deadline, tally) for _ in range(8)))


async def attack_rooms(url, deadline, note):
    """(g) 8 connections of one user publish 16 KiB, each time to a room never used before, at
    the permitted rate (50/s each)."""
    tally = Tally(note)
    mallory = await signed_up(url, "mallory")
    rooms = iter(range(10 ** 9))

    async def publisher(deadline):
        client = await signed_in(url, mallory.token)
        futures = []
        await send_paced(client, 50, deadline, lambda i: ("publish", dict(channel="room:r%d" % next(rooms), data=KIB16)), futures)
        await drained(futures, tally)

    await asyncio.gather(*(persistent(publisher, deadline, tally) for _ in range(8)))


ATTACKS = {
    "a": ("fan-out burst: 8 conns × 100 × 16 KiB into one room, honest fast reader", attack_fanout),
    "b": ("4 strangers loop friend_request/friend_cancel at one user", attack_friend_spam),
    "c": ("60 conns from one address, an invalid signup each in flight (+ honest login/s)", attack_signups),
    "d": ("48 compressed conns, 100 × 60 KiB requests behind a pending sign-in", attack_pending_signin),
    "e": ("24 photo uploads of 10 MiB held one byte short", attack_uploads),
    "f": ("8 conns: `history` of 100 × 16 KiB at the permitted rate", attack_history),
    "g": ("8 conns: 16 KiB to a new `room:` each time", attack_rooms),
}


def run_attack(name, url, port, seconds, results):
    note = {}

    async def main():
        deadline = time.monotonic() + seconds
        attack = ATTACKS[name][1]
        if name == "e":
            await attack(url, deadline, note, port)
        else:
            await attack(url, deadline, note)

    try:
        asyncio.run(asyncio.wait_for(main(), seconds + 60))
    except Exception as error:  # reported in the table's notes, the run goes on
        note["attack error"] = "%s: %s" % (type(error).__name__, error)
    results.put(note)


def run_probe(url, alice_token, bob_token, seconds, rate, with_logins, results, honest_address):
    Client.honest_address = honest_address
    try:
        asyncio.run(probe(url, alice_token, bob_token, seconds, rate, with_logins, results))
    except Exception as error:
        results.put({"latencies": [], "failures": {"count": 1, "why": {"probe error: %s" % error: 1}}, "logins": []})

# ---------------------------------------------------------------- one class, and the table

def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else None


async def inbox_after_spam(url, bob_token):
    """Whether bob's own friend_accepted notice (his inbox's offset 2, from the set-up) is
    still kept after the strangers' notices."""
    bob = await signed_in(url, bob_token)
    page = await bob.ok("history", channel="inbox:bob", before=3, limit=2)
    await bob.close()
    kept = any(p.get("type") == "friend_accepted" for p in page["publications"])
    return "%d notices, the friend_accepted one %s" % (page["offset"], "kept" if kept else "**evicted**")


def run_class(name, args):
    # (c) and (d) are about password hashing: they run at the production cost.
    kdf = 600000 if name in ("c", "d") else 1000
    server = Server(args.bin, kdf, args.fsync)
    sampler = RSSSampler(server)
    sampler.start()
    try:
        async def setup():
            alice = await signed_up(server.url, "alice")
            bob = await signed_up(server.url, "bob")
            await befriend(alice, bob, "alice", "bob")
            tokens = alice.token, bob.token
            await alice.close()
            await bob.close()
            return tokens
        alice_token, bob_token = asyncio.run(setup())
        time.sleep(1)  # RSS settles after set-up
        spawn = multiprocessing.get_context("spawn")
        results = spawn.Queue()
        start = time.monotonic()
        honest = spawn.Process(target=run_probe, args=(
            server.url, alice_token, bob_token, args.seconds, args.probe_rate, name == "c", results, args.honest_address))
        attacker = spawn.Process(target=run_attack, args=(name, server.url, server.port, args.seconds, results))
        # Daemons: should a result never come, leaving ends them with the server.
        honest.daemon = attacker.daemon = True
        honest.start()
        attacker.start()
        gathered = [results.get(timeout=args.seconds + 120) for _ in range(2)]
        honest.join(10)
        attacker.join(10)
        for process in (honest, attacker):
            if process.is_alive():
                process.kill()
        end = time.monotonic()
        time.sleep(1)
        probe_result = next(r for r in gathered if "latencies" in r)
        note = next(r for r in gathered if "latencies" not in r)
        if name == "b" and server.process.poll() is None:
            note["bob's inbox"] = asyncio.run(inbox_after_spam(server.url, bob_token))
        before = sampler.last_before(start)
        peak = sampler.peak(start, time.monotonic())
        alive = server.process.poll() is None
    finally:
        sampler.running = False
        server.stop()
    latencies = probe_result["latencies"]
    row = {
        "class": name, "what": ATTACKS[name][0], "seconds": round(end - start, 1),
        "chat_count": len(latencies), "chat_failures": probe_result["failures"]["count"],
        "chat_failure_reasons": probe_result["failures"]["why"],
        "chat_p50_ms": percentile(latencies, 0.5), "chat_p99_ms": percentile(latencies, 0.99),
        "rss_before_mib": before, "rss_peak_mib": peak,
        "rss_growth_mib": (peak - before) if before is not None and peak is not None else None,
        "server_alive_after": alive, "attack": note, "load_average": os.getloadavg()[0],
    }
    if probe_result.get("logins"):
        row["login_count"] = len(probe_result["logins"])
        row["login_p50_ms"] = percentile(probe_result["logins"], 0.5)
        row["login_max_ms"] = max(probe_result["logins"]) * 1000
        row["login_failures"] = probe_result["login_failures"]
    row["pass"] = (row["chat_p99_ms"] is not None and row["chat_p99_ms"] < P99_TARGET_MS
                   and row["chat_failures"] == 0 and alive
                   and row["rss_growth_mib"] is not None and row["rss_growth_mib"] < RSS_TARGET_MIB
                   and row["attack"].get("reader lost", 0) == 0 and row["attack"].get("reader closed", "no") == "no"
                   and ("login_max_ms" not in row or (row["login_max_ms"] < LOGIN_TARGET_MS and not row["login_failures"])))
    return row


def fmt(value, digits=0):
    return "—" if value is None else ("{:,.%df}" % digits).format(value)


def table(rows):
    lines = ["| class | attack | chat p50 / p99 (ms) | chat n / failed | RSS before → peak (MiB) | growth (MiB) | verdict | notes |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        notes = []
        if "login_p50_ms" in row:
            notes.append("honest logins: %d, p50 %s ms, max %s ms%s" % (
                row["login_count"], fmt(row["login_p50_ms"]), fmt(row["login_max_ms"]),
                "".join(" (%s ×%d)" % kv for kv in row["login_failures"].items())))
        if row["chat_failure_reasons"]:
            notes.append("chat failures: " + ", ".join("%s ×%d" % kv for kv in row["chat_failure_reasons"].items()))
        for key, value in row["attack"].items():
            if isinstance(value, dict):
                value = ", ".join("%s ×%d" % kv for kv in sorted(value.items(), key=lambda kv: -kv[1]))
            notes.append("%s: %s" % (key, value))
        if not row["server_alive_after"]:
            notes.append("**server died**")
        notes.append("machine load %.1f" % row["load_average"])
        lines.append("| (%s) | %s | %s / %s | %d / %d | %s → %s | %s | %s | %s |" % (
            row["class"], row["what"], fmt(row["chat_p50_ms"], 1), fmt(row["chat_p99_ms"], 1),
            row["chat_count"], row["chat_failures"], fmt(row["rss_before_mib"]), fmt(row["rss_peak_mib"]),
            fmt(row["rss_growth_mib"]), "PASS" if row["pass"] else "**FAIL**", "; ".join(notes).replace("|", "/")))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=".build/release/huddle")
    parser.add_argument("--seconds", type=float, default=12)
    parser.add_argument("--fsync", default="always", help="the server's --fsync (its default: always)")
    parser.add_argument("--probe-rate", type=float, default=10, help="honest chat messages per second")
    parser.add_argument("--only", default=",".join(ATTACKS), help="classes to run, e.g. a,c")
    parser.add_argument("--honest-address", default=None,
                        help="source address of the honest pair and logins, e.g. 127.0.0.2 (another address than "
                             "the attackers' on loopback); default: the attackers' own (127.0.0.1)")
    args = parser.parse_args()
    rows = []
    for name in args.only.split(","):
        row = run_class(name.strip(), args)
        print(json.dumps(row), file=os.sys.stderr, flush=True)
        rows.append(row)
    print(table(rows))


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()

"""Crash-test writers and checker for Huddle's durability (Issue 4).

`write`: W concurrent connections, writer i publishing numbered messages n = 1, 2, 3, … to
rooms of its own (`room:PREFIX-wI-bB`, B = n // BLOCK, so no room outgrows the 1000 publications
a room keeps). The server is killed and restarted under the writers: each one reads the current
URL from --url-file before every (re)connect, and an empty file means "down, wait". The file may
list several URLs, one a line (the nodes of a cluster): writer i starts on line i and moves to
the next one each time its connection fails. Each writer keeps a journal (STATE/wI.log), flushed
per line:

    token T             the session token, once signup or login succeeded
    sent N              written before message N goes on the wire
    ack N OFFSET EPOCH  its ok reply arrived
    nack N CODE         a definite refusal (rate_limited, unavailable): not applied, N is resent

A message whose connection died between `sent` and its reply is "in doubt": it may or may not
be stored. Numbers are never reused for another payload, so a journal restarted by a new run
continues where the last one stopped. With --client-id every publish carries the client_id
`wI-N`, and a message in doubt is sent again, same number, same id, on the next connection:
the server stores it once whatever happened to the first attempt, so it ends acknowledged.
The run ends when --stop-file exists; it prints one JSON line of counts.

`check`: reads every room's whole history (paging) and compares it with the journals: every
acknowledged message present exactly once at the offset its ack named, offsets contiguous 1..N,
nothing present that was not sent, in-doubt messages at most once, every payload exactly as
sent, per-room order = send order. Prints one JSON line; exit 0 when everything holds.
"""
import argparse
import asyncio
import json
import os
import random
import sys
import time

from websockets.asyncio.client import connect

BLOCK = 500


def payload(writer: int, n: int) -> dict:
    """The exact data of message n of writer i: sizes vary (0–3000 bytes of padding) so records
    straddle page boundaries, and it has non-ASCII text so bytes, not characters, are checked."""
    size = (n * 7919 + writer * 104729) % 3001
    pad = ("%d:%d;" % (writer, n) * (size // 4 + 1))[:size]
    return {"w": writer, "n": n, "text": "héllo wörld ✓ %d" % n, "pad": pad}


def room(prefix: str, writer: int, n: int) -> str:
    return "room:%s-w%d-b%d" % (prefix, writer, n // BLOCK)


def username(prefix: str, writer: int) -> str:
    return ("%sw%d" % (prefix, writer)).lower()


class Journal:
    def __init__(self, path: str):
        self.path = path
        self.token = None
        self.sent = set()
        self.acked = {}
        self.next = 1
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if not parts:
                        continue
                    if parts[0] == "token" and len(parts) == 2:
                        self.token = parts[1]
                    elif parts[0] == "sent" and len(parts) == 2:
                        self.sent.add(int(parts[1]))
                    elif parts[0] == "ack" and len(parts) == 4:
                        self.acked[int(parts[1])] = (int(parts[2]), parts[3])
        if self.sent:
            self.next = max(self.sent) + 1
        self.file = open(path, "a")

    def write(self, line: str):
        self.file.write(line + "\n")
        self.file.flush()


class Stats:
    def __init__(self):
        self.acked = 0
        self.in_doubt = 0
        self.refused = {}
        self.connects = 0
        self.connect_failures = 0
        self.errors = {}


async def request(ws, counter, op, **args):
    counter[0] += 1
    rid = str(counter[0])
    await ws.send(json.dumps(dict(id=rid, op=op, **args)))
    while True:
        message = json.loads(await ws.recv())
        if message.get("id") == rid:
            return message


async def read_request(ws, counter, op, **args):
    """A read (or login) for the checker: over the server's rate limit, wait and ask again."""
    while True:
        reply = await request(ws, counter, op, **args)
        error = reply.get("error") or {}
        if error.get("code") != "rate_limited":
            return reply
        await asyncio.sleep(error.get("retry_after_ms", 50) / 1000)


async def authenticate(ws, counter, journal, prefix, writer):
    name = username(prefix, writer)
    password = "pw-%s-secret" % name
    if journal.token:
        reply = await request(ws, counter, "auth", token=journal.token)
        if reply.get("ok"):
            return
        journal.token = None
    reply = await request(ws, counter, "signup", username=name, email=name + "@example.com", password=password)
    if not reply.get("ok"):
        if reply["error"]["code"] != "username_taken":
            raise RuntimeError("signup: %r" % reply)
        reply = await request(ws, counter, "login", login=name, password=password)
        if not reply.get("ok"):
            raise RuntimeError("login: %r" % reply)
    journal.token = reply["result"]["token"]
    journal.write("token " + journal.token)


async def writer_task(i, args, journal, stats):
    attempt = 0
    while not os.path.exists(args.stop_file):
        try:
            with open(args.url_file) as f:
                url = f.read().strip()
        except FileNotFoundError:
            url = ""
        urls = url.split()
        if not urls:
            await asyncio.sleep(0.01)
            continue
        url = urls[(i + attempt) % len(urls)]
        in_flight = None
        try:
            # Half the writers negotiate permessage-deflate, half do not.
            async with connect(url + "/v1", subprotocols=["huddle.v1"], open_timeout=2, close_timeout=0.2,
                               compression=None if i % 2 else "deflate") as ws:
                stats.connects += 1
                counter = [0]
                await authenticate(ws, counter, journal, args.prefix, i)
                while not os.path.exists(args.stop_file):
                    n = journal.next
                    journal.write("sent %d" % n)
                    journal.sent.add(n)
                    in_flight = n
                    publish = dict(channel=room(args.prefix, i, n), data=payload(i, n))
                    if args.client_id:
                        publish["client_id"] = "w%d-%d" % (i, n)
                    reply = await asyncio.wait_for(request(ws, counter, "publish", **publish), 5)
                    in_flight = None
                    if reply.get("ok"):
                        result = reply["result"]
                        journal.write("ack %d %d %s" % (n, result["offset"], result["epoch"]))
                        journal.acked[n] = (result["offset"], result["epoch"])
                        journal.next = n + 1
                        stats.acked += 1
                        continue
                    code = reply["error"]["code"]
                    stats.refused[code] = stats.refused.get(code, 0) + 1
                    if code in ("rate_limited", "unavailable"):
                        # Definitely not applied: the same number (same payload) goes again.
                        journal.write("nack %d %s" % (n, code))
                        await asyncio.sleep(reply["error"].get("retry_after_ms", 50) / 1000)
                        continue
                    raise RuntimeError("publish %d: %r" % (n, reply))
        except RuntimeError as error:
            print("writer %d: %s" % (i, error), file=sys.stderr)
            stats.errors["RuntimeError"] = stats.errors.get("RuntimeError", 0) + 1
            await asyncio.sleep(0.05)
        except Exception as error:  # noqa: BLE001 - the server was killed under us
            name = type(error).__name__
            stats.errors[name] = stats.errors.get(name, 0) + 1
        attempt += 1
        if in_flight is not None:
            stats.in_doubt += 1
            # Sent without a reply: in doubt. Without a client_id its number is never used
            # again; with one, the same message goes again and is stored at most once.
            journal.next = in_flight if args.client_id else in_flight + 1
        await asyncio.sleep(0.005 + random.random() * 0.01)


async def run_writers(args) -> int:
    os.makedirs(args.state_dir, exist_ok=True)
    journals = [Journal(os.path.join(args.state_dir, "w%d.log" % i)) for i in range(args.writers)]
    stats = Stats()
    started = time.monotonic()
    await asyncio.gather(*[writer_task(i, args, journals[i], stats) for i in range(args.writers)])
    print(json.dumps({"ok": True, "acked": stats.acked, "in_doubt": stats.in_doubt, "refused": stats.refused,
                      "connects": stats.connects, "errors": stats.errors, "seconds": round(time.monotonic() - started, 2)}))
    return 0


async def check(args) -> int:
    problems = []
    totals = {"acked": 0, "acked_missing": 0, "in_doubt_present": 0, "in_doubt_absent": 0, "rooms": 0, "publications": 0}
    for i in range(args.writers):
        # One connection per writer, authenticated as that writer: its account and its
        # acknowledged session must have survived too.
        async with connect(args.url + "/v1", subprotocols=["huddle.v1"], max_size=None) as ws:
            counter = [0]
            journal = Journal(os.path.join(args.state_dir, "w%d.log" % i))
            journal.file.close()
            name = username(args.prefix, i)
            reply = None
            if journal.token:
                reply = await read_request(ws, counter, "auth", token=journal.token)
                if not reply.get("ok"):
                    problems.append("writer %d: its acknowledged session token was refused: %r" % (i, reply))
                    reply = None
            if reply is None:
                reply = await read_request(ws, counter, "login", login=name, password="pw-%s-secret" % name)
            if not reply.get("ok"):
                problems.append("writer %d: cannot authenticate: %r" % (i, reply))
                continue
            in_doubt = journal.sent - set(journal.acked)
            totals["acked"] += len(journal.acked)
            rooms = sorted({room(args.prefix, i, n) for n in journal.sent})
            for channel in rooms:
                totals["rooms"] += 1
                pages = []
                before = None
                latest = None
                while True:
                    query = {"channel": channel, "limit": 100}
                    if before is not None:
                        query["before"] = before
                    reply = await read_request(ws, counter, "history", **query)
                    if not reply.get("ok"):
                        problems.append("%s: history failed: %r" % (channel, reply))
                        break
                    result = reply["result"]
                    if latest is None:
                        latest = result["offset"]
                        epoch = result["epoch"]
                    pages.append(result["publications"])
                    before = result["next_before"]
                    if before is None:
                        break
                publications = [p for page in pages for p in page][::-1]
                totals["publications"] += len(publications)
                offsets = [p["offset"] for p in publications]
                if offsets != list(range(1, len(offsets) + 1)) or (latest or 0) != len(offsets):
                    problems.append("%s: offsets not contiguous 1..N: latest %r, got %s" % (channel, latest, offsets[:20]))
                seen = set()
                last_n = 0
                for p in publications:
                    data = p.get("data")
                    n = data.get("n") if isinstance(data, dict) else None
                    if not isinstance(n, int) or n not in journal.sent:
                        problems.append("%s offset %d: never sent: %r" % (channel, p["offset"], str(data)[:200]))
                        continue
                    if n in seen:
                        problems.append("%s: message %d twice" % (channel, n))
                    seen.add(n)
                    if n <= last_n:
                        problems.append("%s: message %d after %d" % (channel, n, last_n))
                    last_n = n
                    if data != payload(i, n):
                        problems.append("%s: message %d garbled: %r" % (channel, n, str(data)[:200]))
                    if p.get("from") != name or p.get("type") != "message":
                        problems.append("%s: message %d from %r type %r" % (channel, n, p.get("from"), p.get("type")))
                    if n in journal.acked:
                        offset, ack_epoch = journal.acked[n]
                        if offset != p["offset"] or ack_epoch != epoch:
                            problems.append("%s: message %d acked at %s/%d, stored at %s/%d" % (
                                channel, n, ack_epoch, offset, epoch, p["offset"]))
                for n in journal.sent:
                    if room(args.prefix, i, n) != channel:
                        continue
                    if n in journal.acked and n not in seen:
                        problems.append("%s: acknowledged message %d is missing" % (channel, n))
                        totals["acked_missing"] += 1
                    elif n in in_doubt:
                        totals["in_doubt_present" if n in seen else "in_doubt_absent"] += 1
    if args.all_problems:
        for problem in problems:
            print(problem, file=sys.stderr)
    result = {"ok": not problems, **totals, "problems": problems[:50], "problem_count": len(problems)}
    print(json.dumps(result))
    return 0 if not problems else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("--url-file", required=True)
    w.add_argument("--stop-file", required=True)
    w.add_argument("--state-dir", required=True)
    w.add_argument("--prefix", required=True)
    w.add_argument("--writers", type=int, default=4)
    w.add_argument("--client-id", action="store_true", help="publish with client_id; resend what is in doubt")
    c = sub.add_parser("check")
    c.add_argument("--url", required=True)
    c.add_argument("--state-dir", required=True)
    c.add_argument("--prefix", required=True)
    c.add_argument("--writers", type=int, default=4)
    c.add_argument("--all-problems", action="store_true", help="every problem to stderr, not only the first 50")
    args = parser.parse_args()
    return asyncio.run(run_writers(args) if args.command == "write" else check(args))


if __name__ == "__main__":
    sys.exit(main())

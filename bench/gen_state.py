#!/usr/bin/env python3
"""Writes a Huddle data directory holding a large state, as the log a real server would have
written: USERS `signUp` commands, then MESSAGES `publish` commands spread over CHANNELS `chat:`
channels (pairs of users). The server replays it at start-up; its shutdown snapshot is then the
snapshot of that state (bench/snapshot_bench.sh).

Formats (Sources/HuddleStore/README.md): segment = "HUDDLWAL", u32 version 1, u64 first sequence,
CRC-32 of those 20 bytes; record = u32 length, u32 CRC-32 of (sequence + payload), u64 sequence,
payload. Payloads are `CoreCommand` records as the server writes them (README "Records": the
format byte 1, then JSON with sorted keys: {"signUp":{...}}, {"publish":{...}}), copied from a
real server's log; --format 0 leaves the byte out, as releases before the format byte wrote them.

    python3 bench/gen_state.py DIR [--users 100000] [--messages 1000000] [--channels 50000] [--format 1]
"""
import argparse
import json
import os
import random
import struct
import sys
import time
import zlib

SEGMENT_LIMIT = 64 * 1024 * 1024


class LogWriter:
    def __init__(self, directory):
        self.directory = directory
        self.sequence = 0
        self.file = None
        self.size = 0
        self.buffer = []
        self.buffered = 0

    def _open(self, first):
        self._close()
        header = b"HUDDLWAL" + struct.pack("<IQ", 1, first)
        header += struct.pack("<I", zlib.crc32(header))
        self.file = open(os.path.join(self.directory, "wal-%016x.log" % first), "wb")
        self.file.write(header)
        self.size = len(header)

    def _flush(self):
        if self.buffer:
            self.file.write(b"".join(self.buffer))
            self.buffer = []
            self.buffered = 0

    def _close(self):
        if self.file:
            self._flush()
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
            self.file = None

    def append(self, payload: bytes):
        self.sequence += 1
        record_size = 16 + len(payload)
        if self.file is None or self.size + record_size > SEGMENT_LIMIT:
            self._open(self.sequence)
        sequence = struct.pack("<Q", self.sequence)
        crc = zlib.crc32(payload, zlib.crc32(sequence))
        self.buffer.append(struct.pack("<II", len(payload), crc) + sequence + payload)
        self.buffered += record_size
        self.size += record_size
        if self.buffered > 1 << 20:
            self._flush()

    def close(self):
        self._close()


def ints(raw: bytes) -> str:
    """Bytes as the log writes them: an array of numbers."""
    return "[" + ",".join(map(str, raw)) + "]"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--channels", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--format", type=int, choices=[0, 1], default=1)
    args = parser.parse_args()
    if os.path.exists(args.directory) and os.listdir(args.directory):
        print("refusing: %s is not empty" % args.directory, file=sys.stderr)
        return 1
    os.makedirs(args.directory, mode=0o700, exist_ok=True)
    rng = random.Random(args.seed)
    log = LogWriter(args.directory)
    prefix = bytes([args.format]) if args.format > 0 else b""
    started = time.monotonic()
    now = int(time.time() * 1000)
    base = now - 3600_000  # an hour ago: inside every retention window
    names = ["u%06d" % i for i in range(args.users)]
    expires = now + 30 * 86400_000
    for i, name in enumerate(names):
        # Keys in sorted order, as the server writes them.
        command = ('{"signUp":{"credentials":{"hash":%s,"iterations":1000,"salt":%s},"email":"%s@example.com",'
                   '"session":{"expiresAt":%d,"tokenHash":%s},"time":%d,"username":"%s"}}') % (
            ints(rng.randbytes(32)), ints(rng.randbytes(16)), name, expires, ints(rng.randbytes(32)), base + i // 100, name)
        log.append(prefix + command.encode())
    channels = []
    seen = set()
    k = 0
    while len(channels) < args.channels:
        a = names[k % args.users]
        b = names[(k * 7919 + 1 + k // args.users) % args.users]
        k += 1
        a, b = min(a, b), max(a, b)
        if a == b or (a, b) in seen:
            continue
        seen.add((a, b))
        channels.append((a, b))
    words = "hey so are we still on for tonight I think the place on fifth closes at ten lol ok see you there".split()
    # The data string of a publication (the client's JSON, as the server stored it), escaped
    # once more as a JSON string inside the command; only the client id varies.
    templates = []
    for t in range(997):
        text = " ".join(rng.choice(words) for _ in range(3 + t % 17))
        inner = '{"text":"%s","client_id":"@ID@"}' % text
        templates.append(json.dumps(inner).replace("%", "%%").replace("@ID@", "%08x"))
    for m in range(args.messages):
        a, b = channels[m % args.channels]
        sender = a if m % 2 else b
        data = templates[m % len(templates)] % m
        command = '{"publish":{"channel":"chat:%s~%s","data":%s,"from":"%s","time":%d,"type":"message"}}' % (
            a, b, data, sender, base + 1000 + m // 300)
        log.append(prefix + command.encode())
    log.close()
    size = sum(os.path.getsize(os.path.join(args.directory, f)) for f in os.listdir(args.directory))
    print(json.dumps({"records": log.sequence, "users": args.users, "messages": args.messages,
                      "channels": args.channels, "log_bytes": size, "seconds": round(time.monotonic() - started, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

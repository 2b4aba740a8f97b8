#!/usr/bin/env python3
"""SIGTERM restarts under writing load on one data directory (issue 12, acceptance 3).

    bench/drain_restarts.py [--binary .build/release/huddle] [--restarts 200] [--writers 4]
                            [--window 32] [--hogs 0]

Each round starts the server on the same data directory, signs up WRITERS users, and has each
pipeline `publish` requests (WINDOW in flight, a unique `client_id` each) to a room of its own.
After a random 100–400 ms of load the server gets SIGTERM while the writers keep sending; a
writer stops at its connection's close frame (or end of stream). The next round first reads
every room of the previous round back with `history` and classifies each request sent:

- answered:   a reply arrived before the close frame (it must then be stored if `ok`);
- unread:     no reply and nothing stored: the server never read it, a resend is safe;
- UNANSWERED: stored but no reply: read and applied, its reply lost (the drain's failure).

It also times each exit (SIGTERM to the process gone; over EXIT_LIMIT seconds counts as slow,
over 20 s as a hang: then the threads' kernel stacks are printed and the server is killed).
HOGS busy-loop processes keep the cores busy meanwhile. Stdlib only: a minimal WebSocket client
(masked text frames, no compression) is below.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HANG_SECONDS = 20.0


class WebSocket:
    """A blocking client connection to /v1: send text frames, read frames."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_lock = threading.Lock()
        self.buffer = b""
        self.sock.sendall(
            ("GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
             "Sec-WebSocket-Protocol: huddle.v1\r\n\r\n" % port).encode())
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("connection closed during the upgrade")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError("upgrade refused: %r" % head[:80])

    def send_frame(self, opcode, payload):
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self.send_lock:
            self.sock.sendall(header + mask + masked)

    def send_json(self, message):
        self.send_frame(0x1, json.dumps(message).encode())

    def _read_exactly(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def read_frame(self):
        """(opcode, payload); raises EOFError at the end of the stream."""
        first, second = self._read_exactly(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read_exactly(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read_exactly(8))[0]
        return first & 0x0F, self._read_exactly(length)

    def request(self, message):
        """Sends a request and returns its reply (events are skipped)."""
        self.send_json(message)
        while True:
            opcode, payload = self.read_frame()
            if opcode == 0x1:
                reply = json.loads(payload)
                if reply.get("id") == message["id"]:
                    return reply
            elif opcode == 0x8:
                raise RuntimeError("closed while waiting for %s" % message["op"])

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Writer:
    """One connection pipelining publishes until the server closes it."""

    def __init__(self, port, name, room, window, cap):
        self.ws = WebSocket(port)
        reply = self.ws.request(dict(id="s", op="signup", username=name, email=name + "@example.com",
                                     password="pw-%s-secret" % name))
        if not reply.get("ok"):
            raise RuntimeError("signup: %r" % reply)
        self.room = room
        self.window = window
        self.cap = cap
        self.sent = []            # client ids, in order
        self.replies = {}         # client id -> ok
        self.close_code = None
        self.closed_at = None     # monotonic time of the close frame or end of stream
        self.reply_after_close = 0
        self.done = threading.Event()
        self.slots = threading.Semaphore(window)

    def start(self):
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._send, daemon=True).start()

    def _send(self):
        try:
            while not self.done.is_set() and len(self.sent) < self.cap:
                if not self.slots.acquire(timeout=0.05):
                    continue
                client_id = "%s-%d" % (self.room, len(self.sent))
                self.sent.append(client_id)
                self.ws.send_json(dict(id=client_id, op="publish", channel=self.room, data={"n": len(self.sent)},
                                       client_id=client_id))
        except OSError:
            pass  # the server closed the connection

    def _read(self):
        try:
            while True:
                opcode, payload = self.ws.read_frame()
                if opcode == 0x1:
                    reply = json.loads(payload)
                    if "id" in reply:
                        if self.close_code is not None:
                            self.reply_after_close += 1
                        self.replies[reply["id"]] = reply.get("ok", False)
                        self.slots.release()
                elif opcode == 0x8:
                    self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                    try:
                        self.ws.send_frame(0x8, payload[:2])
                    except OSError:
                        pass
                    break
        except (EOFError, OSError):
            pass
        finally:
            self.closed_at = time.monotonic()
            self.done.set()
            self.ws.close()


def wait_for_port(log_path, process, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(log_path, errors="replace") as log:
            match = re.search(r"url=ws://127\.0\.0\.1:(\d+)", log.read())
        if match:
            return int(match.group(1))
        if process.poll() is not None:
            raise RuntimeError("server exited with %d before listening:\n%s" % (process.returncode, open(log_path).read()))
        time.sleep(0.01)
    raise RuntimeError("server did not listen within %d s" % timeout)


def stored_client_ids(ws, room):
    """Every client_id stored in `room`, paging through history."""
    ids = set()
    before = None
    while True:
        request = dict(id="h", op="history", channel=room, limit=100)
        if before is not None:
            request["before"] = before
        reply = ws.request(request)
        if not reply.get("ok"):
            raise RuntimeError("history: %r" % reply)
        for publication in reply["result"]["publications"]:
            if "client_id" in publication:
                ids.add(publication["client_id"])
        before = reply["result"].get("next_before")
        if before is None:
            return ids


def kernel_stacks(pid):
    lines = []
    for task in sorted(os.listdir("/proc/%d/task" % pid)):
        try:
            name = open("/proc/%d/task/%s/comm" % (pid, task)).read().strip()
            wchan = open("/proc/%d/task/%s/wchan" % (pid, task)).read().strip()
            state = open("/proc/%d/task/%s/stat" % (pid, task)).read().split(") ")[1].split()[0]
            lines.append("  %s %s state=%s wchan=%s" % (task, name, state, wchan))
        except OSError:
            pass
    return "\n".join(lines)


def stop_on_signal(number, frame):
    raise SystemExit("stopped by signal %d" % number)  # runs the cleanup: hogs and server killed


def main():
    signal.signal(signal.SIGTERM, stop_on_signal)
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/huddle")
    parser.add_argument("--restarts", type=int, default=200)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--hogs", type=int, default=0, help="busy-loop processes to run meanwhile")
    parser.add_argument("--exit-limit", type=float, default=3.0)
    parser.add_argument("--keep", action="store_true", help="keep the data directory and logs")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="huddle-drain-")
    data = os.path.join(work, "data")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    # A room holds 1000 publications: a writer stops short of that so history shows them all.
    cap = 900
    totals = dict(sent=0, answered=0, unread=0, unanswered=0, lost=0, not_1001=0, reply_after_close=0)
    exit_times = []
    close_times = []              # SIGTERM to the last writer's close frame
    snapshot_ms = []              # the shutdown snapshot's own time, from the server's log
    snapshots_abandoned = 0       # shutdown snapshots given up when the exit budget ran out
    closed_per_loop = {}
    slow = hangs = bad_status = 0
    previous = []
    server = None
    try:
        for round_number in range(args.restarts + 1):
            log_path = os.path.join(work, "server-%d.log" % round_number)
            with open(log_path, "w") as log:
                server = subprocess.Popen(
                    [args.binary, "--host", "127.0.0.1", "--port", "0", "--threads", "2", "--kdf-iterations", "1000",
                     "--rate-limit", "100000", "--log-level", "info", "--data-dir", data],
                    stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL)
            port = wait_for_port(log_path, server)
            if previous:
                checker = WebSocket(port)
                checker.request(dict(id="s", op="signup", username="check%d" % round_number,
                                     email="check%d@example.com" % round_number, password="pw-check-secret"))
                for writer in previous:
                    stored = stored_client_ids(checker, writer.room)
                    for client_id in writer.sent:
                        totals["sent"] += 1
                        if client_id in writer.replies:
                            totals["answered"] += 1
                            if writer.replies[client_id] and client_id not in stored:
                                totals["lost"] += 1
                        elif client_id in stored:
                            totals["unanswered"] += 1
                        else:
                            totals["unread"] += 1
                    if writer.close_code != 1001:
                        totals["not_1001"] += 1
                    totals["reply_after_close"] += writer.reply_after_close
                checker.close()
            if round_number == args.restarts:
                server.send_signal(signal.SIGKILL)
                server.wait()
                break
            writers = [Writer(port, "w%dx%d" % (round_number, i), "room:r%dw%d" % (round_number, i), args.window, cap)
                       for i in range(args.writers)]
            for writer in writers:
                writer.start()
            time.sleep(random.uniform(0.1, 0.4))
            signalled = time.monotonic()
            server.send_signal(signal.SIGTERM)
            try:
                status = server.wait(timeout=HANG_SECONDS)
            except subprocess.TimeoutExpired:
                hangs += 1
                print("round %d: no exit %.0f s after SIGTERM; threads:\n%s\nlog tail:\n%s" % (
                    round_number, HANG_SECONDS, kernel_stacks(server.pid), open(log_path).read()[-1500:]), flush=True)
                server.send_signal(signal.SIGKILL)
                status = server.wait()
            elapsed = time.monotonic() - signalled
            exit_times.append(elapsed)
            if elapsed > args.exit_limit:
                slow += 1
            if status != 0 and elapsed < HANG_SECONDS:
                bad_status += 1
                print("round %d: exit status %d; log tail:\n%s" % (round_number, status, open(log_path).read()[-1500:]), flush=True)
            for writer in writers:
                writer.done.wait(5)
            close_times.append(max((w.closed_at or signalled + HANG_SECONDS) for w in writers) - signalled)
            log_text = open(log_path, errors="replace").read()
            snapshot_ms.extend(int(ms) for ms in re.findall(r"ms=(\d+) sequence=\d+ \[HuddleServer\] shutdown snapshot written", log_text))
            snapshots_abandoned += log_text.count("shutdown snapshot abandoned")
            for closed, loop in re.findall(r"closed-1001=(\d+) loop=(\d+)", log_text):
                closed_per_loop[loop] = closed_per_loop.get(loop, 0) + int(closed)
            previous = writers
            if (round_number + 1) % 20 == 0:
                print("%d restarts: max exit %.2f s, %s" % (round_number + 1, max(exit_times), totals), flush=True)
    finally:
        for hog in hogs:
            hog.kill()
        if server is not None and server.poll() is None:
            server.kill()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)

    exit_times.sort()
    close_times.sort()
    print("restarts: %d, hogs: %d, writers: %d × window %d" % (len(exit_times), args.hogs, args.writers, args.window))
    print("exit after SIGTERM: median %.2f s, p99 %.2f s, max %.2f s; over %.1f s: %d; hangs (> %.0f s): %d; non-zero exits: %d" % (
        exit_times[len(exit_times) // 2], exit_times[min(len(exit_times) - 1, int(len(exit_times) * 0.99))],
        exit_times[-1], args.exit_limit, slow, HANG_SECONDS, hangs, bad_status))
    print("last close frame after SIGTERM: median %.2f s, max %.2f s; shutdown snapshots: %d written (max %d ms), %d abandoned; "
          "connections closed 1001 per loop: %s" % (
              close_times[len(close_times) // 2], close_times[-1], len(snapshot_ms), max(snapshot_ms or [0]), snapshots_abandoned,
              closed_per_loop))
    print("requests sent: %(sent)d, answered: %(answered)d, never read (safe to resend): %(unread)d, "
          "read but UNANSWERED: %(unanswered)d, answered ok but not stored: %(lost)d, "
          "connections not closed 1001: %(not_1001)d, replies after the close frame: %(reply_after_close)d" % totals)
    failed = hangs or slow or bad_status or totals["unanswered"] or totals["lost"] or totals["not_1001"]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

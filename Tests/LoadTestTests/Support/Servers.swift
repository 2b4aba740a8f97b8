import Foundation

/// A real `huddle` server for one test: bench endpoints on, fast password hashing (the
/// scenarios sign users up), no request-rate cap, no fsync (speed is not asserted here);
/// `extraArguments` go after those.
func startHuddle(_ extraArguments: [String] = []) async throws -> (process: ChildProcess, url: String, dataDirectory: URL) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-loadtest-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let server = try ChildProcess(ChildProcess.products.appendingPathComponent("huddle"), [
        "--host", "127.0.0.1", "--port", "0", "--threads", "2", "--bench", "--kdf-iterations", "1000", "--rate-limit", "100000",
        "--user-rate-limit", "100000", "--user-publish-bytes", "1073741824",
        "--fsync", "no", "--log-level", "notice", "--data-dir", directory.path,
    ] + extraArguments)
    let rest = try await server.waitFor("url=ws://127.0.0.1:", timeout: 30)
    guard let port = Int(rest.prefix { $0.isNumber }) else { throw ChildProcessFailure("no port in: \(rest)") }
    return (server, "ws://127.0.0.1:\(port)", directory)
}

/// A broadcast endpoint that misbehaves on purpose, for the harness to catch end to end: of
/// each publisher's messages, number 5 is never sent (a gap, and missing at the end), number 10
/// is sent twice (a duplicate), and number 15 is held back until after 16 (a reordering).
/// Python's standard library only, so it runs wherever the tests do.
///
/// `silent`: it completes the upgrade (offering `huddle.v1`) and then never answers, so a
/// scenario against it stays in set-up (its sign-up is never replied to) as long as the test likes.
func startFaultyBroadcastServer(silent: Bool = false) async throws -> (process: ChildProcess, url: String) {
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("faulty-broadcast-\(UUID().uuidString).py")
    try faultyBroadcastServerSource.write(to: script, atomically: true, encoding: .utf8)
    let server = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path] + (silent ? ["silent"] : []))
    let port = try await server.waitFor("listening ", timeout: 20)
    return (server, "ws://127.0.0.1:\(port.trimmingCharacters(in: .whitespaces))/")
}

private let faultyBroadcastServerSource = #"""
import asyncio, base64, hashlib, struct, sys

SILENT = sys.argv[1:] == ["silent"]
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
clients = []
held = {}

def frame(opcode, payload):
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload

async def read_frame(reader):
    head = await reader.readexactly(2)
    opcode, length = head[0] & 0x0F, head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", await reader.readexactly(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", await reader.readexactly(8))[0]
    mask = await reader.readexactly(4) if head[1] & 0x80 else b"\0\0\0\0"
    data = bytearray(await reader.readexactly(length))
    for i in range(length):
        data[i] ^= mask[i % 4]
    return opcode, bytes(data)

def send_all(payload):
    data = frame(1, payload)
    for writer in list(clients):
        writer.write(data)

def broadcast_with_faults(payload):
    publisher, sequence = payload.split(b" ")[0], int(payload.split(b" ")[1])
    if sequence == 5:
        return
    if sequence == 10:
        send_all(payload)
    if sequence == 15:
        held[publisher] = payload
        return
    send_all(payload)
    if sequence == 16:
        send_all(held.pop(publisher))

async def handle(reader, writer):
    request = await reader.readuntil(b"\r\n\r\n")
    key = next(line.split(b":", 1)[1].strip() for line in request.split(b"\r\n") if line.lower().startswith(b"sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
    protocol = b"Sec-WebSocket-Protocol: huddle.v1\r\n" if SILENT else b""
    writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + protocol + b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
    if SILENT:
        while await reader.read(65536):
            pass
        writer.close()
        return
    clients.append(writer)
    try:
        while True:
            opcode, payload = await read_frame(reader)
            if opcode == 1:
                broadcast_with_faults(payload)
            elif opcode == 8:
                writer.write(frame(8, payload[:2]))
                await writer.drain()
                break
            elif opcode == 9:
                writer.write(frame(10, payload))
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        clients.remove(writer)
        writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print("listening", server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
"""#


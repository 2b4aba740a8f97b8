import Foundation

/// A second address for one server: a TCP forwarder to `port`, standing in for a second node
/// of a cluster (it shares the server's state, as cluster nodes do) that the test can kill.
/// It prints `accepted` for each connection, so a test sees how many clients came through it.
/// Python's standard library only, so it runs wherever the tests do.
func startTCPForwarder(to port: Int) async throws -> (process: ChildProcess, url: String) {
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("tcp-forwarder-\(UUID().uuidString).py")
    try tcpForwarderSource.write(to: script, atomically: true, encoding: .utf8)
    let forwarder = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-u", script.path, "\(port)"])
    let listening = try await forwarder.waitFor("listening ", timeout: 20)
    return (forwarder, "ws://127.0.0.1:\(listening.trimmingCharacters(in: .whitespaces))")
}

private let tcpForwarderSource = #"""
import asyncio, sys

TARGET = int(sys.argv[1])

async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()

async def forward(client_reader, client_writer):
    print("accepted", flush=True)
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", TARGET)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

async def main():
    server = await asyncio.start_server(forward, "127.0.0.1", 0)
    # One string, one write: under -u, print("listening", port) writes its pieces one by one,
    # and a reader could see "listening " before the port.
    print("listening %d" % server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
"""#

import ChildProcessExit
import Foundation
import HuddleCore
@testable import HuddleServer
import RedisTestSupport
import Testing

/// Acceptance 4 end to end: a real `huddle` node (a release build, given by
/// HUDDLE_CLUSTER_JOIN_BINARY) joins a cluster whose newest shared snapshot holds 100k users and
/// 1M chat messages, and is timed from its exec until /healthz says 200; a few chats' history is
/// then read from it over HTTP and checked. Printed, never asserted beyond correctness. Opt-in:
///
///     swift build -c release --product huddle
///     HUDDLE_CLUSTER_MEASURE=1 HUDDLE_CLUSTER_JOIN_BINARY=.build/release/huddle \
///         swift test --filter ClusterJoinProcessMeasurement
@Suite(.ownThread, .enabled(if: ProcessInfo.processInfo.environment["HUDDLE_CLUSTER_JOIN_BINARY"] != nil))
struct ClusterJoinProcessMeasurement {
    @Test func aReleaseNodeJoiningALargeClusterServesCorrectHistory() async throws {
        let environment = ProcessInfo.processInfo.environment
        let binary = try #require(environment["HUDDLE_CLUSTER_JOIN_BINARY"])
        let users = environment["HUDDLE_CLUSTER_USERS"].flatMap { Int($0) } ?? 100_000
        let messages = environment["HUDDLE_CLUSTER_MESSAGES"].flatMap { Int($0) } ?? 1_000_000
        let perChat = messages / (users / 2)
        let state = SampleState.build(users: users, messagesPerChat: perChat)

        let redis = try await RedisProcess()
        let shared = SharedDirectory()
        defer { shared.remove() }
        let writer = try await SnapshotNode(redis: redis, sharedDirectory: shared.path, name: "writer")
        let position = UInt64(messages + users)
        try await writer.snapshotOnce(state, at: position)

        let port = try FreePort.take()
        let dataDirectory = SharedDirectory()
        defer { dataDirectory.remove() }
        let apiKey = "measure-key"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "serve", "--host", "127.0.0.1", "--port", "\(port)", "--threads", "2", "--data-dir", dataDirectory.path, "--api-key", apiKey,
            "--redis", redis.endpoint, "--node-name", "joiner", "--shared-dir", shared.path,
        ]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let started = ContinuousClock.now
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        try await eventually("the joining node is healthy", timeout: 600) {
            guard process.isRunning else { throw TestFailure("the node exited with \(process.terminationStatus)") }
            return (try? Self.get(port: port, "/healthz", apiKey: nil))?.status == 200
        }
        let healthy = ContinuousClock.now - started

        // The first, a middle and the last chat: every message there, newest first.
        var checked: [String] = []
        for first in [0, users / 2, users - 2] {
            let channel = "chat:\(Self.name(first))~\(Self.name(first + 1))"
            let reply = try Self.get(port: port, "/api/v1/history?channel=\(channel)&limit=\(min(perChat, 100))", apiKey: apiKey)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any], "\(reply.body)")
            let result = (body["result"] as? [String: Any]) ?? body
            let offsets = ((result["publications"] as? [[String: Any]]) ?? []).compactMap { $0["offset"] as? Int }
            #expect(reply.status == 200 && offsets == Array((1...min(perChat, 100)).reversed()), "\(channel): \(reply.body.prefix(300))")
            checked.append(channel)
        }
        func seconds(_ duration: Duration) -> String { String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18) }
        print("""
            cluster join by a real node (\(binary)), \(users) users, \(messages) chat messages:
              exec to /healthz 200:      \(seconds(healthy))
              history checked over HTTP: \(checked.joined(separator: ", "))
            """)
    }

    /// SampleState's user names.
    static func name(_ index: Int) -> String {
        let digits = String(index)
        return "u" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    /// One HTTP/1.1 GET on a connection of its own, read to its close.
    static func get(port: Int, _ path: String, apiKey: String?) throws -> (status: Int, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        defer { close(fd) }
        // A server that keeps the connection open despite `Connection: close` ends the read.
        var limit = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("connect: \(errno)") }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let apiKey { request += "Authorization: Bearer \(apiKey)\r\n" }
        request += "\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }
}

import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// Issue 12, problem 9 (the drain): on SIGTERM the server stops reading, answers every request
/// it had read — through the log, with its real reply — and only then closes 1001 (README,
/// "Shutdown"; protocol.md, close code 1001).
@Suite(.ownThread) struct ShutdownDrainTests {
    /// What a client saw of a shutdown: its replies, in order, and the close code after them.
    struct Drained {
        var replies: [[String: Any]] = []
        var closeCode: WebSocketCloseCode?
    }

    /// Sends `login` and `requests` in one write, waits until the metrics show the server has
    /// read all of them, then sends SIGTERM. The password hash is made slow on purpose: the
    /// requests wait behind the login (read, not yet run) when the signal arrives, so the drain
    /// has to finish the login, run them, and answer each before it closes.
    static func sigtermWithRequestsRead(_ requests: [[String: Any]], user: String, server: DurableServer) async throws -> Drained {
        let baseline = try PrometheusText.fetch(port: server.port).value("huddle_messages_received_total") ?? 0
        let client = try V1Client(port: server.port, timeout: 60)
        let login: [String: Any] = ["id": "login", "op": "login", "login": user, "password": "pw-\(user)-secret"]
        var bytes: [UInt8] = []
        for request in [login] + requests {
            let payload = Array(try JSONSerialization.data(withJSONObject: request))
            bytes += WebSocketFrameWriter.frame(opcode: .text, payload: payload, fin: true, rsv1: false, maskingKey: UInt32.random(in: 0...UInt32.max))
        }
        try client.raw.send(bytes)
        let read = baseline + Double(1 + requests.count)
        let deadline = Date().addingTimeInterval(30)
        while try PrometheusText.fetch(port: server.port).value("huddle_messages_received_total") ?? 0 < read {
            guard Date() < deadline else { throw TestFailure("the server did not read the \(requests.count + 1) requests within 30 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
        kill(server.pid, SIGTERM)
        var drained = Drained()
        while let event = try client.raw.nextEvent() {
            switch event {
            case .text(let payload):
                let message = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
                if message["id"] != nil { drained.replies.append(message) }
            case .close(let code, _):
                drained.closeCode = code
                return drained
            case .binary, .ping, .pong:
                continue
            }
        }
        return drained
    }

    /// Signs `user` up on a server whose password hashing is slow (its login will be too).
    static func startWithSlowLogin(user: String, dataDirectory: URL) async throws -> DurableServer {
        let server = try await DurableServer.start(["--kdf-iterations", "2000000"] + DurableServer.patientExit, dataDirectory: dataDirectory)
        try V1Client(port: server.port, timeout: 60).signUp(user)
        return server
    }

    @Test func fortyPipelinedPublishesReadBeforeSIGTERMAreAllAnsweredBeforeThe1001Close() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await Self.startWithSlowLogin(user: "drainer", dataDirectory: data)
        let publishes: [[String: Any]] = (1...40).map { n in
            ["id": "p\(n)", "op": "publish", "channel": "room:drain", "data": ["n": n], "client_id": "c\(n)"]
        }
        let drained = try await Self.sigtermWithRequestsRead(publishes, user: "drainer", server: server)
        #expect(try await server.stop() == 0)

        #expect(drained.replies.map { $0["id"] as? String ?? "?" } == ["login"] + (1...40).map { "p\($0)" })
        #expect(drained.replies.allSatisfy { $0["ok"] as? Bool == true }, "\(drained.replies.filter { $0["ok"] as? Bool != true })")
        let offsets = drained.replies.dropFirst().map { ($0["result"] as? [String: Any])?["offset"] as? Int ?? -1 }
        #expect(offsets == Array(1...40))
        #expect(drained.closeCode == .goingAway)

        // Each answer is the real one: the 40 publications are stored, once each.
        let restarted = try await DurableServer.start(dataDirectory: data)
        let reader = try V1Client(port: restarted.port, timeout: 60)
        try reader.logIn("drainer")
        let history = try reader.fullHistory("room:drain")
        #expect(history.publications.map { $0["client_id"] as? String ?? "?" } == (1...40).map { "c\($0)" })
        #expect(try await restarted.stop() == 0)
    }

    @Test func aPostReadBeforeSIGTERMIsAnsweredBeforeThe1001Close() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await Self.startWithSlowLogin(user: "poster", dataDirectory: data)
        let post: [String: Any] = ["id": "post", "op": "post", "text": "sent right before the restart"]
        let drained = try await Self.sigtermWithRequestsRead([post], user: "poster", server: server)
        #expect(try await server.stop() == 0)

        #expect(drained.replies.map { $0["id"] as? String ?? "?" } == ["login", "post"])
        let reply = try #require(drained.replies.last)
        let posted = try #require((reply["result"] as? [String: Any])?["post"] as? [String: Any], "\(reply)")
        #expect(drained.closeCode == .goingAway)

        let restarted = try await DurableServer.start(dataDirectory: data)
        let reader = try V1Client(port: restarted.port, timeout: 60)
        try reader.logIn("poster")
        let feed = try reader.ok("feed")
        let posts = try #require(feed["posts"] as? [[String: Any]], "\(feed)")
        let postID = try #require(posted["id"] as? Int, "\(posted)")
        #expect(posts.map { $0["id"] as? Int } == [postID], "\(posts)")
        #expect(try await restarted.stop() == 0)
    }
}

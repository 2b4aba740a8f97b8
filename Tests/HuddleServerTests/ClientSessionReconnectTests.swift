import ChildProcessExit
import Foundation
import HuddleClient
import HuddleIO
import HuddleProtocol
import Synchronization
import Testing

/// HuddleClient's reconnect and resume (issue 7, acceptance 2): connections dropped every way
/// a phone's are, under traffic, and the application still sees every publication exactly
/// once, in order; what cannot be replayed is reported; refused sessions stop the retries.
@Suite(.ownThread) struct ClientSessionReconnectTests {
    /// Fast detection of a dead path, and patience for a restarting server.
    static func resilient(_ configuration: inout HuddleClientConfiguration) {
        configuration.heartbeat = Heartbeat(pingAfterMilliseconds: 400, deadAfterMilliseconds: 1_500)
        configuration.requestTimeoutMilliseconds = 60_000
    }

    enum Drop: CaseIterable, CustomStringConvertible {
        case finFromTheNetwork, killedSocket, gracefulRestart, frozenPath, killedServer, killedSocketAgain

        var description: String {
            switch self {
            case .finFromTheNetwork: return "connection closed by the network (FIN)"
            case .killedSocket, .killedSocketAgain: return "killed socket (RST)"
            case .gracefulRestart: return "server restart (close 1001)"
            case .frozenPath: return "silent dead path (heartbeat)"
            case .killedServer: return "server kill -9 and restart"
            }
        }
    }

    @Test func noGapAndNoDuplicateAcrossSixDropsUnderTraffic() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var server = try await DurableServer.start(dataDirectory: data)
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let publisherToken = try V1Client(port: server.port).signUp("drop_pub")
        let subscriberToken = try V1Client(port: server.port).signUp("drop_sub")
        let room = "room:drops"

        let subscriber = try await ClientHarness(url: proxy.url, credentials: .token(subscriberToken), configure: Self.resilient)
        let publisher = try await ClientHarness(url: proxy.url, credentials: .token(publisherToken), configure: Self.resilient)
        _ = try await subscriber.ok("subscribe") { $0.subscribe(room, completion: $1) }
        let steady = await SteadyPublisher.start(on: publisher, channel: room, intervalMilliseconds: 5)

        for drop in Drop.allCases {
            let delivered = subscriber.publications(on: room).count
            try await subscriber.waitFor("traffic before: \(drop)", timeout: 30) { _ in subscriber.publications(on: room).count >= delivered + 25 }
            let connections = subscriber.count { $0.isConnected }
            switch drop {
            case .finFromTheNetwork:
                proxy.cutAll(reset: false)
            case .killedSocket, .killedSocketAgain:
                proxy.cutAll(reset: true)
            case .gracefulRestart:
                #expect(try await server.stop() == 0)
                server = try await DurableServer.start(dataDirectory: data)
                proxy.setTarget(server.port)
            case .frozenPath:
                proxy.freezeAll()
            case .killedServer:
                server.kill9()
                server = try await DurableServer.start(dataDirectory: data)
                proxy.setTarget(server.port)
            }
            try await subscriber.waitUntilConnected(times: connections + 1, timeout: 30)
        }
        // Traffic after the last drop too, then the stream ends and everything sent must arrive.
        let afterDrops = subscriber.publications(on: room).count
        try await subscriber.waitFor("traffic after the drops", timeout: 30) { _ in subscriber.publications(on: room).count >= afterDrops + 25 }
        let total = try await steady.finish()
        try await subscriber.waitFor("all \(total) publications (failed publishes: \(steady.failures))", timeout: 60) { _ in
            subscriber.publications(on: room).count >= total
        }
        // A marker published after everything: a stray duplicate (a resume replaying something
        // already delivered) would arrive before it, on the same subscription.
        _ = try ProtocolClient.flood(room, count: 1, token: publisherToken, port: server.port)
        try await subscriber.waitFor("the marker", timeout: 30) { _ in
            subscriber.publications(on: room).contains { $0.offset == UInt64(total + 1) }
        }
        let withMarker = subscriber.publications(on: room)
        #expect(withMarker.last?.offset == UInt64(total + 1), "nothing after the marker")
        let publications = Array(withMarker.dropLast())
        #expect(publications.map(\.offset) == (1...UInt64(total)).map { $0 }, "no gap, no duplicate, in order")
        #expect(publications.map { $0.data["seq"]?.int64Value ?? 0 } == (1...Int64(total)).map { $0 }, "each publish stored once")
        #expect(Set(publications.map(\.epoch)).count == 1, "one epoch across restarts")
        let recoveries = subscriber.events.compactMap { event -> Bool? in
            if case .recovered(room, let recovered) = event { return recovered } else { return nil }
        }
        #expect(recoveries.count >= Drop.allCases.count && recoveries.allSatisfy { $0 }, "\(recoveries)")
        #expect(subscriber.count { $0.isReconnecting } >= Drop.allCases.count)
        #expect(!subscriber.events.contains { $0.stopReason != nil })
        subscriber.shutDown()
        publisher.shutDown()
        #expect(try await server.stop() == 0)
    }

    /// Missed more than the server replays (1000): `recovered: false` reaches the application,
    /// and delivery goes on from the channel's latest offset.
    @Test func recoveredFalseWhenTheHistoryNoLongerReachesBack() async throws {
        let server = try await startHuddle(["--user-rate-limit", "1000"])
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let publisherToken = try V1Client(port: server.port).signUp("far_pub")
        let subscriberToken = try V1Client(port: server.port).signUp("far_sub")
        let room = "room:far"
        let subscriber = try await ClientHarness(url: proxy.url, credentials: .token(subscriberToken))
        _ = try await subscriber.ok("subscribe") { $0.subscribe(room, completion: $1) }
        _ = try ProtocolClient.flood(room, count: 3, token: publisherToken, port: server.port)
        try await subscriber.waitFor("three") { _ in subscriber.publications(on: room).count == 3 }

        proxy.setRefusing(true)
        proxy.cutAll(reset: true)
        try await subscriber.waitFor("a failed attempt") { $0.contains { $0.isReconnecting } }
        _ = try ProtocolClient.flood(room, count: 1_005, first: 4, token: publisherToken, port: server.port)
        proxy.setRefusing(false)
        try await subscriber.waitFor("recovered false") { $0.contains(.recovered(channel: room, recovered: false)) }
        _ = try ProtocolClient.flood(room, count: 1, first: 1_009, token: publisherToken, port: server.port)
        try await subscriber.waitFor("the next live one") { _ in subscriber.publications(on: room).count == 4 }
        #expect(subscriber.publications(on: room).map(\.offset) == [1, 2, 3, 1_009])
        #expect(!subscriber.events.contains { $0.stopReason != nil })
    }

    /// Close 4001 (here the HTTP API's disconnect) ends the session: the client stops and
    /// never tries again.
    @Test func closeWith4001StopsRetrying() async throws {
        let server = try await startHuddle(["--api-key", "test-key"])
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let token = try V1Client(port: server.port).signUp("kicked")
        let client = try await ClientHarness(url: proxy.url, credentials: .token(token))
        try await client.waitUntilConnected()
        _ = try await client.ok("subscribe") { $0.subscribe("inbox:kicked", completion: $1) }
        let kicked = try HTTPExchange(port: server.port, "POST", "/api/v1/disconnect", body: #"{"user": "kicked"}"#, key: "test-key")
        #expect(kicked.status == 200)
        try await client.waitFor("the stop") { $0.contains { $0.stopReason != nil } }
        guard case .authenticationFailed(let code, _)? = client.events.compactMap(\.stopReason).first else {
            Issue.record("not an authentication stop: \(client.events)")
            return
        }
        #expect(code == "session_ended")
        try await Task.sleep(for: .seconds(1))
        #expect(proxy.acceptedCount == 1, "no reconnect attempt")
        #expect(!client.events.contains { $0.isReconnecting })
        #expect(await client.state == .stopped)
        #expect(await client.run { $0.token } == nil, "the refused session is forgotten")
        #expect(await client.run { $0.subscriptions.count } == 0, "its subscriptions too")
    }

    /// A refused token: `auth_failed` then 4001; the client stops with the server's code, and
    /// what waited fails with `closed`.
    @Test func refusedTokenStops() async throws {
        let server = try await startHuddle()
        let client = try await ClientHarness(url: server.url, credentials: .token(String(repeating: "x", count: 43)))
        let waiting = await client.call { $0.whoami(completion: $1) }
        #expect(waiting == .failure(.closed))
        guard case .authenticationFailed(let code, let message)? = client.events.compactMap(\.stopReason).first else {
            Issue.record("no authentication stop: \(client.events)")
            return
        }
        #expect(code == "invalid_token" && !message.isEmpty)
        #expect(!client.events.contains { $0.isReconnecting || $0.isConnected })
    }

    /// Password credentials: when the session is revoked (a logout of every device elsewhere),
    /// the client logs in again with the password and resumes its subscriptions.
    @Test func passwordCredentialsOpenANewSessionWhenTheTokenIsRevoked() async throws {
        let server = try await startHuddle()
        let other = try V1Client(port: server.port)
        try other.signUp("pw_user")
        let client = try await ClientHarness(url: server.url, credentials: .password(login: "pw_user", password: "pw-pw_user-secret"))
        try await client.waitUntilConnected()
        #expect(client.events.first == .connected(user: HuddleUser(username: "pw_user", email: "pw_user@example.com")))
        let firstToken = try #require(await client.run { $0.token })
        _ = try await client.ok("subscribe") { $0.subscribe("room:pw", completion: $1) }

        try other.ok("logout", ["all": true])
        try await client.waitUntilConnected(times: 2)
        let secondToken = try #require(await client.run { $0.token })
        #expect(secondToken != firstToken)
        let publisher = try V1Client(port: server.port)
        try publisher.signUp("pw_pub")
        try publisher.ok("publish", ["channel": "room:pw", "data": "after"])
        try await client.waitFor("the publication after the new session") { _ in client.publications(on: "room:pw").count == 1 }
        #expect(!client.events.contains { $0.stopReason != nil })
    }

    /// On a path that died silently, the heartbeat notices; a change in flight is sent again
    /// with its `client_id` (done once whatever happened to the first copy) and answered, as a
    /// read is.
    @Test func inFlightRequestsOnADeadPath() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let token = try V1Client(port: server.port).signUp("frozen")
        let client = try await ClientHarness(url: proxy.url, credentials: .token(token)) {
            $0.heartbeat = Heartbeat(pingAfterMilliseconds: 500, deadAfterMilliseconds: 2_000)
            $0.requestTimeoutMilliseconds = 30_000
        }
        // On a loaded machine the heartbeat may drop a healthy connection on its own; a round in
        // which the requests did not go out on the frozen connection proves nothing: run another.
        for _ in 1...5 {
            let readyBy = ContinuousClock.now + .seconds(30)
            while await client.state != .ready {
                guard ContinuousClock.now < readyBy else { throw TestFailure("never ready: \(client.events.suffix(5))") }
                try await Task.sleep(for: .milliseconds(20))
            }
            let accepted = proxy.acceptedCount
            proxy.freezeAll()
            let outcomes = RequestOutcomes()
            let sentOnTheFrozenConnection = await client.run { client -> Bool in
                let ready = client.state == .ready
                client.sendFriendRequest(to: "someone") { outcome in outcomes.change.withLock { $0 = outcome } }
                client.friends { outcome in outcomes.read.withLock { $0 = outcome } }
                return ready
            } && proxy.acceptedCount == accepted
            try await eventually(timeout: 30, "both outcomes") { outcomes.change.withLock { $0 != nil } && outcomes.read.withLock { $0 != nil } }
            guard sentOnTheFrozenConnection else { continue }
            let change = outcomes.change.withLock { $0 }
            if case .failure(.server(code: "user_not_found", _, _)) = change {} else {
                Issue.record("a change is sent again and gets the server's answer, not \(String(describing: change))")
            }
            #expect(outcomes.read.withLock { $0 } == .success([]), "a read is sent again and answered")
            #expect(client.events.contains { if case .reconnecting(_, _, let reason) = $0 { return reason.contains("no frame") } else { return false } })
            return
        }
        Issue.record("the requests never went out on a frozen connection in five rounds")
    }

    @Test func givesUpAfterMaxAttempts() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        proxy.setRefusing(true)
        let client = try await ClientHarness(url: proxy.url) { $0.reconnect.maxAttempts = 2 }
        try await client.waitFor("the stop") { $0.contains { $0.stopReason != nil } }
        guard case .gaveUp(let attempts, _)? = client.events.compactMap(\.stopReason).first else {
            Issue.record("did not give up: \(client.events)")
            return
        }
        #expect(attempts == 2 && proxy.acceptedCount == 3, "the first connection and two retries")
        #expect(client.events.compactMap { if case .reconnecting(let attempt, _, _) = $0 { return attempt } else { return nil } } == [1, 2])
    }

    @Test func aWrongPathIsRefusedNotRetried() async throws {
        let server = try await startHuddle()
        let client = try await ClientHarness(url: server.url + "/nope")
        try await client.waitFor("the stop") { $0.contains { $0.stopReason != nil } }
        guard case .refused(let reason)? = client.events.compactMap(\.stopReason).first else {
            Issue.record("not refused: \(client.events)")
            return
        }
        #expect(reason.contains("404"), "\(reason)")
    }
}

extension ClientSessionReconnectTests {
    /// The load generator's shape: hundreds of clients on ONE loop thread (no thread, no timer
    /// each) all resume across a server kill -9, each with every publication once.
    @Test func fiveHundredClientsOnOneLoopResumeAfterAServerKill() async throws {
        let count = 500
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var server = try await DurableServer.start(dataDirectory: data)
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let token = try V1Client(port: server.port).signUp("fleet")
        let publisherToken = try V1Client(port: server.port).signUp("fleet_pub")
        let room = "room:fleet"
        let loop = try TestLoop()
        defer { loop.stop() }
        let fleet = ClientFleet(count: count)
        let url = try ClientURL(proxy.url + "/v1")
        await loop.run { fleet.start(url: url, token: token, room: room, loop: loop.loop) }
        try await eventually(timeout: 120, "\(count) subscriptions") { fleet.subscribed == count }

        _ = try ProtocolClient.flood(room, count: 5, token: publisherToken, port: server.port)
        try await eventually(timeout: 60, "five publications each") { fleet.deliveredCounts.allSatisfy { $0 >= 5 } }
        server.kill9()
        server = try await DurableServer.start(dataDirectory: data)
        proxy.setTarget(server.port)
        _ = try ProtocolClient.flood(room, count: 5, first: 6, token: publisherToken, port: server.port)
        try await eventually(timeout: 120, "ten publications each, after resuming") { fleet.deliveredCounts.allSatisfy { $0 >= 10 } }
        // An eleventh as a marker: a stray duplicate of the first ten would arrive before it.
        _ = try ProtocolClient.flood(room, count: 1, first: 11, token: publisherToken, port: server.port)
        try await eventually(timeout: 120, "the marker, everywhere") { fleet.deliveredCounts.allSatisfy { $0 >= 11 } }
        let offsets = fleet.offsets
        #expect(offsets.allSatisfy { $0 == Array(1...11) }, "\(offsets.filter { $0 != Array(1...11) }.prefix(3))")
        #expect(fleet.connectedEvents >= 2 * count)
        await loop.run { fleet.stopAll() }
    }
}

/// What two typed calls answered, filled on the client's loop.
final class RequestOutcomes: Sendable {
    let change = Mutex<Result<FriendRequestOutcome, HuddleClientError>?>(nil)
    let read = Mutex<Result<[Friend], HuddleClientError>?>(nil)
}

/// Many `HuddleClient`s on one loop, each counting what it delivers.
final class ClientFleet: @unchecked Sendable {
    /// Loop-confined.
    private var clients: [HuddleClient] = []
    private let record: Record

    /// Shared with the clients' callbacks on the loop and read by the test.
    final class Record: Sendable {
        let state: Mutex<(offsets: [[UInt64]], subscribed: Int, connected: Int)>
        init(count: Int) { state = Mutex((Array(repeating: [], count: count), 0, 0)) }
        func withLock<Result>(_ body: (inout (offsets: [[UInt64]], subscribed: Int, connected: Int)) -> Result) -> Result {
            state.withLock { body(&$0) }
        }
    }

    init(count: Int) {
        record = Record(count: count)
    }

    var subscribed: Int { record.withLock { $0.subscribed } }
    var connectedEvents: Int { record.withLock { $0.connected } }
    var offsets: [[UInt64]] { record.withLock { $0.offsets } }
    var deliveredCounts: [Int] { record.withLock { $0.offsets.map(\.count) } }

    func start(url: ClientURL, token: String, room: String, loop: EventLoop) {
        for index in 0..<record.withLock({ $0.offsets.count }) {
            var configuration = HuddleClientConfiguration(url: url, credentials: .token(token))
            configuration.reconnect = ReconnectPolicy(initialDelayMilliseconds: 200, maxDelayMilliseconds: 2_000)
            configuration.requestTimeoutMilliseconds = 60_000
            let client = HuddleClient(configuration: configuration, runLoop: ClientRunLoop(loop))
            client.onEvent = { [record] event in
                switch event {
                case .publication(let publication): record.withLock { $0.offsets[index].append(publication.offset) }
                case .connected: record.withLock { $0.connected += 1 }
                default: break
                }
            }
            client.start()
            subscribe(client, to: room, loop: loop)
            clients.append(client)
        }
    }

    /// As an application would: a subscribe refused `rate_limited` (500 clients of one user,
    /// past its burst when a loaded server answers them together) is sent again when told.
    private func subscribe(_ client: HuddleClient, to room: String, loop: EventLoop) {
        client.subscribe(room) { [record] outcome in
            switch outcome {
            case .success:
                record.withLock { $0.subscribed += 1 }
            case .failure(.server(code: "rate_limited", _, let retryAfter)):
                _ = loop.schedule(after: retryAfter ?? 1_000) { self.subscribe(client, to: room, loop: loop) }
            case .failure:
                break
            }
        }
    }

    func stopAll() {
        for client in clients { client.stop() }
    }
}

/// Publishes `{"seq": n}` for n = 1, 2, 3… one after the other, each `intervalMilliseconds`
/// after the previous reply, until stopped: a steady stream that keeps going across reconnects.
final class SteadyPublisher: Sendable {
    private let progress = Mutex<(issued: Int, acknowledged: Int, failures: [String], stopping: Bool)>((0, 0, [], false))

    /// The last publication the server acknowledged, and the last one sent.
    var acknowledged: Int { progress.withLock { $0.acknowledged } }
    var issued: Int { progress.withLock { $0.issued } }
    var failures: [String] { progress.withLock { $0.failures } }

    static func start(on harness: ClientHarness, channel: String, intervalMilliseconds: Int64) async -> SteadyPublisher {
        let publisher = SteadyPublisher()
        await harness.run { client in publisher.publish(1, channel: channel, interval: intervalMilliseconds, client: client) }
        return publisher
    }

    /// No publication is started after this; the one in flight finishes.
    func stop() { progress.withLock { $0.stopping = true } }

    /// Stops and waits for the last acknowledgement; how many were published, none failed.
    func finish() async throws -> Int {
        stop()
        try await eventually(timeout: 60, "the publisher's last acknowledgement") { self.acknowledged == self.issued }
        #expect(failures.isEmpty, "\(failures)")
        return issued
    }

    private func publish(_ n: Int, channel: String, interval: Int64, client: HuddleClient) {
        guard progress.withLock({ progress -> Bool in
            guard !progress.stopping else { return false }
            progress.issued = n
            return true
        }) else { return }
        client.publish(channel, data: .object([("seq", .integer(n))])) { [self] outcome in
            // `rate_limited` stored nothing: like an app, send the same one again when told. (On
            // a loaded machine the resends after a drop can meet a bucket the burst emptied.)
            if case .failure(.server(code: "rate_limited", _, let retryAfter)) = outcome {
                client.runLoop.schedule(after: max(retryAfter ?? 100, interval)) {
                    self.publish(n, channel: channel, interval: interval, client: client)
                }
                return
            }
            progress.withLock {
                switch outcome {
                case .success: $0.acknowledged = n
                case .failure(let error): $0.failures.append("\(n): \(error)")
                }
            }
            client.runLoop.schedule(after: interval) { self.publish(n + 1, channel: channel, interval: interval, client: client) }
        }
    }
}

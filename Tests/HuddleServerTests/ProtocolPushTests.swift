import ChildProcessExit
import Foundation
import HuddleCrypto
import HuddleIO
import Testing

/// protocol.md "Notifications and push", over real sockets against the real binary, with a
/// local webhook receiver: the hand-off of what an offline user is owed, retries, a dead
/// webhook, the queue bound, no webhook at all, and a restart.
@Suite(.ownThread) struct ProtocolPushTests {
    static let room = "chat:alice~bob"

    /// A server whose presence grace is 0, so a friend's `presence` offline event tells the
    /// test the core has seen the other side's socket go.
    private func start(_ arguments: [String], dataDirectory: URL? = nil) async throws -> ServerProcess {
        try await startHuddle(["--presence-grace", "0"] + arguments, dataDirectory: dataDirectory)
    }

    /// alice online; bob her friend, whose only connection dropped. Returns alice.
    private func aliceWithBobOffline(port: Int) throws -> ProtocolClient {
        let (alice, _) = try ProtocolClient.signedUp("alice", port: port)
        do {
            let (bob, _) = try ProtocolClient.signedUp("bob", port: port)
            try alice.ok("friend_request", ["user": "bob"])
            try bob.ok("friend_accept", ["user": "alice"])
            _ = try alice.nextEvent("presence")
        }
        try waitUntilOffline("bob", toldTo: alice)
        return alice
    }

    private func waitUntilOffline(_ user: String, toldTo friend: ProtocolClient) throws {
        let event = try friend.nextEvent("presence", timeout: 5)
        guard event["user"] as? String == user, JSON.bool(event["online"]) == false else {
            throw TestFailure("expected \(user) to go offline, got \(JSON.text(event))")
        }
    }

    private func metric(_ server: ServerProcess, _ name: String, _ labels: [String: String] = [:]) throws -> Double? {
        try PrometheusText.fetch(port: server.port).value(name, labels)
    }

    /// Polls /metrics until `name` reaches `value`.
    private func waitForMetric(_ server: ServerProcess, _ name: String, _ labels: [String: String] = [:], toBe value: Double, timeout: Double = 10) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try metric(server, name, labels) != value {
            guard Date() < deadline else {
                throw TestFailure("\(name)\(labels) is \(String(describing: try metric(server, name, labels))), never \(value) within \(timeout) s")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func anOfflineUserIsPushedEachMessageWithTheRisingBadgeAndFindsThemOnReconnect() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let server = try await start(["--push-webhook", receiver.url, "--push-webhook-secret", "s3cret"])
        try await server.waitForLog("push gateway enabled")
        let alice = try aliceWithBobOffline(port: server.port)

        let sent = JSON.nowMilliseconds
        _ = try alice.publishAll(Self.room, (1...3).map { ["text": "message \($0)"] })
        let requests = try await receiver.waitForRequests(3)
        let received = JSON.nowMilliseconds
        for request in requests {
            #expect(request.method == "POST" && request.target == "/hooks/push")
            #expect(request.headers["content-type"] == "application/json")
            let signature = Crypto.hmacSHA256(key: Array("s3cret".utf8), message: request.body).map { String(format: "%02x", $0) }.joined()
            #expect(request.headers["x-huddle-signature"] == "sha256=" + signature)
        }
        let notifications = receiver.notifications
        #expect(notifications.map { JSON.int($0["badge"]) } == [1, 2, 3])
        #expect(notifications.map { $0["body"] as? String } == ["message 1", "message 2", "message 3"])
        #expect(notifications.map { $0["id"] as? String } == ["chat:alice~bob/1", "chat:alice~bob/2", "chat:alice~bob/3"])
        for notification in notifications {
            #expect(notification["user"] as? String == "bob" && notification["kind"] as? String == "chat_message")
            #expect(notification["title"] as? String == "alice" && notification["from"] as? String == "alice")
            #expect(notification["target"] as? String == "huddle://chat/chat:alice~bob")
            // The time the message was stored, in Unix milliseconds: between the send and the
            // webhook's receipt (bounded by events, not by how long a loaded machine took).
            #expect(JSON.int(notification["time"]).map { (sent...received).contains($0) } == true)
        }

        // bob comes back: the messages arrive exactly once, the badge is there, and reading clears it.
        do {
            let bob = try ProtocolClient(port: server.port)
            try bob.login("bob")
            #expect(JSON.int(try bob.ok("unread")["total"]) == 3)
            let recovered = try bob.subscribe(Self.room, since: (epoch: "", offset: 0))
            #expect(JSON.bool(recovered["recovered"]) == true)
            #expect((recovered["publications"] as? [JSONObject])?.map { ($0["data"] as? JSONObject)?["text"] as? String }
                == ["message 1", "message 2", "message 3"])
            let marked = try bob.ok("mark_read", ["channel": Self.room, "offset": 3])
            #expect(JSON.int(marked["badge"]) == 0)

            // Online, bob is told live and never pushed.
            try alice.publish(Self.room, ["text": "live"])
            #expect((try bob.nextEvent("publication")["data"] as? JSONObject)?["text"] as? String == "live")
        }
        // bob gone again, a last message is pushed: the barrier for the one he got live, which
        // would have been handed off before it.
        while true {  // alice heard bob come online, then go
            let event = try alice.nextEvent("presence")
            if event["user"] as? String == "bob", JSON.bool(event["online"]) == false { break }
        }
        try alice.publish(Self.room, ["text": "marker"])
        let handedOff = try await receiver.requestsThrough(marker: { $0["body"] as? String == "marker" }, serverPort: server.port)
        #expect(handedOff.map { $0.json["body"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["marker", "message 1", "message 2", "message 3"])
        #expect(try metric(server, "huddle_push_sent_total") == 4)
        #expect(try metric(server, "huddle_push_failed_total") == 0)
        #expect(try metric(server, "huddle_push_queue_depth") == 0)
    }

    @Test func friendRequestsAndAcceptancesArePushedToTheOfflineSide() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let server = try await start(["--push-webhook", receiver.url])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: server.port)
        // Logging out forgets carol's connection before the reply: she is offline from then on.
        try carol.ok("logout")
        try alice.ok("friend_request", ["user": "carol", "message": "climb?"])
        let request = try #require(try await receiver.waitForRequests(1).first?.json)
        #expect(request["kind"] as? String == "friend_request" && request["user"] as? String == "carol")
        #expect(request["title"] as? String == "alice" && request["body"] as? String == "wants to be friends: climb?")
        #expect(request["target"] as? String == "huddle://friends/requests" && request["id"] as? String == "inbox:carol/1")
        #expect(JSON.int(request["badge"]) == 0)

        let carolAgain = try ProtocolClient(port: server.port)
        try carolAgain.login("carol")
        try alice.ok("logout")
        try carolAgain.ok("friend_accept", ["user": "alice"])
        let accepted = try await receiver.waitForRequests(2)[1].json
        #expect(accepted["kind"] as? String == "friend_accepted" && accepted["user"] as? String == "alice")
        #expect(accepted["title"] as? String == "carol" && accepted["body"] as? String == "accepted your friend request")
        #expect(accepted["id"] as? String == "inbox:alice/2")
    }

    @Test func aFailingWebhookIsRetriedWithTheSameNotification() async throws {
        let receiver = try WebhookReceiver(statuses: [503, 429])
        defer { receiver.stop() }
        let server = try await start(["--push-webhook", receiver.url])
        let alice = try aliceWithBobOffline(port: server.port)
        try alice.publish(Self.room, ["text": "hello?"])
        // 503, then 429 after ~0.5 s, then 200 after ~1 s more.
        let requests = try await receiver.waitForRequests(3, timeout: 10)
        #expect(requests.count == 3)
        #expect(Set(requests.map(\.body)).count == 1, "every attempt sends the same notification")
        #expect(requests[0].json["id"] as? String == "chat:alice~bob/1")
        try await waitForMetric(server, "huddle_push_sent_total", toBe: 1)
        #expect(try metric(server, "huddle_push_failed_total") == 2)
        #expect(server.logText.contains("push attempt failed; retrying"))
    }

    @Test func aRefusedNotificationIsDroppedWithoutARetry() async throws {
        let receiver = try WebhookReceiver(statuses: [400])
        defer { receiver.stop() }
        let server = try await start(["--push-webhook", receiver.url])
        let alice = try aliceWithBobOffline(port: server.port)
        try alice.publish(Self.room, ["text": "one"])
        try await waitForMetric(server, "huddle_push_dropped_total", ["reason": "rejected"], toBe: 1)
        try await server.waitForLog("push refused by the webhook; dropped")
        try alice.publish(Self.room, ["text": "two"])
        try await waitForMetric(server, "huddle_push_sent_total", toBe: 1)
        // Two notifications, one request each: the 400 was not retried.
        #expect(receiver.requests.map { $0.json["body"] as? String } == ["one", "two"])
        #expect(try metric(server, "huddle_push_failed_total") == 1)
    }

    @Test func aDeadWebhookDropsAfterItsAttemptsAndChatGoesOn() async throws {
        // A port bound but never listened on: every connection is refused, and no other test
        // can take the port meanwhile.
        let reserved = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(reserved) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(reserved, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0)
        let deadURL = "http://127.0.0.1:\(Socket.localPort(reserved))/hooks/push"
        let server = try await start(["--push-webhook", deadURL, "--push-max-attempts", "2"])
        let alice = try aliceWithBobOffline(port: server.port)
        _ = try alice.publishAll(Self.room, (1...3).map { ["text": "\($0)"] })
        try await waitForMetric(server, "huddle_push_dropped_total", ["reason": "retries_exhausted"], toBe: 3)
        #expect(try metric(server, "huddle_push_failed_total") == 6)
        #expect(try metric(server, "huddle_push_sent_total") == 0)
        #expect(server.logText.contains("push failed on every attempt; dropped"))
        #expect(server.logText.contains("cannot connect to 127.0.0.1"))

        // Chat never noticed.
        let bob = try ProtocolClient(port: server.port)
        try bob.login("bob")
        #expect(JSON.int(try bob.ok("unread")["total"]) == 3)
        try bob.subscribe(Self.room)
        try alice.publish(Self.room, ["text": "4"])
        #expect(JSON.int(try bob.nextEvent("publication")["offset"]) == 4)
    }

    @Test func aWebhookThatNeverAnswersTimesOut() async throws {
        let receiver = try WebhookReceiver(holding: true)
        defer { receiver.stop() }
        let server = try await start(["--push-webhook", receiver.url, "--push-timeout", "1", "--push-max-attempts", "2"])
        let alice = try aliceWithBobOffline(port: server.port)
        try alice.publish(Self.room, ["text": "anyone?"])
        try await waitForMetric(server, "huddle_push_dropped_total", ["reason": "retries_exhausted"], toBe: 1)
        #expect(receiver.requests.count == 2)
        #expect(try metric(server, "huddle_push_failed_total") == 2)
        #expect(server.logText.contains("no response within 1000 ms"))
    }

    @Test func anHTTPSWebhookIsVerifiedAgainstItsCA() async throws {
        let certificates = try TestCertificates.shared.get()
        let receiver = try WebhookReceiver(tls: certificates)
        defer { receiver.stop() }
        let server = try await start(["--push-webhook", receiver.url, "--push-webhook-ca", certificates.caCertificate.path])
        let alice = try aliceWithBobOffline(port: server.port)
        try alice.publish(Self.room, ["text": "over TLS"])
        #expect(try await receiver.waitForRequests(1)[0].json["body"] as? String == "over TLS")
        try await waitForMetric(server, "huddle_push_sent_total", toBe: 1)

        // Without the CA, the system store does not trust the test certificate: nothing is sent.
        let untrusting = try await start(["--push-webhook", receiver.url, "--push-max-attempts", "1"])
        let alice2 = try aliceWithBobOffline(port: untrusting.port)
        try alice2.publish(Self.room, ["text": "to a stranger"])
        try await waitForMetric(untrusting, "huddle_push_dropped_total", ["reason": "retries_exhausted"], toBe: 1)
        // Waited for: the metric can be read before the failure's log line is written.
        try await untrusting.waitForLog("certificate verify failed")
        #expect(receiver.requests.count == 1)
    }

    @Test func aFullQueueDropsTheOldestWaitingNotification() async throws {
        // The receiver holds every request: 4 are in flight (the concurrency), the queue holds 3.
        // A long timeout: on a loaded machine a held request must not time out and come back
        // as a retry, which would drop more.
        let receiver = try WebhookReceiver(holding: true)
        defer { receiver.stop() }
        let server = try await start(["--push-webhook", receiver.url, "--push-queue-size", "3", "--push-timeout", "300"])
        let alice = try aliceWithBobOffline(port: server.port)
        _ = try alice.publishAll(Self.room, (1...10).map { ["text": "\($0)"] })
        try await receiver.waitForRequests(4)
        try await waitForMetric(server, "huddle_push_dropped_total", ["reason": "queue_full"], toBe: 3)
        #expect(try metric(server, "huddle_push_queue_depth") == 3)
        #expect(server.logText.contains("push queue full; dropped the oldest notification"))
        #expect(receiver.requests.count == 4, "no more than 4 requests in flight")

        receiver.release()
        try await waitForMetric(server, "huddle_push_sent_total", toBe: 7)
        // The first four were being sent; 5, 6 and 7 were the oldest waiting when 8, 9 and 10 came.
        #expect(receiver.notifications.map { JSON.int($0["badge"]) } == [1, 2, 3, 4, 8, 9, 10])
        #expect(try metric(server, "huddle_push_queue_depth") == 0)
    }

    @Test func withoutAWebhookNotificationsOnlyWaitInTheInboxAndTheBadge() async throws {
        let server = try await start([])
        let alice = try aliceWithBobOffline(port: server.port)
        _ = try alice.publishAll(Self.room, [["text": "a"], ["text": "b"]])
        let (carol, _) = try ProtocolClient.signedUp("carol", port: server.port)
        try carol.ok("friend_request", ["user": "bob", "message": "hey"])

        let bob = try ProtocolClient(port: server.port)
        try bob.login("bob")
        let unread = try bob.ok("unread")
        #expect(JSON.int(unread["total"]) == 2)
        let inbox = try bob.ok("history", ["channel": "inbox:bob"])
        #expect((inbox["publications"] as? [JSONObject])?.first?["type"] as? String == "friend_request")
        #expect(!server.logText.contains("push gateway enabled"))
        #expect(try metric(server, "huddle_push_sent_total") == 0)
        #expect(try metric(server, "huddle_push_failed_total") == 0)
    }

    @Test func theBadgeAndTheMessagesSurviveARestartAndNothingIsPushedTwice() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        do {
            let server = try await start(["--push-webhook", receiver.url, "--fsync", "always"], dataDirectory: data)
            let alice = try aliceWithBobOffline(port: server.port)
            _ = try alice.publishAll(Self.room, [["text": "before"], ["text": "the restart"]])
            try await receiver.waitForRequests(2)
            #expect(try await server.stop() == 0)
        }
        let server = try await start(["--push-webhook", receiver.url], dataDirectory: data)
        try await server.waitForLog("push gateway enabled")

        // Still offline: the next message's badge counts the two from before the restart. Its
        // hand-off is the barrier: one the replay made would have been sent before it.
        let alice = try ProtocolClient(port: server.port)
        try alice.login("alice")
        try alice.publish(Self.room, ["text": "after"])
        let requests = try await receiver.requestsThrough(marker: { $0["body"] as? String == "after" }, serverPort: server.port)
        #expect(requests.count == 3, "replaying the log pushes nothing: \(requests.map { String(decoding: $0.body, as: UTF8.self) })")
        #expect(JSON.int(requests.first { $0.json["body"] as? String == "after" }?.json["badge"]) == 3)

        let bob = try ProtocolClient(port: server.port)
        try bob.login("bob")
        #expect(JSON.int(try bob.ok("unread")["total"]) == 3)
        let recovered = try bob.subscribe(Self.room, since: (epoch: "", offset: 0))
        #expect((recovered["publications"] as? [JSONObject])?.map { ($0["data"] as? JSONObject)?["text"] as? String }
            == ["before", "the restart", "after"])
        #expect(JSON.int(try bob.ok("mark_read", ["channel": Self.room, "offset": 3])["badge"]) == 0)
    }

    @Test func aShutdownDrainsPendingHandOffsBriefly() async throws {
        // A retry still waiting when the server is told to stop is sent before it exits.
        let flaky = try WebhookReceiver(statuses: [503])
        defer { flaky.stop() }
        let server = try await start(["--push-webhook", flaky.url])
        do {
            let alice = try aliceWithBobOffline(port: server.port)
            try alice.publish(Self.room, ["text": "last words"])
            try await flaky.waitForRequests(1)
        }
        #expect(try await server.stop() == 0)
        #expect(flaky.requests.count == 2)
        #expect(server.logText.contains("push handed off"))
        #expect(!server.logText.contains("not handed off before shutdown"))

        // One that cannot finish is given up after the drain, and said so.
        let stuck = try WebhookReceiver(holding: true)
        defer { stuck.stop() }
        let second = try await start(["--push-webhook", stuck.url])
        do {
            let alice = try aliceWithBobOffline(port: second.port)
            try alice.publish(Self.room, ["text": "never answered"])
            try await stuck.waitForRequests(1)
        }
        #expect(try await second.stop() == 0)
        let line = second.logText.split(separator: "\n").first { $0.contains("push notifications not handed off before shutdown") }
        #expect(line?.contains("count=1") == true)
    }

    @Test func aBadWebhookURLStopsTheStartWithAClearError() async throws {
        for (url, reason) in [
            ("ftp://127.0.0.1/hook", "the scheme must be http or https"),
            ("http://user:pw@127.0.0.1/hook", "user info is not supported"),
            ("http://127.0.0.1:0/hook", "the port must be 1–65535"),
            ("127.0.0.1:9000/hook", "the URL needs an http:// or https:// scheme"),
        ] {
            let output = try await runProcess(
                ServerProcess.binary.path, ["--port", "0", "--push-webhook", url], timeout: 20)
            #expect(output.status != 0)
            #expect(output.stderr.contains("--push-webhook: \(reason)"), "\(url): \(output.stderr)")
        }
        let orphan = try await runProcess(ServerProcess.binary.path, ["--port", "0", "--push-webhook-secret", "x"], timeout: 20)
        #expect(orphan.status != 0 && orphan.stderr.contains("need --push-webhook"))
        let plainWithCA = try await runProcess(
            ServerProcess.binary.path, ["--port", "0", "--push-webhook", "http://127.0.0.1:9/hook", "--push-webhook-ca", "ca.pem"], timeout: 20)
        #expect(plainWithCA.status != 0 && plainWithCA.stderr.contains("--push-webhook-ca is for an https:// webhook"))
    }
}

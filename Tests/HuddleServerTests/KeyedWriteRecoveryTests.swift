import ChildProcessExit
import Foundation
import Testing

/// Issue 12, acceptance 4: every write sent with a `client_id`, its reply lost to a server that
/// dies (SIGKILL: the kept results come back by replaying the log) or stops (SIGTERM: from the
/// shutdown snapshot) right after, and sent again with the same `client_id` to the restarted
/// server, has exactly one effect: the retry gets the first result with `duplicate: true` and
/// changes nothing.
@Suite(.ownThread) struct KeyedWriteRecoveryTests {
    static let password = "pw-secret-1"

    /// The writes, in the order they are sent; arguments may name what the setup made.
    static func writes(_ made: Setup) -> [(op: String, arguments: [String: Any])] {
        [
            ("post", ["text": "keyed post"]),
            ("comment", ["post": made.firstPost, "text": "keyed comment"]),
            ("like", ["post": made.firstPost]),
            ("post_delete", ["post": made.secondPost]),
            ("memory_create", ["title": "Keyed", "date": "2025-01-02"]),
            ("memory_update", ["memory": made.lisbon, "title": "Lisboa"]),
            ("memory_delete", ["memory": made.porto]),
            ("point_add", ["memory": made.lisbon, "time": 3000, "note": "keyed point"]),
            ("point_update", ["memory": made.lisbon, "point": made.keptPoint, "note": "updated"]),
            ("point_delete", ["memory": made.lisbon, "point": made.droppedPoint]),
            ("place_set", ["label": "work", "lat": 1.0, "lon": 2.0, "radius": 100.0]),
            ("place_remove", ["place_id": made.home]),
            ("friend_request", ["user": "kw_d"]),
            ("friend_accept", ["user": "kw_e"]),
            ("friend_decline", ["user": "kw_f"]),
            ("friend_cancel", ["user": "kw_g"]),
            ("friend_remove", ["user": "kw_c"]),
            ("activity_on", ["activity": "Coffee"]),
            ("activity_off", ["activity": "Gym"]),
            ("mark_read", ["channel": "chat:kw_a~kw_b", "offset": 2]),
            ("publish", ["channel": "room:kw", "data": ["text": "keyed"]]),
        ]
    }

    /// Ids of what the setup made, for the writes to act on.
    struct Setup {
        var firstPost = 0, secondPost = 0, lisbon = 0, porto = 0, keptPoint = 0, droppedPoint = 0, home = 0
    }

    @Test(arguments: ["kill", "sigterm"])
    func everyKeyedWriteHasExactlyOneEffectAcrossARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await DurableServer.start(restart == "sigterm" ? DurableServer.patientExit : [], dataDirectory: data)
        var clients: [String: V1Client] = [:]
        for name in ["a", "b", "c", "e", "f", "g", "d"] {
            let client = try V1Client(port: server.port)
            try client.ok("signup", ["username": "kw_\(name)", "email": "kw_\(name)@example.com", "password": Self.password])
            clients[name] = client
        }
        let alice = clients["a"]!
        for friend in ["b", "c"] {
            try alice.ok("friend_request", ["user": "kw_\(friend)"])
            try clients[friend]!.ok("friend_accept", ["user": "kw_a"])
        }
        try clients["e"]!.ok("friend_request", ["user": "kw_a"])
        try clients["f"]!.ok("friend_request", ["user": "kw_a"])
        try alice.ok("friend_request", ["user": "kw_g"])
        for n in 1...2 { try clients["b"]!.ok("publish", ["channel": "chat:kw_a~kw_b", "data": ["text": "m\(n)"]]) }
        var made = Setup()
        made.firstPost = try Self.id(alice.ok("post", ["text": "first"]), "post")
        made.secondPost = try Self.id(alice.ok("post", ["text": "second"]), "post")
        made.lisbon = try Self.id(alice.ok("memory_create", ["title": "Lisbon", "date": "2025-06-14"]), "memory")
        made.porto = try Self.id(alice.ok("memory_create", ["title": "Porto", "date": "2025-07-01"]), "memory")
        made.keptPoint = try Self.id(alice.ok("point_add", ["memory": made.lisbon, "time": 1000]), "point")
        made.droppedPoint = try Self.id(alice.ok("point_add", ["memory": made.lisbon, "time": 2000]), "point")
        made.home = try Self.id(alice.ok("place_set", ["label": "home", "lat": 10.0, "lon": 20.0, "radius": 100.0]), "place")
        try alice.ok("activity_on", ["activity": "Gym"])

        // Each write is answered, and the client is taken never to have seen the answer.
        var firstResults: [String: [String: Any]] = [:]
        for (op, arguments) in Self.writes(made) {
            firstResults[op] = try alice.ok(op, arguments.merging(["client_id": "k-\(op)"]) { $1 })
        }
        clients = [:]
        if restart == "kill" {
            server.kill9()
        } else {
            #expect(try await server.stop() == 0)
            #expect(server.logText.contains("shutdown snapshot written"))
        }

        let restarted = try await DurableServer.start(dataDirectory: data)
        let again = try V1Client(port: restarted.port)
        try again.ok("login", ["login": "kw_a", "password": Self.password])
        for (op, arguments) in Self.writes(made) {
            var retry = try again.ok(op, arguments.merging(["client_id": "k-\(op)"]) { $1 })
            #expect(retry.removeValue(forKey: "duplicate") as? Bool == true, "\(op): \(retry)")
            #expect(jsonEqual(retry, firstResults[op]), "\(op): the retry answers \(retry), the first answer was \(String(describing: firstResults[op]))")
        }
        let metrics = try PrometheusText.fetch(port: restarted.port)
        for (op, _) in Self.writes(made) {
            #expect(metrics.value("huddle_duplicate_writes_total", ["op": op]) == 1, "\(op)")
        }

        // Exactly one effect of each.
        let feed = try again.ok("feed", ["limit": 50])["posts"] as? [[String: Any]] ?? []
        #expect(feed.filter { $0["text"] as? String == "keyed post" }.count == 1, "post: \(feed)")
        #expect(!feed.contains { $0["id"] as? Int == made.secondPost }, "post_delete")
        let first = feed.first { $0["id"] as? Int == made.firstPost } ?? [:]
        #expect(first["comments"] as? Int == 1, "comment: \(first)")
        #expect(first["likes"] as? Int == 1 && first["liked"] as? Bool == true, "like: \(first)")
        let memories = try again.ok("memories")["memories"] as? [[String: Any]] ?? []
        #expect(memories.compactMap { $0["title"] as? String }.sorted() == ["Keyed", "Lisboa"], "memory_create, memory_update, memory_delete: \(memories)")
        let lisbon = try again.ok("memory", ["memory": made.lisbon])["memory"] as? [String: Any] ?? [:]
        let points = lisbon["points"] as? [[String: Any]] ?? []
        #expect(points.compactMap { $0["note"] as? String }.sorted() == ["keyed point", "updated"], "point_add, point_update, point_delete: \(points)")
        let places = try again.ok("places")["places"] as? [[String: Any]] ?? []
        #expect(places.compactMap { $0["label"] as? String } == ["work"], "place_set, place_remove: \(places)")
        let requests = try again.ok("friend_requests")
        #expect((requests["outgoing"] as? [[String: Any]] ?? []).compactMap { $0["user"] as? String } == ["kw_d"], "friend_request, friend_cancel: \(requests)")
        #expect((requests["incoming"] as? [[String: Any]] ?? []).isEmpty, "friend_accept, friend_decline: \(requests)")
        let friends = try again.ok("friends")["friends"] as? [[String: Any]] ?? []
        #expect(friends.compactMap { $0["username"] as? String } == ["kw_b", "kw_e"], "friend_accept, friend_remove: \(friends)")
        let notices = try again.fullHistory("inbox:kw_a").publications.compactMap { $0["type"] as? String }
        for type in ["friend_declined", "friend_cancelled", "friend_removed"] {
            #expect(notices.filter { $0 == type }.count == 1, "\(type) notices: \(notices)")
        }
        #expect(notices.filter { $0 == "friend_accepted" }.count == 3, "two setup friendships and the keyed accept: \(notices)")
        #expect(notices.filter { $0 == "friend_request" }.count == 6, "five in the setup and the keyed one: \(notices)")
        let mine = try again.ok("activities")["mine"] as? [[String: Any]] ?? []
        #expect(mine.compactMap { $0["activity"] as? String } == ["Coffee"], "activity_on, activity_off: \(mine)")
        let rooms = try again.ok("unread")["rooms"] as? [[String: Any]] ?? []
        #expect(rooms.first { $0["channel"] as? String == "chat:kw_a~kw_b" }?["read"] as? Int == 2, "mark_read: \(rooms)")
        #expect(try again.fullHistory("room:kw").publications.count == 1, "publish")
        #expect(try await restarted.stop() == 0)
    }

    /// A connection cut while a keyed write is on its way: whether or not the server took it,
    /// the write sent again on a new connection exists exactly once.
    @Test func aWriteSentAgainAfterACutConnectionExistsOnce() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await DurableServer.start(dataDirectory: data)
        let first = try V1Client(port: server.port)
        try first.ok("signup", ["username": "kw_cut", "email": "kw_cut@example.com", "password": Self.password])
        let request = try JSONSerialization.data(withJSONObject: ["id": "1", "op": "post", "text": "cut", "client_id": "c-1"])
        try first.raw.sendFrame(.text, Array(request))
        shutdown(first.raw.fd, Int32(SHUT_RDWR))
        let second = try V1Client(port: server.port)
        try second.ok("login", ["login": "kw_cut", "password": Self.password])
        let retry = try second.ok("post", ["text": "cut", "client_id": "c-1"])
        let feed = try second.ok("feed")["posts"] as? [[String: Any]] ?? []
        #expect(feed.count == 1 && feed.first?["text"] as? String == "cut", "\(feed)")
        #expect((retry["post"] as? [String: Any])?["id"] as? Int == feed.first?["id"] as? Int)
        #expect(try await server.stop() == 0)
    }

    static func id(_ result: [String: Any], _ member: String) throws -> Int {
        guard let object = result[member] as? [String: Any], let id = object["id"] as? Int else {
            throw TestFailure("no \(member).id in \(result)")
        }
        return id
    }
}

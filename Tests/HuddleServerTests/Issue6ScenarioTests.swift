import ChildProcessExit
import Foundation
import Testing

/// Issue 6's acceptance scenario, end to end against the real binary over real sockets: three
/// friends and a stranger. Two turn on Coffee and match at once, exactly once each, while the
/// third (Gym on) hears nothing; the third turns on Anything and matches both. One walks from
/// home to work with noisy fixes and a friend following her sees home → unknown → work, once
/// each, never a coordinate, while the stranger is refused. A memory with a photo made on one
/// of her devices appears on the other, which fetches the photo; nobody else can. A restart
/// keeps the matches, where she is, the memory and the photo.
@Suite(.ownThread) struct Issue6ScenarioTests {
    static let friendNames = ["ann", "ben", "cat"]
    /// ann's home is the walk's origin; work is 1.5 km away: 1200 m east, 900 m north.
    static let home = (latitude: SimulatedWalk.originLatitude, longitude: SimulatedWalk.originLongitude)
    static let work = (latitude: SimulatedWalk.latitude(north: 900), longitude: SimulatedWalk.longitude(east: 1_200))

    @Test func matchesAPlaceWalkAndAMemoryWithAPhotoWorkAndSurviveARestart() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var server = try await startHuddle(dataDirectory: data)

        // 1. ann, ben and cat sign up and all become friends; dan is nobody's friend. Each
        //    friendship tells both (online) sides the other is online; after that, silence.
        var clients: [String: ProtocolClient] = [:]
        var tokens: [String: String] = [:]
        for name in Self.friendNames + ["dan"] {
            let (client, token) = try ProtocolClient.signedUp(name, port: server.port)
            clients[name] = client
            tokens[name] = token
        }
        let (ann, ben, cat, dan) = (clients["ann"]!, clients["ben"]!, clients["cat"]!, clients["dan"]!)
        for (index, name) in Self.friendNames.enumerated() {
            for other in Self.friendNames[(index + 1)...] {
                try clients[name]!.ok("friend_request", ["user": other])
                try clients[other]!.ok("friend_accept", ["user": name])
            }
        }
        for name in Self.friendNames {
            let told = try (0..<2).map { _ in try clients[name]!.nextEvent("presence") }
            #expect(Set(told.map { "\($0["user"] as? String ?? "?") \(JSON.bool($0["online"]) == true)" })
                == Set(Self.friendNames.filter { $0 != name }.map { "\($0) true" }), "\(name)")
            try clients[name]!.subscribe("inbox:\(name)")
        }
        try await expectSilence(from: clients)

        // 2. cat turns Gym on; ann, then ben, turn Coffee on: ann and ben match at once, one
        //    notice each naming the other; cat hears nothing and has no match.
        try cat.ok("activity_on", ["activity": "Gym"])
        try ann.ok("activity_on", ["activity": "Coffee"])
        try await expectSilence(from: ["ann": ann])
        let beforeMatch = JSON.nowMilliseconds
        try ben.ok("activity_on", ["activity": "Coffee"])
        #expect(JSON.text(try matchNotice(ann, "ann")) == JSON.text(["user": "ben", "activity": "Coffee"]))
        #expect(JSON.text(try matchNotice(ben, "ben")) == JSON.text(["user": "ann", "activity": "Coffee"]))
        try await expectSilence(from: clients)
        #expect(try matches(of: cat).isEmpty)
        let annBen = try #require(try ann.ok("matches")["matches"] as? [JSONObject])
        #expect(annBen.map { "\($0["user"] as? String ?? "?") \($0["activity"] as? String ?? "?")" } == ["ben Coffee"])
        #expect(JSON.int(annBen.first?["since"]).map { $0 >= beforeMatch - 1_000 } == true, "the match began with ben's request")

        // 3. cat turns Anything on: cat matches both on Coffee; ann and ben each get one more
        //    notice, about cat, and nothing repeats their own match.
        try cat.ok("activity_on", ["activity": "Anything"])
        let catNotices = try (0..<2).map { _ in JSON.text(try matchNotice(cat, "cat")) }
        #expect(Set(catNotices) == [JSON.text(["user": "ann", "activity": "Coffee"]), JSON.text(["user": "ben", "activity": "Coffee"])])
        #expect(JSON.text(try matchNotice(ann, "ann")) == JSON.text(["user": "cat", "activity": "Coffee"]))
        #expect(JSON.text(try matchNotice(ben, "ben")) == JSON.text(["user": "cat", "activity": "Coffee"]))
        try await expectSilence(from: clients)
        #expect(try matches(of: ann) == ["cat Coffee", "ben Coffee"], "newest first")
        #expect(try matches(of: ben) == ["cat Coffee", "ann Coffee"])
        #expect(Set(try matches(of: cat)) == ["ann Coffee", "ben Coffee"])
        let matchesBefore = try Dictionary(uniqueKeysWithValues: Self.friendNames.map { ($0, JSON.text(try clients[$0]!.ok("matches"))) })

        // 4. ann defines home and work; ben follows loc:ann, dan is refused it and `where`.
        try ann.setPlace("home", latitude: Self.home.latitude, longitude: Self.home.longitude, radius: 100)
        let workID = try ann.setPlace("work", latitude: Self.work.latitude, longitude: Self.work.longitude, radius: 150)
        var benReceived: [JSONObject] = []
        let following = try ben.subscribe("loc:ann")
        benReceived.append(following)
        #expect((following["current"] as? JSONObject)?["place"] as? String == "unknown")
        #expect(try dan.errorCode("subscribe", ["channel": "loc:ann"]) == "forbidden")
        #expect(try dan.errorCode("where", ["user": "ann"]) == "forbidden")

        // 5. ann walks home → work, her phone reporting every 15 s (on a connection of its own,
        //    so the fixes stay within one burst of requests); the noise scatters the fixes at
        //    either end around the place's edge.
        var walk = SimulatedWalk(seed: 6)
        let fixes = walk.commute(east: 1_200, north: 900, dwell: 6, start: JSON.nowMilliseconds - 40 * 60_000)
        let walkingPhone = try ProtocolClient(port: server.port, credential: .header(tokens["ann"]!))
        var decided: [String] = []
        for fix in fixes {
            let result = try walkingPhone.ok("location_fix", fix.request)
            if JSON.bool(result["changed"]) == true { decided.append(result["place"] as? String ?? "?") }
        }
        #expect(decided == ["home", "unknown", "work"], "ann's own replies")

        // 6. ben sees each change exactly once, and nothing of what he receives has a coordinate.
        var seen: [String] = []
        var atWorkSince: Int?
        for _ in decided {
            let event = try ben.nextEvent("publication")
            benReceived.append(event)
            #expect(event["channel"] as? String == "loc:ann" && event["type"] as? String == "place" && event["from"] as? String == "ann")
            let change = event["data"] as? JSONObject
            seen.append(change?["place"] as? String ?? "?")
            atWorkSince = JSON.int(change?["since"])
        }
        #expect(seen == ["home", "unknown", "work"])
        try await expectSilence(from: ["ben": ben, "cat": cat, "dan": dan])
        let whereabouts = try ben.ok("where", ["user": "ann"])
        benReceived.append(whereabouts)
        #expect(whereabouts["place"] as? String == "work" && JSON.int(whereabouts["place_id"]) == workID)
        benReceived.append(try ben.ok("history", ["channel": "loc:ann"]))
        let coordinates = [Self.home.latitude, Self.home.longitude, Self.work.latitude, Self.work.longitude]
            + fixes.flatMap { [$0.latitude, $0.longitude] }
        for message in benReceived {
            let text = JSON.text(message)
            #expect(!text.contains("\"lat\"") && !text.contains("\"lon\""), "\(text)")
            for digits in coordinates.flatMap(Self.digitsOf) { #expect(!text.contains(digits), "\(digits) in \(text)") }
        }

        // 7. ann's laptop (device 1) uploads a photo and makes a memory with a point showing it;
        //    her phone (device 2, its own session) is told live and fetches the photo.
        let phone = try ProtocolClient(port: server.port)
        let phoneToken = try phone.login("ann")
        let bytes = PhotoRequest.photo(6)
        let hash = PhotoRequest.hash(bytes)
        let uploaded = try PhotoRequest.upload(bytes, token: tokens["ann"]!, port: server.port)
        #expect(uploaded.status == 201 && uploaded.json?["hash"] as? String == hash)
        let created = try ann.ok("memory_create", ["title": "First day at work", "date": "2025-09-01"])
        let memoryID = try #require(JSON.int((created["memory"] as? JSONObject)?["id"]))
        try ann.ok("point_add", ["memory": memoryID, "time": fixes.last!.time, "note": "made it", "photos": [hash]])
        let told = try (0..<2).map { _ in try phone.nextEvent("memory_changed") }
        #expect(told.map { $0["action"] as? String } == ["created", "point_added"])
        #expect(told.allSatisfy { JSON.int($0["memory_id"]) == memoryID })
        let shown = try #require((told[1]["point"] as? JSONObject)?["photos"] as? [String])
        #expect(shown == [hash])
        let fetched = try PhotoRequest.download(shown[0], token: phoneToken, port: server.port)
        #expect(fetched.status == 200 && fetched.body == bytes)

        // 8. Nobody else hears of the memory or can fetch the photo: not the stranger, and not
        //    a friend either (the photo is the owner's).
        try await expectSilence(from: ["ben": ben, "cat": cat, "dan": dan])
        for name in ["dan", "ben"] {
            let refused = try PhotoRequest.download(hash, token: tokens[name]!, port: server.port)
            #expect(refused.status == 404 && refused.errorCode == "photo_not_found", "\(name)")
        }
        let memoryBefore = JSON.text(try phone.ok("memory", ["memory": memoryID]))

        // 9. Restart on the same data: the matches, where ann is, the memory and the photo are
        //    all still there, and still hers alone.
        #expect(try await server.stop() == 0)
        server = try await startHuddle(dataDirectory: data)
        for name in Self.friendNames {
            let client = try ProtocolClient.authenticated(tokens[name]!, port: server.port)
            #expect(JSON.text(try client.ok("matches")) == matchesBefore[name], "\(name)")
        }
        let benAgain = try ProtocolClient.authenticated(tokens["ben"]!, port: server.port)
        let current = try #require(try benAgain.subscribe("loc:ann")["current"] as? JSONObject)
        #expect(current["place"] as? String == "work" && JSON.int(current["place_id"]) == workID)
        #expect(atWorkSince != nil && JSON.int(current["since"]) == atWorkSince)
        let phoneAgain = try ProtocolClient.authenticated(phoneToken, port: server.port)
        #expect(JSON.text(try phoneAgain.ok("memory", ["memory": memoryID])) == memoryBefore)
        let fetchedAgain = try PhotoRequest.download(hash, token: phoneToken, port: server.port)
        #expect(fetchedAgain.status == 200 && fetchedAgain.body == bytes)
        #expect(try PhotoRequest.download(hash, token: tokens["dan"]!, port: server.port).status == 404)
        #expect(try ProtocolClient.authenticated(tokens["dan"]!, port: server.port).errorCode("where", ["user": "ann"]) == "forbidden")
        #expect(try await server.stop() == 0)
    }

    // MARK: Steps

    /// The next event on `client` must be a `match` notice on `user`'s inbox; returns its data.
    private func matchNotice(_ client: ProtocolClient, _ user: String) throws -> JSONObject {
        let event = try client.nextEvent("publication")
        guard event["channel"] as? String == "inbox:\(user)", event["type"] as? String == "match", JSON.isNull(event["from"]),
              let data = event["data"] as? JSONObject
        else { throw TestFailure("expected a match notice on inbox:\(user), got \(JSON.text(event))") }
        return data
    }

    /// None of `clients` got an event from the requests made so far (a barrier per client:
    /// `eventsBeforeBarrier`), where a sleep could only hope they had arrived.
    private func expectSilence(
        from clients: [String: ProtocolClient], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (name, client) in clients.sorted(by: { $0.key < $1.key }) {
            let extra = try client.eventsBeforeBarrier()
            #expect(extra.isEmpty, "\(name) got \(extra.map(JSON.text))", sourceLocation: sourceLocation)
        }
    }

    /// `client`'s matches in force as "user activity", in the server's (default: newest first) order.
    private func matches(of client: ProtocolClient) throws -> [String] {
        let listed = try #require(try client.ok("matches")["matches"] as? [JSONObject])
        return listed.map { "\($0["user"] as? String ?? "?") \($0["activity"] as? String ?? "?")" }
    }

    /// How a coordinate would show in text, to three decimals: truncated and rounded (the two
    /// differ when the fourth decimal rounds up). Any form with three or more decimals
    /// contains one of them.
    private static func digitsOf(_ coordinate: Double) -> [String] {
        [String(format: "%.3f", (coordinate * 1000).rounded(.towardZero) / 1000), String(format: "%.3f", coordinate)]
    }
}

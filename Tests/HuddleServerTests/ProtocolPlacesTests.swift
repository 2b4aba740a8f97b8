import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Places and location", over real sockets against the real binary: every op and
/// its refusals, the family-clock walk seen by a follower (home → unknown → work, once each,
/// never a coordinate), strangers refused, and all of it across a restart.
@Suite(.ownThread) struct ProtocolPlacesTests {
    static let home = (latitude: SimulatedWalk.originLatitude, longitude: SimulatedWalk.originLongitude)
    /// 1.5 km from home: 1200 m east, 900 m north.
    static let work = (latitude: SimulatedWalk.latitude(north: 900), longitude: SimulatedWalk.longitude(east: 1_200))

    /// Foundation on Linux parses JSON numbers as decimals, whose conversion to `Double` may be
    /// off in the last bit; the server's own encoding round-trips exactly (the core tests).
    static func isNear(_ value: Any?, _ expected: Double) -> Bool {
        guard let number = value as? NSNumber, !JSON.isBool(number) else { return false }
        return abs(number.doubleValue - expected) < 1e-9
    }

    /// alice and bob, friends; carol, nobody's friend.
    private func signUpFriends(port: Int) throws -> (alice: (ProtocolClient, String), bob: (ProtocolClient, String), carol: ProtocolClient) {
        let alice = try ProtocolClient.signedUp("alice", port: port)
        let bob = try ProtocolClient.signedUp("bob", port: port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: port)
        try alice.0.ok("friend_request", ["user": "bob"])
        try bob.0.ok("friend_accept", ["user": "alice"])
        return (alice, bob, carol)
    }

    private func fix(_ client: ProtocolClient, latitude: Double, longitude: Double, accuracy: Double = 10, time: Int) throws -> JSONObject {
        try client.ok("location_fix", ["lat": latitude, "lon": longitude, "accuracy": accuracy, "time": time])
    }

    /// The `place` label of a publication event on `loc:USER`, checking its shape.
    private func placeLabel(_ event: JSONObject, of user: String) throws -> String {
        guard event["event"] as? String == "publication", event["channel"] as? String == "loc:\(user)", event["type"] as? String == "place",
              event["from"] as? String == user, let data = event["data"] as? JSONObject, let label = data["place"] as? String,
              JSON.int(data["since"]) != nil
        else { throw TestFailure("expected a place publication on loc:\(user), got \(JSON.text(event))") }
        return label
    }

    @Test func eachOpAndItsRefusals() async throws {
        let server = try await startHuddle()
        let (alice, bob, carol) = try signUpFriends(port: server.port)
        let me = alice.0

        let created = try me.ok("place_set", ["label": "home", "lat": Self.home.latitude, "lon": Self.home.longitude, "radius": 100])
        let home = try #require(created["place"] as? JSONObject)
        #expect(JSON.int(home["id"]) == 1 && home["label"] as? String == "home" && Self.isNear(home["lat"], Self.home.latitude))
        #expect(Self.isNear(home["lon"], Self.home.longitude) && home["radius"] as? Double == 100)
        try me.setPlace("work", latitude: Self.work.latitude, longitude: Self.work.longitude, radius: 150)
        let renamed = try me.ok("place_set", ["place_id": 2, "label": "office", "lat": Self.work.latitude, "lon": Self.work.longitude, "radius": 150])
        #expect((renamed["place"] as? JSONObject)?["label"] as? String == "office")

        for (arguments, message) in [
            (["label": "x", "lat": 90.5, "lon": 0, "radius": 100], "lat must be from -90 to 90 degrees"),
            (["label": "x", "lat": 0, "lon": -181, "radius": 100], "lon must be from -180 to 180 degrees"),
            (["label": "x", "lat": 0, "lon": 0, "radius": 5], "radius must be from 10 to 50000 metres"),
            (["label": "x", "lat": 0, "lon": 0, "radius": 60_000], "radius must be from 10 to 50000 metres"),
            (["label": "Traveling", "lat": 0, "lon": 0, "radius": 100], "label \"Traveling\" is reserved: it is what friends see at no place"),
            (["label": "", "lat": 0, "lon": 0, "radius": 100], "label must be 1 to 32 characters"),
            (["label": "x", "lat": "0", "lon": 0, "radius": 100], "lat must be a number"),
        ] as [(JSONObject, String)] {
            let error = try me.failure("place_set", arguments)
            #expect(error["code"] as? String == "bad_request" && error["message"] as? String == message, "\(JSON.text(arguments))")
        }
        #expect(try me.errorCode("place_set", ["place_id": 9, "label": "x", "lat": 0, "lon": 0, "radius": 100]) == "place_not_found")
        for index in 3...20 { try me.setPlace("p\(index)", latitude: 10, longitude: 10, radius: 10) }
        #expect(try me.errorCode("place_set", ["label": "p21", "lat": 0, "lon": 0, "radius": 100]) == "too_many_places")
        try me.ok("place_remove", ["place_id": 20])
        #expect(try me.errorCode("place_remove", ["place_id": 20]) == "place_not_found")
        #expect(try me.errorCode("place_remove", ["place_id": 1.5]) == "bad_request")

        let places = try #require(try me.ok("places")["places"] as? [JSONObject])
        #expect(places.compactMap { JSON.int($0["id"]) } == Array(1...19))
        #expect(Self.isNear(places[1]["lat"], Self.work.latitude), "the owner sees coordinates")
        #expect((try me.ok("places", ["user": "Alice"])["places"] as? [JSONObject])?.count == 19)
        #expect(try bob.0.errorCode("places", ["user": "alice"]) == "forbidden", "not even a friend sees them")
        #expect(try bob.0.errorCode("places", ["user": "nobody"]) == "user_not_found")
        #expect((try bob.0.ok("places")["places"] as? [JSONObject])?.isEmpty == true)

        // Ten seconds in the past: a decision's `since` is the reported time only when that is
        // not later than the server's clock (otherwise the server's), so times a few ms after a
        // fresh `now` made the test depend on how fast the server answered.
        let now = JSON.nowMilliseconds - 10_000
        let first = try fix(me, latitude: Self.home.latitude, longitude: Self.home.longitude, time: now - 1_000)
        #expect(first["place"] as? String == "home" && JSON.int(first["place_id"]) == 1 && JSON.int(first["since"]) == now - 1_000)
        #expect(JSON.bool(first["changed"]) == true && first["ignored"] == nil)
        let again = try fix(me, latitude: Self.home.latitude, longitude: Self.home.longitude, time: now)
        #expect(JSON.bool(again["changed"]) == false && again["ignored"] == nil)
        let stale = try fix(me, latitude: Self.work.latitude, longitude: Self.work.longitude, time: now - 500)
        #expect(stale["place"] as? String == "home" && JSON.bool(stale["changed"]) == false && JSON.bool(stale["ignored"]) == true)
        let ahead = try me.failure("location_fix", ["lat": 0, "lon": 0, "accuracy": 5, "time": now + 600_000])
        #expect(ahead["code"] as? String == "bad_request" && ahead["message"] as? String == "time is more than 5 minutes ahead of the server's clock")
        #expect(try me.errorCode("location_fix", ["lat": 0, "lon": 0, "accuracy": -3, "time": now]) == "bad_request")
        #expect(try me.errorCode("location_fix", ["lat": 0, "lon": 0, "time": now]) == "bad_request")

        let entered = try me.ok("region", ["place_id": 2, "event": "enter", "time": now + 1])
        #expect(entered["place"] as? String == "office" && JSON.int(entered["place_id"]) == 2 && JSON.bool(entered["changed"]) == true)
        #expect(try me.errorCode("region", ["place_id": 77, "event": "enter", "time": now + 2]) == "place_not_found")
        #expect(try me.errorCode("region", ["place_id": 2, "event": "arrive", "time": now + 2]) == "bad_request")
        let left = try me.ok("region", ["place_id": 2, "event": "exit", "time": now + 3])
        #expect(left["place"] as? String == "unknown" && left["place_id"] == nil && JSON.int(left["since"]) == now + 3)

        let seen = try bob.0.ok("where", ["user": "ALICE"])
        #expect(seen["user"] as? String == "alice" && seen["place"] as? String == "unknown" && JSON.int(seen["since"]) == now + 3)
        #expect(try me.ok("where", ["user": "alice"])["place"] as? String == "unknown")
        #expect(try carol.errorCode("where", ["user": "alice"]) == "forbidden")
        #expect(try carol.errorCode("where", ["user": "nobody"]) == "user_not_found")
        #expect(try carol.errorCode("subscribe", ["channel": "loc:alice"]) == "forbidden")
        #expect(try me.errorCode("publish", ["channel": "loc:alice", "data": ["place": "home"]]) == "forbidden")

        let anonymous = try ProtocolClient(port: server.port)
        for op in ["place_set", "place_remove", "places", "location_fix", "region", "where"] {
            let arguments: JSONObject = ["label": "x", "lat": 0, "lon": 0, "radius": 100, "place_id": 1, "accuracy": 5, "time": now, "event": "enter", "user": "alice"]
            #expect(try anonymous.errorCode(op, arguments) == "not_authenticated", "\(op)")
        }
    }

    /// Every value in `message` that a follower might read: keys and numbers. A coordinate would
    /// be a fractional number or sit under a coordinate key.
    private func leaks(in value: Any, path: String = "") -> [String] {
        switch value {
        case let object as JSONObject:
            return object.flatMap { key, member -> [String] in
                let here = ["lat", "lon", "latitude", "longitude", "accuracy"].contains(key) ? ["key \(path).\(key)"] : []
                return here + leaks(in: member, path: "\(path).\(key)")
            }
        case let array as [Any]:
            return array.enumerated().flatMap { leaks(in: $1, path: "\(path)[\($0)]") }
        case let number as NSNumber where !JSON.isBool(number):
            return JSON.int(number) == nil ? ["fractional number \(number) at \(path)"] : []
        default:
            return []
        }
    }

    /// The scenario of issue 6: a walker goes from home to work with realistic fixes (noise at
    /// the edges, a resent old fix on the way); a friend following `loc:walker` sees home →
    /// unknown → work exactly once each, and never a coordinate. A stranger is refused.
    @Test func aFollowerSeesHomeUnknownWorkOnceEachAndNeverACoordinate() async throws {
        let server = try await startHuddle()
        let (walker, token) = try ProtocolClient.signedUp("walker", port: server.port)
        let (follower, _) = try ProtocolClient.signedUp("follower", port: server.port)
        let (stranger, _) = try ProtocolClient.signedUp("stranger", port: server.port)
        try walker.ok("friend_request", ["user": "follower"])
        try follower.ok("friend_accept", ["user": "walker"])
        try walker.setPlace("home", latitude: Self.home.latitude, longitude: Self.home.longitude, radius: 100)
        try walker.setPlace("work", latitude: Self.work.latitude, longitude: Self.work.longitude, radius: 150)

        var received: [JSONObject] = []
        let subscribed = try follower.subscribe("loc:walker")
        received.append(subscribed)
        let current = try #require(subscribed["current"] as? JSONObject)
        #expect(current["place"] as? String == "unknown" && JSON.isNull(current["since"]))
        #expect(try stranger.errorCode("subscribe", ["channel": "loc:walker"]) == "forbidden")
        #expect(try stranger.errorCode("where", ["user": "walker"]) == "forbidden")

        // 6 fixes at home, 1.5 km at 1.4 m/s with a fix every 15 s, 6 fixes at work.
        var walk = SimulatedWalk(seed: 6)
        var fixes: [SimulatedWalk.Fix] = []
        var time = JSON.nowMilliseconds - 40 * 60_000
        for _ in 0..<6 {
            time += 15_000
            fixes.append(walk.fix(east: 0, north: 0, time: time))
        }
        let steps = Int((1_500 / 21.0).rounded(.up))
        for step in 1...steps {
            time += 15_000
            let part = min(1, Double(step) * 21 / 1_500)
            fixes.append(walk.fix(east: 1_200 * part, north: 900 * part, time: time))
        }
        for _ in 0..<6 {
            time += 15_000
            fixes.append(walk.fix(east: 1_200, north: 900, time: time))
        }
        // The phone resends an old fix from home half-way: it is ignored.
        let resent = fixes[3]
        fixes.insert(resent, at: 40)

        // A connection of its own for the walk, so the requests stay within one burst.
        let phone = try ProtocolClient(port: server.port, credential: .header(token))
        var labels: [String] = []
        for (index, fix) in fixes.enumerated() {
            let result = try phone.ok("location_fix", fix.request)
            if index == 40 { #expect(JSON.bool(result["ignored"]) == true && JSON.bool(result["changed"]) == false) }
            if JSON.bool(result["changed"]) == true, let label = result["place"] as? String { labels.append(label) }
        }
        #expect(labels == ["home", "unknown", "work"], "the walker's own replies")

        var seen: [String] = []
        while let event = try follower.eventIfAny(within: 1) {
            received.append(event)
            // Presence comes with the friendship; everything else must be a place change.
            if event["event"] as? String != "presence" { seen.append(try placeLabel(event, of: "walker")) }
        }
        #expect(seen == ["home", "unknown", "work"])
        let whereabouts = try follower.ok("where", ["user": "walker"])
        received.append(whereabouts)
        #expect(whereabouts["place"] as? String == "work" && JSON.int(whereabouts["place_id"]) == 2)
        let history = try follower.ok("history", ["channel": "loc:walker"])
        received.append(history)
        #expect((history["publications"] as? [JSONObject])?.count == 3)

        // Never a coordinate: no coordinate key, no fractional number, and no coordinate's
        // digits anywhere in what the follower received.
        let coordinates = [Self.home.latitude, Self.home.longitude, Self.work.latitude, Self.work.longitude]
            + fixes.flatMap { [$0.latitude, $0.longitude] }
        for message in received {
            #expect(leaks(in: message).isEmpty, "\(leaks(in: message))")
            let text = JSON.text(message)
            for coordinate in coordinates { #expect(!text.contains(String(format: "%.3f", coordinate)), "\(text)") }
        }
    }

    /// Places, the decided place, the order of reports and the evidence of the last fixes all
    /// survive a restart, graceful or SIGKILL.
    @Test(arguments: ["graceful", "kill"])
    func everythingSurvivesARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let now = JSON.nowMilliseconds
        let away = (latitude: SimulatedWalk.latitude(north: 500), longitude: SimulatedWalk.originLongitude)
        var tokens: (alice: String, bob: String) = ("", "")
        do {
            let server = try await startHuddle(dataDirectory: data, fsync: "always")
            let (alice, bob, _) = try signUpFriends(port: server.port)
            tokens = (alice.1, bob.1)
            try alice.0.setPlace("home", latitude: Self.home.latitude, longitude: Self.home.longitude, radius: 100)
            try alice.0.setPlace("work", latitude: Self.work.latitude, longitude: Self.work.longitude, radius: 150)
            try alice.0.ok("place_remove", ["place_id": 2])
            _ = try fix(alice.0, latitude: Self.home.latitude, longitude: Self.home.longitude, time: now - 60_000)
            _ = try fix(alice.0, latitude: Self.home.latitude, longitude: Self.home.longitude, time: now - 45_000)
            // 500 m away: one fix is not enough to leave (the next must agree).
            let first = try fix(alice.0, latitude: away.latitude, longitude: away.longitude, time: now - 30_000)
            #expect(first["place"] as? String == "home" && JSON.bool(first["changed"]) == false)
            if restart == "graceful" {
                #expect(try await server.stop() == 0)
            } else {
                try await server.kill9()
            }
        }
        let server = try await startHuddle(dataDirectory: data)
        let alice = try ProtocolClient.authenticated(tokens.alice, port: server.port)
        let bob = try ProtocolClient.authenticated(tokens.bob, port: server.port)

        let subscribed = try bob.subscribe("loc:alice")
        let current = try #require(subscribed["current"] as? JSONObject)
        #expect(current["place"] as? String == "home" && JSON.int(current["since"]) == now - 60_000, "\(restart)")
        #expect(JSON.int(subscribed["offset"]) == 1)
        #expect(try bob.ok("where", ["user": "alice"])["place"] as? String == "home")
        let places = try #require(try alice.ok("places")["places"] as? [JSONObject])
        #expect(places.count == 1 && Self.isNear(places[0]["lat"], Self.home.latitude) && places[0]["radius"] as? Double == 100)
        #expect(try alice.setPlace("school", latitude: 1, longitude: 1, radius: 200) == 3, "ids are not reused after a restart")

        // The last accepted time survived: an older fix is still ignored.
        let stale = try fix(alice, latitude: away.latitude, longitude: away.longitude, time: now - 40_000)
        #expect(JSON.bool(stale["ignored"]) == true)
        // The fix from before the restart is the evidence this one needs to leave home.
        let left = try fix(alice, latitude: away.latitude, longitude: away.longitude, time: now - 15_000)
        #expect(left["place"] as? String == "unknown" && JSON.bool(left["changed"]) == true)
        #expect(try placeLabel(try bob.nextEvent("publication"), of: "alice") == "unknown")
        // Friendship still gates it.
        #expect(try ProtocolClient.signedUp("carol2", port: server.port).0.errorCode("where", ["user": "alice"]) == "forbidden")
    }
}

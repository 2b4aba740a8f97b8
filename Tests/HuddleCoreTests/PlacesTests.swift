import Foundation
@testable import HuddleCore
import HuddleProtocol
import Testing

/// Places and location through the core (protocol.md, "Places and location"): the ops and
/// their refusals, `place` publications to followers (never a coordinate), `where`, the current
/// place on subscribe, ordering of reports, and durability (replay, Codable).
@Suite struct PlacesTests {
    /// alice and bob are friends; carol is nobody's.
    private func setUp() -> (CoreHarness, alice: ConnectionRef, bob: ConnectionRef, carol: ConnectionRef) {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (carol, _) = harness.signUp("carol")
        harness.makeFriends("alice", "bob")
        return (harness, alice, bob, carol)
    }

    @discardableResult
    private func setPlace(
        _ harness: CoreHarness, _ connection: ConnectionRef, id: UInt64? = nil, _ label: String, east: Double = 0, north: Double = 0,
        radius: Double = 100
    ) -> CoreStep {
        harness.handle(.setPlace(
            connection, requestID: "ps", id: id, label: label, latitude: SimulatedFixes.latitude(north: north),
            longitude: SimulatedFixes.longitude(east: east), radius: radius))
    }

    @discardableResult
    private func fix(_ harness: CoreHarness, _ connection: ConnectionRef, east: Double, accuracy: Double = 10, time: Int64? = nil) -> CoreStep {
        let fix = SimulatedFixes.exact(east: east, accuracy: accuracy, time: time ?? harness.time)
        return harness.handle(.reportLocation(
            connection, requestID: "fx", latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy, time: fix.time))
    }

    /// The `place` publications the step delivered, as (data, recipients).
    private func placeDeliveries(_ step: CoreStep) -> [(String, [ConnectionRef])] {
        step.outputs.compactMap { output in
            guard case let .deliver(publication, recipients) = output, publication.type == "place" else { return nil }
            return (publication.data, recipients)
        }
    }

    // MARK: Validation

    /// (label, lat, lon, radius, the bad_request message or nil when accepted).
    @Test(arguments: [
        ("home", 48.0, 2.0, 100.0, nil),
        ("h", -90.0, -180.0, 10.0, nil),
        (String(repeating: "é", count: 32), 90.0, 180.0, 50_000.0, nil),
        ("Le Café ☕", 0.0, 0.0, 10.0, nil),
        ("", 48.0, 2.0, 100.0, "label must be 1 to 32 characters"),
        (String(repeating: "x", count: 33), 48.0, 2.0, 100.0, "label must be 1 to 32 characters"),
        ("two\nlines", 48.0, 2.0, 100.0, "label must not contain control characters"),
        ("Unknown", 48.0, 2.0, 100.0, "label \"Unknown\" is reserved: it is what friends see at no place"),
        ("TRAVELING", 48.0, 2.0, 100.0, "label \"TRAVELING\" is reserved: it is what friends see at no place"),
        ("home", 90.000001, 2.0, 100.0, "lat must be from -90 to 90 degrees"),
        ("home", -91.0, 2.0, 100.0, "lat must be from -90 to 90 degrees"),
        ("home", .nan, 2.0, 100.0, "lat must be from -90 to 90 degrees"),
        ("home", 48.0, 180.5, 100.0, "lon must be from -180 to 180 degrees"),
        ("home", 48.0, -.infinity, 100.0, "lon must be from -180 to 180 degrees"),
        ("home", 48.0, 2.0, 9.99, "radius must be from 10 to 50000 metres"),
        ("home", 48.0, 2.0, 50_000.5, "radius must be from 10 to 50000 metres"),
        ("home", 48.0, 2.0, .infinity, "radius must be from 10 to 50000 metres"),
    ] as [(String, Double, Double, Double, String?)])
    func placeValidation(label: String, latitude: Double, longitude: Double, radius: Double, refusal: String?) {
        let (harness, alice, _, _) = setUp()
        let step = harness.handle(.setPlace(alice, requestID: "ps", id: nil, label: label, latitude: latitude, longitude: longitude, radius: radius))
        if let refusal {
            #expect(step.error == CoreError(.badRequest, refusal))
            #expect(step.commands.isEmpty)
        } else {
            #expect(step.replies == [.place(Place(id: 1, label: label, latitude: latitude, longitude: longitude, radius: radius))])
        }
    }

    /// (lat, lon, accuracy, milliseconds after the server's clock, the bad_request message or nil).
    @Test(arguments: [
        (48.0, 2.0, 0.0, 0, nil),
        (48.0, 2.0, 100_000.0, 300_000, nil),
        (48.0, 2.0, 10.0, 300_001, "time is more than 5 minutes ahead of the server's clock"),
        (48.0, 2.0, -1.0, 0, "accuracy must be from 0 to 100000 metres"),
        (48.0, 2.0, 100_000.5, 0, "accuracy must be from 0 to 100000 metres"),
        (48.0, 2.0, .nan, 0, "accuracy must be from 0 to 100000 metres"),
        (-90.5, 2.0, 10.0, 0, "lat must be from -90 to 90 degrees"),
        (48.0, 181.0, 10.0, 0, "lon must be from -180 to 180 degrees"),
    ] as [(Double, Double, Double, Int64, String?)])
    func fixValidation(latitude: Double, longitude: Double, accuracy: Double, ahead: Int64, refusal: String?) {
        let (harness, alice, _, _) = setUp()
        let step = harness.handle(.reportLocation(alice, requestID: "fx", latitude: latitude, longitude: longitude, accuracy: accuracy, time: harness.time + ahead))
        if let refusal {
            #expect(step.error == CoreError(.badRequest, refusal))
            #expect(step.commands.isEmpty)
        } else {
            #expect(step.errorCode == nil)
            #expect(step.commands.count == 1)
        }
    }

    @Test func anonymousConnectionsAreRefused() {
        let (harness, _, _, _) = setUp()
        let anonymous = harness.connect()
        #expect(setPlace(harness, anonymous, "home").errorCode == .notAuthenticated)
        #expect(fix(harness, anonymous, east: 0).errorCode == .notAuthenticated)
        #expect(harness.handle(.locate(anonymous, requestID: "w", user: "alice")).errorCode == .notAuthenticated)
        #expect(harness.handle(.listPlaces(anonymous, requestID: "l", user: nil)).errorCode == .notAuthenticated)
    }

    // MARK: Places

    @Test func placesAreTheOwnersAndBounded() {
        let (harness, alice, bob, _) = setUp()
        #expect(setPlace(harness, alice, "home").replies.first == .place(SimulatedFixes.place(1, "home", radius: 100)))
        #expect(setPlace(harness, alice, "work", east: 2_000, radius: 150).replies.first == .place(SimulatedFixes.place(2, "work", east: 2_000, radius: 150)))
        // Ids are per user.
        #expect(setPlace(harness, bob, "gym").replies.first == .place(SimulatedFixes.place(1, "gym", radius: 100)))
        // Replacing: same id; the same values again change (and log) nothing.
        let moved = setPlace(harness, alice, id: 2, "office", east: 2_100, radius: 150)
        #expect(moved.replies.first == .place(SimulatedFixes.place(2, "office", east: 2_100, radius: 150)))
        #expect(moved.commands.count == 1)
        #expect(setPlace(harness, alice, id: 2, "office", east: 2_100, radius: 150).commands.isEmpty)
        #expect(setPlace(harness, alice, id: 7, "nowhere").error == CoreError(.placeNotFound, "you have no place 7"))
        #expect(setPlace(harness, bob, id: 2, "theirs").errorCode == .placeNotFound, "alice's place 2 is not bob's")

        #expect(harness.handle(.removePlace(bob, requestID: "rm", id: 2)).errorCode == .placeNotFound)
        #expect(harness.handle(.removePlace(alice, requestID: "rm", id: 1)).replies == [.done])
        #expect(harness.handle(.removePlace(alice, requestID: "rm", id: 1)).errorCode == .placeNotFound)
        // Ids are never reused; at most 20 places.
        for index in 0..<19 { #expect(setPlace(harness, alice, "p\(index)").replies.first.map { if case .place(let p) = $0 { p.id } else { 0 } } == UInt64(3 + index)) }
        #expect(setPlace(harness, alice, "one too many").error == CoreError(.tooManyPlaces, "at most 20 places; remove one first"))
        #expect(harness.core.durableState.places["alice"]?.places.count == 20)

        guard case .places(let list)? = harness.handle(.listPlaces(alice, requestID: "l", user: nil)).replies.first else {
            Issue.record("no list")
            return
        }
        #expect(list.map(\.id) == Array(2...21))
        #expect(harness.handle(.listPlaces(alice, requestID: "l", user: "ALICE")).replies == [.places(list)])
        #expect(harness.handle(.listPlaces(bob, requestID: "l", user: "alice")).error == CoreError(.forbidden, "only alice may see alice's places"))
        #expect(harness.handle(.listPlaces(bob, requestID: "l", user: "nobody")).errorCode == .userNotFound)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    // MARK: Location

    @Test func fixesDecideThePlaceAndFollowersHearOfChangesOnly() {
        let (harness, alice, bob, _) = setUp()
        setPlace(harness, alice, "home")
        setPlace(harness, alice, "work", east: 2_000, radius: 150)
        let nowhere = DecidedPlace(label: "unknown", placeID: nil, since: nil)
        guard case .locationSubscribed(_, _, _, _, _, nowhere)? = harness.subscribe(bob, "loc:alice") else {
            Issue.record("no current place on subscribe")
            return
        }
        let arrived = harness.time
        let first = fix(harness, alice, east: 10)
        let home = DecidedPlace(label: "home", placeID: 1, since: arrived)
        #expect(first.replies == [.location(home, changed: true, ignored: false)])
        #expect(placeDeliveries(first).map(\.0) == [#"{"place":"home","place_id":1,"since":\#(arrived)}"#])
        #expect(placeDeliveries(first).map(\.1) == [[bob]])
        #expect(first.commands.count == 2, "the decided state and the publication")
        guard case .deliver(let publication, _)? = first.outputs.first(where: { if case .deliver = $0 { true } else { false } }) else { return }
        #expect(publication.from == "alice" && publication.channel == "loc:alice")

        harness.advance(15_000)
        let again = fix(harness, alice, east: -20)
        #expect(again.replies == [.location(home, changed: false, ignored: false)])
        #expect(placeDeliveries(again).isEmpty && again.commands.count == 1)

        // Reports that are not newer than the last accepted one are ignored: nothing is logged.
        let stale = fix(harness, alice, east: 2_000, time: harness.time - 1)
        #expect(stale.replies == [.location(home, changed: false, ignored: true)] && stale.commands.isEmpty)
        #expect(fix(harness, alice, east: 2_000, time: harness.time).commands.isEmpty, "a resent fix (same time)")

        // Off to work: unknown, then work.
        harness.advance(15_000)
        fix(harness, alice, east: 1_000)
        harness.advance(15_000)
        let left = fix(harness, alice, east: 1_000)
        #expect(left.replies == [.location(DecidedPlace(label: "unknown", placeID: nil, since: harness.time), changed: true, ignored: false)])
        #expect(placeDeliveries(left).map(\.0) == [#"{"place":"unknown","since":\#(harness.time)}"#])
        harness.advance(600_000)
        fix(harness, alice, east: 2_000)
        harness.advance(15_000)
        let atWork = fix(harness, alice, east: 2_010)
        #expect(placeDeliveries(atWork).map(\.0) == [#"{"place":"work","place_id":2,"since":\#(harness.time)}"#])

        let history = harness.handle(.history(bob, requestID: "h", channel: "loc:alice", before: nil, limit: 10))
        guard case .history(_, _, _, let publications, _)? = history.replies.first else {
            Issue.record("no history")
            return
        }
        #expect(publications.map(\.type) == ["place", "place", "place"])
        #expect(publications.allSatisfy { !$0.data.contains("lat") && !$0.data.contains("48.") && !$0.data.contains("2.35") })
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func aFollowerSeesThePlaceAtOnceOnSubscribe() {
        let (harness, alice, bob, _) = setUp()
        setPlace(harness, alice, "home")
        let since = harness.time
        fix(harness, alice, east: 0)
        harness.advance(3 * CoreHarness.day)  // the publication itself is out of loc:'s history
        let current = DecidedPlace(label: "home", placeID: 1, since: since)
        guard case .locationSubscribed("loc:alice", _, 1, nil, [], current)? = harness.subscribe(bob, "loc:alice") else {
            Issue.record("\(String(describing: harness.subscribe(bob, "loc:alice")))")
            return
        }
        #expect(harness.handle(.locate(bob, requestID: "w", user: "Alice")).replies == [.whereabouts(user: "alice", current)])
        #expect(harness.handle(.locate(alice, requestID: "w", user: "alice")).replies == [.whereabouts(user: "alice", current)])
        // Other channels are as they were.
        #expect(harness.subscribe(bob, "room:lobby") == .subscribed(channel: "room:lobby", epoch: "", offset: 0, recovered: nil, publications: []))
    }

    @Test func strangersLearnNothing() {
        let (harness, alice, _, carol) = setUp()
        setPlace(harness, alice, "home")
        fix(harness, alice, east: 0)
        #expect(harness.handle(.locate(carol, requestID: "w", user: "alice")).error == CoreError(.forbidden, "only alice and their friends may see where alice is"))
        #expect(harness.handle(.locate(carol, requestID: "w", user: "nobody")).errorCode == .userNotFound)
        #expect(harness.handle(.subscribe(carol, requestID: "s", channel: "loc:alice", since: nil)).errorCode == .forbidden)
        // Nobody publishes to loc: but the server, not even its owner.
        #expect(harness.publish(alice, "loc:alice", #"{"lat":48.8}"#, type: "place").error
            == CoreError(.forbidden, "the server publishes location changes to loc:alice; alice sends location_fix or region"))
    }

    @Test func renamingOrRemovingTheCurrentPlaceTellsFollowers() {
        let (harness, alice, bob, _) = setUp()
        setPlace(harness, alice, "home")
        setPlace(harness, alice, "work", east: 2_000)
        let since = harness.time
        fix(harness, alice, east: 0)
        _ = harness.subscribe(bob, "loc:alice")
        harness.advance(1_000)
        let renamed = setPlace(harness, alice, id: 1, "Home sweet home")
        #expect(placeDeliveries(renamed).map(\.0) == [#"{"place":"Home sweet home","place_id":1,"since":\#(since)}"#])
        #expect(placeDeliveries(setPlace(harness, alice, id: 2, "office", east: 2_000)).isEmpty, "not where alice is")
        #expect(placeDeliveries(setPlace(harness, alice, id: 1, "Home sweet home", east: 5)).isEmpty, "moved, not renamed")
        let removed = harness.handle(.removePlace(alice, requestID: "rm", id: 1))
        #expect(placeDeliveries(removed).map(\.0) == [#"{"place":"unknown","since":\#(harness.time)}"#])
        #expect(harness.core.durableState.places["alice"]?.location.current == .unknown)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func regionEventsMoveTheUserAtOnce() {
        let (harness, alice, bob, _) = setUp()
        setPlace(harness, alice, "home")
        setPlace(harness, alice, "school", east: 3_000, radius: 200)
        _ = harness.subscribe(bob, "loc:alice")
        #expect(harness.handle(.reportRegion(alice, requestID: "r", placeID: 9, entered: true, time: harness.time)).error
            == CoreError(.placeNotFound, "you have no place 9"))
        #expect(harness.handle(.reportRegion(alice, requestID: "r", placeID: 1, entered: true, time: harness.time + 300_001)).errorCode == .badRequest)
        let entered = harness.handle(.reportRegion(alice, requestID: "r", placeID: 2, entered: true, time: harness.time - 5_000))
        #expect(entered.replies == [.location(DecidedPlace(label: "school", placeID: 2, since: harness.time - 5_000), changed: true, ignored: false)])
        #expect(placeDeliveries(entered).count == 1)
        // An older report, fix or region, is ignored.
        #expect(fix(harness, alice, east: 0, time: harness.time - 6_000).replies.first
            == .location(DecidedPlace(label: "school", placeID: 2, since: harness.time - 5_000), changed: false, ignored: true))
        harness.advance(60_000)
        #expect(placeDeliveries(harness.handle(.reportRegion(alice, requestID: "r", placeID: 1, entered: false, time: harness.time))).isEmpty)
        harness.advance(60_000)
        let left = harness.handle(.reportRegion(alice, requestID: "r", placeID: 2, entered: false, time: harness.time))
        #expect(placeDeliveries(left).map(\.0) == [#"{"place":"unknown","since":\#(harness.time)}"#])
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    // MARK: Durability

    /// A walk with every kind of places command: replay and a Codable round trip rebuild the
    /// same state, and encoding is deterministic.
    @Test func replayAndCodableRoundTrip() throws {
        let (harness, alice, bob, _) = setUp()
        setPlace(harness, alice, "home")
        setPlace(harness, alice, "work", east: 1_500, radius: 150)
        setPlace(harness, bob, "gym", north: 800)
        var fixes = SimulatedFixes(seed: 42)
        for step in 0...(1_500 / 14) {
            harness.advance(10_000)
            let noisy = fixes.fix(east: Double(step) * 14, time: harness.time)
            harness.handle(.reportLocation(alice, requestID: "fx", latitude: noisy.latitude, longitude: noisy.longitude, accuracy: noisy.accuracy, time: noisy.time))
            if step == 50 { harness.handle(.removePlace(bob, requestID: "rm", id: 1)) }
        }
        #expect(harness.handle(.reportRegion(bob, requestID: "r", placeID: 1, entered: true, time: harness.time)).errorCode == .placeNotFound)
        let state = harness.core.durableState
        #expect(state.places["alice"]?.location.current == .place(id: 2))
        #expect(state.places["alice"]?.location.track.count == 2)
        #expect(harness.replayed().durableState == state)

        let bytes = state.snapshotPayload
        #expect(try CoreDurableState(snapshotPayload: bytes) == state)
        #expect(try CoreDurableState(snapshotPayload: bytes).snapshotPayload == bytes)
        // A snapshot from before places loads with none.
        var old = try #require(try JSONSerialization.jsonObject(with: Data(bytes.dropFirst())) as? [String: Any])
        old["places"] = nil
        let decodedOld = try RecordCoding.state(String(decoding: JSONSerialization.data(withJSONObject: old), as: UTF8.self))
        #expect(decodedOld.places == Places() && decodedOld.accounts == state.accounts)
    }

    @Test func aDamagedPlacesSnapshotIsRefused() throws {
        let location = #"{"current":{"unknown":{}},"track":[]}"#
        let place = { (id: Int) in #"{"id":\#(id),"label":"x","latitude":1,"longitude":2,"radius":10}"# }
        let unsorted = #"[{"user":"alice","places":{"nextID":5,"location":\#(location),"places":[\#(place(2)),\#(place(1))]}}]"#
        let stale = #"[{"user":"alice","places":{"nextID":2,"location":\#(location),"places":[\#(place(2))]}}]"#
        let twice = #"[{"user":"alice","places":{"nextID":2,"location":\#(location),"places":[]}},{"user":"alice","places":{"nextID":2,"location":\#(location),"places":[]}}]"#
        for text in [unsorted, stale, twice] {
            #expect(throws: RecordDecodingError.self) { try RecordCoding.value(Places.self, text) }
        }
        let sound = #"[{"user":"alice","places":{"nextID":3,"location":\#(location),"places":[\#(place(1)),\#(place(2))]}}]"#
        #expect(try RecordCoding.value(Places.self, sound)["alice"]?.places.map(\.id) == [1, 2])
    }
}

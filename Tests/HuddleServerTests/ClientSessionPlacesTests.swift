import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient's typed place calls (protocol.md, "Places and location") against the real
/// server, and how a follower learns a friend's place: `current` on subscribe (as an event
/// too), each change as a publication, and both again across a reconnect.
@Suite(.ownThread) struct ClientSessionPlacesTests {
    static let home = (latitude: SimulatedWalk.originLatitude, longitude: SimulatedWalk.originLongitude)
    /// 1.5 km from home.
    static let work = (latitude: SimulatedWalk.latitude(north: 900), longitude: SimulatedWalk.longitude(east: 1_200))

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test func placesReportsAndFollowingAFriend() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let alice = try await ClientHarness.signedUp("alice", url: proxy.url)
        let bob = try await ClientHarness.signedUp("bob", url: server.url)
        let carol = try await ClientHarness.signedUp("carol", url: server.url)
        try await alice.befriend("alice", bob, "bob")

        // bob's places: only bob sees them, coordinates and all.
        let home = try await bob.ok("home") { $0.setPlace(label: "home", latitude: Self.home.latitude, longitude: Self.home.longitude, radius: 100, completion: $1) }
        #expect(home == Place(id: 1, label: "home", latitude: Self.home.latitude, longitude: Self.home.longitude, radius: 100))
        let work = try await bob.ok("work") { $0.setPlace(label: "work", latitude: Self.work.latitude, longitude: Self.work.longitude, radius: 150, completion: $1) }
        let office = try await bob.ok("rename") {
            $0.setPlace(id: work.id, label: "office", latitude: Self.work.latitude, longitude: Self.work.longitude, radius: 150, completion: $1)
        }
        #expect(office.id == 2 && office.label == "office")
        #expect(try await bob.ok("places") { $0.places(completion: $1) } == [home, office])
        #expect(try await bob.failure { $0.removePlace(9, completion: $1) }.serverCode == "place_not_found")
        #expect(try await bob.failure { $0.setPlace(label: "x", latitude: 91, longitude: 0, radius: 100, completion: $1) }.serverCode == "bad_request")
        #expect(try await bob.failure { $0.reportRegion(placeID: 9, entered: true, time: Self.now(), completion: $1) }.serverCode == "place_not_found")

        // alice follows bob: the subscribe tells where bob is (nowhere reported yet), as its result and an event.
        let channel = LocationChannel.name("Bob")
        #expect(channel == "loc:bob" && LocationChannel.user(in: channel) == "bob" && LocationChannel.user(in: "chat:a~b") == nil)
        let followed = try await alice.ok("follow") { $0.subscribe(channel, completion: $1) }
        let nowhere = Whereabouts(user: "bob", place: "unknown", since: nil)
        #expect(followed.current == nowhere && nowhere.isUnknown)
        #expect(alice.events.contains(.whereabouts(nowhere)))
        #expect(try await carol.failure { $0.subscribe(channel, completion: $1) }.serverCode == "forbidden")
        #expect(try await alice.ok("not a loc channel") { $0.subscribe("room:x", completion: $1) }.current == nil)

        // bob arrives home (a region event), then a fix at the office moves him there.
        let arrival = Self.now() - 60_000
        let arrived = try await bob.ok("enter") { $0.reportRegion(placeID: home.id, entered: true, time: arrival, completion: $1) }
        #expect(arrived == PlaceDecision(place: "home", placeID: 1, since: arrival, changed: true, ignored: false))
        let again = try await bob.ok("the same again") { $0.reportRegion(placeID: home.id, entered: true, time: arrival, completion: $1) }
        #expect(again.ignored && !again.changed && again.place == "home")
        let atHome = Whereabouts(user: "bob", place: "home", placeID: 1, since: arrival)
        try await alice.waitFor("bob at home") { _ in alice.publications(on: channel).compactMap(Whereabouts.init).last == atHome }
        let left = try await bob.ok("fix") { $0.reportFix(latitude: Self.work.latitude, longitude: Self.work.longitude, accuracy: 10, time: arrival + 30_000, completion: $1) }
        #expect(left == PlaceDecision(place: "office", placeID: 2, since: arrival + 30_000, changed: true, ignored: false))
        let atOffice = Whereabouts(user: "bob", place: "office", placeID: 2, since: arrival + 30_000)
        try await alice.waitFor("bob at the office") { _ in alice.publications(on: channel).compactMap(Whereabouts.init) == [atHome, atOffice] }
        #expect(try await alice.ok("where") { $0.whereIs("bob", completion: $1) } == atOffice)
        #expect(try await carol.failure { $0.whereIs("bob", completion: $1) }.serverCode == "forbidden")
        #expect(try await carol.failure { $0.whereIs("nobody", completion: $1) }.serverCode == "user_not_found")

        // alice's connection drops while bob arrives home again: the change is replayed, and
        // the resumed subscription tells the place once more, after it.
        proxy.setRefusing(true)
        proxy.cutAll(reset: true)
        try await alice.waitFor("the drop") { $0.contains { $0.isReconnecting } }
        let back = Self.now()
        _ = try await bob.ok("home again") { $0.reportRegion(placeID: home.id, entered: true, time: back, completion: $1) }
        let eventsBefore = alice.events.count
        proxy.setRefusing(false)
        let homeAgain = Whereabouts(user: "bob", place: "home", placeID: 1, since: back)
        try await alice.waitFor("the resumed place") { _ in alice.events.dropFirst(eventsBefore).contains(.whereabouts(homeAgain)) }
        let afterDrop = Array(alice.events.dropFirst(eventsBefore))
        let replayed = try #require(afterDrop.firstIndex { if case .publication(let p) = $0 { return Whereabouts(p) == homeAgain } else { return false } })
        #expect(replayed < afterDrop.firstIndex(of: .whereabouts(homeAgain))!, "the place the replay leads to comes after it")

        // Removing the current place tells the followers.
        try await bob.ok("remove") { $0.removePlace(home.id, completion: $1) }
        try await alice.waitFor("home removed") { _ in alice.publications(on: channel).compactMap(Whereabouts.init).last?.isUnknown == true }
    }
}

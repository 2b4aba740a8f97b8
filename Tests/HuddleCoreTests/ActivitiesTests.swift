import Foundation
@testable import HuddleCore
import HuddleProtocol
import Testing

/// protocol.md "Activities and matches", in the core: statuses with audiences and expiry, the
/// match rule (both ways, "Anything"), one notice per match per side and nothing to anyone
/// else, the ends of matches (off, expiry by the periodic sweep and by request time, audience, unfriending),
/// and replay and snapshot equivalence.
@Suite struct ActivitiesTests {
    static let minute: Int64 = 60_000
    static let hour: Int64 = 60 * minute

    /// alice, bob and carol, all friends with each other and each subscribed to their own inbox;
    /// dave is nobody's friend.
    private func setUp(configuration: CoreConfiguration = .init()) -> (CoreHarness, [String: ConnectionRef]) {
        let harness = CoreHarness(configuration: configuration)
        var connections: [String: ConnectionRef] = [:]
        for name in ["alice", "bob", "carol", "dave"] {
            let (connection, _) = harness.signUp(name)
            _ = harness.subscribe(connection, "inbox:\(name)")
            connections[name] = connection
        }
        harness.makeFriends("alice", "bob")
        harness.makeFriends("alice", "carol")
        harness.makeFriends("bob", "carol")
        return (harness, connections)
    }

    @discardableResult
    private func on(
        _ harness: CoreHarness, _ connection: ConnectionRef, _ activity: String, friends: [String]? = nil, expiresIn: Int64? = nil
    ) -> CoreStep {
        harness.handle(.activityOn(connection, requestID: "on", activity: activity, friends: friends, expiresInSeconds: expiresIn))
    }

    @discardableResult
    private func off(_ harness: CoreHarness, _ connection: ConnectionRef, _ activity: String) -> CoreStep {
        harness.handle(.activityOff(connection, requestID: "off", activity: activity))
    }

    private func matches(_ harness: CoreHarness, _ connection: ConnectionRef, byActivity: Bool = false) -> [ActivityMatch]? {
        guard case .matches(let list)? = harness.handle(.listMatches(connection, requestID: "m", byActivity: byActivity)).replies.first else {
            return nil
        }
        return list
    }

    private func mine(_ harness: CoreHarness, _ connection: ConnectionRef) -> [ActivityStatus]? {
        guard case .activities(_, let mine)? = harness.handle(.listActivities(connection, requestID: "a")).replies.first else { return nil }
        return mine
    }

    /// The inbox notices a step published, as "recipient type data".
    private func notices(_ step: CoreStep) -> [String] {
        step.commands.compactMap { command in
            guard case let .publish(channel, nil, type, data, _) = command, channel.hasPrefix("inbox:") else { return nil }
            return "\(channel.dropFirst(6)) \(type) \(data)"
        }
    }

    /// Users whose connections got any live publication in the step.
    private func reached(_ step: CoreStep, _ connections: [String: ConnectionRef]) -> Set<String> {
        var users = Set<String>()
        for case let .deliver(_, recipients) in step.outputs {
            for (name, connection) in connections where recipients.contains(connection) { users.insert(name) }
        }
        return users
    }

    private static func match(_ recipient: String, _ other: String, _ activity: String) -> String {
        #"\#(recipient) match {"user":"\#(other)","activity":"\#(activity)"}"#
    }

    private static func ended(_ recipient: String, _ other: String, _ activity: String, _ reason: String) -> String {
        #"\#(recipient) match_ended {"user":"\#(other)","activity":"\#(activity)","reason":"\#(reason)"}"#
    }

    /// The issue's story: two turn on Coffee and get exactly one match each, at once, while the
    /// third (Gym on) hears nothing; then the third turns on Anything and matches both.
    @Test func coffeeForTwoThenAnythingMatchesBoth() {
        let (harness, users) = setUp()
        #expect(notices(on(harness, users["carol"]!, "Gym")).isEmpty)
        let alicesCoffee = on(harness, users["alice"]!, "coffee")
        #expect(alicesCoffee.replies == [.activityStatus(ActivityStatus(
            activity: "Coffee", audience: nil, since: harness.time, expiresAt: harness.time + 2 * Self.hour))])
        #expect(notices(alicesCoffee).isEmpty)

        harness.advance(1_000)
        let bobsCoffee = on(harness, users["bob"]!, "Coffee")
        #expect(notices(bobsCoffee) == [Self.match("alice", "bob", "Coffee"), Self.match("bob", "alice", "Coffee")])
        #expect(bobsCoffee.commands.contains(.startMatch(user: "alice", partner: "bob", activity: "Coffee", time: harness.time)))
        #expect(reached(bobsCoffee, users) == ["alice", "bob"], "carol hears nothing")
        #expect(matches(harness, users["alice"]!) == [ActivityMatch(user: "bob", activity: "Coffee", since: harness.time)])
        #expect(matches(harness, users["carol"]!) == [])

        // No repeated match while both stay on: turning on again only moves the expiry.
        harness.advance(1_000)
        let again = on(harness, users["alice"]!, "Coffee", expiresIn: 600)
        #expect(notices(again).isEmpty)
        #expect(again.replies == [.activityStatus(ActivityStatus(
            activity: "Coffee", audience: nil, since: harness.time - 2_000, expiresAt: harness.time + 600_000))])

        harness.advance(1_000)
        let anything = on(harness, users["carol"]!, "Anything")
        #expect(notices(anything) == [
            Self.match("alice", "carol", "Coffee"), Self.match("carol", "alice", "Coffee"),
            Self.match("bob", "carol", "Coffee"), Self.match("carol", "bob", "Coffee"),
        ])
        #expect(reached(anything, users) == ["alice", "bob", "carol"])
        #expect(matches(harness, users["carol"]!)?.map(\.user) == ["alice", "bob"])
        #expect(harness.core.durableState.activityMatches.count == 3)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func eachMustBeInTheOthersAudience() {
        let (harness, users) = setUp()
        let alice = users["alice"]!
        let bob = users["bob"]!
        // alice is up for coffee with carol only: bob, on for everyone, does not match her.
        on(harness, alice, "Coffee", friends: ["Carol", "carol"])
        #expect(mine(harness, alice)?.first?.audience == ["carol"])
        #expect(notices(on(harness, bob, "Coffee")).isEmpty)
        // The other way round: bob chooses carol only, alice opens up to everyone.
        on(harness, bob, "Coffee", friends: ["carol"])
        #expect(notices(on(harness, alice, "Coffee")).isEmpty)
        #expect(matches(harness, alice) == [])
        // Both admit each other: a match; then alice narrows her audience again: it ends.
        let opened = on(harness, bob, "Coffee", friends: ["carol", "alice"])
        #expect(notices(opened) == [Self.match("alice", "bob", "Coffee"), Self.match("bob", "alice", "Coffee")])
        harness.advance(10)
        let narrowed = on(harness, alice, "Coffee", friends: ["carol"])
        #expect(notices(narrowed) == [Self.ended("alice", "bob", "Coffee", "audience"), Self.ended("bob", "alice", "Coffee", "audience")])
        #expect(narrowed.commands.contains(.endMatch(user: "alice", partner: "bob", activity: "Coffee", reason: .audience, time: harness.time)))
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func anythingMatchesEveryActivity() {
        let (harness, users) = setUp()
        let alice = users["alice"]!
        let bob = users["bob"]!
        on(harness, alice, "Anything")
        // The match is on the concrete activity.
        #expect(notices(on(harness, bob, "Gym")) == [Self.match("alice", "bob", "Gym"), Self.match("bob", "alice", "Gym")])
        // Anything with Anything is a match on Anything; the Gym match stays (not told again).
        #expect(notices(on(harness, bob, "Anything")) == [Self.match("alice", "bob", "Anything"), Self.match("bob", "alice", "Anything")])
        #expect(Set(matches(harness, bob)?.map(\.activity) ?? []) == ["Gym", "Anything"])
        // Gym off: alice's Anything still meets bob's Anything, but no longer a Gym.
        harness.advance(5)
        #expect(notices(off(harness, bob, "gym")) == [Self.ended("alice", "bob", "Gym", "off"), Self.ended("bob", "alice", "Gym", "off")])
        #expect(matches(harness, alice) == [ActivityMatch(user: "bob", activity: "Anything", since: harness.time - 5)])
    }

    @Test func withoutAnythingInTheListNothingIsAWildcard() {
        var configuration = CoreConfiguration()
        configuration.activities.names = ["Tea", "Chess"]
        let (harness, users) = setUp(configuration: configuration)
        #expect(on(harness, users["alice"]!, "Anything").errorCode == .unknownActivity)
        on(harness, users["alice"]!, "tea")
        #expect(notices(on(harness, users["bob"]!, "Chess")).isEmpty)
        #expect(notices(on(harness, users["bob"]!, "TEA")).count == 2)
        #expect(harness.handle(.listActivities(users["bob"]!, requestID: "a")).replies == [.activities(available: ["Tea", "Chess"], mine: [
            ActivityStatus(activity: "Tea", audience: nil, since: harness.time, expiresAt: harness.time + 2 * Self.hour),
            ActivityStatus(activity: "Chess", audience: nil, since: harness.time, expiresAt: harness.time + 2 * Self.hour),
        ])])
    }

    @Test func refusals() {
        let (harness, users) = setUp()
        let alice = users["alice"]!
        let unknown = on(harness, alice, "Skydiving")
        #expect(unknown.errorCode == .unknownActivity)
        #expect(unknown.error?.message.contains("Gym, Coffee, Eat, Study, Movie, Shopping, Anything") == true)
        let strangers = on(harness, alice, "Coffee", friends: ["bob", "dave", "alice", "nobody", "dave"])
        #expect(strangers.errorCode == .notFriends)
        #expect(strangers.error?.message == "not your friends: dave, alice, nobody")
        #expect(on(harness, alice, "Coffee", expiresIn: 0).errorCode == .badRequest)
        #expect(on(harness, alice, "Coffee", expiresIn: -5).errorCode == .badRequest)
        #expect(on(harness, alice, "Coffee", expiresIn: 24 * 3600 + 1).error?.message == "expires_in must be 1 to 86400 seconds")
        #expect(off(harness, alice, "Coffee").errorCode == .notOn)
        #expect(off(harness, alice, "Skydiving").errorCode == .unknownActivity)
        let anonymous = harness.connect()
        #expect(on(harness, anonymous, "Coffee").errorCode == .notAuthenticated)
        #expect(harness.handle(.listMatches(anonymous, requestID: "m", byActivity: false)).errorCode == .notAuthenticated)
        // A refusal changes nothing.
        #expect(harness.core.durableState.activityStatuses.count == 0)
        #expect(on(harness, alice, "Coffee", expiresIn: 24 * 3600).errorCode == nil)
        #expect(off(harness, alice, "COFFEE").replies == [.done])
        #expect(off(harness, alice, "Coffee").errorCode == .notOn, "turning off twice: the second is refused")
    }

    @Test func anExpiredStatusIsOffAtOnceAndTheSweepEndsItsMatches() {
        let (harness, users) = setUp()
        let alice = users["alice"]!
        let bob = users["bob"]!
        on(harness, alice, "Eat", expiresIn: 60)
        harness.advance(10_000)
        on(harness, bob, "Eat")
        let start = harness.time - 10_000
        #expect(harness.handle(.expireActivities).commands.isEmpty)

        // One millisecond before the expiry nothing happens; at it, the status counts as off
        // for every read even before the sweep clears it.
        harness.time = start + 60_000 - 1
        #expect(harness.handle(.expireActivities).commands.isEmpty)
        #expect(mine(harness, alice)?.map(\.activity) == ["Eat"])
        harness.time = start + 60_000
        #expect(mine(harness, alice) == [])
        #expect(matches(harness, bob) == [])
        #expect(matches(harness, alice) == [])
        #expect(harness.core.durableState.activityMatches.count == 1, "still there until the sweep")

        let sweep = harness.handle(.expireActivities)
        #expect(sweep.commands.first == .clearActivity(user: "alice", activity: "Eat", reason: .expired, time: harness.time))
        #expect(sweep.commands.contains(.endMatch(user: "alice", partner: "bob", activity: "Eat", reason: .expired, time: harness.time)))
        #expect(notices(sweep) == [Self.ended("alice", "bob", "Eat", "expired"), Self.ended("bob", "alice", "Eat", "expired")])
        #expect(reached(sweep, users) == ["alice", "bob"])
        #expect(harness.handle(.expireActivities).commands.isEmpty, "expired once")
        #expect(harness.core.durableState.activityStatuses.status(of: "bob", activity: "Eat") != nil)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    /// Turning an expired status off is refused (`not_on`); the request first clears what ran
    /// out, with its notices, as the sweep would have.
    @Test func anExpiredStatusCannotBeTurnedOff() {
        let (harness, users) = setUp()
        on(harness, users["alice"]!, "Movie", expiresIn: 1)
        on(harness, users["bob"]!, "Movie")
        harness.advance(1_000)
        let refused = off(harness, users["alice"]!, "Movie")
        #expect(refused.errorCode == .notOn)
        #expect(notices(refused) == [Self.ended("alice", "bob", "Movie", "expired"), Self.ended("bob", "alice", "Movie", "expired")])
        // And turning one on decides on the state at its time: a friend's expired status
        // does not match.
        on(harness, users["carol"]!, "Study", expiresIn: 1)
        harness.advance(1_000)
        let late = on(harness, users["bob"]!, "Study")
        #expect(late.commands.first == .clearActivity(user: "carol", activity: "Study", reason: .expired, time: harness.time))
        #expect(notices(late).isEmpty)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func turningOffEndsEveryMatchItMade() {
        let (harness, users) = setUp()
        on(harness, users["alice"]!, "Shopping")
        on(harness, users["bob"]!, "Shopping")
        on(harness, users["carol"]!, "Anything")
        harness.advance(1)
        let step = off(harness, users["alice"]!, "Shopping")
        #expect(notices(step) == [
            Self.ended("alice", "bob", "Shopping", "off"), Self.ended("bob", "alice", "Shopping", "off"),
            Self.ended("alice", "carol", "Shopping", "off"), Self.ended("carol", "alice", "Shopping", "off"),
        ])
        #expect(matches(harness, users["carol"]!)?.map(\.user) == ["bob"])
    }

    @Test func unfriendingEndsMatchesAndLeavesAudiences() {
        let (harness, users) = setUp()
        let alice = users["alice"]!
        on(harness, alice, "Coffee", friends: ["bob", "carol"])
        on(harness, users["bob"]!, "Coffee", friends: ["alice"])
        harness.advance(1)
        let removed = harness.handle(.removeFriend(alice, requestID: "r", user: "bob"))
        #expect(removed.replies == [.done])
        #expect(removed.commands.contains(.setActivity(
            user: "alice", activity: "Coffee", audience: ["carol"], expiresAt: harness.time - 1 + 2 * Self.hour, time: harness.time)))
        #expect(removed.commands.contains(.setActivity(
            user: "bob", activity: "Coffee", audience: [], expiresAt: harness.time - 1 + 2 * Self.hour, time: harness.time)))
        #expect(Array(notices(removed).suffix(2)) == [
            Self.ended("alice", "bob", "Coffee", "unfriended"), Self.ended("bob", "alice", "Coffee", "unfriended"),
        ])
        #expect(matches(harness, alice) == [])
        // The status itself stays on, since unchanged.
        #expect(mine(harness, alice) == [ActivityStatus(
            activity: "Coffee", audience: ["carol"], since: harness.time - 1, expiresAt: harness.time - 1 + 2 * Self.hour)])
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    /// Becoming friends while both have matching statuses on is a match at once.
    @Test func newFriendsMatchAtOnce() {
        let (harness, users) = setUp()
        on(harness, users["alice"]!, "Gym")
        on(harness, users["dave"]!, "Gym")
        harness.handle(.sendFriendRequest(users["dave"]!, requestID: "f", user: "alice", message: ""))
        let accepted = harness.handle(.answerFriendRequest(users["alice"]!, requestID: "a", user: "dave", accept: true))
        #expect(notices(accepted).suffix(2) == [Self.match("alice", "dave", "Gym"), Self.match("dave", "alice", "Gym")])
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func matchesAreListedByTimeOrByActivity() {
        let (harness, users) = setUp()
        let alice = users["alice"]!
        on(harness, alice, "Anything")
        harness.advance(1_000)
        on(harness, users["bob"]!, "Movie")
        harness.advance(1_000)
        on(harness, users["carol"]!, "Gym")
        harness.advance(1_000)
        on(harness, users["bob"]!, "Gym")
        let t = harness.time
        #expect(matches(harness, alice) == [
            ActivityMatch(user: "bob", activity: "Gym", since: t),
            ActivityMatch(user: "carol", activity: "Gym", since: t - 1_000),
            ActivityMatch(user: "bob", activity: "Movie", since: t - 2_000),
        ])
        // In the list's order (Gym before Movie), newest first within an activity.
        #expect(matches(harness, alice, byActivity: true) == [
            ActivityMatch(user: "bob", activity: "Gym", since: t),
            ActivityMatch(user: "carol", activity: "Gym", since: t - 1_000),
            ActivityMatch(user: "bob", activity: "Movie", since: t - 2_000),
        ])
        #expect(matches(harness, users["bob"]!, byActivity: true) == [
            ActivityMatch(user: "alice", activity: "Gym", since: t),
            ActivityMatch(user: "carol", activity: "Gym", since: t),
            ActivityMatch(user: "alice", activity: "Movie", since: t - 2_000),
        ])
    }

    /// Replay, snapshot and restart: the same commands rebuild the same state; a restored core
    /// still expires statuses on time (the expiry queue is rebuilt) and does not tell a match
    /// in force again.
    @Test func statusesAndMatchesSurviveReplayAndSnapshots() throws {
        let (harness, users) = setUp()
        on(harness, users["alice"]!, "Coffee", friends: ["bob"], expiresIn: 600)
        on(harness, users["bob"]!, "Anything", expiresIn: 300)
        on(harness, users["carol"]!, "Coffee")
        on(harness, users["carol"]!, "Coffee", expiresIn: 100)
        harness.advance(150_000)
        harness.handle(.expireActivities)
        let state = harness.core.durableState
        #expect(state.activityStatuses.count == 2)
        #expect(harness.replayed().durableState == state)

        let restoredState = try RecordCoding.roundTrip(state)
        #expect(restoredState == state)
        let restored = CoreHarness(core: HuddleCore(restoring: restoredState))
        restored.time = harness.time
        let alice = restored.connect()
        restored.handle(.authenticate(alice, requestID: "a", tokenHash: CoreHarness.tokenHash(1)))
        #expect(notices(on(restored, alice, "Coffee", friends: ["bob"], expiresIn: 600)).isEmpty)
        restored.time = harness.time - 150_000 + 300_000
        let sweep = restored.handle(.expireActivities)
        #expect(sweep.commands.first == .clearActivity(user: "bob", activity: "Anything", reason: .expired, time: restored.time))
        #expect(notices(sweep) == [Self.ended("alice", "bob", "Coffee", "expired"), Self.ended("bob", "alice", "Coffee", "expired")])
    }

    /// Nothing but the requests and their times decides the commands.
    @Test func theSameRequestsGiveTheSameCommands() {
        func run() -> [CoreCommand] {
            let (harness, users) = setUp()
            for (index, name) in ["carol", "alice", "bob"].enumerated() {
                on(harness, users[name]!, index == 0 ? "Anything" : "Study", expiresIn: Int64(10 + index))
                harness.advance(100)
            }
            harness.advance(20_000)
            harness.handle(.expireActivities)
            return harness.log
        }
        let first = run()
        #expect(first == run())
        #expect(first.filter { if case .endMatch = $0 { true } else { false } }.count == 3)
    }

    @Test func theListIsValidated() {
        #expect(ActivitySettings.problem(with: ActivitySettings.defaultNames) == nil)
        #expect(ActivitySettings.problem(with: ["Tea"]) == nil)
        #expect(ActivitySettings.problem(with: []) != nil)
        #expect(ActivitySettings.problem(with: (1...65).map { "A\($0)" }) != nil)
        #expect(ActivitySettings.problem(with: ["Gym", "gym"]) != nil)
        #expect(ActivitySettings.problem(with: [""]) != nil)
        #expect(ActivitySettings.problem(with: [String(repeating: "x", count: 33)]) != nil)
        #expect(ActivitySettings.problem(with: [" Gym"]) != nil)
        #expect(ActivitySettings.problem(with: ["G\u{7}ym"]) != nil)
        let settings = ActivitySettings(names: ["Café", "anything"])
        #expect(settings.canonicalName(of: "CAFÉ") == "Café")
        #expect(settings.wildcard == "anything")
        #expect(ActivitySettings(names: ["Tea"]).wildcard == nil)
    }

    @Test func commandsRoundTripWithStableNames() throws {
        let commands: [CoreCommand] = [
            .setActivity(user: "alice", activity: "Coffee", audience: ["bob"], expiresAt: 10, time: 1),
            .setActivity(user: "alice", activity: "Gym", audience: nil, expiresAt: 10, time: 1),
            .clearActivity(user: "alice", activity: "Coffee", reason: .expired, time: 2),
            .startMatch(user: "alice", partner: "bob", activity: "Coffee", time: 3),
            .endMatch(user: "alice", partner: "bob", activity: "Coffee", reason: .unfriended, time: 4),
        ]
        for command in commands {
            #expect(try RecordCoding.roundTrip(command) == command)
        }
        // The log stores these names: renaming a case, label or reason breaks existing logs.
        #expect(RecordCoding.json(commands[2])
            == #"{"clearActivity":{"activity":"Coffee","reason":"expired","time":2,"user":"alice"}}"#)
        #expect(RecordCoding.json(commands[0])
            == #"{"setActivity":{"activity":"Coffee","audience":["bob"],"expiresAt":10,"time":1,"user":"alice"}}"#)
    }
}

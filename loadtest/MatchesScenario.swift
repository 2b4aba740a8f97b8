import HuddleClient
import HuddleIO
import HuddleProtocol

/// `matches`: N users in a ring of friendships (each with F friends), each toggling one
/// activity on and off at R toggles/s (open loop). Friends whose activities are on at the same
/// time match, and both get a `match` notice in their inbox; when one turns it off both get
/// `match_ended`. Checked: every inbox's offsets (no gap, duplicate or reordering), that each
/// pair's notices alternate match / match_ended, that both sides of a pair saw as many
/// matches, and that once everyone turned off every match has ended. Latency of a `match`
/// notice counts from the *later* of the two `activity_on` sends — a lower bound when two
/// friends' requests cross (the server may apply the earlier-sent one last).
final class MatchesScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        var options: ClientConnectionOptions
        var users: Int
        /// Friends per user (even: the ring's neighbours on both sides).
        var friends: Int
        /// Toggles (on, then off) per second per user.
        var rate: Double
        /// User u toggles activities[u % count] (names from the server's list).
        var activities: [String]
        var measurement: Measurement.Settings
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private let social: SocialSetup
    private var inboxBase: [UInt64]
    private var isOn: [Bool]
    private var lastOnSent: [UInt64]
    /// Per user: the partners it is matched with now, by its own notices.
    private var matched: [Set<Int>]
    /// Per user: how many `match` notices it got about each partner.
    private var matchCounts: [[Int: Int]]
    private var openMatchStates = 0
    private var checker: StreamChecker
    private var schedule: OpenLoopSchedule?
    private var sendTimer: Int?
    private var toggles = 0
    private var acknowledged = 0
    private var awaitingReplies = 0
    private var matchNotices = 0
    private var endNotices = 0
    private var outOfOrder = 0
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(loop: loop, progress: progress, settings: settings.measurement)
        social = SocialSetup(urls: settings.urls, options: settings.options, loop: loop, progress: progress, measurement: measurement)
        inboxBase = Array(repeating: 0, count: settings.users)
        isOn = Array(repeating: false, count: settings.users)
        lastOnSent = Array(repeating: 0, count: settings.users)
        matched = Array(repeating: [], count: settings.users)
        matchCounts = Array(repeating: [:], count: settings.users)
        checker = StreamChecker(streams: settings.users)
    }

    private func activity(of user: Int) -> String { settings.activities[user % settings.activities.count] }

    func start() {
        measurement.onDone = { [self] in finish() }
        social.onEvent = { [self] user, event in received(event, by: user) }
        social.run(count: settings.users, friendships: SocialSetup.ring(users: settings.users, neighbours: settings.friends / 2)) { [self] in
            progress.say("subscribing every user to its inbox")
            social.stage(count: settings.users, name: "subscribe", step: { [self] user, done in
                let channel = "inbox:\(social.users.username(user))"
                social.sessions[user].request(.subscribe(channel: channel, since: nil)) { [self] reply in
                    guard let offset = reply.result.flatMap({ try? Subscription(result: $0, channel: channel) })?.offset else {
                        measurement.error("subscribe to the inbox refused: \(reply.text)")
                        return done(false)
                    }
                    inboxBase[user] = offset
                    done(true)
                }
            }, then: startToggling)
        }
    }

    private func startToggling() {
        progress.say("\(settings.users) users toggling \(settings.activities.joined(separator: "/")) at \(settings.rate)/s each")
        schedule = OpenLoopSchedule(streams: settings.users, ratePerStream: settings.rate, start: MonotonicClock.nanoseconds())
        sendTimer = loop.schedule(after: 1, repeating: 1) { [self] in toggleDue() }
        measurement.progressDetail = { [self] in "matches \(grouped(matchNotices / 2)), ended \(grouped(endNotices / 2)), matched now \(grouped(openMatchStates / 2))" }
        measurement.begin(
            onMeasureEnd: { [self] in
                if let sendTimer { loop.cancelTimer(sendTimer) }
                turnEverythingOff()
            },
            isDrained: { [self] in awaitingReplies == 0 && openMatchStates == 0 })
    }

    private func toggleDue() {
        guard var schedule else { return }
        let due = schedule.due(at: MonotonicClock.nanoseconds())
        self.schedule = schedule
        for toggle in due { send(on: toggle.sequence % 2 == 0, user: toggle.stream, intended: toggle.intended) }
    }

    private func send(on: Bool, user: Int, intended: UInt64) {
        let operation: Operation = on ? .activityOn(activity: activity(of: user), friends: nil, expiresIn: 3600) : .activityOff(activity: activity(of: user))
        let sent = social.sessions[user].request(operation) { [self] reply in
            awaitingReplies -= 1
            if reply.result != nil { acknowledged += 1 } else { measurement.error("\(operation.name) refused: \(reply.text)") }
        }
        guard sent else { return measurement.recordFailure("toggle not sent: the connection is closed or its queue full") }
        awaitingReplies += 1
        toggles += 1
        isOn[user] = on
        if on { lastOnSent[user] = intended }
        measurement.recordSent()
    }

    /// After the window: every status still on goes off, so every match must end.
    private func turnEverythingOff() {
        let now = MonotonicClock.nanoseconds()
        for user in 0..<settings.users where isOn[user] { send(on: false, user: user, intended: now) }
    }

    /// The other user and the activity of a `match` or `match_ended` notice.
    private static func matchParties(_ notice: InboxNotice?) -> (user: String, activity: String)? {
        switch notice {
        case .match(let user, let activity)?, .matchEnded(let user, let activity, _)?: return (user, activity)
        default: return nil
        }
    }

    private func received(_ event: ServerEvent, by user: Int) {
        guard case .publication(let publication) = event, case let type = publication.type, type == "match" || type == "match_ended" else { return }
        let offset = publication.offset
        let now = MonotonicClock.nanoseconds()
        checker.observe(stream: user, sequence: Int(offset) - Int(inboxBase[user]) - 1)
        guard let (name, noticeActivity) = Self.matchParties(InboxNotice(publication)), let partner = index(of: name),
              noticeActivity.lowercased() == activity(of: user).lowercased()
        else { return measurement.error("user \(user) got a \(type) notice it cannot place: \(JSONWriter.serialize(publication.data))") }
        if type == "match" {
            matchNotices += 1
            matchCounts[user][partner, default: 0] += 1
            if matched[user].insert(partner).inserted { openMatchStates += 1 } else { outOfOrder += 1 }
            measurement.recordDelivery(intended: max(lastOnSent[user], lastOnSent[partner]), at: now)
        } else {
            endNotices += 1
            if matched[user].remove(partner) != nil { openMatchStates -= 1 } else { outOfOrder += 1 }
            measurement.recordDeliveryWithoutLatency()
        }
    }

    /// `PREFIX_123` → 123, for this run's users only.
    private func index(of username: String) -> Int? {
        let prefix = social.users.prefix + "_"
        guard username.hasPrefix(prefix), let index = Int(username.dropFirst(prefix.count)), index < settings.users else { return nil }
        return index
    }

    private func finish() {
        var asymmetric = 0
        for user in 0..<settings.users {
            for (partner, count) in matchCounts[user] where matchCounts[partner][user, default: 0] != count { asymmetric += 1 }
        }
        result = measurement.result(
            scenario: "matches",
            parameters: [
                "users": "\(settings.users)", "friends": "\(settings.friends)", "rate": "\(settings.rate)",
                "activities": settings.activities.joined(separator: ","), "duration_s": "\(settings.measurement.durationSeconds ?? 0)",
            ],
            latencyMeaning: "activity_on → both friends' match notices, from the later of the two intended sends",
            sent: toggles, acknowledged: acknowledged, stream: checker.counts,
            figures: [
                "toggles_per_second_asked": settings.rate * Double(settings.users), "matches": Double(matchNotices / 2),
                "matches_ended": Double(endNotices / 2), "out_of_order_notices": Double(outOfOrder),
                "asymmetric_pairs": Double(asymmetric), "still_matched_at_end": Double(openMatchStates),
            ],
            sentLabel: "toggles", deliveredLabel: "notices")
        if outOfOrder > 0 { result?.errors.append("\(outOfOrder) notices out of turn (a second match without its end, or an end without a match)") }
        if asymmetric > 0 { result?.errors.append("\(asymmetric) pairs whose two sides saw different numbers of matches") }
        if openMatchStates > 0 { result?.errors.append("\(openMatchStates) match states never ended after everyone turned off") }
        if matchNotices == 0 { result?.errors.append("no match at all: raise --rate or --duration, or give friends the same activity") }
        social.closeAll()
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

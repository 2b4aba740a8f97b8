import HuddleClient
import HuddleIO
import HuddleProtocol

/// `location`: N users, each followed by K friends (a ring: user u's followers are the next K
/// users, subscribed to `loc:u`). Every user has two places, home and work 5 km apart, and
/// reports raw fixes at R/s (open loop), two at home, two at work, and so on: the server
/// decides a change on the second fix of each pair (protocol.md: two fixes must agree) and
/// publishes it to the followers. Checked: every follower's view of every followed channel is
/// gap-free and in order, and holds as many changes as the fix replies announced
/// (`changed: true`). Latency: from the intended send time of the fix that decided a change to
/// each follower's delivery (the publication's `since` is that fix's `time`).
final class LocationScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        var options: ClientConnectionOptions
        var users: Int
        /// Followers per user (each user also follows as many).
        var followers: Int
        /// Fixes per second per user.
        var rate: Double
        var measurement: Measurement.Settings
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private let social: SocialSetup
    /// Stream v × K + (j − 1): follower v's view of user v − j.
    private var checker: StreamChecker
    private var base: [UInt64]
    private var changes: [Int]
    /// Per user, the fixes' `time` → intended send time, for the last few fixes (a change's
    /// `since` names the fix that decided it).
    private var fixTimes: [[Int64: UInt64]]
    private var lastFixTime: [Int64]
    private var schedule: OpenLoopSchedule?
    private var sendTimer: Int?
    private var acknowledged = 0
    private var awaitingReplies = 0
    private var wallAtStart: Int64 = 0
    private var monotonicAtStart: UInt64 = 0
    private(set) var result: ScenarioResult?

    /// Home near Paris, one user 1.1 km north of the next; work 0.068° (5 km) east of home.
    private static let radius = 100.0
    private static let accuracy = 10.0

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(loop: loop, progress: progress, settings: settings.measurement)
        social = SocialSetup(urls: settings.urls, options: settings.options, loop: loop, progress: progress, measurement: measurement)
        checker = StreamChecker(streams: settings.users * settings.followers)
        base = Array(repeating: 0, count: settings.users * settings.followers)
        changes = Array(repeating: 0, count: settings.users)
        fixTimes = Array(repeating: [:], count: settings.users)
        lastFixTime = Array(repeating: 0, count: settings.users)
    }

    private func home(of user: Int) -> (lat: Double, lon: Double) { (48.0 + Double(user % 1000) * 0.01, 2.0 + Double(user / 1000) * 0.2) }
    private func work(of user: Int) -> (lat: Double, lon: Double) { (home(of: user).lat, home(of: user).lon + 0.068) }

    func start() {
        measurement.onDone = { [self] in finish() }
        social.onEvent = { [self] user, event in received(event, by: user) }
        social.run(count: settings.users, friendships: SocialSetup.ring(users: settings.users, neighbours: settings.followers)) { [self] in
            progress.say("defining home and work for every user")
            social.stage(count: settings.users * 2, name: "place_set", step: { [self] index, done in
                let (user, isWork) = (index / 2, index % 2 == 1)
                let place = isWork ? work(of: user) : home(of: user)
                social.sessions[user].expectOK(.placeSet(id: nil, label: isWork ? "work" : "home", latitude: place.lat, longitude: place.lon, radius: Self.radius)) { [self] refusal in
                    if let refusal { measurement.error(refusal) }
                    done(refusal == nil)
                }
            }, then: subscribeFollowers)
        }
    }

    private func subscribeFollowers() {
        progress.say("subscribing each user to the loc: channels of the \(settings.followers) users it follows")
        social.stage(count: settings.users * settings.followers, name: "subscribe", step: { [self] stream, done in
            let (follower, followed) = (stream / settings.followers, self.followed(byStream: stream))
            let channel = "loc:\(social.users.username(followed))"
            social.sessions[follower].request(.subscribe(channel: channel, since: nil)) { [self] reply in
                guard let offset = reply.result.flatMap({ try? Subscription(result: $0, channel: channel) })?.offset else {
                    measurement.error("subscribe to loc: refused: \(reply.text)")
                    return done(false)
                }
                base[stream] = offset
                done(true)
            }
        }, then: startReporting)
    }

    /// The user whose `loc:` channel stream `stream` follows.
    private func followed(byStream stream: Int) -> Int {
        let follower = stream / settings.followers, step = stream % settings.followers + 1
        return (follower - step + settings.users) % settings.users
    }

    private func startReporting() {
        progress.say("\(settings.users) users reporting \(settings.rate) fixes/s each")
        monotonicAtStart = MonotonicClock.nanoseconds()
        wallAtStart = WallClock.milliseconds()
        schedule = OpenLoopSchedule(streams: settings.users, ratePerStream: settings.rate, start: monotonicAtStart)
        sendTimer = loop.schedule(after: 1, repeating: 1) { [self] in reportDue() }
        measurement.progressDetail = { [self] in "place changes \(grouped(changes.reduce(0, +)))" }
        measurement.begin(
            onMeasureEnd: { [self] in
                if let sendTimer { loop.cancelTimer(sendTimer) }
            },
            isDrained: { [self] in awaitingReplies == 0 && checker.counts.delivered >= expectedDeliveries })
    }

    private var sentTotal: Int { schedule?.issued ?? 0 }

    private var expectedDeliveries: Int { changes.reduce(0, +) * settings.followers }

    private func reportDue() {
        guard var schedule else { return }
        let due = schedule.due(at: MonotonicClock.nanoseconds())
        self.schedule = schedule
        for fix in due { report(user: fix.stream, number: fix.sequence, intended: fix.intended) }
    }

    /// Fix `number` of `user`: two at home, two at work, … taken at its intended time.
    private func report(user: Int, number: Int, intended: UInt64) {
        let position = number % 4 < 2 ? home(of: user) : work(of: user)
        // The phone's clock: the wall clock at the intended time, strictly increasing per user.
        let time = max(lastFixTime[user] + 1, wallAtStart + Int64((intended - monotonicAtStart) / 1_000_000))
        lastFixTime[user] = time
        fixTimes[user][time] = intended
        if fixTimes[user].count > 16, let oldest = fixTimes[user].keys.min() { fixTimes[user][oldest] = nil }
        let sent = social.sessions[user].request(.locationFix(latitude: position.lat, longitude: position.lon, accuracy: Self.accuracy, time: time)) { [self] reply in
            awaitingReplies -= 1
            guard let result = reply.result else { return measurement.error("location_fix refused: \(reply.text)") }
            acknowledged += 1
            if (try? PlaceDecision(result: result))?.changed == true { changes[user] += 1 }
        }
        guard sent else { return measurement.recordFailure("fix not sent: the connection is closed or its queue full") }
        awaitingReplies += 1
        measurement.recordSent()
    }

    private func received(_ event: ServerEvent, by follower: Int) {
        guard case .publication(let publication) = event, publication.type == "place", publication.channel.hasPrefix("loc:") else { return }
        let (channel, offset) = (publication.channel, publication.offset)
        let now = MonotonicClock.nanoseconds()
        let prefix = "loc:" + social.users.prefix + "_"
        guard channel.hasPrefix(prefix), let followed = Int(channel.dropFirst(prefix.count)), followed < settings.users,
              case let step = (follower - followed + settings.users) % settings.users, (1...settings.followers).contains(step)
        else { return measurement.error("user \(follower) got a place change on \(channel), which it does not follow") }
        let stream = follower * settings.followers + step - 1
        checker.observe(stream: stream, sequence: Int(offset) - Int(base[stream]) - 1)
        if let since = Whereabouts(publication)?.since, let intended = fixTimes[followed][since] {
            measurement.recordDelivery(intended: intended, at: now)
        } else {
            measurement.recordDeliveryWithoutLatency()
        }
    }

    private func finish() {
        var counts = checker.counts
        counts.missing = checker.missing { [self] stream in changes[followed(byStream: stream)] }
        let totalChanges = changes.reduce(0, +)
        result = measurement.result(
            scenario: "location",
            parameters: [
                "users": "\(settings.users)", "followers": "\(settings.followers)", "rate": "\(settings.rate)",
                "duration_s": "\(settings.measurement.durationSeconds ?? 0)",
            ],
            latencyMeaning: "deciding fix → each follower's place change, from the intended send time",
            sent: sentTotal, acknowledged: acknowledged, stream: counts,
            figures: [
                "fixes_per_second_asked": settings.rate * Double(settings.users), "place_changes": Double(totalChanges),
                "place_change_deliveries_expected": Double(totalChanges * settings.followers),
            ],
            sentLabel: "fixes", deliveredLabel: "changes delivered")
        if totalChanges == 0 { result?.errors.append("no place change at all: raise --rate or --duration") }
        social.closeAll()
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

import HuddleClient
import HuddleIO
import HuddleProtocol

/// `chat`: N users (one connection each) in befriended pairs. Each user signs up, the even one
/// of each pair sends a friend request and the odd one accepts it, both subscribe to their
/// `chat:A~B` room, and then every user sends R messages/s to it (open loop). Each user's
/// partner must receive every message exactly once and in order; latency counts from the
/// intended send time to the partner's delivery.
final class ChatScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        var options: ClientConnectionOptions
        /// Even: users come in pairs.
        var users: Int
        /// Messages per second per user.
        var rate: Double
        var payloadBytes: Int
        var measurement: Measurement.Settings
        var setupConcurrency = 100
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private let users = LoadTestUsers()
    private var sessions: [HarnessSession] = []
    private var rooms: [String] = []
    private var checker: StreamChecker
    private var schedule: OpenLoopSchedule?
    private var sendTimer: Int?
    private var setup: SetupQueue?
    private var acknowledged = 0
    private let padding: String
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(loop: loop, progress: progress, settings: settings.measurement)
        // Stream u: what user u hears from its partner.
        checker = StreamChecker(streams: settings.users)
        padding = String(repeating: "x", count: max(0, settings.payloadBytes))
    }

    private func partner(of user: Int) -> Int { user ^ 1 }

    /// `chat:A~B` with the two usernames in ascending byte order (protocol.md, Channels).
    static func room(_ a: String, _ b: String) -> String {
        Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) ? "chat:\(a)~\(b)" : "chat:\(b)~\(a)"
    }

    func start() {
        measurement.onDone = { [self] in finish() }
        rooms = (0..<settings.users).map { Self.room(users.username($0), users.username(partner(of: $0))) }
        progress.say("signing up \(settings.users) users (\(users.prefix)_*), one connection each")
        runStage(count: settings.users, name: "sign-up", step: signUp, next: befriendPairs)
    }

    /// Runs one set-up stage over `count` items; any failure ends the run.
    private func runStage(count: Int, name: String, step: @escaping (Int, @escaping (Bool) -> Void) -> Void, next: @escaping () -> Void) {
        let queue = SetupQueue(count: count, concurrency: settings.setupConcurrency, step: step) { [self] failed in
            if failed > 0 { return measurement.abort("\(name): \(failed) of \(count) failed") }
            next()
        }
        setup = queue
        measurement.track(queue, name)
        queue.run()
    }

    private func signUp(_ user: Int, done: @escaping (Bool) -> Void) {
        let session = HarnessSession(url: settings.urls[node: user], loop: loop, options: settings.options)
        sessions.append(session)
        session.onOpen = { [self] in
            measurement.connections += 1
            users.signUp(users.username(user), on: session) { [self] outcome in
                if case .failure(let failure) = outcome { measurement.error(failure.description) }
                done((try? outcome.get()) != nil)
            }
        }
        session.onPublication = { [self] publication in received(publication.stamp, by: user) }
        session.onClose = { [self] code, reason in
            if code != nil { measurement.connections -= 1 }
            let problem = "user \(user) closed: \(code.map { "\($0.rawValue)" } ?? "never opened") \(reason)"
            switch measurement.phase {
            // A closed session never answers what set-up is waiting for: stop rather than hang.
            case .setup: measurement.abort(problem)
            case .done: break
            default: measurement.error(problem)
            }
            done(false)
        }
        session.connect()
    }

    private func befriendPairs() {
        progress.say("befriending \(settings.users / 2) pairs (friend_request, friend_accept)")
        runStage(count: settings.users / 2, name: "friendship", step: { [self] pair, done in
            let asker = 2 * pair, answerer = 2 * pair + 1
            sessions[asker].expectOK(.friendRequest(user: users.username(answerer), message: RequestDefaults.friendMessage)) { [self] refusal in
                if let refusal { measurement.error(refusal); return done(false) }
                sessions[answerer].expectOK(.friendAccept(user: users.username(asker))) { [self] refusal in
                    if let refusal { measurement.error(refusal) }
                    done(refusal == nil)
                }
            }
        }, next: subscribeRooms)
    }

    private func subscribeRooms() {
        progress.say("subscribing every user to its chat room")
        runStage(count: settings.users, name: "subscribe", step: { [self] user, done in
            sessions[user].expectOK(.subscribe(channel: rooms[user], since: nil)) { [self] refusal in
                if let refusal { measurement.error(refusal) }
                done(refusal == nil)
            }
        }, next: startChatting)
    }

    private func startChatting() {
        progress.say("\(settings.users) users sending \(settings.rate) messages/s each")
        schedule = OpenLoopSchedule(streams: settings.users, ratePerStream: settings.rate, start: MonotonicClock.nanoseconds())
        sendTimer = loop.schedule(after: 1, repeating: 1) { [self] in sendDue() }
        measurement.progressDetail = { [self] in "acknowledged \(grouped(acknowledged))" }
        measurement.begin(
            onMeasureEnd: { [self] in
                if let sendTimer { loop.cancelTimer(sendTimer) }
            },
            isDrained: { [self] in checker.counts.delivered >= sentTotal && acknowledged >= sentTotal })
    }

    private var sentTotal: Int { schedule?.issued ?? 0 }

    private func sendDue() {
        guard var schedule else { return }
        let due = schedule.due(at: MonotonicClock.nanoseconds())
        self.schedule = schedule
        for message in due {
            let stamp = Stamp(publisher: message.stream, sequence: message.sequence, intended: message.intended)
            let sent = sessions[message.stream].request(.publish(rooms[message.stream], stamp: stamp.json(padding: padding))) { [self] reply in
                if reply.result != nil { acknowledged += 1 } else { measurement.error("publish refused: \(reply.text)") }
            }
            if sent { measurement.recordSent() } else { measurement.recordFailure("publish not sent: the connection is closed or its queue full") }
        }
    }

    private func received(_ stamp: Stamp, by user: Int) {
        // Users also get their own messages back (every subscribed connection does); the
        // check is on what the partner hears.
        guard stamp.publisher == partner(of: user) else { return }
        let now = MonotonicClock.nanoseconds()
        checker.observe(stream: user, sequence: stamp.sequence)
        measurement.recordDelivery(intended: stamp.intended, at: now)
    }

    private func finish() {
        var counts = checker.counts
        let schedule = self.schedule
        counts.missing = checker.missing { [self] user in schedule?.issued(stream: partner(of: user)) ?? 0 }
        result = measurement.result(
            scenario: "chat",
            parameters: [
                "users": "\(settings.users)", "rate": "\(settings.rate)", "payload_bytes": "\(settings.payloadBytes)",
                "duration_s": "\(settings.measurement.durationSeconds ?? 0)",
            ],
            latencyMeaning: "publish → partner's delivery, from the intended send time",
            sent: sentTotal, acknowledged: acknowledged, stream: counts,
            figures: ["messages_per_second_asked": settings.rate * Double(settings.users)])
        for session in sessions { session.close() }
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

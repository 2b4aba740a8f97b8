import HuddleClient
import HuddleIO
import HuddleProtocol

/// `reconnect-storm`: N subscribers spread over K rooms, each room with P publishers sending R
/// messages/s (open loop). T seconds into the measured window a fraction F of the subscribers
/// lose their connection at once (aborted on the client side: no close handshake, as when a
/// phone changes network). Each reconnects at once, authenticates with its token (header) and
/// subscribes again with `since` set to the last position it saw. The recovered publications
/// and the live ones after them must together be every message exactly once and in order.
/// Reported: reconnect time (drop → subscribe reply), how many recoveries the server could
/// answer (`recovered: true`) and how many it could not.
///
/// With several `--url`s (the nodes of a cluster) subscriber `i` starts on node `i mod n` and
/// each reconnect goes to the next node; a subscriber whose node closes its connection moves on
/// the same way and counts as dropped, so killing a node mid-run checks that its clients
/// resume elsewhere with nothing missed. Publishers are spread too but do not move.
final class ReconnectStormScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        var options: ClientConnectionOptions
        var subscribers: Int
        var rooms: Int
        var publishersPerRoom: Int
        /// Messages per second per publisher.
        var rate: Double
        /// Seconds into the measured window when the connections drop.
        var dropAfterSeconds: Double
        /// Fraction of the subscribers dropped, 0–1.
        var dropFraction: Double
        var payloadBytes: Int
        var measurement: Measurement.Settings
        var connectConcurrency = 200
        /// Connection attempts per reconnect before giving up (refused or timed out ones are
        /// retried after 200 ms × attempt).
        var reconnectAttempts = 5
        /// Publishing starts at this wall-clock time (seconds since 1970), so storms run by
        /// several processes drop their subscribers together.
        var startAt: Double?
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private let users = LoadTestUsers()
    private let roomPrefix = "room:lt\(String(UInt32.random(in: 0...UInt32.max), radix: 16))-"
    private var token = ""
    private var admin: HarnessSession?
    private var subscribers: [HarnessSession] = []
    /// The last publication each subscriber processed: what it resumes from.
    private var positions: [Position]
    /// When each subscriber was dropped, while its reconnect is under way (0 otherwise).
    private var droppedAt: [UInt64]
    /// Set just before the harness aborts a subscriber's connection, so its close is known
    /// for the drop it is.
    private var aborted: [Bool]
    /// Which of the URLs each subscriber is on: `index` at first, the next one at each reconnect.
    private var nodes: [Int]
    private var publishers: [HarnessSession] = []
    private var checker: StreamChecker
    private var schedule: OpenLoopSchedule?
    private var sendTimer: Int?
    private var setup: SetupQueue?
    private var acknowledged = 0
    private var reconnectTime = LatencyRecorder()
    private var recoveredDelay = LatencyRecorder()
    private var dropped = 0
    private var reconnecting = 0
    private var reconnected = 0
    private var reconnectFailed = 0
    private var recoveredTrue = 0
    private var recoveredFalse = 0
    private var recoveredPublications = 0
    /// What issuing the storm's reconnects took this loop's thread: every abort and every new
    /// connect happen in one turn, which reads nothing meanwhile.
    private var issueTime: ThreadTime?
    private let padding: String
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(loop: loop, progress: progress, settings: settings.measurement)
        positions = Array(repeating: Position(epoch: "", offset: 0), count: settings.subscribers)
        droppedAt = Array(repeating: 0, count: settings.subscribers)
        aborted = Array(repeating: false, count: settings.subscribers)
        nodes = Array(0..<settings.subscribers)
        // Stream s × P + p: what subscriber s hears from publisher p of its room.
        checker = StreamChecker(streams: settings.subscribers * settings.publishersPerRoom)
        padding = String(repeating: "x", count: max(0, settings.payloadBytes))
    }

    private func room(ofSubscriber subscriber: Int) -> Int { subscriber % settings.rooms }
    private func roomName(_ room: Int) -> String { roomPrefix + String(room) }

    func start() {
        measurement.onDone = { [self] in finish() }
        admin = users.signUpSharedAccount(url: settings.urls.first, loop: loop, options: settings.options, measurement: measurement) { [self] token in
            self.token = token
            progress.say("signed up \(users.username(0)); subscribing \(settings.subscribers) connections to \(settings.rooms) rooms")
            openSubscribers()
        }
    }

    // MARK: Set-up

    private func openSubscribers() {
        let queue = SetupQueue(count: settings.subscribers, concurrency: settings.connectConcurrency, step: { [self] index, done in
            subscribers.append(connectSubscriber(index, attempt: 1, done: done))
        }, completion: { [self] failed in
            if failed > 0 { return measurement.abort("\(failed) of \(settings.subscribers) subscribers could not subscribe") }
            openPublishers()
        })
        setup = queue
        measurement.track(queue, "subscribed")
        queue.run()
    }

    private func openPublishers() {
        let count = settings.rooms * settings.publishersPerRoom
        progress.say("\(settings.subscribers) subscribed; opening \(count) publishers")
        let queue = SetupQueue(count: count, concurrency: settings.connectConcurrency, step: { [self] index, done in
            let session = HarnessSession(url: settings.urls[node: index], loop: loop, options: settings.options.bearer(token))
            publishers.append(session)
            session.onOpen = { [self] in
                measurement.connections += 1
                done(true)
            }
            session.onClose = { [self] code, reason in
                if code != nil { measurement.connections -= 1 }
                if measurement.phase != .done { measurement.error("publisher \(index) closed: \(code?.rawValue ?? 0) \(reason)") }
                done(false)
            }
            session.connect()
        }, completion: { [self] failed in
            if failed > 0 { return measurement.abort("\(failed) of \(count) publishers could not connect") }
            StartAt.wait(until: settings.startAt, loop: loop, measurement: measurement, progress: progress) { [self] in startPublishing() }
        })
        setup = queue
        measurement.track(queue, "publishers connected")
        queue.run()
    }

    /// Opens subscriber `index`'s connection and subscribes it — from its last position when it
    /// had one (a reconnect). `done` reports the outcome of a first subscription.
    private func connectSubscriber(_ index: Int, attempt: Int, done: ((Bool) -> Void)?) -> HarnessSession {
        let session = HarnessSession(url: settings.urls[node: nodes[index]], loop: loop, options: settings.options.bearer(token))
        var opened = false
        session.onOpen = { [self] in
            opened = true
            measurement.connections += 1
            let resuming = droppedAt[index] != 0
            let channel = roomName(room(ofSubscriber: index))
            session.request(.subscribe(channel: channel, since: resuming ? positions[index] : nil)) { [self] reply in
                guard let subscription = reply.result.flatMap({ try? Subscription(result: $0, channel: channel) }) else {
                    measurement.error("subscriber \(index): subscribe refused: \(reply.text)")
                    if resuming { reconnectEnded(index, success: false) }
                    done?(false)
                    return
                }
                if resuming {
                    resumed(index, subscription)
                } else {
                    positions[index] = Position(epoch: subscription.epoch, offset: subscription.offset)
                }
                done?(true)
            }
        }
        session.onPublication = { [self] publication in
            positions[index].epoch = publication.epoch
            observe(publication.stamp, offset: publication.offset, by: index, live: true, now: MonotonicClock.nanoseconds())
        }
        session.onClose = { [self] code, reason in
            if opened { measurement.connections -= 1 }
            if measurement.phase == .done { return }
            if aborted[index] && subscribers[index] === session {
                // This is the drop (the old connection aborted): reconnect at once.
                aborted[index] = false
                reconnect(index, attempt: 1)
            } else if droppedAt[index] != 0 && subscribers[index] === session {
                // The reconnect itself failed: retry a few times, as a client would.
                retry(index, after: attempt, reason: "\(code.map { "close \($0.rawValue): " } ?? "")\(reason)")
            } else if settings.urls.all.count > 1 && opened && subscribers[index] === session && !positions[index].epoch.isEmpty {
                // Its node went away (cluster mode): it moves to the next one, as a dropped one does.
                droppedAt[index] = MonotonicClock.nanoseconds()
                dropped += 1
                reconnecting += 1
                reconnect(index, attempt: 1)
            } else {
                measurement.error("subscriber \(index) closed: \(code.map { "\($0.rawValue)" } ?? "never opened") \(reason)")
                done?(false)
            }
        }
        session.connect()
        return session
    }

    // MARK: Traffic

    private func startPublishing() {
        let publishers = settings.rooms * settings.publishersPerRoom
        progress.say("\(publishers) publishers at \(settings.rate) messages/s each; dropping \(formatted(settings.dropFraction * 100, decimals: 0)) % of the subscribers \(formatted(settings.dropAfterSeconds)) s into the window")
        schedule = OpenLoopSchedule(streams: publishers, ratePerStream: settings.rate, start: MonotonicClock.nanoseconds())
        sendTimer = loop.schedule(after: 1, repeating: 1) { [self] in sendDue() }
        measurement.progressDetail = { [self] in
            dropped == 0 ? "none dropped yet" : "reconnected \(grouped(reconnected)) of \(grouped(dropped)) (recovered true \(grouped(recoveredTrue)), false \(grouped(recoveredFalse)))"
        }
        measurement.begin(
            onMeasureStart: { [self] in
                loop.schedule(after: Int64(settings.dropAfterSeconds * 1000)) { [self] in drop() }
            },
            onMeasureEnd: { [self] in
                if let sendTimer { loop.cancelTimer(sendTimer) }
            },
            isDrained: { [self] in reconnecting == 0 && checker.counts.delivered >= expectedDeliveries && acknowledged >= sentTotal })
    }

    private var sentTotal: Int { schedule?.issued ?? 0 }

    private var expectedDeliveries: Int {
        (0..<settings.subscribers * settings.publishersPerRoom).reduce(0) { $0 + expected(stream: $1) }
    }

    /// How many messages stream `stream` should carry: what its publisher sent.
    private func expected(stream: Int) -> Int {
        let subscriber = stream / settings.publishersPerRoom, publisher = stream % settings.publishersPerRoom
        return schedule?.issued(stream: room(ofSubscriber: subscriber) * settings.publishersPerRoom + publisher) ?? 0
    }

    private func sendDue() {
        guard var schedule else { return }
        let due = schedule.due(at: MonotonicClock.nanoseconds())
        self.schedule = schedule
        for message in due {
            let stamp = Stamp(publisher: message.stream, sequence: message.sequence, intended: message.intended)
            let room = roomName(message.stream / settings.publishersPerRoom)
            let sent = publishers[message.stream].request(.publish(room, stamp: stamp.json(padding: padding))) { [self] reply in
                if reply.result != nil { acknowledged += 1 } else { measurement.error("publish refused: \(reply.text)") }
            }
            if sent { measurement.recordSent() } else { measurement.recordFailure("publish not sent: the connection is closed or its queue full") }
        }
    }

    /// A publication from a subscriber's stream: check it, time it, and remember its position.
    private func observe(_ stamp: Stamp, offset: UInt64?, by subscriber: Int, live: Bool, now: UInt64) {
        let room = room(ofSubscriber: subscriber)
        guard stamp.publisher / settings.publishersPerRoom == room else {
            return measurement.error("subscriber \(subscriber) of room \(room) got publisher \(stamp.publisher)'s message")
        }
        if let offset { positions[subscriber].offset = offset }
        checker.observe(stream: subscriber * settings.publishersPerRoom + stamp.publisher % settings.publishersPerRoom, sequence: stamp.sequence)
        if live {
            measurement.recordDelivery(intended: stamp.intended, at: now)
        } else {
            // Delayed by the outage by design: timed apart, so the live latency stays readable.
            measurement.recordDeliveryWithoutLatency()
            recoveredDelay.record(from: stamp.intended, to: now)
        }
    }

    // MARK: The storm

    private func drop() {
        guard measurement.phase == .measure else { return }
        let count = min(settings.subscribers, Int((settings.dropFraction * Double(settings.subscribers)).rounded()))
        progress.say("dropping \(count) of \(settings.subscribers) subscribers at once")
        let victims = Array((0..<settings.subscribers).shuffled().prefix(count))
        let now = MonotonicClock.nanoseconds()
        for index in victims {
            droppedAt[index] = now
            aborted[index] = true
            dropped += 1
            reconnecting += 1
        }
        // Each abort calls the old session's onClose, which starts the reconnect.
        let start = ThreadTime.now()
        for index in victims { subscribers[index].abort() }
        let issue = ThreadTime.now().since(start)
        issueTime = issue
        progress.say("issued \(count) reconnects in \(formatted(issue.wallSeconds, decimals: 2)) s: this thread ran \(formatted(issue.runSeconds, decimals: 2)) s and waited \(formatted(issue.waitSeconds, decimals: 2)) s for a core")
    }

    private func reconnect(_ index: Int, attempt: Int) {
        nodes[index] = (nodes[index] + 1) % settings.urls.all.count
        subscribers[index] = connectSubscriber(index, attempt: attempt, done: nil)
    }

    private func retry(_ index: Int, after attempt: Int, reason: String) {
        measurement.recordFailure("reconnect attempt failed: " + String(reason.prefix(120)))
        guard attempt < settings.reconnectAttempts else {
            measurement.error("subscriber \(index) could not reconnect in \(attempt) attempts: \(reason)")
            return reconnectEnded(index, success: false)
        }
        loop.schedule(after: Int64(200 * attempt)) { [self] in reconnect(index, attempt: attempt + 1) }
    }

    private func resumed(_ index: Int, _ subscription: Subscription) {
        let now = MonotonicClock.nanoseconds()
        reconnectTime.record(from: droppedAt[index], to: now)
        let recovered = subscription.recovered == true
        if recovered { recoveredTrue += 1 } else { recoveredFalse += 1 }
        recoveredPublications += subscription.publications.count
        for publication in subscription.publications {
            guard let stamp = Stamp(json: publication.data) else { continue }
            observe(stamp, offset: publication.offset, by: index, live: false, now: now)
        }
        positions[index].epoch = subscription.epoch
        if !recovered {
            // Not recoverable: carry on from the channel's newest message; the checker reports
            // what was lost as gaps.
            positions[index].offset = subscription.offset
        }
        reconnectEnded(index, success: true)
    }

    private func reconnectEnded(_ index: Int, success: Bool) {
        guard droppedAt[index] != 0 else { return }
        droppedAt[index] = 0
        reconnecting -= 1
        if success { reconnected += 1 } else { reconnectFailed += 1 }
        if reconnecting == 0 {
            progress.say("all \(dropped) reconnects done: \(reconnected) resubscribed (\(recoveredTrue) recovered, \(recoveredFalse) not), \(reconnectFailed) failed; reconnect p50 \(reconnectTime.percentile(50)) ms, max \(Double(reconnectTime.histogram.max) / 1000) ms")
        }
    }

    private func finish() {
        var counts = checker.counts
        counts.missing = checker.missing { [self] in expected(stream: $0) }
        result = measurement.result(
            scenario: "reconnect-storm",
            parameters: [
                "subscribers": "\(settings.subscribers)", "rooms": "\(settings.rooms)", "publishers_per_room": "\(settings.publishersPerRoom)",
                "rate": "\(settings.rate)", "drop_after_s": "\(settings.dropAfterSeconds)", "drop_fraction": "\(settings.dropFraction)",
                "payload_bytes": "\(settings.payloadBytes)", "duration_s": "\(settings.measurement.durationSeconds ?? 0)",
            ],
            latencyMeaning: "publish → live delivery, from the intended send time",
            sent: sentTotal, acknowledged: acknowledged, stream: counts,
            figures: [
                "dropped": Double(dropped), "reconnected": Double(reconnected), "reconnect_failed": Double(reconnectFailed),
                "still_reconnecting": Double(reconnecting), "recovered_true": Double(recoveredTrue),
                "recovered_false": Double(recoveredFalse), "recovered_publications": Double(recoveredPublications),
                "reconnects_issued_s": issueTime?.wallSeconds ?? 0, "reconnects_issued_run_s": issueTime?.runSeconds ?? 0,
                "reconnects_issued_wait_s": issueTime?.waitSeconds ?? 0,
            ],
            otherLatencies: ["reconnect (drop → subscribed)": reconnectTime.summary, "recovered delivery (intended → in the subscribe reply)": recoveredDelay.summary])
        if dropped == 0 { result?.errors.append("nothing was dropped: --drop-after must fall inside --duration") }
        if reconnecting > 0 { result?.errors.append("\(reconnecting) subscribers were still reconnecting at the end") }
        for session in subscribers + publishers { session.close() }
        admin?.close()
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

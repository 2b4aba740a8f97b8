import HuddleClient
import HuddleIO
import HuddleProtocol

/// `fanout`: P publishers → one room with N subscribers, open loop at R messages/s per
/// publisher. Every message carries its publisher, sequence number and *intended* send time,
/// so latency counts from when it should have left (a slow server cannot hide queueing by
/// slowing the sender: no coordinated omission) and every delivery is checked for gaps,
/// duplicates and reordering.
///
/// One room's subscribers may be spread over several harness processes (one process holds at
/// most its descriptor limit): all name the same `--room` and `--start-at`, one publishes, the
/// others listen only. A listener does not know what was sent: it expects of each publisher
/// every number up to the highest any of its subscribers heard, after the whole drain.
final class FanoutScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        /// Publisher `i` starts on node `i mod n` of these; `urls` unless the run puts them apart.
        var publisherURLs: ServerURLs
        var options: ClientConnectionOptions
        var subscribers: Int
        var publishers: Int
        var rate: Double
        var payloadBytes: Int
        var measurement: Measurement.Settings
        var connectConcurrency = 200
        /// The room; a fresh random one when nil.
        var room: String?
        /// Publishing (or, listening only, measuring) starts at this wall-clock time (seconds
        /// since 1970) instead of as soon as the set-up is done.
        var startAt: Double?
        /// Open no publishers: another process publishes to `room` (with as many publishers).
        var listenOnly = false
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private let users = LoadTestUsers()
    private var token = ""
    private let room: String
    private var admin: HarnessSession?
    private var subscribers: [HarnessSession] = []
    private var publishers: [HarnessSession] = []
    private var setup: SetupQueue?
    private var checker: StreamChecker
    private var schedule: OpenLoopSchedule?
    private var sendTimer: Int?
    private var acknowledged = 0
    /// Listening only: per publisher, one past the highest number any subscriber heard.
    private var heard: [Int]
    private let padding: String
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(loop: loop, progress: progress, settings: settings.measurement)
        checker = StreamChecker(receivers: settings.subscribers, publishers: settings.publishers)
        room = settings.room ?? "room:loadtest-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        heard = Array(repeating: 0, count: settings.publishers)
        padding = String(repeating: "x", count: max(0, settings.payloadBytes))
    }

    /// Runs on the loop thread; stops the loop when done.
    func start() {
        measurement.onDone = { [self] in finish() }
        admin = users.signUpSharedAccount(url: settings.urls.first, loop: loop, options: settings.options, measurement: measurement) { [self] token in
            self.token = token
            // Any node accepts it at once: in cluster mode a node catches up with the log
            // before it refuses a token it does not know.
            progress.say("signed up \(users.username(0)); opening \(settings.subscribers) subscribers")
            openSubscribers()
        }
    }

    private func openSubscribers() {
        let queue = SetupQueue(count: settings.subscribers, concurrency: settings.connectConcurrency, step: { [self] index, done in
            let session = HarnessSession(url: settings.urls[node: index], loop: loop, options: settings.options.bearer(token))
            subscribers.append(session)
            session.onOpen = { [self] in
                measurement.connections += 1
                session.expectOK(.subscribe(channel: room, since: nil)) { [self] refusal in
                    if let refusal { measurement.error("subscriber \(index): \(refusal)") }
                    done(refusal == nil)
                }
            }
            session.onPublication = { [self] publication in received(publication.stamp, by: index) }
            session.onClose = { [self] code, reason in
                if code != nil { measurement.connections -= 1 }
                if measurement.phase != .done { measurement.error("subscriber \(index) closed: \(code?.rawValue ?? 0) \(reason)") }
                done(false)
            }
            session.connect()
        }, completion: { [self] failed in
            if failed > 0 { return measurement.abort("\(failed) of \(settings.subscribers) subscribers could not subscribe") }
            if settings.listenOnly {
                progress.say("\(settings.subscribers) subscribed to \(room); listening only")
                return StartAt.wait(until: settings.startAt, loop: loop, measurement: measurement, progress: progress) { [self] in startListening() }
            }
            openPublishers()
        })
        setup = queue
        measurement.track(queue, "subscribed")
        queue.run()
    }

    private func openPublishers() {
        progress.say("\(settings.subscribers) subscribed; starting \(settings.publishers) publisher(s) at \(settings.rate) msg/s each")
        let queue = SetupQueue(count: settings.publishers, concurrency: settings.connectConcurrency, step: { [self] index, done in
            let session = HarnessSession(url: settings.publisherURLs[node: index], loop: loop, options: settings.options.bearer(token))
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
            if failed > 0 { return measurement.abort("\(failed) of \(settings.publishers) publishers could not connect") }
            StartAt.wait(until: settings.startAt, loop: loop, measurement: measurement, progress: progress) { [self] in startPublishing() }
        })
        setup = queue
        measurement.track(queue, "publishers connected")
        queue.run()
    }

    private func startPublishing() {
        schedule = OpenLoopSchedule(streams: settings.publishers, ratePerStream: settings.rate, start: MonotonicClock.nanoseconds())
        sendTimer = loop.schedule(after: 1, repeating: 1) { [self] in sendDue() }
        measurement.progressDetail = { [self] in "acknowledged \(grouped(acknowledged))" }
        measurement.begin(
            onMeasureEnd: { [self] in
                if let sendTimer { loop.cancelTimer(sendTimer) }
            },
            isDrained: { [self] in checker.counts.delivered >= sentTotal * settings.subscribers && acknowledged >= sentTotal })
    }

    private func startListening() {
        measurement.progressDetail = { [self] in "heard \(grouped(heardTotal))" }
        // It cannot know what is still under way from the publisher: it waits the whole drain.
        measurement.begin(onMeasureEnd: {}, isDrained: { false })
    }

    private var heardTotal: Int { heard.reduce(0, +) }

    private var sentTotal: Int { settings.listenOnly ? heardTotal : schedule?.issued ?? 0 }

    private func sendDue() {
        guard var schedule else { return }
        let due = schedule.due(at: MonotonicClock.nanoseconds())
        self.schedule = schedule
        for message in due {
            let stamp = Stamp(publisher: message.stream, sequence: message.sequence, intended: message.intended)
            let sent = publishers[message.stream].request(.publish(room, stamp: stamp.json(padding: padding))) { [self] reply in
                if reply.result != nil { acknowledged += 1 } else { measurement.error("publish refused: \(reply.text)") }
            }
            if sent { measurement.recordSent() } else { measurement.recordFailure("publish not sent: the connection is closed or its queue full") }
        }
    }

    private func received(_ stamp: Stamp, by subscriber: Int) {
        guard stamp.publisher < settings.publishers else { return }
        let now = MonotonicClock.nanoseconds()
        heard[stamp.publisher] = max(heard[stamp.publisher], stamp.sequence + 1)
        checker.observe(receiver: subscriber, publisher: stamp.publisher, sequence: stamp.sequence)
        measurement.recordDelivery(intended: stamp.intended, at: now)
    }

    private func finish() {
        var counts = checker.counts
        let schedule = self.schedule
        counts.missing = checker.missing(sentPerPublisher: settings.listenOnly ? heard : (0..<settings.publishers).map { schedule?.issued(stream: $0) ?? 0 })
        result = measurement.result(
            scenario: "fanout",
            parameters: [
                "subscribers": "\(settings.subscribers)", "publishers": "\(settings.publishers)", "rate": "\(settings.rate)",
                "payload_bytes": "\(settings.payloadBytes)", "duration_s": "\(settings.measurement.durationSeconds ?? 0)",
                "room": room, "listen_only": "\(settings.listenOnly)",
            ],
            latencyMeaning: "publish → delivery, from the intended send time",
            sent: sentTotal, acknowledged: settings.listenOnly ? sentTotal : acknowledged, stream: counts,
            figures: ["publishes_per_second_asked": settings.rate * Double(settings.publishers)])
        for session in subscribers + publishers { session.close() }
        admin?.close()
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

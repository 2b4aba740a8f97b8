import HuddleClient
import HuddleProtocol
import HuddleIO

/// `broadcast` (raw): N subscribers and P publishers on any server's broadcast endpoint — one
/// that sends every message to every connection, the sender included (Huddle's `/broadcast`
/// with `--bench`, or bench/python_ws_server.py). Publishers send R messages/s each, open loop;
/// every subscriber must receive every publisher's messages exactly once and in order, and
/// latency counts from the intended send time.
final class BroadcastScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        var options: ClientConnectionOptions
        var subscribers: Int
        var publishers: Int
        var rate: Double
        var payloadBytes: Int
        var measurement: Measurement.Settings
        var connectConcurrency = 200
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private var subscribers: [RawConnection] = []
    private var publishers: [RawConnection] = []
    private var checker: StreamChecker
    private var schedule: OpenLoopSchedule?
    private var sendTimer: Int?
    private var setup: SetupQueue?
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(loop: loop, progress: progress, settings: settings.measurement)
        checker = StreamChecker(receivers: settings.subscribers, publishers: settings.publishers)
    }

    func start() {
        measurement.onDone = { [self] in finish() }
        progress.say("opening \(settings.subscribers) subscribers and \(settings.publishers) publishers on \(settings.urls)")
        let total = settings.subscribers + settings.publishers
        // Subscribers first, so every one of them is listening before the first message.
        let queue = SetupQueue(count: total, concurrency: settings.connectConcurrency, step: { [self] index, done in
            let isSubscriber = index < settings.subscribers
            let connection = RawConnection(url: settings.urls[node: index], loop: loop, options: settings.options)
            if isSubscriber { subscribers.append(connection) } else { publishers.append(connection) }
            connection.onOpen = { [self] in
                measurement.connections += 1
                done(true)
            }
            if isSubscriber { connection.onText = { [self] text in received(text, by: index) } }
            connection.onClose = { [self] code, reason in
                if code != nil { measurement.connections -= 1 }
                if measurement.phase != .done {
                    measurement.error("\(isSubscriber ? "subscriber" : "publisher") \(index) closed: \(code.map { "\($0.rawValue)" } ?? "never opened") \(reason)")
                }
                done(false)
            }
            connection.connect()
        }, completion: { [self] failed in
            if failed > 0 { return measurement.abort("\(failed) of \(total) connections could not open") }
            startPublishing()
        })
        setup = queue
        measurement.track(queue, "connected")
        queue.run()
    }

    private func startPublishing() {
        progress.say("\(settings.publishers) publisher(s) at \(settings.rate) messages/s each → \(grouped(Int(settings.rate * Double(settings.publishers * settings.subscribers)))) deliveries/s asked")
        schedule = OpenLoopSchedule(streams: settings.publishers, ratePerStream: settings.rate, start: MonotonicClock.nanoseconds())
        sendTimer = loop.schedule(after: 1, repeating: 1) { [self] in sendDue() }
        measurement.begin(
            onMeasureEnd: { [self] in
                if let sendTimer { loop.cancelTimer(sendTimer) }
            },
            isDrained: { [self] in checker.counts.delivered >= sentTotal * settings.subscribers })
    }

    private var sentTotal: Int { schedule?.issued ?? 0 }

    private func sendDue() {
        guard var schedule else { return }
        let due = schedule.due(at: MonotonicClock.nanoseconds())
        self.schedule = schedule
        for message in due {
            let stamp = Stamp(publisher: message.stream, sequence: message.sequence, intended: message.intended)
            if publishers[message.stream].send(stamp.text(size: settings.payloadBytes)) {
                measurement.recordSent()
            } else {
                measurement.recordFailure("not sent: the connection is closed or its queue full")
            }
        }
    }

    private func received(_ text: [UInt8], by subscriber: Int) {
        let now = MonotonicClock.nanoseconds()
        guard let stamp = Stamp(text: text), stamp.publisher < settings.publishers else { return }
        checker.observe(receiver: subscriber, publisher: stamp.publisher, sequence: stamp.sequence)
        measurement.recordDelivery(intended: stamp.intended, at: now)
    }

    private func finish() {
        var counts = checker.counts
        let schedule = self.schedule
        counts.missing = checker.missing(sentPerPublisher: (0..<settings.publishers).map { schedule?.issued(stream: $0) ?? 0 })
        result = measurement.result(
            scenario: "broadcast",
            parameters: [
                "url": settings.urls.description, "subscribers": "\(settings.subscribers)", "publishers": "\(settings.publishers)",
                "rate": "\(settings.rate)", "payload_bytes": "\(settings.payloadBytes)",
                "duration_s": "\(settings.measurement.durationSeconds ?? 0)",
            ],
            latencyMeaning: "send → delivery, from the intended send time",
            sent: sentTotal, acknowledged: sentTotal, stream: counts,
            figures: ["deliveries_per_second_asked": settings.rate * Double(settings.publishers * settings.subscribers)])
        for connection in subscribers + publishers { connection.close() }
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

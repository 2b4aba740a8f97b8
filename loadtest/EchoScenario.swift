import HuddleClient
import HuddleProtocol
import HuddleIO

/// `echo` (raw): N connections to any server's echo endpoint, each keeping W messages in
/// flight (closed loop: round trips per second) or sending R messages/s (open loop: latency
/// from the intended send time). Every echo is checked: each connection must get its own
/// messages back exactly once and in order.
final class EchoScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        var options: ClientConnectionOptions
        var connections: Int
        /// Messages in flight per connection in the closed loop.
        var window: Int
        /// Messages per second per connection; 0 for the closed loop.
        var rate: Double
        var payloadBytes: Int
        var measurement: Measurement.Settings
        var connectConcurrency = 200
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private var connections: [RawConnection] = []
    private var sent: [Int]
    private var checker: StreamChecker
    private var schedule: OpenLoopSchedule?
    private var sendTimer: Int?
    private var setup: SetupQueue?
    private var sending = false
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(loop: loop, progress: progress, settings: settings.measurement)
        sent = Array(repeating: 0, count: settings.connections)
        checker = StreamChecker(streams: settings.connections)
    }

    func start() {
        measurement.onDone = { [self] in finish() }
        progress.say("opening \(settings.connections) connections to \(settings.urls)")
        let queue = SetupQueue(count: settings.connections, concurrency: settings.connectConcurrency, step: { [self] index, done in
            let connection = RawConnection(url: settings.urls[node: index], loop: loop, options: settings.options)
            connections.append(connection)
            connection.onOpen = { [self] in
                measurement.connections += 1
                done(true)
            }
            connection.onText = { [self] text in echoed(text, on: index) }
            connection.onClose = { [self] code, reason in
                if code != nil { measurement.connections -= 1 }
                if measurement.phase != .done { measurement.error("connection \(index) closed: \(code.map { "\($0.rawValue)" } ?? "never opened") \(reason)") }
                done(false)
            }
            connection.connect()
        }, completion: { [self] failed in
            if failed > 0 { return measurement.abort("\(failed) of \(settings.connections) connections could not open") }
            startSending()
        })
        setup = queue
        measurement.track(queue, "connected")
        queue.run()
    }

    private func startSending() {
        sending = true
        if settings.rate > 0 {
            progress.say("open loop: \(settings.rate) messages/s per connection")
            schedule = OpenLoopSchedule(streams: settings.connections, ratePerStream: settings.rate, start: MonotonicClock.nanoseconds())
            sendTimer = loop.schedule(after: 1, repeating: 1) { [self] in sendDue() }
        } else {
            progress.say("closed loop: \(settings.window) in flight per connection")
            let now = MonotonicClock.nanoseconds()
            for index in connections.indices {
                for _ in 0..<settings.window { send(on: index, intended: now) }
            }
        }
        measurement.begin(
            onMeasureEnd: { [self] in
                sending = false
                if let sendTimer { loop.cancelTimer(sendTimer) }
            },
            isDrained: { [self] in checker.counts.delivered >= totalSent })
    }

    private var totalSent: Int { sent.reduce(0, +) }

    private func sendDue() {
        guard var schedule else { return }
        let due = schedule.due(at: MonotonicClock.nanoseconds())
        self.schedule = schedule
        for message in due { send(on: message.stream, intended: message.intended) }
    }

    private func send(on index: Int, intended: UInt64) {
        let stamp = Stamp(publisher: index, sequence: sent[index], intended: intended)
        if connections[index].send(stamp.text(size: settings.payloadBytes)) {
            sent[index] += 1
            measurement.recordSent()
        } else {
            measurement.recordFailure("not sent: the connection is closed or its queue full")
        }
    }

    private func echoed(_ text: [UInt8], on index: Int) {
        let now = MonotonicClock.nanoseconds()
        guard let stamp = Stamp(text: text), stamp.publisher == index else {
            return measurement.error("connection \(index) got back a message it did not send (\(text.count) bytes)")
        }
        checker.observe(stream: index, sequence: stamp.sequence)
        measurement.recordDelivery(intended: stamp.intended, at: now)
        if sending && settings.rate == 0 { send(on: index, intended: now) }
    }

    private func finish() {
        var counts = checker.counts
        counts.missing = checker.missing { [sent] in sent[$0] }
        result = measurement.result(
            scenario: "echo",
            parameters: [
                "url": settings.urls.description, "connections": "\(settings.connections)",
                "window": settings.rate > 0 ? "open loop" : "\(settings.window)",
                "rate": settings.rate > 0 ? "\(settings.rate)" : "closed loop",
                "payload_bytes": "\(settings.payloadBytes)", "duration_s": "\(settings.measurement.durationSeconds ?? 0)",
            ],
            latencyMeaning: settings.rate > 0 ? "round trip, from the intended send time" : "round trip, from the send (closed loop)",
            sent: totalSent, acknowledged: counts.delivered, stream: counts,
            figures: ["round_trips_per_second": measurement.measuredSeconds > 0 ? Double(measurement.measuredDeliveries) / measurement.measuredSeconds : 0],
            deliveredLabel: "echoed")
        for connection in connections { connection.close() }
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

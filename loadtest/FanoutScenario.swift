import Glibc
import HuddleClient
import HuddleIO
import HuddleProtocol

/// `fanout`: P publishers → one room with N subscribers, open loop at R messages/s per
/// publisher. Every message carries its publisher, sequence number and *intended* send time,
/// so latency counts from when it should have left (a slow server cannot hide queueing by
/// slowing the sender: no coordinated omission) and every delivery is checked for gaps,
/// duplicates and reordering.
final class FanoutScenario: Scenario {
    struct Settings: Sendable {
        var url: ClientURL
        var options: ClientConnectionOptions
        var subscribers: Int
        var publishers: Int
        var rate: Double
        var payloadBytes: Int
        var warmupSeconds: Double
        var durationSeconds: Double
        var serverPID: Int32?
        var connectConcurrency = 200
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    private var token = ""
    private let room = "room:loadtest-\(UInt32.random(in: 0...UInt32.max))"
    private var subscribers: [ProtocolSession] = []
    private var publishers: [ProtocolSession] = []
    private var subscribed = 0
    private var connecting = 0
    private var failures: [String] = []
    private var checker: StreamChecker
    private var latency = LatencyRecorder()
    private var sent: [Int]
    private var acknowledged = 0
    private var publishStart: UInt64 = 0
    private var measuring = false
    private var measuredDeliveries = 0
    private var measureStart: UInt64 = 0
    private var measureEnd: UInt64 = 0
    private var samplesAtStart: (server: ProcessSample?, client: ProcessSample?)
    private var samplesAtEnd: (server: ProcessSample?, client: ProcessSample?)
    private var padding: String
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        checker = StreamChecker(receivers: settings.subscribers, publishers: settings.publishers)
        sent = Array(repeating: 0, count: settings.publishers)
        padding = String(repeating: "x", count: max(0, settings.payloadBytes))
    }

    /// Runs on the loop thread; stops the loop when done.
    func start() {
        let admin = ProtocolSession(url: settings.url, loop: loop, options: settings.options)
        admin.onOpen = { [self] in
            let name = "lt\(UInt32.random(in: 0...UInt32.max))"
            admin.request("signup", [("username", .string(name)), ("email", .string("\(name)@loadtest.invalid")), ("password", .string("loadtest-\(name)"))]) { [self] reply in
                guard let token = reply["result"]?["token"]?.stringValue else { return fail("signup failed: \(JSONWriter.serialize(reply))") }
                self.token = token
                progress.say("signed up \(name); opening \(settings.subscribers) subscribers")
                openSubscribers()
            }
        }
        admin.onClose = { [self] code, reason in if token.isEmpty { fail("admin connection closed: \(code?.rawValue ?? 0) \(reason)") } }
        admin.connect()
        publishers.append(admin)  // keeps it alive; it is not a publisher (index past the real ones)
    }

    private func authenticatedOptions() -> ClientConnectionOptions {
        var options = settings.options
        options.headers.append(("Authorization", "Bearer \(token)"))
        return options
    }

    private func openSubscribers() {
        while connecting < settings.connectConcurrency, subscribers.count < settings.subscribers {
            let index = subscribers.count
            let session = ProtocolSession(url: settings.url, loop: loop, options: authenticatedOptions())
            subscribers.append(session)
            connecting += 1
            session.onOpen = { [self] in
                session.request("subscribe", [("channel", .string(room))]) { [self] reply in
                    connecting -= 1
                    guard reply["ok"]?.boolValue == true else { return fail("subscribe failed: \(JSONWriter.serialize(reply))") }
                    subscribed += 1
                    if subscribed == settings.subscribers { openPublishers() } else { openSubscribers() }
                }
            }
            session.onEvent = { [self] event in received(event, by: index) }
            session.onClose = { [self] code, reason in if measuring || subscribed < settings.subscribers { fail("subscriber \(index) closed: \(code?.rawValue ?? 0) \(reason)") } }
            session.connect()
        }
    }

    private func openPublishers() {
        progress.say("\(subscribed) subscribed; starting \(settings.publishers) publisher(s) at \(settings.rate) msg/s each")
        var open = 0
        var sessions: [ProtocolSession] = []
        for _ in 0..<settings.publishers {
            let session = ProtocolSession(url: settings.url, loop: loop, options: authenticatedOptions())
            session.onOpen = { [self] in
                open += 1
                if open == settings.publishers { startPublishing(sessions) }
            }
            sessions.append(session)
            session.connect()
        }
    }

    private func startPublishing(_ sessions: [ProtocolSession]) {
        publishers.insert(contentsOf: sessions, at: 0)
        publishStart = MonotonicClock.nanoseconds()
        let interval = 1e9 / settings.rate
        let warmupEnd = publishStart + UInt64(settings.warmupSeconds * 1e9)
        let end = warmupEnd + UInt64(settings.durationSeconds * 1e9)
        loop.schedule(after: 1, repeating: 1) { [self] in
            let now = MonotonicClock.nanoseconds()
            if !measuring, now >= warmupEnd, measureStart == 0 {
                measuring = true
                measureStart = now
                samplesAtStart = sample()
                progress.say("measuring for \(settings.durationSeconds) s")
            }
            if now >= end {
                if measuring {
                    measuring = false
                    measureEnd = now
                    samplesAtEnd = sample()
                    progress.say("draining for 2 s")
                    loop.schedule(after: 2_000) { [self] in finish() }
                }
                return
            }
            // Open loop: send whatever is due by now, each stamped with its intended time.
            let due = Int(Double(now - publishStart) / interval)
            for publisher in 0..<settings.publishers {
                while sent[publisher] <= due {
                    let intended = publishStart + UInt64(Double(sent[publisher]) * interval)
                    publish(publisher, sequence: sent[publisher], intended: intended)
                    sent[publisher] += 1
                }
            }
        }
        loop.schedule(after: 1_000, repeating: 1_000) { [self] in
            guard measureStart != 0 || measuring else { return }
            progress.say("sent \(sent.reduce(0, +)), acknowledged \(acknowledged), delivered \(checker.counts.delivered), p99 so far \(latency.percentile(99)) ms")
        }
    }

    private func publish(_ publisher: Int, sequence: Int, intended: UInt64) {
        let data: JSONValue = .object([
            ("p", .number(String(publisher))), ("s", .number(String(sequence))), ("t", .number(String(intended))), ("x", .string(padding)),
        ])
        publishers[publisher].request("publish", [("channel", .string(room)), ("data", data)]) { [self] reply in
            if reply["ok"]?.boolValue == true { acknowledged += 1 } else { failures.append("publish refused: \(JSONWriter.serialize(reply))") }
        }
    }

    private func received(_ event: JSONValue, by subscriber: Int) {
        guard event["event"]?.stringValue == "publication", let data = event["data"],
              let publisher = data["p"]?.int64Value, let sequence = data["s"]?.int64Value,
              let intendedText = data["t"], case .number(let digits) = intendedText, let intended = UInt64(digits)
        else { return }
        let now = MonotonicClock.nanoseconds()
        checker.observe(receiver: subscriber, publisher: Int(publisher), sequence: Int(sequence))
        if measuring, intended >= measureStart {
            latency.record(microseconds: now > intended ? (now - intended) / 1000 : 0)
            measuredDeliveries += 1
        }
    }

    private func sample() -> (server: ProcessSample?, client: ProcessSample?) {
        (settings.serverPID.flatMap { ProcessSample.read(pid: $0) }, ProcessSample.read(pid: getpid()))
    }

    private func fail(_ reason: String) {
        failures.append(reason)
        progress.say("error: \(reason)")
        if failures.count == 1 && publishStart == 0 { finish() }
    }

    private func finish() {
        let seconds = Double(measureEnd &- measureStart) / 1e9
        var counts = checker.counts
        counts.missing = checker.missing(sentPerPublisher: sent)
        func cpu(_ start: ProcessSample?, _ end: ProcessSample?) -> Double? {
            guard let start, let end, seconds > 0 else { return nil }
            return (end.cpuSeconds - start.cpuSeconds) / seconds * 100
        }
        let serverCPU = cpu(samplesAtStart.server, samplesAtEnd.server)
        let deliveriesPerSecond = seconds > 0 ? Double(measuredDeliveries) / seconds : 0
        result = ScenarioResult(
            scenario: "fanout",
            parameters: [
                "subscribers": "\(settings.subscribers)", "publishers": "\(settings.publishers)", "rate": "\(settings.rate)",
                "payload_bytes": "\(settings.payloadBytes)", "duration_s": "\(settings.durationSeconds)",
            ],
            sent: sent.reduce(0, +), acknowledged: acknowledged, stream: counts, latency: latency.summary,
            measuredSeconds: seconds, deliveriesPerSecond: deliveriesPerSecond,
            serverCPUPercent: serverCPU, serverRSSKilobytes: samplesAtEnd.server?.rssKilobytes,
            clientCPUPercent: cpu(samplesAtStart.client, samplesAtEnd.client),
            deliveriesPerServerCPUSecond: serverCPU.map { $0 > 0 ? deliveriesPerSecond / ($0 / 100) : 0 },
            errors: Array(failures.prefix(20)))
        for session in subscribers + publishers { session.close() }
        loop.schedule(after: 500) { [loop] in loop.stop() }
    }
}

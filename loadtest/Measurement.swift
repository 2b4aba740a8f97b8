import Foundation
import HuddleIO

/// The clock, counters and samplers every scenario shares, on the scenario's loop thread.
///
/// A run goes setup → warm-up → measure → drain → done. Setup (connecting, signing up,
/// subscribing) is the scenario's own; `begin` starts the traffic clock. Figures cover the
/// measured window only: deliveries that *arrive* in it give the throughput, and messages
/// *intended* in it give the latency — wherever they arrive, drain included, so the slowest
/// messages at the end of the window are not dropped from the tail. Every second, whatever
/// the phase, a `SecondSample` is taken (throughput, that second's latency, server and harness
/// CPU and memory, load) and a progress line goes to the terminal.
final class Measurement {
    enum Phase: String {
        case setup, warmup, measure, drain, done
    }

    struct Settings {
        var warmupSeconds: Double
        /// nil: until the scenario calls `endMeasuring()`.
        var durationSeconds: Double?
        /// Longest wait after the window for messages still under way.
        var drainSeconds: Double = 2
        var serverPID: Int32?
    }

    private let loop: EventLoop
    private let progress: Progress
    private let settings: Settings
    private(set) var phase = Phase.setup
    private let started = MonotonicClock.nanoseconds()
    private let startedAt = Date()
    private var machine: MachineInfo
    private(set) var trafficStart: UInt64 = 0
    private(set) var measureStart: UInt64 = 0
    private(set) var measureEnd: UInt64 = 0

    /// Latency of messages intended within the window.
    private(set) var latency = LatencyRecorder()
    /// Latency of what arrived during the current second.
    private var secondLatency = LatencyRecorder()
    private var secondSent = 0
    private var secondDelivered = 0
    private var secondFailed = 0
    private(set) var measuredDeliveries = 0
    private(set) var measuredSent = 0
    /// Open connections, kept up to date by the scenario.
    var connections = 0
    private(set) var failures: [String: Int] = [:]
    private(set) var errors: [String] = []
    /// Every error, also those past the ones kept in `errors`.
    private(set) var errorCount = 0
    /// Set when a signal (Ctrl-C) cut the run short: the result covers what was measured so far.
    private(set) var interruption: Interruption?
    private(set) var series: [SecondSample] = []

    private var ticks: SecondTicks
    private var lastTick: (time: UInt64, server: ProcessSample?, harness: ProcessSample?)
    private var atMeasureStart: (server: ProcessSample?, harness: ProcessSample?)
    private var atMeasureEnd: (server: ProcessSample?, harness: ProcessSample?)
    private var tickTimer: Int?
    /// The set-up stage under way, for the progress line while nothing is sent yet.
    private var setupStage: (name: String, queue: SetupQueue)?
    private var drainTimer: Int?

    /// Scenario figures appended to the progress line ("recovered 120/500").
    var progressDetail: (() -> String)?
    private var onMeasureStart: (() -> Void)?
    private var onMeasureEnd: (() -> Void)?
    private var isDrained: (() -> Bool)?
    /// Called once when the run is over (drained, or aborted — also during set-up): the
    /// scenario builds its result and stops the loop there. Set it before anything can fail.
    var onDone: (() -> Void)?

    /// Reasons kept apart in `failures`; beyond this many distinct ones they are lumped together,
    /// so a run that fails in a million different words still has a bounded result.
    static let maxFailureReasons = 50

    init(loop: EventLoop, progress: Progress, settings: Settings) {
        self.loop = loop
        self.progress = progress
        self.settings = settings
        machine = MachineInfo.current(serverPID: settings.serverPID)
        ticks = SecondTicks(start: started)
        lastTick = (started, settings.serverPID.flatMap(ProcessSample.read(pid:)), ProcessSample.read(pid: getpid()))
        // Sampling starts with the run, so connection set-up (often the heaviest part) is seen too.
        scheduleTick()
    }

    /// One-shot timers aimed at each second boundary of the run: a repeating timer re-armed
    /// from when it fired drifts, and its rounded times skip a second now and then.
    private func scheduleTick() {
        tickTimer = loop.schedule(after: ticks.millisecondsToNext(from: MonotonicClock.nanoseconds())) { [unowned self] in
            guard phase != .done else { return }
            tick()
            scheduleTick()
        }
    }

    // MARK: Phases

    /// Starts the traffic clock: warm-up, then the measured window, then the drain.
    /// `isDrained` says when every message sent has arrived, to end the drain early.
    func begin(onMeasureStart: (() -> Void)? = nil, onMeasureEnd: @escaping () -> Void, isDrained: @escaping () -> Bool) {
        guard phase == .setup else { return }
        self.onMeasureStart = onMeasureStart
        self.onMeasureEnd = onMeasureEnd
        self.isDrained = isDrained
        trafficStart = MonotonicClock.nanoseconds()
        phase = .warmup
        if settings.warmupSeconds > 0 {
            progress.say("warming up for \(formatted(settings.warmupSeconds)) s")
            loop.schedule(after: Int64(settings.warmupSeconds * 1000)) { [unowned self] in startMeasuring() }
        } else {
            startMeasuring()
        }
    }

    private func startMeasuring() {
        guard phase == .warmup else { return }
        phase = .measure
        measureStart = MonotonicClock.nanoseconds()
        atMeasureStart = samples()
        progress.say("measuring" + (settings.durationSeconds.map { " for \(formatted($0)) s" } ?? ""))
        onMeasureStart?()
        if let duration = settings.durationSeconds {
            loop.schedule(after: Int64(duration * 1000)) { [unowned self] in endMeasuring() }
        }
    }

    /// Ends the measured window (at the set duration, or when the scenario decides), then
    /// drains until everything arrived or the drain time is up.
    func endMeasuring() {
        if phase == .warmup { startMeasuring() }
        guard phase == .measure else { return }
        phase = .drain
        measureEnd = MonotonicClock.nanoseconds()
        atMeasureEnd = samples()
        onMeasureEnd?()
        let drainEnd = measureEnd + UInt64(settings.drainSeconds * 1e9)
        drainTimer = loop.schedule(after: 0, repeating: 20) { [unowned self] in
            if isDrained?() == true || MonotonicClock.nanoseconds() >= drainEnd { finish() }
        }
    }

    /// Ends the run early because of `signal` (SIGINT from Ctrl-C, SIGTERM): the sending stops
    /// and what was measured so far becomes the result, marked interrupted. In the window, the
    /// usual drain still lets messages under way arrive (ended early once they have, at most
    /// `--drain`); a second signal ends the drain too.
    func interrupt(signal: String) {
        if interruption == nil {
            interruption = Interruption(signal: signal, phase: phase.rawValue, atSeconds: Double(MonotonicClock.nanoseconds() - started) / 1e9)
            progress.say("\(signal) during \(phase.rawValue): stopping and reporting what was measured so far (again to skip the drain)")
        }
        switch phase {
        case .setup, .warmup:
            stopEarly()
        case .measure:
            endMeasuring()
        case .drain:
            finish()
        case .done:
            break
        }
    }

    /// Ends the run at once (a fatal error during set-up or traffic).
    func abort(_ reason: String) {
        error(reason)
        stopEarly()
    }

    private func stopEarly() {
        if phase == .setup || phase == .warmup { measureStart = MonotonicClock.nanoseconds() }
        if phase == .measure || phase == .warmup {
            phase = .drain
            measureEnd = MonotonicClock.nanoseconds()
            atMeasureEnd = samples()
            onMeasureEnd?()
        }
        finish()
    }

    private func finish() {
        guard phase != .done else { return }
        if let drainTimer { loop.cancelTimer(drainTimer) }
        if let tickTimer { loop.cancelTimer(tickTimer) }
        tick(final: true)
        phase = .done
        machine.loadAtEnd = MachineInfo.loadAverages() ?? []
        onDone?()
    }

    var isMeasuring: Bool { phase == .measure }

    /// Intended in the window: its latency counts.
    private func inWindow(_ intended: UInt64) -> Bool {
        measureStart != 0 && intended >= measureStart && (measureEnd == 0 || intended < measureEnd)
    }

    // MARK: Counting

    func recordSent(_ count: Int = 1) {
        secondSent += count
        if phase == .measure { measuredSent += count }
    }

    /// A message stamped with its intended send time arrived now.
    func recordDelivery(intended: UInt64, at now: UInt64 = MonotonicClock.nanoseconds()) {
        secondDelivered += 1
        secondLatency.record(from: intended, to: now)
        if phase == .measure { measuredDeliveries += 1 }
        if inWindow(intended) { latency.record(from: intended, to: now) }
    }

    /// A delivery counted for throughput whose latency is not meaningful (recovered history).
    func recordDeliveryWithoutLatency() {
        secondDelivered += 1
        if phase == .measure { measuredDeliveries += 1 }
    }

    func recordFailure(_ reason: String) {
        secondFailed += 1
        let key = failures[reason] != nil || failures.count < Self.maxFailureReasons ? reason : "other reasons"
        failures[key, default: 0] += 1
    }

    /// A problem that makes the run unclean; the first ones are kept and shown.
    func error(_ reason: String) {
        errorCount += 1
        if errors.count < 20 { errors.append(reason) }
        if errors.count <= 3 { progress.say("error: \(reason)") }
    }

    // MARK: Sampling

    private func samples() -> (server: ProcessSample?, harness: ProcessSample?) {
        (settings.serverPID.flatMap(ProcessSample.read(pid:)), ProcessSample.read(pid: getpid()))
    }

    /// Shows `queue`'s progress on the progress line while set-up runs (sign-ups with
    /// production password hashing take minutes, and nothing is sent meanwhile).
    func track(_ queue: SetupQueue, _ name: String) {
        setupStage = (name, queue)
    }

    /// Takes the sample of the second(s) just ended; the last one of a run may be a fraction of
    /// a second (rates are per second all the same).
    private func tick(final: Bool = false) {
        let now = MonotonicClock.nanoseconds()
        let covered = ticks.close(at: now)
        guard covered != nil || final else { return }
        let (server, harness) = samples()
        let seconds = Double(now - lastTick.time) / 1e9
        guard seconds > 0 else { return }
        let hasLatency = secondLatency.count > 0
        let sample = SecondSample(
            t: Double(now - started) / 1e9,
            phase: phase.rawValue,
            sent: Int((Double(secondSent) / seconds).rounded()), delivered: Int((Double(secondDelivered) / seconds).rounded()),
            failed: secondFailed, connections: connections,
            latencyP50: hasLatency ? secondLatency.percentile(50) : nil,
            latencyP99: hasLatency ? secondLatency.percentile(99) : nil,
            latencyMax: hasLatency ? Double(secondLatency.histogram.max) / 1000 : nil,
            serverCPUPercent: ProcessSample.cpuPercent(from: lastTick.server, to: server, cores: machine.processors),
            serverRSSKilobytes: server?.rssKilobytes,
            harnessCPUPercent: ProcessSample.cpuPercent(from: lastTick.harness, to: harness, cores: machine.processors),
            load1: MachineInfo.loadAverages()?.first,
            seconds: seconds)
        series.append(sample)
        lastTick = (now, server, harness)
        secondSent = 0
        secondDelivered = 0
        secondFailed = 0
        secondLatency.reset()
        progress.say(progressLine(sample, covering: covered))
    }

    /// "12 s measure: sent …", or for a late sample "10–12 s measure (late: …)"; during set-up
    /// the stage's count ("sign-up 120/1000") instead of rates that are still zero.
    func progressLine(_ sample: SecondSample, covering covered: ClosedRange<Int>?) -> String {
        var line = (covered.map(SecondTicks.label) ?? "\(formatted(sample.t, decimals: 1)) s") + " \(sample.phase)"
        if let covered, covered.count > 1 {
            line += " (late: the harness's loop was busy; this line covers \(covered.count) s)"
        }
        line += ": "
        if sample.phase == Phase.setup.rawValue, sample.sent == 0, sample.delivered == 0 {
            line += setupStage.map { "\($0.name) \(grouped($0.queue.finished))/\(grouped($0.queue.count))" } ?? "starting"
            if let failed = setupStage?.queue.failed, failed > 0 { line += " (\(grouped(failed)) failed)" }
        } else {
            line += "sent \(grouped(sample.sent))/s, delivered \(grouped(sample.delivered))/s"
        }
        if let p50 = sample.latencyP50, let p99 = sample.latencyP99 { line += ", p50 \(p50) ms p99 \(p99) ms" }
        if sample.failed > 0 { line += ", failed \(sample.failed)" }
        line += ", \(grouped(sample.connections)) conns"
        if let detail = progressDetail?() { line += ", \(detail)" }
        line += "; CPU server \(percent(sample.serverCPUPercent)) harness \(percent(sample.harnessCPUPercent))"
        if let load = sample.load1 { line += ", load \(formatted(load, decimals: 2))" }
        return line
    }

    // MARK: The result

    var measuredSeconds: Double { measureEnd > measureStart ? Double(measureEnd - measureStart) / 1e9 : 0 }

    func result(
        scenario: String, parameters: [String: String], latencyMeaning: String, sent: Int, acknowledged: Int,
        stream: StreamChecker.Counts, figures: [String: Double] = [:], otherLatencies: [String: LatencySummary] = [:],
        sentLabel: String = "sent", deliveredLabel: String = "delivered"
    ) -> ScenarioResult {
        let seconds = measuredSeconds
        let serverCPU = ProcessSample.cpuPercent(from: atMeasureStart.server, to: atMeasureEnd.server, cores: machine.processors)
        let deliveriesPerSecond = seconds > 0 ? Double(measuredDeliveries) / seconds : 0
        let formatter = ISO8601DateFormatter()
        return ScenarioResult(
            scenario: scenario, parameters: parameters, command: Self.commandLine, startedAt: formatter.string(from: startedAt),
            machine: machine, latencyMeaning: latencyMeaning, sent: sent, acknowledged: acknowledged,
            sentLabel: sentLabel, deliveredLabel: deliveredLabel, stream: stream,
            latency: latency.summary, latencyPercentiles: latency.curve, measuredSeconds: seconds,
            deliveriesPerSecond: deliveriesPerSecond, serverCPUPercent: serverCPU,
            serverRSSKilobytes: atMeasureEnd.server?.rssKilobytes ?? settings.serverPID.flatMap(ProcessSample.read(pid:))?.rssKilobytes,
            clientCPUPercent: ProcessSample.cpuPercent(from: atMeasureStart.harness, to: atMeasureEnd.harness, cores: machine.processors),
            deliveriesPerServerCPUSecond: serverCPU.map { $0 > 0 ? deliveriesPerSecond / ($0 / 100) : 0 },
            figures: figures, failures: failures, otherLatencies: otherLatencies, series: series,
            measureFrom: measureStart > started ? Double(measureStart - started) / 1e9 : 0,
            measureTo: measureEnd > started ? Double(measureEnd - started) / 1e9 : 0, errors: errors,
            errorCount: errorCount, interruption: interruption)
    }

    /// The command line as a shell would take it back.
    static var commandLine: String {
        CommandLine.arguments.map(shellQuoted).joined(separator: " ")
    }

    static func shellQuoted(_ word: String) -> String {
        let plain = word.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "="),
                 UInt8(ascii: ","), UInt8(ascii: "+"), UInt8(ascii: "@"):
                return true
            default:
                return false
            }
        }
        return plain && !word.isEmpty ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

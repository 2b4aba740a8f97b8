import HuddleClient
import HuddleIO
import HuddleProtocol

/// `login`: what a login costs the server — dominated by PBKDF2 at the server's
/// --kdf-iterations — timed request to reply, one at a time on fresh connections.
final class LoginScenario: Scenario {
    private let urls: ServerURLs
    private let options: ClientConnectionOptions
    private let count: Int
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private let users = LoadTestUsers()
    private var done = 0
    private var sessions: [HarnessSession] = []
    private(set) var result: ScenarioResult?

    init(urls: ServerURLs, options: ClientConnectionOptions, count: Int, serverPID: Int32?, loop: EventLoop, progress: Progress) {
        self.urls = urls
        self.options = options
        self.count = count
        self.loop = loop
        self.progress = progress
        measurement = Measurement(
            loop: loop, progress: progress,
            settings: .init(warmupSeconds: 0, durationSeconds: nil, drainSeconds: 0, serverPID: serverPID))
    }

    func start() {
        measurement.onDone = { [self] in finish() }
        let name = users.username(0)
        let session = HarnessSession(url: urls.first, loop: loop, options: options)
        sessions.append(session)
        session.onOpen = { [self] in
            users.signUp(name, on: session) { [self] outcome in
                if case .failure(let failure) = outcome { return measurement.abort(failure.description) }
                progress.say("signed up \(name); timing \(count) logins")
                measurement.begin(onMeasureEnd: {}, isDrained: { true })
                nextLogin(name)
            }
        }
        session.onClose = { [self] code, reason in
            if measurement.phase == .setup { measurement.abort("connection closed before the signup: \(code?.rawValue ?? 0) \(reason)") }
        }
        session.connect()
    }

    private func nextLogin(_ name: String) {
        guard done < count else { return measurement.endMeasuring() }
        let session = HarnessSession(url: urls[node: done], loop: loop, options: options)
        sessions.append(session)
        session.onOpen = { [self] in
            let started = MonotonicClock.nanoseconds()
            measurement.recordSent()
            session.request(.login(login: name, password: users.password(name), device: nil)) { [self] reply in
                measurement.recordDelivery(intended: started)
                guard reply.result != nil else { return measurement.abort("login failed: \(reply.text)") }
                done += 1
                session.close()
                nextLogin(name)
            }
        }
        session.onClose = { [self] code, reason in
            if code == nil { measurement.abort("login connection failed: \(reason)") }
        }
        session.connect()
    }

    private func finish() {
        result = measurement.result(
            scenario: "login", parameters: ["count": "\(count)"], latencyMeaning: "login request → reply",
            sent: done, acknowledged: done, stream: .init(delivered: done),
            figures: ["logins_per_second": measurement.measuredSeconds > 0 ? Double(done) / measurement.measuredSeconds : 0],
            sentLabel: "logins", deliveredLabel: "answered")
        for session in sessions { session.close() }
        loop.schedule(after: 300) { [loop] in loop.stop() }
    }
}

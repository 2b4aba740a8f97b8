import HuddleClient
import HuddleIO
import HuddleProtocol

/// `login`: what a login costs the server — dominated by PBKDF2 at the server's
/// --kdf-iterations — timed request to reply, one at a time on fresh connections.
final class LoginScenario: Scenario {
    private let url: ClientURL
    private let options: ClientConnectionOptions
    private let count: Int
    private let loop: EventLoop
    private let progress: Progress
    private let name = "lt\(UInt32.random(in: 0...UInt32.max))"
    private var latency = LatencyRecorder()
    private var done = 0
    private var errors: [String] = []
    private var sessions: [ProtocolSession] = []
    private(set) var result: ScenarioResult?

    init(url: ClientURL, options: ClientConnectionOptions, count: Int, loop: EventLoop, progress: Progress) {
        self.url = url
        self.options = options
        self.count = count
        self.loop = loop
        self.progress = progress
    }

    func start() {
        let session = ProtocolSession(url: url, loop: loop, options: options)
        sessions.append(session)
        session.onOpen = { [self] in
            session.request("signup", [("username", .string(name)), ("email", .string("\(name)@loadtest.invalid")), ("password", .string("loadtest-\(name)"))]) { [self] reply in
                guard reply["ok"]?.boolValue == true else { return finish(error: "signup failed: \(JSONWriter.serialize(reply))") }
                progress.say("signed up \(name); timing \(count) logins")
                nextLogin()
            }
        }
        session.connect()
    }

    private func nextLogin() {
        guard done < count else { return finish(error: nil) }
        let session = ProtocolSession(url: url, loop: loop, options: options)
        sessions.append(session)
        session.onOpen = { [self] in
            let started = MonotonicClock.nanoseconds()
            session.request("login", [("login", .string(name)), ("password", .string("loadtest-\(name)"))]) { [self] reply in
                latency.record(microseconds: (MonotonicClock.nanoseconds() - started) / 1000)
                guard reply["ok"]?.boolValue == true else { return finish(error: "login failed: \(JSONWriter.serialize(reply))") }
                done += 1
                session.close()
                nextLogin()
            }
        }
        session.connect()
    }

    private func finish(error: String?) {
        if let error { errors.append(error) }
        result = ScenarioResult(
            scenario: "login", parameters: ["count": "\(count)"], sent: done, acknowledged: done, stream: .init(),
            latency: latency.summary, measuredSeconds: 0, deliveriesPerSecond: 0, serverCPUPercent: nil, serverRSSKilobytes: nil,
            clientCPUPercent: nil, deliveriesPerServerCPUSecond: nil, errors: errors)
        for session in sessions { session.close() }
        loop.schedule(after: 300) { [loop] in loop.stop() }
    }
}

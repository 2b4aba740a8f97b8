import Glibc
import HuddleClient
import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// `connect`: ramp to N connections at C new connections per second (open loop: attempts
/// start on schedule however slowly the server accepts), hold them, and report what it took:
/// connections per second, connect time (to the `session` event on `/v1`, which includes the
/// token check — or, subscribing, to the last subscribe reply; to the 101 on a raw URL),
/// failures by reason, and — with the server's pid — the server's memory per connection.
/// On `/v1` the connections belong to U users signed up first (connection i is user i mod U),
/// and may each subscribe to their user's inbox and one of R rooms: what a real client holds.
/// With an app-token secret nobody signs up: each connection authenticates with `app_auth` and
/// a token the harness signs, and the server makes the account the first time it sees the user.
final class ConnectScenario: Scenario {
    struct Settings: Sendable {
        var urls: ServerURLs
        var options: ClientConnectionOptions
        var connections: Int
        /// New connections per second.
        var rate: Double
        /// Seconds to hold every connection open once the ramp is over.
        var holdSeconds: Double
        /// Any WebSocket server: no sign-up, no token, no `session` event awaited.
        var raw: Bool
        /// Users the `/v1` connections belong to, signed up before the ramp.
        var users = 1
        /// Rooms the `/v1` connections subscribe to (connection i: room i mod R), each with its
        /// user's inbox; 0 subscribes to nothing.
        var subscribeRooms = 0
        /// Sign-ups under way at once.
        var setupConcurrency = 4
        /// Each connection sends `app_auth` with a token signed by this instead of presenting a
        /// signed-up user's session token.
        var appTokens: AppTokenSigner?
        var serverPID: Int32?
    }

    private let settings: Settings
    private let loop: EventLoop
    private let progress: Progress
    let measurement: Measurement
    private let users = LoadTestUsers()
    private var setup: SetupQueue?
    private var tokens: [String] = []
    private var attempted = 0
    private var rawConnections: [RawConnection] = []
    private var sessions: [HarnessSession] = []
    private var schedule: OpenLoopSchedule?
    private var rampTimer: Int?
    private var opened = 0
    private var failed = 0
    private var lostWhileHeld = 0
    private var lastOpen: UInt64 = 0
    private var rampStart: UInt64 = 0
    private var rssBefore: Int?
    private var rssAfter: Int?
    private(set) var result: ScenarioResult?

    init(settings: Settings, loop: EventLoop, progress: Progress) {
        self.settings = settings
        self.loop = loop
        self.progress = progress
        measurement = Measurement(
            loop: loop, progress: progress,
            settings: .init(warmupSeconds: 0, durationSeconds: nil, drainSeconds: 0, serverPID: settings.serverPID))
    }

    func start() {
        measurement.onDone = { [self] in finish() }
        warnAboutLimits()
        guard !settings.raw else { return ramp() }
        if settings.appTokens != nil {
            progress.say("\(settings.users) users (\(users.prefix)_*) authenticate with app tokens")
            return ramp()
        }
        tokens = Array(repeating: "", count: settings.users)
        progress.say("signing up \(settings.users) users (\(users.prefix)_*)")
        let queue = SetupQueue(count: settings.users, concurrency: settings.setupConcurrency, step: signUp) { [self] failed in
            if failed > 0 { return measurement.abort("sign-up: \(failed) of \(settings.users) failed") }
            // Let the server settle after the sign-ups before taking the baseline.
            loop.schedule(after: 500) { [self] in ramp() }
        }
        setup = queue
        measurement.track(queue, "sign-up")
        queue.run()
    }

    /// Signs user `user` up on a connection of its own, closed once the token is in hand.
    private func signUp(_ user: Int, done: @escaping (Bool) -> Void) {
        let session = HarnessSession(url: settings.urls[node: user], loop: loop, options: settings.options)
        session.onOpen = { [self] in
            users.signUp(users.username(user), on: session) { [self] outcome in
                switch outcome {
                case .success(let token): tokens[user] = token
                case .failure(let failure): measurement.error(failure.description)
                }
                session.close()
                done(!tokens[user].isEmpty)
            }
        }
        session.onClose = { [self] code, reason in
            if tokens[user].isEmpty { measurement.error("sign-up of user \(user) closed: \(code.map { "\($0.rawValue)" } ?? "never opened") \(reason)") }
            done(!tokens[user].isEmpty)
        }
        session.connect()
    }

    /// Descriptors and ephemeral ports bound a run long before the server does: say so up front.
    private func warnAboutLimits() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if Int(limit.rlim_cur) < settings.connections + 64 {
            progress.say("warning: ulimit -n is \(limit.rlim_cur); \(settings.connections) connections need more (raise the hard limit)")
        }
        if let serverPID = settings.serverPID, let serverLimit = MachineInfo.openFilesLimit(ofProcess: serverPID), serverLimit < settings.connections + 64 {
            progress.say("warning: the server's ulimit -n is \(serverLimit): it will refuse connections beyond that")
        }
        if let range = ProcFile.read("/proc/sys/net/ipv4/ip_local_port_range") {
            let bounds = range.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
            let sources = settings.options.sourceAddresses?.all.count ?? 1
            if bounds.count == 2, (bounds[1] - bounds[0] + 1) * sources < settings.connections {
                progress.say("warning: only \(bounds[1] - bounds[0] + 1) ephemeral ports per source address toward one server address (ip_local_port_range), \(sources) source address(es): add --source-address")
            }
        }
    }

    private func ramp() {
        rssBefore = settings.serverPID.flatMap(ProcessSample.read(pid:))?.rssKilobytes
        progress.say("ramping to \(settings.connections) connections at \(settings.rate)/s")
        measurement.progressDetail = { [self] in "opened \(grouped(opened)), failed \(grouped(failed)) of \(grouped(settings.connections))" }
        measurement.begin(onMeasureEnd: {}, isDrained: { true })
        // After `begin`: the window starts now, and the first attempt is due at its start.
        rampStart = MonotonicClock.nanoseconds()
        schedule = OpenLoopSchedule(streams: 1, ratePerStream: settings.rate, start: rampStart)
        rampTimer = loop.schedule(after: 1, repeating: 1) { [self] in
            guard var schedule else { return }
            let due = schedule.due(at: MonotonicClock.nanoseconds())
            self.schedule = schedule
            for message in due where attempted < settings.connections {
                open(index: attempted, intended: message.intended)
            }
            if attempted >= settings.connections, let rampTimer {
                loop.cancelTimer(rampTimer)
                self.rampTimer = nil
            }
        }
    }

    private func open(index: Int, intended: UInt64) {
        attempted += 1
        measurement.recordSent()
        var isOpen = false
        var isClosed = false
        var settled = false
        /// Set when the attempt failed: its connection is then closed by the harness, which is
        /// no loss while held.
        var gaveUp = false
        var abandon: (() -> Void)?
        let succeed = { [self] in
            guard !settled else { return }
            settled = true
            opened += 1
            lastOpen = MonotonicClock.nanoseconds()
            measurement.recordDelivery(intended: intended, at: lastOpen)
            attemptSettled()
        }
        let failAttempt = { [self] (reason: String) in
            guard !settled else { return }
            settled = true
            gaveUp = true
            failed += 1
            measurement.recordFailure(reason)
            // A refused attempt would otherwise hold its socket (and a descriptor) all through the hold.
            if !isClosed { abandon?() }
            attemptSettled()
        }
        let opens = { [self] in
            isOpen = true
            measurement.connections += 1
        }
        let closes = { [self] (code: WebSocketCloseCode?, reason: String) in
            isClosed = true
            if isOpen { measurement.connections -= 1 }
            if !settled {
                failAttempt(Self.reasonKey(code: code, reason: reason))
            } else if !gaveUp && measurement.phase != .done {
                lostWhileHeld += 1
                measurement.recordFailure("closed while held: " + Self.reasonKey(code: code, reason: reason))
            }
        }
        guard !settings.raw else {
            let connection = RawConnection(url: settings.urls[node: index], loop: loop, options: settings.options)
            rawConnections.append(connection)
            abandon = { connection.close() }
            connection.onOpen = {
                opens()
                succeed()
            }
            connection.onClose = closes
            return connection.connect()
        }
        let user = index % settings.users
        let subscribed = { [self] (session: HarnessSession) in
            guard settings.subscribeRooms > 0 else { return succeed() }
            subscribe(session, to: ["inbox:\(users.username(user))", room(index % settings.subscribeRooms)], then: succeed, else: failAttempt)
        }
        if let signer = settings.appTokens {
            let session = HarnessSession(url: settings.urls[node: index], loop: loop, options: settings.options)
            sessions.append(session)
            abandon = { session.close() }
            session.onOpen = { [self] in
                opens()
                appAuth(session, as: users.username(user), signer: signer, then: { subscribed(session) }, else: failAttempt)
            }
            session.onClose = closes
            return session.connect()
        }
        let session = HarnessSession(url: settings.urls[node: index], loop: loop, options: settings.options.bearer(tokens[user]))
        sessions.append(session)
        abandon = { session.close() }
        session.onOpen = opens
        session.onEvent = { event in
            guard !settled else { return }
            switch event {
            case .session:
                subscribed(session)
            case .authFailed(let code, _, _):
                failAttempt("auth_failed: \(code)")
            default:
                break
            }
        }
        session.onClose = closes
        session.connect()
    }

    /// Authenticates `session` as `username` with an app token. A refusal the server asks to be
    /// retried (`busy`: its verifier queue is full; `rate_limited`) is sent again after the
    /// `retry_after_ms` it was given, as an app would.
    private func appAuth(
        _ session: HarnessSession, as username: String, signer: AppTokenSigner, then: @escaping () -> Void, else fail: @escaping (String) -> Void
    ) {
        let sent = session.request(.appAuth(token: signer.token(for: username), device: nil)) { [self] reply in
            if reply.result != nil { return then() }
            if let error = reply.error, ["busy", "rate_limited"].contains(error.code), let retryAfter = error.retryAfterMilliseconds {
                _ = loop.schedule(after: max(1, retryAfter)) { [self] in appAuth(session, as: username, signer: signer, then: then, else: fail) }
                return
            }
            fail("app_auth refused: " + (reply.error?.code ?? reply.text))
        }
        if !sent { fail("app_auth not sent: the connection is not open") }
    }

    /// Room `index` of this run.
    private func room(_ index: Int) -> String { "room:\(users.prefix)-\(index)" }

    /// Subscribes `session` to each of `channels` from `next` on, one after the other: `then`
    /// after the last reply, `fail` with the first refusal.
    private func subscribe(
        _ session: HarnessSession, to channels: [String], from next: Int = 0, then: @escaping () -> Void, else fail: @escaping (String) -> Void
    ) {
        guard next < channels.count else { return then() }
        session.expectOK(.subscribe(channel: channels[next], since: nil)) { [self] refusal in
            if let refusal { return fail(refusal) }
            subscribe(session, to: channels, from: next + 1, then: then, else: fail)
        }
    }

    /// Close reasons carry addresses and timings; keep the words so equal failures count together.
    static func reasonKey(code: WebSocketCloseCode?, reason: String) -> String {
        let prefix = code.map { "close \($0.rawValue): " } ?? ""
        return prefix + String(reason.prefix(120))
    }

    private func attemptSettled() {
        guard opened + failed == settings.connections else { return }
        let seconds = Double(lastOpen > rampStart ? lastOpen - rampStart : 0) / 1e9
        progress.say("\(opened) open, \(failed) failed after \(formatted(seconds, decimals: 2)) s; holding for \(formatted(settings.holdSeconds)) s")
        loop.schedule(after: Int64(settings.holdSeconds * 1000)) { [self] in
            rssAfter = settings.serverPID.flatMap(ProcessSample.read(pid:))?.rssKilobytes
            measurement.endMeasuring()
        }
    }

    private func finish() {
        let rampSeconds = Double(lastOpen > rampStart ? lastOpen - rampStart : 0) / 1e9
        var figures: [String: Double] = [
            "connections_opened": Double(opened), "connections_failed": Double(failed),
            "connections_per_second": rampSeconds > 0 ? Double(opened) / rampSeconds : 0,
            "ramp_seconds": rampSeconds, "lost_while_held": Double(lostWhileHeld),
        ]
        if let before = rssBefore, let after = rssAfter {
            figures["server_rss_before_kib"] = Double(before)
            figures["server_rss_held_kib"] = Double(after)
            let held = opened - lostWhileHeld
            if held > 0 { figures["server_bytes_per_connection"] = (Double(after - before) * 1024 / Double(held)).rounded() }
        }
        result = measurement.result(
            scenario: "connect",
            parameters: [
                "url": settings.urls.description, "connections": "\(settings.connections)", "rate": "\(settings.rate)",
                "hold_s": "\(settings.holdSeconds)", "raw": "\(settings.raw)", "users": "\(settings.users)",
                "subscribe_rooms": "\(settings.subscribeRooms)",
                "source_addresses": "\(settings.options.sourceAddresses?.all.count ?? 0)",
                "auth": settings.raw ? "none" : settings.appTokens != nil ? "app_auth" : "bearer",
            ],
            latencyMeaning: settings.raw
                ? "connect → WebSocket open"
                : settings.subscribeRooms > 0
                ? "connect → inbox and room subscribed (TCP, upgrade, token check, 2 subscribes)"
                : settings.appTokens != nil
                ? "connect → app_auth reply (TCP, upgrade, app token check)"
                : "connect → session event (TCP, upgrade, token check)",
            sent: attempted, acknowledged: opened, stream: .init(delivered: opened), figures: figures,
            sentLabel: "attempted", deliveredLabel: "opened")
        if opened < settings.connections {
            result?.errors.append("\(settings.connections - opened) of \(settings.connections) connections did not open (see failures)")
        }
        if lostWhileHeld > 0 {
            result?.errors.append("\(lostWhileHeld) connections were closed while held (see failures)")
        }
        for connection in rawConnections { connection.close() }
        for session in sessions { session.close() }
        loop.schedule(after: 1_000) { [loop] in loop.stop() }
    }
}

import HuddleCore

/// Drives a `HuddleCore` the way the server does: with a clock the test moves, connections it
/// numbers, and a log of every command the core made (for replay tests).
final class CoreHarness {
    static let startTime: Int64 = 1_763_712_000_000
    static let day: Int64 = 24 * 60 * 60 * 1000
    static let sessionLifetime: Int64 = 30 * day

    let core: HuddleCore
    private(set) var log: [CoreCommand] = []
    var time = CoreHarness.startTime
    private var nextSerial: UInt64 = 1
    private var nextToken: UInt64 = 1

    init(configuration: CoreConfiguration = .init()) {
        core = HuddleCore(configuration: configuration)
    }

    init(core: HuddleCore) {
        self.core = core
    }

    @discardableResult
    func handle(_ request: CoreRequest) -> CoreStep {
        let step = core.handle(request, at: time)
        log += step.commands
        return step
    }

    func advance(_ milliseconds: Int64) {
        time += milliseconds
    }

    func connect(loop: Int = 0, address: String = "192.0.2.1") -> ConnectionRef {
        let connection = ConnectionRef(loop: loop, serial: nextSerial)
        nextSerial += 1
        handle(.connectionOpened(connection, address: address))
        return connection
    }

    /// A session with a fresh token hash, expiring `lifetime` from now.
    func newSession(lifetime: Int64 = CoreHarness.sessionLifetime, device: String? = nil) -> NewSession {
        defer { nextToken += 1 }
        return NewSession(tokenHash: Self.tokenHash(nextToken), expiresAt: time + lifetime, device: device)
    }

    static func tokenHash(_ seed: UInt64) -> [UInt8] {
        (0..<32).map { UInt8(truncatingIfNeeded: seed >> (8 * UInt64($0 % 8))) ^ UInt8($0) }
    }

    static let credentials = Credentials(salt: Array(repeating: 7, count: 16), hash: Array(repeating: 9, count: 32), iterations: 600_000)

    static func signUpRequest(
        _ connection: ConnectionRef, _ username: String, email: String? = nil, passwordLength: Int = 12,
        passwordEqualsUsername: Bool = false, session: NewSession, requestID: String = "signup"
    ) -> CoreRequest {
        .signUp(
            connection, requestID: requestID, username: username, email: email ?? "\(username.lowercased())@example.com",
            passwordLength: passwordLength, passwordEqualsUsername: passwordEqualsUsername, address: "127.0.0.1",
            credentials: credentials, session: session
        )
    }

    /// Opens a connection and signs a new user up on it; returns the connection and session.
    @discardableResult
    func signUp(_ username: String, loop: Int = 0) -> (connection: ConnectionRef, session: NewSession) {
        let connection = connect(loop: loop)
        let session = newSession()
        let step = handle(Self.signUpRequest(connection, username, session: session))
        precondition(step.commands.count == 1, "sign-up of \(username) failed: \(step.outputs)")
        return (connection, session)
    }

    /// Opens another connection signed in with an existing session's token.
    func connectSignedIn(with session: NewSession, loop: Int = 0) -> ConnectionRef {
        let connection = connect(loop: loop)
        let step = handle(.authenticate(connection, requestID: nil, tokenHash: session.tokenHash))
        precondition(step.outputs.count >= 1, "authentication failed")
        return connection
    }

    func subscribe(_ connection: ConnectionRef, _ channel: String, since: ChannelPosition? = nil) -> CoreReply? {
        handle(.subscribe(connection, requestID: "sub", channel: channel, since: since)).replies.first
    }

    @discardableResult
    func publish(_ connection: ConnectionRef, _ channel: String, _ data: String = "{}", type: String = "message") -> CoreStep {
        handle(.publish(connection, requestID: "pub", channel: channel, type: type, data: data))
    }

    /// Makes two existing users friends (chat rooms are written only between friends), as the
    /// log would: through the command.
    func makeFriends(_ first: String, _ second: String) {
        let command = CoreCommand.acceptFriendRequest(from: first, to: second, time: time)
        core.apply(command)
        log.append(command)
    }

    /// A fresh core that applied every command this one logged.
    func replayed() -> HuddleCore {
        let replica = HuddleCore(configuration: core.configuration)
        for command in log { replica.apply(command) }
        return replica
    }
}

extension CoreStep {
    /// The replies, in order.
    var replies: [CoreReply] {
        outputs.compactMap { output in
            if case let .reply(_, _, reply) = output { return reply }
            return nil
        }
    }

    /// The error code of the only reply, if it is a failure.
    var errorCode: CoreErrorCode? {
        guard replies.count == 1, case let .failure(error) = replies[0] else { return nil }
        return error.code
    }

    var error: CoreError? {
        guard replies.count == 1, case let .failure(error) = replies[0] else { return nil }
        return error
    }
}

extension CoreReply {
    /// The offset a `published` reply gave.
    var publishedOffset: UInt64? {
        if case let .published(_, offset, _) = self { return offset }
        return nil
    }

    var epoch: String? {
        switch self {
        case let .published(epoch, _, _), let .subscribed(_, epoch, _, _, _), let .history(_, epoch, _, _, _): epoch
        default: nil
        }
    }
}

import HuddleIO

/// Commands to the master of a Redis endpoint over one pipelined connection, driven by an event
/// loop and reconnecting by itself (`RedisLink`).
///
/// Two ways in: `send` on the loop's thread, with the reply as a callback on that thread (what a
/// node's core runner will use: no thread hop, as many commands in flight as it likes), and
/// `command` from any thread or task. While there is no connection a command fails at once with
/// `notConnected` instead of queueing: a node answers `unavailable` rather than piling up writes
/// it cannot promise. A blocking command (XREAD BLOCK) holds the connection: give it a client
/// of its own. `close()` it when done: until then it keeps its connection and reconnects.
// Sendable: its state is the loop's; `command` from other threads hops onto the loop first.
public final class RedisClient: @unchecked Sendable {
    // @unchecked: every stored property is touched on `loop`'s thread only (the public
    // any-thread methods hop there with `execute`).

    public struct Options: Sendable {
        public var connectTimeout: Int64 = 2_000
        /// Milliseconds past which an unanswered command means the server is gone (on top of a
        /// blocking command's own wait): the connection is dropped and made again.
        public var replyTimeout: Int64 = 5_000
        /// Milliseconds between reconnection attempts: doubling from the lower to the upper bound.
        public var reconnectDelay: ClosedRange<Int64> = 50...1_000
        public init() {}
    }

    public let endpoint: RedisEndpoint
    public let loop: EventLoop
    private let link: RedisLink
    /// Each returns true once done with (it is then dropped), false to hear the next change.
    private var statusWaiters: [() -> Bool] = []
    /// Runs on the loop when the client becomes ready (with the master's address) or goes down.
    /// Set it on the loop's thread.
    public var onStatusChange: (RedisAddress?, RedisError?) -> Void = { _, _ in }

    /// Starts connecting on `loop` (which must be running or about to run).
    public init(endpoint: RedisEndpoint, loop: EventLoop, options: Options = Options()) {
        self.endpoint = endpoint
        self.loop = loop
        link = RedisLink(endpoint: endpoint, loop: loop, options: options)
        link.onReady = { [unowned self] connection in
            onStatusChange(connection.address, nil)
            statusChanged()
        }
        link.onDown = { [unowned self] error in
            onStatusChange(nil, error)
            statusChanged()
        }
        loop.execute { [self] in link.start() }
    }

    // MARK: Loop thread

    /// The master this client is connected to, nil while it is not.
    public var connectedAddress: RedisAddress? { link.connection?.address }

    /// Sends `arguments` as one command; `reply` runs on the loop. `blockingFor`: how long the
    /// command may block in Redis (ms, `.max` for ever), as `RedisConnection.send`.
    public func send(_ arguments: [[UInt8]], blockingFor: Int64 = 0, reply: @escaping (Result<RedisReply, RedisError>) -> Void) {
        guard let connection = link.connection else {
            reply(.failure(.notConnected(address: endpoint.description)))
            return
        }
        connection.send(arguments, blockingFor: blockingFor, reply: reply)
    }

    // MARK: Any thread

    public func command(_ arguments: [String], blockingFor: Int64 = 0) async throws(RedisError) -> RedisReply {
        try await command(bytes: arguments.map { Array($0.utf8) }, blockingFor: blockingFor)
    }

    public func command(bytes arguments: [[UInt8]], blockingFor: Int64 = 0) async throws(RedisError) -> RedisReply {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<RedisReply, RedisError>, Never>) in
            loop.execute { [self] in send(arguments, blockingFor: blockingFor) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }

    /// Sends all `commands` back to back without waiting for replies (one write, one round
    /// trip), and returns their results in order.
    public func pipeline(_ commands: [[[UInt8]]]) async -> [Result<RedisReply, RedisError>] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[Result<RedisReply, RedisError>], Never>) in
            loop.execute { [self] in
                var results: [Result<RedisReply, RedisError>] = []
                results.reserveCapacity(commands.count)
                guard !commands.isEmpty else { return continuation.resume(returning: []) }
                for command in commands {
                    send(command) { result in
                        results.append(result)
                        if results.count == commands.count { continuation.resume(returning: results) }
                    }
                }
            }
        }
    }

    /// Waits until the client is connected (returns the master's address), or `seconds` pass,
    /// or, with `failFast`, an attempt fails; then throws why it is not connected.
    public func waitUntilConnected(timeout seconds: Double, failFast: Bool = false) async throws(RedisError) -> RedisAddress {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<RedisAddress, RedisError>?, Never>) in
            loop.execute { [self] in
                if let address = connectedAddress { return continuation.resume(returning: .success(address)) }
                var resumed = false
                let timer = loop.schedule(after: Int64(seconds * 1000)) {
                    guard !resumed else { return }
                    resumed = true
                    continuation.resume(returning: nil)
                }
                statusWaiters.append { [self] in
                    guard !resumed else { return true }
                    if let address = connectedAddress {
                        resumed = true
                        continuation.resume(returning: .success(address))
                    } else if failFast, case .down(let error) = link.status {
                        resumed = true
                        continuation.resume(returning: .failure(error))
                    } else {
                        return false
                    }
                    loop.cancelTimer(timer)
                    return true
                }
            }
        }
        guard let outcome else { throw await lastProblem() ?? .notConnected(address: endpoint.description) }
        return try outcome.get()
    }

    /// The master's address as the loop sees it now.
    public func currentAddress() async -> RedisAddress? {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in continuation.resume(returning: connectedAddress) }
        }
    }

    /// Closes the connection and stops reconnecting; unanswered commands get `connectionLost`.
    public func close() {
        loop.execute { [self] in link.close() }
    }

    private func statusChanged() {
        let waiters = statusWaiters
        statusWaiters = []
        statusWaiters += waiters.filter { !$0() }
    }

    private func lastProblem() async -> RedisError? {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in
                if case .down(let error) = link.status { return continuation.resume(returning: error) }
                continuation.resume(returning: nil)
            }
        }
    }
}

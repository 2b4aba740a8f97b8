import CHiredis
import Glibc
import HuddleIO

/// One hiredis asynchronous connection driven by a HuddleIO event loop: the event-library hooks
/// hiredis asks for (addRead/delRead/addWrite/delWrite/cleanup, as its ae/libev adapters do)
/// become epoll interest on the loop, so Redis costs no thread and pipelines for free.
///
/// Loop thread only. Commands may be sent before the connection completes: hiredis buffers them
/// and writes them in order once connected. Replies come back in command order; on a broken
/// connection every unanswered command gets `connectionLost` (it may have run), then `onClose`.
public final class RedisConnection: EventHandler {
    public enum State: Equatable { case connecting, connected, closed }

    public let address: RedisAddress
    public private(set) var state = State.connecting
    private let loop: EventLoop
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var fd: Int32 = -1
    private var interest: UInt32 = 0
    private var connectTimer: Int?
    private var deadlines: ReplyDeadlines
    private var deadlineTimer: Int?
    private var nextToken = 1
    private var pending: [Int: (Result<RedisReply, RedisError>) -> Void] = [:]
    private var subscriptions: [Int: (RedisReply) -> Void] = [:]
    /// Set while hiredis holds a pointer to this object (its `data`): released once it is freed.
    private var keepAlive: RedisConnection?
    /// Why the connection ended, kept once hiredis's context (and its error text) is gone.
    private var closingReason: String?
    private var onConnect: ((RedisError?) -> Void)?
    private var onClose: ((RedisError) -> Void)?

    /// Starts connecting. `onConnect` gets nil once connected, or why not (also when
    /// `connectTimeout` milliseconds pass first); `onClose` runs if an open connection ends,
    /// also when a reply is `replyTimeout` ms overdue (0: never).
    public init(
        loop: EventLoop, address: RedisAddress, connectTimeout: Int64 = 2_000, replyTimeout: Int64 = 0,
        onConnect: @escaping (RedisError?) -> Void, onClose: @escaping (RedisError) -> Void
    ) {
        self.loop = loop
        self.address = address
        deadlines = ReplyDeadlines(timeout: replyTimeout)
        self.onConnect = onConnect
        self.onClose = onClose
        super.init()
        BrokenPipeSignal.ignoreUnlessHandled()  // hiredis writes with write(2)
        // hiredis resolves a host name with a blocking getaddrinfo; cluster URLs name IP
        // addresses or names in /etc/hosts, so this stays short.
        guard let context = redisAsyncConnect(address.host, Int32(address.port)) else {
            state = .closed
            self.onConnect = nil
            loop.schedule(after: 0) { onConnect(.connectFailed(address: address.description, reason: "out of memory")) }
            return
        }
        if context.pointee.err != 0 {
            let reason = String(cString: context.pointee.errstr)
            redisAsyncFree(context)
            state = .closed
            self.onConnect = nil
            loop.schedule(after: 0) { onConnect(.connectFailed(address: address.description, reason: reason)) }
            return
        }
        self.context = context
        fd = context.pointee.c.fd
        keepAlive = self
        context.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        context.pointee.ev.data = context.pointee.data
        context.pointee.ev.addRead = { RedisConnection.from($0).setInterest(EventLoop.readable, on: true) }
        context.pointee.ev.delRead = { RedisConnection.from($0).setInterest(EventLoop.readable, on: false) }
        context.pointee.ev.addWrite = { RedisConnection.from($0).setInterest(EventLoop.writable, on: true) }
        context.pointee.ev.delWrite = { RedisConnection.from($0).setInterest(EventLoop.writable, on: false) }
        context.pointee.ev.cleanup = { RedisConnection.from($0).contextFreed() }
        do {
            try loop.register(fd, events: 0, handler: self)
        } catch {
            fail(reason: "\(error)")
            return
        }
        redisAsyncSetConnectCallback(context) { context, status in
            RedisConnection.from(context!.pointee.data).connected(status: status)
        }
        redisAsyncSetDisconnectCallback(context) { context, status in
            RedisConnection.from(context!.pointee.data).disconnected(status: status)
        }
        connectTimer = loop.schedule(after: connectTimeout) { [weak self] in
            guard let self, self.state == .connecting else { return }
            self.fail(reason: "timed out after \(connectTimeout) ms")
        }
        if replyTimeout > 0 {
            // A sweep, not a timer per command: a quarter of the timeout late at most.
            deadlineTimer = loop.schedule(after: replyTimeout, repeating: max(replyTimeout / 4, 10)) { [weak self] in
                self?.checkDeadlines()
            }
        }
    }

    /// Sends one command; `reply` runs on the loop with its reply (an error reply is
    /// `.failure(.server)`), or with why none will come. A command that blocks in Redis (XREAD
    /// BLOCK, WAIT) says for how long in `blockingFor` (ms, `.max` for ever), so that its wait
    /// is not taken for a dead server.
    public func send(_ arguments: [[UInt8]], blockingFor: Int64 = 0, reply: @escaping (Result<RedisReply, RedisError>) -> Void) {
        let token = takeToken()
        pending[token] = reply
        guard issue(arguments, token: token) else {
            pending[token] = nil
            reply(.failure(.notConnected(address: address.description)))
            return
        }
        if deadlines.timeout > 0 { deadlines.issued(token: token, blockingFor: blockingFor) }
    }

    /// Sends SUBSCRIBE/PSUBSCRIBE: `message` runs for its confirmation and for every message on
    /// the channel, as the raw reply array (`["message", channel, payload]`), until closed.
    public func subscribe(_ arguments: [[UInt8]], message: @escaping (RedisReply) -> Void) -> Bool {
        let token = takeToken()
        subscriptions[token] = message
        guard issue(arguments, token: token) else {
            subscriptions[token] = nil
            return false
        }
        return true
    }

    /// Closes the connection: unanswered commands get `connectionLost`; `onClose` does not run.
    public func close() {
        onClose = nil
        guard let context else { return }
        withExtendedLifetime(self) {
            if state == .connecting {
                redisAsyncFree(context)
            } else {
                redisAsyncDisconnect(context)
            }
            releaseIfFreed()
        }
    }

    // MARK: Events from the loop

    override public func handleEvents(_ events: UInt32) {
        withExtendedLifetime(self) {
            // Before the connection completes, writability (or an error) is what reports it.
            if let context, events & EventLoop.writable != 0 || (state == .connecting && events & (EventLoop.hangup | EventLoop.error) != 0) {
                redisAsyncHandleWrite(context)
                // hiredis writes what was issued only here: Redis's time starts now.
                if state == .connected && deadlines.timeout > 0 { deadlines.written(now: MonotonicClock.milliseconds()) }
            }
            if let context, state == .connected, events & (EventLoop.readable | EventLoop.hangup | EventLoop.error) != 0 {
                redisAsyncHandleRead(context)
            }
            releaseIfFreed()
        }
    }

    // MARK: Calls from hiredis

    private static func from(_ data: UnsafeMutableRawPointer?) -> RedisConnection {
        Unmanaged<RedisConnection>.fromOpaque(data!).takeUnretainedValue()
    }

    private func setInterest(_ flag: UInt32, on: Bool) {
        let wanted = on ? interest | flag : interest & ~flag
        guard wanted != interest else { return }
        interest = wanted
        loop.modify(fd, events: interest)
    }

    private func contextFreed() {
        closingReason = closingReason ?? currentReason()
        if fd >= 0 { loop.unregister(fd) }  // hiredis closes the descriptor itself
        fd = -1
        context = nil
        state = .closed
        if let connectTimer { loop.cancelTimer(connectTimer) }
        connectTimer = nil
        if let deadlineTimer { loop.cancelTimer(deadlineTimer) }
        deadlineTimer = nil
    }

    private func checkDeadlines() {
        // What Redis sent while the loop was held up has been read by now: the loop looks at its
        // sockets before it runs timers due in a turn that lasted.
        guard let context, state == .connected, let late = deadlines.overdue(now: MonotonicClock.milliseconds()) else { return }
        closingReason = "no reply within \(deadlines.timeout + late) ms"
        withExtendedLifetime(self) {
            // Not redisAsyncDisconnect, which would wait for the replies that are not coming.
            redisAsyncFree(context)
            releaseIfFreed()
        }
    }

    private func connected(status: Int32) {
        if let connectTimer { loop.cancelTimer(connectTimer) }
        connectTimer = nil
        let callback = onConnect
        onConnect = nil
        if status == REDIS_OK {
            state = .connected
            callback?(nil)
        } else {
            callback?(.connectFailed(address: address.description, reason: currentReason()))
        }
    }

    private func disconnected(status: Int32) {
        let callback = onClose
        onClose = nil
        callback?(.connectionLost(address: address.description, reason: closingReason ?? (status == REDIS_OK ? "closed" : currentReason())))
    }

    private func replied(token: Int, reply: UnsafeMutableRawPointer?) {
        if let handler = subscriptions[token] {
            if let reply { handler(HiredisCodec.copy(reply.assumingMemoryBound(to: redisReply.self))) }
            return
        }
        guard let handler = pending.removeValue(forKey: token) else { return }
        if deadlines.timeout > 0 { deadlines.answered(token: token, now: MonotonicClock.milliseconds()) }
        guard let reply else {
            let reason = currentReason()
            handler(.failure(state == .connected
                ? .connectionLost(address: address.description, reason: reason)
                : .connectFailed(address: address.description, reason: reason)))
            return
        }
        switch HiredisCodec.copy(reply.assumingMemoryBound(to: redisReply.self)) {
        case .error(let message): handler(.failure(.server(message)))
        case let value: handler(.success(value))
        }
    }

    // MARK: Helpers

    private func takeToken() -> Int {
        defer { nextToken += 1 }
        return nextToken
    }

    /// Hands the command to hiredis, with the token as the callback's private data.
    private func issue(_ arguments: [[UInt8]], token: Int) -> Bool {
        guard let context else { return false }
        let status = HiredisCodec.withArgumentVector(arguments) { argc, argv, argvlen in
            redisAsyncCommandArgv(context, { context, reply, token in
                RedisConnection.from(context!.pointee.data).replied(token: Int(bitPattern: token), reply: reply)
            }, UnsafeMutableRawPointer(bitPattern: token), argc, argv, argvlen)
        }
        return status == REDIS_OK
    }

    private func fail(reason: String) {
        let callback = onConnect
        onConnect = nil
        closingReason = reason
        if let context {
            withExtendedLifetime(self) {
                redisAsyncFree(context)
                releaseIfFreed()
            }
        }
        state = .closed
        callback?(.connectFailed(address: address.description, reason: reason))
    }

    private func releaseIfFreed() {
        if context == nil { keepAlive = nil }
    }

    private func currentReason() -> String {
        if let closingReason { return closingReason }
        guard let context, context.pointee.err != 0, let text = context.pointee.errstr else { return "connection closed" }
        return String(cString: text)
    }
}

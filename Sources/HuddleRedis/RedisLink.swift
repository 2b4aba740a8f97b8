import HuddleIO

/// A connection to the endpoint's master that comes back by itself: after a failed attempt or a
/// lost connection it tries again after a delay that doubles from `reconnectDelay.lowerBound` up
/// to its upper bound (so a dead Redis is not hammered, and a restarted one is found within
/// about the upper bound), asking Sentinel anew each time, which is how a failover is followed.
/// Loop thread only.
final class RedisLink {
    enum Status {
        case connecting
        case ready(RedisConnection)
        case down(RedisError)
        case closed
    }

    let endpoint: RedisEndpoint
    private let loop: EventLoop
    private let connectTimeout: Int64
    private let replyTimeout: Int64
    private let reconnectDelay: ClosedRange<Int64>
    private var nextDelay: Int64
    private var retryTimer: Int?
    private(set) var status = Status.connecting
    /// Runs for each new ready connection, before any command of the owner uses it.
    var onReady: (RedisConnection) -> Void = { _ in }
    /// Runs when the link goes down (a failed attempt or a lost connection).
    var onDown: (RedisError) -> Void = { _ in }

    init(endpoint: RedisEndpoint, loop: EventLoop, options: RedisClient.Options) {
        self.endpoint = endpoint
        self.loop = loop
        connectTimeout = options.connectTimeout
        replyTimeout = options.replyTimeout
        reconnectDelay = options.reconnectDelay
        nextDelay = reconnectDelay.lowerBound
    }

    var connection: RedisConnection? {
        if case .ready(let connection) = status { return connection }
        return nil
    }

    func start() {
        status = .connecting
        RedisConnector.connect(endpoint, loop: loop, connectTimeout: connectTimeout, replyTimeout: replyTimeout, onClose: { [weak self] connection, error in
            guard let self, self.connection === connection else { return }
            self.wentDown(error)
        }, completion: { [weak self] result in
            guard let self else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            guard case .connecting = self.status else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            switch result {
            case .success(let connection):
                self.nextDelay = self.reconnectDelay.lowerBound
                self.status = .ready(connection)
                self.onReady(connection)
            case .failure(let error):
                self.wentDown(error)
            }
        })
    }

    func close() {
        if let retryTimer { loop.cancelTimer(retryTimer) }
        retryTimer = nil
        let connection = connection
        status = .closed
        connection?.close()
    }

    private func wentDown(_ error: RedisError) {
        status = .down(error)
        onDown(error)
        guard case .down = status else { return }
        let delay = nextDelay
        nextDelay = min(nextDelay * 2, reconnectDelay.upperBound)
        retryTimer = loop.schedule(after: delay) { [weak self] in
            guard let self, case .down = self.status else { return }
            self.retryTimer = nil
            self.start()
        }
    }
}

import HuddleClient
import HuddleIO
import HuddleProtocol

/// Waits until every node of a cluster accepts a bearer token: a token issued by one node is
/// known to another only once that node has read the sign-up from the shared log, so a run that
/// opened hundreds of connections on the other nodes at once would race the replication and see
/// `4001 invalid_token`. One probe connection per node, tried again every 50 ms until its
/// `session` event; a single server passes at once. Calls `done` with the milliseconds it took,
/// or nil when a node still refused the token after `timeoutSeconds`.
final class TokenPropagation {
    private let urls: [ClientURL]
    private let loop: EventLoop
    private let options: ClientConnectionOptions
    private let started = MonotonicClock.nanoseconds()
    private let deadline: UInt64
    private var probe: HarnessSession?

    init(urls: [ClientURL], token: String, loop: EventLoop, options: ClientConnectionOptions, timeoutSeconds: Double = 30) {
        var distinct: [ClientURL] = []
        for url in urls where !distinct.contains(where: { $0.description == url.description }) { distinct.append(url) }
        self.urls = distinct
        self.loop = loop
        self.options = options.bearer(token)
        deadline = started + UInt64(timeoutSeconds * 1e9)
    }

    func run(done: @escaping (Double?) -> Void) {
        check(node: 0, done: done)
    }

    private func check(node: Int, done: @escaping (Double?) -> Void) {
        guard node < urls.count else { return done(Double(MonotonicClock.nanoseconds() - started) / 1e6) }
        let session = HarnessSession(url: urls[node], loop: loop, options: options)
        var accepted = false
        session.onEvent = { event in
            guard case .session = event else { return }
            accepted = true
            session.close()
        }
        session.onClose = { [self] _, _ in
            probe = nil
            if accepted { return check(node: node + 1, done: done) }
            guard MonotonicClock.nanoseconds() < deadline else { return done(nil) }
            _ = loop.schedule(after: 50) { [self] in check(node: node, done: done) }
        }
        probe = session
        session.connect()
    }
}

import HuddleIO

/// A node's side of global presence (issue 14): which of its users are online here, published
/// for the other nodes, and which users are online on the others, kept up to date from Redis.
///
/// In Redis: the node's lease `<prefix>node:<name>` (its boot nonce, `PX` the lease, renewed
/// every `renewMilliseconds`), its set `<prefix>online:<name>`, the names in `<prefix>nodes`, and
/// each change PUBLISHed on `<prefix>presence` (`PresenceMessage`, `RedisPresenceScripts`).
/// Every node, at each renewal, deletes the set of any node whose lease expired and tells the
/// others (`nodeGone`), so a dead node's users go offline within a lease and a renewal.
///
/// Repairs: on each (re)subscription the picture is read whole from Redis and the difference
/// reported, so a message missed while the subscriber was down is not lost for good
/// (`PresencePicture` orders the read against the messages). After its own connection comes
/// back, or when its lease lapsed (a pause longer than the lease), the node registers its whole
/// local set again. While Redis is unreachable, `setLocal` keeps the local set and the picture
/// stays as it was; both are mended when Redis answers again.
///
/// Loop thread only (the loop given), except `init`, `close`, `leave` and `elsewhere()`.
// Sendable: loop thread only, except the any-thread methods named above (they hop onto it).
public final class RedisPresenceRegistry: @unchecked Sendable {
    // @unchecked: every stored property is touched on `loop`'s thread only.

    public struct Options: Sendable {
        public var leaseMilliseconds: Int64 = 3_000
        public var renewMilliseconds: Int64 = 1_000
        /// Prefix of every key and of the channel.
        public var keyPrefix = "huddle:"
        public var client = RedisClient.Options()
        public init() {}
    }

    public struct InvalidNodeName: Error, CustomStringConvertible {
        public var name: String
        public var description: String { "a node name is 1 to 128 bytes without spaces or control characters, not \"\(name)\"" }
    }

    public let node: String
    public let loop: EventLoop
    private let nonce: String
    private let options: Options
    private let client: RedisClient
    private let subscriber: RedisSubscriber
    private let onChanges: ([PresenceChange]) -> Void
    private var local: Set<String> = []
    private var picture: PresencePicture
    /// The local set is in Redis under a lease held by this node (as far as it knows).
    private var registered = false
    private var rebuildWanted = false
    private var renewal: Int?
    private var closed = false

    /// Starts on `loop` (running or about to run): connects, registers, subscribes, renews.
    /// `onChanges` runs on the loop with each batch of changes on the other nodes. `nonce`
    /// tells this boot of the node from the previous ones.
    public init(
        endpoint: RedisEndpoint, loop: EventLoop, node: String, nonce: String, options: Options = Options(),
        onChanges: @escaping ([PresenceChange]) -> Void
    ) throws(InvalidNodeName) {
        guard Self.isValidName(node), Self.isValidName(nonce) else { throw InvalidNodeName(name: Self.isValidName(node) ? nonce : node) }
        self.node = node
        self.loop = loop
        self.nonce = nonce
        self.options = options
        self.onChanges = onChanges
        picture = PresencePicture(ownNode: node)
        client = RedisClient(endpoint: endpoint, loop: loop, options: options.client)
        subscriber = RedisSubscriber(endpoint: endpoint, loop: loop, options: options.client)
        loop.execute { [self] in start() }
    }

    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && name.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }

    // MARK: Loop thread

    /// Users online on the other live nodes, by node.
    public var onlineElsewhere: [String: Set<String>] { picture.elsewhere }

    /// `user` has (or no longer has) a connection on this node. Redis is told when this changes
    /// the local set; if it cannot be told now, the whole set is registered again later.
    public func setLocal(_ user: String, online: Bool) {
        guard !closed, online ? local.insert(user).inserted : local.remove(user) != nil else { return }
        guard registered else { return }  // the coming registration carries it
        client.evaluate(RedisPresenceScripts.change, keys: [], arguments: arguments([online ? "+" : "-", user])) { [weak self] result in
            if case .failure = result { self?.registered = false }
        }
    }

    // MARK: Any thread

    /// `onlineElsewhere`, read on the loop.
    public func elsewhere() async -> [String: Set<String>] {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in continuation.resume(returning: picture.elsewhere) }
        }
    }

    /// Stops without telling Redis (as a crash would): the others see this node gone when its
    /// lease expires.
    public func close() {
        loop.execute { [self] in shutDown() }
    }

    /// Leaves the cluster: deletes this node's lease and set and tells the others at once.
    /// Returns when Redis confirmed it (or could not be reached), then stops.
    public func leave() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                client.evaluate(RedisPresenceScripts.leave, keys: [], arguments: arguments([])) { [self] _ in
                    shutDown()
                    continuation.resume()
                }
            }
        }
    }

    // MARK: Loop thread, inside

    private func start() {
        subscriber.onSubscribed = { [unowned self] _ in rebuild() }
        subscriber.subscribe(options.keyPrefix + "presence") { [unowned self] payload in
            guard let message = PresenceMessage(payload) else { return }
            received(message)
        }
        client.onStatusChange = { [unowned self] address, _ in
            registered = false
            if address != nil { register() }
        }
        renewal = loop.schedule(after: options.renewMilliseconds, repeating: options.renewMilliseconds) { [unowned self] in renew() }
    }

    private func shutDown() {
        guard !closed else { return }
        closed = true
        if let renewal { loop.cancelTimer(renewal) }
        client.close()
        subscriber.close()
    }

    private func arguments(_ rest: [String]) -> [[UInt8]] {
        ([options.keyPrefix, node] + rest).map(bytes)
    }

    private func register() {
        guard !closed else { return }
        registered = true
        let users = local.sorted()
        client.evaluate(RedisPresenceScripts.register, keys: [], arguments: arguments([nonce, "\(options.leaseMilliseconds)"] + users)) { [weak self] result in
            if case .failure = result { self?.registered = false }
        }
    }

    private func renew() {
        guard !closed else { return }
        if rebuildWanted { rebuild() }
        guard registered else { return register() }
        client.evaluate(RedisPresenceScripts.renew, keys: [], arguments: arguments([nonce, "\(options.leaseMilliseconds)"])) { [weak self] result in
            guard let self, !closed else { return }
            switch result {
            case .success(.integer(1)): break
            // The lease had lapsed: another node may have deleted the set meanwhile.
            case .success: register()
            case .failure: registered = false
            }
        }
    }

    private func received(_ message: PresenceMessage) {
        if message.node == node {
            // Another node found this one's lease expired and deleted its set.
            if message.operation == .gone, !closed { register() }
            return
        }
        let (changes, needsRebuild) = picture.receive(message)
        report(changes)
        if needsRebuild { rebuild() }
    }

    private func rebuild() {
        guard !closed else { return }
        guard !picture.isRebuilding else {
            rebuildWanted = true  // after the one in flight: it may have been read before the cause
            return
        }
        rebuildWanted = false
        picture.beginRebuild()
        client.evaluate(RedisPresenceScripts.read, keys: [], arguments: [bytes(options.keyPrefix)]) { [weak self] result in
            guard let self, !closed else { return }
            guard case .success(let reply) = result, let sets = Self.sets(reply) else {
                report(picture.rebuildFailed())
                rebuildWanted = true  // the next renewal tries again
                return
            }
            let (changes, needsRebuild) = picture.rebuilt(sets)
            report(changes)
            if needsRebuild || rebuildWanted { rebuild() }
        }
    }

    private func report(_ changes: [PresenceChange]) {
        if !changes.isEmpty { onChanges(changes) }
    }

    private static func sets(_ reply: RedisReply) -> [String: (sequence: UInt64, users: Set<String>)]? {
        guard let items = reply.elements else { return nil }
        var sets: [String: (sequence: UInt64, users: Set<String>)] = [:]
        for item in items {
            guard let parts = item.elements, parts.count == 3, let name = parts[0].string,
                  let sequence = parts[1].string.flatMap({ UInt64($0) }), let members = parts[2].elements else { return nil }
            sets[name] = (sequence, Set(members.compactMap(\.string)))
        }
        return sets
    }
}

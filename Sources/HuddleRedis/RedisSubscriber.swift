import HuddleIO

/// PUB/SUB for what is shared but not logged (typing, presence pings, "close this user's
/// connections"): a connection of its own (a subscribed connection takes no other commands),
/// subscribed again to every channel after each reconnect. Messages published while it was
/// down are lost, as Redis PUB/SUB loses them: `onResubscribed` tells the owner so it can
/// rebuild what it derives from them. Loop thread only, except `init` and `close`.
// Sendable: loop thread only, except `init` (before the loop sees it) and `close` (hops onto it).
public final class RedisSubscriber: @unchecked Sendable {
    // @unchecked: state is touched on `loop`'s thread only.

    public let loop: EventLoop
    private let link: RedisLink
    private var handlers: [String: ([UInt8]) -> Void] = [:]
    /// Runs on the loop once every channel is subscribed again after a reconnect (not the first time).
    public var onResubscribed: () -> Void = {}
    /// Runs on the loop each time SUBSCRIBE is confirmed for a channel.
    public var onSubscribed: (String) -> Void = { _ in }
    private var connectedBefore = false

    public init(endpoint: RedisEndpoint, loop: EventLoop, options: RedisClient.Options = RedisClient.Options()) {
        self.loop = loop
        link = RedisLink(endpoint: endpoint, loop: loop, options: options)
        link.onReady = { [unowned self] connection in
            for channel in handlers.keys.sorted() { issueSubscribe(channel, on: connection) }
            if connectedBefore { onResubscribed() }
            connectedBefore = true
        }
        loop.execute { [self] in link.start() }
    }

    /// Delivers every message published on `channel` to `message`, on the loop.
    public func subscribe(_ channel: String, message: @escaping ([UInt8]) -> Void) {
        let isNew = handlers[channel] == nil
        handlers[channel] = message
        if isNew, let connection = link.connection { issueSubscribe(channel, on: connection) }
    }

    public func close() {
        loop.execute { [self] in link.close() }
    }

    private func issueSubscribe(_ channel: String, on connection: RedisConnection) {
        _ = connection.subscribe([bytes("SUBSCRIBE"), bytes(channel)]) { [weak self] reply in
            guard let self, let parts = reply.elements, parts.count == 3, let kind = parts[0].string else { return }
            switch (kind, parts[2]) {
            case ("message", .bulk(let payload)): self.handlers[channel]?(payload)
            case ("subscribe", _): self.onSubscribed(channel)
            default: break
            }
        }
    }
}

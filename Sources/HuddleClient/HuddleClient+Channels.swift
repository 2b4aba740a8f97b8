import HuddleProtocol

/// protocol.md "Channels": `subscribe`, `unsubscribe`, `publish`, `history`, `presence`.
/// Publications of subscribed channels arrive as `HuddleEvent.publication`, once each, in
/// order, across reconnects.
extension HuddleClient {
    /// `subscribe`: from now on (and on every reconnect) publications of `channel` are delivered.
    /// With `since` (a position saved earlier, even by another process), the ones after it are
    /// replayed first, as events; `result.recovered == false` says they could not be.
    public func subscribe(_ channel: String, since: Position? = nil, completion: @escaping (Result<SubscribeResult, HuddleClientError>) -> Void) {
        subscribe(channel: channel, since: since, completion: completion)
    }

    /// `unsubscribe`: no publication of `channel` is delivered after this call.
    public func unsubscribe(_ channel: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        unsubscribe(channel: channel, completion: completion)
    }

    /// A fresh client id for `publish`: 128 random bits, so retries of one publication share
    /// it and two publications never do.
    public static func makeClientID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return "c-" + hex(high) + hex(low)
    }

    /// `publish`, with `clientID` as its client id (one is made when nil). Like every write it
    /// waits in the outbox and is sent again after a drop until answered: the server stores it
    /// once whatever happens (`result.duplicate` tells a retry that found the first copy).
    public func publish(
        _ channel: String, data: JSONValue, type: String? = nil, clientID: String? = nil,
        completion: @escaping (Result<PublishResult, HuddleClientError>) -> Void
    ) {
        let operation = Operation.publish(channel: channel, type: type ?? RequestDefaults.publicationType, data: JSONWriter.serialize(data))
        request(operation, clientID: clientID, reading: PublishResult.init(result:), completion: completion)
    }

    /// `history`: a page of publications, newest first, with offsets below `before` if given.
    public func history(_ channel: String, before: UInt64? = nil, limit: Int? = nil, completion: @escaping (Result<HistoryPage, HuddleClientError>) -> Void) {
        request(.history(channel: channel, before: before, limit: limit ?? ProtocolLimits().defaultHistoryLimit), resendAfterReconnect: true, reading: HistoryPage.init(result:), completion: completion)
    }

    /// `presence`: who is in a `room:` channel now, sorted.
    public func presence(_ channel: String, completion: @escaping (Result<[String], HuddleClientError>) -> Void) {
        request(.presence(channel: channel), resendAfterReconnect: true,
                reading: { result throws(WireFormatError) in try ChannelPresence(result: result).users }, completion: completion)
    }
}

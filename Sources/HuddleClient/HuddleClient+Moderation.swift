import HuddleProtocol

/// protocol.md "Blocking" and "Reports": block, unblock, the caller's blocks, and reports.
/// Blocks wait in the outbox with a `client_id` and are resent after a drop until answered,
/// done once; a report is sent once (a second one of the same thing while the first is open is
/// `already_reported`).
extension HuddleClient {
    /// `block`: ends any friendship and request with `user` and hides the two from each other.
    public func block(_ user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.block(user: user), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }

    /// `unblock`: lifts the caller's block of `user`; restores nothing.
    public func unblock(_ user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.unblock(user: user), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }

    /// `blocks`: the users the caller blocked, in byte order.
    public func blocks(completion: @escaping (Result<[String], HuddleClientError>) -> Void) {
        request(.blocks, resendAfterReconnect: true, reading: ReplyResult.users(in:), completion: completion)
    }

    /// `report`: reports `target` to the operator with a reason from `ReportVocabulary.reasons`;
    /// the new report's id.
    public func report(
        _ target: ReportTarget, reason: String, text: String = "", completion: @escaping (Result<UInt64, HuddleClientError>) -> Void
    ) {
        request(.report(target: target, reason: reason, text: text), reading: { result throws(WireFormatError) in try result.requiredUInt64("report") },
                completion: completion)
    }
}

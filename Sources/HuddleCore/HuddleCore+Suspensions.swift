import HuddleProtocol

/// Suspension (protocol.md, "Moderation"): the operator suspends an account, with a reason and
/// optionally an end; the user's live connections close with 4003 on every node (the close is
/// told with the command, `tellLive`), and every sign-in — login or token — is refused
/// `account_suspended` until it ends or is lifted. Sessions are kept: lifting the suspension
/// lets the user's devices back in with the tokens they hold.
extension HuddleCore {
    static let suspendedCloseCode: UInt16 = 4003
    static let suspendedReason = "account suspended"

    func suspend(_ text: String, reason: String, until: Int64?, requestID: String, at time: Int64, into step: inout CoreStep) {
        guard let user = moderatedUser(text, requestID, into: &step) else { return }
        if let until, until <= time {
            return fail(nil, requestID, CoreError(.badRequest, "until must be in the future"), into: &step)
        }
        let closing = connections.connections(of: user).count
        let command = CoreCommand.suspend(user: user, reason: reason, until: until, time: time)
        record(command, into: &step)
        tellLive(after: command, at: time, into: &step)
        reply(nil, requestID, .disconnected(count: closing), into: &step)
    }

    func unsuspend(_ text: String, requestID: String, at time: Int64, into step: inout CoreStep) {
        guard let user = moderatedUser(text, requestID, into: &step) else { return }
        guard durableState.suspensions[user] != nil else {
            return fail(nil, requestID, CoreError(.notSuspended, "\(user) is not suspended"), into: &step)
        }
        record(.unsuspend(user: user, time: time), into: &step)
        reply(nil, requestID, .done, into: &step)
    }

    /// `account_suspended` while `user`'s suspension holds, else nil; `retry_after_ms` when it
    /// has an end.
    func suspensionRefusal(_ user: Username, at time: Int64) -> CoreError? {
        guard let suspension = durableState.suspensions.active(user, at: time) else { return nil }
        let message = "this account is suspended: \(suspension.reason)"
        return CoreError(.accountSuspended, message, retryAfterMilliseconds: suspension.until.map { $0 - time })
    }

    /// Closes every live connection of `user` here with 4003 and forgets them.
    func closeSuspended(_ user: Username, at time: Int64, into step: inout CoreStep) {
        let closing = connections.connections(of: user)
        guard !closing.isEmpty else { return }
        step.outputs.append(.closeConnections(closing, code: Self.suspendedCloseCode, reason: Self.suspendedReason))
        for connection in closing { forget(connection, at: time) }
    }
}

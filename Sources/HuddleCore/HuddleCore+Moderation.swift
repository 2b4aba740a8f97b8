import HuddleProtocol

/// The operator's moderation calls (protocol.md, "Moderation"), from the HTTP API: no
/// connection, the reply goes back as the HTTP response.
extension HuddleCore {
    func moderate(_ request: ModerationRequest, requestID: String, at time: Int64, into step: inout CoreStep) {
        switch request {
        case let .suspend(username, reason, until):
            suspend(username, reason: reason, until: until, requestID: requestID, at: time, into: &step)
        case let .unsuspend(username):
            unsuspend(username, requestID: requestID, at: time, into: &step)
        case let .listReports(open, after, limit):
            reply(nil, requestID, .reports(durableState.reports.page(open: open, after: after, limit: limit)), into: &step)
        case let .resolveReport(id, action, note):
            resolveReport(id, action: action, note: note, requestID: requestID, at: time, into: &step)
        }
    }

    /// The canonical name of an existing account, or nil having replied `user_not_found`.
    func moderatedUser(_ text: String, _ requestID: String, into step: inout CoreStep) -> Username? {
        guard let username = UsernameRules.canonical(text), durableState.accounts[username] != nil else {
            fail(nil, requestID, CoreError(.userNotFound, "no user \(text)"), into: &step)
            return nil
        }
        return username
    }
}

import HuddleProtocol

/// Reports (protocol.md, "Reports"): a user reports a user, a message, a post or a comment;
/// the content is captured as it is now, so the operator reads what was reported even after it
/// is edited or removed; the operator lists and resolves reports through the HTTP API, and
/// each new one is handed to the report webhook (`CoreOutput.reportFiled`).
///
/// What may be reported is what the reporter can see — or could, before they blocked its
/// author: a blocked user's posts are out of the blocker's feed, yet still reportable by them.
extension HuddleCore {
    static let reportsPerHour = 10.0
    static let reportBurst = 10.0

    func fileReport(
        _ connection: ConnectionRef, requestID: String, target: ReportTarget, reason: String, text: String, at time: Int64,
        into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let (subject, content) = reported(target, by: identity.username, connection, requestID, into: &step)
        else { return }
        let me = identity.username
        guard subject != me else {
            return fail(connection, requestID, CoreError(.selfRequest, "you cannot report yourself"), into: &step)
        }
        let reports = durableState.reports
        guard !reports.hasOpen(by: me, of: target) else {
            return fail(connection, requestID, CoreError(.alreadyReported, "you reported this already; it is still open"), into: &step)
        }
        guard reports.openCount(of: me) < Reports.maxOpenPerReporter else {
            let message = "you have \(Reports.maxOpenPerReporter) open reports; wait for the operator to resolve some"
            return fail(connection, requestID, CoreError(.tooManyReports, message), into: &step)
        }
        guard reports.hasRoom else {
            return fail(connection, requestID, CoreError(.tooManyReports, "the server holds all the open reports it can"), into: &step)
        }
        var budget = reportBudgets[me] ?? TokenBucket(rate: Self.reportsPerHour / 3600, burst: Self.reportBurst, now: time)
        let wait = budget.take(now: time)
        reportBudgets[me] = budget
        if let wait {
            let message = "you sent \(Int(Self.reportBurst)) reports recently; wait before the next"
            return fail(connection, requestID, CoreError(.reportsLimited, message, retryAfterMilliseconds: wait), into: &step)
        }
        let report = ModerationReport(
            id: reports.lastID + 1, reporter: me, target: target, user: subject, reason: reason, text: text,
            content: content.map(ModerationReport.captured), time: time)
        record(.fileReport(report), into: &step)
        step.outputs.append(.reportFiled(report))
        reply(connection, requestID, .reportFiled(id: report.id), into: &step)
    }

    func resolveReport(_ id: UInt64, action: String, note: String, requestID: String, at time: Int64, into step: inout CoreStep) {
        guard let report = durableState.reports[id] else {
            return fail(nil, requestID, CoreError(.reportNotFound, "no report \(id)"), into: &step)
        }
        guard report.resolution == nil else {
            return fail(nil, requestID, CoreError(.alreadyResolved, "report \(id) is resolved already"), into: &step)
        }
        record(.resolveReport(id: id, action: action, note: note, time: time), into: &step)
        reply(nil, requestID, .done, into: &step)
    }

    /// The reported user and the content as it is now (nil for a user), or nil having replied
    /// why it cannot be reported: what the reporter may not see is as if it did not exist.
    private func reported(
        _ target: ReportTarget, by reporter: Username, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep
    ) -> (Username, String?)? {
        switch target {
        case .user(let name):
            guard let user = existingUser(name, connection, requestID, into: &step) else { return nil }
            return (user, nil)
        case let .message(text, offset):
            guard let name = channelName(text, connection, requestID, into: &step) else { return nil }
            if let refusal = name.readRefusal(for: reporter, friendsOfOwner: friends(of:)) {
                fail(connection, requestID, refusal, into: &step)
                return nil
            }
            guard let channel = durableState.channels[name.text], (channel.firstRetainedOffset...channel.lastOffset).contains(offset),
                  let from = channel.publication(at: offset, channel: name.text).from
            else {
                fail(connection, requestID, CoreError(.contentNotFound, "no user's publication at \(offset) in \(name.text)"), into: &step)
                return nil
            }
            return (from, channel.publication(at: offset, channel: name.text).data)
        case .post(let id):
            guard let post = reportablePost(id, by: reporter, connection, requestID, into: &step) else { return nil }
            return (post.author, post.text)
        case let .comment(postID, commentID):
            guard let post = reportablePost(postID, by: reporter, connection, requestID, into: &step) else { return nil }
            guard let comment = post.comments.first(where: { $0.id == commentID }) else {
                fail(connection, requestID, CoreError(.contentNotFound, "post \(postID) has no comment \(commentID)"), into: &step)
                return nil
            }
            return (comment.author, comment.text)
        }
    }

    /// The post if the reporter can see it, or blocked its author; else nil having replied
    /// `post_not_found`.
    private func reportablePost(
        _ id: UInt64, by reporter: Username, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep
    ) -> StoredPost? {
        guard let post = durableState.feed[id],
              post.author == reporter || durableState.friendships.areFriends(post.author, reporter)
                || durableState.blocks.blocks(reporter, post.author)
        else {
            fail(connection, requestID, CoreError(.postNotFound, "no post \(id) in your feed"), into: &step)
            return nil
        }
        return post
    }
}

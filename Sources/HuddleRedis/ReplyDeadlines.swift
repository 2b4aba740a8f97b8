/// When the reply to the oldest unanswered command is overdue: how a connection notices a Redis
/// that stopped answering without closing (paused, partitioned, a dead host whose kernel sends
/// no reset), which the socket alone would show only after TCP's retransmissions, minutes later.
///
/// Replies come back in command order, so only the oldest unanswered command is timed; the one
/// behind it starts its clock when its predecessor is answered (it could not be answered
/// earlier). A blocking command (XREAD BLOCK, WAIT) is allowed its block time on top. A command
/// is timed from when it is written, not issued: one issued in a turn that is then held up
/// (a long turn, a starved process) waits in the client's buffer until the loop next finds the
/// socket writable, and the server cannot answer what it has not been sent.
struct ReplyDeadlines {
    private struct Entry {
        var token: Int
        var allowance: Int64
        /// `.max` until it is written (and for ever for a command that may block for ever).
        var due: Int64
    }

    /// Milliseconds a command may wait for its reply beyond its own block time.
    let timeout: Int64
    private var entries: [Entry] = []
    private var head = 0
    /// Entries from here on have not been written yet.
    private var unwritten = 0

    init(timeout: Int64) {
        self.timeout = timeout
    }

    /// A command was issued that may legitimately block `blockingFor` ms (`.max`: forever);
    /// its clock starts once it is `written`.
    mutating func issued(token: Int, blockingFor: Int64) {
        let allowance = blockingFor == .max ? .max : timeout + blockingFor
        entries.append(Entry(token: token, allowance: allowance, due: .max))
    }

    /// Every command issued so far went out at `now` (began to: the rest of a long batch
    /// follows as the server reads, and a server that stops reading is what the timeout is for).
    mutating func written(now: Int64) {
        for index in unwritten..<entries.count where entries[index].allowance != .max {
            entries[index].due = now + entries[index].allowance
        }
        unwritten = entries.count
    }

    /// The reply to `token` came at `now` (or the command failed without a reply).
    mutating func answered(token: Int, now: Int64) {
        while head < entries.count, entries[head].token <= token { head += 1 }
        if head < entries.count {
            let allowance = entries[head].allowance
            entries[head].due = max(entries[head].due, allowance == .max ? .max : now + allowance)
        }
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            unwritten -= min(head, unwritten)
            head = 0
        }
    }

    /// Entries kept, answered ones included until they are compacted away.
    var storedCount: Int { entries.count }

    /// How long the oldest unanswered command has been waiting past its due time; nil if none is.
    func overdue(now: Int64) -> Int64? {
        guard head < entries.count, entries[head].due != .max, now > entries[head].due else { return nil }
        return now - entries[head].due
    }
}

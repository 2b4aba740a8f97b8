/// When the reply to the oldest unanswered command is overdue: how a connection notices a Redis
/// that stopped answering without closing (paused, partitioned, a dead host whose kernel sends
/// no reset), which the socket alone would show only after TCP's retransmissions, minutes later.
///
/// Replies come back in command order, so only the oldest unanswered command is timed; the one
/// behind it starts its clock when its predecessor is answered (it could not be answered
/// earlier). A blocking command (XREAD BLOCK, WAIT) is allowed its block time on top.
struct ReplyDeadlines {
    private struct Entry {
        var token: Int
        var allowance: Int64
        var due: Int64
    }

    /// Milliseconds a command may wait for its reply beyond its own block time.
    let timeout: Int64
    private var entries: [Entry] = []
    private var head = 0

    init(timeout: Int64) {
        self.timeout = timeout
    }

    /// A command went out at `now` that may legitimately block `blockingFor` ms (`.max`: forever).
    mutating func sent(token: Int, blockingFor: Int64, now: Int64) {
        let allowance = blockingFor == .max ? .max : timeout + blockingFor
        let due = allowance == .max ? .max : now + allowance
        entries.append(Entry(token: token, allowance: allowance, due: due))
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

import HuddleProtocol

/// The activities each user has on (durable): at most one status per user and activity, so a
/// user holds at most as many as the list has names (64).
///
/// An expiry queue, derived from the statuses, lets `expireActivities` find the ones that ran
/// out without scanning every user. It is not part of equality or of the encoding (rebuilt
/// when decoding and by replay); a status changed or cleared leaves its old entry behind,
/// skipped when popped, and the queue is rebuilt whenever such leftovers outnumber the
/// statuses, so it stays within twice their number (plus a small slack).
/// Coded as a list sorted by user, then activity.
public struct ActivityStatuses: Sendable {
    private var byUser: [Username: [String: ActivityStatus]] = [:]
    private var expiries = MinHeap<ActivityExpiry>()
    public private(set) var count = 0

    public init() {}

    /// The user's statuses, live or not yet cleared, by activity.
    public func statuses(of user: Username) -> [String: ActivityStatus] {
        byUser[user] ?? [:]
    }

    public func status(of user: Username, activity: String) -> ActivityStatus? {
        byUser[user]?[activity]
    }

    /// Whether the user has any status at all: most users have none, and matching skips them.
    func hasStatuses(_ user: Username) -> Bool {
        byUser[user] != nil
    }

    mutating func set(_ status: ActivityStatus, of user: Username) {
        if byUser[user, default: [:]].updateValue(status, forKey: status.activity) == nil { count += 1 }
        expiries.push(ActivityExpiry(time: status.expiresAt, user: user, activity: status.activity))
        if expiries.count > 2 * count + 64 { rebuildExpiries() }
    }

    @discardableResult
    mutating func clear(_ activity: String, of user: Username) -> ActivityStatus? {
        guard let removed = byUser[user]?.removeValue(forKey: activity) else { return nil }
        if byUser[user]?.isEmpty == true { byUser[user] = nil }
        count -= 1
        return removed
    }

    /// Takes from the queue every status that has run out by `time` and is still there,
    /// sorted (time, user, activity). The statuses themselves stay: the caller clears them
    /// through commands, so the log records the expiry.
    mutating func popExpired(at time: Int64) -> [ActivityExpiry] {
        var due = Set<ActivityExpiry>()
        while let next = expiries.min, next.time <= time {
            _ = expiries.popMin()
            // Skip entries of statuses turned off or changed since they were queued.
            if byUser[next.user]?[next.activity]?.expiresAt == next.time { due.insert(next) }
        }
        return due.sorted()
    }

    private mutating func rebuildExpiries() {
        expiries = MinHeap()
        for (user, statuses) in byUser {
            for status in statuses.values { expiries.push(ActivityExpiry(time: status.expiresAt, user: user, activity: status.activity)) }
        }
    }

    /// Account deletion: every status of the user (their leftover expiry entries are skipped
    /// when popped, as a cleared status's are).
    mutating func erase(_ user: Username) {
        for activity in Array(statuses(of: user).keys) { clear(activity, of: user) }
    }
}

extension ActivityStatuses: Equatable {
    /// The expiry queue is an index of the statuses: it does not take part.
    public static func == (lhs: ActivityStatuses, rhs: ActivityStatuses) -> Bool {
        lhs.byUser == rhs.byUser
    }
}

/// `{user, status}` objects by user, then activity.
extension ActivityStatuses: PersistedValue {
    var persisted: JSONValue {
        var entries: [JSONValue] = []
        for user in byUser.keys.sorted() {
            let statuses = byUser[user]!
            for activity in statuses.keys.sorted() { entries.append(.record([("user", user.persisted), ("status", statuses[activity]!.persisted)])) }
        }
        return .array(entries)
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "ActivityStatusEntry") {
            let user: Username = try f("user")
            let status: ActivityStatus = try f("status")
            if let audience = status.audience, zip(audience, audience.dropFirst()).contains(where: { $0 >= $1 }) {
                throw RecordDecodingError("audience of \(user)'s \(status.activity) is not sorted and unique")
            }
            guard self.status(of: user, activity: status.activity) == nil else { throw RecordDecodingError("\(user)'s \(status.activity) appears twice") }
            set(status, of: user)
        }
    }
}

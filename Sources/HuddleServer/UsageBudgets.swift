import HuddleCore

/// protocol.md "Limits", fair shares: what one user may cost the server per second across all
/// of their connections (before sign-in, what one client address may). The per-connection
/// rate limit on each I/O loop stays the cheap first refusal; these bound the sum, so a
/// user's share does not grow with the number of connections they open.
///
/// - requests: one token each;
/// - bytes published: the `data` of each `publish`, taken before it is stored;
/// - bytes read back: the encoded size of each reply to a read that returns pages (history,
///   feed, comments, recovery on subscribe, memories), paid after the reply is made — its size
///   is only known then — so a bucket in debt refuses the next reads until it has refilled.
///
/// Kept on the core thread (`CoreRunner`), the one place that sees every request of a user
/// whichever loop it came on and knows who the connection is signed in as: plain dictionaries,
/// no lock, no cross-thread traffic beyond the request itself. Not durable and never logged:
/// a restart starts everyone with full buckets.
struct UsageBudgets {
    enum Budget: String, CaseIterable {
        case requests
        case publishedBytes = "published_bytes"
        case readBytes = "read_bytes"
    }

    struct Refusal {
        var budget: Budget
        var retryAfterMilliseconds: Int64
        var message: String
    }

    private struct Buckets {
        var requests: TokenBucket
        var publishedBytes: TokenBucket
        var readBytes: TokenBucket

        func isFull(now: Int64) -> Bool {
            requests.isFull(now: now) && publishedBytes.isFull(now: now) && readBytes.isFull(now: now)
        }
    }

    private let configuration: ServerConfiguration
    private var owners: [BudgetOwner: Buckets] = [:]

    init(configuration: ServerConfiguration) {
        self.configuration = configuration
    }

    var trackedOwnerCount: Int { owners.count }

    /// nil if the request may go to the core (and is counted); else why not.
    mutating func admit(_ request: CoreRequest, of owner: BudgetOwner, now: Int64) -> Refusal? {
        var buckets = owners[owner] ?? fresh(now: now)
        defer { owners[owner] = buckets }
        if let wait = buckets.requests.take(now: now) {
            return Refusal(budget: .requests, retryAfterMilliseconds: wait, message: "over \(Int(configuration.userRequestsPerSecond)) requests per second for one user")
        }
        if request.effect == .pagedRead, let wait = buckets.readBytes.admit(now: now) {
            return Refusal(
                budget: .readBytes, retryAfterMilliseconds: wait,
                message: "over \(Int(configuration.userReadBytesPerSecond)) bytes read back per second for one user")
        }
        if case .operation(.publish(_, _, let data)) = request.body, let wait = buckets.publishedBytes.take(Double(data.utf8.count), now: now) {
            return Refusal(
                budget: .publishedBytes, retryAfterMilliseconds: wait,
                message: "over \(Int(configuration.userPublishedBytesPerSecond)) bytes published per second for one user")
        }
        return nil
    }

    /// Counts the size of a reply to a read against its owner.
    mutating func chargeRead(_ bytes: Int, to owner: BudgetOwner, now: Int64) {
        var buckets = owners[owner] ?? fresh(now: now)
        buckets.readBytes.charge(Double(bytes), now: now)
        owners[owner] = buckets
    }

    /// Forgets owners whose buckets are all full: idle users and addresses take no memory.
    mutating func purge(now: Int64) {
        owners = owners.filter { !$0.value.isFull(now: now) }
    }

    private func fresh(now: Int64) -> Buckets {
        Buckets(
            requests: TokenBucket(rate: configuration.userRequestsPerSecond, burst: configuration.userRequestBurst, now: now),
            publishedBytes: TokenBucket(
                rate: configuration.userPublishedBytesPerSecond, burst: configuration.userPublishedBytesBurst, now: now),
            readBytes: TokenBucket(rate: configuration.userReadBytesPerSecond, burst: configuration.userReadBytesBurst, now: now))
    }
}

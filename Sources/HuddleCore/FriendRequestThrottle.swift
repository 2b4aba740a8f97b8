/// protocol.md "Limits", friend requests over time: what one user's requests may cost others.
///
/// A request puts a notice in the recipient's inbox (and its cancel a second one) and may
/// push to their phone, so a stranger looping `friend_request`/`friend_cancel` could flood
/// both. Four bounds hold that cost whatever the number of connections or accounts:
/// - each sender has a budget of requests over time, cancelled ones included;
/// - each recipient has a budget of requests received over time, small enough that what
///   strangers can put in an inbox over its 30 days (two notices a request: it and its cancel)
///   stays under the 1000 it keeps: however many accounts they use, strangers alone cannot
///   flush a user's friend and match notices out of it;
/// - after a cancel, the same sender may not ask the same user again for a while (a declined
///   request needs the recipient's answer each time, so it cannot be looped);
/// - each recipient gets at most one friend-request push per interval (the inbox holds the rest).
///
/// Ephemeral, like `LoginThrottle`: none of it is logged, a restart forgets it.
struct FriendRequestThrottle: Sendable {
    private struct Pair: Hashable {
        var sender: Username
        var recipient: Username
    }

    private let rate: Double
    private let burst: Double
    private let receivedRate: Double
    private let receivedBurst: Double
    private let cooldown: Int64
    private let pushInterval: Int64
    private var sent: [Username: TokenBucket] = [:]
    private var received: [Username: TokenBucket] = [:]
    /// When each pair's cooldown ends.
    private var cooldowns: [Pair: Int64] = [:]
    private var lastPush: [Username: Int64] = [:]

    init(configuration: CoreConfiguration) {
        rate = configuration.friendRequestsPerHour / 3600
        burst = configuration.friendRequestBurst
        receivedRate = configuration.friendRequestsReceivedPerDay / 86_400
        receivedBurst = configuration.friendRequestsReceivedBurst
        cooldown = configuration.friendRequestCooldownMilliseconds
        pushInterval = configuration.friendRequestPushIntervalMilliseconds
    }

    /// nil if `sender` may ask `recipient` now (and the request is counted); else the refusal.
    mutating func admit(from sender: Username, to recipient: Username, at time: Int64) -> CoreError? {
        if let end = cooldowns[Pair(sender: sender, recipient: recipient)], end > time {
            return CoreError(
                .requestCooldown, "you withdrew your last request to \(recipient); you may ask again later",
                retryAfterMilliseconds: end - time)
        }
        var sending = sent[sender] ?? TokenBucket(rate: rate, burst: burst, now: time)
        var receiving = received[recipient] ?? TokenBucket(rate: receivedRate, burst: receivedBurst, now: time)
        // Counted on both sides or on neither.
        if let wait = sending.take(now: time) {
            return CoreError(
                .friendRequestsLimited, "at most \(Int(burst)) friend requests at once and \(Int((rate * 3600).rounded())) an hour",
                retryAfterMilliseconds: wait)
        }
        if let wait = receiving.take(now: time) {
            return CoreError(
                .friendRequestsLimited, "\(recipient) has received too many friend requests lately; ask again later",
                retryAfterMilliseconds: wait)
        }
        sent[sender] = sending
        received[recipient] = receiving
        return nil
    }

    /// `sender` withdrew their request to `recipient`.
    mutating func cancelled(from sender: Username, to recipient: Username, at time: Int64) {
        cooldowns[Pair(sender: sender, recipient: recipient)] = time + cooldown
    }

    /// Whether a friend-request push to `recipient` may go out now (and counts it).
    mutating func mayPush(to recipient: Username, at time: Int64) -> Bool {
        if let last = lastPush[recipient], time - last < pushInterval, time >= last { return false }
        lastPush[recipient] = time
        return true
    }

    /// Forgets full buckets, ended cooldowns and old pushes, so idle users take no memory.
    mutating func purge(at time: Int64) {
        sent = sent.filter { !$0.value.isFull(now: time) }
        received = received.filter { !$0.value.isFull(now: time) }
        cooldowns = cooldowns.filter { $0.value > time }
        lastPush = lastPush.filter { time - $0.value < pushInterval }
    }
}

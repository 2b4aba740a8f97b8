import HuddleProtocol

/// Who is friends with whom, and the friend requests still waiting for an answer (durable).
///
/// Friendship is mutual, so it is stored on both sides: `friends(of:)` is one lookup, which
/// `loc:` authorization and presence announcements rely on. Pending requests are indexed by
/// sender and by recipient so that both lists, and the "crossing request" check, are lookups.
/// Coded as sorted lists (each friendship once, as an ordered pair), so equal states encode to
/// equal bytes; the indexes are rebuilt when decoding.
public struct Friendships: Sendable, Equatable {
    private var friendsByUser: [Username: Set<Username>] = [:]
    private var requestsBySender: [Username: [Username: FriendRequest]] = [:]
    private var sendersByRecipient: [Username: Set<Username>] = [:]

    public init() {}

    public func friends(of user: Username) -> Set<Username> {
        friendsByUser[user] ?? []
    }

    public func areFriends(_ first: Username, _ second: Username) -> Bool {
        friendsByUser[first]?.contains(second) == true
    }

    public func request(from sender: Username, to recipient: Username) -> FriendRequest? {
        requestsBySender[sender]?[recipient]
    }

    /// How many friends the user has, in O(1).
    public func friendCount(of user: Username) -> Int { friendsByUser[user]?.count ?? 0 }
    /// How many requests the user sent that are still waiting, in O(1).
    public func outgoingRequestCount(of user: Username) -> Int { requestsBySender[user]?.count ?? 0 }
    /// How many requests are waiting for the user's answer, in O(1).
    public func incomingRequestCount(of user: Username) -> Int { sendersByRecipient[user]?.count ?? 0 }

    /// Requests the user received, newest first.
    public func incomingRequests(of user: Username) -> [FriendRequest] {
        (sendersByRecipient[user] ?? []).compactMap { requestsBySender[$0]?[user] }.sorted(by: FriendRequest.newestFirst)
    }

    /// Requests the user sent and nobody answered yet, newest first.
    public func outgoingRequests(of user: Username) -> [FriendRequest] {
        (requestsBySender[user]?.values).map { Array($0) }?.sorted(by: FriendRequest.newestFirst) ?? []
    }

    public var friendshipCount: Int { friendsByUser.values.reduce(0) { $0 + $1.count } / 2 }
    public var requestCount: Int { requestsBySender.values.reduce(0) { $0 + $1.count } }

    mutating func insert(_ request: FriendRequest) {
        requestsBySender[request.from, default: [:]][request.to] = request
        sendersByRecipient[request.to, default: []].insert(request.from)
    }

    /// Returns false if there was no such request.
    @discardableResult
    mutating func removeRequest(from sender: Username, to recipient: Username) -> Bool {
        guard requestsBySender[sender]?.removeValue(forKey: recipient) != nil else { return false }
        if requestsBySender[sender]?.isEmpty == true { requestsBySender[sender] = nil }
        sendersByRecipient[recipient]?.remove(sender)
        if sendersByRecipient[recipient]?.isEmpty == true { sendersByRecipient[recipient] = nil }
        return true
    }

    /// Makes the two friends; any request between them, either way, is answered by it.
    mutating func befriend(_ first: Username, _ second: Username) {
        removeRequest(from: first, to: second)
        removeRequest(from: second, to: first)
        friendsByUser[first, default: []].insert(second)
        friendsByUser[second, default: []].insert(first)
    }

    mutating func unfriend(_ first: Username, _ second: Username) {
        for (user, friend) in [(first, second), (second, first)] {
            friendsByUser[user]?.remove(friend)
            if friendsByUser[user]?.isEmpty == true { friendsByUser[user] = nil }
        }
    }

    /// Account deletion: every friendship of the user and every request from or to them.
    mutating func erase(_ user: Username) {
        for friend in friends(of: user) { unfriend(user, friend) }
        for recipient in Array(requestsBySender[user]?.keys ?? [:].keys) { removeRequest(from: user, to: recipient) }
        for sender in sendersByRecipient[user] ?? [] { removeRequest(from: sender, to: user) }
    }
}

/// Friendships as sorted pairs, and pending requests by sender, then recipient.
extension Friendships: PersistedValue {
    var persisted: JSONValue {
        var pairs: [[Username]] = []
        for user in friendsByUser.keys.sorted() {
            for friend in friendsByUser[user]!.sorted() where user < friend { pairs.append([user, friend]) }
        }
        var requests: [FriendRequest] = []
        for sender in requestsBySender.keys.sorted() {
            let bySender = requestsBySender[sender]!
            for recipient in bySender.keys.sorted() { requests.append(bySender[recipient]!) }
        }
        return .record([("friendships", pairs.persisted), ("requests", requests.persisted)])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Friendships")
        let pairs: [[Username]] = try f("friendships")
        for pair in pairs {
            guard pair.count == 2, pair[0] < pair[1], !areFriends(pair[0], pair[1]) else { throw RecordDecodingError("bad or repeated friendship \(pair)") }
            befriend(pair[0], pair[1])
        }
        let requests: [FriendRequest] = try f("requests")
        for request in requests {
            guard request.from != request.to, self.request(from: request.from, to: request.to) == nil, !areFriends(request.from, request.to) else {
                throw RecordDecodingError("bad or repeated request \(request.from) → \(request.to)")
            }
            insert(request)
        }
    }
}

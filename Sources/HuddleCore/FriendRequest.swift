/// A pending friend request: `from` asked `to`, with a short message, at `time`.
public struct FriendRequest: Sendable, Equatable {
    public var from: Username
    public var to: Username
    public var message: String
    public var time: Int64

    public init(from: Username, to: Username, message: String, time: Int64) {
        self.from = from
        self.to = to
        self.message = message
        self.time = time
    }

    /// Newest first, then by the other user's name: the order lists are shown in, so that it
    /// never depends on a dictionary's hash seed.
    static func newestFirst(_ lhs: FriendRequest, _ rhs: FriendRequest) -> Bool {
        (lhs.time, rhs.from, rhs.to) > (rhs.time, lhs.from, lhs.to)
    }
}

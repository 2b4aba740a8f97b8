import HuddleProtocol

/// What `friend_request` did.
public enum FriendRequestOutcome: String, Sendable, Equatable {
    /// The request waits for an answer.
    case requested
    /// The other user had asked already: the two requests crossed and they are friends now.
    case friends
}

/// A request waiting for an answer; `user` is the other side.
public struct FriendRequestEntry: Sendable, Equatable {
    public var user: String
    public var message: String
    public var time: Int64

    public init(user: String, message: String, time: Int64) {
        self.user = user
        self.message = message
        self.time = time
    }
}

/// The result of `friend_requests`, each list newest first.
public struct FriendRequestList: Sendable, Equatable {
    public var incoming: [FriendRequestEntry]
    public var outgoing: [FriendRequestEntry]

    public init(incoming: [FriendRequestEntry], outgoing: [FriendRequestEntry]) {
        self.incoming = incoming
        self.outgoing = outgoing
    }

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> FriendRequestList {
        func entries(_ key: String) throws(HuddleClientError) -> [FriendRequestEntry] {
            var list: [FriendRequestEntry] = []
            for object in try result.requiredArray(key) {
                list.append(FriendRequestEntry(
                    user: try object.requiredString("user"), message: try object.requiredString("message"),
                    time: try object.requiredInt64("time")))
            }
            return list
        }
        return FriendRequestList(incoming: try entries("incoming"), outgoing: try entries("outgoing"))
    }
}

/// A friend in the `friends` list.
public struct Friend: Sendable, Equatable {
    public var username: String
    public var online: Bool

    public init(username: String, online: Bool) {
        self.username = username
        self.online = online
    }
}

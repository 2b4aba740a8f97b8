import HuddleProtocol

/// protocol.md "Friends": search, requests, answers, removal, the list. Changes reach both users
/// as `InboxNotice`s on their `inbox:USER` channels (subscribe to it to see them live).
/// Changes wait in the outbox with a `client_id` and are resent after a drop until answered,
/// done once; reads are resent.
extension HuddleClient {
    /// `user_search`: usernames starting with `prefix`, in byte order, the caller left out.
    public func searchUsers(prefix: String, limit: Int? = nil, completion: @escaping (Result<[String], HuddleClientError>) -> Void) {
        var arguments: [(String, JSONValue)] = [("prefix", .string(prefix))]
        if let limit { arguments.append(("limit", .integer(limit))) }
        request("user_search", arguments, resendAfterReconnect: true,
                reading: ReplyResult.users(in:), completion: completion)
    }

    /// `friend_request`: asks `user`; `.friends` when `user` had asked the caller already.
    public func sendFriendRequest(to user: String, message: String? = nil, completion: @escaping (Result<FriendRequestOutcome, HuddleClientError>) -> Void) {
        var arguments: [(String, JSONValue)] = [("user", .string(user))]
        if let message { arguments.append(("message", .string(message))) }
        request("friend_request", arguments, reading: FriendRequestOutcome.init(result:), completion: completion)
    }

    /// `friend_requests`: the requests waiting for an answer, both ways.
    public func friendRequests(completion: @escaping (Result<FriendRequestList, HuddleClientError>) -> Void) {
        request("friend_requests", resendAfterReconnect: true, reading: FriendRequestList.init(result:), completion: completion)
    }

    /// `friend_accept`: `user` asked the caller; they become friends.
    public func acceptFriendRequest(from user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change("friend_accept", user: user, completion: completion)
    }

    /// `friend_decline`: drops `user`'s request.
    public func declineFriendRequest(from user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change("friend_decline", user: user, completion: completion)
    }

    /// `friend_cancel`: withdraws the caller's request to `user`.
    public func cancelFriendRequest(to user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change("friend_cancel", user: user, completion: completion)
    }

    /// `friend_remove`: ends the friendship with `user`.
    public func removeFriend(_ user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change("friend_remove", user: user, completion: completion)
    }

    /// `friends`: sorted by username, with whether each is online.
    public func friends(completion: @escaping (Result<[Friend], HuddleClientError>) -> Void) {
        request("friends", resendAfterReconnect: true, reading: ReplyResult.friends(in:), completion: completion)
    }

    private func change(_ op: String, user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(op, [("user", .string(user))], decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }
}

import HuddleProtocol

/// protocol.md "Friends": search, requests, answers, removal, the list. Changes reach both users
/// as `InboxNotice`s on their `inbox:USER` channels (subscribe to it to see them live).
/// Changes wait in the outbox with a `client_id` and are resent after a drop until answered,
/// done once; reads are resent.
extension HuddleClient {
    /// `user_search`: usernames starting with `prefix`, in byte order, the caller left out.
    public func searchUsers(prefix: String, limit: Int? = nil, completion: @escaping (Result<[String], HuddleClientError>) -> Void) {
        request(.userSearch(prefix: prefix, limit: limit ?? ProtocolLimits().defaultSearchLimit), resendAfterReconnect: true,
                reading: ReplyResult.users(in:), completion: completion)
    }

    /// `friend_request`: asks `user`; `.friends` when `user` had asked the caller already.
    public func sendFriendRequest(to user: String, message: String? = nil, completion: @escaping (Result<FriendRequestOutcome, HuddleClientError>) -> Void) {
        request(.friendRequest(user: user, message: message ?? RequestDefaults.friendMessage), reading: FriendRequestOutcome.init(result:), completion: completion)
    }

    /// `friend_requests`: the requests waiting for an answer, both ways.
    public func friendRequests(completion: @escaping (Result<FriendRequestList, HuddleClientError>) -> Void) {
        request(.friendRequests, resendAfterReconnect: true, reading: FriendRequestList.init(result:), completion: completion)
    }

    /// `friend_accept`: `user` asked the caller; they become friends.
    public func acceptFriendRequest(from user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change(.friendAccept(user: user), completion: completion)
    }

    /// `friend_decline`: drops `user`'s request.
    public func declineFriendRequest(from user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change(.friendDecline(user: user), completion: completion)
    }

    /// `friend_cancel`: withdraws the caller's request to `user`.
    public func cancelFriendRequest(to user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change(.friendCancel(user: user), completion: completion)
    }

    /// `friend_remove`: ends the friendship with `user`.
    public func removeFriend(_ user: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        change(.friendRemove(user: user), completion: completion)
    }

    /// `friends`: sorted by username, with whether each is online.
    public func friends(completion: @escaping (Result<[Friend], HuddleClientError>) -> Void) {
        request(.friends, resendAfterReconnect: true, reading: ReplyResult.friends(in:), completion: completion)
    }

    private func change(_ operation: Operation, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(operation, decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }
}

extension CoreRequest {
    /// The connection a client's request came on and the id its reply carries; nil for what
    /// the server itself asks (the second half of a login, connection lifecycle, ticks), for
    /// the token of an upgrade (answered by a sign-in event, not a reply), and for HTTP API and
    /// photo requests, which have no connection the core knows.
    public var sender: (connection: ConnectionRef, requestID: String)? {
        switch self {
        case .beginSignUp(let ref, let id, _, _, _, _): (ref, id)
        case .beginLogin(let ref, let id, _, _, _): (ref, id)
        case .authenticate(let ref, let id?, _): (ref, id)
        case .logout(let ref, let id, _): (ref, id)
        case .whoami(let ref, let id): (ref, id)
        case .subscribe(let ref, let id, _, _): (ref, id)
        case .unsubscribe(let ref, let id, _): (ref, id)
        case .publish(let ref, let id, _, _, _, _): (ref, id)
        case .history(let ref?, let id, _, _, _): (ref, id)
        case .presence(let ref, let id, _): (ref, id)
        case .searchUsers(let ref, let id, _, _): (ref, id)
        case .sendFriendRequest(let ref, let id, _, _): (ref, id)
        case .listFriendRequests(let ref, let id): (ref, id)
        case .answerFriendRequest(let ref, let id, _, _): (ref, id)
        case .cancelFriendRequest(let ref, let id, _): (ref, id)
        case .removeFriend(let ref, let id, _): (ref, id)
        case .listFriends(let ref, let id): (ref, id)
        case .markRead(let ref, let id, _, _): (ref, id)
        case .unreadCounts(let ref, let id): (ref, id)
        case .typing(let ref, let id, _): (ref, id)
        case .createPost(let ref, let id, _, _, _): (ref, id)
        case .listFeed(let ref, let id, _, _): (ref, id)
        case .likePost(let ref, let id, _, _): (ref, id)
        case .commentOnPost(let ref, let id, _, _): (ref, id)
        case .listComments(let ref, let id, _, _, _): (ref, id)
        case .deletePost(let ref, let id, _): (ref, id)
        case .listActivities(let ref, let id): (ref, id)
        case .activityOn(let ref, let id, _, _, _): (ref, id)
        case .activityOff(let ref, let id, _): (ref, id)
        case .listMatches(let ref, let id, _): (ref, id)
        case .setPlace(let ref, let id, _, _, _, _, _): (ref, id)
        case .removePlace(let ref, let id, _): (ref, id)
        case .listPlaces(let ref, let id, _): (ref, id)
        case .reportLocation(let ref, let id, _, _, _, _): (ref, id)
        case .reportRegion(let ref, let id, _, _, _): (ref, id)
        case .locate(let ref, let id, _): (ref, id)
        case .createMemory(let ref, let id, _): (ref, id)
        case .updateMemory(let ref, let id, _, _): (ref, id)
        case .deleteMemory(let ref, let id, _): (ref, id)
        case .listMemories(let ref, let id): (ref, id)
        case .readMemory(let ref, let id, _): (ref, id)
        case .addMemoryPoint(let ref, let id, _, _): (ref, id)
        case .updateMemoryPoint(let ref, let id, _, _, _): (ref, id)
        case .deleteMemoryPoint(let ref, let id, _, _): (ref, id)
        // A retry-safe write is its client's request, budgeted like the write it wraps.
        case .keyed(let ref, let id, _, _, _): (ref, id)
        default: nil
        }
    }
}

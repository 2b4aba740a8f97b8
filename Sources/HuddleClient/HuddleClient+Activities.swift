import HuddleProtocol

/// protocol.md "Activities and matches": "who is up for something right now?". A match begins
/// and ends with `InboxNotice.match` and `.matchEnded` on the caller's `inbox:USER` (subscribe to
/// it to see them live; a client that was away recovers them with the inbox's position).
extension HuddleClient {
    /// `activities`: the server's list and the caller's statuses that are on.
    public func activities(completion: @escaping (Result<ActivityList, HuddleClientError>) -> Void) {
        request(.activities, resendAfterReconnect: true, reading: ActivityList.init(result:), completion: completion)
    }

    /// `activity_on`: the caller is up for `activity` (any case), for every friend or only
    /// `friends`, for `expiresIn` seconds (the server's default: 2 hours). Turning it on again
    /// replaces the audience and expiry.
    public func activityOn(
        _ activity: String, friends: [String]? = nil, expiresIn seconds: Int? = nil,
        completion: @escaping (Result<ActivityStatus, HuddleClientError>) -> Void
    ) {
        request(.activityOn(activity: activity, friends: friends, expiresIn: seconds.map(Int64.init)), reading: ActivityStatus.init(json:), completion: completion)
    }

    /// `activity_off`: the caller's matches on it end.
    public func activityOff(_ activity: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.activityOff(activity: activity), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }

    /// `matches`: the caller's matches in force.
    public func matches(order: MatchOrder = .time, completion: @escaping (Result<[ActivityMatch], HuddleClientError>) -> Void) {
        request(.matches(byActivity: order == .activity), resendAfterReconnect: true, reading: ReplyResult.matches(in:),
                completion: completion)
    }
}

/// Every `result` a successful reply carries (protocol.md, "Ops"), typed: what the server
/// encodes (`json`) and what a client reads back with the type its op expects
/// (`PostLike(result:)`, …). A result does not name its op, so `decodings` tries every shape
/// (for checking a message against the model, as the protocol document's test does).
public indirect enum ReplyResult: Sendable, Equatable {
    /// `{}`: a request that changed something and has nothing more to say.
    case empty
    /// `ping`: the server's clock.
    case time(Int64)
    case session(AccountSession)
    /// `logout`: how many sessions were revoked.
    case revoked(Int)
    case subscribed(Subscription)
    case published(PublishResult)
    case history(HistoryPage)
    case presence(ChannelPresence)
    /// The HTTP API's `disconnect`: how many connections were closed.
    case closed(Int)
    /// `user_search`.
    case users(UserSearchResult)
    case friendRequest(FriendRequestOutcome)
    case friendRequests(FriendRequestList)
    case friends([FriendStatus])
    case readMarker(ReadMarker)
    case unread(UnreadSummary)
    case post(FeedPost)
    case feed(FeedPage)
    case like(PostLike)
    case comment(PostComment)
    case comments(CommentPage)
    case activities(ActivityList)
    case activityStatus(ActivityStatus)
    case matches([ActivityMatch])
    case place(Place)
    case places([Place])
    case location(PlaceDecision)
    case whereabouts(Whereabouts)
    case memory(Memory)
    case memories([Memory])
    case memoryPoint(memory: UInt64, MemoryPoint)
    /// `identities`, `identity_link`, `identity_unlink`: the account's identities, oldest first.
    case identities([LinkedIdentity])
    // Profiles and sessions.
    /// `profile`, `profile_set`.
    case profile(OwnProfile)
    case sessions(SessionList)
    // Reports.
    /// `report`: the new report's id.
    case reportFiled(UInt64)
    /// `GET /api/v1/reports`.
    case reports(ReportPage)
    /// `account_export`: `{"export": {…}}`.
    case export(JSONValue)
    /// A keyed write's first result sent again to its retry (protocol.md, "Retries"), marked
    /// `"duplicate": true`.
    case duplicate(ReplyResult)

    public var json: JSONValue {
        switch self {
        case .empty: return .object([])
        case .time(let time): return .object([("time", .integer(time))])
        case .session(let session): return session.result
        case .revoked(let count): return .object([("revoked", .integer(count))])
        case .subscribed(let subscription): return subscription.result
        case .published(let published): return published.result
        case .history(let page): return page.result
        case .presence(let presence): return presence.result
        case .closed(let count): return .object([("closed", .integer(count))])
        case .users(let found): return found.result
        case .friendRequest(let outcome): return outcome.result
        case .friendRequests(let list): return list.result
        case .friends(let friends): return .object([("friends", .array(friends.map(\.json)))])
        case .readMarker(let marker): return marker.result
        case .unread(let summary): return summary.result
        case .post(let post): return .object([("post", post.json)])
        case .feed(let page): return page.result
        case .like(let like): return like.result
        case .comment(let comment): return comment.result
        case .comments(let page): return page.result
        case .activities(let list): return list.result
        case .activityStatus(let status): return status.json
        case .matches(let matches): return .object([("matches", .array(matches.map(\.json)))])
        case .place(let place): return .object([("place", place.json)])
        case .places(let places): return .object([("places", .array(places.map(\.json)))])
        case .location(let decision): return decision.result
        case .whereabouts(let whereabouts): return whereabouts.result
        case .memory(let memory): return .object([("memory", memory.json)])
        case .memories(let memories): return .object([("memories", .array(memories.map(\.json)))])
        case .memoryPoint(let memory, let point): return .object([("memory", .integer(memory)), ("point", point.json)])
        case .identities(let identities): return .object([("identities", .array(identities.map(\.json)))])
        case .profile(let profile): return profile.result
        case .sessions(let list): return list.result
        // Reports.
        case .reportFiled(let id): return .object([("report", .integer(id))])
        case .export(let data): return .object([("export", data)])
        case .reports(let page): return page.result
        case .duplicate(let first):
            guard case .object(let members) = first.json else { return first.json }
            return .object(members + [("duplicate", .bool(true))])
        }
    }

    /// Every reading of `result` the model has (a `subscribe` result read for the channel it
    /// names). Most results fit one shape; `{}` fits `empty` only.
    public static func decodings(of result: JSONValue) -> [ReplyResult] {
        typealias Reading = (JSONValue) throws -> ReplyResult
        let readings: [Reading] = [
            { try empty(in: $0); return .empty },
            { .time(try time(in: $0)) },
            { .session(try AccountSession(result: $0)) },
            { .revoked(try revoked(in: $0)) },
            { .subscribed(try Subscription(result: $0, channel: try $0.requiredString("channel"))) },
            { .published(try PublishResult(result: $0)) },
            { .history(try HistoryPage(result: $0)) },
            { .presence(try ChannelPresence(result: $0)) },
            { .closed(try closed(in: $0)) },
            { .users(try UserSearchResult(result: $0)) },
            { .friendRequest(try FriendRequestOutcome(result: $0)) },
            { .friendRequests(try FriendRequestList(result: $0)) },
            { .friends(try friends(in: $0)) },
            { .readMarker(try ReadMarker(result: $0)) },
            { .unread(try UnreadSummary(result: $0)) },
            { .post(try post(in: $0)) },
            { .feed(try FeedPage(result: $0)) },
            { .like(try PostLike(result: $0)) },
            { .comment(try PostComment(result: $0)) },
            { .comments(try CommentPage(result: $0)) },
            { .activities(try ActivityList(result: $0)) },
            { .activityStatus(try ActivityStatus(json: $0)) },
            { .matches(try matches(in: $0)) },
            { .place(try place(in: $0)) },
            { .places(try places(in: $0)) },
            { .location(try PlaceDecision(result: $0)) },
            { .whereabouts(try Whereabouts(result: $0)) },
            { .memory(try memory(in: $0)) },
            { .memories(try memories(in: $0)) },
            { let (memory, point) = try memoryPoint(in: $0); return .memoryPoint(memory: memory, point) },
            { .identities(try LinkedIdentity.list(in: $0)) },
            { .profile(try OwnProfile(result: $0)) },
            { .sessions(try SessionList(result: $0)) },
            // Reports.
            { .reportFiled(try $0.requiredUInt64("report")) },
            { .reports(try ReportPage(result: $0)) },
            { guard case .object(let members) = $0, members.count == 1, let data = $0["export"] else { throw WireFormatError("not an export") }
                return .export(data) },
        ]
        var found: [ReplyResult] = []
        for reading in readings {
            if let result = try? reading(result) { found.append(result) }
        }
        if result["duplicate"]?.boolValue == true, case .object(let members) = result {
            let first = JSONValue.object(members.filter { $0.0 != "duplicate" })
            found += decodings(of: first).map { ReplyResult.duplicate($0) }
        }
        return found
    }
}

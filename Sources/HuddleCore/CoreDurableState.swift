/// Everything the core must not lose: accounts, sessions, channels and friendships. The log's commands
/// rebuild it; a snapshot is this value encoded.
///
/// It is a value of copy-on-write collections, so taking it (`HuddleCore.durableState`) is
/// O(1) and a snapshot can be encoded on another thread while the core goes on. Encoding
/// sorts every collection, so equal states encode to equal bytes.
/// Ephemeral state — connections, subscriptions, presence, login throttling, logins being
/// verified — is not here: it dies with the process.
public struct CoreDurableState: Sendable, Equatable, Codable {
    public internal(set) var accounts = Accounts()
    public internal(set) var sessions = Sessions()
    public internal(set) var channels = Channels()
    public internal(set) var friendships = Friendships()
    public internal(set) var readMarkers = ReadMarkers()
    // Feed.
    public internal(set) var feed = Feed()
    // Activities.
    public internal(set) var activityStatuses = ActivityStatuses()
    public internal(set) var activityMatches = ActivityMatches()
    // Places.
    public internal(set) var places = Places()
    // Memories.
    public internal(set) var memories = Memories()
    public internal(set) var photos = PhotoOwnership()
    // Keyed writes.
    public internal(set) var keptResults = KeptResults()

    public init() {}
}

extension CoreDurableState {
    private enum CodingKeys: String, CodingKey {
        case accounts
        case sessions
        case channels
        case friendships
        case readMarkers
        // Feed.
        case feed
        // Activities.
        case activityStatuses
        case activityMatches
        // Places.
        case places
        // Memories.
        case memories
        case photos
        // Keyed writes.
        case keptResults
    }

    /// Parts added after the first release are optional when decoding, so a snapshot written
    /// before them still loads (as "none yet").
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accounts = try container.decode(Accounts.self, forKey: .accounts)
        sessions = try container.decode(Sessions.self, forKey: .sessions)
        channels = try container.decode(Channels.self, forKey: .channels)
        friendships = try container.decodeIfPresent(Friendships.self, forKey: .friendships) ?? Friendships()
        readMarkers = try container.decodeIfPresent(ReadMarkers.self, forKey: .readMarkers) ?? ReadMarkers()
        // Feed.
        feed = try container.decodeIfPresent(Feed.self, forKey: .feed) ?? Feed()
        // Activities.
        activityStatuses = try container.decodeIfPresent(ActivityStatuses.self, forKey: .activityStatuses) ?? ActivityStatuses()
        activityMatches = try container.decodeIfPresent(ActivityMatches.self, forKey: .activityMatches) ?? ActivityMatches()
        // Places.
        places = try container.decodeIfPresent(Places.self, forKey: .places) ?? Places()
        // Memories.
        memories = try container.decodeIfPresent(Memories.self, forKey: .memories) ?? Memories()
        photos = try container.decodeIfPresent(PhotoOwnership.self, forKey: .photos) ?? PhotoOwnership()
        // Keyed writes.
        keptResults = try container.decodeIfPresent(KeptResults.self, forKey: .keptResults) ?? KeptResults()
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accounts, forKey: .accounts)
        try container.encode(sessions, forKey: .sessions)
        try container.encode(channels, forKey: .channels)
        try container.encode(friendships, forKey: .friendships)
        try container.encode(readMarkers, forKey: .readMarkers)
        // Feed.
        try container.encode(feed, forKey: .feed)
        // Activities.
        try container.encode(activityStatuses, forKey: .activityStatuses)
        try container.encode(activityMatches, forKey: .activityMatches)
        // Places.
        try container.encode(places, forKey: .places)
        // Memories.
        try container.encode(memories, forKey: .memories)
        try container.encode(photos, forKey: .photos)
        // Keyed writes.
        try container.encode(keptResults, forKey: .keptResults)
    }
}

import HuddleProtocol

/// Everything the core must not lose: accounts, sessions, channels and friendships. The log's commands
/// rebuild it; a snapshot is this value encoded.
///
/// It is a value of copy-on-write collections, so taking it (`HuddleCore.durableState`) is
/// O(1) and a snapshot can be encoded on another thread while the core goes on. Encoding
/// (`CoreDurableState+Persisted`… `PersistedRecord`) sorts every collection, so equal states
/// encode to equal bytes.
/// Ephemeral state — connections, subscriptions, presence, login throttling, logins being
/// verified — is not here: it dies with the process.
public struct CoreDurableState: Sendable, Equatable {
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
    // Identities.
    public internal(set) var identities = Identities()
    // Profiles.
    public internal(set) var profiles = Profiles()
    // Passwords.
    public internal(set) var passwordResets = PasswordResets()
    // Blocking.
    public internal(set) var blocks = Blocks()
    // Moderation.
    public internal(set) var suspensions = Suspensions()
    public internal(set) var reports = Reports()
    // Moderation and deletion.
    public internal(set) var quarantinedUsernames = UsernameQuarantine()
    public internal(set) var erasures = PendingErasures()

    public init() {}
}

/// An object of the parts. Parts added after the first release are optional when reading, so a
/// snapshot written before them still loads (as "none yet").
extension CoreDurableState: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("accounts", accounts.persisted),
            ("sessions", sessions.persisted),
            ("channels", channels.persisted),
            ("friendships", friendships.persisted),
            ("readMarkers", readMarkers.persisted),
            // Feed.
            ("feed", feed.persisted),
            // Activities.
            ("activityStatuses", activityStatuses.persisted),
            ("activityMatches", activityMatches.persisted),
            // Places.
            ("places", places.persisted),
            // Memories.
            ("memories", memories.persisted),
            ("photos", photos.persisted),
            // Keyed writes.
            ("keptResults", keptResults.persisted),
            // Identities: left out while there are none, so a state without any encodes as before.
            ("identities", identities.isEmpty ? nil : identities.persisted),
            // Profiles: written only once someone has one, so a state without any encodes as before.
            ("profiles", profiles.count == 0 ? nil : profiles.persisted),
            // Passwords, likewise.
            ("passwordResets", passwordResets.count == 0 ? nil : passwordResets.persisted),
            // Blocking and moderation: left out while empty, so a state without them encodes
            // as it did before they existed (the format 1 golden snapshot).
            ("blocks", blocks.blockCount == 0 ? nil : blocks.persisted),
            ("suspensions", suspensions.count == 0 ? nil : suspensions.persisted),
            ("reports", reports.lastID == 0 ? nil : reports.persisted),
            // Moderation and deletion: written only once a name is held, so a state without
            // deletions encodes as before.
            ("quarantinedUsernames", quarantinedUsernames.count == 0 ? nil : quarantinedUsernames.persisted),
            // Deleted users whose channels are still being erased: written only while one is.
            ("erasures", erasures.isEmpty ? nil : erasures.persisted),
        ])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "CoreDurableState")
        accounts = try f("accounts")
        sessions = try f("sessions")
        channels = try f("channels")
        friendships = try f.optional("friendships") ?? Friendships()
        readMarkers = try f.optional("readMarkers") ?? ReadMarkers()
        // Feed.
        feed = try f.optional("feed") ?? Feed()
        // Activities.
        activityStatuses = try f.optional("activityStatuses") ?? ActivityStatuses()
        activityMatches = try f.optional("activityMatches") ?? ActivityMatches()
        // Places.
        places = try f.optional("places") ?? Places()
        // Memories.
        memories = try f.optional("memories") ?? Memories()
        photos = try f.optional("photos") ?? PhotoOwnership()
        // Keyed writes.
        keptResults = try f.optional("keptResults") ?? KeptResults()
        // Identities.
        identities = try f.optional("identities") ?? Identities()
        // Profiles.
        profiles = try f.optional("profiles") ?? Profiles()
        // Passwords.
        passwordResets = try f.optional("passwordResets") ?? PasswordResets()
        // Blocking.
        blocks = try f.optional("blocks") ?? Blocks()
        // Moderation.
        suspensions = try f.optional("suspensions") ?? Suspensions()
        reports = try f.optional("reports") ?? Reports()
        // Moderation and deletion.
        quarantinedUsernames = try f.optional("quarantinedUsernames") ?? UsernameQuarantine()
        erasures = try f.optional("erasures") ?? PendingErasures()
    }
}

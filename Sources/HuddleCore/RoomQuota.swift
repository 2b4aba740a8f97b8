/// protocol.md "Limits", rooms per user: `room:` channels are created by publishing to them and
/// kept (with up to a day of history) after, so each new room and each byte stored in one is
/// memory and snapshot space the publisher holds. Two budgets bound it per user, whatever the
/// number of connections:
/// - rooms created: `roomCreationBurst` at once, refilled at `roomsCreatedPerHour`;
/// - bytes published to rooms (`data` as stored): `roomBytesBurst` at once, refilled at
///   `roomBytesPerDay`. A room's publications are dropped once a day old (on the next
///   publication, or by `tick`: `HistoryExpiries`), so a user keeps at most a burst plus a
///   day's refill stored in rooms.
/// Existing rooms are not touched: a refused user can still read them, and publish into them
/// while the byte budget allows.
///
/// Ephemeral, like `LoginThrottle`: none of it is logged, a restart forgets it.
struct RoomQuota: Sendable {
    private let configuration: CoreConfiguration
    private var created: [Username: TokenBucket] = [:]
    private var stored: [Username: TokenBucket] = [:]

    init(configuration: CoreConfiguration) {
        self.configuration = configuration
    }

    /// nil if `user` may store `bytes` in a room (a new one if `creating`), and counts it;
    /// else the refusal, with nothing counted.
    ///
    /// Publishing to a room that exists (every write but a room's first) leaves the rooms budget
    /// alone: a bucket not yet made is full, as one made now would be.
    mutating func admit(_ user: Username, bytes: Int, creating: Bool, at time: Int64) -> CoreError? {
        var roomsBucket: TokenBucket?
        if creating {
            var bucket = created[user] ?? TokenBucket(
                rate: configuration.roomsCreatedPerHour / 3600, burst: configuration.roomCreationBurst, now: time)
            if let wait = bucket.take(now: time) {
                return CoreError(
                    .tooManyRooms,
                    "at most \(Int(configuration.roomCreationBurst)) new rooms at once and \(Int(configuration.roomsCreatedPerHour)) an hour; publish to a room you have",
                    retryAfterMilliseconds: wait)
            }
            roomsBucket = bucket
        }
        // One lookup for a user seen before (the common case), taken from and stored in place.
        let index = stored.index(forKey: user)
        var bytesBucket = index.map { stored.values[$0] } ?? TokenBucket(
            rate: Double(configuration.roomBytesPerDay) / 86_400, burst: Double(configuration.roomBytesBurst), now: time)
        if let wait = bytesBucket.take(Double(bytes), now: time) {
            return CoreError(
                .storageQuota, "at most \(configuration.roomBytesBurst) bytes published to rooms at once and \(configuration.roomBytesPerDay) a day",
                retryAfterMilliseconds: wait)
        }
        if let index {
            stored.values[index] = bytesBucket
        } else {
            stored[user] = bytesBucket
        }
        if let roomsBucket { created[user] = roomsBucket }
        return nil
    }

    /// Forgets full buckets, so idle users take no memory.
    mutating func purge(at time: Int64) {
        created = created.filter { !$0.value.isFull(now: time) }
        stored = stored.filter { !$0.value.isFull(now: time) }
    }
}

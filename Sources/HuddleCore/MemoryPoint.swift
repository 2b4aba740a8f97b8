/// One moment of a memory: when, where, a note and the photos taken (by hash). Its `id` is
/// unique within its memory and never reused there.
public struct MemoryPoint: Sendable, Equatable {
    public let id: UInt64
    /// Milliseconds since the Unix epoch: the moment the point is about.
    public var time: Int64
    public var position: MemoryPosition?
    public var placeName: String
    public var note: String
    /// SHA-256 hashes (lowercase hex) of photos the owner uploaded, in the user's order.
    public var photos: [String]

    public init(id: UInt64, time: Int64, position: MemoryPosition?, placeName: String, note: String, photos: [String]) {
        self.id = id
        self.time = time
        self.position = position
        self.placeName = placeName
        self.note = note
        self.photos = photos
    }

    /// The order of a memory's points: by time, then by id (the order they were added).
    static func precedes(_ lhs: MemoryPoint, _ rhs: MemoryPoint) -> Bool {
        (lhs.time, lhs.id) < (rhs.time, rhs.id)
    }
}

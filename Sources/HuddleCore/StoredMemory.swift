import HuddleProtocol

/// A memory as the core keeps it (protocol.md, "Memories and photos"): a titled day at a place,
/// holding points. Private to its owner; `shown` is what the owner is told of it. `id` is unique across all users, so that naming someone else's
/// memory is told apart from naming one's own, and is never reused.
public struct StoredMemory: Sendable, Equatable {
    public let id: UInt64
    public let owner: Username
    public var title: String
    /// A calendar day, `YYYY-MM-DD` (see `MemoryRules.dateRefusal`).
    public var date: String
    public var placeName: String
    public var position: MemoryPosition?
    public let createdAt: Int64
    /// The time of the last change to the memory or any of its points: what a device that was
    /// offline compares to know which memories to read again.
    public var updatedAt: Int64
    /// Sorted by `MemoryPoint.precedes`.
    public internal(set) var points: [MemoryPoint] = []
    /// The id the next point gets.
    public internal(set) var nextPointID: UInt64 = 1

    public init(
        id: UInt64, owner: Username, title: String, date: String, placeName: String, position: MemoryPosition?, createdAt: Int64
    ) {
        self.id = id
        self.owner = owner
        self.title = title
        self.date = date
        self.placeName = placeName
        self.position = position
        self.createdAt = createdAt
        updatedAt = createdAt
    }

    public func point(_ id: UInt64) -> MemoryPoint? {
        points.first { $0.id == id }
    }

    /// Adds the point, or replaces the one with its id, keeping the order.
    mutating func put(_ point: MemoryPoint) {
        points.removeAll { $0.id == point.id }
        let index = points.firstIndex { MemoryPoint.precedes(point, $0) } ?? points.endIndex
        points.insert(point, at: index)
        nextPointID = max(nextPointID, point.id + 1)
    }

    mutating func removePoint(_ id: UInt64) {
        points.removeAll { $0.id == id }
    }

    /// The order of the `memories` list: newest date first, then the most recently created.
    static func newestFirst(_ lhs: StoredMemory, _ rhs: StoredMemory) -> Bool {
        lhs.date != rhs.date ? lhs.date > rhs.date : lhs.id > rhs.id
    }

    /// Whether a decoded memory is one `apply` could have built: points in order, ids unique
    /// and below `nextPointID`.
    var isConsistent: Bool {
        zip(points, points.dropFirst()).allSatisfy { MemoryPoint.precedes($0, $1) }
            && Set(points.map(\.id)).count == points.count
            && points.allSatisfy { $0.id < nextPointID }
    }

    /// The memory as its owner is shown it: with its points, or without them and their count
    /// (`pointCount` for a result kept without its points).
    public func shown(includingPoints: Bool = false, pointCount: Int? = nil) -> Memory {
        Memory(
            id: id, title: title, date: date, placeName: placeName, position: position, createdAt: createdAt, updatedAt: updatedAt,
            pointCount: pointCount ?? points.count, points: includingPoints ? points : nil)
    }
}

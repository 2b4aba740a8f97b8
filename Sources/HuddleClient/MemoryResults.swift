import HuddleProtocol

/// A position on a memory or a point (protocol.md, "Memories and photos"), in degrees (WGS 84).
public struct MemoryPosition: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    var json: JSONValue { .object([("lat", .double(latitude)), ("lon", .double(longitude))]) }

    /// `object[key]`: a position, or nil when it is null or absent.
    static func decode(_ object: JSONValue, _ key: String) throws(HuddleClientError) -> MemoryPosition? {
        guard let value = object[key], value != .null else { return nil }
        guard let latitude = value["lat"]?.doubleValue, let longitude = value["lon"]?.doubleValue else {
            throw .invalidReply("`\(key)` is not an object with numbers `lat` and `lon`")
        }
        return MemoryPosition(latitude: latitude, longitude: longitude)
    }
}

/// What `memory_update` and `point_update` do with a position: leave it, replace it, or
/// remove it (sent as `null`).
public enum MemoryPositionChange: Sendable, Equatable {
    case keep
    case set(MemoryPosition)
    case remove
}

/// One of the caller's memories: a day remembered, with points along it. Only its owner ever
/// sees it.
public struct Memory: Sendable, Equatable {
    /// Unique across the server, never reused.
    public var id: UInt64
    public var title: String
    /// The calendar day, `YYYY-MM-DD`: a day, not an instant, so no time zone moves it.
    public var date: String
    /// `""` when none.
    public var placeName: String
    public var position: MemoryPosition?
    /// Server time, ms since the Unix epoch. `updatedAt` moves with every change to the memory
    /// or its points: a device that was away fetches a memory whose `updatedAt` is newer than its copy.
    public var createdAt: Int64
    public var updatedAt: Int64
    public var pointCount: Int
    /// By time, then id. Nil where the server sends the memory without them (`memories`,
    /// `memory_update`, the `memory_changed` event); `memory` and `memory_create` include them.
    public var points: [MemoryPoint]?

    public init(
        id: UInt64, title: String, date: String, placeName: String = "", position: MemoryPosition? = nil, createdAt: Int64, updatedAt: Int64,
        pointCount: Int, points: [MemoryPoint]? = nil
    ) {
        self.id = id
        self.title = title
        self.date = date
        self.placeName = placeName
        self.position = position
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.pointCount = pointCount
        self.points = points
    }

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> Memory {
        var points: [MemoryPoint]?
        if let value = object["points"], value != .null {
            points = []
            for point in try object.requiredArray("points") { points?.append(try MemoryPoint.decode(point)) }
        }
        return Memory(
            id: try object.requiredUInt64("id"), title: try object.requiredString("title"), date: try object.requiredString("date"),
            placeName: try object.requiredString("place_name"), position: try MemoryPosition.decode(object, "position"),
            createdAt: try object.requiredInt64("created_at"), updatedAt: try object.requiredInt64("updated_at"),
            pointCount: try object.requiredInt("point_count"), points: points)
    }
}

/// A point of a memory: a moment, where it was, a note, photos.
public struct MemoryPoint: Sendable, Equatable {
    /// Unique within its memory, never reused there.
    public var id: UInt64
    /// Ms since the Unix epoch.
    public var time: Int64
    public var position: MemoryPosition?
    public var placeName: String
    public var note: String
    /// Photo names (the SHA-256 of their bytes, 64 lowercase hex digits), of photos the owner
    /// uploaded over HTTP (protocol.md, "Photos (HTTP)").
    public var photos: [String]

    public init(id: UInt64, time: Int64, position: MemoryPosition? = nil, placeName: String = "", note: String = "", photos: [String] = []) {
        self.id = id
        self.time = time
        self.position = position
        self.placeName = placeName
        self.note = note
        self.photos = photos
    }

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> MemoryPoint {
        MemoryPoint(
            id: try object.requiredUInt64("id"), time: try object.requiredInt64("time"), position: try MemoryPosition.decode(object, "position"),
            placeName: try object.requiredString("place_name"), note: try object.requiredString("note"), photos: try object.requiredStrings("photos"))
    }
}

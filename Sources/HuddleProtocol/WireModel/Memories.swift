/// Where a memory or a memory point was (protocol.md, "Memories and photos"): degrees of
/// latitude (−90…90) and longitude (−180…180), WGS 84 as phones report them. Kept as the client
/// sent it (no rounding), so a client reads back exactly the number it wrote.
public struct MemoryPosition: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// `{"lat": …, "lon": …}`: Swift writes a `Double` as the shortest decimal that reads back
    /// as the same value (`38.7223`, `1e-05`).
    public var json: JSONValue { .object([("lat", .double(latitude)), ("lon", .double(longitude))]) }

    /// `object[key]`: a position, or nil when it is null or absent.
    public static func optional(in object: JSONValue, _ key: String) throws(WireFormatError) -> MemoryPosition? {
        guard let value = object[key], value != .null else { return nil }
        guard let latitude = value["lat"]?.doubleValue, let longitude = value["lon"]?.doubleValue else {
            throw WireFormatError("`\(key)` is not an object with numbers `lat` and `lon`")
        }
        return MemoryPosition(latitude: latitude, longitude: longitude)
    }
}

/// One moment of a memory: when, where, a note and the photos taken (by hash). Its `id` is
/// unique within its memory and never reused there.
///
public struct MemoryPoint: Sendable, Equatable {
    public let id: UInt64
    /// Milliseconds since the Unix epoch: the moment the point is about.
    public var time: Int64
    public var position: MemoryPosition?
    public var placeName: String
    public var note: String
    /// SHA-256 hashes (64 lowercase hex digits) of photos the owner uploaded, in the user's order.
    public var photos: [String]

    public init(id: UInt64, time: Int64, position: MemoryPosition? = nil, placeName: String = "", note: String = "", photos: [String] = []) {
        self.id = id
        self.time = time
        self.position = position
        self.placeName = placeName
        self.note = note
        self.photos = photos
    }

    /// `{"id","time","position","place_name","note","photos"}`
    public var json: JSONValue {
        .object([
            ("id", .integer(id)), ("time", .integer(time)), ("position", position?.json ?? .null), ("place_name", .string(placeName)),
            ("note", .string(note)), ("photos", .strings(photos)),
        ])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            id: try json.requiredUInt64("id"), time: try json.requiredInt64("time"), position: try MemoryPosition.optional(in: json, "position"),
            placeName: try json.requiredString("place_name"), note: try json.requiredString("note"), photos: try json.requiredStrings("photos"))
    }
}

/// A memory as its owner is shown it: a day remembered, with points along it.
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

    /// `{"id","title","date","place_name","position","created_at","updated_at","point_count"[,"points"]}`
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .integer(id)), ("title", .string(title)), ("date", .string(date)), ("place_name", .string(placeName)),
            ("position", position?.json ?? .null), ("created_at", .integer(createdAt)), ("updated_at", .integer(updatedAt)),
            ("point_count", .integer(pointCount)),
        ]
        if let points { members.append(("points", .array(points.map(\.json)))) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireFormatError) {
        var points: [MemoryPoint]?
        if let value = json["points"], value != .null { points = try json.requiredList("points", MemoryPoint.init(json:)) }
        self.init(
            id: try json.requiredUInt64("id"), title: try json.requiredString("title"), date: try json.requiredString("date"),
            placeName: try json.requiredString("place_name"), position: try MemoryPosition.optional(in: json, "position"),
            createdAt: try json.requiredInt64("created_at"), updatedAt: try json.requiredInt64("updated_at"),
            pointCount: try json.requiredInt("point_count"), points: points)
    }
}

/// A `position` argument of the memory ops: `{"lat": number, "lon": number}`, `null`, or not
/// there. The two differ only for updates, where `null` takes the position away and absence
/// leaves it (as JSON Merge Patch, RFC 7396, reads an object).
public enum MemoryPositionArgument: Sendable, Equatable {
    case absent
    case null
    /// The numbers as written, parsed; their range is the core's to judge.
    case coordinates(latitude: Double, longitude: Double)
}

/// The fields of `memory_create` and `memory_update`, checked for type only (the core owns the
/// value rules). Nil: not given.
public struct MemoryArguments: Sendable, Equatable {
    public var title: String?
    public var date: String?
    public var placeName: String?
    public var position: MemoryPositionArgument

    public init(title: String? = nil, date: String? = nil, placeName: String? = nil, position: MemoryPositionArgument = .absent) {
        self.title = title
        self.date = date
        self.placeName = placeName
        self.position = position
    }
}

/// The fields of `point_add` and `point_update`, checked for type only. Nil: not given.
public struct MemoryPointArguments: Sendable, Equatable {
    public var time: Int64?
    public var position: MemoryPositionArgument
    public var placeName: String?
    public var note: String?
    public var photos: [String]?

    public init(
        time: Int64? = nil, position: MemoryPositionArgument = .absent, placeName: String? = nil, note: String? = nil, photos: [String]? = nil
    ) {
        self.time = time
        self.position = position
        self.placeName = placeName
        self.note = note
        self.photos = photos
    }
}

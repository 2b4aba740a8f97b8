/// The fields of a memory as a request gives them: what `memory_create` sets (title and date
/// required) or what `memory_update` changes (nil: leave as it is).
public struct MemoryFields: Sendable, Equatable {
    public var title: String?
    public var date: String?
    public var placeName: String?
    public var position: MemoryPositionEdit?

    public init(title: String? = nil, date: String? = nil, placeName: String? = nil, position: MemoryPositionEdit? = nil) {
        self.title = title
        self.date = date
        self.placeName = placeName
        self.position = position
    }
}

/// The fields of a memory point as a request gives them: what `point_add` sets (time
/// required) or what `point_update` changes (nil: leave as it is; `photos` replaces the list).
public struct MemoryPointFields: Sendable, Equatable {
    public var time: Int64?
    public var position: MemoryPositionEdit?
    public var placeName: String?
    public var note: String?
    public var photos: [String]?

    public init(time: Int64? = nil, position: MemoryPositionEdit? = nil, placeName: String? = nil, note: String? = nil, photos: [String]? = nil) {
        self.time = time
        self.position = position
        self.placeName = placeName
        self.note = note
        self.photos = photos
    }
}

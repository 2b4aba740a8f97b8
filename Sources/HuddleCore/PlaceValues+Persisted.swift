import HuddleProtocol

// Places, locations and memories, field by field.

extension Place: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("id", id.persisted), ("label", label.persisted), ("latitude", latitude.persisted), ("longitude", longitude.persisted),
            ("radius", radius.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Place")
        self.init(id: try f("id"), label: try f("label"), latitude: try f("latitude"), longitude: try f("longitude"), radius: try f("radius"))
    }
}

extension DecidedPlace: PersistedValue {
    var persisted: JSONValue { .record([("label", label.persisted), ("placeID", placeID?.persisted), ("since", since?.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Whereabouts")
        self.init(label: try f("label"), placeID: try f.optional("placeID"), since: try f.optional("since"))
    }
}

extension LocationFix: PersistedValue {
    var persisted: JSONValue {
        .record([("latitude", latitude.persisted), ("longitude", longitude.persisted), ("accuracy", accuracy.persisted), ("time", time.persisted)])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "LocationFix")
        self.init(latitude: try f("latitude"), longitude: try f("longitude"), accuracy: try f("accuracy"), time: try f("time"))
    }
}

extension LocationState.Current: PersistedValue {
    var persisted: JSONValue {
        switch self {
        case .unknown: .variant("unknown")
        case .traveling: .variant("traveling")
        case .place(let id): .variant("place", [("id", id.persisted)])
        }
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "LocationState.Current")
        switch variant.name {
        case "unknown": self = .unknown
        case "traveling": self = .traveling
        case "place": self = .place(id: try variant.fields("id"))
        default: throw variant.unknown()
        }
    }
}

extension LocationState: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("current", current.persisted), ("since", since?.persisted), ("lastObservationTime", lastObservationTime?.persisted),
            ("track", track.persisted), ("lastFastTime", lastFastTime?.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "LocationState")
        self.init(
            current: try f("current"), since: try f.optional("since"), lastObservationTime: try f.optional("lastObservationTime"), track: try f("track"),
            lastFastTime: try f.optional("lastFastTime"))
    }
}

extension MemoryPosition: PersistedValue {
    var persisted: JSONValue { .record([("latitude", latitude.persisted), ("longitude", longitude.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "MemoryPosition")
        self.init(latitude: try f("latitude"), longitude: try f("longitude"))
    }
}

extension MemoryPoint: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("id", id.persisted), ("time", time.persisted), ("position", position?.persisted), ("placeName", placeName.persisted),
            ("note", note.persisted), ("photos", photos.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "MemoryPoint")
        self.init(
            id: try f("id"), time: try f("time"), position: try f.optional("position"), placeName: try f("placeName"), note: try f("note"),
            photos: try f("photos"))
    }
}

/// Points as stored (`Memories` checks they are consistent), and the point counter, which may be
/// past the highest point left.
extension StoredMemory: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("id", id.persisted), ("owner", owner.persisted), ("title", title.persisted), ("date", date.persisted), ("placeName", placeName.persisted),
            ("position", position?.persisted), ("createdAt", createdAt.persisted), ("updatedAt", updatedAt.persisted), ("points", points.persisted),
            ("nextPointID", nextPointID.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Memory")
        self.init(
            id: try f("id"), owner: try f("owner"), title: try f("title"), date: try f("date"), placeName: try f("placeName"),
            position: try f.optional("position"), createdAt: try f("createdAt"))
        updatedAt = try f("updatedAt")
        points = try f("points")
        nextPointID = try f("nextPointID")
    }
}

import HuddleProtocol

/// One user's places and decided location (durable).
public struct UserPlaces: Sendable, Equatable {
    /// Sorted by id; at most `PlaceRules.maxPlacesPerUser`.
    public private(set) var places: [Place] = []
    /// The id the next new place gets: ids are never reused.
    public private(set) var nextID: UInt64 = 1
    public internal(set) var location = LocationState()

    public init() {}

    public func place(_ id: UInt64) -> Place? {
        places.first { $0.id == id }
    }

    /// Inserts or replaces (same id) the place.
    mutating func set(_ place: Place) {
        if let index = places.firstIndex(where: { $0.id == place.id }) {
            places[index] = place
        } else {
            places.append(place)
            places.sort { $0.id < $1.id }
        }
        nextID = max(nextID, place.id + 1)
    }

    mutating func remove(_ id: UInt64) {
        places.removeAll { $0.id == id }
    }
}

extension UserPlaces: Codable {
    private enum CodingKeys: String, CodingKey {
        case places, nextID, location
    }

    /// Refuses what `handle` never makes, so a damaged snapshot fails loudly instead of
    /// breaking the rules later: unsorted or repeated ids, an id the counter would hand out again.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        places = try container.decode([Place].self, forKey: .places)
        nextID = try container.decode(UInt64.self, forKey: .nextID)
        location = try container.decode(LocationState.self, forKey: .location)
        guard zip(places, places.dropFirst()).allSatisfy({ $0.id < $1.id }), places.allSatisfy({ $0.id < nextID }) else {
            throw DecodingError.dataCorruptedError(forKey: .places, in: container, debugDescription: "place ids unsorted, repeated or not below nextID")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(places, forKey: .places)
        try container.encode(nextID, forKey: .nextID)
        try container.encode(location, forKey: .location)
    }
}

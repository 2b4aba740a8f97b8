import HuddleProtocol

/// Every user's places and decided location (durable), by user.
///
/// Coded as a list sorted by user, so equal states encode to equal bytes.
public struct Places: Sendable, Equatable {
    private var byUser: [Username: UserPlaces] = [:]

    public init() {}

    public subscript(user: Username) -> UserPlaces? { byUser[user] }

    public var userCount: Int { byUser.count }

    mutating func set(_ place: Place, of user: Username) {
        byUser[user, default: UserPlaces()].set(place)
    }

    mutating func remove(_ placeID: UInt64, of user: Username) {
        byUser[user]?.remove(placeID)
    }

    mutating func setLocation(_ location: LocationState, of user: Username) {
        byUser[user, default: UserPlaces()].location = location
    }
}

extension Places: Codable {
    private struct Entry: Codable {
        var user: Username
        var places: UserPlaces
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            let entry = try container.decode(Entry.self)
            guard byUser.updateValue(entry.places, forKey: entry.user) == nil else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "places of \(entry.user) appear twice")
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for user in byUser.keys.sorted() {
            try container.encode(Entry(user: user, places: byUser[user]!))
        }
    }
}

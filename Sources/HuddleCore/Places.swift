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

    /// Account deletion: the user's places and decided location, with its track.
    mutating func erase(_ user: Username) {
        byUser[user] = nil
    }
}

/// `{user, places}` objects by user.
extension Places: PersistedValue {
    var persisted: JSONValue { .array(byUser.keys.sorted().map { .record([("user", $0.persisted), ("places", byUser[$0]!.persisted)]) }) }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "PlacesEntry") {
            let user: Username = try f("user")
            guard byUser.updateValue(try f("places"), forKey: user) == nil else { throw RecordDecodingError("places of \(user) appear twice") }
        }
    }
}

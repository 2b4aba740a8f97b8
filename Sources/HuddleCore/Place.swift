/// One of a user's places (protocol.md, "Places and location"): a circle on the Earth with a
/// label. Only its owner ever sees the coordinates; friends see the label.
public struct Place: Sendable, Equatable {
    /// Unique among the owner's places, from the owner's own counter (`UserPlaces.nextID`); never
    /// reused, so a stale `region` event cannot land on a newer place.
    public var id: UInt64
    public var label: String
    /// Degrees, −90…90.
    public var latitude: Double
    /// Degrees, −180…180.
    public var longitude: Double
    /// Metres, `PlaceRules.radii`.
    public var radius: Double

    public init(id: UInt64, label: String, latitude: Double, longitude: Double, radius: Double) {
        self.id = id
        self.label = label
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
    }

    /// Smaller radius first, then the older place: the order in which overlapping places win.
    static func narrowerFirst(_ first: Place, _ second: Place) -> Bool {
        first.radius != second.radius ? first.radius < second.radius : first.id < second.id
    }
}

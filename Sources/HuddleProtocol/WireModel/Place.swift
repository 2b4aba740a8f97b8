/// One of a user's places (protocol.md, "Places and location"): a circle on the Earth with a
/// label. Only its owner ever sees the coordinates; friends see the label.
///
public struct Place: Sendable, Equatable {
    /// Unique among the owner's places, from the owner's own counter; never reused, so a stale
    /// `region` event cannot land on a newer place.
    public var id: UInt64
    public var label: String
    /// Degrees, −90…90.
    public var latitude: Double
    /// Degrees, −180…180.
    public var longitude: Double
    /// Metres.
    public var radius: Double

    public init(id: UInt64, label: String, latitude: Double, longitude: Double, radius: Double) {
        self.id = id
        self.label = label
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
    }

    /// `{"id", "label", "lat", "lon", "radius"}`.
    public var json: JSONValue {
        .object([("id", .integer(id)), ("label", .string(label)), ("lat", .double(latitude)), ("lon", .double(longitude)), ("radius", .double(radius))])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            id: try json.requiredUInt64("id"), label: try json.requiredString("label"), latitude: try json.requiredDouble("lat"),
            longitude: try json.requiredDouble("lon"), radius: try json.requiredDouble("radius"))
    }
}

/// A raw position the owner's phone reported (`location_fix`). Kept only as the evidence the
/// location decision needs (`LocationState.track`); it never leaves the server.
public struct LocationFix: Sendable, Equatable {
    /// Degrees.
    public var latitude: Double
    public var longitude: Double
    /// Metres: the radius the phone believes the true position is within.
    public var accuracy: Double
    /// When the phone took it, milliseconds since the Unix epoch (the phone's clock).
    public var time: Int64

    public init(latitude: Double, longitude: Double, accuracy: Double, time: Int64) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.time = time
    }
}

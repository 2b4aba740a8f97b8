import HuddleProtocol

/// The rules of a position (protocol.md, "Memories and photos"): degrees of latitude (−90…90)
/// and longitude (−180…180).
extension MemoryPosition {
    static let latitudes: ClosedRange<Double> = -90...90
    static let longitudes: ClosedRange<Double> = -180...180

    /// Nil when both coordinates are in range; otherwise why not. NaN and infinities are out of
    /// every range (a JSON number like 1e400 arrives as infinity).
    var refusal: String? {
        guard Self.latitudes.contains(latitude) else { return "position.lat must be a number from -90 to 90" }
        guard Self.longitudes.contains(longitude) else { return "position.lon must be a number from -180 to 180" }
        return nil
    }

    /// −0 written as 0: the two are the same place, and one spelling keeps states comparable.
    var normalized: MemoryPosition {
        MemoryPosition(latitude: latitude == 0 ? 0 : latitude, longitude: longitude == 0 ? 0 : longitude)
    }
}

/// An edit of an optional position: take it away, or put this one.
public enum MemoryPositionEdit: Sendable, Equatable {
    case remove
    case set(MemoryPosition)
}

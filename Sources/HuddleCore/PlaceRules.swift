/// What a place and a location report must satisfy (protocol.md, "Places and location"). A
/// breach is `bad_request` naming the argument: these are argument ranges, as `limit`'s are.
enum PlaceRules {
    static let maxPlacesPerUser = 20
    /// In characters (Unicode scalars).
    static let labelLengths = 1...32
    /// Metres. Below 10 m no phone can tell inside from outside; above 50 km a place is a region.
    static let radii: ClosedRange<Double> = 10...50_000
    /// Metres. A phone that cannot place itself within 100 km has nothing to tell.
    static let accuracies: ClosedRange<Double> = 0...100_000
    static let latitudes: ClosedRange<Double> = -90...90
    static let longitudes: ClosedRange<Double> = -180...180
    /// How far ahead of the server's clock a report's `time` may be (phone clocks drift).
    static let maxClockAheadMilliseconds: Int64 = 5 * 60_000
    /// What friends see when the user is at no place or moving: a place may not pretend to be
    /// either (compared ignoring ASCII case).
    static let reservedLabels = [DecidedPlace.unknownLabel, DecidedPlace.travelingLabel]

    /// nil when the place may be stored; otherwise why not.
    static func placeRefusal(label: String, latitude: Double, longitude: Double, radius: Double) -> CoreError? {
        if let refusal = labelRefusal(label) { return refusal }
        if let refusal = positionRefusal(latitude: latitude, longitude: longitude) { return refusal }
        guard radii.contains(radius) else {
            return CoreError(.badRequest, "radius must be from 10 to 50000 metres")
        }
        return nil
    }

    /// nil when a fix may be judged; otherwise why not. Ranges exclude NaN and infinities.
    static func fixRefusal(latitude: Double, longitude: Double, accuracy: Double) -> CoreError? {
        if let refusal = positionRefusal(latitude: latitude, longitude: longitude) { return refusal }
        guard accuracies.contains(accuracy) else {
            return CoreError(.badRequest, "accuracy must be from 0 to 100000 metres")
        }
        return nil
    }

    /// nil when a report taken at `reported` is not too far in the future at `time`.
    static func timeRefusal(_ reported: Int64, at time: Int64) -> CoreError? {
        let (latest, overflow) = time.addingReportingOverflow(maxClockAheadMilliseconds)
        guard overflow || reported <= latest else {
            return CoreError(.badRequest, "time is more than 5 minutes ahead of the server's clock")
        }
        return nil
    }

    private static func positionRefusal(latitude: Double, longitude: Double) -> CoreError? {
        guard latitudes.contains(latitude) else { return CoreError(.badRequest, "lat must be from -90 to 90 degrees") }
        guard longitudes.contains(longitude) else { return CoreError(.badRequest, "lon must be from -180 to 180 degrees") }
        return nil
    }

    private static func labelRefusal(_ label: String) -> CoreError? {
        let scalars = label.unicodeScalars
        guard labelLengths.contains(scalars.count) else {
            return CoreError(.badRequest, "label must be 1 to 32 characters")
        }
        // Control characters would let a label break the lines of whoever displays it.
        guard !scalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            return CoreError(.badRequest, "label must not contain control characters")
        }
        let folded = String(decoding: label.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
        guard !reservedLabels.contains(folded) else {
            return CoreError(.badRequest, "label \"\(label)\" is reserved: it is what friends see at no place")
        }
        return nil
    }
}

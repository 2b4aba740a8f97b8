import Foundation

/// A walk as a phone reports it, made up deterministically: true positions in metres east and
/// north of an origin, each reported with an accuracy of 5–30 m and an error within 80 % of it
/// in a random direction (a GPS puts the true position inside its stated accuracy most of the
/// time).
struct SimulatedWalk {
    struct Fix {
        var latitude: Double
        var longitude: Double
        var accuracy: Double
        var time: Int

        var request: JSONObject { ["lat": latitude, "lon": longitude, "accuracy": accuracy, "time": time] }
    }

    static let originLatitude = 48.8566
    static let originLongitude = 2.3522
    static let metresPerRadian = 6_371_008.8

    private var state: UInt64

    init(seed: UInt64) { state = seed }

    static func latitude(north: Double) -> Double { originLatitude + north / metresPerRadian * 180 / .pi }

    static func longitude(east: Double) -> Double {
        originLongitude + east / (metresPerRadian * cos(originLatitude * .pi / 180)) * 180 / .pi
    }

    /// A noisy fix of the true position (east, north), taken at `time`.
    mutating func fix(east: Double, north: Double, time: Int) -> Fix {
        let accuracy = 5 + 25 * unit()
        let error = 0.8 * accuracy * unit()
        let direction = 2 * .pi * unit()
        return Fix(
            latitude: Self.latitude(north: north + error * sin(direction)), longitude: Self.longitude(east: east + error * cos(direction)),
            accuracy: accuracy, time: time)
    }

    /// SplitMix64, as a number in [0, 1).
    private mutating func unit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((mixed ^ (mixed >> 31)) >> 11) / Double(1 << 53)
    }
}

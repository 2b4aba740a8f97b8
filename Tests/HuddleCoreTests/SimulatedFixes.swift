import Foundation
@testable import HuddleCore
import HuddleProtocol

/// Phone fixes made up deterministically: true positions in metres east and north of an origin
/// in Paris, reported with an accuracy drawn from a range and an error within a fraction of that
/// accuracy, in a random direction — as a GPS reports (the true position is inside the stated
/// accuracy most of the time).
struct SimulatedFixes {
    static let originLatitude = 48.8566
    static let originLongitude = 2.3522
    static let metresPerRadian = GeoDistance.earthRadius

    var generator: SplitMix
    var accuracies: ClosedRange<Double> = 5...30
    var errorFraction = 0.8

    init(seed: UInt64) {
        generator = SplitMix(seed: seed)
    }

    static func latitude(north: Double) -> Double {
        originLatitude + north / metresPerRadian * 180 / .pi
    }

    static func longitude(east: Double) -> Double {
        originLongitude + east / (metresPerRadian * cos(originLatitude * .pi / 180)) * 180 / .pi
    }

    static func place(_ id: UInt64, _ label: String, east: Double = 0, north: Double = 0, radius: Double) -> Place {
        Place(id: id, label: label, latitude: latitude(north: north), longitude: longitude(east: east), radius: radius)
    }

    /// A fix exactly at the position, with the given accuracy.
    static func exact(east: Double, north: Double = 0, accuracy: Double, time: Int64) -> LocationFix {
        LocationFix(latitude: latitude(north: north), longitude: longitude(east: east), accuracy: accuracy, time: time)
    }

    /// A noisy fix of the true position.
    mutating func fix(east: Double, north: Double = 0, time: Int64) -> LocationFix {
        let accuracy = Double.random(in: accuracies, using: &generator)
        let error = Double.random(in: 0...(errorFraction * accuracy), using: &generator)
        let direction = Double.random(in: 0..<(2 * .pi), using: &generator)
        return Self.exact(east: east + error * cos(direction), north: north + error * sin(direction), accuracy: accuracy, time: time)
    }
}

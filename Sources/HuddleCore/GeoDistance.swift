import HuddleProtocol

import Glibc

/// Distances on the Earth for place decisions: the haversine formula on a sphere of the mean
/// Earth radius. Its error (up to about 0.5 % against the ellipsoid) is far below a phone's
/// accuracy and the smallest place (10 m), and it is well conditioned at short distances.
///
/// The only use of libm in the core. Replays never recompute it: the log carries the decided
/// state (`CoreCommand.updateLocation`), so a libm that rounds differently cannot change a replay.
enum GeoDistance {
    /// Metres (IUGG mean radius).
    static let earthRadius = 6_371_008.8

    /// The great-circle distance in metres between two positions in degrees.
    static func metres(_ fromLatitude: Double, _ fromLongitude: Double, _ toLatitude: Double, _ toLongitude: Double) -> Double {
        let radiansPerDegree = Double.pi / 180
        let phi1 = fromLatitude * radiansPerDegree
        let phi2 = toLatitude * radiansPerDegree
        let halfDeltaPhi = (toLatitude - fromLatitude) * radiansPerDegree / 2
        let halfDeltaLambda = (toLongitude - fromLongitude) * radiansPerDegree / 2
        let sinPhi = sin(halfDeltaPhi)
        let sinLambda = sin(halfDeltaLambda)
        let a = sinPhi * sinPhi + cos(phi1) * cos(phi2) * sinLambda * sinLambda
        // Rounding can push `a` a hair past 1 for antipodes; asin would return NaN.
        return 2 * earthRadius * asin(min(1, sqrt(a)))
    }

    static func metres(from fix: LocationFix, to place: Place) -> Double {
        metres(fix.latitude, fix.longitude, place.latitude, place.longitude)
    }

    static func metres(from first: LocationFix, to second: LocationFix) -> Double {
        metres(first.latitude, first.longitude, second.latitude, second.longitude)
    }
}

/// A whole trip as a phone reports it, built from `SimulatedWalk`'s noisy fixes.
extension SimulatedWalk {
    /// `dwell` fixes standing at the origin, a straight walk at `speed` m/s to the point `east`
    /// and `north` metres away, then `dwell` fixes standing there; one fix every `interval`
    /// milliseconds, the first at `start + interval`. The standing fixes are where the noise
    /// matters: they scatter around the edge of a place the phone is really in.
    mutating func commute(east: Double, north: Double, dwell: Int, start: Int, interval: Int = 15_000, speed: Double = 1.4) -> [Fix] {
        let distance = (east * east + north * north).squareRoot()
        let stride = speed * Double(interval) / 1000
        let steps = Int((distance / stride).rounded(.up))
        let progress = Array(repeating: 0.0, count: dwell)
            + (1...steps).map { min(1, Double($0) * stride / distance) }
            + Array(repeating: 1.0, count: dwell)
        var fixes: [Fix] = []
        for (index, part) in progress.enumerated() {
            fixes.append(fix(east: east * part, north: north * part, time: start + (index + 1) * interval))
        }
        return fixes
    }
}

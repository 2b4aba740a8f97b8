import HuddleProtocol

/// How the server turns a user's observations into the place friends see (protocol.md, "How
/// the place is decided"). Pure: the state after an observation depends only on the state
/// before, the user's places and the observation, so `handle` decides once and logs the result.
///
/// GPS fixes scatter by about their accuracy, so a user standing at the edge of a place would
/// flap in and out of it on every fix if inside meant "distance ≤ radius". Instead:
/// - a fix *enters* a place only when it is confidently inside: distance + accuracy/2 ≤ radius;
/// - a fix *leaves* the current place only when it is clearly outside, even allowing for its
///   error and a margin: distance − accuracy > radius + hysteresis, hysteresis = max(20 m, 10 % of
///   the radius);
/// - a fix coarser than max(radius, 200 m) can neither enter nor leave that place (cell-tower
///   fixes jump by kilometres);
/// - between the two a fix changes nothing, which is what keeps a noisy edge from flapping;
/// - a change needs two fixes in a row proposing it (the first fix ever, or the first after a
///   region `enter`, decides alone), so one stray fix moves nobody.
/// Among places a fix enters, the smallest wins (a room inside a campus); from the current
/// place the user moves only to a strictly smaller one it has not left.
///
/// `traveling` needs sustained speed: the last two intervals between fixes, and the span over
/// both, each at least `travelingSpeed` *after taking both fixes' accuracies off the distance*
/// — so noise within the stated accuracy can never look like movement, and one wild fix (out
/// and back) fails the span. While traveling, a place is entered only by a fix that ends a slow
/// interval (passing by is not arriving) and whose previous fix entered it too, and without a
/// place the user stays `traveling` until
/// `travelingSettleMilliseconds` pass with no fast interval (a red light is not a stop).
enum LocationDecision {
    /// Metres: below this no accuracy is too coarse to decide a place.
    static let decisiveAccuracyFloor = 200.0
    /// How much of a fix's accuracy must still fit inside a place to enter it.
    static let enterAccuracyWeight = 0.5
    static let minimumHysteresis = 20.0
    static let hysteresisFraction = 0.1
    /// Metres per second (9 km/h): faster than any walk, even after the accuracies are taken off.
    static let travelingSpeed = 2.5
    /// Intervals shorter than this tell nothing about speed.
    static let minimumIntervalMilliseconds: Int64 = 1_000
    static let travelingSettleMilliseconds: Int64 = 120_000
    /// Fixes kept as speed evidence: two intervals need three fixes, the newest being the one judged.
    static let trackLength = 2

    /// The state after `fix`, which is newer than every accepted observation. `places` are the
    /// user's; `time` is the server's (a decision's `since` is never later).
    static func state(after fix: LocationFix, from state: LocationState, places: [Place], at time: Int64) -> LocationState {
        let latestIsFast = state.track.last.map { isFast(from: $0, to: fix) } ?? false
        var sustained = false
        if latestIsFast, state.track.count >= 2 {
            let first = state.track[state.track.count - 2]
            sustained = isFast(from: first, to: state.track[state.track.count - 1]) && isFast(from: first, to: fix)
        }
        var lastFastTime = latestIsFast ? fix.time : state.lastFastTime
        if let fast = lastFastTime, fix.time - fast >= travelingSettleMilliseconds { lastFastTime = nil }

        let previous = state.track.last
        let current: LocationState.Current
        if sustained {
            current = .traveling
        } else if state.current == .traveling {
            if !latestIsFast, let arrived = narrowestEntered(by: fix, places) {
                // Arrived once the fix before agrees; until then still on the way.
                let confirmed = previous.map { narrowestEntered(by: $0, places)?.id == arrived.id } ?? true
                current = confirmed ? .place(id: arrived.id) : .traveling
            } else {
                current = lastFastTime == nil ? .unknown : .traveling
            }
        } else {
            let proposed = place(for: fix, current: state.current, places: places)
            // One stray fix (multipath can put one a few hundred metres off with a good stated
            // accuracy) must not move the user: a change needs the fix before to propose it too.
            let confirmed = previous.map { place(for: $0, current: state.current, places: places) == proposed } ?? true
            current = confirmed ? proposed : state.current
        }
        var next = state
        next.current = current
        next.lastObservationTime = fix.time
        next.track = Array((state.track + [fix]).suffix(trackLength))
        next.lastFastTime = lastFastTime
        if current != state.current { next.since = min(fix.time, time) }
        return next
    }

    /// The state after the phone's own region monitoring reported entering or leaving a place.
    /// The phone filters its region events already, so they are trusted: entering makes it the
    /// place (and forgets the speed evidence: the user has arrived), leaving the current place
    /// makes it `unknown`; leaving another place changes nothing.
    static func state(afterRegion placeID: UInt64, entered: Bool, reportedAt reported: Int64, from state: LocationState, at time: Int64) -> LocationState {
        var next = state
        next.lastObservationTime = reported
        if entered {
            next.current = .place(id: placeID)
            next.track = []
            next.lastFastTime = nil
        } else if state.current == .place(id: placeID) {
            next.current = .unknown
        }
        if next.current != state.current { next.since = min(reported, time) }
        return next
    }

    /// The decision when not traveling: stay in the current place unless the fix clearly left
    /// it (moving on only to a strictly smaller place inside it), else the smallest place the fix
    /// enters, else `unknown`.
    private static func place(for fix: LocationFix, current: LocationState.Current, places: [Place]) -> LocationState.Current {
        let entered = narrowestEntered(by: fix, places)
        if case .place(let id) = current, let here = places.first(where: { $0.id == id }), !leaves(fix, here) {
            if let entered, entered.radius < here.radius { return .place(id: entered.id) }
            return current
        }
        return entered.map { .place(id: $0.id) } ?? .unknown
    }

    static func narrowestEntered(by fix: LocationFix, _ places: [Place]) -> Place? {
        places.filter { enters(fix, $0) }.min(by: Place.narrowerFirst)
    }

    static func isDecisive(_ fix: LocationFix, for place: Place) -> Bool {
        fix.accuracy <= max(place.radius, decisiveAccuracyFloor)
    }

    static func enters(_ fix: LocationFix, _ place: Place) -> Bool {
        isDecisive(fix, for: place) && GeoDistance.metres(from: fix, to: place) + enterAccuracyWeight * fix.accuracy <= place.radius
    }

    static func leaves(_ fix: LocationFix, _ place: Place) -> Bool {
        isDecisive(fix, for: place) && GeoDistance.metres(from: fix, to: place) - fix.accuracy > place.radius + hysteresis(of: place)
    }

    static func hysteresis(of place: Place) -> Double {
        max(minimumHysteresis, hysteresisFraction * place.radius)
    }

    /// Whether the user must have moved at `travelingSpeed` or faster between the two fixes,
    /// whatever their errors within the stated accuracies.
    static func isFast(from earlier: LocationFix, to later: LocationFix) -> Bool {
        let elapsed = later.time - earlier.time
        guard elapsed >= minimumIntervalMilliseconds else { return false }
        let surelyMoved = GeoDistance.metres(from: earlier, to: later) - earlier.accuracy - later.accuracy
        return surelyMoved >= travelingSpeed * Double(elapsed) / 1000
    }
}

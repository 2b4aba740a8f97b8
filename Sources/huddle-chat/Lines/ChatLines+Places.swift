import HuddleClient
import HuddleProtocol

/// Places and where friends are: `[place] bob is at work (since 10:42)`. Coordinates are only
/// ever the user's own.
extension ChatLines {
    /// `bob is at work (since 10:42)`, `you are traveling (since 10:50)`…
    static func whereabouts(_ whereabouts: Whereabouts, me: String?) -> String {
        let subject = whereabouts.user == me ? "you" : clean(whereabouts.user)
        return subject + " " + whereaboutsPredicate(
            place: whereabouts.place, placeID: whereabouts.placeID, since: whereabouts.since, plural: whereabouts.user == me)
    }

    static func placeDecision(_ decision: PlaceDecision) -> String {
        let now = whereaboutsPredicate(
            place: decision.place, placeID: decision.placeID, since: decision.since, plural: true, still: !decision.changed)
        if decision.ignored { return ok("not newer than your last report, so ignored: you \(now)") }
        return ok("you \(now)")
    }

    private static func whereaboutsPredicate(place: String, placeID: UInt64?, since: Int64?, plural: Bool, still: Bool = false) -> String {
        guard let since else { return plural ? "have not reported a place yet" : "has not reported a place yet" }
        let be = (plural ? "are" : "is") + (still ? " still" : "")
        let state: String
        if placeID != nil {
            state = "\(be) at \(clean(place))"
        } else if place == "traveling" {
            state = "\(be) traveling"
        } else {
            state = "\(be) away from \(plural ? "your" : "their") places"
        }
        return "\(state) (since \(ChatClock.time(since)))"
    }

    /// `1 home (48.8566, 2.3522, r 100 m)`.
    static func place(_ place: Place) -> String {
        "\(place.id) \(clean(place.label)) (\(place.latitude), \(place.longitude), r \(metres(place.radius)) m)"
    }

    private static func metres(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

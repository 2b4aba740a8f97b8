import HuddleCore
import HuddleProtocol

/// The places and location replies (protocol.md, "Places and location"). Coordinates appear
/// only in `placeObject`, which only the owner's own `place_set` and `places` replies use.
extension ReplyEncoding {
    /// `{"id", "label", "lat", "lon", "radius"}`.
    static func placeObject(_ place: Place) -> JSONValue {
        .object([
            ("id", .number(String(place.id))), ("label", .string(place.label)),
            ("lat", .double(place.latitude)), ("lon", .double(place.longitude)), ("radius", .double(place.radius)),
        ])
    }

    /// `"place"`, `"place_id"` (only at a place) and `"since"` (null before the first report).
    static func whereaboutsMembers(_ whereabouts: Whereabouts) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("place", .string(whereabouts.label))]
        if let placeID = whereabouts.placeID { members.append(("place_id", .number(String(placeID)))) }
        members.append(("since", whereabouts.since.map { .number(String($0)) } ?? .null))
        return members
    }

    /// A `subscribe` result as for any channel, plus `current`: the owner's place now.
    static func locationSubscription(
        _ channel: String, _ epoch: String, _ offset: UInt64, _ recovered: Bool?, _ publications: [Publication], current: Whereabouts
    ) -> JSONValue {
        let subscribed = result(.subscribed(channel: channel, epoch: epoch, offset: offset, recovered: recovered, publications: publications), token: nil)
        guard case .object(var members) = subscribed else { return subscribed }
        members.append(("current", .object(whereaboutsMembers(current))))
        return .object(members)
    }
}

import HuddleProtocol

/// protocol.md "Places and location": the caller's places, reports of where the phone is, and
/// where a friend is. A friend's place changes are publications on `LocationChannel.name(friend)`:
/// subscribe to it, read each with `Whereabouts(publication)`. Every subscribe to a `loc:` channel,
/// and every resume of one after a reconnect, also tells its owner's place at that moment as
/// `HuddleEvent.whereabouts` (and in `SubscribeResult.current`), so a follower knows it at once
/// even when the changes it missed could not be replayed.
extension HuddleClient {
    /// `place_set`: a new place (`id` nil), or the caller's place `id` replaced. Resent after
    /// a drop with its client id until answered: a new place is made once.
    public func setPlace(
        id: UInt64? = nil, label: String, latitude: Double, longitude: Double, radius: Double,
        completion: @escaping (Result<Place, HuddleClientError>) -> Void
    ) {
        var arguments: [(String, JSONValue)] = []
        if let id { arguments.append(("place_id", .integer(id))) }
        arguments += [("label", .string(label)), ("lat", .double(latitude)), ("lon", .double(longitude)), ("radius", .double(radius))]
        request("place_set", arguments,
                reading: ReplyResult.place(in:), completion: completion)
    }

    /// `place_remove`.
    public func removePlace(_ id: UInt64, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request("place_remove", [("place_id", .integer(id))], decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }

    /// `places`: the caller's places, by id.
    public func places(completion: @escaping (Result<[Place], HuddleClientError>) -> Void) {
        request("places", resendAfterReconnect: true, reading: ReplyResult.places(in:), completion: completion)
    }

    /// `location_fix`: a raw position (degrees), its `accuracy` (metres) and when the phone took
    /// it (ms since the Unix epoch). Resent after a dropped connection: the server ignores a
    /// report not newer than the last it accepted.
    public func reportFix(
        latitude: Double, longitude: Double, accuracy: Double, time: Int64,
        completion: @escaping (Result<PlaceDecision, HuddleClientError>) -> Void
    ) {
        request("location_fix", [("lat", .double(latitude)), ("lon", .double(longitude)), ("accuracy", .double(accuracy)), ("time", .integer(time))],
                resendAfterReconnect: true, reading: PlaceDecision.init(result:), completion: completion)
    }

    /// `region`: the phone's own geofencing saw the caller enter (`entered`) or leave place `placeID`.
    /// Resent after a dropped connection, as `reportFix`.
    public func reportRegion(
        placeID: UInt64, entered: Bool, time: Int64, completion: @escaping (Result<PlaceDecision, HuddleClientError>) -> Void
    ) {
        request("region", [("place_id", .integer(placeID)), ("event", .string(entered ? "enter" : "exit")), ("time", .integer(time))],
                resendAfterReconnect: true, reading: PlaceDecision.init(result:), completion: completion)
    }

    /// `where`: where `user` (the caller or a friend) is now.
    public func whereIs(_ user: String, completion: @escaping (Result<Whereabouts, HuddleClientError>) -> Void) {
        request("where", [("user", .string(user))], resendAfterReconnect: true, reading: Whereabouts.init(result:), completion: completion)
    }
}

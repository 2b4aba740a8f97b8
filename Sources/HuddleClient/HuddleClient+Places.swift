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
        request(.placeSet(id: id, label: label, latitude: latitude, longitude: longitude, radius: radius), reading: ReplyResult.place(in:), completion: completion)
    }

    /// `place_remove`.
    public func removePlace(_ id: UInt64, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.placeRemove(id: id), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }

    /// `places`: the caller's places, by id.
    public func places(completion: @escaping (Result<[Place], HuddleClientError>) -> Void) {
        request(.places(user: nil), resendAfterReconnect: true, reading: ReplyResult.places(in:), completion: completion)
    }

    /// `location_fix`: a raw position (degrees), its `accuracy` (metres) and when the phone took
    /// it (ms since the Unix epoch). Resent after a dropped connection: the server ignores a
    /// report not newer than the last it accepted.
    public func reportFix(
        latitude: Double, longitude: Double, accuracy: Double, time: Int64,
        completion: @escaping (Result<PlaceDecision, HuddleClientError>) -> Void
    ) {
        request(.locationFix(latitude: latitude, longitude: longitude, accuracy: accuracy, time: time),
                resendAfterReconnect: true, reading: PlaceDecision.init(result:), completion: completion)
    }

    /// `region`: the phone's own geofencing saw the caller enter (`entered`) or leave place `placeID`.
    /// Resent after a dropped connection, as `reportFix`.
    public func reportRegion(
        placeID: UInt64, entered: Bool, time: Int64, completion: @escaping (Result<PlaceDecision, HuddleClientError>) -> Void
    ) {
        request(.region(placeID: placeID, entered: entered, time: time),
                resendAfterReconnect: true, reading: PlaceDecision.init(result:), completion: completion)
    }

    /// `where`: where `user` (the caller or a friend) is now.
    public func whereIs(_ user: String, completion: @escaping (Result<Whereabouts, HuddleClientError>) -> Void) {
        request(.whereIs(user: user), resendAfterReconnect: true, reading: Whereabouts.init(result:), completion: completion)
    }
}

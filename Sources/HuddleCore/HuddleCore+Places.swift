import HuddleProtocol

/// Places and location, the family clock (protocol.md, "Places and location"): a user's
/// places, raw fixes and region events turned into a decided place (`LocationDecision`), and
/// that place — never a coordinate — published on `loc:USER` when it changes.
///
/// Everything durable goes through commands: `setPlace`, `removePlace`, and `updateLocation`
/// carrying the decided state, logged with the `place` publication it caused.
extension HuddleCore {
    func setPlace(
        _ connection: ConnectionRef, requestID: String, id: UInt64?, label: String, latitude: Double, longitude: Double, radius: Double,
        at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        if let refusal = PlaceRules.placeRefusal(label: label, latitude: latitude, longitude: longitude, radius: radius) {
            return fail(connection, requestID, refusal, into: &step)
        }
        let user = identity.username
        let mine = durableState.places[user] ?? UserPlaces()
        let place: Place
        var renamesCurrent = false
        if let id {
            guard let existing = mine.place(id) else {
                return fail(connection, requestID, CoreError(.placeNotFound, "you have no place \(id)"), into: &step)
            }
            place = Place(id: id, label: label, latitude: latitude, longitude: longitude, radius: radius)
            // Setting a place to what it is changes nothing, so nothing is logged.
            guard place != existing else { return reply(connection, requestID, .place(place), into: &step) }
            renamesCurrent = existing.label != label && mine.location.current == .place(id: id)
        } else {
            guard mine.places.count < PlaceRules.maxPlacesPerUser else {
                let error = CoreError(.tooManyPlaces, "at most \(PlaceRules.maxPlacesPerUser) places; remove one first")
                return fail(connection, requestID, error, into: &step)
            }
            place = Place(id: mine.nextID, label: label, latitude: latitude, longitude: longitude, radius: radius)
        }
        record(.setPlace(user: user, place: place, time: time), into: &step)
        // Followers show the label: a renamed current place is news for them.
        if renamesCurrent { publishWhereabouts(of: user, at: time, into: &step) }
        reply(connection, requestID, .place(place), into: &step)
    }

    func removePlace(_ connection: ConnectionRef, requestID: String, id: UInt64, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let user = identity.username
        guard let mine = durableState.places[user], mine.place(id) != nil else {
            return fail(connection, requestID, CoreError(.placeNotFound, "you have no place \(id)"), into: &step)
        }
        record(.removePlace(user: user, placeID: id, time: time), into: &step)
        if mine.location.current == .place(id: id) {
            // The user is at no place of theirs any more; the next fix decides anew.
            var location = mine.location
            location.current = .unknown
            location.since = time
            record(.updateLocation(user: user, location: location, time: time), into: &step)
            publishWhereabouts(of: user, at: time, into: &step)
        }
        reply(connection, requestID, .done, into: &step)
    }

    func listPlaces(_ connection: ConnectionRef, requestID: String, user text: String?, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let me = identity.username
        if let text {
            guard let other = knownUser(text, connection, requestID, into: &step) else { return }
            guard other == me else {
                return fail(connection, requestID, CoreError(.forbidden, "only \(other) may see \(other)'s places"), into: &step)
            }
        }
        reply(connection, requestID, .places(durableState.places[me]?.places ?? []), into: &step)
    }

    func reportLocation(_ connection: ConnectionRef, requestID: String, fix: LocationFix, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        if let refusal = PlaceRules.fixRefusal(latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy)
            ?? PlaceRules.timeRefusal(fix.time, at: time) {
            return fail(connection, requestID, refusal, into: &step)
        }
        let user = identity.username
        let mine = durableState.places[user] ?? UserPlaces()
        decide(user, before: mine.location, reported: fix.time, connection, requestID, at: time, into: &step) {
            LocationDecision.state(after: fix, from: mine.location, places: mine.places, at: time)
        }
    }

    func reportRegion(
        _ connection: ConnectionRef, requestID: String, placeID: UInt64, entered: Bool, reported: Int64, at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        if let refusal = PlaceRules.timeRefusal(reported, at: time) { return fail(connection, requestID, refusal, into: &step) }
        let user = identity.username
        guard let mine = durableState.places[user], mine.place(placeID) != nil else {
            return fail(connection, requestID, CoreError(.placeNotFound, "you have no place \(placeID)"), into: &step)
        }
        decide(user, before: mine.location, reported: reported, connection, requestID, at: time, into: &step) {
            LocationDecision.state(afterRegion: placeID, entered: entered, reportedAt: reported, from: mine.location, at: time)
        }
    }

    /// `where`: the user's place now, for the user and their friends — the same right as
    /// reading `loc:USER`.
    func locate(_ connection: ConnectionRef, requestID: String, user text: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let user = knownUser(text, connection, requestID, into: &step)
        else { return }
        guard user == identity.username || friends(of: user).contains(identity.username) else {
            return fail(connection, requestID, CoreError(.forbidden, "only \(user) and their friends may see where \(user) is"), into: &step)
        }
        reply(connection, requestID, .whereabouts(user: user, whereabouts(of: user)), into: &step)
    }

    /// What friends may know of the user's location now.
    func whereabouts(of user: Username) -> DecidedPlace {
        guard let mine = durableState.places[user] else { return DecidedPlace(label: DecidedPlace.unknownLabel, placeID: nil, since: nil) }
        let since = mine.location.since
        switch mine.location.current {
        case .unknown:
            return DecidedPlace(label: DecidedPlace.unknownLabel, placeID: nil, since: since)
        case .traveling:
            return DecidedPlace(label: DecidedPlace.travelingLabel, placeID: nil, since: since)
        case .place(let id):
            // `removePlace` moves the user off a removed place, so the place is there.
            guard let place = mine.place(id) else { return DecidedPlace(label: DecidedPlace.unknownLabel, placeID: nil, since: since) }
            return DecidedPlace(label: place.label, placeID: id, since: since)
        }
    }

    /// Applies an accepted observation's decision — unless the report is not newer than the
    /// last accepted one (phones resend and reorder), which is ignored — and tells followers
    /// when the place changed.
    private func decide(
        _ user: Username, before: LocationState, reported: Int64, _ connection: ConnectionRef, _ requestID: String,
        at time: Int64, into step: inout CoreStep, decision: () -> LocationState
    ) {
        if let last = before.lastObservationTime, reported <= last {
            return reply(connection, requestID, .location(whereabouts(of: user), changed: false, ignored: true), into: &step)
        }
        let after = decision()
        record(.updateLocation(user: user, location: after, time: time), into: &step)
        let changed = after.current != before.current
        if changed { publishWhereabouts(of: user, at: time, into: &step) }
        reply(connection, requestID, .location(whereabouts(of: user), changed: changed, ignored: false), into: &step)
    }

    /// The `place` publication on `loc:USER`, `from` the user (whose location it is): stored
    /// and logged like any publication, delivered to the followers subscribed now.
    private func publishWhereabouts(of user: Username, at time: Int64, into step: inout CoreStep) {
        let channel = "loc:" + user
        let data = JSONWriter.serialize(.object(whereabouts(of: user).shown(of: user).members))
        let publication = appendPublication(to: channel, namespace: .loc, from: user, type: Self.placePublicationType, data: data, time: time)
        step.commands.append(.publish(channel: channel, from: user, type: Self.placePublicationType, data: data, time: time))
        deliver(publication, into: &step)
    }

    static let placePublicationType = "place"

    /// The canonical name of an existing account, or nil having replied `user_not_found`.
    private func knownUser(_ text: String, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep) -> Username? {
        guard let username = UsernameRules.canonical(text), durableState.accounts[username] != nil else {
            fail(connection, requestID, CoreError(.userNotFound, "no user \(text)"), into: &step)
            return nil
        }
        return username
    }
}

/// The result of `location_fix` and `region`: the caller's place decided after the report.
public struct PlaceDecision: Sendable, Equatable {
    public var place: String
    public var placeID: UInt64?
    public var since: Int64?
    /// The report moved the user (and friends following `loc:USER` were told).
    public var changed: Bool
    /// The report was not newer than the last accepted one and changed nothing (phones resend
    /// and reorder; a report resent after a dropped connection is answered so too).
    public var ignored: Bool

    public init(place: String, placeID: UInt64?, since: Int64?, changed: Bool, ignored: Bool) {
        self.place = place
        self.placeID = placeID
        self.since = since
        self.changed = changed
        self.ignored = ignored
    }

    public var result: JSONValue {
        var members = Whereabouts(user: "", place: place, placeID: placeID, since: since).members
        members.append(("changed", .bool(changed)))
        if ignored { members.append(("ignored", .bool(true))) }
        return .object(members)
    }

    public init(result: JSONValue) throws(WireFormatError) {
        let whereabouts = try Whereabouts(json: result, user: "")
        self.init(
            place: whereabouts.place, placeID: whereabouts.placeID, since: whereabouts.since, changed: try result.requiredBool("changed"),
            ignored: try result.optionalBool("ignored") ?? false)
    }
}

/// The result of `activities`: the server's list and the caller's statuses that are on, in the list's order.
public struct ActivityList: Sendable, Equatable {
    public var available: [String]
    public var mine: [ActivityStatus]

    public init(available: [String], mine: [ActivityStatus]) {
        self.available = available
        self.mine = mine
    }

    public var result: JSONValue { .object([("available", .strings(available)), ("mine", .array(mine.map(\.json)))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(available: try result.requiredStrings("available"), mine: try result.requiredList("mine", ActivityStatus.init(json:)))
    }
}

extension Whereabouts {
    /// The result of `where`: `{"user", "place", "place_id"?, "since"}`.
    public var result: JSONValue { .object([("user", .string(user))] + members) }

    public init(result: JSONValue) throws(WireFormatError) {
        try self.init(json: result, user: try result.requiredString("user"))
    }
}

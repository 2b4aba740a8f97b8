/// Where a user is, as the server decided it: one of their places by label, `unknown`, or
/// `traveling` — never a coordinate. What `where` answers, what a `loc:USER` subscribe reports as
/// `current`, and what each place change published on `loc:USER` says (protocol.md, "Places and
/// location").
public struct Whereabouts: Sendable, Equatable {
    public var user: String
    /// The place's label, `"unknown"` or `"traveling"` (no place may be labelled either).
    public var place: String
    /// The place's id, at one of the user's places only.
    public var placeID: UInt64?
    /// When the user got there; nil before their first report.
    public var since: Int64?

    public init(user: String, place: String, placeID: UInt64? = nil, since: Int64?) {
        self.user = user
        self.place = place
        self.placeID = placeID
        self.since = since
    }

    public var isTraveling: Bool { placeID == nil && place == "traveling" }
    public var isUnknown: Bool { placeID == nil && place == "unknown" }

    /// `"place"`, `"place_id"` (only at a place) and `"since"` (null before the first report): the
    /// `data` of a `place` publication, `current` of a `loc:` subscribe, the body of `where`.
    public var members: [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("place", .string(place))]
        if let placeID { members.append(("place_id", .integer(placeID))) }
        members.append(("since", since.map { JSONValue.integer($0) } ?? .null))
        return members
    }

    /// `members` read back from `object`; `user` is whose they are (never in the object itself).
    public init(json object: JSONValue, user: String) throws(WireFormatError) {
        self.init(
            user: user, place: try object.requiredString("place"), placeID: try object.optionalUInt64("place_id"),
            since: try object.optionalInt64("since"))
    }

    /// A place change published on `loc:USER` (a publication of type `place`); nil for any
    /// other publication or one of the wrong shape.
    public init?(_ publication: ChannelPublication) {
        guard publication.type == "place", let user = LocationChannel.user(in: publication.channel),
            let whereabouts = try? Self(json: publication.data, user: user)
        else { return nil }
        self = whereabouts
    }
}

/// Names of location channels: `loc:USER`, which the user's friends may follow.
public enum LocationChannel {
    public static func name(_ user: String) -> String { "loc:\(user.lowercased())" }

    /// The user whose channel `channel` is; nil when it is not a `loc:` channel.
    public static func user(in channel: String) -> String? {
        guard channel.hasPrefix("loc:"), channel.utf8.count > 4 else { return nil }
        return String(channel.dropFirst(4))
    }
}

import HuddleProtocol

/// One of the caller's places (protocol.md, "Places and location"). Only its owner ever sees
/// its coordinates; friends see the label.
public struct Place: Sendable, Equatable {
    /// The owner's own, from 1, never reused.
    public var id: UInt64
    public var label: String
    /// Degrees.
    public var latitude: Double
    public var longitude: Double
    /// Metres.
    public var radius: Double

    public init(id: UInt64, label: String, latitude: Double, longitude: Double, radius: Double) {
        self.id = id
        self.label = label
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
    }

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> Place {
        func degrees(_ key: String) throws(HuddleClientError) -> Double {
            guard let value = object[key]?.doubleValue else { throw .invalidReply("`\(key)` is missing or not a number") }
            return value
        }
        return Place(
            id: try object.requiredUInt64("id"), label: try object.requiredString("label"), latitude: try degrees("lat"),
            longitude: try degrees("lon"), radius: try degrees("radius"))
    }
}

/// Where a user is, as the server decided it: one of their places by label, `unknown`, or
/// `traveling` — never a coordinate. What `where` answers, what a `loc:USER` subscribe reports as
/// `current` (`HuddleEvent.whereabouts`), and what each place change published on `loc:USER` says.
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

    /// A place change published on `loc:USER` (a publication of type `place`); nil for any
    /// other publication or one of the wrong shape.
    public init?(_ publication: ChannelPublication) {
        guard publication.type == "place", let user = LocationChannel.user(in: publication.channel),
            let whereabouts = try? Self.decode(publication.data, user: user)
        else { return nil }
        self = whereabouts
    }

    /// `place`, `place_id` (at a place) and `since` (null before the first report) of `object`.
    static func decode(_ object: JSONValue, user: String) throws(HuddleClientError) -> Whereabouts {
        Whereabouts(
            user: user, place: try object.requiredString("place"), placeID: try object.optionalUInt64("place_id"),
            since: try object.optionalInt64("since"))
    }
}

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

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> PlaceDecision {
        PlaceDecision(
            place: try result.requiredString("place"), placeID: try result.optionalUInt64("place_id"), since: try result.optionalInt64("since"),
            changed: try result.requiredBool("changed"), ignored: try result.optionalBool("ignored") ?? false)
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

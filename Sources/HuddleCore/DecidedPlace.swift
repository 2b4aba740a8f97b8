import HuddleProtocol

/// What anyone allowed may know of a user's location: the decided place's label (or
/// `unknown`, `traveling`) and since when — never a coordinate.
public struct DecidedPlace: Sendable, Equatable {
    public static let unknownLabel = "unknown"
    public static let travelingLabel = "traveling"

    /// A place's label, `unknown` or `traveling`.
    public var label: String
    /// Set when `label` is one of the user's places.
    public var placeID: UInt64?
    /// Nil when the user never reported a location.
    public var since: Int64?

    public init(label: String, placeID: UInt64?, since: Int64?) {
        self.label = label
        self.placeID = placeID
        self.since = since
    }

    /// As `user`'s friends are told it.
    public func shown(of user: Username) -> Whereabouts {
        Whereabouts(user: user, place: label, placeID: placeID, since: since)
    }
}

/// What anyone allowed may know of a user's location: the decided place's label (or
/// `unknown`, `traveling`) and since when — never a coordinate.
public struct Whereabouts: Sendable, Equatable {
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

    /// The `data` of a `place` publication on `loc:USER`: `{"place", "place_id"?, "since"}`.
    var publicationData: String {
        var members = [("place", JSONText.string(label))]
        if let placeID { members.append(("place_id", String(placeID))) }
        members.append(("since", since.map { String($0) } ?? "null"))
        return JSONText.object(members)
    }
}

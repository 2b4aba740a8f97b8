/// Readers of the results that are not a type of their own: a client calls the one its op
/// expects.
extension ReplyResult {
    /// `ping`.
    public static func time(in result: JSONValue) throws(WireFormatError) -> Int64 { try result.requiredInt64("time") }
    /// `logout`.
    public static func revoked(in result: JSONValue) throws(WireFormatError) -> Int { try result.requiredInt("revoked") }
    /// The HTTP API's `disconnect`.
    public static func closed(in result: JSONValue) throws(WireFormatError) -> Int { try result.requiredInt("closed") }
    /// `user_search`.
    public static func users(in result: JSONValue) throws(WireFormatError) -> [String] { try result.requiredStrings("users") }

    public static func friends(in result: JSONValue) throws(WireFormatError) -> [FriendStatus] {
        try result.requiredList("friends", FriendStatus.init(json:))
    }

    public static func matches(in result: JSONValue) throws(WireFormatError) -> [ActivityMatch] {
        try result.requiredList("matches", ActivityMatch.init(json:))
    }

    /// `post`.
    public static func post(in result: JSONValue) throws(WireFormatError) -> FeedPost { try FeedPost(json: try result.requiredObject("post")) }
    /// `place_set`.
    public static func place(in result: JSONValue) throws(WireFormatError) -> Place { try Place(json: try result.requiredObject("place")) }
    public static func places(in result: JSONValue) throws(WireFormatError) -> [Place] { try result.requiredList("places", Place.init(json:)) }
    /// `memory_create`, `memory_update`, `memory`.
    public static func memory(in result: JSONValue) throws(WireFormatError) -> Memory { try Memory(json: try result.requiredObject("memory")) }
    public static func memories(in result: JSONValue) throws(WireFormatError) -> [Memory] { try result.requiredList("memories", Memory.init(json:)) }

    /// `point_add`, `point_update`: the point and its memory's id.
    public static func memoryPoint(in result: JSONValue) throws(WireFormatError) -> (memory: UInt64, point: MemoryPoint) {
        (try result.requiredUInt64("memory"), try MemoryPoint(json: try result.requiredObject("point")))
    }

    /// `{}`.
    public static func empty(in result: JSONValue) throws(WireFormatError) {
        guard case .object(let members) = result, members.isEmpty else { throw WireFormatError("the result is not `{}`") }
    }
}

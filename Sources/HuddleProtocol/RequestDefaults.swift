/// What the decoder fills in for an optional argument a request leaves out (protocol.md, "Ops"),
/// besides the page sizes in `ProtocolLimits`: written once, for the decoder that fills them
/// in and the encoder that can leave them out again.
public enum RequestDefaults {
    /// `publish`'s `type`.
    public static let publicationType = "message"
    /// `friend_request`'s `message`.
    public static let friendMessage = ""

    /// The arguments of `operation` that hold what the decoder would fill in: a client may
    /// leave them out, the request means the same (`RequestEncoder.encode(_:omittingDefaults:)`).
    static func defaulted(in operation: Operation, limits: ProtocolLimits = ProtocolLimits()) -> Set<String> {
        switch operation {
        case .logout(all: false):
            return ["all"]
        case .publish(_, let type, _) where type == publicationType:
            return ["type"]
        case .friendRequest(_, let message) where message == friendMessage:
            return ["message"]
        case .history(_, _, let limit) where limit == limits.defaultHistoryLimit:
            return ["limit"]
        case .userSearch(_, let limit) where limit == limits.defaultSearchLimit:
            return ["limit"]
        case .feed(_, let limit) where limit == limits.defaultFeedLimit, .comments(_, _, let limit) where limit == limits.defaultFeedLimit:
            return ["limit"]
        case .matches(byActivity: false):
            return ["order"]
        default:
            return []
        }
    }
}

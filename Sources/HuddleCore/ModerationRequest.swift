import HuddleProtocol

/// What the operator asks through the HTTP API's moderation calls (protocol.md, "Moderation"),
/// carried by `CoreRequestBody.moderation`. Names are as the operator typed them (the core
/// finds the account); everything else was checked by `APIRequestDecoder`.
public enum ModerationRequest: Sendable, Equatable {
    /// `until` nil: until lifted.
    case suspend(username: String, reason: String, until: Int64?)
    case unsuspend(username: String)

    /// What crosses machines in cluster mode (`CoreRequest.encoded()`), `kind` included.
    var fields: [(String, JSONValue)] {
        switch self {
        case let .suspend(username, reason, until):
            [("kind", .string("suspend")), ("username", .string(username)), ("reason", .string(reason))]
                + (until.map { [("until", JSONValue.integer($0))] } ?? [])
        case let .unsuspend(username):
            [("kind", .string("unsuspend")), ("username", .string(username))]
        }
    }

    init?(fields f: JSONValue) {
        func string(_ key: String) -> String? { f[key]?.stringValue }
        switch string("kind") {
        case "suspend":
            guard let username = string("username"), let reason = string("reason") else { return nil }
            let until = f["until"]
            if let until, until.int64Value == nil { return nil }
            self = .suspend(username: username, reason: reason, until: until?.int64Value)
        case "unsuspend":
            guard let username = string("username") else { return nil }
            self = .unsuspend(username: username)
        default:
            return nil
        }
    }

    /// Every moderation call changes durable state.
    var effect: RequestEffect { .write }
}

import HuddleProtocol

/// What the operator asks through the HTTP API's moderation calls (protocol.md, "Moderation"),
/// carried by `CoreRequestBody.moderation`. Names are as the operator typed them (the core
/// finds the account); everything else was checked by `APIRequestDecoder`.
public enum ModerationRequest: Sendable, Equatable {
    /// `until` nil: until lifted.
    case suspend(username: String, reason: String, until: Int64?)
    case unsuspend(username: String)
    /// `open` nil: open and resolved ones alike. `limit` already checked.
    case listReports(open: Bool?, after: UInt64, limit: Int)
    /// `action` one of `ReportVocabulary.actions`, `note` already checked.
    case resolveReport(id: UInt64, action: String, note: String)

    /// What crosses machines in cluster mode (`CoreRequest.encoded()`), `kind` included.
    var fields: [(String, JSONValue)] {
        switch self {
        case let .suspend(username, reason, until):
            [("kind", .string("suspend")), ("username", .string(username)), ("reason", .string(reason))]
                + (until.map { [("until", JSONValue.integer($0))] } ?? [])
        case let .unsuspend(username):
            [("kind", .string("unsuspend")), ("username", .string(username))]
        case let .listReports(open, after, limit):
            [("kind", .string("list_reports")), ("open", open.map(JSONValue.bool) ?? .null), ("after", .integer(after)), ("limit", .integer(limit))]
        case let .resolveReport(id, action, note):
            [("kind", .string("resolve_report")), ("id", .integer(id)), ("action", .string(action)), ("note", .string(note))]
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
        case "list_reports":
            guard let after = f["after"]?.uint64Value, let limit = f["limit"]?.int64Value.flatMap({ Int(exactly: $0) }) else { return nil }
            let open = f["open"]
            if let open, open != .null, open.boolValue == nil { return nil }
            self = .listReports(open: open?.boolValue, after: after, limit: limit)
        case "resolve_report":
            guard let id = f["id"]?.uint64Value, let action = string("action"), let note = string("note") else { return nil }
            self = .resolveReport(id: id, action: action, note: note)
        default:
            return nil
        }
    }

    var effect: RequestEffect {
        if case .listReports = self { return .read }
        return .write
    }
}

/// Reports (protocol.md, "Reports"): what a user reported, as the `report` op names it and as
/// the operator reads it (`GET /api/v1/reports`, the report webhook).
public enum ReportTarget: Sendable, Equatable {
    case user(String)
    /// A publication of a channel the reporter may read.
    case message(channel: String, offset: UInt64)
    case post(UInt64)
    case comment(post: UInt64, comment: UInt64)

    /// The `kind` argument and field.
    public var kind: String {
        switch self {
        case .user: "user"
        case .message: "message"
        case .post: "post"
        case .comment: "comment"
        }
    }

    /// The fields of a `report` request that name it, besides `kind`.
    var requestFields: [(String, JSONValue)] {
        if case .user(let user) = self { return [("user", .string(user))] }
        return fields
    }

    /// The fields that name it, besides `kind` (the reported user is the report's `user`).
    var fields: [(String, JSONValue)] {
        switch self {
        case .user: []
        case let .message(channel, offset): [("channel", .string(channel)), ("offset", .integer(offset))]
        case let .post(post): [("post", .integer(post))]
        case let .comment(post, comment): [("post", .integer(post)), ("comment", .integer(comment))]
        }
    }

    init(kind: String, in json: JSONValue) throws(WireFormatError) {
        switch kind {
        case "user": self = .user(try json.requiredString("user"))
        case "message": self = .message(channel: try json.requiredString("channel"), offset: try json.requiredUInt64("offset"))
        case "post": self = .post(try json.requiredUInt64("post"))
        case "comment": self = .comment(post: try json.requiredUInt64("post"), comment: try json.requiredUInt64("comment"))
        default: throw WireFormatError("unknown report kind \(kind)")
        }
    }
}

/// The reasons a report may give, and how the operator may close one.
public enum ReportVocabulary {
    public static let reasons: Set<String> = ["spam", "harassment", "hate", "violence", "sexual", "self_harm", "impersonation", "other"]
    public static let actions: Set<String> = ["dismissed", "content_removed", "user_warned", "user_suspended", "user_deleted", "other"]
    /// The longest `text` of a report and `note` of a resolution, in characters.
    public static let maxTextLength = 1000
}

/// How the operator closed a report.
public struct ReportResolution: Sendable, Equatable {
    public var action: String
    public var note: String
    public var time: Int64

    public init(action: String, note: String, time: Int64) {
        self.action = action
        self.note = note
        self.time = time
    }

    public var json: JSONValue { .object([("action", .string(action)), ("note", .string(note)), ("time", .integer(time))]) }
}

/// One report as the operator sees it. `content` is what was reported as it was when reported
/// (a message's `data`, a post's or comment's text; nil for a user), cut to
/// `maxContentBytes` — the operator sees it even if it is gone since.
public struct ModerationReport: Sendable, Equatable {
    /// The most of the reported content kept, in UTF-8 bytes.
    public static let maxContentBytes = 4096

    public var id: UInt64
    public var reporter: String
    public var target: ReportTarget
    /// The reported user: the one named, or the content's author.
    public var user: String
    public var reason: String
    public var text: String
    public var content: String?
    public var time: Int64
    public var resolution: ReportResolution?

    public init(
        id: UInt64, reporter: String, target: ReportTarget, user: String, reason: String, text: String, content: String?, time: Int64,
        resolution: ReportResolution? = nil
    ) {
        self.id = id
        self.reporter = reporter
        self.target = target
        self.user = user
        self.reason = reason
        self.text = text
        self.content = content
        self.time = time
        self.resolution = resolution
    }

    public var json: JSONValue {
        .object(
            [("id", .integer(id)), ("kind", .string(target.kind)), ("reporter", .string(reporter)), ("user", .string(user))] + target.fields
                + [
                    ("reason", .string(reason)), ("text", .string(text)), ("content", content.map(JSONValue.string) ?? .null),
                    ("time", .integer(time)), ("status", .string(resolution == nil ? "open" : "resolved")),
                    ("resolution", resolution?.json ?? .null),
                ])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        var resolution: ReportResolution?
        if let value = json["resolution"], value != .null {
            resolution = ReportResolution(
                action: try value.requiredString("action"), note: try value.requiredString("note"), time: try value.requiredInt64("time"))
        }
        self.init(
            id: try json.requiredUInt64("id"), reporter: try json.requiredString("reporter"),
            target: try ReportTarget(kind: try json.requiredString("kind"), in: json), user: try json.requiredString("user"),
            reason: try json.requiredString("reason"), text: try json.requiredString("text"), content: try json.optionalString("content"),
            time: try json.requiredInt64("time"), resolution: resolution)
    }

    /// `content` cut to at most `maxContentBytes` UTF-8 bytes, on a character boundary.
    public static func captured(_ content: String) -> String {
        guard content.utf8.count > maxContentBytes else { return content }
        var kept = ""
        var bytes = 0
        for scalar in content.unicodeScalars {
            bytes += scalar.utf8.count
            if bytes > maxContentBytes { break }
            kept.unicodeScalars.append(scalar)
        }
        return kept
    }
}

/// `GET /api/v1/reports`: oldest first; `nextAfter` nil on the last page.
public struct ReportPage: Sendable, Equatable {
    public var reports: [ModerationReport]
    public var nextAfter: UInt64?

    public init(reports: [ModerationReport], nextAfter: UInt64?) {
        self.reports = reports
        self.nextAfter = nextAfter
    }

    public var result: JSONValue {
        .object([("reports", .array(reports.map(\.json))), ("next_after", nextAfter.map { JSONValue.integer($0) } ?? .null)])
    }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(reports: try result.requiredList("reports", ModerationReport.init(json:)), nextAfter: try result.optionalUInt64("next_after"))
    }
}

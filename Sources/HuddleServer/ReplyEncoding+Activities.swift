import HuddleCore
import HuddleProtocol

/// The wire form of the activity replies (protocol.md, "Activities and matches").
extension ReplyEncoding {
    /// `{"activity", "audience" (null: every friend), "since", "expires_at"}`.
    static func activityStatusObject(_ status: ActivityStatus) -> JSONValue {
        .object([
            ("activity", .string(status.activity)),
            ("audience", status.audience.map { .array($0.map(JSONValue.string)) } ?? .null),
            ("since", .number(String(status.since))),
            ("expires_at", .number(String(status.expiresAt))),
        ])
    }

    /// `{"user", "activity", "since"}`: `user` is the other one.
    static func matchObject(_ match: ActivityMatch) -> JSONValue {
        .object([("user", .string(match.user)), ("activity", .string(match.activity)), ("since", .number(String(match.since)))])
    }
}

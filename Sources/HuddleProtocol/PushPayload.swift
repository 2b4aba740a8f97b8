/// The body of a push webhook request (protocol.md, "Notifications and push"): one JSON object
/// per notification.
///
/// ```json
/// {"id": "chat:alice~bob/7", "user": "bob", "kind": "chat_message", "title": "alice", "body": "hi",
///  "badge": 3, "target": "huddle://chat/chat:alice~bob", "from": "alice", "time": 1763712000123}
/// ```
public enum PushPayload {
    /// The most characters (grapheme clusters) a body has: a lock screen shows a line or two.
    public static let maxBodyCharacters = 120
    /// The body of a chat message whose `data` holds no text to show.
    public static let genericMessageBody = "New message"

    public static func json(
        id: String, user: String, kind: String, title: String, body: String, badge: UInt64, target: String, from: String,
        time: Int64
    ) -> [UInt8] {
        let notice = PushNotice(id: id, user: user, kind: kind, title: title, body: truncated(body), badge: badge, target: target, from: from, time: time)
        return JSONWriter.bytes(notice.json)
    }

    /// What a chat message shows: the `text` member of a `data` object when it is a non-empty
    /// string (the convention of the bundled clients, `{"text": "hi"}`); otherwise — an image,
    /// a bare string, anything an application invented — the generic line, never raw JSON.
    public static func body(ofMessageData data: String) -> String {
        guard let value = try? JSONParser.parse(Array(data.utf8), maxDepth: ProtocolLimits().maxDepth),
              let text = value["text"]?.stringValue,
              text.contains(where: { !$0.isWhitespace })
        else { return genericMessageBody }
        return text
    }

    /// `text` cut to `maxBodyCharacters`, the cut marked with "…". Cutting by characters, not
    /// bytes, never splits an emoji or a letter from its accent.
    public static func truncated(_ text: String) -> String {
        guard text.count > maxBodyCharacters else { return text }
        return String(text.prefix(maxBodyCharacters - 1)) + "…"
    }
}

/// One push notification as the webhook receives it (the fields of `PushPayload`'s example).
public struct PushNotice: Sendable, Equatable {
    public var id, user, kind, title, body: String
    public var badge: UInt64
    public var target, from: String
    public var time: Int64

    public init(id: String, user: String, kind: String, title: String, body: String, badge: UInt64, target: String, from: String, time: Int64) {
        (self.id, self.user, self.kind, self.title, self.body) = (id, user, kind, title, body)
        (self.badge, self.target, self.from, self.time) = (badge, target, from, time)
    }

    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("user", .string(user)), ("kind", .string(kind)), ("title", .string(title)), ("body", .string(body)),
            ("badge", .integer(badge)), ("target", .string(target)), ("from", .string(from)), ("time", .integer(time)),
        ])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            id: try json.requiredString("id"), user: try json.requiredString("user"), kind: try json.requiredString("kind"),
            title: try json.requiredString("title"), body: try json.requiredString("body"), badge: try json.requiredUInt64("badge"),
            target: try json.requiredString("target"), from: try json.requiredString("from"), time: try json.requiredInt64("time"))
    }
}

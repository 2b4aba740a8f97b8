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
        var output: [UInt8] = []
        JSONWriter.append(.object([
            ("id", .string(id)), ("user", .string(user)), ("kind", .string(kind)), ("title", .string(title)),
            ("body", .string(truncated(body))), ("badge", .integer(badge)), ("target", .string(target)),
            ("from", .string(from)), ("time", .integer(time)),
        ]), to: &output)
        return output
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

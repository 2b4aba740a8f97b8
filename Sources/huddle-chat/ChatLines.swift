import HuddleClient
import HuddleProtocol

/// The lines huddle-chat prints, one per reply or event, in a stable and parseable shape:
/// a bracketed tag, then the details — `[chat alice~bob #12] alice: hello`,
/// `[friend-request] from carol: "coffee?"`, `[error] user_not_found: no user dave`, `[ok] …`.
/// Everything another user wrote is cleaned of control characters first, so no message can
/// move the cursor or recolour the terminal.
enum ChatLines {
    static func ok(_ text: String) -> String { "[ok] \(text)" }

    static func error(_ error: HuddleClientError) -> String {
        switch error {
        case .server(let code, let message, let retryAfter):
            return "[error] \(code): \(hint(code: code, message: clean(message), retryAfter: retryAfter))"
        case .timedOut: return "[error] timed_out: no reply from the server in time"
        case .connectionLost: return "[error] connection_lost: the connection dropped before the reply; try again"
        case .closed: return "[error] not_connected: the client is not connected (see the [connection] lines)"
        case .overloaded: return "[error] overloaded: too many requests waiting for the server; try again shortly"
        case .invalidReply(let reason): return "[error] invalid_reply: \(clean(reason))"
        }
    }

    /// The server's message, with what to do next where the server's words name protocol ops.
    private static func hint(code: String, message: String, retryAfter: Int64?) -> String {
        switch code {
        case "not_authenticated": return "sign in first: /signup USER EMAIL PASSWORD or /login USER PASSWORD"
        case "already_authenticated": return "\(message) (/logout first to switch users)"
        case "rate_limited", "too_many_attempts", "busy":
            return retryAfter.map { "\(message) (try again in \(max(1, ($0 + 999) / 1000)) s)" } ?? message
        case "post_not_found": return "\(message) (/feed lists the posts you can see)"
        case "not_on": return "\(message) (/activities shows what is on)"
        case "place_not_found": return "\(message) (/places lists yours)"
        case "too_many_places": return "\(message) (/places, then /place-remove ID)"
        case "memory_not_found", "point_not_found", "too_many_memories", "too_many_points", "photo_not_found":
            return memoryHint(code: code, message: message) ?? message
        default: return message
        }
    }

    static func usage(_ message: String) -> String { "[error] usage: \(message)" }

    // MARK: Publications

    /// `[chat alice~bob #12] alice: hello` for a chat room, `[room:lobby #3] bob: hi` otherwise.
    static func publication(_ publication: ChannelPublication) -> String {
        "[\(tag(publication.channel)) #\(publication.offset)] \(clean(publication.from ?? "server")): \(text(of: publication))"
    }

    /// A message shown from history when a chat is opened: as a live one, tagged `history`.
    static func history(_ publication: ChannelPublication) -> String {
        "[history \(publication.channel.dropFirst("chat:".count)) #\(publication.offset)] \(clean(publication.from ?? "server")): \(text(of: publication))"
    }

    /// A publication that became a tombstone (an operator's removal, a deleted account).
    static func removed(channel: String, offset: UInt64) -> String {
        "[\(tag(channel)) #\(offset)] (removed)"
    }

    /// A friend's new profile: `[profile] alice is now "Alice A."` (or has none).
    static func profile(user: String, _ profile: UserProfile) -> String {
        let name = profile.displayName.map { "\"\(clean($0))\"" } ?? "no display name"
        return "[profile] \(clean(user)) is now \(name)\(profile.avatar == nil ? "" : ", with an avatar")"
    }

    /// A message typed while disconnected: kept, and sent when the connection is back.
    static func pending(_ text: String, in channel: String) -> String {
        "[pending \(tag(channel))] \(clean(text)) (sent when the connection is back)"
    }

    private static func tag(_ channel: String) -> String {
        channel.hasPrefix("chat:") ? "chat \(channel.dropFirst("chat:".count))" : clean(channel)
    }

    /// A chat message's `text`, or its data as JSON when it has another shape.
    static func text(of publication: ChannelPublication) -> String {
        if let text = publication.data["text"]?.stringValue { return clean(text) }
        return clean(JSONWriter.serialize(publication.data))
    }

    // MARK: Inbox notices

    static func notice(_ notice: InboxNotice, me: String) -> String {
        switch notice {
        case .friendRequest(let from, let to, let message, _):
            return from == me
                ? "[friend-request] sent to \(clean(to)): \(quoted(message))"
                : "[friend-request] from \(clean(from)): \(quoted(message)) (/accept \(clean(from)) or /decline \(clean(from)))"
        case .friendAccepted(let from, let to):
            return "[friend] you and \(clean(from == me ? to : from)) are now friends"
        case .friendDeclined(let from, let to):
            return from == me ? "[friend] \(clean(to)) declined your request" : "[friend] you declined \(clean(from))'s request"
        case .friendCancelled(let from, let to):
            return from == me ? "[friend] you withdrew your request to \(clean(to))" : "[friend] \(clean(from)) withdrew their request"
        case .friendRemoved(let user, let friend):
            return user == me ? "[friend] you removed \(clean(friend))" : "[friend] \(clean(user)) removed you"
        case .match(let user, let activity):
            return match(user: user, activity: activity)
        case .matchEnded(let user, let activity, let reason):
            return matchEnded(user: user, activity: activity, reason: reason)
        case .other(let type, let data):
            return "[notice \(clean(type))] \(clean(JSONWriter.serialize(data)))"
        }
    }

    // MARK: Connection

    /// `server`: the URL connected to, named when there are several.
    static func connected(_ user: HuddleUser?, server: String? = nil) -> String {
        let on = server.map { " to \(clean($0))" } ?? ""
        guard let user else { return "[connection] connected\(on), not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD" }
        return "[connection] connected\(on) as \(clean(user.username))"
    }

    /// `next`: the URL of the next attempt, named when there are several.
    static func reconnecting(attempt: Int, delayMilliseconds: Int64, reason: String, next: String? = nil) -> String {
        let tenths = (max(delayMilliseconds, 0) + 50) / 100
        let seconds = "\(tenths / 10).\(tenths % 10)"
        let target = next.map { " to \(clean($0))" } ?? ""
        return attempt == 1
            ? "[connection] lost (\(clean(reason))); reconnecting\(target) in \(seconds) s"
            : "[connection] attempt \(attempt - 1) failed (\(clean(reason))); next\(target) in \(seconds) s"
    }

    static func notRecovered(_ channel: String) -> String {
        "[warning] messages in \(clean(channel)) were missed and could not be replayed; the latest are shown from now on"
    }

    static func subscriptionEnded(_ channel: String, _ error: HuddleClientError) -> String {
        "[warning] no longer following \(clean(channel)): \(error)"
    }

    // MARK: Text from others

    static func quoted(_ text: String) -> String { "\"\(clean(text))\"" }

    /// `text` with every control character (escape sequences, newlines, carriage returns)
    /// replaced, so one line stays one line and the terminal obeys only huddle-chat.
    static func clean(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var cleaned = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            cleaned.append(isUnsafe(scalar) ? "\u{FFFD}" : scalar)
        }
        return String(cleaned)
    }

    /// Control characters, and the bidirectional overrides that can make text display in an
    /// order other than the one it has.
    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }
}

import HuddleClient
import HuddleProtocol

/// Activities and matches: `[match] bob is up for Coffee too`.
extension ChatLines {
    static func match(user: String, activity: String) -> String {
        "[match] \(clean(user)) is up for \(clean(activity)) too"
    }

    static func matchEnded(user: String, activity: String, reason: MatchEndReason) -> String {
        let why: String
        switch reason {
        case .off: why = "one of you turned it off"
        case .expired: why = "it expired"
        case .unfriended: why = "you are no longer friends"
        case .audience: why = "one of you chose other friends for it"
        case .other(let text): why = clean(text)
        }
        return "[match-ended] \(clean(activity)) with \(clean(user)) is over (\(why))"
    }

    /// `Coffee until 12:42, for every friend`.
    static func status(_ status: ActivityStatus) -> String {
        let audience = status.audience.map { "for " + $0.map(clean).joined(separator: ", ") } ?? "for every friend"
        return "\(clean(status.activity)) until \(ChatClock.time(status.expiresAt)), \(audience)"
    }

    static func activities(_ list: ActivityList) -> String {
        let on = list.mine.isEmpty ? "none on (/on ACTIVITY)" : "on: " + list.mine.map(status).joined(separator: "; ")
        return "[activities] \(list.available.map(clean).joined(separator: ", ")); \(on)"
    }

    static func matches(_ matches: [ActivityMatch]) -> String {
        guard !matches.isEmpty else { return "[matches] none right now (/on ACTIVITY to be up for something)" }
        return "[matches] " + matches.map { "\(clean($0.user)): \(clean($0.activity)) (since \(ChatClock.time($0.since)))" }.joined(separator: ", ")
    }
}

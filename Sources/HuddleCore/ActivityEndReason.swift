/// Why a status went off or a match ended, as `match_ended` notices spell it. Logged inside
/// commands by its raw value, so the values must never change.
public enum ActivityEndReason: String, Sendable, CaseIterable {
    /// One of the two turned the activity off.
    case off
    /// One of the two statuses expired.
    case expired
    /// The two stopped being friends.
    case unfriended
    /// One of the two turned the activity on again for an audience that leaves the other out.
    case audience
}

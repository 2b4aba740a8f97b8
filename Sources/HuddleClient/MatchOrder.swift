/// How `matches` orders its list.
public enum MatchOrder: Sendable, Equatable {
    /// Newest first.
    case time
    /// By activity in the server list's order, newest first within one.
    case activity
}

/// A current match as its user sees it: with whom, on what, since when.
public struct ActivityMatch: Sendable, Equatable {
    /// The other user.
    public var user: Username
    public var activity: String
    public var since: Int64

    public init(user: Username, activity: String, since: Int64) {
        self.user = user
        self.activity = activity
        self.since = since
    }
}

import HuddleCore
import HuddleStore

/// The settings the command line gives by name — the `--fsync` policy, the `--activities`
/// list — so that it configures the server without naming the store's or the core's types.
extension ServerConfiguration {
    /// The policy a `--fsync` word names (`always`, `everysec`, `no`), nil for any other word.
    public static func syncPolicy(named name: String) -> SyncPolicy? {
        switch name {
        case "always": return .always
        case "everysec": return .everySecond
        case "no": return .never
        default: return nil
        }
    }

    /// The activity list a server has unless told otherwise.
    public static let defaultActivityNames = ActivitySettings.defaultNames

    /// Why `names` cannot be the activity list, or nil when it can.
    public static func activitiesProblem(_ names: [String]) -> String? {
        ActivitySettings.problem(with: names)
    }
}

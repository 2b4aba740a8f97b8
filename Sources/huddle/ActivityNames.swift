import HuddleServer

/// `--activities`: the server's activity list (protocol.md, "Activities and matches").
extension Serve {
    static let defaultActivities = ServerConfiguration.defaultActivityNames.joined(separator: ",")

    /// The names between commas, spaces around each dropped. An empty entry is kept, so
    /// `activitiesProblem` refuses "Gym,,Eat" instead of quietly reading two names.
    static func activityNames(_ list: String) -> [String] {
        list.split(separator: ",", omittingEmptySubsequences: false).map { entry in
            let start = entry.firstIndex { !$0.isWhitespace } ?? entry.endIndex
            let end = entry.lastIndex { !$0.isWhitespace }.map(entry.index(after:)) ?? start
            return String(entry[start..<max(start, end)])
        }
    }

    /// Why `list` cannot be the activity list, or nil when it can.
    static func activitiesProblem(_ list: String) -> String? {
        ServerConfiguration.activitiesProblem(activityNames(list))
    }
}

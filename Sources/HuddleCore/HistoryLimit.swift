/// How much of a channel's past is kept: the newest `maxPublications`, none older than `maxAge`.
public struct HistoryLimit: Sendable, Equatable {
    public var maxPublications: Int
    public var maxAgeMilliseconds: Int64

    public init(maxPublications: Int, maxAgeMilliseconds: Int64) {
        self.maxPublications = maxPublications
        self.maxAgeMilliseconds = maxAgeMilliseconds
    }

    private static let day: Int64 = 24 * 60 * 60 * 1000

    /// protocol.md's table.
    public static func standard(for namespace: ChannelNamespace) -> HistoryLimit {
        switch namespace {
        case .inbox: HistoryLimit(maxPublications: 1000, maxAgeMilliseconds: 30 * day)
        case .chat: HistoryLimit(maxPublications: 10_000, maxAgeMilliseconds: 365 * day)
        case .loc: HistoryLimit(maxPublications: 100, maxAgeMilliseconds: day)
        case .room: HistoryLimit(maxPublications: 1000, maxAgeMilliseconds: day)
        }
    }
}

/// The server-configured activity list and how long a status lasts (protocol.md, "Activities
/// and matches").
///
/// Only `handle` reads these: every durable effect (statuses, matches) is logged as explicit
/// commands, so a server restarted with another list replays its log to the same state. An
/// activity dropped from the list stays on for whoever has it until it expires or is turned
/// off; it can no longer be turned on.
public struct ActivitySettings: Sendable {
    /// The names users pick from, in the order clients show them. Set through `names`, which
    /// keeps the case-insensitive lookup in step.
    public var names: [String] {
        didSet { foldedNames = names.map(Self.folded) }
    }
    /// A status without `expires_in` lasts this long: statuses mean *now*.
    public var defaultExpiryMilliseconds: Int64 = 2 * 60 * 60_000
    /// The longest `expires_in` allowed.
    public var maxExpiryMilliseconds: Int64 = 24 * 60 * 60_000

    private var foldedNames: [String]

    public static let defaultNames = ["Gym", "Coffee", "Eat", "Study", "Movie", "Shopping", "Anything"]
    /// The activity that matches every other one, when the list has it (in any case).
    public static let wildcardName = "Anything"
    public static let maxNames = 64
    public static let nameLengths = 1...32

    public init(names: [String] = ActivitySettings.defaultNames) {
        self.names = names
        foldedNames = names.map(Self.folded)
    }

    /// The list's spelling of `text`, compared case-insensitively; nil when it is not listed.
    public func canonicalName(of text: String) -> String? {
        let folded = Self.folded(text)
        return foldedNames.firstIndex(of: folded).map { names[$0] }
    }

    /// The list's spelling of "Anything", if it is listed.
    public var wildcard: String? { canonicalName(of: Self.wildcardName) }

    /// Why `names` cannot be the activity list (for the command line), or nil when it can:
    /// 1–64 names of 1–32 characters, no control characters, no space at either end, and no
    /// two equal when case is ignored.
    public static func problem(with names: [String]) -> String? {
        guard (1...maxNames).contains(names.count) else { return "give 1 to \(maxNames) activities, not \(names.count)" }
        var seen = Set<String>()
        for name in names {
            guard nameLengths.contains(name.unicodeScalars.count) else {
                return "activity \"\(name)\" must be \(nameLengths.lowerBound) to \(nameLengths.upperBound) characters"
            }
            guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
                  name.first?.isWhitespace == false, name.last?.isWhitespace == false
            else { return "activity \"\(name)\" has a control character or a space at an end" }
            guard seen.insert(folded(name)).inserted else { return "activity \"\(name)\" is listed twice (case is ignored)" }
        }
        return nil
    }

    private static func folded(_ name: String) -> String { name.lowercased() }
}

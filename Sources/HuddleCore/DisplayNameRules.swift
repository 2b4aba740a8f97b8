/// What a display name may be (protocol.md, "Profiles"): 1–64 characters (grapheme clusters)
/// in at most 256 bytes of UTF-8, no whitespace at either end, and none of the code points
/// that make a name lie about itself or break a layout: controls, format characters (bidi
/// overrides, invisible separators; the zero-width joiner of emoji sequences excepted),
/// surrogates, private-use and unassigned code points, line and paragraph separators.
enum DisplayNameRules {
    static let maxCharacters = 64
    static let maxBytes = 256

    /// Why `name` is not a display name; nil when it is one.
    static func violation(of name: String) -> String? {
        guard (1...maxCharacters).contains(name.count), name.utf8.count <= maxBytes else {
            return "a display name is 1–\(maxCharacters) characters (at most \(maxBytes) bytes of UTF-8)"
        }
        if let first = name.unicodeScalars.first, first.properties.isWhitespace { return "a display name does not start with whitespace" }
        if let last = name.unicodeScalars.last, last.properties.isWhitespace { return "a display name does not end with whitespace" }
        for scalar in name.unicodeScalars where !isAllowed(scalar) {
            return "a display name has no control, format, private-use or unassigned characters (U+\(String(scalar.value, radix: 16, uppercase: true)))"
        }
        return nil
    }

    private static let zeroWidthJoiner: Unicode.Scalar = "\u{200D}"

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator:
            return false
        case .format:
            return scalar == zeroWidthJoiner
        default:
            return true
        }
    }

    /// The form `user_search` compares: lowercased, so "AL" finds "Alice".
    static func folded(_ name: String) -> String { name.lowercased() }
}

/// Reading the words of a command: ids, coordinates, durations. A word that does not read is
/// an error line naming what was expected, before anything goes to the server.
enum CommandArguments {
    /// A post, comment or place id: 1, 2, 3…
    static func id(_ word: String) -> UInt64? {
        guard let value = UInt64(word), value > 0 else { return nil }
        return value
    }

    /// A decimal number (degrees, metres).
    static func number(_ word: String) -> Double? {
        guard let value = Double(word), value.isFinite else { return nil }
        return value
    }

    /// `90s`, `30m`, `2h`: seconds.
    static func duration(_ word: String) -> Int? {
        guard let unit = word.last, let amount = Int(word.dropLast()), amount > 0 else { return nil }
        switch unit {
        case "s": return amount
        case "m": return amount.multipliedReportingOverflow(by: 60).overflow ? nil : amount * 60
        case "h": return amount.multipliedReportingOverflow(by: 3600).overflow ? nil : amount * 3600
        default: return nil
        }
    }

    /// `/on`'s options after the activity: `for bob,carol` (the audience) and `for 30m` (how
    /// long), each at most once, in either order. A username starts with a letter, a duration
    /// with a digit, so the two never mix up. Nil when the words do not fit.
    static func activityOptions(_ text: String?) -> (friends: [String]?, seconds: Int?)? {
        let words = (text ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.count % 2 == 0 else { return nil }
        var friends: [String]?
        var seconds: Int?
        for index in stride(from: 0, to: words.count, by: 2) {
            guard words[index].lowercased() == "for" else { return nil }
            let value = words[index + 1]
            if value.first?.isNumber == true {
                guard seconds == nil, let parsed = duration(value) else { return nil }
                seconds = parsed
            } else {
                let names = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.lowercased() }
                guard friends == nil, !names.contains(where: \.isEmpty) else { return nil }
                friends = names
            }
        }
        return (friends, seconds)
    }
}

extension ChatLines {
    /// A word of a command that does not read as what it should be.
    static func badArgument(_ text: String) -> String { "[error] bad_argument: \(text)" }
}

/// One slash command of huddle-chat: its name, its arguments, a line of help, and what it does.
/// Commands live in tables, one file per group (accounts, friends, chat…), so a feature adds
/// its commands as one new file and one line in `CommandTable`.
struct ChatCommand: Sendable {
    let name: String
    /// Required arguments, by name (for the usage line).
    let arguments: [String]
    /// An optional last argument that takes the rest of the line, spaces and all (a message).
    let rest: String?
    let summary: String
    /// Runs with the parsed arguments; calls `done` once its replies are shown, so the next
    /// command starts only then and output stays in command order.
    let run: @Sendable (_ app: ChatApp, _ arguments: [String], _ done: @escaping () -> Void) -> Void

    init(
        _ name: String, _ arguments: [String] = [], rest: String? = nil, summary: String,
        run: @escaping @Sendable (_ app: ChatApp, _ arguments: [String], _ done: @escaping () -> Void) -> Void
    ) {
        self.name = name
        self.arguments = arguments
        self.rest = rest
        self.summary = summary
        self.run = run
    }

    var usage: String {
        (["/" + name] + arguments + (rest.map { ["[\($0)]"] } ?? [])).joined(separator: " ")
    }

    /// The arguments in `text` (what follows the command name): exactly the required ones,
    /// plus the rest of the line when the command takes one (absent: not in the list). Nil
    /// when they do not fit.
    func parse(_ text: Substring) -> [String]? {
        var remaining = text.drop { $0 == " " || $0 == "\t" }
        var parsed: [String] = []
        for _ in arguments {
            let word = remaining.prefix { $0 != " " && $0 != "\t" }
            guard !word.isEmpty else { return nil }
            parsed.append(String(word))
            remaining = remaining.dropFirst(word.count).drop { $0 == " " || $0 == "\t" }
        }
        if rest != nil {
            var end = remaining.endIndex
            while end > remaining.startIndex, [" ", "\t"].contains(remaining[remaining.index(before: end)]) {
                end = remaining.index(before: end)
            }
            if end > remaining.startIndex { parsed.append(String(remaining[..<end])) }
        } else if !remaining.isEmpty {
            return nil
        }
        return parsed
    }
}

/// Every command huddle-chat knows, by group; `/help` lists them in this order.
enum CommandTable {
    static let groups: [(title: String, commands: [ChatCommand])] = [
        ("account", ChatCommand.accountCommands),
        ("friends", ChatCommand.friendCommands),
        ("chat", ChatCommand.chatCommands),
        ("general", ChatCommand.generalCommands),
    ]

    static func command(named name: String) -> ChatCommand? {
        for group in groups {
            if let command = group.commands.first(where: { $0.name == name }) { return command }
        }
        return nil
    }
}

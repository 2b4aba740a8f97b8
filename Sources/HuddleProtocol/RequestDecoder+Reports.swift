/// The `report` op's arguments (protocol.md, "Reports").
extension RequestDecoder {
    static func report(_ arguments: RequestArguments) throws(RequestError) -> Operation {
        let target: ReportTarget
        switch try arguments.string("kind") {
        case "user":
            target = .user(try arguments.string("user"))
        case "message":
            target = .message(channel: try arguments.string("channel"), offset: try number(arguments, "offset"))
        case "post":
            target = .post(try number(arguments, "post"))
        case "comment":
            target = .comment(post: try number(arguments, "post"), comment: try number(arguments, "comment"))
        default:
            throw arguments.badRequest("kind must be user, message, post or comment")
        }
        let reason = try arguments.word("reason", from: ReportVocabulary.reasons)
        let text = try arguments.reportText("text")
        return .report(target: target, reason: reason, text: text)
    }

    private static func number(_ arguments: RequestArguments, _ name: StaticString) throws(RequestError) -> UInt64 {
        guard let value = arguments.value(name) else { throw arguments.badRequest("\(name) is required") }
        guard let number = value.uint64Value, number > 0 else { throw arguments.badRequest("\(name) must be a positive integer") }
        return number
    }
}

extension RequestArguments {
    /// A required string from `vocabulary` (a report's reason, a resolution's action).
    func word(_ name: StaticString, from vocabulary: Set<String>) throws(RequestError) -> String {
        let word = try string(name)
        guard vocabulary.contains(word) else {
            throw badRequest("\(name) must be one of \(vocabulary.sorted().joined(separator: ", "))")
        }
        return word
    }

    /// An optional free text of a report or a resolution: "" when absent, at most
    /// `ReportVocabulary.maxTextLength` characters.
    func reportText(_ name: StaticString) throws(RequestError) -> String {
        let text = try optionalString(name) ?? ""
        guard Self.hasLength(text, in: 0...ReportVocabulary.maxTextLength) else {
            throw badRequest("\(name) must be at most \(ReportVocabulary.maxTextLength) characters")
        }
        return text
    }
}

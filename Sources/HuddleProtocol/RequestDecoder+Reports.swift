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
        let reason = try arguments.string("reason")
        guard ReportVocabulary.reasons.contains(reason) else {
            throw arguments.badRequest("reason must be one of \(ReportVocabulary.reasons.sorted().joined(separator: ", "))")
        }
        let text = try arguments.optionalString("text") ?? ""
        guard RequestArguments.hasLength(text, in: 0...ReportVocabulary.maxTextLength) else {
            throw arguments.badRequest("text must be at most \(ReportVocabulary.maxTextLength) characters")
        }
        return .report(target: target, reason: reason, text: text)
    }

    private static func number(_ arguments: RequestArguments, _ name: StaticString) throws(RequestError) -> UInt64 {
        guard let value = arguments.value(name) else { throw arguments.badRequest("\(name) is required") }
        guard let number = value.uint64Value, number > 0 else { throw arguments.badRequest("\(name) must be a positive integer") }
        return number
    }
}

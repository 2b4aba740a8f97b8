/// The feed ops' arguments (protocol.md, "Feed"), each refusal a `bad_request` naming the field.
extension RequestDecoder {
    /// `post`: `text`, and the optional `activity` label and planned time `at`.
    static func feedPost(_ arguments: RequestArguments, limits: ProtocolLimits) throws(RequestError) -> Operation {
        let text = try feedText(arguments, maxLength: limits.maxPostLength)
        let activity = try arguments.optionalString("activity")
        if let activity, !RequestArguments.hasLength(activity, in: 1...limits.maxActivityLength) {
            throw arguments.badRequest("activity must be 1 to \(limits.maxActivityLength) characters")
        }
        var at: Int64?
        if let value = arguments.value("at"), value != .null {
            guard let time = value.int64Value, time >= 0 else {
                throw arguments.badRequest("at must be a time in milliseconds since the Unix epoch (a non-negative integer)")
            }
            at = time
        }
        return .post(text: text, activity: activity, at: at)
    }

    /// A post's or comment's `text`: required, 1…`maxLength` characters.
    static func feedText(_ arguments: RequestArguments, maxLength: Int) throws(RequestError) -> String {
        let text = try arguments.string("text")
        guard RequestArguments.hasLength(text, in: 1...maxLength) else {
            throw arguments.badRequest("text must be 1 to \(maxLength) characters")
        }
        return text
    }

    /// `post`: a post id, a positive integer.
    static func postID(_ arguments: RequestArguments) throws(RequestError) -> UInt64 {
        guard let value = arguments.value("post") else { throw arguments.badRequest("post is required") }
        guard let id = value.uint64Value, id > 0 else { throw arguments.badRequest("post must be a post id (a positive integer)") }
        return id
    }

    /// `before`: optional; an id from a previous page's `next_before`, a positive integer.
    static func feedCursor(_ arguments: RequestArguments) throws(RequestError) -> UInt64? {
        guard let value = arguments.value("before"), value != .null else { return nil }
        guard let before = value.uint64Value, before > 0 else {
            throw arguments.badRequest("before must be a next_before from an earlier page (a positive integer)")
        }
        return before
    }

    static func feedLimit(_ arguments: RequestArguments, limits: ProtocolLimits) throws(RequestError) -> Int {
        guard let value = arguments.value("limit"), value != .null else { return limits.defaultFeedLimit }
        guard let limit = value.int64Value, limit >= 1, limit <= Int64(limits.maxFeedLimit) else {
            throw arguments.badRequest("limit must be an integer from 1 to \(limits.maxFeedLimit)")
        }
        return Int(limit)
    }
}

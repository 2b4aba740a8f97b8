/// A reply to a request (protocol.md, "Reply"): `{"id", "ok": true, "result"}` or
/// `{"id", "ok": false, "error": {"code", "message"[, "retry_after_ms"]}}`. The `result` stays a
/// `JSONValue` here: what it holds depends on the op, which the requester knows
/// (`ReplyResult` and the result types read it).
public struct ServerReply: Sendable, Equatable {
    /// The request's id; nil when the request's own id could not be read.
    public var id: String?
    public var outcome: Outcome

    public enum Outcome: Sendable, Equatable {
        case success(JSONValue)
        case failure(ReplyError)
    }

    public init(id: String?, outcome: Outcome) {
        self.id = id
        self.outcome = outcome
    }

    /// The reply as one text message.
    public var message: [UInt8] {
        switch outcome {
        case .success(let result):
            return ServerMessage.success(id: id ?? "", result: result)
        case .failure(let error):
            return ServerMessage.failure(id: id, code: error.code, message: error.message, retryAfterMilliseconds: error.retryAfterMilliseconds)
        }
    }

    /// The reply in `message`; nil when it is no reply (an event).
    public init?(json message: JSONValue) throws(WireFormatError) {
        guard let ok = message["ok"] else { return nil }
        guard let succeeded = ok.boolValue else { throw WireFormatError("`ok` is not a boolean") }
        let id = try message.optionalString("id")
        if succeeded {
            self.init(id: id, outcome: .success(message["result"] ?? .object([])))
        } else {
            self.init(id: id, outcome: .failure(try ReplyError(json: try message.requiredObject("error"))))
        }
    }
}

/// A request's error (protocol.md, "Errors"): `code` is stable snake_case, `message` is for
/// humans; `retryAfterMilliseconds` comes with `rate_limited`, `too_many_attempts` and `busy`.
public struct ReplyError: Sendable, Equatable {
    public var code: String
    public var message: String
    public var retryAfterMilliseconds: Int64?

    public init(code: String, message: String, retryAfterMilliseconds: Int64? = nil) {
        self.code = code
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            code: try json.requiredString("code"), message: try json.optionalString("message") ?? "",
            retryAfterMilliseconds: try json.optionalInt64("retry_after_ms"))
    }

    /// The body of an HTTP API error response: `{"error": {"code", "message"[, "retry_after_ms"]}}`.
    public var httpBody: [UInt8] {
        var members: [(String, JSONValue)] = [("code", .string(code)), ("message", .string(message))]
        if let retryAfterMilliseconds { members.append(("retry_after_ms", .integer(retryAfterMilliseconds))) }
        return JSONWriter.bytes(.object([("error", .object(members))]))
    }
}

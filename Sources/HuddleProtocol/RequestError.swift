/// Why a request could not be decoded, as the error reply will say it (protocol.md, "General
/// errors").
public struct RequestError: Error, Sendable, Equatable {
    /// The request's id when it could be read and is valid, so the reply can carry it; nil
    /// makes the reply's `"id"` null.
    public var id: String?
    /// `bad_json`, `bad_request`, `unknown_op`, `too_deep` or `payload_too_large`.
    public var code: String
    /// For people; names the offending field, e.g. "channel must be a string".
    public var message: String

    public init(id: String?, code: String, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }
}

/// The `code`s a decoding failure can have.
enum RequestErrorCode {
    static let badJSON = "bad_json"
    static let badRequest = "bad_request"
    static let unknownOp = "unknown_op"
    static let tooDeep = "too_deep"
    static let payloadTooLarge = "payload_too_large"
}

/// The bodies and paths of the HTTP API's moderation calls (protocol.md, "Moderation").
extension APIRequestDecoder {
    /// The longest suspension `reason`, in characters.
    public static let maxSuspensionReasonLength = 500

    /// `POST /api/v1/users/NAME/ACTION`: the name and the action, or nil for another path.
    public static func userAction(_ path: String) -> (user: String, action: String)? {
        let prefix = "/api/v1/users/"
        guard path.hasPrefix(prefix) else { return nil }
        let parts = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// `{"reason": "spam", "until": 1763800000000}`: `reason` 1–500 characters, `until`
    /// (optional) milliseconds since the Unix epoch.
    public static func suspension(_ body: [UInt8], limits: ProtocolLimits) -> Result<(reason: String, until: Int64?), RequestError> {
        Result { () throws(RequestError) -> (reason: String, until: Int64?) in
            let arguments = RequestArguments(members: try parseBody(body, limits: limits), id: nil)
            let reason = try arguments.string("reason")
            guard RequestArguments.hasLength(reason, in: 1...maxSuspensionReasonLength) else {
                throw arguments.badRequest("reason must be 1 to \(maxSuspensionReasonLength) characters")
            }
            guard let until = arguments.value("until"), until != .null else { return (reason, nil) }
            guard let milliseconds = until.int64Value else { throw arguments.badRequest("until must be an integer (milliseconds since the epoch)") }
            return (reason, milliseconds)
        }
    }
}

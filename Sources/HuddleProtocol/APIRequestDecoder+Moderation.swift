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

/// The reports calls.
extension APIRequestDecoder {
    public static let defaultReportPage = 50
    public static let maxReportPage = 100

    /// `POST /api/v1/reports/ID/resolve`: the id, or nil for another path.
    public static func reportToResolve(_ path: String) -> UInt64?? {
        let prefix = "/api/v1/reports/"
        guard path.hasPrefix(prefix), path.hasSuffix("/resolve") else { return nil }
        let id = path.dropFirst(prefix.count).dropLast("/resolve".count)
        return .some(UInt64(id).flatMap { $0 > 0 ? $0 : nil })
    }

    /// `?status=open|resolved|all&after=ID&limit=N`: `open` nil for all; defaults open, 0, 50.
    public static func reportsQuery(_ query: String) -> Result<(open: Bool?, after: UInt64, limit: Int), RequestError> {
        Result { () throws(RequestError) -> (open: Bool?, after: UInt64, limit: Int) in
            let items = queryItems(query)
            func value(_ name: String) -> String? { items.first { $0.0 == name }?.1 }
            let open: Bool?
            switch value("status") ?? "open" {
            case "open": open = true
            case "resolved": open = false
            case "all": open = nil
            default: throw RequestError(id: nil, code: RequestErrorCode.badRequest, message: "status must be open, resolved or all")
            }
            guard let after = UInt64(value("after") ?? "0"), let limit = Int(value("limit") ?? "\(defaultReportPage)"),
                  (1...maxReportPage).contains(limit)
            else {
                throw RequestError(id: nil, code: RequestErrorCode.badRequest, message: "after must be a report id and limit 1…\(maxReportPage)")
            }
            return (open, after, limit)
        }
    }

    /// `{"action": "content_removed", "note": "…"}`: `action` one of `ReportVocabulary.actions`,
    /// `note` (optional) at most 1000 characters.
    public static func resolution(_ body: [UInt8], limits: ProtocolLimits) -> Result<(action: String, note: String), RequestError> {
        Result { () throws(RequestError) -> (action: String, note: String) in
            let arguments = RequestArguments(members: try parseBody(body, limits: limits), id: nil)
            let action = try arguments.word("action", from: ReportVocabulary.actions)
            let note = try arguments.reportText("note")
            return (action, note)
        }
    }
}

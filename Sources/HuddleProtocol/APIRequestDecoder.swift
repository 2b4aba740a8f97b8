/// Decodes the bodies and query strings of the server-side HTTP API (protocol.md, "HTTP API").
///
/// Bodies follow the same rules as requests (a JSON object within the depth limit, arguments
/// by type), with no `id`: errors always have a nil id.
public enum APIRequestDecoder {
    /// `POST /api/v1/publish`: `{"channel": …, "data": …, "type": …}`; `type` defaults to
    /// "message", `data` comes back in compact form, at most `limits.maxDataBytes`.
    public static func publish(
        _ body: [UInt8], limits: ProtocolLimits
    ) -> Result<(channel: String, type: String, data: String), RequestError> {
        Result { () throws(RequestError) -> (channel: String, type: String, data: String) in
            let arguments = RequestArguments(members: try parseBody(body, limits: limits), id: nil)
            return (
                channel: try arguments.string("channel"),
                type: try arguments.publicationType(),
                data: try arguments.publicationData(maxBytes: limits.maxDataBytes)
            )
        }
    }

    /// `POST /api/v1/disconnect`: `{"user": …}`; returns the user.
    public static func disconnect(_ body: [UInt8], limits: ProtocolLimits) -> Result<String, RequestError> {
        Result { () throws(RequestError) -> String in
            try RequestArguments(members: try parseBody(body, limits: limits), id: nil).string("user")
        }
    }

    /// `POST /api/v1/remove`: `{"channel": …, "offset": …}` (a publication), `{"post": …}` or
    /// `{"post": …, "comment": …}`.
    public static func removal(_ body: [UInt8], limits: ProtocolLimits) -> Result<RemovedContent, RequestError> {
        Result { () throws(RequestError) -> RemovedContent in
            let arguments = RequestArguments(members: try parseBody(body, limits: limits), id: nil)
            if arguments.value("post") != nil {
                guard arguments.value("channel") == nil, arguments.value("offset") == nil else {
                    throw arguments.badRequest("give either post, or channel and offset")
                }
                let post = try arguments.positiveInteger("post")
                if arguments.value("comment") != nil { return .comment(post: post, comment: try arguments.positiveInteger("comment")) }
                return .post(post)
            }
            return .publication(channel: try arguments.string("channel"), offset: try arguments.positiveInteger("offset"))
        }
    }

    /// Splits a query string (what follows `?`, e.g. `channel=room%3Alobby&limit=20`) into its
    /// name/value pairs in order, percent-decoding both and reading `+` as a space. A pair
    /// without `=` has an empty value; empty pairs (`a=1&&b=2`) are skipped. A `%` not followed
    /// by two hex digits is kept as it is; decoded bytes that are not UTF-8 become U+FFFD.
    public static func queryItems(_ query: String) -> [(String, String)] {
        var items: [(String, String)] = []
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                items.append((
                    percentDecoded(pair[pair.startIndex..<equals]),
                    percentDecoded(pair[pair.index(after: equals)...])
                ))
            } else {
                items.append((percentDecoded(pair), ""))
            }
        }
        return items
    }

    static func parseBody(_ body: [UInt8], limits: ProtocolLimits) throws(RequestError) -> [(String, JSONValue)] {
        try body.withUnsafeBytes { bytes in
            Result { () throws(RequestError) -> [(String, JSONValue)] in
                try RequestDecoder.parseObject(bytes, limits: limits, recoverID: false)
            }
        }.get()
    }

    private static func percentDecoded(_ encoded: Substring.UTF8View) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(encoded.count)
        var index = encoded.startIndex
        while index != encoded.endIndex {
            let byte = encoded[index]
            index = encoded.index(after: index)
            switch byte {
            case UInt8(ascii: "+"):
                decoded.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != encoded.endIndex, let high = hexValue(encoded[index]) else {
                    decoded.append(byte)
                    continue
                }
                let next = encoded.index(after: index)
                guard next != encoded.endIndex, let low = hexValue(encoded[next]) else {
                    decoded.append(byte)
                    continue
                }
                decoded.append(high << 4 | low)
                index = encoded.index(after: next)
            default:
                decoded.append(byte)
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
    }
}

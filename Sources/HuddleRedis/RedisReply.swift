/// One Redis reply (RESP2), copied out of hiredis's reply tree so it outlives the callback.
public indirect enum RedisReply: Sendable, Equatable, CustomStringConvertible {
    case status(String)
    case error(String)
    case integer(Int64)
    case bulk([UInt8])
    case null
    case array([RedisReply])

    /// A bulk or status reply as text.
    public var string: String? {
        switch self {
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }

    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var elements: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var description: String {
        switch self {
        case .status(let text): "+\(text)"
        case .error(let text): "-\(text)"
        case .integer(let value): ":\(value)"
        case .bulk(let bytes): "\"\(String(decoding: bytes.prefix(200), as: UTF8.self))\(bytes.count > 200 ? "…" : "")\""
        case .null: "(nil)"
        case .array(let elements): "[\(elements.map(\.description).joined(separator: ", "))]"
        }
    }
}

/// A WebSocket close status code (RFC 6455 §7.4).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// Never on the wire: "the close frame carried no status code".
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// Never on the wire: "the connection dropped without a close frame".
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    public static let invalidPayloadData = WebSocketCloseCode(rawValue: 1007)
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    public static let serviceRestart = WebSocketCloseCode(rawValue: 1012)
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)

    /// Whether a peer may send this code in a close frame (RFC 6455 §7.4.1–7.4.2):
    /// 1000–1003, 1007–1011 (and the later-registered 1012–1014), and 3000–4999.
    /// 1004, 1005, 1006 and 1015 are reserved and must never appear on the wire.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014: return true
        case 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}

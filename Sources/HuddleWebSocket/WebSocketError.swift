/// A reason to fail a WebSocket connection: what to put in the close frame we send, and why.
/// Every decoding failure maps to exactly one close code so the connection layer never guesses.
public struct WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    public var closeCode: WebSocketCloseCode
    /// A short human reason; it goes into the close frame (truncated to fit 123 bytes) and the log.
    public var reason: String

    public init(_ closeCode: WebSocketCloseCode, _ reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }

    public var description: String { "\(closeCode.rawValue): \(reason)" }
}

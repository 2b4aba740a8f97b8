/// What a `WebSocketMessageReader` delivers: a whole data message (fragments joined, inflated,
/// validated) or one control frame.
public enum WebSocketEvent: Sendable, Equatable {
    /// A complete text message whose bytes are valid UTF-8. Kept as bytes so an echo or a
    /// JSON parser never pays for a `String`.
    case text([UInt8])
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// The peer's close frame. A nil code means the frame had no body (report 1005 locally,
    /// never send it); the reason is the validated UTF-8 text after the code.
    case close(WebSocketCloseCode?, reason: String)
}

/// Why a `HuddleClient` request did not succeed.
public enum HuddleClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with an error (protocol.md, "Errors"): `code` is stable snake_case,
    /// `message` is for humans; `retryAfterMilliseconds` comes with `rate_limited`,
    /// `too_many_attempts` and `busy`.
    case server(code: String, message: String, retryAfterMilliseconds: Int64? = nil)
    /// No reply within the request timeout (waiting for a connection included).
    case timedOut
    /// The connection dropped while the request was on it: it may or may not have taken effect.
    /// (A publish with a client id is safe to send again: the server stores it once.)
    case connectionLost
    /// The client is stopped: `stop()` was called, the server refused its credentials, or it
    /// gave up reconnecting. Requests made while stopped fail with this too.
    case closed
    /// Too many requests waiting for a connection, or the outbound queue is full (the server
    /// is not reading): try again later.
    case overloaded
    /// The reply does not have the shape protocol.md gives it.
    case invalidReply(String)

    /// The server's error code, nil for the client's own errors.
    public var serverCode: String? {
        if case .server(let code, _, _) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .server(let code, let message, let retryAfter):
            return "\(code): \(message)" + (retryAfter.map { " (retry after \($0) ms)" } ?? "")
        case .timedOut: return "timed out: no reply from the server"
        case .connectionLost: return "connection lost before the reply (the request may or may not have taken effect)"
        case .closed: return "the client is stopped"
        case .overloaded: return "too many requests waiting; try again later"
        case .invalidReply(let reason): return "invalid reply from the server: \(reason)"
        }
    }
}

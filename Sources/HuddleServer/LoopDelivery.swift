/// Work the core thread hands to one I/O loop, in order. A loop turn's worth of core outputs
/// for a loop travels as one batch: one wake-up, however many replies and events.
enum LoopDelivery {
    /// A reply or event for one connection (already encoded JSON text).
    case send(serial: UInt64, text: [UInt8], kind: Kind)
    /// One event for many connections of this loop, framed once.
    case fanOut(serials: [UInt64], frame: SharedFrame)
    /// Close with a code after what was queued before (4001 after a logout).
    case close(serial: UInt64, code: UInt16, reason: String)
    /// The response to an HTTP API request.
    case httpResponse(serial: UInt64, status: Int, body: [UInt8])
    // Memories.
    /// The core's answer to a photo request (`PhotoAPI`), for the connection that made it.
    case photoAccess(serial: UInt64, PhotoAccessOutcome)

    enum Kind {
        /// The answer to a request the loop forwarded (they come back in the order sent);
        /// `requestID` nil for a request whose id could not be read.
        case reply(requestID: String?)
        /// An event.
        case event
        /// The outcome of a header or subprotocol token: `session` (accepted) or `auth_failed`.
        case signInOutcome(accepted: Bool)
    }
}

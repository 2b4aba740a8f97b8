import HuddleProtocol

/// What becomes of a request when the connection it went out on drops before its reply.
enum ConnectionLossPolicy {
    /// The caller gets `connectionLost`: the request may have taken effect, only the
    /// application can tell whether sending it again is right.
    case fail
    /// It goes out again on the next connection: for requests that are safe to repeat (reads,
    /// and writes with a `client_id`), so the caller just sees a slower reply.
    case resend
    /// Forgotten: the client's own requests (resubscribes), which the next connection redoes.
    case drop
}

/// A request of a `HuddleClient`, from the call until its reply: waiting for a connection in
/// the client's queue, then in flight on one.
struct OutgoingRequest {
    /// A `subscribe`'s `since` is taken from the ledger when the request goes out, so a
    /// subscribe sent again after a reconnect resumes from what was delivered.
    var operation: Operation
    /// A keyed write's `client_id`, the same on every resend.
    var clientID: String?
    /// When the caller gets `timedOut` (monotonic milliseconds); `.max` for none.
    var deadline: Int64
    var onLoss: ConnectionLossPolicy
    /// A write with a `client_id` (protocol.md, "Retries"), in the client's outbox until
    /// answered: it waits for a connection however long that takes, goes out again after every
    /// drop, and its timeout runs only while it is on a connection.
    var isOutboxWrite: Bool
    /// Given when the request goes out; replies are matched by it.
    var id = ""
    /// Gets the reply's `result` or its error.
    var complete: (Result<JSONValue, HuddleClientError>) -> Void

    init(
        _ operation: Operation, clientID: String? = nil, deadline: Int64, onLoss: ConnectionLossPolicy,
        isOutboxWrite: Bool = false, complete: @escaping (Result<JSONValue, HuddleClientError>) -> Void
    ) {
        self.operation = operation
        self.clientID = clientID
        self.deadline = deadline
        self.onLoss = onLoss
        self.isOutboxWrite = isOutboxWrite
        self.complete = complete
    }

    /// The channel of a `subscribe`.
    var subscribeChannel: String? {
        if case .subscribe(let channel, _) = operation { channel } else { nil }
    }
}

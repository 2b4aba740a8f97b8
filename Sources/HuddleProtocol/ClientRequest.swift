/// One decoded request from a client: its `id`, echoed in the reply, and what it asks for.
public struct ClientRequest: Sendable, Equatable {
    public var id: String
    public var operation: Operation
    /// The write's own `client_id` (protocol.md, "Retries"), for the keyed writes
    /// (`KeyedWrites`); nil for every other op.
    public var clientID: String?

    public init(id: String, operation: Operation, clientID: String? = nil) {
        self.id = id
        self.operation = operation
        self.clientID = clientID
    }
}

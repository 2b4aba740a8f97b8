/// One decoded request from a client: its `id`, echoed in the reply, and what it asks for.
public struct ClientRequest: Sendable, Equatable {
    public var id: String
    public var operation: Operation
    /// The write's own `client_id` (protocol.md, "Retries"), for the keyed writes
    /// (`Operation.isKeyedWrite`). A publish carries its `client_id` in the operation instead:
    /// it is stored with the publication and shown to readers.
    public var clientID: String?

    public init(id: String, operation: Operation, clientID: String? = nil) {
        self.id = id
        self.operation = operation
        self.clientID = clientID
    }
}

/// One decoded request from a client: its `id`, echoed in the reply, and what it asks for.
public struct ClientRequest: Sendable, Equatable {
    public var id: String
    public var operation: Operation

    public init(id: String, operation: Operation) {
        self.id = id
        self.operation = operation
    }
}

/// Everything one request did: the durable commands it made (already applied, in order — the
/// server logs them before sending the outputs), and the outputs, in order.
public struct CoreStep: Sendable, Equatable {
    public var commands: [CoreCommand]
    public var outputs: [CoreOutput]

    public init(commands: [CoreCommand] = [], outputs: [CoreOutput] = []) {
        self.commands = commands
        self.outputs = outputs
    }
}

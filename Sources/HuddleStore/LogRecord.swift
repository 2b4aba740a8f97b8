/// One record read back from the log: its sequence and the caller's bytes.
public struct LogRecord: Sendable, Equatable {
    public var sequence: UInt64
    public var payload: [UInt8]

    public init(sequence: UInt64, payload: [UInt8]) {
        self.sequence = sequence
        self.payload = payload
    }
}

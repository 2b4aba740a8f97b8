/// Why a byte sequence is not a JSON document the parser accepts.
public enum JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not RFC 8259 JSON; the message says what was wrong and at which byte offset.
    case syntax(String)
    /// Arrays and objects nested deeper than the caller's limit (checked before descending).
    case tooDeep

    public var description: String {
        switch self {
        case .syntax(let message): return message
        case .tooDeep: return "JSON nested too deeply"
        }
    }
}

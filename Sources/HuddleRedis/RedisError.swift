/// What went wrong with a Redis command, said so that an operator (or the node deciding between
/// "retry" and "answer unavailable") can tell the cases apart.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection could be made (refused, unreachable, timed out, or not the master).
    case connectFailed(address: String, reason: String)
    /// The command was never sent: there is no connection right now. Safe to retry.
    case notConnected(address: String)
    /// The connection broke with the command sent and unanswered: it may or may not have run.
    case connectionLost(address: String, reason: String)
    /// Redis answered with an error reply (`ERR …`, `WRONGTYPE …`, `NOSCRIPT …`).
    case server(String)
    /// A reply of a shape the command never gives: a bug here or an unexpected server.
    case unexpectedReply(command: String, reply: RedisReply)
    /// No Sentinel named a master (each one's answer or failure is listed).
    case noMaster(name: String, answers: [String])

    public var description: String {
        switch self {
        case .connectFailed(let address, let reason): "cannot connect to Redis at \(address): \(reason)"
        case .notConnected(let address): "not connected to Redis at \(address); the command was not sent"
        case .connectionLost(let address, let reason):
            "connection to Redis at \(address) lost before the reply (\(reason)); the command may or may not have run"
        case .server(let message): "Redis replied with an error: \(message)"
        case .unexpectedReply(let command, let reply): "unexpected reply to \(command): \(reply)"
        case .noMaster(let name, let answers):
            "no Sentinel knows a master named \"\(name)\": \(answers.joined(separator: "; "))"
        }
    }
}

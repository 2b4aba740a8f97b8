/// A request's op and its arguments, checked for presence and type (protocol.md, "Ops").
/// Values the core owns (username rules, channel names, token formats) are not checked here.
public enum Operation: Sendable, Equatable {
    case ping
    case signup(username: String, email: String, password: String, device: String?)
    case login(login: String, password: String, device: String?)
    case auth(token: String)
    /// `all`: revoke every session of the user, not only this connection's.
    case logout(all: Bool)
    case whoami
    case subscribe(channel: String, since: Position?)
    case unsubscribe(channel: String)
    /// `data` is the compact serialization of the parsed value: normalized, and what was
    /// size-checked against `ProtocolLimits.maxDataBytes`.
    case publish(channel: String, type: String, data: String)
    /// `before`: only offsets below it (nil: from the newest); `limit` already defaulted and
    /// range-checked.
    case history(channel: String, before: UInt64?, limit: Int)
    case presence(channel: String)

    /// The op as it is spelled on the wire, for metrics labels and logs.
    public var name: String {
        switch self {
        case .ping: return "ping"
        case .signup: return "signup"
        case .login: return "login"
        case .auth: return "auth"
        case .logout: return "logout"
        case .whoami: return "whoami"
        case .subscribe: return "subscribe"
        case .unsubscribe: return "unsubscribe"
        case .publish: return "publish"
        case .history: return "history"
        case .presence: return "presence"
        }
    }
}

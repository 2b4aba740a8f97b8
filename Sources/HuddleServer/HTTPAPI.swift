import HuddleCore
import HuddleCrypto
import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// The server-side HTTP API for an application's backend (protocol.md, "HTTP API"): publish to
/// any channel, read history, disconnect a user. Guarded by the API key; one per I/O loop.
final class HTTPAPI {
    static let maxBodyBytes = 64 * 1024

    private let apiKey: [UInt8]
    private let runner: CoreRunner
    private let endpoint: ProtocolEndpoint
    private let loopIndex: Int
    private let limits = ProtocolLimits()

    init(apiKey: String, runner: CoreRunner, endpoint: ProtocolEndpoint, loopIndex: Int) {
        self.apiKey = Array(apiKey.utf8)
        self.runner = runner
        self.endpoint = endpoint
        self.loopIndex = loopIndex
    }

    func handle(_ head: HTTPRequestHead, body: [UInt8], from connection: Connection) {
        guard authorized(head) else {
            connection.respondJSON(status: 401, body: Self.error("unauthorized", "missing or wrong API key"))
            return
        }
        switch (head.method, head.path) {
        case ("POST", "/api/v1/publish"):
            switch APIRequestDecoder.publish(body, limits: limits) {
            case .failure(let error):
                connection.respondJSON(status: error.code == "payload_too_large" ? 413 : 400, body: Self.error(error.code, error.message))
            case .success(let (channel, type, data)):
                submit("api_publish", connection, .serverPublish(channel: channel, type: type, data: data))
            }
        case ("GET", "/api/v1/history"):
            let items = APIRequestDecoder.queryItems(head.query ?? "")
            func value(_ name: String) -> String? { items.first { $0.0 == name }?.1 }
            guard let channel = value("channel") else {
                connection.respondJSON(status: 400, body: Self.error("bad_request", "channel is required"))
                return
            }
            let before = value("before").flatMap(UInt64.init)
            let limit = value("limit").map { Int($0) ?? 0 } ?? limits.defaultHistoryLimit
            guard value("before") == nil || (before ?? 0) > 0, (1...limits.maxHistoryLimit).contains(limit) else {
                connection.respondJSON(status: 400, body: Self.error("bad_request", "before must be a positive integer and limit 1…\(limits.maxHistoryLimit)"))
                return
            }
            submit("api_history", connection, .operation(.history(channel: channel, before: before, limit: limit)))
        case ("POST", "/api/v1/disconnect"):
            switch APIRequestDecoder.disconnect(body, limits: limits) {
            case .failure(let error):
                connection.respondJSON(status: 400, body: Self.error(error.code, error.message))
            case .success(let user):
                submit("api_disconnect", connection, .disconnectUser(username: user.lowercased()))
            }
        case ("POST", "/api/v1/remove"):
            switch APIRequestDecoder.removal(body, limits: limits) {
            case .failure(let error):
                connection.respondJSON(status: 400, body: Self.error(error.code, error.message))
            case .success(let content):
                submit("api_remove", connection, .removeContent(content))
            }
        // `/api/v1/users/NAME` alone; `/api/v1/users/NAME/ACTION` are moderation's.
        case ("DELETE", let path) where Self.isUserPath(path):
            submit("api_delete_user", connection, .deleteUser(username: String(path.dropFirst(Self.usersPrefix.count))))
        case (_, let path) where Self.isUserPath(path):
            connection.respondJSON(status: 405, body: Self.error("method_not_allowed", "use DELETE"))
        case (_, "/api/v1/publish"), (_, "/api/v1/disconnect"), (_, "/api/v1/remove"):
            connection.respondJSON(status: 405, body: Self.error("method_not_allowed", "use POST"))
        case (_, "/api/v1/history"):
            connection.respondJSON(status: 405, body: Self.error("method_not_allowed", "use GET"))
        default:
            if !moderate(head, body: body, from: connection) {
                connection.respondJSON(status: 404, body: Self.error("not_found", "no such API: \(head.path)"))
            }
        }
    }

    /// The moderation calls (protocol.md, "Moderation"); false for a path that is none of them.
    private func moderate(_ head: HTTPRequestHead, body: [UInt8], from connection: Connection) -> Bool {
        if head.path == "/api/v1/reports" {
            guard head.method == "GET" else {
                connection.respondJSON(status: 405, body: Self.error("method_not_allowed", "use GET"))
                return true
            }
            switch APIRequestDecoder.reportsQuery(head.query ?? "") {
            case .failure(let error):
                connection.respondJSON(status: 400, body: Self.error(error.code, error.message))
            case .success(let (open, after, limit)):
                submit("api_reports", connection, .moderation(.listReports(open: open, after: after, limit: limit)))
            }
            return true
        }
        if let id = APIRequestDecoder.reportToResolve(head.path) {
            guard head.method == "POST" else {
                connection.respondJSON(status: 405, body: Self.error("method_not_allowed", "use POST"))
                return true
            }
            guard let id else {
                connection.respondJSON(status: 404, body: Self.error("report_not_found", "not a report id: \(head.path)"))
                return true
            }
            switch APIRequestDecoder.resolution(body, limits: limits) {
            case .failure(let error):
                connection.respondJSON(status: 400, body: Self.error(error.code, error.message))
            case .success(let (action, note)):
                submit("api_resolve_report", connection, .moderation(.resolveReport(id: id, action: action, note: note)))
            }
            return true
        }
        guard let (user, action) = APIRequestDecoder.userAction(head.path), ["suspend", "unsuspend"].contains(action) else { return false }
        guard head.method == "POST" else {
            connection.respondJSON(status: 405, body: Self.error("method_not_allowed", "use POST"))
            return true
        }
        if action == "unsuspend" {
            submit("api_unsuspend", connection, .moderation(.unsuspend(username: user)))
            return true
        }
        switch APIRequestDecoder.suspension(body, limits: limits) {
        case .failure(let error):
            connection.respondJSON(status: 400, body: Self.error(error.code, error.message))
        case .success(let (reason, until)):
            submit("api_suspend", connection, .moderation(.suspend(username: user, reason: reason, until: until)))
        }
        return true
    }

    /// `DELETE /api/v1/users/NAME` deletes the account NAME.
    private static let usersPrefix = "/api/v1/users/"

    private static func isUserPath(_ path: String) -> Bool {
        path.hasPrefix(usersPrefix) && path.utf8.count > usersPrefix.utf8.count && !path.dropFirst(usersPrefix.count).contains("/")
    }

    private func submit(_ op: String, _ connection: Connection, _ body: CoreRequestBody) {
        let serial = endpoint.register(connection)
        runner.submitAPI(op: op, from: ConnectionRef(loop: loopIndex, serial: serial), body)
    }

    private func authorized(_ head: HTTPRequestHead) -> Bool {
        guard let authorization = head.headers[first: "authorization"] else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return Crypto.constantTimeEquals(Array(parts[1].utf8), apiKey)
    }

    private static func error(_ code: String, _ message: String) -> [UInt8] {
        ReplyError(code: code, message: message).httpBody
    }
}

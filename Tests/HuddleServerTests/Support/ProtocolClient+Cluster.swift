import Foundation

/// Helpers for tests whose clients sit on different nodes of a cluster (ClusterHarness): what
/// one node decides reaches a client of another node a little later, among other events.
extension ProtocolClient {
    /// The next event that `matches` (`what` names it in a failure), dropping the others read
    /// on the way; throws after `timeout` seconds without one.
    func nextEvent(_ what: String, timeout: Double = 20, where matches: (JSONObject) -> Bool) throws -> JSONObject {
        let deadline = Date().addingTimeInterval(timeout)
        var dropped: [String] = []
        while true {
            let left = deadline.timeIntervalSinceNow
            do {
                guard left > 0 else { throw TestFailure("timed out") }
                let event = try nextEvent(timeout: left)
                if matches(event) { return event }
                dropped.append(JSON.text(event))
            } catch let failure as TestFailure where failure.description.contains("timed out") {
                throw TestFailure("no \(what) within \(timeout) s; other events: \(dropped.suffix(10))")
            }
        }
    }

    /// The next publication event on `channel` (of `type` when given), dropping others.
    func nextPublication(on channel: String, type: String? = nil, timeout: Double = 20) throws -> JSONObject {
        try nextEvent("publication on \(channel)\(type.map { " of type \($0)" } ?? "")", timeout: timeout) { event in
            event["event"] as? String == "publication" && event["channel"] as? String == channel
                && (type == nil || event["type"] as? String == type)
        }
    }

    /// A connection to `port` signed in with `token` (`auth`), once that node has applied the
    /// session: it was made on another node a moment ago.
    static func authenticatedOnceKnown(_ token: String, port: Int) async throws -> ProtocolClient {
        var client: ProtocolClient?
        try await untilHolds("the session is known on port \(port)") {
            let candidate = try ProtocolClient(port: port)
            guard JSON.bool(try candidate.request("auth", ["token": token])["ok"]) == true else { return false }
            client = candidate
            return true
        }
        return client!
    }

    /// The next `presence` event about `user`: whether they are online.
    func nextPresence(of user: String, timeout: Double = 20) throws -> Bool? {
        let event = try nextEvent("presence of \(user)", timeout: timeout) { $0["event"] as? String == "presence" && $0["user"] as? String == user }
        return JSON.bool(event["online"])
    }
}

/// Waits until `condition` holds, checked every 20 ms: for state another node decided, which a
/// read on this node shows once it has applied the log that far (no event tells when).
func untilHolds(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw TestFailure("\(what) did not hold within \(timeout) s") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

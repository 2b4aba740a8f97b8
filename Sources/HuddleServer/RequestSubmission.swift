import HuddleCore

/// Submits the core request made from one client request: as it is, or — when the client sent
/// a `client_id` with a keyed write — wrapped as `CoreRequest.keyed`, so a retry gets the
/// first result again.
struct RequestSubmission {
    let runner: CoreRunner
    let connection: ConnectionRef
    let requestID: String
    /// The wire op, which scopes the `client_id`.
    let op: String
    let clientID: String?

    func submit(_ request: CoreRequest, op metricsOp: String?, token: String? = nil, device: String? = nil) {
        guard let clientID else {
            return runner.submit(request, op: metricsOp, token: token, device: device)
        }
        runner.submit(
            .keyed(connection, requestID: requestID, op: op, clientID: clientID, request), op: metricsOp, token: token, device: device)
    }
}

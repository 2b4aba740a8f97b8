import CHuddleShims
import Foundation
import HuddleIO
import Synchronization

/// A local push webhook for tests: a tiny blocking HTTP/1.1 server (a thread that accepts, a
/// thread per connection) that records every request and answers with scripted statuses. With
/// `tls`, it speaks https with the test CA's server certificate. Its accepting thread keeps it
/// alive: call `stop()` when done.
final class WebhookReceiver: @unchecked Sendable {
    struct Request {
        var method: String
        var target: String
        /// Lowercased names.
        var headers: [String: String]
        var body: [UInt8]
        var json: JSONObject { (try? JSONSerialization.jsonObject(with: Data(body))) as? JSONObject ?? [:] }
    }

    private struct State {
        var requests: [Request] = []
        /// Answered in order, one per request; `defaultStatus` after them.
        var statuses: [Int]
        /// While set, requests are recorded but not answered.
        var holding = false
        var stopped = false
    }

    private let listener: LoopbackListener
    private let defaultStatus: Int
    private let secure: Bool
    private let state: Mutex<State>

    init(statuses: [Int] = [], defaultStatus: Int = 200, holding: Bool = false, tls: TestCertificates? = nil) throws {
        self.defaultStatus = defaultStatus
        state = Mutex(State(statuses: statuses, holding: holding))
        secure = tls != nil
        listener = try LoopbackListener(tls: tls.map { try TLSContext(certificateChainPath: $0.serverCertificate.path, privateKeyPath: $0.serverKey.path) })
        listener.start { [self] peer in serve(peer) }
    }

    var port: Int { listener.port }

    var url: String { "\(secure ? "https" : "http")://127.0.0.1:\(port)/hooks/push" }

    var requests: [Request] { state.withLock { $0.requests } }

    /// Answers the held requests and every later one at once.
    func release() {
        state.withLock { $0.holding = false }
    }

    /// Closes the listening socket (the accepting thread ends) and answers anything held.
    func stop() {
        state.withLock { $0.stopped = true }
        listener.stop()
    }

    /// Every request the webhook got, once one matching `marker` arrived and the server at
    /// `serverPort` has no webhook request under way (`huddle_push_in_flight`). The gateway
    /// starts hand-offs in the order the core made them, so one made before the marker has
    /// been sent — and recorded here — by then: "not pushed" proved without a sleep.
    func requestsThrough(marker: (JSONObject) -> Bool, serverPort: Int, timeout: Double = 10) async throws -> [Request] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if requests.contains(where: { marker($0.json) }),
                try PrometheusText.fetch(port: serverPort).value("huddle_push_in_flight") == 0
            {
                return requests
            }
            guard Date() < deadline else {
                throw TestFailure("no marker hand-off within \(timeout) s: \(requests.map { String(decoding: $0.body, as: UTF8.self) })")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until at least `count` requests arrived; returns all of them.
    @discardableResult
    func waitForRequests(_ count: Int, timeout: Double = 10) async throws -> [Request] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let received = requests
            if received.count >= count { return received }
            guard Date() < deadline else {
                throw TestFailure("the webhook got \(received.count) of \(count) requests within \(timeout) s: \(received.map { String(decoding: $0.body, as: UTF8.self) })")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A notification's JSON bodies, sorted by `badge` (requests run concurrently, so they may
    /// arrive in any order).
    var notifications: [JSONObject] {
        requests.map(\.json).sorted { (JSON.int($0["badge"]) ?? 0) < (JSON.int($1["badge"]) ?? 0) }
    }

    // MARK: Serving

    private func serve(_ peer: LoopbackListener.Peer) {
        guard let (head, rest) = peer.receiveHead() else { return }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ").map(String.init)
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = rest
        let length = headers["content-length"].flatMap(Int.init) ?? 0
        while body.count < length {
            guard let more = peer.receive() else { return }
            body += more
        }
        let request = Request(method: requestLine.first ?? "", target: requestLine.count > 1 ? requestLine[1] : "", headers: headers, body: body)
        state.withLock { $0.requests.append(request) }
        while state.withLock({ $0.holding && !$0.stopped }) { usleep(10_000) }
        let status = state.withLock { state in state.statuses.isEmpty ? defaultStatus : state.statuses.removeFirst() }
        peer.send(Array("HTTP/1.1 \(status) Scripted\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8))
    }
}

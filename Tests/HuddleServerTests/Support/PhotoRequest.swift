import Foundation
import HuddleCrypto
import HuddleIO

/// Raw HTTP/1.1 requests to the photo endpoints (protocol.md, "Photos"), with binary bodies and
/// control over framing: an honest or a lying `Content-Length`, a chunked body, a head sent
/// before its body.
final class PhotoRequest {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var json: JSONObject? { try? JSONSerialization.jsonObject(with: Data(body)) as? JSONObject }
        var errorCode: String? { (json?["error"] as? JSONObject)?["code"] as? String }
    }

    let client: RawClient
    private var received: [UInt8] = []

    /// `receiveBufferSize`: a small one makes the server's writes back up at once when the
    /// response is not read (see `RawClient`).
    init(port: Int, receiveBufferSize: Int32? = nil) throws {
        client = try RawClient(port: port, receiveBufferSize: receiveBufferSize)
    }

    /// Sends a request head; `headers` are complete lines.
    func sendHead(_ method: String, _ target: String, token: String?, headers: [String] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for header in headers { head += header + "\r\n" }
        try client.send(head + "\r\n")
    }

    /// Sends body bytes. A server that has answered and closed may refuse them: that is not
    /// the test's concern, the response is.
    func sendBody(_ bytes: [UInt8]) {
        try? client.send(bytes)
    }

    /// Reads one response: an interim `100 Continue` is returned like any other, the next call
    /// reads the final one.
    func readResponse() throws -> Response {
        while true {
            if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                var lines = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = headers["content-length"].flatMap(Int.init) ?? 0
                while received.count - end.upperBound < length {
                    guard let more = try receive() else { break }
                    received += more
                }
                let body = Array(received[end.upperBound...].prefix(length))
                received.removeSubrange(..<min(received.count, end.upperBound + length))
                return Response(status: statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0, headers: headers, body: body)
            }
            guard let more = try receive() else { throw TestFailure("the connection closed before a response (\(received.count) bytes)") }
            received += more
        }
    }

    private func receive() throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
        if count > 0 { return Array(buffer[0..<count]) }
        if count == 0 || errno == ECONNRESET { return nil }
        throw TestFailure("recv failed: errno \(errno)")
    }

    // MARK: Whole exchanges

    /// `PUT /api/v1/photos` with an honest `Content-Length`.
    static func upload(_ bytes: [UInt8], token: String?, port: Int) throws -> Response {
        let request = try PhotoRequest(port: port)
        try request.sendHead("PUT", "/api/v1/photos", token: token, headers: ["Content-Length: \(bytes.count)"])
        request.sendBody(bytes)
        return try request.readResponse()
    }

    /// `GET /api/v1/photos/<hash>`.
    static func download(_ hash: String, token: String?, port: Int) throws -> Response {
        let request = try PhotoRequest(port: port)
        try request.sendHead("GET", "/api/v1/photos/\(hash)", token: token)
        return try request.readResponse()
    }

    /// The name the server gives these bytes: their SHA-256 in lowercase hex.
    static func hash(_ bytes: [UInt8]) -> String {
        Crypto.sha256(bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// A small JPEG-looking photo: the JPEG signature, then `count` bytes from `seed`.
    static func photo(_ seed: UInt8, count: Int = 3000) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0] + (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
    }
}
